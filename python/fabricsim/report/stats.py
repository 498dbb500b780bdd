"""Summary statistics per sweep point: mean, sample standard deviation and the Student-t 95% confidence interval."""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
from scipy import stats as _st


def ci95(values: Iterable[float]) -> tuple[float, float, float, int]:
    """(mean, std, half-width, n) with std the sample deviation (ddof=1) and half-width
    t(0.975, n-1)·std/√n; the half-width is NaN for n < 2."""
    x = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], dtype=float)
    n = len(x)
    if n == 0:
        return (math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return (mean, math.nan, math.nan, 1)
    std = float(x.std(ddof=1))
    return (mean, std, float(_st.t.ppf(0.975, n - 1) * std / math.sqrt(n)), n)


def summarize(frame, by: Sequence[str], metrics: Sequence[str]):
    """One row per group of `by`, with `<metric>_mean`, `_std`, `_ci95` (half-width) and `n` columns."""
    import pandas as pd

    rows = []
    groups = frame.groupby(list(by), sort=False, dropna=False) if by else [((), frame)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        for m in metrics:
            mean, std, half, n = ci95(g[m].tolist()) if m in g else (math.nan, math.nan, math.nan, 0)
            row.update({f"{m}_mean": mean, f"{m}_std": std, f"{m}_ci95": half})
            row["n"] = n
        rows.append(row)
    return pd.DataFrame(rows)


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
