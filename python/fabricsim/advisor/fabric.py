"""The fabric a job is placed on: its servers with their NICs in hand-out order, racks and pods, and what is busy.

A *server* is a host of the fabric; a *node* of a job takes `interfaces` free NICs of one server (several nodes
may share a server while it has free NICs). Servers have user-facing ids: 1..S in fabric order on the named
fabrics and any fabric file whose [fabric] table says `servers = "numbers"`, the host names otherwise. A *rack* is the set of servers attached to
the same first-hop switches; a *pod* is the set of racks whose switches share the same next-level switches
(one pod on a two-level leaf-spine, one per pod on a 3-tier fat-tree).

GPU fabrics (`rail_optimized`): every GPU is a host of the network, but a *server* is a GPU server, its
gpus_per_server GPUs on one NVSwitch (one NVLink domain), named `su{u}.s{s}`; its "NICs" 0..G-1 are its GPUs
(GPU g drives the NIC on rail g), so a node takes one GPU (`interfaces` = 1) and a server holds
gpus_per_server nodes. A *rack* is a scalable unit's rail leaves (the switches every server of the SU attaches
to) and a *pod* is the scalable unit: rack = pod = SU u. A fabric whose hosts are named as that family names its
GPUs, with its NVSwitches (`fabricsim design --gpus --write` writes an oversubscribed cluster so) is one too. A GPU fabric that names no `switch_model` gets lossless
`input_buffered` switches, as `fabricsim train` assumes (training fabrics are InfiniBand or RoCE with PFC).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..collectives.fabrics import FabricFile, read_fabric
from ..engine import Prepared
from ..errors import ScenarioError
from ..spec import Scenario, scenario_from_dict


@dataclass
class Fabric:
    """A fabric ready for placement: server ids, NICs, racks, pods, and a Prepared scenario for the engines."""

    name: str
    scenario: Scenario
    hosts: list[str]
    ids: list[Any]
    nics: np.ndarray
    nic_order: list[tuple[int, ...]]
    rack: np.ndarray
    pod: np.ndarray
    nic_switch: dict[tuple[int, int], str]
    presets: Mapping[str, list[list[int]]] = field(default_factory=dict)
    """Named placements of this fabric (server-id lists per collective) that the search offers as candidates: its
    data file's [fabric.placements] (`collectives.fabrics`)."""
    gpus: list[list[str]] | None = None
    """On a GPU fabric (`rail_optimized`): per server, its GPUs' host names, GPU g its NIC g (see the module);
    None when the network's hosts are the servers."""
    prepared: Prepared = field(init=False)

    def __post_init__(self) -> None:
        self.index = {sid: i for i, sid in enumerate(self.ids)}
        self.host_index = {h: i for i, h in enumerate(self.hosts)}
        self.prepared = Prepared(self.scenario)
        self.racks = [np.flatnonzero(self.rack == r) for r in range(int(self.rack.max()) + 1)]

    @property
    def n(self) -> int:
        return len(self.hosts)

    def server(self, sid: Any, where: str) -> int:
        """Host index of a user-facing server id; ScenarioError naming `where` if unknown."""
        key = sid
        if isinstance(self.ids[0], int):
            try:
                key = int(sid)
            except (TypeError, ValueError):
                key = None
        if key not in self.index:
            lo, hi = self.ids[0], self.ids[-1]
            raise ScenarioError(where, "server", f"{sid!r} does not exist (servers are {lo}..{hi} on {self.name})")
        return self.index[key]

    def endpoint(self, host: int, nic: int) -> tuple[str, int]:
        """The network endpoint (host name, port) of NIC `nic` of server `host`: on a GPU fabric its GPU `nic`."""
        if self.gpus is not None:
            return (self.gpus[host][nic], 0)
        return (self.hosts[host], nic)

    @property
    def network_hosts(self) -> set[str]:
        """The names of the network's hosts: the servers, or on a GPU fabric their GPUs."""
        return {g for s in self.gpus for g in s} if self.gpus is not None else set(self.hosts)

    def hierarchy(self) -> dict[str, int]:
        """Counts for a summary: GPUs (0 when the hosts are the servers), servers, racks, pods."""
        return {"gpus": sum(map(len, self.gpus)) if self.gpus is not None else 0, "servers": self.n,
                "racks": len(self.racks), "pods": int(self.pod.max()) + 1}

    def all_free(self) -> list[list[int]]:
        """Every NIC free: per host, its NICs in hand-out order."""
        return [list(o) for o in self.nic_order]


def named_fabric(name: str) -> Fabric:
    """A built-in fabric by name (`collectives.fabrics.builtin_fabrics`: fabricsim/_data/fabrics/NAME.toml) or a
    fabric file by path; ScenarioError naming `--fabric` and listing the built-in names if unknown."""
    try:
        return fabric_data(read_fabric(name))
    except ScenarioError as e:
        if e.source == "fabric":
            raise ScenarioError("fabricsim place", "--fabric", e.reason) from None
        raise


def scenario_fabric(path: str | Path) -> Fabric:
    """The fabric of a scenario file (its traffic tables are ignored, its [fabric] table read): servers are its
    hosts, by name unless the table numbers them."""
    return fabric_data(read_fabric(path if isinstance(path, Path) else str(path)))


def fabric_data(fabric: FabricFile) -> Fabric:
    """A Fabric from a fabric read as data (`collectives.fabrics.read_fabric`): its scenario tables, server ids,
    NIC order and named placements."""
    return from_doc({"seed": 1, **fabric.doc}, fabric.name, ids="numbers" if fabric.numbered else "names",
                    nic_order=fabric.nic_order or None, presets=fabric.placements)


def from_doc(doc: dict, name: str, ids: str = "names", nic_order: tuple[int, ...] | None = None,
             presets: Mapping[str, list[list[int]]] | None = None) -> Fabric:
    """A Fabric from a scenario document (fabric tables only), with its named placements `presets` (server ids).
    O(nodes + links)."""
    topo = doc.get("topology")
    if isinstance(topo, dict) and topo.get("kind") == "rail_optimized" and "switch_model" not in topo:
        # Training traffic runs on lossless fabrics (InfiniBand credits, RoCE's PFC): as `fabricsim train`, a GPU
        # fabric that names no switch model gets credit-based lossless switches, so packet runs lose no packet.
        doc = {**doc, "topology": {**topo, "switch_model": "input_buffered"}}
    sc = scenario_from_dict(doc, name)
    if getattr(sc.topology, "kind", None) == "rail_optimized":
        t = sc.topology
        return _gpu_fabric(sc, name, (int(t.sus), int(t.servers_per_su), int(t.gpus_per_server)), ids, nic_order, presets)
    net = sc.topology.network()
    kinds = {nd.name: nd.kind for nd in net.nodes}
    hosts = [nd.name for nd in net.nodes if nd.kind == "host"]
    grid = _gpu_grid(hosts, kinds)
    if grid is not None:
        return _gpu_fabric(sc, name, grid, ids, nic_order, presets)
    if not hosts:
        raise ScenarioError(name, "topology", "has no hosts to place nodes on")
    hidx = {h: i for i, h in enumerate(hosts)}
    nics = np.zeros(len(hosts), dtype=np.int64)
    nic_switch: dict[tuple[int, int], str] = {}
    up: dict[str, set[str]] = {}
    for ln in net.links:
        for a, b in ((ln.a, ln.b), (ln.b, ln.a)):
            if a in hidx:
                nic_switch[(hidx[a], int(nics[hidx[a]]))] = b
                nics[hidx[a]] += 1
            elif kinds.get(a) != "host" and kinds.get(b) != "host":
                up.setdefault(a, set()).add(b)
    order = [tuple(nic_order) if nic_order and len(nic_order) == k else tuple(range(k)) for k in nics.tolist()]
    rack_key: dict[frozenset, int] = {}
    rack = np.empty(len(hosts), dtype=np.int64)
    for i in range(len(hosts)):
        key = frozenset(nic_switch[(i, k)] for k in range(int(nics[i])))
        rack[i] = rack_key.setdefault(key, len(rack_key))
    pod_key: dict[frozenset, int] = {}
    pod = np.empty(len(rack_key), dtype=np.int64)
    for key, r in rack_key.items():
        above = frozenset(x for sw in key for x in up.get(sw, ()) if x not in key)
        pod[r] = pod_key.setdefault(above, len(pod_key))
    sid = list(range(1, len(hosts) + 1)) if ids == "numbers" else hosts
    return Fabric(name, sc, hosts, sid, nics, order, rack, pod, nic_switch, dict(presets or {}))


def _gpu_grid(hosts: list[str], kinds: dict[str, str]) -> tuple[int, int, int] | None:
    """(sus, servers_per_su, gpus_per_server) when a fabric's hosts are GPUs named as the rail_optimized family
    names them (`su{u}.s{s}.g{g}`, every one of the grid, in its order) with the servers' NVSwitches
    `su{u}.s{s}.nvs`, as `fabricsim design --gpus --write` writes an oversubscribed cluster; else None. O(hosts)."""
    import re

    pat = re.compile(r"su(\d+)\.s(\d+)\.g(\d+)")
    got = [pat.fullmatch(h) for h in hosts]
    if not hosts or not all(got):
        return None
    dims = tuple(max(int(m.group(i)) for m in got) + 1 for i in (1, 2, 3))
    from ..topology.rail_optimized import rail_gpus

    if hosts != rail_gpus(*dims) or any(kinds.get(f"su{u}.s{v}.nvs") != "switch"
                                        for u in range(dims[0]) for v in range(dims[1])):
        return None
    return dims  # type: ignore[return-value]


def _gpu_fabric(sc: Scenario, name: str, grid: tuple[int, int, int], ids: str, nic_order: tuple[int, ...] | None,
                presets: Mapping[str, list[list[int]]] | None) -> Fabric:
    """A rail-optimized fabric's GPU servers (see the module) of `grid` = (sus, servers_per_su, gpus_per_server):
    server `su{u}.s{s}` holds GPUs `su{u}.s{s}.g{g}` (`topology.rail_optimized.rail_gpus`'s order), its NIC g on
    rail leaf `su{u}.rail{g}`; rack and pod = SU u. O(GPUs)."""
    sus, s_per, g_per = grid
    servers = [(u, s) for u in range(sus) for s in range(s_per)]
    hosts = [f"su{u}.s{s}" for u, s in servers]
    gpus = [[f"{h}.g{g}" for g in range(g_per)] for h in hosts]
    nics = np.full(len(hosts), g_per, dtype=np.int64)
    order = [tuple(nic_order) if nic_order and len(nic_order) == g_per else tuple(range(g_per))] * len(hosts)
    su = np.asarray([u for u, _ in servers], dtype=np.int64)
    nic_switch = {(i, g): f"su{u}.rail{g}" for i, (u, _) in enumerate(servers) for g in range(g_per)}
    sid = list(range(1, len(hosts) + 1)) if ids == "numbers" else hosts
    return Fabric(name, sc, hosts, sid, nics, order, su, np.arange(sus, dtype=np.int64), nic_switch,
                  dict(presets or {}), gpus)


@dataclass
class Background:
    """A job that keeps running while the new one is placed: its pattern, bytes per message, and nodes."""

    name: str
    pattern: str
    msg_bytes: int
    nodes: list[list[tuple[int, int]]]


def _read_csv(src: str) -> list[dict[str, str]]:
    """The rows of the CSV file `src` as dicts: UTF-8 (a BOM allowed) or UTF-16 with its BOM. ScenarioError
    naming the file (and the row) if it cannot be read, is not text, or holds a NUL byte."""
    import codecs

    try:
        with open(src, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ScenarioError(src, "busy", f"cannot read: {e.strerror or e}") from None
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    try:
        text = data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as e:
        row = data[:e.start].count(b"\n") + 1
        raise ScenarioError(f"{src}: row {row}", "busy", f"is not {'UTF-16' if utf16 else 'UTF-8'} text (byte "
                            f"0x{data[e.start]:02x} at offset {e.start}): save the CSV as UTF-8 text") from None
    if "\0" in text:
        row = text[:text.index("\0")].count("\n") + 1
        raise ScenarioError(f"{src}: row {row}", "busy", "holds a NUL byte: a CSV is text (a binary file?)")
    try:
        return list(csv.DictReader(text.splitlines(keepends=True)))
    except csv.Error as e:
        raise ScenarioError(src, "busy", f"is not a readable CSV: {e}") from None


def read_busy(fabric: Fabric, path: str | Path | list[dict]) -> tuple[list[list[int]], list[Background]]:
    """Parse BUSY.csv (or the same rows as dicts): columns `server` (required), `nic` (blank: the whole server; with `job`: the server's next
    free NIC), `job` (rows with the same job name are the nodes of a background job, in rank order), `pattern`
    and `msg_mb` (the job's, on any of its rows; defaults shift-all-reduce and 10 MiB). Returns the free NICs per host
    and the background jobs. ScenarioError naming the file, row and field on bad input."""
    from ..collectives.patterns import PATTERNS, pattern_name

    if isinstance(path, (str, Path)):
        src = str(path)
        rows = _read_csv(src)
    else:
        src, rows = "busy", [{k: "" if v is None else str(v) for k, v in r.items()} for r in path]
    if rows and "server" not in rows[0]:
        raise ScenarioError(src, "server", "missing column (columns: server, nic, job, pattern, msg_mb)")
    free = fabric.all_free()
    jobs: dict[str, dict] = {}
    whole: set[int] = set()
    for k, row in enumerate(rows, start=2):
        where = f"{src}: row {k}"
        h = fabric.server((row.get("server") or "").strip(), where)
        nic_s = (row.get("nic") or "").strip()
        job = (row.get("job") or "").strip()
        if nic_s:
            try:
                nic = int(nic_s)
            except ValueError:
                raise ScenarioError(where, "nic", f"must be a NIC number, not {nic_s!r}") from None
            if not 0 <= nic < fabric.nics[h]:
                raise ScenarioError(where, "nic", f"server {row['server']} has NICs 0..{fabric.nics[h] - 1}, not {nic}")
            if nic not in free[h]:
                raise ScenarioError(where, "nic", f"NIC {nic} of server {row['server']} is listed twice")
        elif job:
            if not free[h]:
                raise ScenarioError(where, "server", f"server {row['server']} has no free NIC left for job {job!r}")
            nic = free[h][0]
        else:
            if h in whole:
                raise ScenarioError(where, "server", f"server {row['server']} is listed twice")
            whole.add(h)
            free[h] = []
            continue
        free[h].remove(nic)
        if job:
            j = jobs.setdefault(job, {"nodes": [], "pattern": None, "msg_mb": None, "row": k})
            j["nodes"].append([(h, nic)])
            pat = pattern_name((row.get("pattern") or "").strip())
            if pat:
                if pat not in PATTERNS:
                    raise ScenarioError(where, "pattern", f"unknown pattern {pat!r} (one of {', '.join(PATTERNS)})")
                j["pattern"] = pat
            mb = (row.get("msg_mb") or "").strip()
            if mb:
                try:
                    j["msg_mb"] = float(mb)
                except ValueError:
                    j["msg_mb"] = 0.0
                if not j["msg_mb"] > 0:
                    raise ScenarioError(where, "msg_mb", f"must be a positive number of MiB, not {mb!r}")
    bgs = []
    for name, j in jobs.items():
        if len(j["nodes"]) < 2:
            raise ScenarioError(f"{src}: row {j['row']}", "job", f"background job {name!r} has one node; a collective needs two")
        bgs.append(Background(name, j["pattern"] or "shift-all-reduce", int(round((j["msg_mb"] or 10.0) * (1 << 20))), j["nodes"]))
    return free, bgs
