"""The flow-level engine's solver as a utility: max-min fair rates over capacitated resources.

`fabricsim.run(scenario, fidelity="flow")` simulates whole scenarios with it; this exposes the allocation alone,
e.g. to check a routing plan's fair shares without simulating time.
"""

from __future__ import annotations

from typing import Sequence

from . import _core
from .errors import ScenarioError


def maxmin_rates(capacity: Sequence[float], uses: Sequence[Sequence[tuple[int, float]]],
                 caps: Sequence[float | None] | None = None) -> list[float]:
    """Weighted max-min fair rates. `capacity[r]` is resource r's capacity (any unit, > 0); `uses[f]` lists the
    (resource, weight > 0) pairs of flow f (weight 1 on a single path, fractions when it is spread); `caps[f]`
    bounds flow f's own rate (None = no bound). Progressive filling: O(Σ|uses| · log resources)."""
    caps = list(caps) if caps is not None else [None] * len(uses)
    try:
        return _core.maxmin([float(c) for c in capacity], [[(int(r), float(w)) for r, w in u] for u in uses],
                            [None if c is None else float(c) for c in caps])
    except _core.SpecError as e:
        raise ScenarioError("<maxmin>", *str(e).split(": ", 1)) from None
