"""Study 003 Fig. 2: the completion-time cost of spreading a 24-VM all-to-all over several first-level switches.

The fabric is a slice of the study's baseline network on the lossless, credit-based packet engine: leaves of
48 servers with 16 uplinks to 16 spines (3:1), 100 Gb/s links, input-buffered switches with VOQs (128 KiB per
input port), 1.5 µs switch latency, ECMP choosing a random next hop per message (all its packets on one path).
Every VM sits on its own server; its VNIC is throttled (a shaper on the server's port) to 10, 25 or 70 Gb/s.

The exchange (Prisacari et al., ICS 2013, bandwidth-optimal all-to-all on fat-trees): the 24 VMs form two
halves A, B of 12 (positions p = 0…11). Phase (s, c), s = 0…11, c = 0, 1, sends VM (g, p) to
(g ⊕ c ⊕ h(q), q) with q = (p + s) mod 12 and h(q) = [q ≥ 6]. Each phase is a permutation, every ordered pair
occurs exactly once over the 24 phases (the self-pairs of phase s = 0 send nothing), and in every phase
exactly half of the VMs send to the other half. Spread placement puts half A under one leaf and half B under
another, so exactly half of every phase's messages cross the spine; single placement puts all 24 under one
leaf. Phases are not synchronized: a VM sends its next message once its previous one is delivered (blocking
sends, one message of a VM in flight), each after the network stack latency (a delay before the message
starts, per message; back-to-back non-blocking sends would give only 10% at 1.25 µs, far below every figure
of the study, so we read its "no explicit synchronization" as blocking sends without barriers). Pairing of stack latency and VNIC speed (document of the study's 1.25/3.5, 5.25/7.5 and
11.75/15 µs): the faster stacks go with the faster VNICs, 70 Gb/s ↔ 1.25 and 3.5 µs, 25 ↔ 5.25 and 7.5,
10 ↔ 11.75 and 15 (advanced stacks give both more throughput and less latency, §3).
"""

from __future__ import annotations

from typing import Any

from ..spec import Scenario, scenario_from_dict

STACKS = {70: (1.25, 3.5), 25: (5.25, 7.5), 10: (11.75, 15.0)}
"""VNIC throttle (Gb/s) → the two network-stack latencies (µs) it is simulated with."""
MSG_SIZES = [2 ** k for k in range(8, 16)]
PKT_SIZES = [2 ** k for k in range(8, 13)]


def exchange(half: int = 12) -> list[list[tuple[int, int]]]:
    """The phases of the half-crossing all-to-all among 2·`half` VMs (VM id = g·half + p), as (src, dst) lists;
    `half` must be even. Self-pairs are left out."""
    if half < 2 or half % 2:
        raise ValueError(f"half: must be even and at least 2, not {half}")
    phases = []
    for s in range(half):
        for c in (0, 1):
            ph = []
            for g in (0, 1):
                for p in range(half):
                    q = (p + s) % half
                    g2 = g ^ c ^ int(q >= half // 2)
                    if (g2, q) != (g, p):
                        ph.append((g * half + p, g2 * half + q))
            phases.append(ph)
    return phases


def scenario(msg_bytes: int, packet_bytes: int, vnic_gbps: float, stack_us: float, *, leaves: int = 1,
             seed: int = 1, half: int = 12, servers_per_leaf: int = 48, spines: int = 16, link: str = "100Gbps",
             switch_latency: str = "1.5us", input_buffer: str = "128KiB", fabric_delay_us: float = 0.0) -> Scenario:
    """The all-to-all of 2·`half` VMs spread over `leaves` leaves (1: all under one; 2: halves A and B apart;
    more: VMs dealt round-robin). Every run has the same fabric (at least two leaves), so only the placement
    differs. `fabric_delay_us`: propagation delay of every leaf–spine link (the study states none; 0)."""
    n = 2 * half
    racks = max(2, leaves)
    if leaves < 1 or n > servers_per_leaf * leaves:
        raise ValueError(f"leaves: {n} VMs do not fit under {leaves} leaves of {servers_per_leaf} servers")
    if leaves == 1:
        host = list(range(n))
    elif leaves == 2:
        host = [v if v < half else servers_per_leaf + (v - half) for v in range(n)]
    else:
        host = [(v % leaves) * servers_per_leaf + v // leaves for v in range(n)]
    topo = {"kind": "leaf_spine", "racks": racks, "hosts_per_rack": servers_per_leaf, "spines": spines,
            "host_rate": link, "fabric_rate": link, "switch_latency": switch_latency,
            "switch_model": "input_buffered", "input_buffer": input_buffer, "fabric_delay": f"{fabric_delay_us}us"}
    leaf_of = lambda h: f"leaf{h // servers_per_leaf}"  # noqa: E731
    ports = [{"node": f"h{host[v]}", "peer": leaf_of(host[v]), "rate_cap": f"{vnic_gbps}Gbps"} for v in range(n)]
    msgs: list[dict[str, Any]] = []
    last: dict[int, str] = {}
    for k, ph in enumerate(exchange(half)):
        for a, b in ph:
            name = f"p{k}.{a}to{b}"
            msgs.append({"name": name, "src": f"h{host[a]}", "dst": f"h{host[b]}", "size": msg_bytes,
                         "packet_size": min(packet_bytes, msg_bytes), "delay": f"{stack_us}us",
                         "after": [last[a]] if a in last else []})
            last[a] = name
    return scenario_from_dict({"seed": seed, "topology": topo, "ports": ports, "routing": {"ecmp": "per_message"},
                               "messages": msgs})


def completion_us(sc: Scenario) -> float:
    """The all-to-all's completion time (last message delivered), µs, in the packet engine."""
    from ..engine import run

    return run(sc).completion_time_s * 1e6


def overhead(msg_bytes: int, packet_bytes: int, vnic_gbps: float, stack_us: float, *, leaves: int = 2,
             seed: int = 1, fabric_delay_us: float = 0.0) -> dict[str, float]:
    """Completion times under one leaf and spread over `leaves`, and the spread's increase in %."""
    kw = {"seed": seed, "fabric_delay_us": fabric_delay_us}
    one = completion_us(scenario(msg_bytes, packet_bytes, vnic_gbps, stack_us, leaves=1, **kw))
    many = completion_us(scenario(msg_bytes, packet_bytes, vnic_gbps, stack_us, leaves=leaves, **kw))
    return {"single_us": one, "spread_us": many, "increase_pct": (many - one) / one * 100}


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task: {"msg_bytes", "packet_bytes", "vnic_gbps", "stack_us", "leaves", "fabric_delay_us"} → overhead()."""
    return overhead(int(payload["msg_bytes"]), int(payload["packet_bytes"]), float(payload["vnic_gbps"]),
                    float(payload["stack_us"]), leaves=int(payload.get("leaves", 2)), seed=seed,
                    fabric_delay_us=float(payload.get("fabric_delay_us", 0.0)))
