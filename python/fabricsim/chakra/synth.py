"""Synthetic Chakra traces of one training step (DP, TP, 1F1B PP, EP, DP×TP) as numpy columns, written by the engine.

Every generator returns one column dict per rank, shaped exactly as `fabricsim._core.read_chakra` returns it
(so `write` followed by `read_chakra` gives the same columns), and the generators with named communicators
also return `comm_groups` ({pg_name: [ranks]}, what `lower(..., comm_groups=...)` takes). Columns are built
with numpy, never one Python object per node: a million-node trace takes about a second.

Model arithmetic (a GPT-style transformer layer, biases and layer norms neglected; h hidden size, s sequence
length, b micro-batch size, d bytes per element):
- parameters per layer P = 12·h²: attention Q, K, V and output projections 4·h², MLP h→4h→h 8·h²;
- gradient bytes per layer = P·d; activation bytes at a layer boundary (one micro-batch) A = b·s·h·d;
- forward FLOPs per layer = 24·b·s·h² (2 FLOPs per multiply-add on the 12·h² weights, b·s tokens) plus the
  attention scores and their weighted sum 4·b·s²·h; backward FLOPs = 2 × forward;
- bytes a compute node touches (its `tensor_size`): forward, the weights read plus its input and output
  activations (P·d + 2·A); backward, the weights read and the weight gradients written plus the activation
  gradients in and out (2·P·d + 2·A); the optimizer, `OPTIMIZER_BYTES_PER_PARAM` per parameter with
  `OPTIMIZER_FLOPS_PER_PARAM` FLOPs per parameter.
- durations (`duration_micros`, whole µs, at least 1): by default a roofline at `efficiency` of the device's
  peak, max(FLOPs / (peak_flops·efficiency), bytes / (mem_bw·efficiency)); with `Model.forward_us` given,
  every compute node takes forward_us × its FLOPs / one layer's forward FLOPs (so a layer's forward takes
  forward_us and its backward 2·forward_us), and `Model.optimizer_us`, if given, is the optimizer node's
  duration. `num_ops` (FLOPs) and `tensor_size` (bytes) are stored as well.
Shards divide work: with tensor parallelism t a rank computes 1/t of each layer's FLOPs and holds 1/t of its
parameters. Node ids are the nodes' positions in the file, which is a valid execution order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .lower import DEVICES, Device
from .trace import COLL, COMP, RECV, SEND, read_comm_groups  # noqa: F401 (read_comm_groups: its home was here)

ALL_REDUCE, ALL_GATHER, ALL_TO_ALL, REDUCE_SCATTER = 0, 2, 6, 7
COLLECTIVES = {"all_reduce": ALL_REDUCE, "all_gather": ALL_GATHER, "reduce_scatter": REDUCE_SCATTER}
"""Tensor-parallel collective choices (name → Chakra comm_type)."""
VERSION = "0.0.4"  # the Chakra schema version ASTRA-sim's example traces carry
NO_NAME = np.iinfo(np.uint32).max
OPTIMIZER_FLOPS_PER_PARAM = 12
"""Adam with decoupled weight decay: about a dozen FLOPs per parameter (two moments, bias correction, update)."""
OPTIMIZER_BYTES_PER_PARAM = 28
"""Mixed-precision Adam: reads the 2-byte gradient and the fp32 master weight and two moments (12 bytes), writes
those three back (12 bytes) and the 2-byte working weight: 28 bytes per parameter."""
TAG_FORWARD, TAG_BACKWARD = 0, 1
"""Pipeline messages: comm_tag = 2·micro_batch + direction (0 activations forward, 1 gradients backward)."""


@dataclass(frozen=True)
class Model:
    """A stack of identical transformer layers and the device that runs them.

    layers: transformer layers; hidden: hidden size h (elements); seq_len: sequence length s (tokens);
    micro_batch: sequences per micro-batch b; dtype_bytes: bytes per element d (2 for BF16);
    device: a name in `fabricsim.chakra.lower.DEVICES` or a `Device`; efficiency: the fraction of the device's
    peak FLOP/s and memory bandwidth achieved; forward_us: if given, one layer's forward time (µs) for one
    micro-batch on one device, which calibrates every compute node (see the module docstring); optimizer_us:
    if given, the optimizer node's duration (µs)."""

    layers: int
    hidden: int
    seq_len: int
    micro_batch: int = 1
    dtype_bytes: int = 2
    device: str | Device = "h100"
    efficiency: float = 0.5
    forward_us: float | None = None
    optimizer_us: int | None = None

    def __post_init__(self):
        for key in ("layers", "hidden", "seq_len", "micro_batch", "dtype_bytes"):
            if int(getattr(self, key)) < 1:
                raise ValueError(f"Model.{key} must be >= 1, got {getattr(self, key)}")
        if not 0 < self.efficiency <= 1:
            raise ValueError(f"Model.efficiency must be in (0, 1], got {self.efficiency}")
        if isinstance(self.device, str) and self.device not in DEVICES:
            raise ValueError(f"unknown device '{self.device}' (known: {', '.join(DEVICES)})")

    @property
    def dev(self) -> Device:
        return DEVICES[self.device] if isinstance(self.device, str) else self.device

    @property
    def params_per_layer(self) -> int:
        """12·h² parameters (4·h² attention, 8·h² MLP)."""
        return 12 * self.hidden ** 2

    @property
    def grad_bytes_per_layer(self) -> int:
        """12·h²·d bytes of weight gradients per layer."""
        return self.params_per_layer * self.dtype_bytes

    @property
    def activation_bytes(self) -> int:
        """b·s·h·d bytes: one micro-batch's activations at a layer boundary."""
        return self.micro_batch * self.seq_len * self.hidden * self.dtype_bytes

    @property
    def tokens(self) -> int:
        """b·s tokens per micro-batch."""
        return self.micro_batch * self.seq_len

    @property
    def attention_flops(self) -> int:
        """Forward FLOPs of attention: projections 8·b·s·h² plus the scores and their weighted sum 4·b·s²·h."""
        b, s, h = self.micro_batch, self.seq_len, self.hidden
        return 8 * b * s * h * h + 4 * b * s * s * h

    @property
    def mlp_flops(self) -> int:
        """Forward FLOPs of the MLP block: 16·b·s·h²."""
        return 16 * self.tokens * self.hidden ** 2

    @property
    def forward_flops(self) -> int:
        """Forward FLOPs per layer and micro-batch: 24·b·s·h² + 4·b·s²·h."""
        return self.attention_flops + self.mlp_flops

    @property
    def backward_flops(self) -> int:
        """Backward FLOPs per layer and micro-batch: 2 × forward (activation and weight gradients)."""
        return 2 * self.forward_flops

    def duration_us(self, flops, nbytes) -> np.ndarray:
        """Compute-node durations (µs, uint64, at least 1) of nodes doing `flops` FLOPs over `nbytes` bytes."""
        flops = np.asarray(flops, dtype=np.float64)
        us = self.forward_us * flops / self.forward_flops if self.forward_us is not None else self._roofline_us(flops, nbytes)
        return np.maximum(np.rint(us), 1).astype(np.uint64)

    def _roofline_us(self, flops, nbytes):
        d, e = self.dev, self.efficiency
        return np.maximum(flops / (d.peak_flops * e), np.asarray(nbytes, np.float64) / (d.mem_bw * e)) * 1e6

    def optimizer(self, params: int) -> tuple[int, int, int]:
        """(duration µs, FLOPs, bytes) of the optimizer step over `params` parameters."""
        flops, nbytes = OPTIMIZER_FLOPS_PER_PARAM * params, OPTIMIZER_BYTES_PER_PARAM * params
        us = self.optimizer_us if self.optimizer_us is not None else round(float(self._roofline_us(flops, nbytes)))
        return max(1, int(us)), flops, nbytes


class _Graph:
    """One rank's nodes, appended in blocks of numpy columns with a sort key each (the file order), and its
    dependency edges between the blocks' provisional indices; `columns` sorts, numbers and packs the CSR."""

    ATTRS = {"duration_micros": (np.uint64, 0), "comm_type": (np.int32, -1), "comm_size": (np.uint64, 0),
             "comm_src": (np.int64, -1), "comm_dst": (np.int64, -1), "comm_tag": (np.int64, -1),
             "num_ops": (np.uint64, 0), "tensor_size": (np.uint64, 0)}

    def __init__(self):
        self.n = 0
        self.names: list[str] = []
        self.name_index: dict[str, int] = {}
        self.blocks: list[dict[str, np.ndarray]] = []
        self.edges: dict[str, tuple[list, list]] = {"data": ([], []), "ctrl": ([], [])}

    def _name(self, s: str) -> int:
        if s not in self.name_index:
            self.name_index[s] = len(self.names)
            self.names.append(s)
        return self.name_index[s]

    def add(self, key, node_type: int, name: str, pg: str | None = None, **attrs) -> np.ndarray:
        """Nodes with sort keys `key` (one per node); attributes broadcast. Returns their provisional indices."""
        key = np.atleast_1d(np.asarray(key, dtype=np.int64))
        k = len(key)
        block = {"key": key, "node_type": np.full(k, node_type, np.uint8),
                 "name": np.full(k, self._name(name), np.uint32),
                 "pg_name": np.full(k, NO_NAME if pg is None else self._name(pg), np.uint32)}
        for col, (dt, default) in self.ATTRS.items():
            block[col] = np.broadcast_to(np.asarray(attrs.pop(col, default)).astype(dt), (k,))
        if attrs:
            raise TypeError(f"unknown node attributes {sorted(attrs)}")
        self.blocks.append(block)
        self.n += k
        return np.arange(self.n - k, self.n, dtype=np.int64)

    def comp(self, key, name: str, model: Model, flops, nbytes) -> np.ndarray:
        """COMP nodes doing `flops` FLOPs over `nbytes` bytes (broadcast), timed by `model`."""
        return self.add(key, COMP, name, duration_micros=model.duration_us(flops, nbytes), num_ops=flops,
                        tensor_size=nbytes)

    def optimizer(self, key: int, model: Model, params: int) -> np.ndarray:
        """The optimizer's COMP node over `params` parameters."""
        us, ops, nbytes = model.optimizer(params)
        return self.add(key, COMP, "optimizer", duration_micros=us, num_ops=ops, tensor_size=nbytes)

    def p2p(self, key, node_type: int, name: str, src: int, dst: int, tag, size: int) -> np.ndarray:
        """COMM_SEND or COMM_RECV nodes of `size` bytes from rank `src` to rank `dst`, one per tag."""
        return self.add(key, node_type, name, comm_src=src, comm_dst=dst, comm_tag=tag, comm_size=size)

    def dep(self, src, dst, ctrl: bool = False) -> None:
        """Nodes `dst` wait for nodes `src` (broadcast)."""
        s, d = np.broadcast_arrays(np.asarray(src, np.int64), np.asarray(dst, np.int64))
        e = self.edges["ctrl" if ctrl else "data"]
        e[0].append(s.ravel())
        e[1].append(d.ravel())

    def columns(self) -> dict[str, Any]:
        n = self.n
        cat = {c: np.concatenate([b[c] for b in self.blocks]) for c in self.blocks[0]}
        order = np.argsort(cat.pop("key"), kind="stable")
        pos = np.empty(n, np.int64)
        pos[order] = np.arange(n)
        out: dict[str, Any] = {"version": VERSION, "meta_extra": b"", "id": np.arange(n, dtype=np.uint64)}
        for c, v in cat.items():
            out[c] = np.ascontiguousarray(v[order])
        # names in order of first appearance (node name, then pg_name, node by node), as the reader interns them
        seq = np.stack([out["name"], out["pg_name"]], axis=1).ravel()
        seq = seq[seq != NO_NAME]
        used, first = np.unique(seq, return_index=True)
        used = used[np.argsort(first)]
        remap = np.full(len(self.names), NO_NAME, np.uint32)
        remap[used] = np.arange(len(used), dtype=np.uint32)
        out["names"] = [self.names[i] for i in used.tolist()]
        out["name"] = remap[out["name"]]
        pg = out["pg_name"]
        out["pg_name"] = np.where(pg == NO_NAME, NO_NAME, remap[np.minimum(pg, len(remap) - 1)]).astype(np.uint32)
        out["is_cpu_op"] = np.zeros(n, np.uint8)
        for kind in ("data", "ctrl"):
            srcs, dsts = self.edges[kind]
            s = pos[np.concatenate(srcs)] if srcs else np.zeros(0, np.int64)
            d = pos[np.concatenate(dsts)] if dsts else np.zeros(0, np.int64)
            o = np.lexsort((s, d))
            out[f"{kind}_deps"] = s[o].astype(np.uint64)
            out[f"{kind}_dep_start"] = np.concatenate([[0], np.cumsum(np.bincount(d, minlength=n))]).astype(np.uint32)
        out["extra_start"] = np.zeros(n + 1, np.uint64)
        out["extra"] = np.zeros(0, np.uint8)
        return out


def _check(**kw) -> None:
    for key, v in kw.items():
        if int(v) < 1:
            raise ValueError(f"{key} must be >= 1, got {v}")


def _coll_type(collective: str) -> int:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective '{collective}' (known: {', '.join(COLLECTIVES)})")
    return COLLECTIVES[collective]


_TP_SLOT, _DP_SLOT = "\0tp", "\0dp"  # communicator names filled in per rank


def _dense(model: Model, tp: int, dp: int, bucket_layers: int, collective: str, optimizer: bool,
           tp_pg: str | None, dp_pg: str | None) -> dict[str, Any]:
    """One rank of a DP×TP step (every rank runs the same program): forward per layer COMP → TP collective,
    backward in reverse order the same, a DP gradient all-reduce per bucket after its last-computed layer's
    backward (chained in bucket order: one stream per communicator), and the optimizer."""
    L, A, d = model.layers, model.activation_bytes, model.dtype_bytes
    P = model.params_per_layer // tp
    g = _Graph()
    lay = np.arange(L)
    q = L - 1 - lay  # backward position of layer l
    wf = model.forward_flops // tp
    f = g.comp(10 * lay, "forward", model, wf, P * d + 2 * A)
    b = g.comp(10 * L + 10 * q, "backward", model, 2 * wf, 2 * P * d + 2 * A)
    f_out, b_out = f, b
    if tp > 1:
        ct = _coll_type(collective)
        fc = g.add(10 * lay + 1, COLL, f"tp_{collective}", tp_pg, comm_type=ct, comm_size=A)
        bc = g.add(10 * L + 10 * q + 1, COLL, f"tp_{collective}", tp_pg, comm_type=ct, comm_size=A)
        g.dep(f, fc)
        g.dep(b, bc)
        f_out, b_out = fc, bc
    g.dep(f_out[:-1], f[1:])  # layer l+1's forward reads layer l's output
    g.dep(f_out[-1], b[-1])  # the loss: the last layer's backward starts from the last forward output
    g.dep(b_out[1:], b[:-1])  # layer l's backward reads layer l+1's input gradient
    last = [b_out[0]]
    if dp > 1:
        nb = -(-L // bucket_layers)
        k = np.arange(nb)
        q_last = np.minimum((k + 1) * bucket_layers, L) - 1  # backward position of the bucket's last-computed layer
        layers_in = np.minimum((k + 1) * bucket_layers, L) - k * bucket_layers
        ar = g.add(10 * L + 10 * q_last + 2, COLL, "grad_all_reduce", dp_pg, comm_type=ALL_REDUCE,
                   comm_size=layers_in * P * d)
        g.dep(b[L - 1 - q_last], ar)
        g.dep(ar[:-1], ar[1:], ctrl=True)
        last.append(ar)
    if optimizer:
        o = g.optimizer(20 * L + 5, model, L * P)
        for x in last:
            g.dep(x, o)
    return g.columns()


def _per_rank(template: dict[str, Any], n: int, tp_names: Sequence[str | None],
              dp_names: Sequence[str | None]) -> list[dict[str, Any]]:
    """One dict per rank sharing the template's arrays (marked read-only); only `names` differs."""
    for v in template.values():
        if isinstance(v, np.ndarray):
            v.flags.writeable = False
    out = []
    for r in range(n):
        fill = {_TP_SLOT: tp_names[r], _DP_SLOT: dp_names[r]}
        t = dict(template)
        t["names"] = [fill.get(s, s) for s in template["names"]]
        out.append(t)
    return out


def data_parallel(model: Model, ranks: int, bucket_layers: int = 1, *,
                  optimizer: bool = True) -> list[dict[str, Any]]:
    """Data parallelism over `ranks` replicas, one micro-batch each. Per rank: forward COMP per layer (chained),
    backward COMP per layer in reverse order (chained), per bucket of `bucket_layers` layers (buckets fill in
    backward order, from the last layer) an ALL_REDUCE of the bucket's gradient bytes (bucket layers × 12·h²·d)
    over all ranks (pg_name absent) that depends on the backward of the bucket's last-computed layer, so it
    overlaps the remaining backward; all-reduces run in bucket order (a control dependency on the previous
    one); then the optimizer, after the last backward and every all-reduce."""
    _check(ranks=ranks, bucket_layers=bucket_layers)
    t = _dense(model, 1, ranks, bucket_layers, "all_reduce", optimizer, None, None)
    return _per_rank(t, ranks, [None] * ranks, [None] * ranks)


def tensor_parallel(model: Model, ranks: int, *, collective: str = "all_reduce",
                    optimizer: bool = True) -> list[dict[str, Any]]:
    """Tensor parallelism over `ranks` (each computes 1/ranks of every layer): per layer, forward and then
    backward in reverse order, a COMP then a collective of the activation bytes b·s·h·d over all ranks
    (`collective`: "all_reduce", or "all_gather" / "reduce_scatter" with comm_size the full activation), all
    chained; then the optimizer over the rank's 1/ranks of the parameters. (Megatron-LM issues two such
    collectives per layer and direction, attention and MLP; this trace folds them into one of the same size.)"""
    _check(ranks=ranks)
    _coll_type(collective)
    t = _dense(model, ranks, 1, 1, collective, optimizer, None, None)
    return _per_rank(t, ranks, [None] * ranks, [None] * ranks)


def data_tensor_parallel(model: Model, dp: int, tp: int, bucket_layers: int = 1, *, collective: str = "all_reduce",
                         optimizer: bool = True) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """DP×TP over dp·tp ranks laid out tp-major: rank r = i·tp + k is member k of tensor-parallel group
    "tp{i}" (ranks i·tp .. i·tp+tp−1) and member i of data-parallel group "dp{k}" (ranks k, k+tp, ...).
    Each rank runs `tensor_parallel`'s program within its TP group (pg_name "tp{i}") plus `data_parallel`'s
    gradient all-reduces of its 1/tp parameter shard within its DP group (pg_name "dp{k}").
    Returns (traces, comm_groups)."""
    _check(dp=dp, tp=tp, bucket_layers=bucket_layers)
    _coll_type(collective)
    n = dp * tp
    groups = {f"tp{i}": [i * tp + k for k in range(tp)] for i in range(dp)}
    groups.update({f"dp{k}": [i * tp + k for i in range(dp)] for k in range(tp)})
    t = _dense(model, tp, dp, bucket_layers, collective, optimizer, _TP_SLOT if tp > 1 else None,
               _DP_SLOT if dp > 1 else None)
    return _per_rank(t, n, [f"tp{r // tp}" for r in range(n)], [f"dp{r % tp}" for r in range(n)]), groups


def one_f_one_b(stages: int, micro_batches: int, stage: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of stage `stage`'s forwards and backwards (indexed by micro-batch) in its 1F1B order: w =
    min(stages − stage − 1, m) warm-up forwards, then forward w+i and backward i alternately, then the last w
    backwards. Forward j is at j (j < w) or w + 2(j − w); backward i at w + 2i + 1 (i < m − w) or m + i."""
    m = micro_batches
    w = min(stages - stage - 1, m)
    j = np.arange(m)
    fwd = np.where(j < w, j, w + 2 * (j - w))
    bwd = np.where(j < m - w, w + 2 * j + 1, m + j)
    return fwd, bwd


def pipeline_parallel(model: Model, stages: int, micro_batches: int, *,
                      optimizer: bool = True) -> list[dict[str, Any]]:
    """Pipeline parallelism, one stage per rank, 1F1B schedule (`one_f_one_b`). Layers split evenly (the first
    layers % stages stages take one more). Per stage and micro-batch one forward COMP and one backward COMP of
    its layers (FLOPs summed), ordered by the schedule (control dependencies); micro-batch j's activations
    (b·s·h·d bytes) go from stage s to s+1 as COMM_SEND/COMM_RECV with tag 2j, its gradients from s+1 back to s
    with tag 2j+1. A forward waits for its activation receive, a backward for its own forward and its gradient
    receive; a send waits for the compute that produced it; each stage's receives are chained in the order its
    schedule consumes them. The optimizer follows the last backward."""
    _check(stages=stages, micro_batches=micro_batches)
    if model.layers < stages:
        raise ValueError(f"{model.layers} layers cannot fill {stages} stages")
    L, p, m, A, d = model.layers, stages, micro_batches, model.activation_bytes, model.dtype_bytes
    out = []
    for s in range(p):
        k = L // p + (s < L % p)
        P = k * model.params_per_layer
        g = _Graph()
        fpos, bpos = one_f_one_b(p, m, s)
        wf, wb = k * model.forward_flops, k * model.backward_flops
        f = g.comp(4 * fpos + 1, "forward", model, wf, P * d + 2 * A)
        b = g.comp(4 * bpos + 1, "backward", model, wb, 2 * P * d + 2 * A)
        comp = np.empty(2 * m, np.int64)
        comp[fpos], comp[bpos] = f, b
        g.dep(comp[:-1], comp[1:], ctrl=True)
        g.dep(f, b)
        j = np.arange(m)
        recv_nodes, recv_pos = [], []
        if s > 0:
            ra = g.p2p(4 * fpos, RECV, "recv_activation", s - 1, s, 2 * j + TAG_FORWARD, A)
            g.dep(ra, f)
            g.dep(b, g.p2p(4 * bpos + 2, SEND, "send_gradient", s, s - 1, 2 * j + TAG_BACKWARD, A))
            recv_nodes.append(ra)
            recv_pos.append(fpos)
        if s < p - 1:
            g.dep(f, g.p2p(4 * fpos + 2, SEND, "send_activation", s, s + 1, 2 * j + TAG_FORWARD, A))
            rg = g.p2p(4 * bpos, RECV, "recv_gradient", s + 1, s, 2 * j + TAG_BACKWARD, A)
            g.dep(rg, b)
            recv_nodes.append(rg)
            recv_pos.append(bpos)
        if recv_nodes:
            rn, rp = np.concatenate(recv_nodes), np.concatenate(recv_pos)
            rn = rn[np.argsort(rp, kind="stable")]
            g.dep(rn[:-1], rn[1:], ctrl=True)
        if optimizer:
            g.dep(comp[-1], g.optimizer(8 * m + 8, model, P))
        out.append(g.columns())
    return out


def expert_parallel(model: Model, ranks: int, experts_per_rank: int = 1, *, top_k: int = 1,
                    optimizer: bool = True) -> list[dict[str, Any]]:
    """Expert parallelism: every layer is a mixture-of-experts layer with ranks·experts_per_rank experts, each
    rank holding `experts_per_rank` of them and its own micro-batch. Per layer forward: the attention COMP
    (attention FLOPs), an ALL_TO_ALL dispatch of the routed tokens, one COMP per local expert (the MLP FLOPs
    16·b·s·h²·top_k split evenly over the local experts: routing is taken as balanced), an ALL_TO_ALL
    combine; backward in reverse layer order mirrors it (combine gradients, expert backwards, dispatch
    gradients, attention backward), with 2 × the FLOPs. Each all-to-all's comm_size is the routed tokens'
    bytes per rank, b·s·top_k·h·d, of which the lowering sends 1/ranks to every rank. The optimizer covers the
    rank's attention weights and local experts (4·h² + experts_per_rank·8·h² per layer)."""
    _check(ranks=ranks, experts_per_rank=experts_per_rank, top_k=top_k)
    L, h, d, E = model.layers, model.hidden, model.dtype_bytes, experts_per_rank
    A = model.activation_bytes
    S = model.tokens * top_k * h * d
    Pa, Pe = 4 * h * h, 8 * h * h
    span = E + 3  # nodes per layer and direction
    g = _Graph()
    lay = np.arange(L)
    fb = span * lay  # forward keys of layer l
    bb = span * L + span * (L - 1 - lay)  # backward keys of layer l
    af, ef = model.attention_flops, model.mlp_flops * top_k // E
    te = model.tokens * top_k // E * h * d  # bytes in and out of one expert
    attn_f = g.comp(fb, "attention_forward", model, af, Pa * d + 2 * A)
    disp_f = g.add(fb + 1, COLL, "dispatch_all_to_all", comm_type=ALL_TO_ALL, comm_size=S)
    exp_f = g.comp((fb[:, None] + 2 + np.arange(E)).ravel(), "expert_forward", model, ef, Pe * d + 2 * te).reshape(L, E)
    comb_f = g.add(fb + 2 + E, COLL, "combine_all_to_all", comm_type=ALL_TO_ALL, comm_size=S)
    comb_b = g.add(bb, COLL, "combine_grad_all_to_all", comm_type=ALL_TO_ALL, comm_size=S)
    exp_b = g.comp((bb[:, None] + 1 + np.arange(E)).ravel(), "expert_backward", model, 2 * ef,
                   2 * Pe * d + 2 * te).reshape(L, E)
    disp_b = g.add(bb + 1 + E, COLL, "dispatch_grad_all_to_all", comm_type=ALL_TO_ALL, comm_size=S)
    attn_b = g.comp(bb + 2 + E, "attention_backward", model, 2 * af, 2 * Pa * d + 2 * A)
    g.dep(comb_f[:-1], attn_f[1:])
    g.dep(attn_f, disp_f)
    g.dep(disp_f[:, None], exp_f)
    g.dep(exp_f, comb_f[:, None])
    g.dep(comb_f[-1], comb_b[-1])
    g.dep(attn_b[1:], comb_b[:-1])
    g.dep(comb_b[:, None], exp_b)
    g.dep(exp_b, disp_b[:, None])
    g.dep(disp_b, attn_b)
    if optimizer:
        g.dep(attn_b[0], g.optimizer(2 * span * L + 1, model, L * (Pa + E * Pe)))
    t = g.columns()
    return _per_rank(t, ranks, [None] * ranks, [None] * ranks)


def write(prefix: str | Path, traces: list[dict[str, Any]], comm_groups: dict[str, list[int]] | None = None) -> Path:
    """Write rank r's columns to PREFIX.{r}.et (PREFIX.{r}.et.gz if `prefix` ends with ".gz", the suffix moved
    to the end) and `comm_groups`, if given, to PREFIX.comm_groups.json; creates the folder. Returns PREFIX."""
    from .. import _core

    p = Path(prefix)
    gz = p.name.endswith(".gz")
    if gz:
        p = p.with_name(p.name[:-3])
    p.parent.mkdir(parents=True, exist_ok=True)
    for r, cols in enumerate(traces):
        _core.write_chakra(f"{p}.{r}.et" + (".gz" if gz else ""), cols)
    if comm_groups is not None:
        Path(f"{p}.comm_groups.json").write_text(json.dumps(comm_groups, indent=1) + "\n")
    return p
