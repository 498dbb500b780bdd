"""Parsing and formatting of user quantities: durations to integer picoseconds, rates to bit/s, sizes to bytes."""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal, InvalidOperation
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_RE = re.compile(rf"^\s*{_NUM}\s*([A-Za-z/\u00b5\u03bc]*)\s*$")

_TIME = {"ps": 1, "ns": 10**3, "us": 10**6, "\u00b5s": 10**6, "\u03bcs": 10**6, "ms": 10**9, "s": 10**12, "": 10**12}
_RATE = {
    "bps": 1, "b/s": 1, "": 1,
    "kbps": 10**3, "kb/s": 10**3,
    "mbps": 10**6, "mb/s": 10**6,
    "gbps": 10**9, "gb/s": 10**9,
    "tbps": 10**12, "tb/s": 10**12,
}
_SIZE = {
    "b": 1, "": 1, "byte": 1, "bytes": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "pb": 10**15, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50,
}


def _parse(value: object, table: dict[str, int], what: str, base: str, casefold: bool) -> int:
    """Parse a number (in the base unit) or a '<number><unit>' string into an integer count of base units."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ValueError(f"expected a {what}, got a boolean")
    if isinstance(value, numbers.Integral):  # numpy integers read as Python ints
        value = int(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, float):  # numpy floats
        value = float(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what} must not be negative, got {value}")
        return value * table[""]
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what} must be finite, got {value}")
        if value < 0:
            raise ValueError(f"{what} must not be negative, got {value}")
        return round(Decimal(repr(value)) * table[""])
    if not isinstance(value, str):
        raise ValueError(f"expected a {what} (number in {base} or a string with a unit), got {type(value).__name__}")
    s = value.strip()
    if s.startswith("-"):
        raise ValueError(f"{what} must not be negative, got '{value}'")
    m = _RE.match(s)
    if not m:
        raise ValueError(f"cannot read '{value}' as a {what}")
    unit = m.group(2)
    if casefold and what == "rate" and "B" in unit:
        raise ValueError(f"rates are in bits: '{value}' has a byte unit (write e.g. Gbps, not GBps)")
    if casefold and what == "size" and unit.endswith("b") and not unit.endswith("ib"):
        raise ValueError(f"sizes are in bytes: '{value}' has a bit unit (write e.g. MB or MiB, not Mb)")
    key = unit.lower() if casefold else unit
    if key not in table:
        units = ", ".join(sorted(k for k in table if k))
        raise ValueError(f"unknown {what} unit '{unit}' in '{value}' (use one of: {units})")
    try:
        return round(Decimal(m.group(1)) * table[key])
    except InvalidOperation as e:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"cannot read '{value}' as a {what}") from e


MAX_DURATION_PS = 10**7 * 10**12
"""Longest accepted duration: 10^7 s (116 days); the engine's u64 picosecond clock spans 213 days."""


def parse_duration_ps(value: object) -> int:
    """Duration -> picoseconds. Numbers are seconds; strings take ps, ns, us, ms, s. At most 10^7 s."""
    ps = _parse(value, _TIME, "duration", "seconds", casefold=False)
    if ps > MAX_DURATION_PS:
        raise ValueError(f"duration {value!r} exceeds the 10^7 s limit")
    return ps


def parse_rate_bps(value: object) -> int:
    """Rate -> bit/s. Numbers are bit/s; strings take bps, kbps, Mbps, Gbps, Tbps (1000-based, also b/s forms).
    At most 1 Pb/s. A byte unit (GBps, MB/s) is rejected rather than read as bits."""
    bps = _parse(value, _RATE, "rate", "bit/s", casefold=True)
    if bps > 10**15:
        raise ValueError(f"rate {value!r} exceeds the 1 Pb/s limit")
    return bps


def parse_size_bytes(value: object) -> int:
    """Size -> bytes. Numbers are bytes; strings take B, kB/MB/GB (1000-based) and KiB/MiB/GiB (1024-based).
    At most 2^50 B (1 PiB); messages and packets have tighter limits of their own. A bit unit (Mb, kb) is
    rejected rather than read as bytes."""
    n = _parse(value, _SIZE, "size", "bytes", casefold=True)
    if n > 2**50:
        raise ValueError(f"size {value!r} exceeds the 1 PiB limit")
    return n


def format_duration(ps: int | float | None) -> str:
    """Human form of a picosecond duration, e.g. 1.5 ms."""
    if ps is None:
        return "-"
    for unit, f in (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if abs(ps) >= f:
            return f"{ps / f:.4g} {unit}"
    return f"{ps:.4g} ps"


def format_rate(bps: float) -> str:
    """Human form of a bit rate, e.g. 95.3 Mb/s."""
    for unit, f in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if abs(bps) >= f:
            return f"{bps / f:.4g} {unit}"
    return f"{bps:.4g} b/s"


def format_size(n: int | float) -> str:
    """Human form of a byte count, e.g. 10 MiB."""
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= f:
            return f"{n / f:.4g} {unit}"
    return f"{n:g} B"


Duration = Annotated[int, BeforeValidator(parse_duration_ps), PlainSerializer(lambda v: f"{v}ps", return_type=str)]
"""A duration in integer picoseconds; accepts seconds as a number or a string with a unit. Dumps as "<n>ps",
so a dumped scenario validates back to the same values."""
Rate = Annotated[int, BeforeValidator(parse_rate_bps), PlainSerializer(lambda v: f"{v}bps", return_type=str)]
"""A rate in bit/s; accepts a number (bit/s) or a string with a unit. Dumps as "<n>bps"."""
Size = Annotated[int, BeforeValidator(parse_size_bytes)]
"""A size in bytes; accepts a number (bytes) or a string with a unit."""
