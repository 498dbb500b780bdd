"""Collective runs on the Vela-like lossless fabric: scenario building and the study's metrics."""

from __future__ import annotations

from typing import Any, Sequence

from ..spec import Scenario, scenario_from_dict
from .patterns import all_gather, all_reduce, all_to_all, reduce_scatter, ring_all_reduce, split_barriers
from .placement import vela_nodes

PATTERNS = {"all-to-all": all_to_all, "all-gather": all_gather, "all-reduce": all_reduce,
            "ring-all-reduce": ring_all_reduce, "reduce-scatter": reduce_scatter}
SHIFT_PATTERNS = ("all-to-all", "all-gather", "all-reduce")
MIB = 1 << 20


def vela_topology(switch_latency: str = "1.5us", link_delay: str = "0s", input_buffer: str = "128KiB") -> dict:
    """Study 000 §IV-A: 4 racks x 6 servers, 2 leaves per rack, 4 spines, 4 x 100G NICs per server (NICs 0, 2 on
    the rack's first leaf, 1, 3 on the second), 2 x 100G links from every leaf to every spine; lossless
    input-buffered switches (Venus, study 003 §3)."""
    return {"kind": "leaf_spine", "racks": 4, "leaves_per_rack": 2, "hosts_per_rack": 6, "nics_per_host": 4,
            "spines": 4, "parallel_links": 2, "host_rate": "100Gbps", "fabric_rate": "100Gbps",
            "host_delay": link_delay, "fabric_delay": link_delay, "switch_latency": switch_latency,
            "switch_model": "input_buffered", "input_buffer": input_buffer}


def collective_scenario(groups: Sequence[Sequence[int]], patterns: Sequence[str], msg_mib: float, *,
                        interfaces: int = 1, packet: int = 1024, seed: int = 1, barrier: bool = False,
                        order: str | None = None) -> Scenario:
    """One or more concurrent collectives; group g runs `patterns[g]` on the servers `groups[g]`.
    With several interfaces per node, each logical message is sent once per interface (NIC k to NIC k),
    each carrying `msg_mib` MiB, as the study injects its message size per interface. `order` overrides how
    nodes issue their messages (see `patterns.ORDERS`; None = each pattern's default)."""
    size = int(round(msg_mib * MIB))
    servers_used: list[int] = [s for g in groups for s in g]
    all_nodes = vela_nodes(servers_used, interfaces)
    messages: list[dict] = []
    offset = 0
    for g, (servers, pattern) in enumerate(zip(groups, patterns)):
        nodes = all_nodes[offset: offset + len(servers)]
        offset += len(servers)
        for k in range(interfaces):
            endpoints = [n[k].endpoint for n in nodes]
            messages += PATTERNS[pattern](endpoints, size, packet=packet, tag=f"g{g}.i{k}.{pattern}",
                                          **(_shift_options(pattern, barrier, order) if pattern in SHIFT_PATTERNS else {}))
    messages, barriers = split_barriers(messages)
    return scenario_from_dict({"seed": seed, "topology": vela_topology(), "routing": {"ecmp": "per_message"},
                               "messages": messages, "barriers": barriers})


def _shift_options(pattern: str, barrier: bool, order: str | None) -> dict:
    """Keyword options of a shift-pattern generator: `order` (None = the pattern's default) applies to every part."""
    opts: dict[str, Any] = {"barrier": barrier}
    if order is not None:
        opts["order"] = order
        if pattern == "all-reduce":
            opts["ag_order"] = order
    return opts


def collective_metrics(record, interfaces_total: int) -> dict[str, Any]:
    """Completion (ms), aggregate and per-interface throughput (Gb/s: delivered payload bits / completion),
    and received packets by switch hops (millions)."""
    ct = record.completion_time_s
    payload = sum(record.flow_columns["rx_payload_bytes"])
    thr = payload * 8 / ct / 1e9 if ct else None
    hops = record.hops
    return {
        "completion_time_ms": ct * 1e3 if ct else None,
        "throughput_gbps": thr,
        "throughput_per_interface_gbps": thr / interfaces_total if thr else None,
        "hop_packets_m": {str(k): v / 1e6 for k, v in hops.items()},
        "packets_1hop_m": hops.get(1, 0) / 1e6,
        "packets_3hop_m": hops.get(3, 0) / 1e6,
        "dropped": record.packets["dropped"],
    }


def sweep_task(payload: dict, seed: int) -> dict:
    """Sweep task: {"servers": [[...], ...], "patterns" | "pattern", "msg_mib", "interfaces", "packet"} (study 000's
    task, `studies.orchestration.sweep_task`, also takes preset names)."""
    from ..engine import run

    groups = payload["servers"]
    patterns = payload.get("patterns") or [payload.get("pattern", "all-reduce")] * len(groups)
    interfaces = int(payload.get("interfaces", 1))
    sc = collective_scenario(groups, patterns, float(payload.get("msg_mib", 10.0)), interfaces=interfaces,
                             packet=int(payload.get("packet", 1024)), seed=seed,
                             barrier=bool(payload.get("barrier", False)), order=payload.get("order"))
    m = collective_metrics(run(sc, fidelity=payload.get("fidelity")), interfaces * sum(len(g) for g in groups))
    m.pop("hop_packets_m")
    return m
