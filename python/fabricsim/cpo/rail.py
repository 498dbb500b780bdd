"""The rail-optimized GPU cluster calculator of `fabricsim design --gpus`: servers, rail leaves, spines, switch radix
use and bisection of a DGX SuperPOD-style cluster, and the scenario that simulates it.

A *server* holds `gpus_per_server` GPUs on one NVSwitch (one NVLink domain) and `gpus_per_server × nics_per_gpu`
NICs, split evenly over `rails`; a *scalable unit* (SU) is `su_servers` servers whose NICs on rail r all go to the
SU's rail leaf r (one leaf per rail per SU). A leaf has su_servers × NICs-per-rail down ports and
⌈down / oversubscription⌉ up ports, spread evenly over the spines (⌈up / spines⌉ parallel links to each, so
every leaf reaches every spine); both must fit the switch radix. Spines default to the fewest whose ports take
every leaf uplink and that divide a leaf's uplinks evenly. Bisection: the narrower of half the NICs and half the
leaf uplinks (the cut between two halves of the SUs; within one SU traffic on a rail never leaves its leaf).

NVIDIA's DGX SuperPOD H100 reference: SUs of 32 DGX H100 (8 GPUs, 8 ConnectX-7 400 Gb/s NICs, 8 rails), 8 leaves
per SU, QM9700 switches of 64 × 400 Gb/s; 4 SUs (1,024 GPUs) take 32 leaves and 16 spines, every port used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError

SOURCE = "fabricsim design"


@dataclass(frozen=True)
class RailSpec:
    """What to size: GPUs and how servers, NICs, rails and SUs group them; switch radix and port speed; the
    leaves' oversubscription (down:up, 1 = non-blocking) and optionally the spine count."""

    gpus: int
    gpus_per_server: int = 8
    nics_per_gpu: int = 1
    rails: int | None = None
    """Rails per server (default: one per NIC, gpus_per_server × nics_per_gpu)."""
    su_servers: int = 32
    spines: int | None = None
    oversubscription: float = 1.0
    port_gbps: float = 400.0
    radix: int = 64
    """Ports of every leaf and spine switch (NVIDIA QM9700: 64 × 400 Gb/s NDR)."""
    nvlink_gbps: float = 3600.0
    """Each GPU's NVLink bandwidth per direction (H100 NVLink 4: 450 GB/s)."""


def _positive_int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ScenarioError(SOURCE, name, f"must be a whole number >= 1, got {v!r}")
    return v


def _positive(name: str, v: Any, low: float = 0.0, closed: bool = False) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and (v >= low if closed else v > low)
    if not ok:
        raise ScenarioError(SOURCE, name, f"must be a finite number {'>=' if closed else '>'} {low:g}, got {v!r}")
    return float(v)


class RailDesign:
    """The cluster a RailSpec describes (see the module): every count as an attribute and in `to_json()`.
    ScenarioError naming the option for a design that cannot be built. O(1)."""

    def __init__(self, spec: RailSpec):
        self.spec = s = spec
        gpus = _positive_int("--gpus", s.gpus)
        g = _positive_int("--gpus-per-server", s.gpus_per_server)
        k = _positive_int("--nics-per-gpu", s.nics_per_gpu)
        su = _positive_int("--su-servers", s.su_servers)
        radix = _positive_int("--radix", s.radix)
        o = _positive("--oversubscription", s.oversubscription, 1.0, closed=True)
        _positive("--port-gbps", s.port_gbps)
        _positive("--nvlink-gbps", s.nvlink_gbps)
        self.nics_per_server = g * k
        self.rails = _positive_int("--rails", s.rails) if s.rails is not None else self.nics_per_server
        if self.nics_per_server % self.rails:
            raise ScenarioError(SOURCE, "--rails", f"a server's {self.nics_per_server} NICs ({g} GPUs x {k}) do not "
                                f"split evenly over {self.rails} rails")
        self.nics_per_rail = self.nics_per_server // self.rails
        servers = -(-gpus // g)
        self.servers_per_su = min(su, servers)
        self.sus = -(-servers // self.servers_per_su)
        self.servers = self.sus * self.servers_per_su
        self.gpus = self.servers * g
        self.rounded_up = self.gpus != gpus
        self.leaf_down = self.servers_per_su * self.nics_per_rail
        want_up = math.ceil(self.leaf_down / o - 1e-9)
        self.leaves = self.sus * self.rails
        if self.leaves > radix:
            most = radix // self.rails
            raise ScenarioError(SOURCE, "--gpus", f"{self.sus} SUs x {self.rails} rails = {self.leaves} rail leaves, but "
                                f"a spine of {radix} ports reaches at most {radix}: a two-level rail fabric takes at most "
                                f"{most} SUs ({most * self.servers_per_su * g:,} GPUs) here; more needs a third tier")
        if s.spines is not None:
            self.spines = _positive_int("--spines", s.spines)
        else:
            least = max(1, -(-self.leaves * want_up // radix))
            fits = [x for x in range(least, want_up + 1) if self.leaves * -(-want_up // x) <= radix]
            self.spines = next((x for x in fits if want_up % x == 0), fits[0] if fits else least)
        self.links_per_spine = -(-want_up // self.spines)
        self.leaf_up = self.spines * self.links_per_spine
        if self.leaf_down + self.leaf_up > radix:
            most = max(0, math.floor(radix / (1 + 1 / o)) // self.nics_per_rail)
            raise ScenarioError(SOURCE, "--su-servers" if s.spines is None or self.leaf_up == want_up else "--spines",
                                f"a rail leaf needs {self.leaf_down} server ports + {self.leaf_up} uplinks"
                                f"{f' ({self.spines} spines x {self.links_per_spine})' if self.leaf_up != want_up else ''}"
                                f", more than its {radix} ports: at most {most} servers per SU at {o:g}:1")
        self.spine_ports = self.leaves * self.links_per_spine
        if self.spine_ports > radix:
            raise ScenarioError(SOURCE, "--spines" if s.spines is not None else "--gpus",
                                f"{self.leaves} leaves x {self.links_per_spine} link(s) need {self.spine_ports} ports on "
                                f"each of {self.spines} spines, more than its {radix}: a two-level rail fabric of "
                                f"{radix}-port switches takes at most {radix // self.links_per_spine} leaves "
                                f"({radix // self.links_per_spine // self.rails} SUs) here; more needs a third tier")
        self.nics = self.servers * self.nics_per_server
        self.uplinks = self.leaves * self.leaf_up
        self.switches = self.leaves + self.spines
        self.bisection_tbps = min(self.nics, self.uplinks if self.sus > 1 else self.nics) * s.port_gbps / 2 / 1000
        self.full_bisection_tbps = self.nics * s.port_gbps / 2 / 1000

    def to_json(self) -> dict[str, Any]:
        s = self.spec
        return {
            "gpus": self.gpus, "gpus_asked": s.gpus, "servers": self.servers, "gpus_per_server": s.gpus_per_server,
            "nics_per_server": self.nics_per_server, "nics": self.nics, "rails": self.rails, "sus": self.sus,
            "servers_per_su": self.servers_per_su, "leaves": self.leaves, "leaves_per_su": self.rails,
            "spines": self.spines, "switches": self.switches, "leaf_down_ports": self.leaf_down,
            "leaf_up_ports": self.leaf_up, "links_per_leaf_spine_pair": self.links_per_spine,
            "leaf_radix_used": self.leaf_down + self.leaf_up, "spine_radix_used": self.spine_ports, "radix": s.radix,
            "leaf_radix_use": round((self.leaf_down + self.leaf_up) / s.radix, 4),
            "spine_radix_use": round(self.spine_ports / s.radix, 4),
            "oversubscription": round(self.leaf_down / self.leaf_up, 4), "port_gbps": s.port_gbps,
            "nic_leaf_links": self.nics, "leaf_spine_links": self.uplinks,
            "bisection_tbps": self.bisection_tbps, "non_blocking_bisection_tbps": self.full_bisection_tbps,
            "nvlink_gbps_per_gpu": s.nvlink_gbps,
        }

    def writable_as_family(self) -> bool:
        """Whether the `rail_optimized` topology family builds exactly this network: one NIC per GPU on rail g,
        and ⌈servers_per_su / spines⌉ links from each leaf to each spine (the family is non-blocking)."""
        return (self.spec.nics_per_gpu == 1 and self.rails == self.spec.gpus_per_server
                and self.links_per_spine == -(-self.servers_per_su // self.spines))

    def scenario(self, collective_size: str = "64MiB") -> str:
        """A runnable scenario TOML: this cluster (lossless input-buffered switches) and a hierarchical all-reduce
        of `collective_size` over every GPU (NVLink reduce-scatter, a ring per rail across servers, NVLink
        all-gather). The `rail_optimized` family when it builds this network exactly (with NCCL's PXN routing);
        otherwise a `custom` topology with the family's names, rates and routing weights, where least-cost
        routing sends cross-rail traffic through a spine (the family's cross_rail = "spine")."""
        s = self.spec
        head = (f"# Written by `fabricsim design --gpus {s.gpus} --write`: {self.gpus} GPUs on {self.servers} servers "
                f"of {s.gpus_per_server}, {self.sus} SU(s) of {self.servers_per_su}, {self.rails} rails,\n"
                f"# {self.leaves} rail leaves and {self.spines} spines of {s.radix} x {s.port_gbps:g} Gb/s, "
                f"{self.leaf_down}:{self.leaf_up} at the leaves; bisection {self.bisection_tbps:g} Tb/s.\n")
        coll = (f'\n[[collectives]]\nkind = "all_reduce"\nalgorithm = "hierarchical"\nranks = "all"\n'
                f'size = "{collective_size}"\npacket_size = 4096\nlocal = {s.gpus_per_server}\n')
        rate, nvl = f"{s.port_gbps:g}Gbps", f"{s.nvlink_gbps:g}Gbps"
        if self.writable_as_family():
            return (head + f'\n[topology]\nkind = "rail_optimized"\nsus = {self.sus}\nservers_per_su = {self.servers_per_su}\n'
                    f"gpus_per_server = {s.gpus_per_server}\nspines = {self.spines}\nrate = \"{rate}\"\n"
                    f'nvlink_rate = "{nvl}"\nswitch_model = "input_buffered"     # lossless: collectives need every packet\n'
                    + coll)
        if self.nics_per_rail != 1 or s.nics_per_gpu != 1:
            raise ScenarioError(SOURCE, "--write", f"the simulator models one NIC per GPU, GPU g on rail g; this design "
                                f"has {s.nics_per_gpu} NIC(s) per GPU on {self.rails} rails (size it without --write, "
                                f"or give --nics-per-gpu 1)")
        return head + self._custom(rate, nvl) + coll

    def _custom(self, rate: str, nvl: str) -> str:
        """The network as a `custom` topology: nodes and links in the family's order and names."""
        s = self.spec
        g = s.gpus_per_server
        both = f"{s.port_gbps + s.nvlink_gbps:g}Gbps"
        servers = [f"su{u}.s{v}" for u in range(self.sus) for v in range(self.servers_per_su)]
        gpus = [f"{sv}.g{x}" for sv in servers for x in range(g)]
        sw = 'kind = "switch", model = "input_buffered"'
        nodes = [f'{{name = "{x}", kind = "host"}}' for x in gpus]
        nodes += [f'{{name = "{x}.nic", {sw}}}' for x in gpus]
        nodes += [f'{{name = "{sv}.nvs", {sw}, latency = "300ns"}}' for sv in servers]
        nodes += [f'{{name = "su{u}.rail{r}", {sw}}}' for u in range(self.sus) for r in range(self.rails)]
        nodes += [f'{{name = "spine{i}", {sw}}}' for i in range(self.spines)]
        links = [f'{{a = "{x}", b = "{x}.nic", rate = "{both}"}}' for x in gpus]
        links += [f'{{a = "{x.rsplit(".g", 1)[0]}.nvs", b = "{x}.nic", rate = "{nvl}", weight = 3}}' for x in gpus]
        links += [f'{{a = "{x}.nic", b = "{x.split(".")[0]}.rail{int(x.rsplit(".g", 1)[1])}", rate = "{rate}", '
                  f'delay = "500ns", weight = 2}}' for x in gpus]
        links += [f'{{a = "su{u}.rail{r}", b = "spine{i}", rate = "{rate}", delay = "500ns", weight = 2}}'
                  for u in range(self.sus) for r in range(self.rails) for i in range(self.spines)
                  for _ in range(self.links_per_spine)]
        return ("# A custom topology: the rail_optimized family builds only non-blocking leaves. Weights: NVLink 3,\n"
                "# network 2 (traffic inside a server stays on NVLink; cross-rail traffic goes through a spine).\n"
                '[topology]\nkind = "custom"\nnodes = [\n  ' + ",\n  ".join(nodes) + ",\n]\nlinks = [\n  "
                + ",\n  ".join(links) + ",\n]\n")


def write(design: RailDesign, path: str | Path, collective_size: str = "64MiB") -> Path:
    """Write `design.scenario()` to `path` (a .toml file); ScenarioError naming --write if it cannot."""
    p = Path(path)
    if p.suffix != ".toml":
        raise ScenarioError(SOURCE, "--write", f"'{p}' must be a .toml file")
    text = design.scenario(collective_size)
    try:
        p.write_text(text)
    except OSError as e:
        raise ScenarioError(SOURCE, "--write", f"cannot write '{p}': {e.strerror or e}") from None
    return p
