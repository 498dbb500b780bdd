"""Reports: statistics (mean ± Student-t 95% CI), figures (matplotlib), study reproduction and the HTML report."""

from .stats import ci95, summarize

__all__ = ["ci95", "summarize"]
