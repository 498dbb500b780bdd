"""A training job's step as a Chakra execution trace, one file per rank (`fabricsim trace synth 3d`).

The same job as `fabricsim train` (`TrainJob`: a model preset or file, TP × CP × EP × DP × PP in Megatron-LM's rank
order tp-cp-ep-dp-pp, 1F1B or interleaved, sequence parallelism, ZeRO 0 or 1), written as nodes instead of lowered
to flows: every compute time, byte count and dependency comes from `costs`, `schedule` and `job`, so the trace
and `fabricsim.train` describe the same step. Rank r = t + tp·(c + cp·(e + ep·(d + dp·s))) runs stage s's
passes in its schedule's order (`schedule.schedule`), one after the other; a pass of virtual stage vs (layers
[vs·L/(p·V), (vs+1)·L/(p·V))) for one micro-batch is, per layer (T = b·s/cp tokens per GPU, h the hidden size):

forward, layer by layer:
    [tp_all_gather] → attention_forward ‖ [cp_all_gather] → [tp_reduce_scatter | tp_all_reduce]
    → [tp_all_gather] → [ep_dispatch_all_to_all] → mlp_forward | experts_forward → [ep_combine_all_to_all]
    → [tp_reduce_scatter | tp_all_reduce]
backward, layers in reverse:
    [tp_all_gather] → [ep_combine_grad_all_to_all] → mlp_backward | experts_backward → [ep_dispatch_grad_all_to_all]
    → [tp_reduce_scatter | tp_all_reduce] → [tp_all_gather] → attention_backward ‖ [cp_all_gather, cp_reduce_scatter]
    → [tp_reduce_scatter | tp_all_reduce]

- COMP attention_* / mlp_* / experts_*: the layer's attention block and its MLP block (experts_* in an MoE layer:
  router, shared and routed experts), FLOPs as `models` counts them over T tokens / tp (`num_ops`), the block's
  weights (read forward; read and their gradients written backward) and one activation (`tensor_size`); the first
  virtual stage's first attention node also holds the input embedding, the last one's last MLP node the output
  layer. Durations: the pass's roofline from `costs.chunk_cost` (forward_ps, backward_ps) split over its nodes in
  proportion to their FLOPs, in whole microseconds (Chakra's `duration_micros`) rounded cumulatively within the
  pass (so a pass's nodes add up to its time rounded to 1 µs), at least 1 µs each.
- TP (when tp > 1, on communicator tp{k}): per layer and direction two ALL_REDUCEs (attention and MLP block), or
  with sequence parallelism (the default) two ALL_GATHERs and two REDUCE_SCATTERs, each of comm_size
  S = T·h·2 bytes (the gathered buffer / the scattered input), as `costs` counts them.
- EP (an MoE layer when ep > 1, on ep{k}): ALL_TO_ALL dispatch and combine around the experts, forward and
  backward, each of comm_size (T / tp)·top_k·h·2 bytes (the rank's routed tokens; the lowering sends 1/ep of it to
  every member).
- CP (when cp > 1, on cp{k}): ring attention's key/value exchange written as collectives concurrent with the
  attention compute (both wait for the layer's input; the next node waits for both), so the exchange hides
  behind the attention as in `fabricsim.train`: forward one ALL_GATHER of the keys and values, backward an
  ALL_GATHER of them again and a REDUCE_SCATTER of their gradients, each of comm_size 2·b·s·kv_heads·head_dim·2 /
  tp bytes (the gathered K and V; a ring moves (cp − 1)/cp of it per rank, `costs`' CP bytes). Not a send/recv
  ring: the engine's ring collective is that ring, and the trace stays one node per exchange.
- PP: COMM_RECV before a pass that needs another stage's output (recv_activation forward, recv_gradient
  backward) and COMM_SEND after a pass whose output another stage needs (send_activation, send_gradient), of
  T·h·2 / tp bytes (each TP rank sends its share to the same TP rank of the next stage), with comm_tag
  2·(micro_batch·V + the sender's chunk) + (0 forward, 1 backward) (`chakra.synth.pipeline_parallel`'s 2·j +
  direction when V = 1). A pass starts after the previous pass, its receive and the previous pass's send
  (Megatron's blocking p2p; a send node completes when its last packet leaves the NIC, where `fabricsim.train`
  waits for delivery).
- DP, in the last backward pass of each chunk: the chunk's gradients in buckets as `fabricsim.train` cuts them
  (ceil(params / bucket) buckets of equal size, bucket = TrainJob.bucket_params or max(40M, 1M × group)
  parameters, `grad_bytes` each): dense parameters over dp{k} (the dp × ep × cp ranks of a (t, s)), expert
  parameters over edp{k} (dp × cp ranks of a (t, e, s)), an ALL_REDUCE each, or with ZeRO 1 a REDUCE_SCATTER,
  comm_size the bucket's bytes. A bucket waits for the backward COMP node during which `fabricsim.train` makes it
  ready (the first node whose end reaches its share of the pass: gradients are ready at node boundaries);
  buckets of one communicator run one after another (one NCCL stream, control dependencies), overlapping the
  rest of the backward.
- optimizer (COMP): Adam over the rank's parameters (1 / group of them with ZeRO 1), `costs.optimizer_ps`; after
  the last pass, its send and every bucket. With ZeRO 1 the updated parameters are ALL_GATHERed after it
  (dp_param_all_gather, edp_param_all_gather: comm_size the stage's parameters × param_bytes).

Communicators (`comm_groups`): group k of a dimension is the k-th by its lowest rank; tp{k}, cp{k}, ep{k}, dp{k},
edp{k} as above, and pp{k} (the pipeline's ranks in stage order; no collective uses it, it names the pipelines).
Ranks of one stage run the same program (only communicator names and point-to-point peers differ), so a stage
is built once (one Python object per node of one pass, tiled over the passes with numpy), and each rank's columns
are made when they are asked for (`RankColumns`), so a 1,024-rank GPT-3 175B step writes in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..chakra.synth import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_TO_ALL,
    OPTIMIZER_BYTES_PER_PARAM,
    OPTIMIZER_FLOPS_PER_PARAM,
    REDUCE_SCATTER,
    _Graph,
)
from ..chakra.trace import COLL, COMP, RECV, SEND
from ..devices import device
from ..errors import UserError
from .costs import ACT_BYTES, PS, ChunkCost, buckets, chunk_cost, optimizer_ps
from .job import Parallel, TrainJob
from .models import ModelSpec, model, with_seq_len
from .schedule import schedule

US = PS // 10**6
_SLOT = {d: f"\0{d}" for d in ("tp", "cp", "ep", "dp", "edp")}
"""Communicator names filled in per rank."""


@dataclass
class _Row:
    node_type: int
    name: str
    pg: str | None = None
    comm_type: int = -1
    comm_size: int = 0
    flops: float = 0.0
    tensor_size: int = 0
    us: int = 0


@dataclass
class _Body:
    """One pass of one virtual stage: its nodes in order, the edges between them, the nodes that wait for the
    pass's start and the nodes that end it."""

    rows: list[_Row] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)
    tail: list[int] = field(default_factory=list)
    comp_end_share: dict[int, float] = field(default_factory=dict)
    """COMP row → the pass's compute share done when it ends."""

    def node(self, row: _Row, after: list[int] | None = None) -> int:
        deps = self.tail if after is None else after
        i = len(self.rows)
        self.rows.append(row)
        self.edges += [(j, i) for j in deps]
        if not deps:
            self.entries.append(i)
        return i

    def then(self, row: _Row) -> None:
        """`row` after the current tail, becoming the tail."""
        self.tail = [self.node(row)]


def _body(job: TrainJob, vs: int, cost: ChunkCost, backward: bool) -> _Body:
    m, par = job.model, job.par
    tp, cp, ep = par.tp, par.cp, par.ep
    sp = job.sequence_parallel and tp > 1
    T = job.micro_batch * job.seq_len / cp
    h, pb = m.hidden, job.param_bytes
    S = round(T * h * ACT_BYTES)
    A2A = round(cost.ep_buffer)
    KV = round(2 * job.micro_batch * job.seq_len * m.kv_heads * m.dh * ACT_BYTES / tp)
    act = round(T * h * ACT_BYTES)
    mul = 2 if backward else 1
    tp_red = (REDUCE_SCATTER, "tp_reduce_scatter") if sp else (ALL_REDUCE, "tp_all_reduce")
    first = vs * cost.layers
    last_layer = first + cost.layers - 1
    b = _Body()

    def coll(dim: str, name: str, ctype: int, size: int) -> _Row:
        return _Row(COLL, name, _SLOT[dim], ctype, size)

    def comp(name: str, flops: float, weights: float) -> _Row:
        return _Row(COMP, f"{name}_{'backward' if backward else 'forward'}", flops=mul * flops,
                    tensor_size=round(mul * weights * pb + act))

    def tp_gather() -> None:
        if sp:
            b.then(coll("tp", "tp_all_gather", ALL_GATHER, S))

    def tp_reduce() -> None:
        if tp > 1:
            b.then(coll("tp", tp_red[1], tp_red[0], S))

    def attention(gl: int) -> None:
        tp_gather()
        emb = m.vocab * h / tp if vs == 0 and gl == first else 0.0
        before = list(b.tail)
        a = b.node(comp("attention", T * m.attention_flops(job.seq_len) / tp, m.attention_params / tp + emb))
        ring = []
        if cp > 1:
            ring.append(b.node(coll("cp", "cp_all_gather", ALL_GATHER, KV), after=before))
            if backward:
                ring.append(b.node(coll("cp", "cp_reduce_scatter", REDUCE_SCATTER, KV), after=before))
        b.tail = [a] + ring
        tp_reduce()

    def mlp(gl: int) -> None:
        moe = m.moe and gl >= m.dense_layers
        if moe:
            flops = T * m.moe_mlp_flops / tp
            weights = (m.router_params + (m.shared_experts + m.experts // ep) * m.expert_params) / tp
        else:
            flops, weights = T * m.dense_mlp_flops / tp, m.dense_mlp_params / tp
        if cost.head and gl == last_layer:
            flops += T * m.head_flops / tp
            weights += m.vocab * h / tp
        a2a = moe and ep > 1
        tp_gather()
        if a2a:
            b.then(coll("ep", "ep_combine_grad_all_to_all" if backward else "ep_dispatch_all_to_all", ALL_TO_ALL, A2A))
        b.then(comp("experts" if moe else "mlp", flops, weights))
        if a2a:
            b.then(coll("ep", "ep_dispatch_grad_all_to_all" if backward else "ep_combine_all_to_all", ALL_TO_ALL, A2A))
        tp_reduce()

    for gl in (range(last_layer, first - 1, -1) if backward else range(first, last_layer + 1)):
        if backward:
            mlp(gl)
            attention(gl)
        else:
            attention(gl)
            mlp(gl)
    # Durations: the pass's time split by FLOPs, rounded cumulatively to whole microseconds.
    comps = [i for i, r in enumerate(b.rows) if r.node_type == COMP]
    flops = np.array([b.rows[i].flops for i in comps])
    total = cost.backward_ps if backward else cost.forward_ps
    cum = np.cumsum(flops) / flops.sum()
    us = np.diff(np.rint(np.concatenate([[0.0], cum * total / US])))
    for i, u, c in zip(comps, us.tolist(), cum.tolist()):
        b.rows[i].us = max(1, int(u))
        b.comp_end_share[i] = c
    return b


@dataclass
class _Stage:
    cols: dict[str, Any]
    p2p: np.ndarray
    """Positions of the send and receive nodes (their comm_src, comm_dst hold stages: made ranks per rank)."""


def _stage(job: TrainJob, s: int, costs: list[ChunkCost]) -> _Stage:
    """Stage s's program (every rank of the stage runs it), peers as stage numbers, communicators as slots."""
    par, V = job.par, job.chunks
    P = par.pp
    last_vs = P * V - 1
    order = schedule(job.schedule, P, job.micro_batches, V, s)
    K = len(order)
    bodies = {(ch, bwd): _body(job, ch * P + s, costs[ch * P + s], bwd) for ch in range(V) for bwd in (False, True)}
    spans = np.array([2 * len(bodies[(p.chunk, p.backward)].rows) + 4 for p in order], np.int64)
    base = np.concatenate([[0], np.cumsum(spans)[:-1]])
    p2p_size = round(job.micro_batch * job.seq_len / par.cp * job.model.hidden * ACT_BYTES / par.tp)
    g = _Graph()
    entries: list[list[int]] = [[] for _ in range(K)]
    exits: list[list[int]] = [[] for _ in range(K)]
    recv_of: list[int | None] = [None] * K
    send_of: list[int | None] = [None] * K
    placed: dict[tuple[int, bool], tuple[np.ndarray, list[np.ndarray]]] = {}
    chunk_of = np.array([p.chunk for p in order])
    bwd_of = np.array([p.backward for p in order])
    mb_of = np.array([p.micro_batch for p in order])
    for (ch, bwd), body in bodies.items():
        ks = np.flatnonzero((chunk_of == ch) & (bwd_of == bwd))
        if not len(ks):
            continue
        idx = [g.add(base[ks] + 2 + 2 * i, r.node_type, r.name, r.pg, duration_micros=r.us, comm_type=r.comm_type,
                     comm_size=r.comm_size, num_ops=round(r.flops), tensor_size=r.tensor_size)
               for i, r in enumerate(body.rows)]
        placed[(ch, bwd)] = (ks, idx)
        for i, j in body.edges:
            g.dep(idx[i], idx[j])
        kl = ks.tolist()
        for i in body.entries:
            for k, n in zip(kl, idx[i].tolist()):
                entries[k].append(n)
        for i in body.tail:
            for k, n in zip(kl, idx[i].tolist()):
                exits[k].append(n)
        vs = ch * P + s
        d = int(bwd)
        src_vs, dst_vs = (vs + 1, vs - 1) if bwd else (vs - 1, vs + 1)
        mbs = mb_of[ks]
        if 0 <= src_vs <= last_vs:
            rv = g.p2p(base[ks], RECV, "recv_gradient" if bwd else "recv_activation", src_vs % P, s,
                       2 * (mbs * V + src_vs // P) + d, p2p_size)
            for i in body.entries:
                g.dep(rv, idx[i])
            for k, n in zip(kl, rv.tolist()):
                recv_of[k] = n
        if 0 <= dst_vs <= last_vs:
            sd = g.p2p(base[ks] + 2 + 2 * len(body.rows), SEND, "send_gradient" if bwd else "send_activation", s,
                       dst_vs % P, 2 * (mbs * V + ch) + d, p2p_size)
            for i in body.tail:
                g.dep(idx[i], sd)
            for k, n in zip(kl, sd.tolist()):
                send_of[k] = n
    # One pass after the other: a pass waits for the previous pass and its send (Megatron's blocking p2p).
    src, dst = [], []
    for k in range(1, K):
        before = exits[k - 1] + ([send_of[k - 1]] if send_of[k - 1] is not None else [])
        for a in before:
            for e in entries[k]:
                src.append(a)
                dst.append(e)
    if src:
        g.dep(np.array(src), np.array(dst), ctrl=True)
    # Gradient buckets in each chunk's last backward, in the order the schedule reaches them.
    dense_group, expert_group = par.dp * par.ep * par.cp, par.dp * par.cp
    red, red_name = (REDUCE_SCATTER, "grad_reduce_scatter") if job.zero >= 1 else (ALL_REDUCE, "grad_all_reduce")
    last_bwd = sorted((max(k for k in range(K) if order[k].chunk == ch and order[k].backward), ch) for ch in range(V))
    chains: dict[str, list[np.ndarray]] = {"dp": [], "edp": []}
    for k, ch in last_bwd:
        cost = costs[ch * P + s]
        ks, idx = placed[(ch, True)]
        at = int(np.searchsorted(ks, k))
        body = bodies[(ch, True)]
        comp_rows = sorted(body.comp_end_share)
        share = np.array([body.comp_end_share[i] for i in comp_rows])
        for dim, params, group in (("dp", cost.params, dense_group), ("edp", cost.expert_params, expert_group)):
            nb = buckets(params, group, job.bucket_params)
            if nb == 0:
                continue
            cuts = (np.arange(nb) + 1) / nb
            rows = [comp_rows[min(int(np.searchsorted(share, c - 1e-12)), len(comp_rows) - 1)] for c in cuts.tolist()]
            producers = np.array([idx[i][at] for i in rows])
            keys = np.array([base[k] + 3 + 2 * i for i in rows])
            nodes = g.add(keys, COLL, f"{dim}_{red_name}", _SLOT[dim], comm_type=red,
                          comm_size=round(params / nb * job.grad_bytes))
            g.dep(producers, nodes)
            chains[dim].append(nodes)
    tails = exits[K - 1] + ([send_of[K - 1]] if send_of[K - 1] is not None else [])
    for parts in chains.values():
        if parts:
            ch_nodes = np.concatenate(parts)
            g.dep(ch_nodes[:-1], ch_nodes[1:], ctrl=True)
            tails.append(int(ch_nodes[-1]))
    end = int(base[-1] + spans[-1]) if K else 0
    dense_p = sum(costs[ch * P + s].params for ch in range(V))
    exp_p = sum(costs[ch * P + s].expert_params for ch in range(V))
    if job.zero >= 1:
        dense_p, exp_p = math.ceil(dense_p / dense_group), math.ceil(exp_p / expert_group)
    params = dense_p + exp_p
    opt = g.add(end, COMP, "optimizer", duration_micros=max(1, round(optimizer_ps(job, params) / US)),
                num_ops=OPTIMIZER_FLOPS_PER_PARAM * params, tensor_size=OPTIMIZER_BYTES_PER_PARAM * params)
    g.dep(np.array(tails), opt)
    if job.zero >= 1:
        for dim, group, total in (("dp", dense_group, sum(costs[ch * P + s].params for ch in range(V))),
                                  ("edp", expert_group, sum(costs[ch * P + s].expert_params for ch in range(V)))):
            if group > 1 and total > 0:
                g.dep(opt, g.add(end + 1, COLL, f"{dim}_param_all_gather", _SLOT[dim], comm_type=ALL_GATHER,
                                 comm_size=total * job.param_bytes))
    cols = g.columns()
    for v in cols.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    return _Stage(cols, np.flatnonzero(cols["comm_src"] >= 0))


def _group_index(par: Parallel, keep: str) -> np.ndarray:
    """Per rank, the index of its group of the dimension whose coordinates are zeroed in `keep`'s complement:
    `keep` lists the coordinates (of t, c, e, d, s) that vary inside a group; groups are numbered by lowest rank."""
    r = np.arange(par.world)
    co = {"t": r % par.tp, "c": r // par.tp % par.cp, "e": r // (par.tp * par.cp) % par.ep,
          "d": r // (par.tp * par.cp * par.ep) % par.dp, "s": r // (par.tp * par.cp * par.ep * par.dp)}
    z = {k: (0 if k in keep else v) for k, v in co.items()}
    low = z["t"] + par.tp * (z["c"] + par.cp * (z["e"] + par.ep * (z["d"] + par.dp * z["s"])))
    return np.unique(low, return_inverse=True)[1]


GROUPS = {"tp": "t", "cp": "c", "ep": "e", "dp": "ced", "edp": "cd", "pp": "s"}
"""Communicator → the rank coordinates that vary inside one of its groups."""


class RankColumns(Sequence):
    """The ranks' column dicts (as `_core.read_chakra` returns them, `chakra.synth.write` writes them), each made
    when asked for from its stage's program."""

    def __init__(self, par: Parallel, stages: list[_Stage], names: dict[str, np.ndarray]):
        self.par, self.stages, self.names = par, stages, names
        self.stride = par.world // par.pp

    def __len__(self) -> int:
        return self.par.world

    def __getitem__(self, r: int) -> dict[str, Any]:  # type: ignore[override]
        if not -len(self) <= r < len(self):
            raise IndexError(r)
        r %= len(self)
        s = r // self.stride
        st = self.stages[s]
        out = dict(st.cols)
        base = r - s * self.stride
        for col in ("comm_src", "comm_dst"):
            v = st.cols[col].copy()
            v[st.p2p] = v[st.p2p] * self.stride + base
            out[col] = v
        fill = {slot: f"{dim}{int(self.names[dim][r])}" for dim, slot in _SLOT.items()}
        out["names"] = [fill.get(x, x) for x in st.cols["names"]]
        return out

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[r] for r in range(len(self)))


@dataclass
class JobTrace:
    """A job's trace: `traces` (one column dict per rank, made on demand), `comm_groups` ({communicator: ranks}),
    the job, and the node count of each stage's ranks."""

    job: TrainJob
    traces: RankColumns
    comm_groups: dict[str, list[int]]
    stage_nodes: list[int]

    @property
    def nodes(self) -> int:
        return sum(self.stage_nodes) * (self.job.par.world // self.job.par.pp)


def make_job(model_name: str | ModelSpec, *, tp: int = 1, pp: int = 1, dp: int = 1, ep: int = 1, cp: int = 1,
             micro_batch: int = 1, global_batch: int | None = None, seq_len: int | None = None,
             schedule: str = "1f1b", vpp: int = 1, zero: int = 0, device_name: str = "h100",
             efficiency: float = 0.5, sequence_parallel: bool = True, bucket_params: int | None = None,
             ranks: int | None = None) -> TrainJob:
    """A checked `TrainJob` without a fabric (`fabricsim.train.plan`'s arguments; `ranks`, if given, must be
    tp × cp × ep × dp × pp). UserError naming the option on the first problem."""
    m = with_seq_len(model_name if isinstance(model_name, ModelSpec) else model(model_name), seq_len)
    par = Parallel(tp, pp, dp, ep, cp, vpp)
    if ranks is not None and par.world != ranks:
        raise UserError(f"--tp × --pp × --dp × --ep × --cp = {tp} × {pp} × {dp} × {ep} × {cp} = {par.world}, "
                        f"but --ranks is {ranks}")
    if zero not in (0, 1):
        raise UserError(f"--zero: a trace is written for ZeRO 0 or 1, got {zero}")
    try:
        dev = device(device_name)
    except ValueError as e:
        raise UserError(f"--device: {e}") from None
    gb = global_batch if global_batch is not None else micro_batch * dp * ep * pp
    job = TrainJob(m, par, micro_batch, gb, dev, efficiency, schedule, zero, sequence_parallel,
                   bucket_params=bucket_params)
    job.check(par.world)
    return job


def synthesize(job: TrainJob) -> JobTrace:
    """The job's step as one Chakra trace per rank and its communicators (see the module docstring);
    `chakra.synth.write(prefix, t.traces, t.comm_groups)` writes it."""
    if job.zero not in (0, 1):
        raise UserError(f"--zero: a trace is written for ZeRO 0 or 1, got {job.zero}")
    par = job.par
    costs = [chunk_cost(job, vs) for vs in range(par.pp * job.chunks)]
    stages = [_stage(job, s, costs) for s in range(par.pp)]
    names = {dim: _group_index(par, GROUPS[dim]) for dim in _SLOT}
    sizes = {"tp": par.tp, "cp": par.cp, "ep": par.ep, "dp": par.dp * par.ep * par.cp,
             "edp": par.dp * par.cp if job.model.moe else 1, "pp": par.pp}
    groups: dict[str, list[int]] = {}
    for dim, keep in GROUPS.items():
        if sizes[dim] < 2:
            continue
        idx = names[dim] if dim in names else _group_index(par, keep)
        order = np.argsort(idx, kind="stable")
        for k, members in enumerate(np.split(order, np.cumsum(np.bincount(idx))[:-1])):
            groups[f"{dim}{k}"] = members.tolist()
    return JobTrace(job, RankColumns(par, stages, names), groups, [len(st.cols["id"]) for st in stages])
