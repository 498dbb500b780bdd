"""NCCL's collectives on a GPU cluster, as nccl-tests measures them: time, algbw and busbw by message size.

Per algorithm and protocol the time is NCCL's own form (tuning.cc, ncclTopoGetAlgoTime):
time = latency + bytes / bandwidth. The latency is NCCL's, term for term (constants.py, cited). The bandwidth is
the fabric's, derived from its links (not NCCL's topology search): what one server's NICs and one GPU's NVLink
can carry in each algorithm, with the NVLink and NIC parts of a channel pipelined by chunk, so the slower one
bounds the rate rather than both adding up:

- ring: one ring per rail (channel), entering each server on a rail's NIC, visiting its GPUs over NVLink and
  leaving on the next rail; every ring edge carries 2(n-1)/n of its channel's share (all-reduce). A server's NICs
  then carry 2(n-1)/n x S out and in, and a GPU's NVLink (G-1)/G of that (the entry and exit GPUs of a channel
  skip one NVLink hop), so busbw = min(B_net, B_nvl x G/(G-1)).
- tree (all-reduce): NCCL's double binary tree across servers, a chain inside each. On 2 servers each server's
  NICs carry S out and S in, so algbw <= B_net (busbw up to 2(n-1)/n x B_net); on more, a server is inner node of
  one tree and leaf of the other, 2S each way, algbw <= B_net / 2. A chain GPU sends S up and S down:
  algbw <= B_nvl / 2. NCCL's 0.92 (tuning.cc) applies.
- nvls (all-reduce, [fabric] nvls = true): NVLink SHARP reduces in the NVSwitch. A GPU sends its S once into the
  switch and its 1/G shard out again, and receives the same: (1 + 1/G) S each way, so algbw <= B_nvl x
  nvlsEfficiency x G/(G+1); across servers NCCL's NVLSTree runs the network part as the tree does.
- alltoall: point to point; a server sends G x S x (n-G)/n over its NICs.

B_net is a server's NIC line rate x nic_efficiency (calibrated: constants.CALIBRATED), B_nvl a GPU's NVLink rate
x NCCL's planned share (topo.h). `auto` picks the (algorithm, protocol) of least time, as NCCL picks by its model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import constants as K
from ..collectives.fabrics import FabricFile
from .fabric import NcclFabric, nccl_fabric

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
ALGOS = ("auto", "ring", "tree", "nvls")
FIDELITIES = ("model", "flow")
TYPE_BYTES = 4
"""nccl-tests' default data type, float."""

BUSBW_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
}
"""busbw = algbw x this (NVIDIA/nccl-tests doc/PERFORMANCE.md): the factor that makes busbw the bandwidth of the
busiest link of an ideal ring, comparable with the hardware's peak whatever the rank count."""


def busbw_factor(collective: str, ranks: int) -> float:
    """nccl-tests' busbw / algbw for `collective` on `ranks` ranks (at least 1)."""
    from ..checks import integer, text

    collective = text(collective, "collective", choices=BUSBW_FACTOR)
    return BUSBW_FACTOR[collective](integer(ranks, "ranks", low=1))


@dataclass(frozen=True)
class Bandwidths:
    """Per-direction bandwidths the model uses, bytes/s: a server's NICs and one GPU's NVLink, efficiencies applied."""

    net: float
    nvlink: float


def bandwidths(f: NcclFabric, nic_efficiency: float | None = None) -> Bandwidths:
    """B_net = a server's rails x rate x nic_efficiency (calibrated); B_nvl = NVLink rate x NCCL's planned share."""
    e = K.calibrated("nic_efficiency") if nic_efficiency is None else nic_efficiency
    return Bandwidths(net=f.net_bps / 8 * e, nvlink=f.nvlink_rate / 8 * K.NVLINK_EFFICIENCY)


def ring_busbw(f: NcclFabric, b: Bandwidths) -> float:
    """Bytes/s of busbw a ring collective reaches at large sizes: min(B_net, B_nvl x G/(G-1)) across servers (the
    entry and exit GPUs of each channel skip one NVLink hop), B_nvl on one server."""
    if f.nodes == 1:
        return b.nvlink
    if f.gpus == 1:
        return b.net
    return min(b.net, b.nvlink * f.gpus / (f.gpus - 1))


def _tree_net(f: NcclFabric, b: Bandwidths) -> float:
    """The algbw a server's NICs allow a (double binary) tree: B_net on 2 servers, B_net / 2 on more."""
    return b.net if f.nodes == 2 else b.net / 2


def algo_bandwidth(f: NcclFabric, b: Bandwidths, collective: str, algo: str, ring_bus: float | None = None) -> float:
    """Algorithm bandwidth (bytes/s, Simple protocol) of `algo` for `collective` at large sizes; 0 if it does not
    apply. `ring_bus` replaces the ring's busbw (a flow-engine figure)."""
    n, g = f.ranks, f.gpus
    if algo == "ring":
        bus = ring_busbw(f, b) if ring_bus is None else ring_bus
        return bus / busbw_factor(collective, n)
    if algo == "p2p":  # alltoall
        nv = b.nvlink * n / (n - 1)
        return nv if f.nodes == 1 else min(nv, b.net * n / (g * (n - g)))
    if collective != "all_reduce":
        return 0.0
    if algo == "tree":
        chain = b.nvlink / 2 if g > 1 else math.inf
        return K.TREE_ALLREDUCE_BW * (chain if f.nodes == 1 else min(chain, _tree_net(f, b)))
    if algo in ("nvls", "nvls_tree"):
        if not f.nvls or g < 2 or (algo == "nvls") != (f.nodes == 1):
            return 0.0
        intra = b.nvlink * K.NVLS_EFFICIENCY * g / (g + 1)
        return intra if f.nodes == 1 else min(intra, _tree_net(f, b))
    raise ValueError(f"unknown algorithm {algo!r}")


def _log2i(x: int) -> int:
    return max(int(x).bit_length() - 1, 0)


def latency_us(f: NcclFabric, collective: str, algo: str, proto: str) -> float:
    """NCCL's latency of one call (tuning.cc ncclTopoTuneModel), microseconds, with the fabric's NIC-to-NIC
    latency as NCCL's latencyInter."""
    p = K.PROTOCOLS.index(proto)
    n, nodes, g = f.ranks, f.nodes, f.gpus
    lat_inter = f.net_latency_s * 1e6
    if algo == "p2p":  # tuning.cc has no model of point-to-point: a ring Simple call with one step of each kind
        return K.BASE_LATENCY_US["ring"][2] + (K.HW_LATENCY_US["net"]["ring"][2] + 2 * lat_inter if nodes > 1
                                              else K.HW_LATENCY_US["nvlink"]["ring"][2])
    intra = K.HW_LATENCY_US["nvlink"][algo][p]
    inter = K.HW_LATENCY_US["net"]["tree" if g == 1 else algo][p] + lat_inter * (2 if proto == "Simple" else 1)
    base = K.BASE_LATENCY_US[algo][p]
    if algo == "ring":
        steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
        inter_steps = 0 if nodes == 1 else (2 * (nodes - 1) if collective == "all_reduce" else nodes - 1)
        if nodes > 1:
            intra = max(intra, K.NET_OVERHEAD_US * (3 if proto == "Simple" else 1))
        return base + (steps - inter_steps) * intra + inter_steps * inter
    if algo == "tree":
        return base + 2 * ((g - 1) * intra + _log2i(nodes) * inter)
    if algo == "nvls":
        return intra
    return base + intra + 2 * _log2i(nodes) * inter  # nvls_tree


def _protocols(algo: str) -> tuple[str, ...]:
    return ("Simple",) if algo in ("nvls", "nvls_tree", "p2p") else K.PROTOCOLS


def _ll_max(f: NcclFabric) -> float:
    """tuning.cc llMaxBws (bytes/s): one Hopper node, 2 nodes, more (Intel x86 hosts)."""
    return 1e9 * K.LL_MAX_BW_GBPS[min(f.nodes, 3)]


def time_us(f: NcclFabric, b: Bandwidths, collective: str, algo: str, proto: str, nbytes: int,
            ring_bus: float | None = None) -> float:
    """NCCL's ncclTopoGetAlgoTime with this model's bandwidth: latency + bytes / bandwidth, microseconds; inf when
    the algorithm or protocol does not apply."""
    bw = algo_bandwidth(f, b, collective, algo, ring_bus)
    if bw <= 0 or proto not in _protocols(algo):
        return math.inf
    base = "tree" if algo == "tree" else "ring"
    bw *= K.PROTOCOL_BW.get((base, proto), 1.0)
    if proto == "LL":
        n = f.ranks
        steps = 2 * (n - 1) if collective == "all_reduce" else max(n - 1, 1)
        cap = _ll_max(f) / 2 if algo == "tree" else _ll_max(f) * n / steps  # llMaxBw caps NCCL's busBw
        bw = min(bw, cap)
    lat = latency_us(f, collective, algo, proto)
    log_size = _log2i(nbytes >> 6) if nbytes >> 6 else -1
    if algo == "tree" and 0 <= log_size < len(K.TREE_CORRECTION[0]):
        bw *= K.TREE_CORRECTION[K.PROTOCOLS.index(proto)][log_size]
    if (algo == "ring" and proto == "Simple" and f.nodes > 1 and collective == "all_reduce"
            and nbytes / (f.channels * f.ranks) >= 64):
        lat *= K.RING_PLATEAU
    return lat + nbytes / bw * 1e6


def algorithms(f: NcclFabric, collective: str, algo: str) -> tuple[str, ...]:
    """The algorithms `algo` (auto, ring, tree, nvls) stands for on this fabric and collective; ValueError naming
    what does not apply."""
    if collective == "alltoall":
        if algo != "auto":
            raise ValueError("alltoall is point to point in NCCL (no ring, tree or nvls): use auto")
        return ("p2p",)
    nvls = "nvls" if f.nodes == 1 else "nvls_tree"
    if algo == "auto":
        return ("ring", "tree", nvls) if collective == "all_reduce" else ("ring",)
    if algo != "ring" and collective != "all_reduce":
        raise ValueError(f"{algo} runs all_reduce only in NCCL; {collective} uses ring")
    if algo == "nvls" and not f.nvls:
        raise ValueError(f"nvls needs NVSwitch reduction: {f.name} does not say [fabric] nvls = true")
    if algo == "nvls" and f.gpus < 2:
        raise ValueError("nvls needs at least 2 GPUs per server")
    return (nvls,) if algo == "nvls" else (algo,)


def fastest(f: NcclFabric, b: Bandwidths, collective: str, nbytes: int, algos: tuple[str, ...] | None = None,
            ring_bus: float | None = None) -> tuple[float, str, str]:
    """(time_us, algorithm, protocol) of the least time among `algos` (default: what `auto` stands for) and their
    protocols, as NCCL picks them with its own model."""
    best = (math.inf, "", "")
    for a in algos if algos is not None else algorithms(f, collective, "auto"):
        for p in _protocols(a):
            t = time_us(f, b, collective, a, p, nbytes, ring_bus)
            if t < best[0]:
                best = (t, a, p)
    return best


def sizes(minbytes: int, maxbytes: int, stepfactor: int) -> list[int]:
    """nccl-tests' sizes: minbytes, x stepfactor, ... up to maxbytes."""
    out, s = [], minbytes
    while s <= maxbytes:
        out.append(s)
        s *= stepfactor
    return out


def _rounded(collective: str, size: int, ranks: int) -> int:
    """The bytes nccl-tests really moves for `size`: whole floats, and for all_gather, reduce_scatter and alltoall
    a whole number of floats per rank."""
    unit = TYPE_BYTES * (1 if collective == "all_reduce" else ranks)
    return size // unit * unit


@dataclass
class NcclTestsResult:
    """What `nccl_tests` returns: one row per size, as nccl-tests prints, and what the model used."""

    collective: str
    fabric: NcclFabric
    algo: str
    fidelity: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    ring_busbw_GBps: float = 0.0
    """The ring's busbw at large sizes, GB/s: the closed form, or the flow engine's (fidelity flow)."""

    @property
    def peak_busbw_GBps(self) -> float:
        return max((r["busbw_GBps"] for r in self.rows), default=0.0)

    @property
    def avg_busbw_GBps(self) -> float:
        """nccl-tests' "Avg bus bandwidth": the mean busbw over the sizes."""
        return sum(r["busbw_GBps"] for r in self.rows) / len(self.rows) if self.rows else 0.0

    def to_json(self) -> dict[str, Any]:
        f = self.fabric
        return {
            "collective": self.collective, "fabric": f.name, "algo": self.algo, "fidelity": self.fidelity,
            "nodes": f.nodes, "gpus_per_node": f.gpus, "ranks": f.ranks, "nics_per_node": f.nics,
            "net_Gbps_per_node": f.net_bps / 1e9, "nvlink_Gbps_per_gpu": f.nvlink_rate / 1e9, "nvls": f.nvls,
            "busbw_factor": busbw_factor(self.collective, f.ranks), "ring_busbw_GBps": self.ring_busbw_GBps,
            "rows": self.rows, "peak_busbw_GBps": self.peak_busbw_GBps, "avg_busbw_GBps": self.avg_busbw_GBps,
            "calibrated": {k: dict(v) for k, v in K.CALIBRATED.items()},
            "nccl_constants": K.NCCL_SOURCE,
        }


def nccl_tests(fabric: str | Path | Any, collective: str = "all_reduce", *, minbytes: int = 8,
               maxbytes: int = 8 << 30, stepfactor: int = 2, algo: str = "auto", fidelity: str = "model",
               nic_efficiency: float | None = None) -> NcclTestsResult:
    """nccl-tests' table for `collective` (all_reduce, all_gather, reduce_scatter, alltoall) on a rail-optimized
    fabric (a built-in name, a fabric file or a FabricFile), sizes minbytes .. maxbytes by stepfactor.

    Each row: size_bytes, count (floats), time_us, algbw_GBps (size / time), busbw_GBps (algbw x nccl-tests'
    factor), algo and proto (the ones of least time among `algo`: auto = ring, tree and NVLS where they apply).
    fidelity "flow" takes the ring's bandwidth from a flow-engine run of its channels on the fabric (rates scaled by
    the efficiencies) instead of the closed form. `nic_efficiency` overrides the calibrated constant.
    ValueError on a bad collective, algorithm or size range; ScenarioError on a fabric that is not rail-optimized.
    """
    from .. import checks
    from ..errors import ArgumentError

    collective = checks.text(collective, "collective", choices=COLLECTIVES)
    algo = checks.text(algo, "algo", choices=ALGOS)
    fidelity = checks.text(fidelity, "fidelity", choices=FIDELITIES)
    minbytes = checks.integer(minbytes, "minbytes", low=1, high=2**50)
    maxbytes = checks.integer(maxbytes, "maxbytes", low=minbytes, high=2**50)
    stepfactor = checks.integer(stepfactor, "stepfactor", low=2, high=2**50)
    nic_efficiency = checks.number(nic_efficiency, "nic_efficiency", low=0, above=True, high=1, none=True)
    if not isinstance(fabric, (str, Path, NcclFabric, FabricFile)) or fabric == "":
        raise ArgumentError("fabric", f"expected a built-in fabric's name, a fabric file's path or a FabricFile, got "
                            f"{type(fabric).__name__} {fabric!r}"[:160])
    f = fabric if isinstance(fabric, NcclFabric) else nccl_fabric(fabric)
    if f.ranks < 2:
        raise ValueError(f"{f.name} has one GPU: a collective needs at least 2 ranks")
    b = bandwidths(f, nic_efficiency)
    algos = algorithms(f, collective, algo)
    ring_bus = None
    if fidelity == "flow" and "ring" in algos:
        from .flow import ring_busbw_flow

        if isinstance(fabric, NcclFabric):
            raise ValueError("fidelity flow simulates the fabric file: give its name, path or FabricFile, not an NcclFabric")
        ring_bus = ring_busbw_flow(fabric, b)
    res = NcclTestsResult(collective, f, algo, fidelity,
                          ring_busbw_GBps=(ring_busbw(f, b) if ring_bus is None else ring_bus) / 1e9)
    factor = busbw_factor(collective, f.ranks)
    for size in sizes(minbytes, maxbytes, stepfactor):
        nbytes = _rounded(collective, size, f.ranks)
        t, a, p = fastest(f, b, collective, nbytes, algos, ring_bus)
        algbw = nbytes / (t * 1e-6) / 1e9
        res.rows.append({"size_bytes": nbytes, "count": nbytes // TYPE_BYTES, "time_us": t, "algbw_GBps": algbw,
                         "busbw_GBps": algbw * factor, "algo": a, "proto": p})
    return res
