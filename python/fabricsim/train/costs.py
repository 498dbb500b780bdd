"""What one pass of one model chunk costs on one GPU: compute (a roofline) and the bytes of each parallel dimension.

Compute: a pass of L layers over one micro-batch of T = b·s tokens takes, per GPU,
max(FLOPs / (peak · efficiency), bytes / (memory bandwidth · efficiency)), FLOPs as `models` counts them divided
by tp (every matrix is split tp ways) and by cp (each GPU holds s / cp tokens; its attention still spans all s
keys), backward twice the forward. Bytes: the GPU's share of the chunk's weights (read once forward; read and their
gradients written backward) and its activations in and out.

Collectives in closed form (a dimension whose group stays inside one server's NVLink domain: NVLink is a
non-blocking switch, so these never meet the fabric's other traffic) take the time NCCL's own model gives for the
algorithm and protocol it would pick (`fabricsim.nccl`: ring, tree or NVLS where the fabric says its NVSwitch
reduces, each with LL, LL128 or Simple; latency + bytes / bandwidth, NCCL's constants from tuning.cc) on a node of
the group's n GPUs. Collectives that cross the fabric are flows (see `lower`), each starting after NCCL's ring
latency with the Simple protocol: 8.4 µs + 3.4 µs per step inside a server + 14 µs per step between servers
(`latency_ps`); a ring all-reduce takes 2·(n − 1) steps, all-gather and reduce-scatter n − 1. A rank's ring bytes
for an S-byte buffer are 2·(n − 1)/n · S for an all-reduce, (n − 1)/n · S for the others (`ring_bytes`).

Per layer and direction (forward, or backward), with S = (T / cp) · h · 2 bytes of activations:
- TP: two all-reduces of S (attention and MLP outputs), or with sequence parallelism two all-gathers and two
  reduce-scatters of S: both move 4·(tp − 1)/tp · S per rank;
- EP: an MoE layer's dispatch and combine all-to-alls, each of (T / (cp · tp)) · top_k · h · 2 bytes per rank;
- CP: ring attention passes keys and values around the cp ranks: (cp − 1) · 2 · (T / cp) · kv_heads · dh · 2 / tp
  bytes forward, twice that backward (the key and value gradients travel back), overlapped with attention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..nccl import constants as K
from ..nccl.fabric import NcclFabric
from ..nccl.model import bandwidths, fastest
from .job import TrainJob

PS = 10**12
RING_BASE_PS = round(K.BASE_LATENCY_US["ring"][2] * 1e6)
"""NCCL's base latency of a ring collective with the Simple protocol (8.4 µs)."""
STEP_NVLINK_PS = round(K.HW_LATENCY_US["nvlink"]["ring"][2] * 1e6)
"""NCCL's latency per ring step over NVLink, Simple protocol (3.4 µs)."""
STEP_NET_PS = round(K.HW_LATENCY_US["net"]["ring"][2] * 1e6)
"""NCCL's latency per ring step through the network, Simple protocol (14 µs)."""
ACT_BYTES = 2
"""BF16 activations."""
NCCL_NAME = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
             "all_to_all": "alltoall"}


def ring_steps(kind: str, n: int) -> int:
    return 2 * (n - 1) if kind == "all_reduce" else n - 1


def ring_bytes(kind: str, n: int, size: float) -> float:
    """Bytes one rank sends around the ring for an `size`-byte buffer."""
    return (2 if kind == "all_reduce" else 1) * (n - 1) / n * size


def latency_ps(kind: str, n: int, nodes: int = 1) -> int:
    """NCCL's ring latency (Simple protocol) for `n` ranks over `nodes` servers (see the module docstring)."""
    if n <= 1:
        return 0
    steps = ring_steps(kind, n)
    inter = (2 if kind == "all_reduce" else 1) * (nodes - 1) if nodes > 1 else 0
    return RING_BASE_PS + (steps - inter) * STEP_NVLINK_PS + inter * STEP_NET_PS


def closed_form_ps(kind: str, n: int, size: float, node: NcclFabric | None) -> int:
    """A collective of n ranks inside one NVLink domain (`node`: the server as NCCL sees it): the time of NCCL's
    fastest algorithm and protocol for an `size`-byte buffer on n of its GPUs."""
    if n <= 1 or size <= 0 or node is None:
        return 0
    f = replace(node, nodes=1, gpus=n, rails=n)
    t_us, _, _ = fastest(f, bandwidths(f), NCCL_NAME[kind], max(1, round(size)))
    return round(t_us * 1e6)


@dataclass(frozen=True)
class ChunkCost:
    """One pass (one micro-batch) of virtual stage `vs` on one GPU."""

    layers: int
    moe_layers: int
    head: bool
    forward_ps: int
    backward_ps: int
    tp_bytes: float
    """Per direction, the whole chunk: ring bytes a TP rank sends."""
    tp_ops: int
    """TP collectives per direction (for latency)."""
    ep_buffer: float
    """One all-to-all's buffer per rank (bytes); 2 per MoE layer and direction."""
    cp_bytes_fwd: float
    """Per rank, the whole chunk, forward (backward twice)."""
    attention_share: float
    """The attention's share of the forward compute (ring attention overlaps CP with it)."""
    params: int
    """This GPU's parameters of the chunk: dense (attention, dense MLPs, router, embeddings) ..."""
    expert_params: int
    """... and experts."""


def chunk_cost(job: TrainJob, vs: int) -> ChunkCost:
    """The cost of virtual stage `vs` (layers [vs·L/(p·V), (vs+1)·L/(p·V)))."""
    m, par = job.model, job.par
    per = m.layers // (par.pp * job.chunks)
    first, last = vs * per, (vs + 1) * per
    moe = max(0, last - max(first, m.dense_layers)) if m.moe else 0
    dense = per - moe
    head = vs == par.pp * job.chunks - 1
    tokens = job.micro_batch * job.seq_len / par.cp
    tp = par.tp
    attn = tokens * m.attention_flops(job.seq_len) / tp
    flops = per * attn + dense * tokens * m.dense_mlp_flops / tp + moe * tokens * m.moe_mlp_flops / tp
    if head:
        flops += tokens * m.head_flops / tp
    experts_local = m.experts // par.ep if m.moe else 0
    dense_params = (per * m.attention_params + dense * m.dense_mlp_params
                    + moe * (m.router_params + m.shared_experts * m.expert_params)) // tp
    if head:
        dense_params += m.vocab * m.hidden // tp
    if vs == 0:
        dense_params += m.vocab * m.hidden // tp
    expert_params = moe * experts_local * m.expert_params // tp
    weights = (dense_params + expert_params) * job.param_bytes
    act = tokens * m.hidden * ACT_BYTES
    dev, eff = job.device, job.efficiency
    fwd_s = max(flops / (dev.peak_flops * eff), (weights + 2 * per * act) / (dev.mem_bw * eff))
    bwd_s = max(2 * flops / (dev.peak_flops * eff), (2 * weights + 2 * per * act) / (dev.mem_bw * eff))
    lt = job.layer_times
    if lt is not None:  # measured: the file's per-layer times replace the roofline
        fwd_s = (dense * lt.forward_us + moe * lt.moe_forward_us + (lt.head_forward_us if head else 0.0)) * 1e-6
        bwd_s = (dense * lt.backward_us + moe * lt.moe_backward_us + (lt.head_backward_us if head else 0.0)) * 1e-6
    s = tokens * m.hidden * ACT_BYTES
    tp_bytes = per * 4 * (tp - 1) / tp * s if tp > 1 else 0.0
    tp_ops = per * 4 if tp > 1 else 0
    ep_buffer = tokens / tp * m.top_k * m.hidden * ACT_BYTES if (m.moe and par.ep > 1) else 0.0
    cp_bytes = per * (par.cp - 1) * 2 * tokens * m.kv_heads * m.dh * ACT_BYTES / tp if par.cp > 1 else 0.0
    return ChunkCost(per, moe, head, max(1, round(fwd_s * PS)), max(1, round(bwd_s * PS)), tp_bytes, tp_ops,
                     ep_buffer, cp_bytes, per * attn / flops if flops else 0.0, dense_params, expert_params)


def buckets(params: int, group: int, bucket_params: int | None) -> int:
    """Gradient buckets of `params` parameters reduced over `group` ranks: ceil(params / bucket), bucket =
    `bucket_params` or Megatron-core's max(40M, 1M × group) (its DistributedDataParallel default); 0 without a
    group."""
    size = bucket_params if bucket_params else max(40_000_000, 1_000_000 * group)
    return max(1, math.ceil(params / size)) if params > 0 and group > 1 else 0


def optimizer_ps(job: TrainJob, params: int) -> int:
    """Mixed-precision Adam over `params` local parameters: 28 bytes of memory traffic each (see
    fabricsim.chakra.synth.OPTIMIZER_BYTES_PER_PARAM), at the device's memory bandwidth × efficiency; or the layer
    times file's `optimizer_us`."""
    if job.layer_times is not None and job.layer_times.optimizer_us is not None:
        return max(1, round(job.layer_times.optimizer_us * 1e6))
    return max(1, round(params * 28 / (job.device.mem_bw * job.efficiency) * PS))
