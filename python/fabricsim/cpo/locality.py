"""Job locality on a two-level design: best-fit packing of applications' VMs under first-level groups.

A first-level group (a leaf, or a leaf pair when dual-homed) offers `servers_per_group × vms_per_server` VM
slots. Applications arrive in trace order on an empty cluster and are placed with best fit: an application
that fits in one group goes to the fullest group it fits in; a larger one takes the fewest groups (the emptiest
first, the last one best-fit for the remainder), which minimizes the groups it spans. An application that does
not fit in the free slots at all is rejected (counted, not placed). Reported per design: the distribution of
first-level groups spanned, and the fraction of applications (all, and large ones) under a single group.

The study (003 §1, from its ref. [6]) reports > 50% of large applications under one first-level switch with
MOTION against < 5% with the baseline, on a production VM trace that is not public. `synthetic_trace` draws a
stand-in (documented below); its numbers are ours, not the study's.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ScenarioError
from .design import Design


def synthetic_trace(seed: int = 1, *, capacity_vms: int = 6144, fill: float = 0.9, small_share: float = 0.7,
                    small_max: int = 16, large_max: int = 256) -> list[int]:
    """VM counts per application until they sum to `fill` × `capacity_vms`. A share `small_share` of the
    applications are small, uniform on 1…`small_max` VMs; the rest are large, log-uniform on
    `small_max`+1…`large_max` (cloud traces are dominated by small tenants, with a heavy tail of large ones).
    Deterministic per seed."""
    if not 0 < fill <= 1:
        raise ValueError(f"fill: must be in (0, 1], not {fill:g}")
    if not 0 <= small_share <= 1:
        raise ValueError(f"small_share: must be in [0, 1], not {small_share:g}")
    if not 1 <= small_max < large_max:
        raise ValueError(f"small_max, large_max: need 1 ≤ small_max < large_max, not {small_max}, {large_max}")
    rng = np.random.default_rng(seed)
    out: list[int] = []
    total, target = 0, int(fill * capacity_vms)
    while total < target:
        if rng.random() < small_share:
            n = int(rng.integers(1, small_max + 1))
        else:
            n = int(round(float(np.exp(rng.uniform(np.log(small_max + 1), np.log(large_max))))))
        n = min(n, target - total) if total + n > target else n
        out.append(n)
        total += n
    return out


def read_trace(path: str | Path) -> list[int]:
    """A CSV with one row per application: a column `vms` (or the first column) holding its VM count."""
    p = Path(path)
    try:
        rows = list(csv.reader(p.read_text().splitlines()))
    except OSError as e:
        raise ScenarioError(str(p), "", f"cannot read: {e}") from None
    if not rows:
        raise ScenarioError(str(p), "", "empty trace")
    header = [c.strip().lower() for c in rows[0]]
    col, start = (header.index("vms"), 1) if "vms" in header else (0, 0 if header[0].isdigit() else 1)
    out = []
    for i, r in enumerate(rows[start:], start + 1):
        if not r or not "".join(r).strip():
            continue
        try:
            n = int(r[col])
        except (ValueError, IndexError):
            raise ScenarioError(str(p), f"row {i}, column {col + 1}", f"not a VM count: {r}") from None
        if n < 1:
            raise ScenarioError(str(p), f"row {i}, column {col + 1}", f"VM count must be at least 1, not {n}")
        out.append(n)
    if not out:
        raise ScenarioError(str(p), "", "no application rows")
    return out


@dataclass
class Packing:
    """Where every placed application went: `spans[i]` groups for application i (None if rejected)."""

    design: str
    slots_per_group: int
    groups: int
    spans: list[int | None]
    sizes: list[int]
    large_vms: int
    used_slots: int = 0
    histogram: dict[int, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        placed = [(n, s) for n, s in zip(self.sizes, self.spans) if s is not None]
        large = [(n, s) for n, s in placed if n >= self.large_vms]

        def frac(xs):
            return sum(s == 1 for _, s in xs) / len(xs) if xs else None

        return {"design": self.design, "slots_per_group": self.slots_per_group, "groups": self.groups,
                "applications": len(self.sizes), "placed": len(placed), "rejected": len(self.sizes) - len(placed),
                "utilization": self.used_slots / (self.slots_per_group * self.groups),
                "single_group_fraction": frac(placed), "large_applications": len(large),
                "large_vms": self.large_vms, "large_single_group_fraction": frac(large),
                "large_mean_groups": float(np.mean([s for _, s in large])) if large else None,
                "groups_spanned_histogram": {str(k): v for k, v in sorted(self.histogram.items())},
                "large_groups_spanned_histogram": {str(k): v for k, v in sorted(Counter(s for _, s in large).items())}}


def pack(design: Design, sizes: list[int], *, vms_per_server: int = 1, large_vms: int = 24) -> Packing:
    """Best-fit packing of `sizes` (VMs per application, in arrival order) on `design`. O(apps × groups)."""
    if vms_per_server < 1:
        raise ValueError(f"vms_per_server: must be at least 1, not {vms_per_server}")
    cap = design.servers_per_group * vms_per_server
    free = [cap] * design.groups
    spans: list[int | None] = []
    used = 0
    for n in sizes:
        if n > sum(free):
            spans.append(None)
            continue
        fits = [g for g in range(len(free)) if free[g] >= n]
        if fits:
            g = min(fits, key=lambda g: (free[g], g))
            free[g] -= n
            spans.append(1)
        else:
            left, k = n, 0
            while left:
                fit = [g for g in range(len(free)) if free[g] >= left]
                if fit:  # the last group: best fit for what is left
                    g = min(fit, key=lambda g: (free[g], g))
                    free[g] -= left
                    left = 0
                else:  # otherwise the emptiest group, whole
                    g = max(range(len(free)), key=lambda g: (free[g], -g))
                    left -= free[g]
                    free[g] = 0
                k += 1
            spans.append(k)
        used += n
    return Packing(design.spec.name, cap, design.groups, spans, list(sizes), large_vms, used,
                   dict(Counter(s for s in spans if s is not None)))
