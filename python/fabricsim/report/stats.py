"""Human column names for tables and figures (`column_label`). The summary statistics per sweep point (`ci95`,
`summarize`: mean, sample standard deviation and the Student-t 95% confidence interval) live in
`fabricsim.sweep.stats` and are re-exported here."""

from __future__ import annotations

from ..sweep.stats import ci95, summarize

__all__ = ["ci95", "summarize", "column_label", "STATS", "UNITS", "WORDS"]


STATS = {"mean": "mean", "std": "std. dev.", "ci95": "95% CI (±)", "min": "min", "max": "max",
         "median": "median", "raw": "raw", "adjusted": "adjusted"}
"""Trailing qualifiers of column names (summarize's `_mean`, `_std`, `_ci95` and the tables' own) → words."""
UNITS = {"ms": "ms", "us": "µs", "ns": "ns", "s": "s", "gbps": "Gb/s", "mbps": "Mb/s", "tbps": "Tb/s", "pct": "%",
         "bytes": "B", "mib": "MiB", "pkts": "packets", "m": "millions", "kw": "kW"}
"""Unit suffixes of column names → the unit shown in parentheses."""
WORDS = {"msg": "message", "msgs": "messages", "if": "per interface", "vnic": "VNIC", "thr": "throughput",
         "1hop": "1-hop", "3hop": "3-hop", "pct": "%"}


def column_label(name: str) -> str:
    """A column's human name: `completion_time_ms_mean` → "completion time (ms), mean". Names that are not
    snake_case identifiers (they hold spaces or punctuation) and short symbols (`n`, `P_f`) come back unchanged;
    a unit is only read off a name with something before it (`m` alone stays `m`), except a lone unit of two
    letters or more (`gbps` → "Gb/s")."""
    tokens = name.split("_")
    if len(tokens) == 1 and name.lower() in UNITS and len(name) > 1:
        return UNITS[name.lower()]
    if not name.replace("_", "").isalnum() or len(name) <= 3 or "" in tokens:
        return name
    stat = STATS.get(tokens[-1]) if len(tokens) > 1 else None
    if stat:
        tokens = tokens[:-1]
    unit = UNITS.get(tokens[-1].lower()) if len(tokens) > 1 else None
    if unit:
        tokens = tokens[:-1]
    words = [WORDS.get(t.lower(), t) for t in tokens]
    if unit in ("B", "MiB") and words[-1] in ("message", "packet"):
        words.append("size")
    label = " ".join(words) + (f" ({unit})" if unit else "")
    return label + (f", {stat}" if stat else "")
