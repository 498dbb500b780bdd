"""ATRO: the joint topology and routing optimum of in-network-aggregation All-Reduce on a reconfigurable cluster.

Every worker, the PS and every switch plugs into an optical patch panel, so any switch pair may be linked
(at most one link per pair, as the study's binary x) within each switch's η ports. `atro(instance)` solves the
study's model exactly (module `milp`) and returns the plan (links and paths), the rate and the proof status.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .milp import Problem, Result, Routing, solve_problem
from .model import Plan, evaluate


@dataclass(frozen=True)
class Instance:
    """A reconfigurable cluster and one All-Reduce job. Units: `link_gbps` in Gb/s for every link."""

    workers: int = 90
    switches: int = 20
    aggregators: int = 4
    ports: int = 24
    link_gbps: float = 100.0
    layers: int = 5

    def __post_init__(self) -> None:
        from ..checks import fields

        fields(self, positive=("workers", "switches", "ports", "link_gbps", "layers"), nonneg=("aggregators",))
        checks = [("workers", self.workers >= 1, "must be at least 1"),
                  ("switches", self.switches >= 1, "must be at least 1"),
                  ("aggregators", 0 <= self.aggregators <= self.switches, f"must be in 0..switches ({self.switches})"),
                  ("ports", self.ports >= 2, "must be at least 2"),
                  ("link_gbps", self.link_gbps > 0, "must be positive"),
                  ("layers", 1 <= self.layers <= self.switches, f"must be in 1..switches ({self.switches})"),
                  ("workers", self.workers + 1 <= self.switches * self.ports,
                   f"{self.workers} workers and the PS need more ports than {self.switches} × {self.ports}")]
        for name, ok, why in checks:
            if not ok:
                raise ValueError(f"{name}: {why}")

    def names(self) -> list[str]:
        """Switch names: aggregators agg0…, then common switches cs0…"""
        return [f"agg{i}" for i in range(self.aggregators)] + [f"cs{i}" for i in range(self.switches - self.aggregators)]

    def problem(self) -> Problem:
        S = self.switches
        return Problem([s < self.aggregators for s in range(S)], self.workers, self.layers,
                       list(itertools.combinations(range(S), 2)), ports=[self.ports] * S)


def decompose(names: list[str], is_agg: list[bool], rt: Routing, workers: dict[int, list[str]]) -> list[list[str]]:
    """Segments from flow counts: every worker's flow and every active aggregator's output, followed over
    remaining flow units (any order works: flows are conserved at common switches and the graph is acyclic)."""
    rem = dict(rt.flows)
    rem_ps = rt.to_ps
    out: dict[int, list[int]] = defaultdict(list)
    for u, v in sorted(rt.flows):
        out[u].append(v)
    segs = []

    def follow(start: int, path: list[str]) -> list[str]:
        nonlocal rem_ps
        node = start
        while True:
            if node == rt.ps_at and rem_ps > 0 and not any(rem[node, v] for v in out[node]):
                rem_ps -= 1
                return path + ["ps"]
            nxt = next((v for v in out[node] if rem[node, v] > 0), None)
            if nxt is None:
                if node == rt.ps_at and rem_ps > 0:
                    rem_ps -= 1
                    return path + ["ps"]
                raise AssertionError(f"flow stuck at {names[node]}: the routing does not conserve flows")
            rem[node, nxt] -= 1
            path = path + [names[nxt]]
            if is_agg[nxt]:
                return path
            node = nxt

    for s in range(len(names)):
        for w in workers.get(s, []):
            segs.append([w, names[s]] if is_agg[s] else follow(s, [w, names[s]]))
    for s in range(len(names)):
        if is_agg[s] and (any(rt.flows.get((s, v), 0) for v in out[s]) or (s == rt.ps_at and rt.to_ps)):
            segs.append(follow(s, [names[s]]))
    return segs


@dataclass
class Solution:
    """An optimizer's answer: the plan, its evaluated rate, and the proof."""

    scheme: str
    plan: Plan
    throughput_gbps: float
    optimal: bool
    gap: float
    solve_time_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self, with_plan: bool = False) -> dict[str, Any]:
        d = {"scheme": self.scheme, "throughput_gbps": self.throughput_gbps, "optimal": self.optimal,
             "gap": self.gap, "solve_time_s": self.solve_time_s, **self.extra}
        if with_plan:
            d["plan"] = self.plan.to_json()
        return d


def plan_from_routing(names: list[str], is_agg: list[bool], ports: list[int], rt: Routing, link_gbps: float,
                      fixed_links: list[tuple[int, int]] | None = None,
                      worker_names: dict[int, list[str]] | None = None) -> Plan:
    """The plan of a solved problem: workers w0… attached per `rt.workers_at` (or `worker_names`), the PS on
    `rt.ps_at`, and the used switch links (ATRO drops unused ones, §III-C) or the fixed topology."""
    if worker_names is None:
        worker_names, k = {}, 0
        for s, c in enumerate(rt.workers_at):
            worker_names[s] = [f"w{k + i}" for i in range(c)]
            k += c
    kinds = {n: ("agg" if a else "cs") for n, a in zip(names, is_agg)}
    port_map = dict(zip(names, ports))
    links = []
    for s, ws in worker_names.items():
        for w in ws:
            kinds[w] = "worker"
            port_map[w] = 1
            links.append((w, names[s]))
    kinds["ps"] = "ps"
    port_map["ps"] = 1
    links.append(("ps", names[rt.ps_at]))
    pairs = fixed_links if fixed_links is not None else rt.links
    links += [(names[u], names[v]) for u, v in pairs]
    return Plan(kinds, port_map, links, decompose(names, is_agg, rt, worker_names), link_gbps)


def atro(inst: Instance, *, solver: str = "highs", objective: str = "levels", time_limit_s: float = 60.0,
         rate_levels: int | None = None) -> Solution:
    """Solve ATRO on `inst`: the best topology and routing. `objective`: "levels" (prove load 1, 2, … infeasible
    in turn) or "min-load" (one MILP minimizing τ = b / r); `rate_levels` N: the study's quantized rates b·k/N.
    The throughput reported is the evaluator's, on the extracted plan; `gap` is (best − proven bound)/best."""
    t0 = time.perf_counter()
    res: Result = solve_problem(inst.problem(), objective, solver, time_limit_s, rate_levels)
    names = inst.names()
    if res.routing is None:
        raise RuntimeError(f"no feasible plan found within {time_limit_s:g} s (proven: at most "
                           f"{inst.link_gbps / res.lower_bound:g} Gb/s)")
    is_agg = [i < inst.aggregators for i in range(inst.switches)]
    plan = plan_from_routing(names, is_agg, [inst.ports] * inst.switches, res.routing, inst.link_gbps)
    ev = evaluate(plan)
    if not ev.feasible:
        raise AssertionError("the optimizer's plan fails the evaluator: " + "; ".join(ev.problems[:3]))
    rate = inst.link_gbps * res.rate_fraction if rate_levels else ev.rate_gbps
    bound = inst.link_gbps / res.lower_bound
    gap = max(0.0, (bound - rate) / bound) if bound else 0.0
    plan.meta = {"scheme": "atro", "instance": inst.__dict__, "layers": {n: l for n, l in zip(names, res.routing.layer)}}
    return Solution("atro", plan, rate, res.optimal, 0.0 if res.optimal else gap, time.perf_counter() - t0,
                    {"max_load": ev.max_load, "upper_bound_gbps": bound, "links_used": ev.links_used,
                     "active_aggregators": ev.active_aggregators, "levels_tried": res.levels_tried,
                     "objective": "qsr" if rate_levels else objective, "solver": "highs" if rate_levels else solver})
