"""Cross-check of a plan's claimed rate: its pipelined All-Reduce run in the flow-level engine.

Model (`build`). Workers and the PS are hosts on their one link; common switches are switches; an
aggregator is a switch (so segments that merely pass through it are forwarded untouched) plus an attached
"ALU" host on a link `alu_speedup` × faster than the fabric's, which is where the segments ending at the
aggregator are delivered and where its own output segment starts. Every link is full duplex (the engine
shares each *direction* max-min fairly among the fluid flows crossing it).

The All-Reduce is pipelined in `chunks` chunks of `chunk_bytes` (no headers, so wire rate = payload rate):

* reduction: one message per (segment, chunk) on the segment's explicit node path. A segment starting at an
  aggregator sends chunk c only once every segment ending at that aggregator has *delivered* chunk c (`deps`);
  every segment sends chunk c only once its chunk c−1 was fully *sent* (`sent_deps`), so a segment's chunks
  leave in order and back to back, with no window: a sender that is ahead of the others simply runs ahead
  (an aggregator buffers without limit).
* broadcast (`broadcast=True`): one message per (segment, chunk) on the reversed path, from the segment's
  end (the PS or the aggregator's ALU) to its start (a worker or a child aggregator's ALU). The PS sends
  chunk c once all its input segments delivered reduction chunk c; an aggregator forwards (replicates)
  chunk c to each child once its own parent delivered broadcast chunk c to it. Ordering as for the reduction.

Measured rate (`SimResult.rate_gbps`): the steady-state per-worker rate, chunk_bytes·8 divided by the mean
spacing of consecutive chunk completions over the middle half of the chunks, [q, chunks−1−q] with
q = chunks//4. Both ends are transients: the pipeline fill, and the drain, where a sender that ran ahead
finishes early and hands its link share to those still sending (a worker's flow passing through an
aggregator next to that aggregator's output makes the last chunk arrive at twice the steady rate). A chunk
is complete at the PS when its last input segment delivered it (`reduce_gbps`), and at the workers when the
last worker received it (`broadcast_gbps`); with the broadcast the All-Reduce rate is the workers' rate.
`overall_gbps` (all the data over the completion time, fill included) is reported too.

Why the engine's per-direction capacity agrees with the evaluator's both-directions count: with the
broadcast, a link that carries k₁ segments one way and k₂ the other carries k₁ reductions + k₂ broadcasts
one way and k₂ + k₁ the other, i.e. the evaluator's k = k₁ + k₂ in each direction. A reduction-only run can
beat the claim on such links (`bidirectional_links` lists them; ATRO's layered plans have none).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .model import Plan, evaluate


@dataclass
class SimResult:
    """One simulated All-Reduce of a plan. Rates are per worker in Gb/s, times in seconds.

    Invariants: `rate_gbps` is `broadcast_gbps` when the broadcast ran and `reduce_gbps` otherwise;
    `messages` = segments × chunks × (2 with the broadcast, else 1); the per-chunk time lists have `chunks`
    entries, nondecreasing, the broadcast list empty without the broadcast."""

    rate_gbps: float
    claimed_gbps: float
    reduce_gbps: float
    broadcast_gbps: float | None
    overall_gbps: float
    completion_s: float
    messages: int
    chunks: int
    chunk_bytes: int
    max_load: int
    bidirectional_links: list[tuple[str, str]]
    reduce_done_s: list[float] = field(repr=False)
    broadcast_done_s: list[float] = field(repr=False)
    engine_wall_s: float = 0.0
    wall_s: float = 0.0

    @property
    def ratio(self) -> float:
        """Achieved over claimed rate (1.0 = the evaluator's rate exactly)."""
        return self.rate_gbps / self.claimed_gbps if self.claimed_gbps else float("nan")

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["bidirectional_links"] = [list(x) for x in self.bidirectional_links]
        out["ratio"] = self.ratio
        return out


@dataclass
class _Layout:
    """Index bookkeeping of a wire spec: reduction message of (segment s, chunk c) is `red(s, c)`, its
    broadcast `bc(s, c)`; `into[n]` are the segments ending at node n."""

    nseg: int
    chunks: int
    broadcast: bool
    into: dict[str, list[int]]

    def red(self, s: int, c: int) -> int:
        return c * self.nseg + s

    def bc(self, s: int, c: int) -> int:
        return self.nseg * self.chunks + c * self.nseg + s


def _alu(agg: str) -> str:
    return f"alu.{agg}"


def build(plan: Plan, *, chunk_bytes: int, chunks: int, broadcast: bool = True, packet_bytes: int = 4096,
          alu_speedup: float = 1000.0, link_delay_ps: int = 0):
    """(scenario, workload, layout) of `plan`'s pipelined All-Reduce (see the module docstring). The plan must
    be feasible (`evaluate`). O(nodes + links + segments × chunks)."""
    from ..spec import scenario_from_dict
    from ..workload import Workload

    kinds = plan.kinds
    endpoints = {n for seg in plan.segments for n in (seg[0], seg[-1]) if kinds[n] == "agg"}
    names = list(kinds) + [_alu(a) for a in sorted(endpoints)]
    if len(set(names)) != len(names):
        raise ValueError("plan: a node name collides with an aggregator's ALU name")
    idx = {n: i for i, n in enumerate(names)}
    nodes = [{"name": n, "kind": "switch" if kinds.get(n) in ("cs", "agg") else "host"} for n in names]
    rate = round(plan.link_gbps * 1e9)
    delay = f"{link_delay_ps}ps"
    links = [{"a": a, "b": b, "rate": rate, "delay": delay} for a, b in plan.links]
    links += [{"a": _alu(a), "b": a, "rate": round(rate * alu_speedup)} for a in sorted(endpoints)]
    sc = scenario_from_dict({"seed": 1, "topology": {"kind": "custom", "nodes": nodes, "links": links}})

    def ends(seg: list[str]) -> tuple[str, str, list[int]]:
        src = _alu(seg[0]) if kinds[seg[0]] == "agg" else seg[0]
        dst = _alu(seg[-1]) if kinds[seg[-1]] == "agg" else seg[-1]
        path = ([src] if src != seg[0] else []) + seg + ([dst] if dst != seg[-1] else [])
        return src, dst, [idx[n] for n in path]

    into: dict[str, list[int]] = defaultdict(list)
    out_of: dict[str, int] = {}
    for s, seg in enumerate(plan.segments):
        into[seg[-1]].append(s)
        out_of[seg[0]] = s
    lay = _Layout(len(plan.segments), chunks, broadcast, dict(into))
    rows: dict[str, list] = {"src": [], "dst": [], "after": [], "after_sent": [], "paths": [], "names": []}

    def add(name: str, src: str, dst: str, path: list[int], after: list[int], after_sent: list[int]) -> None:
        for k, v in (("src", idx[src]), ("dst", idx[dst]), ("paths", path), ("after", after),
                     ("after_sent", after_sent), ("names", name)):
            rows[k].append(v)

    for c in range(chunks):
        for s, seg in enumerate(plan.segments):
            src, dst, path = ends(seg)
            after = [lay.red(x, c) for x in into[seg[0]]] if kinds[seg[0]] == "agg" else []
            add(f"r{c}.{seg[0]}>{seg[-1]}", src, dst, path, after, [lay.red(s, c - 1)] if c else [])
    if broadcast:
        for c in range(chunks):
            for s, seg in enumerate(plan.segments):
                src, dst, path = ends(seg)
                # The PS holds chunk c once every input delivered it; an aggregator once its parent sent it.
                after = [lay.red(x, c) for x in into[seg[-1]]] if kinds[seg[-1]] == "ps" else [lay.bc(out_of[seg[-1]], c)]
                add(f"b{c}.{seg[-1]}>{seg[0]}", dst, src, path[::-1], after, [lay.bc(s, c - 1)] if c else [])
    wl = Workload(sc)
    wl.messages(rows["src"], rows["dst"], chunk_bytes, packet_size=min(packet_bytes, chunk_bytes), after=rows["after"],
                after_sent=rows["after_sent"], paths=rows["paths"], names=rows["names"])
    return sc, wl, lay


def _steady_gbps(done_ps: list[int], chunk_bytes: int) -> float:
    """chunk_bytes·8 over the mean spacing of completions in the middle half [n//4, n−1−n//4] (fill and
    drain excluded; for n < 4 the whole run)."""
    lo = len(done_ps) // 4
    hi = len(done_ps) - 1 - lo
    if hi <= lo:
        return float("nan")
    spacing_s = (done_ps[hi] - done_ps[lo]) * 1e-12 / (hi - lo)
    return chunk_bytes * 8 / spacing_s / 1e9 if spacing_s > 0 else float("inf")


def simulate(plan: Plan, *, chunk_bytes: int = 1 << 20, chunks: int = 64, broadcast: bool = True,
             packet_bytes: int = 4096, alu_speedup: float = 1000.0, link_delay_ns: float = 0.0) -> SimResult:
    """Run `plan`'s pipelined All-Reduce in the flow-level engine and compare the steady-state per-worker rate
    with the evaluator's claim. Raises ValueError if the plan is infeasible or the arguments are out of range.
    Cost: segments × chunks × (1 + broadcast) messages, one max-min re-solve per start/finish instant."""
    from ..engine import run

    if chunks < 2:
        raise ValueError(f"chunks: must be at least 2, not {chunks}")
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes: must be positive, not {chunk_bytes}")
    if alu_speedup <= 0:
        raise ValueError(f"alu_speedup: must be positive, not {alu_speedup:g}")
    ev = evaluate(plan)
    if not ev.feasible:
        raise ValueError("plan: infeasible: " + "; ".join(ev.problems[:5]))
    t0 = time.perf_counter()
    sc, wl, lay = build(plan, chunk_bytes=chunk_bytes, chunks=chunks, broadcast=broadcast,
                        packet_bytes=packet_bytes, alu_speedup=alu_speedup, link_delay_ps=round(link_delay_ns * 1e3))
    record = run(sc, fidelity="flow", workload=wl)
    rec = record.scalars
    done = record.values("flows.complete_ps")
    if rec["completion_ps"] is None or any(t is None for t in done):
        raise RuntimeError("the engine left a message undelivered (a dependency that never completes?)")
    ps = next(n for n, k in plan.kinds.items() if k == "ps")
    red = [max(done[lay.red(s, c)] for s in lay.into[ps]) for c in range(chunks)]
    red_gbps = _steady_gbps(red, chunk_bytes)
    bc: list[int] = []
    bc_gbps = None
    if broadcast:
        worker_segs = [s for s, seg in enumerate(plan.segments) if plan.kinds[seg[0]] == "worker"]
        bc = [max(done[lay.bc(s, c)] for s in worker_segs) for c in range(chunks)]
        bc_gbps = _steady_gbps(bc, chunk_bytes)
    completion_s = rec["completion_ps"] * 1e-12
    directed = {(a, b) for seg in plan.segments for a, b in zip(seg, seg[1:])}
    both = sorted({(a, b) if a < b else (b, a) for a, b in directed if (b, a) in directed})
    return SimResult(
        rate_gbps=bc_gbps if bc_gbps is not None else red_gbps, claimed_gbps=ev.rate_gbps,
        reduce_gbps=red_gbps, broadcast_gbps=bc_gbps,
        overall_gbps=chunks * chunk_bytes * 8 / completion_s / 1e9, completion_s=completion_s,
        messages=wl.n_messages, chunks=chunks, chunk_bytes=chunk_bytes, max_load=ev.max_load,
        bidirectional_links=both, reduce_done_s=[t * 1e-12 for t in red],
        broadcast_done_s=[t * 1e-12 for t in bc], engine_wall_s=rec["wall_s"],
        wall_s=time.perf_counter() - t0)
