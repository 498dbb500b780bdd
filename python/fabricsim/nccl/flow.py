"""The ring's bandwidth from the flow engine: NCCL's channels as concurrent flows on the fabric's own links.

In steady state a pipelined ring keeps every edge of every channel busy at once, each edge carrying the same bytes.
So one flow-engine run with one message per ring edge, all started together, finds the ring's rate on the fabric:
the flows share NVLink and NIC links max-min fairly, and the last one to finish sets the rate. Channel c enters
server i on GPU c+i (its rail's NIC), visits the server's other GPUs over NVLink and leaves on GPU c+i+1's NIC to
the same rail of server i+1, as NCCL's rail-aligned rings do; the last server leaves on rail c, closing the ring.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .fabric import nccl_fabric

EDGE_BYTES = 16 << 20
"""Bytes per ring edge in the flow run: large enough that packetisation does not matter (the run has no latency)."""


def ring_edges(nodes: int, gpus: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every edge (server, gpu) -> (server, gpu) of one ring per rail (channel), rail-aligned as the module says."""
    edges = []
    for c in range(gpus):
        entry = [(c + i) % gpus for i in range(nodes)]
        exits = entry[1:] + [c]
        if nodes > 1 and exits[-1] == entry[-1]:  # the last server would enter and leave on one GPU: shift one
            exits[-2] = entry[-1] = (entry[-1] + 1) % gpus
        for i in range(nodes):
            order = [entry[i]] + [g for g in range(gpus) if g not in (entry[i], exits[i])] + [exits[i]]
            if nodes == 1:
                order = [(c + k) % gpus for k in range(gpus)]
            edges += [((i, a), (i, b)) for a, b in zip(order, order[1:])]
            edges.append(((i, order[-1]), ((i + 1) % nodes, order[-1] if nodes > 1 else order[0])))
    return edges


def ring_busbw_flow(fabric: str | Path | Any, b) -> float:
    """The ring's busbw (bytes/s) on `fabric` from a flow-engine run, its NIC links at `b.net` per server and its
    NVLink at `b.nvlink` per GPU (the model's effective rates, model.Bandwidths), without latencies."""
    from ..collectives.fabrics import FabricFile, read_fabric
    from ..engine import run
    from ..spec import scenario_from_dict
    from ..workload import Workload

    fab = fabric if isinstance(fabric, FabricFile) else read_fabric(fabric)
    f = nccl_fabric(fab)
    topo = dict(fab.doc["topology"], rate=round(b.net * 8 / f.rails), nvlink_rate=round(b.nvlink * 8), delay=0,
                nvlink_latency=0, switch_latency=0)
    sc = scenario_from_dict({**fab.doc, "topology": topo, "fidelity": "flow"}, fab.name)
    spu = int(topo["servers_per_su"])

    def gpu(node: tuple[int, int]) -> str:
        s, g = node
        return f"su{s // spu}.s{s % spu}.g{g}"

    edges = ring_edges(f.nodes, f.gpus)
    wl = Workload(sc)
    wl.messages([gpu(a) for a, _ in edges], [gpu(z) for _, z in edges], EDGE_BYTES, packet_size=4096)
    rec = run(sc, workload=wl, fidelity="flow")
    # busbw: each channel's edges carry EDGE_BYTES, and a server's channels together 2(n-1)/n S (all-reduce):
    # busbw = channels x EDGE_BYTES / T whatever the collective.
    return f.channels * EDGE_BYTES / rec.completion_time_s
