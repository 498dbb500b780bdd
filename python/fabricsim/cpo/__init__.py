"""Co-packaged optics (study 003): the two-level network design calculator, job locality, the locality simulation."""

from .design import PRESETS, Design, DesignSpec, compare, load

__all__ = ["PRESETS", "Design", "DesignSpec", "compare", "load"]
