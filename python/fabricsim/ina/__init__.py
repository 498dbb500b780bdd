"""In-network-aggregation All-Reduce (study 002): the plan model and evaluator, ATRO and the ARO/PARING/SPAR baselines.

`solve(scheme, topology, seed)` runs one scheme once; `study(...)` runs it over seeds and summarizes, as the CLI
`fabricsim ina` does. Throughput is the common per-worker rate r in Gb/s (the study's metric).
"""

from __future__ import annotations

import statistics
from typing import Any

from .atro import Instance, Solution, atro
from .baselines import Fabric, aro, fabric, fat_tree, leaf_spine, paring, spar
from .model import Evaluation, Plan, evaluate

SCHEMES = ("atro", "aro", "paring", "spar")
TOPOLOGIES = ("reconfigurable", "leaf-spine", "fat-tree")

__all__ = ["Instance", "Solution", "atro", "Fabric", "aro", "paring", "spar", "fabric", "fat_tree", "leaf_spine",
           "Plan", "Evaluation", "evaluate", "solve", "study", "sweep_task", "SCHEMES", "TOPOLOGIES"]


def solve(scheme: str, topology: str, seed: int = 0, *, workers: int = 90, aggregators: int = 4, switches: int = 20,
          ports: int = 24, link_gbps: float = 100.0, layers: int = 5, solver: str | None = None,
          objective: str | None = None, time_limit_s: float = 60.0, rate_levels: int | None = None,
          agg_placement: str = "random") -> Solution:
    """One run. ATRO needs `topology="reconfigurable"` (it chooses the links) and ignores `seed`; the baselines
    need a fixed fabric ("leaf-spine" or "fat-tree", 20 switches) and draw their placement from `seed`.
    Defaults: ATRO HiGHS with the levels objective; ARO CP-SAT min-load with the study's QSR N = 100.
    Raises ValueError("field: why") on bad input."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme: must be one of {', '.join(SCHEMES)}, not '{scheme}'")
    if topology not in TOPOLOGIES:
        raise ValueError(f"topology: must be one of {', '.join(TOPOLOGIES)}, not '{topology}'")
    if workers < 1:
        raise ValueError(f"workers: must be at least 1, not {workers}")
    if aggregators < 0:
        raise ValueError(f"aggregators: must be non-negative, not {aggregators}")
    if time_limit_s <= 0:
        raise ValueError(f"time_limit_s: must be positive, not {time_limit_s:g}")
    if rate_levels is not None and rate_levels < 1:
        raise ValueError(f"rate_levels: must be at least 1, not {rate_levels}")
    if scheme == "atro":
        if topology != "reconfigurable":
            raise ValueError(f"topology: ATRO builds its own topology (use 'reconfigurable'), not '{topology}'")
        inst = Instance(workers, switches, aggregators, ports, link_gbps, layers)
        return atro(inst, solver=solver or "highs", objective=objective or "levels", time_limit_s=time_limit_s,
                    rate_levels=rate_levels)
    if topology == "reconfigurable":
        raise ValueError(f"topology: {scheme.upper()} runs on a fixed fabric (leaf-spine or fat-tree)")
    if switches != 20:
        raise ValueError(f"switches: the study's {topology} has 20 switches; --switches applies to ATRO only")
    fab = fabric(topology, ports, link_gbps)
    if aggregators > len(fab.switches):
        raise ValueError(f"aggregators: at most {len(fab.switches)} on {topology}, not {aggregators}")
    if scheme == "aro":
        return aro(fab, workers, aggregators, seed, layers=layers, agg_placement=agg_placement,
                   solver=solver or "cpsat", objective=objective or "min-load", time_limit_s=time_limit_s,
                   rate_levels=100 if rate_levels is None else rate_levels)
    if scheme == "paring":
        return paring(fab, workers, aggregators, seed, agg_placement=agg_placement)
    return spar(fab, workers, aggregators, seed)


def study(scheme: str, topology: str, seeds: int = 30, progress=None, *, first_seed: int = 1,
          **opts: Any) -> dict[str, Any]:
    """`seeds` repetitions (seeds first_seed…first_seed+seeds−1) of a randomized scheme, one run of ATRO (seed
    `first_seed`); the mean and per-seed figures. `progress(done, total)` is called after every run."""
    if seeds < 1:
        raise ValueError(f"seeds: must be at least 1, not {seeds}")
    runs = [first_seed] if scheme == "atro" else list(range(first_seed, first_seed + seeds))
    sols = []
    for i, s in enumerate(runs):
        sols.append(solve(scheme, topology, s, **opts))
        if progress:
            progress(i + 1, len(runs))
    th = [x.throughput_gbps for x in sols]
    gaps = [x.gap for x in sols if x.gap == x.gap]
    out = {"scheme": scheme, "topology": topology, "seeds": runs, "throughput_gbps": statistics.fmean(th),
           "throughput_per_seed_gbps": th, "solve_time_s": sum(x.solve_time_s for x in sols),
           "optimal": all(x.optimal for x in sols) if scheme in ("atro", "aro") else None,
           "gap": max(gaps) if gaps else None}
    if scheme == "atro":
        out.update({k: v for k, v in sols[0].extra.items() if k != "levels_tried"})
    out["_solutions"] = sols
    return out


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task: {"scheme", "topology", "workers", "aggregators", …} → one run's metrics."""
    opts = {k: payload[k] for k in ("workers", "aggregators", "switches", "ports", "link_gbps", "layers", "solver",
                                    "objective", "time_limit_s", "rate_levels", "agg_placement") if k in payload}
    sol = solve(payload["scheme"], payload["topology"], seed, **opts)
    return {"throughput_gbps": sol.throughput_gbps, "solve_time_s": sol.solve_time_s, "optimal": sol.optimal,
            "gap": sol.gap, "max_load": sol.extra.get("max_load")}
