"""How the reports write numbers: counts and integers in full with thousands separators, other values to 4 significant
digits, differences with their sign, tolerances as "±5%" (relative) or "±5 pp" (percentage points)."""

from __future__ import annotations

import math

MISSING = "–"
"""A number that is not there (None or NaN)."""

COUNT_UNITS = frozenset({"packet", "packets", "pkts", "run", "runs", "flow", "flows", "event", "events", "byte",
                         "bytes", "b", "message", "messages", "msgs", "drops", "seeds", "phases", "servers",
                         "switches", "endpoints", "ports", "nodes"})
"""Units of things counted one by one (lower case): their values read as whole numbers."""


def is_count(unit: str) -> bool:
    """Whether `unit` counts things ("packets", "bytes", "flows", …), so that its values are whole numbers."""
    return unit.strip().lower() in COUNT_UNITS


def missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def number(v, unit: str = "") -> str:
    """A value as the reports show it: 849600 → "849,600"; a value of a count unit from 1,000 up, and any value from
    10,000 up, rounded to a whole number with separators (1249.6 packets → "1,250"); anything else to 4 significant
    digits (0.2501, 41.18, 1e-06); None or NaN → "–"."""
    if missing(v):
        return MISSING
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 1e4 or (is_count(unit) and abs(v) >= 1e3):
        return f"{v:,.0f}"
    return f"{v:,.4g}"


def signed(v, unit: str = "") -> str:
    """A difference with its sign: +6.2, -12, +1,024; zero is "+0"."""
    if missing(v):
        return MISSING
    return ("-" if v < 0 else "+") + number(abs(v), unit)


def difference(diff: float | None, reference: float, unit: str = "", percent: bool = False) -> str:
    """ours − reference with its sign, and (`percent`) relative to the reference: "+6.2 (+0.5%)". A difference
    within floating-point noise of the reference (1e-9 of it) is "+0"."""
    if missing(diff):
        return MISSING
    if abs(diff) <= 1e-9 * max(1.0, abs(reference)):
        return "+0 (+0.0%)" if percent and reference else "+0"
    return signed(diff, unit) + (f" ({diff / reference * 100:+.1f}%)" if percent and reference else "")


def tolerance(rel: float | None, abs_: float | None, unit: str = "") -> str:
    """A tolerance in words: "±2%" (relative to the reference), "±2 pp" (absolute, on a value in %: percentage
    points), "±0.5 ms" (absolute, in the value's unit), either joined by "or"; none, or only zeros: "exact"."""
    parts = []
    if rel:
        parts.append(f"±{number(rel * 100)}%")
    if abs_:
        parts.append(f"±{number(abs_)} pp" if unit.strip() == "%" else f"±{number(abs_, unit)} {unit}".strip())
    return " or ".join(parts) or "exact"
