"""The `rail_optimized` topology family: GPU servers with an NVSwitch inside, one rail switch per GPU index per scalable unit, and spines (NVIDIA DGX SuperPOD style)."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


def rail_gpus(sus: int, servers_per_su: int, gpus_per_server: int = 8) -> list[str]:
    """Every GPU's host name in rank order: rank ((u·servers_per_su) + s)·gpus_per_server + g is GPU g of
    server s of scalable unit u, `su{u}.s{s}.g{g}` (the order of the hosts in the built network too).
    O(GPUs); more than the 20 million a fabric may hold (as the engine's topology limit) is an ArgumentError."""
    from ..checks import integer

    sus = integer(sus, "sus", low=1)
    servers_per_su = integer(servers_per_su, "servers_per_su", low=1)
    gpus_per_server = integer(gpus_per_server, "gpus_per_server", low=1)
    if sus * servers_per_su * gpus_per_server > 20_000_000:
        from ..errors import ArgumentError

        raise ArgumentError("sus", f"{sus} × {servers_per_su} × {gpus_per_server} GPUs exceed the 20 million nodes "
                            "a fabric may hold")
    return [f"su{u}.s{s}.g{g}" for u in range(sus) for s in range(servers_per_su) for g in range(gpus_per_server)]


class RailOptimizedTopology(BuiltTopology):
    """A rail-optimized GPU cluster of scalable units (SUs) of servers (NVIDIA DGX SuperPOD style).

    Every GPU is a host `su{u}.s{s}.g{g}` (rank ((u·servers_per_su) + s)·gpus_per_server + g, see `rail_gpus`)
    with ONE link (rate nvlink_rate + rate, so never the bottleneck; delay 0; weight 1) to its own NIC, a switch
    `su{u}.s{s}.g{g}.nic` (latency 0). Each server has one NVSwitch `su{u}.s{s}.nvs` (a switch; latency
    nvlink_latency), linked to each of its GPUs' NICs at nvlink_rate, delay 0, weight 3: the server's NVSwitch
    chips modelled as one non-blocking switch. NIC g of every server of SU u links to the SU's rail switch
    `su{u}.rail{g}` at rate, delay, weight 2. Spines: with spine_tiers = 1, every rail switch of every SU links
    to every spine `spine{i}`; with spine_tiers = 2, each SU has spine switches `su{u}.spine{i}` linked to
    every rail switch of its SU, and every SU spine links once to every core switch `core{c}`. A rail switch
    has ⌈servers_per_su/spines⌉ parallel links to each (SU) spine, so its up-links carry at least its
    down-links; with two tiers there are gpus_per_server·⌈servers_per_su/spines⌉ cores, as many as an SU
    spine has down-links: the fabric is non-blocking. Network links are weight 2 and NVLink 3, so least-cost
    routing keeps traffic between GPUs of one server on NVLink (4 links, cost 8, against at least 10 through
    the network) and never crosses an NVSwitch between servers (that detour costs 6 and saves at most 4:
    changing rails through a spine costs 8 where staying on one rail costs at least 4).

    H100 figures behind the defaults (NVIDIA H100 Tensor Core GPU datasheet; DGX H100 user guide): NVLink 4
    gives a GPU 900 GB/s bidirectional, 450 GB/s = 3,600 Gb/s per direction; a DGX H100 has 8 GPUs, 4 NVSwitch
    chips and one ConnectX-7 NIC of 400 Gb/s per GPU."""

    kind: Literal["rail_optimized"]
    sus: PositiveInt
    """Number of scalable units (SUs); each has its own rail switches."""
    servers_per_su: PositiveInt
    """Servers in each SU."""
    gpus_per_server: PositiveInt = 8
    """GPUs (and NICs, and rails) per server; 8 in a DGX H100."""
    spines: PositiveInt
    """Number of spine switches (spine_tiers = 1), or of spine switches per SU (spine_tiers = 2)."""
    spine_tiers: Literal[1, 2] = 1
    """1: every rail switch links to every spine; 2: rail switches link to their SU's spines, and those to the
    core switches."""
    rate: LinkRate = 400 * 10**9
    """Rate of every network link (NIC–rail, rail–spine, spine–core): one ConnectX-7 NIC per GPU, 400 Gb/s."""
    delay: Duration = 500_000
    """Propagation delay of every network link: 500 ns, about 100 m of fibre (5 ns/m), a long run inside a data
    hall. NVLink and GPU–NIC links have none."""
    nvlink_rate: LinkRate = 3600 * 10**9
    """Rate of each GPU's NVLink to the NVSwitch, per direction: H100 NVLink 4, 900 GB/s bidirectional =
    450 GB/s = 3,600 Gb/s each way."""
    nvlink_latency: Duration = 300_000
    """Latency of the NVSwitch (added to every packet crossing it). An assumption, not a datasheet figure:
    NVIDIA publishes no NVSwitch port-to-port latency; 300 ns is the order of one switch ASIC traversal."""
    cross_rail: Literal["pxn", "spine"] = "pxn"
    """How a message between GPUs on different servers and different rails travels: "pxn" (NCCL's PXN: over
    NVLink to the sending server's GPU on the destination's rail, then on that rail; the network's policy is
    a PxnPolicy) or "spine" (least-cost routing: up the source's rail to a spine and down the destination's)."""


    def gpus(self) -> list[str]:
        """Every GPU's host name in rank order (`rail_gpus`). O(GPUs)."""
        return rail_gpus(self.sus, self.servers_per_su, self.gpus_per_server)

    def bisection_bps(self) -> int:
        """Closed form: GPUs/2 · rate. The fabric is non-blocking by construction (each rail switch and SU spine
        has at least as much capacity up as down), so the narrowest balanced cut is at the NICs: half the GPUs'
        NIC–rail links. O(1)."""
        return self.sus * self.servers_per_su * self.gpus_per_server // 2 * self.rate


def rail_optimized(sus: int, servers_per_su: int, spines: int, gpus_per_server: int = 8, spine_tiers: int = 1,
                   rate: int | str = "400Gbps", delay: int | str = "500ns", nvlink_rate: int | str = "3600Gbps",
                   nvlink_latency: int | str = "300ns", cross_rail: str = "pxn", switch_latency: int | str = 0,
                   switch_model: str = "output_queued", input_buffer: int | str = 128 * 1024) -> Network:
    """A rail-optimized GPU cluster (see RailOptimizedTopology for names, wiring and weights).

    Nodes: GPUs in rank order, then NICs (in the same order), NVSwitches, rail switches (SU by SU, rail by
    rail), spines (SU by SU with two tiers), cores. Links: GPU–NIC (each GPU's only NIC), NVSwitch–NIC,
    NIC–rail, rail–spine (rail switch by rail switch, spine by spine, parallel links together), spine–core.
    The 8,192-GPU cluster (32 SUs × 32 servers × 8 GPUs, 32 spines) is ~58,000 nodes and links: ~0.1 s.
    O(nodes + links)."""
    return family_network("rail_optimized", locals())
