"""Summary statistics per sweep point: mean, sample standard deviation and the Student-t 95% confidence interval.

(`fabricsim.report.stats` re-exports `ci95` and `summarize`: the reports, the cluster comparison and the sweep's
own summary all use them, and the sweep sits below the reports.)"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from ..stats import t975


def ci95(values: Iterable[float]) -> tuple[float, float, float, int]:
    """(mean, std, half-width, n) with std the sample deviation (ddof=1) and half-width
    t(0.975, n-1)·std/√n; the half-width is NaN for n < 2. None and NaN values are left out; anything else that
    is not a number is an ArgumentError."""
    import numbers

    from ..errors import ArgumentError

    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ArgumentError("values", f"expected numbers (a list or an array), got {type(values).__name__}")
    values = values.tolist() if isinstance(values, np.ndarray) else list(values)
    bad = next((v for v in values if v is not None and (not isinstance(v, numbers.Real) or isinstance(v, bool))), None)
    if bad is not None:
        raise ArgumentError("values", f"expected numbers, got {type(bad).__name__} {bad!r}"[:120])
    x = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], dtype=float)
    n = len(x)
    if n == 0:
        return (math.nan, math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return (mean, math.nan, math.nan, 1)
    std = float(x.std(ddof=1))
    return (mean, std, float(t975(n - 1) * std / math.sqrt(n)), n)


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
