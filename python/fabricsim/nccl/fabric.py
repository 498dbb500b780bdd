"""What the NCCL model needs to know about a fabric, read from a fabric file's rail-optimized [topology] and its
[fabric] table: nodes, GPUs per node, NICs and their rates, NVLink bandwidth, NVSwitch reduction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..collectives.fabrics import FabricFile, read_fabric
from ..errors import ScenarioError


@dataclass(frozen=True)
class NcclFabric:
    """A GPU cluster as NCCL sees it. Rates in bit/s, per direction; latencies in seconds."""

    name: str
    nodes: int
    """Servers (NCCL's nodes): sus x servers_per_su."""
    gpus: int
    """GPUs per server (gpus_per_server), one rank each."""
    rails: int
    """Rails per server: one NIC link per GPU in the [topology] (gpus_per_server)."""
    rail_rate: float
    """Rate of each rail's NIC link (`rate`)."""
    nvlink_rate: float
    """Each GPU's NVLink bandwidth to the NVSwitch (`nvlink_rate`)."""
    nvls: bool
    """The NVSwitch can reduce (NVLink SHARP): [fabric] nvls = true."""
    nics: int
    """The NICs a server has ([fabric] nics; default: one per rail). Only for display and channel counts: the
    rails carry the NICs' total rate."""
    net_latency_s: float
    """One-way latency NIC to NIC across the network: two links' `delay` and the rail switch's `switch_latency`
    (NCCL's graph latencyInter)."""

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus

    @property
    def net_bps(self) -> float:
        """A server's network bandwidth, all rails, per direction (bit/s)."""
        return self.rails * self.rail_rate

    @property
    def channels(self) -> int:
        """Ring channels: one per rail, each ring leaving a server on its rail's NIC."""
        return self.rails

    def describe(self) -> str:
        nic = (f"{self.nics} NICs = {self.rails} rails x {self.rail_rate / 1e9:g} Gb/s" if self.nics != self.rails
               else f"{self.rails} NICs x {self.rail_rate / 1e9:g} Gb/s")
        return (f"{self.nodes} nodes x {self.gpus} GPUs ({self.ranks} ranks), {nic} per node, NVLink "
                f"{self.nvlink_rate / 1e9:g} Gb/s per GPU, NVLS {'yes' if self.nvls else 'no'}")


def nccl_fabric(fabric: str | Path | FabricFile) -> NcclFabric:
    """The NCCL view of a fabric: a built-in fabric's name, a fabric file's path, or a FabricFile. The fabric must
    be `kind = "rail_optimized"`; ScenarioError naming the file and field otherwise."""
    from ..spec import scenario_from_dict

    fab = fabric if isinstance(fabric, FabricFile) else read_fabric(fabric)
    kind = (fab.doc.get("topology") or {}).get("kind")
    if kind != "rail_optimized":
        raise ScenarioError(fab.name, "topology.kind", f"nccl-tests models rail_optimized fabrics (GPU servers with "
                            f"NVLink and one NIC per rail), not {kind!r}")
    topo = scenario_from_dict(dict(fab.doc), fab.name).topology
    return NcclFabric(
        name=fab.name, nodes=topo.sus * topo.servers_per_su, gpus=topo.gpus_per_server, rails=topo.gpus_per_server,
        rail_rate=float(topo.rate), nvlink_rate=float(topo.nvlink_rate), nvls=fab.nvls,
        nics=fab.nics or topo.gpus_per_server,
        net_latency_s=(2 * topo.delay + topo.switch_latency) * 1e-12)
