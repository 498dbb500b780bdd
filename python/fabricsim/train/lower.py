"""A training job lowered onto a fabric: one `Workload` of compute steps, flows and barriers, and what each row is.

Who runs what. The tp GPUs of a TP group (a "unit") run every pass in lockstep, so a unit's compute is one chain
of steps on its first GPU (its representative host); each GPU of the unit sends and receives its own flows (its
NIC is its rail). A unit runs its passes in the pipeline schedule's order (`schedule`), one pass at a time:

    pass start (barrier: the previous pass, the data this pass needs, the previous pass's sends delivered)
      → compute (the chunk's layers, `costs.chunk_cost`) ‖ CP flows (ring attention overlaps the compute)
      → join (barrier: compute, and the pass's TP, EP and CP flows where those cross the fabric)
      → TP, EP and CP in closed form where their group stays inside one NVLink domain (`costs.closed_form_ps`)

Aggregation. A pass's per-layer collectives of one dimension are one set of flows (or one closed-form step)
carrying the bytes of all its layers: on the critical path compute and communication add up the same way
(c₁ + a₁ + c₂ + a₂ = (c₁ + c₂) + (a₁ + a₂)); what is lost is how they interleave with other traffic within a
pass. Ring collectives that cross the fabric are their edges as concurrent flows, each carrying a rank's ring
bytes (`costs.ring_bytes`) and starting after NCCL's ring latency: a pipelined ring moves at the rate of its
edges. An all-to-all is one flow per ordered pair.

Megatron-LM semantics:
- pipeline: point-to-point activations (forward) and their gradients (backward), (T / cp) · h · 2 / tp bytes per
  TP rank (Megatron's scatter-gather of pipeline tensors: each TP rank sends its share on its own rail), from the
  GPU of TP rank t to the GPU of TP rank t of the next stage; sends block: a stage's next pass starts when its
  previous pass's sends are delivered (`_communicate` waits on both the sends and the receives).
- data parallelism: gradients reduced only in the last micro-batch's backward pass (gradient accumulation), in
  buckets of `bucket_params` elements, a bucket's all-reduce (reduce-scatter with ZeRO ≥ 1) starting as soon as
  the backward pass has produced it (layers produce gradients evenly); dense parameters reduce over dp × ep × cp
  GPUs, expert parameters over dp × cp. The optimizer (on 1 / group of the parameters with ZeRO ≥ 1) waits for
  every bucket; with ZeRO ≥ 1 the parameters are all-gathered after it. ZeRO-3 also all-gathers a chunk's
  parameters before each pass (prefetched: only the first layer's share delays the compute).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..workload import Workload
from .costs import (
    ChunkCost,
    buckets,
    chunk_cost,
    closed_form_ps,
    latency_ps,
    optimizer_ps,
    ring_bytes,
)
from ..nccl.fabric import NcclFabric
from .job import TrainJob
from .schedule import schedule

_BARRIER, _COMPUTE = 2 << 30, 3 << 30

DIMS = ("tp", "cp", "ep", "pp", "dp")
"""The parallel dimensions, as flows and steps are labelled (index = the label's code)."""
STEP_KINDS = ("compute", "tp", "cp", "ep", "optimizer")
"""Compute-step labels: compute, the closed-form collectives of a dimension, the optimizer."""


@dataclass(frozen=True)
class FabricView:
    """What lowering needs of a fabric: its GPUs (hosts) in order, how many consecutive GPUs share an NVLink
    domain (1: none) and that domain's per-GPU bandwidth per direction (bytes/s)."""

    hosts: list[str]
    domain: int
    nvlink_Bps: float
    node: NcclFabric | None = None
    """A server as NCCL sees it (GPUs, NVLink, NVSwitch reduction), for the closed forms; None without NVLink."""


@dataclass
class _Pass:
    start: list = field(default_factory=list)
    """Deps of the pass-start barrier (appended to while flows are made)."""
    start_ref: int = 0
    computes: list = field(default_factory=list)
    """Per segment, its compute step's ref."""
    joins: list = field(default_factory=list)
    """Per segment, the deps list of its join barrier."""
    fractions: list = field(default_factory=list)
    """Per segment, its share of the pass."""
    first_deps: list = field(default_factory=list)
    """The deps list of the first segment's compute step (ZeRO-3's first-layer gather joins it)."""
    end: int = 0


@dataclass
class Lowered:
    """The workload and, for reading the record back, what every step and flow is."""

    workload: Workload
    job: TrainJob
    fabric: FabricView
    step_unit: np.ndarray
    step_kind: np.ndarray
    flow_dim: np.ndarray
    flow_src_unit: np.ndarray
    flow_dst_unit: np.ndarray
    flow_bytes: np.ndarray
    flow_coll: np.ndarray
    flow_delay: np.ndarray
    """Each flow's start delay (ps): NCCL's latency, during which the collective is under way."""
    """Each flow's collective instance (one per collective call, pipeline transfer or all-to-all)."""
    closed_bytes: dict[str, float]
    """Bytes each dimension moved inside NVLink domains (closed form), every GPU summed."""
    unit_end_steps: list[list[int]]
    """Per step of training, per unit, the compute-step indices and flow indices whose end ends the unit's step."""


class _Builder:
    def __init__(self):
        self.s_host: list[int] = []
        self.s_dur: list[int] = []
        self.s_deps: list[list[int]] = []
        self.s_unit: list[int] = []
        self.s_kind: list[int] = []
        self.b_deps: list[list[int]] = []
        self.m: dict[str, list] = {k: [] for k in ("src", "dst", "size", "delay", "dim", "su", "du", "coll")}
        self.m_dep_counts: list[int] = []
        self.m_dep_flat: list[int] = []
        self.n_msgs = 0
        self.coll = -1
        """The current collective instance (`begin`): every flow of one collective call shares it."""

    def begin(self) -> None:
        """Start a new collective instance."""
        self.coll += 1

    def step(self, host: int, dur: int, deps: list[int], unit: int, kind: str) -> int:
        self.s_host.append(host)
        self.s_dur.append(max(0, int(dur)))
        self.s_deps.append(deps)
        self.s_unit.append(unit)
        self.s_kind.append(STEP_KINDS.index(kind))
        return _COMPUTE | (len(self.s_host) - 1)

    def barrier(self, deps: list[int]) -> int:
        self.b_deps.append(deps)
        return _BARRIER | (len(self.b_deps) - 1)

    def flows(self, src: list[int], dst: list[int], size: float, delay: int, deps: list[int], dim: str,
              su: int, du: int) -> range:
        """Flows src[i] → dst[i], each of `size` bytes (at least 1), started `delay` ps after every one of `deps`,
        labelled with dimension `dim` and the units they leave and reach; their message references."""
        n = len(src)
        if n == 0:
            return range(0)
        m = self.m
        m["src"].extend(src)
        m["dst"].extend(dst)
        m["size"].extend([max(1, round(size))] * n)
        m["delay"].extend([delay] * n)
        m["dim"].extend([DIMS.index(dim)] * n)
        m["su"].extend([su] * n)
        m["du"].extend([du] * n)
        m["coll"].extend([self.coll] * n)
        self.m_dep_counts.extend([len(deps)] * n)
        self.m_dep_flat.extend(deps * n)
        base = self.n_msgs
        self.n_msgs += n
        return range(base, base + n)

    def col(self, k: str, dtype) -> np.ndarray:
        return np.asarray(self.m[k], dtype=dtype)


def _ring(b: _Builder, hosts: list[int], units: list[int], per_edge: float, delay: int, deps: list[list[int]],
          dim: str, into: list[list[int]]) -> None:
    """A ring over `hosts` as one flow per edge i → i+1; edge i waits for `deps[i]` and `deps[i+1]` and is
    appended to `into[i]` and `into[i+1]` (the lists that wait for it)."""
    n = len(hosts)
    if n < 2 or per_edge <= 0:
        return
    b.begin()
    for i in range(n):
        j = (i + 1) % n
        r = b.flows([hosts[i]], [hosts[j]], per_edge, delay, sorted(set(deps[i]) | set(deps[j])), dim,
                    units[i], units[j])
        into[i].extend(r)
        if j != i:
            into[j].extend(r)


def lower(job: TrainJob, fabric: FabricView, scenario) -> Lowered:
    """The workload of `job.steps` training steps on `fabric` (ranks on its first world GPUs in rank order)."""
    par, m = job.par, job.model
    V = job.chunks
    mbs = job.micro_batches
    host_of = list(range(par.world))  # rank r runs on the fabric's r-th host
    domain = fabric.domain

    def server(rank: int) -> int:
        return host_of[rank] // domain if domain > 1 else host_of[rank]

    def in_domain(ranks: list[int]) -> bool:
        return domain > 1 and len({server(r) for r in ranks}) == 1

    def nodes(ranks: list[int]) -> int:
        return len({server(r) for r in ranks})

    costs = [chunk_cost(job, vs) for vs in range(par.pp * V)]
    b = _Builder()
    closed = dict.fromkeys(DIMS, 0.0)
    units = [(c, e, d, s) for s in range(par.pp) for d in range(par.dp) for e in range(par.ep) for c in range(par.cp)]
    uid = {u: par.unit(*u) for u in units}

    def gpus(u) -> list[int]:
        return [par.rank(t, *u) for t in range(par.tp)]

    # Group membership (identical for every unit of a group, so decided once per group shape).
    tp_local = in_domain(gpus(units[0]))
    ep_group = lambda c, d, s: [(c, e, d, s) for e in range(par.ep)]  # noqa: E731
    cp_group = lambda e, d, s: [(c, e, d, s) for c in range(par.cp)]  # noqa: E731
    ep_local = par.ep > 1 and in_domain([par.rank(0, *u) for u in ep_group(0, 0, 0)])
    cp_local = par.cp > 1 and in_domain([par.rank(0, *u) for u in cp_group(0, 0, 0)])
    sp = job.sequence_parallel and par.tp > 1

    node = fabric.node
    act = job.micro_batch * job.seq_len / par.cp * m.hidden * 2  # one micro-batch's activations, bytes

    def tp_closed_ps(cost: ChunkCost) -> int:
        """Per layer and direction: 2 all-gathers + 2 reduce-scatters (sequence parallelism) or 2 all-reduces of
        the activations, each as NCCL would run it on the server."""
        if par.tp == 1:
            return 0
        if sp:
            per_layer = 2 * (closed_form_ps("all_gather", par.tp, act, node)
                             + closed_form_ps("reduce_scatter", par.tp, act, node))
        else:
            per_layer = 2 * closed_form_ps("all_reduce", par.tp, act, node)
        return cost.layers * per_layer

    def ep_closed_ps(cost: ChunkCost) -> int:
        return cost.moe_layers * 2 * closed_form_ps("all_to_all", par.ep, cost.ep_buffer, node)

    dense_group = par.dp * par.ep * par.cp
    expert_group = par.dp * par.cp
    bucket = job.bucket_params

    passes: dict[tuple, _Pass] = {}
    ready: dict[tuple, list[int]] = {}  # (unit, chunk, 'dense'|'expert', bucket) -> [segment end ref]
    end_refs: list[dict] = []  # per training step: unit -> list of refs ending it
    prev_end: dict[tuple, int | None] = dict.fromkeys(units)
    opt_deps: dict[tuple, list[int]] = {}
    opt_ref: dict[tuple, int] = {}
    step_of_pass: dict[tuple, int] = {}
    unit_tail_flows: list[dict[tuple, list[int]]] = []

    for step in range(job.steps):
        ends = {u: [] for u in units}
        for u in units:
            c_, e_, d_, s = u
            rep = host_of[par.rank(0, *u)]
            order = schedule(job.schedule, par.pp, mbs, V, s)
            last_bwd = {ch: next(i for i in range(len(order) - 1, -1, -1) if order[i].chunk == ch and order[i].backward)
                        for ch in range(V)}
            for k, ps in enumerate(order):
                vs = ps.chunk * par.pp + s
                cost = costs[vs]
                p = _Pass()
                p.start = [prev_end[u]] if prev_end[u] is not None else []
                p.start_ref = b.barrier(p.start)
                dur = cost.backward_ps if ps.backward else cost.forward_ps
                cp_mult = 2 if ps.backward else 1
                # Segments: the last backward of a chunk is cut where its gradient buckets become ready.
                if k == last_bwd[ps.chunk]:
                    nd = buckets(cost.params, dense_group, bucket)
                    ne = buckets(cost.expert_params, expert_group, bucket)
                    cuts = sorted({(j + 1) / nd for j in range(nd)} | {(j + 1) / ne for j in range(ne)} | {1.0})
                else:
                    nd = ne = 0
                    cuts = [1.0]
                prev = p.start_ref
                lo = 0.0
                for cut in cuts:
                    frac = cut - lo
                    cdeps = [prev]
                    cref = b.step(rep, round(dur * frac), cdeps, uid[u], "compute")
                    if not p.computes:
                        p.first_deps = cdeps
                    p.computes.append(cref)
                    p.fractions.append(frac)
                    join = [cref]
                    p.joins.append(join)
                    tail = b.barrier(join)
                    if tp_local and par.tp > 1:
                        tail = b.step(rep, round(tp_closed_ps(cost) * frac), [tail], uid[u], "tp")
                        closed["tp"] += cost.tp_bytes * frac * par.tp
                    if par.ep > 1 and cost.moe_layers and ep_local:
                        tail = b.step(rep, round(ep_closed_ps(cost) * frac), [tail], uid[u], "ep")
                        closed["ep"] += cost.moe_layers * 2 * (par.ep - 1) / par.ep * cost.ep_buffer * frac * par.tp
                    if par.cp > 1 and cp_local:
                        cp_ps = closed_form_ps("all_gather", par.cp, cost.cp_bytes_fwd * cp_mult * par.cp / (par.cp - 1),
                                               node)
                        hidden = round(dur * frac * cost.attention_share)
                        tail = b.step(rep, max(0, round(cp_ps * frac) - hidden), [tail], uid[u], "cp")
                        closed["cp"] += cost.cp_bytes_fwd * cp_mult * frac * par.tp
                    prev = tail
                    for j in range(nd):
                        if abs((j + 1) / nd - cut) < 1e-12:
                            ready[(u, ps.chunk, "dense", j)] = [tail]
                    for j in range(ne):
                        if abs((j + 1) / ne - cut) < 1e-12:
                            ready[(u, ps.chunk, "expert", j)] = [tail]
                    lo = cut
                p.end = prev
                passes[(step, u, ps)] = p
                step_of_pass[(step, u, ps)] = k
                prev_end[u] = p.end
            opt_deps[u] = [prev_end[u]]
        # ---- phase 2: flows between units ----------------------------------------------------------------
        order_of = {s: schedule(job.schedule, par.pp, mbs, V, s) for s in range(par.pp)}
        for u in units:
            c_, e_, d_, s = u
            order = order_of[s]
            for k, ps in enumerate(order):
                p = passes[(step, u, ps)]
                vs = ps.chunk * par.pp + s
                cost = costs[vs]
                g = gpus(u)
                gh = [host_of[r] for r in g]
                nxt = passes[(step, u, order[k + 1])] if k + 1 < len(order) else None
                # Pipeline: send to the next (forward) or previous (backward) virtual stage.
                tvs = vs - 1 if ps.backward else vs + 1
                if 0 <= tvs < par.pp * V:
                    ts, tch = tvs % par.pp, tvs // par.pp
                    tu = (c_, e_, d_, ts)
                    tp_ = passes[(step, tu, type(ps)(ps.micro_batch, tch, ps.backward))]
                    th = [host_of[r] for r in gpus(tu)]
                    size = job.micro_batch * job.seq_len / par.cp * m.hidden * 2 / par.tp
                    b.begin()
                    r = b.flows(gh, th, size, 0, [p.end], "pp", uid[u], uid[tu])
                    tp_.start.extend(r)
                    if nxt is not None:
                        nxt.start.extend(r)
                    else:
                        opt_deps[u].extend(r)
                # TP across the fabric: a ring of the unit's GPUs per segment.
                for cref, join, frac in zip(p.computes, p.joins, p.fractions):
                    if par.tp > 1 and not tp_local:
                        delay = latency_ps("all_reduce", par.tp, nodes(g)) * cost.tp_ops // 2
                        _ring(b, gh, [uid[u]] * par.tp, cost.tp_bytes * frac, delay, [[cref]] * par.tp, "tp",
                              [join] * par.tp)
                # EP across the fabric: all-to-all among the EP group's units, per GPU of the same TP rank.
                if par.ep > 1 and cost.moe_layers and not ep_local and e_ == 0:
                    grp = ep_group(c_, d_, s)
                    members = [passes[(step, w, ps)] for w in grp]
                    for si in range(len(p.computes)):
                        frac = p.fractions[si]
                        per_pair = cost.moe_layers * 2 * cost.ep_buffer / par.ep * frac
                        delay = cost.moe_layers * 2 * latency_ps("all_to_all", par.ep, nodes([par.rank(0, *w) for w in grp]))
                        b.begin()
                        for i, wi in enumerate(grp):
                            for j, wj in enumerate(grp):
                                if i == j:
                                    continue
                                src = [host_of[par.rank(t, *wi)] for t in range(par.tp)]
                                dst = [host_of[par.rank(t, *wj)] for t in range(par.tp)]
                                deps = [members[i].computes[si], members[j].computes[si]]
                                r = b.flows(src, dst, per_pair, delay, deps, "ep", uid[wi], uid[wj])
                                members[i].joins[si].extend(r)
                                members[j].joins[si].extend(r)
                # CP across the fabric: a ring over the CP group, concurrent with the compute.
                if par.cp > 1 and not cp_local and c_ == 0:
                    grp = cp_group(e_, d_, s)
                    members = [passes[(step, w, ps)] for w in grp]
                    for si in range(len(p.computes)):
                        frac = p.fractions[si]
                        per_edge = cost.cp_bytes_fwd * (2 if ps.backward else 1) * frac
                        for t in range(par.tp):
                            hs = [host_of[par.rank(t, *w)] for w in grp]
                            starts = [mm.start_ref for mm in members] if si == 0 else [mm.computes[si - 1] for mm in members]
                            _ring(b, hs, [uid[w] for w in grp], per_edge, 0, [[x] for x in starts], "cp",
                                  [mm.joins[si] for mm in members])
        # ZeRO-3: every pass gathers its chunk's parameters first (prefetched: the first layer's share delays
        # the compute, the rest overlaps it).
        if job.zero == 3 and dense_group > 1:
            for s in range(par.pp):
                grp = tuple(w for w in units if w[3] == s)
                for ps in order_of[s]:
                    cost = costs[ps.chunk * par.pp + s]
                    members = [passes[(step, w, ps)] for w in grp]
                    total = (cost.params + cost.expert_params) * job.param_bytes
                    for share, first in ((1 / cost.layers, True), (1 - 1 / cost.layers, False)):
                        if share <= 0:
                            continue
                        for t in range(par.tp):
                            hs = [host_of[par.rank(t, *w)] for w in grp]
                            rs = [par.rank(t, *w) for w in grp]
                            _ring(b, hs, [uid[w] for w in grp], ring_bytes("all_gather", dense_group, total * share),
                                  latency_ps("all_gather", dense_group, nodes(rs)) if first else 0,
                                  [[mm.start_ref] for mm in members], "dp",
                                  [mm.first_deps if first else mm.joins[0] for mm in members])
        # Data parallelism: bucketed gradient reduction, the optimizer, ZeRO's parameter all-gather.
        kind = "reduce_scatter" if job.zero >= 1 else "all_reduce"
        tails: dict[tuple, list[int]] = {u: [] for u in units}
        for s in range(par.pp):
            for ch in range(V):
                cost = costs[ch * par.pp + s]
                for which, params, group_of in (
                        ("dense", cost.params, lambda u: [w for w in units if w[3] == u[3]]),
                        ("expert", cost.expert_params, lambda u: [w for w in units if w[3] == u[3] and w[1] == u[1]])):
                    n = dense_group if which == "dense" else expert_group
                    nb = buckets(params, n, bucket)
                    if nb == 0:
                        continue
                    done_groups = set()
                    for u in units:
                        if u[3] != s:
                            continue
                        grp = tuple(group_of(u))
                        if grp in done_groups:
                            continue
                        done_groups.add(grp)
                        for j in range(nb):
                            bucket_bytes = params / nb * job.grad_bytes
                            for t in range(par.tp):
                                hs = [host_of[par.rank(t, *w)] for w in grp]
                                rs = [par.rank(t, *w) for w in grp]
                                per_edge = ring_bytes(kind, n, bucket_bytes)
                                _ring(b, hs, [uid[w] for w in grp], per_edge, latency_ps(kind, n, nodes(rs)),
                                      [ready[(w, ch, which, j)] for w in grp], "dp", [opt_deps[w] for w in grp])
        for u in units:
            s = u[3]
            dense_p = sum(costs[ch * par.pp + s].params for ch in range(V))
            exp_p = sum(costs[ch * par.pp + s].expert_params for ch in range(V))
            if job.zero >= 1:
                dense_p = math.ceil(dense_p / dense_group)
                exp_p = math.ceil(exp_p / expert_group)
            rep = host_of[par.rank(0, *u)]
            opt_ref[u] = b.step(rep, optimizer_ps(job, dense_p + exp_p), opt_deps[u], uid[u], "optimizer")
            tails[u].append(opt_ref[u])
        if job.zero >= 1:
            for which, n, group_of in (("dense", dense_group, lambda u: tuple(w for w in units if w[3] == u[3])),
                                       ("expert", expert_group,
                                        lambda u: tuple(w for w in units if w[3] == u[3] and w[1] == u[1]))):
                seen = set()
                for u in units:
                    grp = group_of(u)
                    if grp in seen or n < 2:
                        continue
                    seen.add(grp)
                    s = u[3]
                    params = sum((costs[ch * par.pp + s].params if which == "dense" else
                                  costs[ch * par.pp + s].expert_params) for ch in range(V))
                    if params == 0:
                        continue
                    for t in range(par.tp):
                        hs = [host_of[par.rank(t, *w)] for w in grp]
                        rs = [par.rank(t, *w) for w in grp]
                        _ring(b, hs, [uid[w] for w in grp], ring_bytes("all_gather", n, params * job.param_bytes),
                              latency_ps("all_gather", n, nodes(rs)), [[opt_ref[w]] for w in grp], "dp",
                              [tails[w] for w in grp])
        for u in units:
            ends[u] = list(tails[u])
            prev_end[u] = b.barrier(list(tails[u]))
        end_refs.append(ends)
        unit_tail_flows.append(tails)

    wl = Workload(scenario)
    n_steps = len(b.s_host)
    # Compute steps first (their references are _COMPUTE | index), then barriers, then messages; every
    # reference was fixed when its row was made, so the order of the calls does not matter.
    wl.compute(np.asarray(b.s_host, dtype=np.int64), np.asarray(b.s_dur, dtype=np.uint64),
               after=b.s_deps if n_steps else None)
    wl.barriers(b.b_deps)
    if b.n_msgs:
        from ..workload import Deps

        wl.messages(b.col("src", np.int64), b.col("dst", np.int64), b.col("size", np.uint64), packet_size=4096,
                    delay_ps=b.col("delay", np.uint64),
                    after=Deps(np.asarray(b.m_dep_counts, dtype=np.uint32), np.asarray(b.m_dep_flat, dtype=np.uint32)))
    unit_ends = [[ends[u] for u in units] for ends in end_refs]
    return Lowered(wl, job, fabric, np.asarray(b.s_unit, dtype=np.int64), np.asarray(b.s_kind, dtype=np.uint8),
                   b.col("dim", np.uint8), b.col("su", np.int64), b.col("du", np.int64), b.col("size", np.float64),
                   b.col("coll", np.int64), b.col("delay", np.int64), closed, unit_ends)

