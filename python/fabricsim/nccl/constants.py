"""The constants of the NCCL model: NCCL's own (cited, not fitted) and the one fitted to measurements (CALIBRATED).

NCCL's constants are copied from NVIDIA/nccl at commit 5067397c (master, June 2026): `src/graph/tuning.cc`
(ncclTunerConstantsDefaults, ncclTopoTuneModel, ncclTopoGetAlgoTime) and `src/graph/topo.h` (per-link NVLink
bandwidth). Latencies are in microseconds, as NCCL writes them. Nothing here was adjusted to fit a measurement.

CALIBRATED holds every constant that was fitted, and only those; each was fitted on the three public runs named
in `CALIBRATION_RUNS` and on nothing else. `fabricsim nccl-tests` prints them, its --json carries them under
"calibrated", and docs/guide/nccl.md says how they were fitted and which published runs check them.
"""

from __future__ import annotations

NCCL_SOURCE = "NVIDIA/nccl@5067397c: src/graph/tuning.cc, src/graph/topo.h"
"""Where the NCCL constants below come from (repository@commit: paths)."""

PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocols: LL (8-byte flag+data stores), LL128 (128-byte lines with a flag), Simple (bulk copies with
fences). tuning.cc's arrays are indexed in this order."""

BASE_LATENCY_US = {
    "tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4), "nvls": (0.0, 0.0, 0.0), "nvls_tree": (0.0, 0.0, 0.0),
}
"""tuning.cc baseLatencies (LL, LL128, Simple), microseconds: the fixed cost of one collective call."""

HW_LATENCY_US = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4), "nvls": (0.0, 0.0, 25.0),
               "nvls_tree": (0.0, 0.0, 25.0)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0), "nvls": (0.0, 0.0, 18.0),
            "nvls_tree": (0.0, 0.0, 20.9)},
}
"""tuning.cc hwLatencies (LL, LL128, Simple), microseconds: the cost of one step over NVLink (intra-node) or the
network (inter-node)."""

NET_OVERHEAD_US = 1.0
"""tuning.cc getNetOverhead: the network post overhead of one step on an Intel x86 host (AMD: 2.0), tripled for
Simple; an inter-node ring's intra-node steps cost at least this."""

RING_PLATEAU = 1.4
"""tuning.cc ncclTopoGetAlgoTime: a multi-node ring all-reduce with Simple has its latency multiplied by 1.4
(compute capability >= 8.0) once each channel carries at least 64 bytes per rank ("plateau effect of ring")."""

TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
)
"""tuning.cc treeCorrectionFactor (LL, LL128, Simple) by log2(bytes / 64), 64 B to 256 MiB: the tree all-reduce's
bandwidth at medium sizes is this fraction of its model."""

PROTOCOL_BW = {
    ("ring", "LL"): 0.5, ("ring", "LL128"): 0.92, ("ring", "Simple"): 1.0,
    ("tree", "LL"): 1 / 3.8, ("tree", "LL128"): 120 / 128, ("tree", "Simple"): 1.0,
    ("nvls", "Simple"): 1.0, ("nvls_tree", "Simple"): 1.0,
}
"""tuning.cc's protocol factors on an algorithm's bandwidth: LL moves 8 bytes of data per 16 (ring: x0.5; tree:
/3.8), LL128 120 of every 128 (ring: x0.92; tree: 120/128 across nodes), Simple all of it. NVLS runs Simple only."""

TREE_ALLREDUCE_BW = 0.92
"""tuning.cc: the tree all-reduce's bandwidth is 0.92 of its graph's (`busBw * .92`)."""

LL_MAX_BW_GBPS = {1: 141.0, 2: 39.0, 3: 20.4}
"""tuning.cc llMaxBws: the most LL can carry, as NCCL's busBw in GB/s (its ring algbw is this x n / steps, its
tree's half of it): one node of Hopper GPUs (141.0); across nodes on an Intel x86 host, 2 nodes (39.0) and more
(20.4)."""

NVLINK_EFFICIENCY = 20.0 / 25.0
"""topo.h SM80_NVLINK_BW = 20.0 GB/s that NCCL counts per NVLink (A100; H100's SM90 is 20.6) of 25 GB/s per
direction: the share of NVLink's line rate that NCCL plans on."""

NVLS_EFFICIENCY = 0.85
"""tuning.cc nvlsEfficiency for Hopper: the share of NVLink bandwidth that NVLink SHARP (NVSwitch reduction)
reaches."""

CALIBRATION_RUNS = (
    {"run": "H100 SXM 2 x 8, 8 x 400 Gb/s InfiniBand, NCCL_ALGO=Ring", "fabric": "h100_ib_2x8", "algo": "ring",
     "minbytes": 1 << 20, "maxbytes": 8 << 30, "busbw_GBps": 392.69,
     "source": "https://github.com/NVIDIA/nccl-tests/issues/309 (second report, gj-aion, 2025-06-18: 2 nodes, "
               "NCCL_ALGO=Ring, -b 1M -e 8G)"},
    {"run": "A100-SXM4-40GB 2 x 8, 16 x 100 Gb/s RoCEv2 (OCI BM.GPU4.8), 10 GiB", "fabric": "a100_roce_2x8",
     "algo": "auto", "minbytes": 10 << 30, "maxbytes": 10 << 30, "busbw_GBps": 191.76,
     "source": "oracle-japan/ocitutorials, NCCL Tests on BM.GPU4.8 (Ubuntu), NCCL 2.26.5, 2 nodes 16 GPUs: "
               "https://oracle-japan.github.io/ocitutorials/hpc/benchmark/run-nccltests-ubuntu/"},
    {"run": "A100 80GB 2 x 8, 4 x 100 Gb/s EFA (AWS p4de.24xlarge)", "fabric": "p4de_efa_2x8", "algo": "auto",
     "minbytes": 8, "maxbytes": 2 << 30, "busbw_GBps": 78.33,
     "source": "aws-samples/awsome-distributed-training: micro-benchmarks/nccl-tests/README.md (2 x p4de.24xlarge)"},
)
"""The three public runs the calibrated constants were fitted on, each as nccl-tests ran it (its fabric, algorithm
and sizes) with its peak all-reduce busbw, GB/s."""

CALIBRATED = {
    "nic_efficiency": {
        "value": 0.947,
        "meaning": "share of a NIC's line rate that NCCL's Simple protocol moves (headers, RDMA, proxy progress)",
        "fitted_on": [r["run"] for r in CALIBRATION_RUNS],
        "how": "least squares of log(predicted / measured peak busbw) over the three runs, rounded to 3 digits "
               "(fabricsim.nccl.calibrate.fit_nic_efficiency)",
    },
}
"""Every constant fitted to measurements (fitted only on CALIBRATION_RUNS): name -> value, meaning, how."""


def calibrated(name: str) -> float:
    """The value of one calibrated constant."""
    return float(CALIBRATED[name]["value"])
