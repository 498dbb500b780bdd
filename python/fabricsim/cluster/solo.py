"""Solo profiles: one iteration of a job alone on its placement, run once per canonical shape by the flow engine,
reduced to its time and the bytes it puts on each contention resource; and the full co-simulation that checks them.

Contention resources. A directed link that touches a host belongs to one NIC, hence to one node of one job
(servers are not shared between jobs): it never carries two jobs, and is no resource. The links between switches
are grouped as ECMP spreads traffic over them: the up-links of a switch (towards switches farther from the hosts)
form one resource, the down-links into a switch another, of the summed capacity; links between switches at the
same distance from the hosts stay one resource each. This is the fluid view of ECMP: a resource's bytes are what
the hash spreads over its links, in expectation, rather than one draw's collisions.

Canonical shapes. On a symmetric two-level fabric (every rack alike: hosts, NIC wiring, leaves, their links to
the same spines), a placement's solo profile depends only on which ranks share a rack and which share a server:
the racks relabelled 0, 1, ... and the servers of each rack 0, 1, ... in order of first appearance in rank order.
One flow-engine run serves every placement of that shape; on a `leaf_spine` fabric it runs on a copy with only
as many racks as the shape uses (the same spines, so the same paths; a 1-rack run on the 6,144-server fabric
takes 0.2 ms instead of 30 ms). Other fabrics key a profile by its exact hosts and run on the whole fabric.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ScenarioError
from ..advisor.fabric import Fabric, from_doc
from ..advisor.score import add_collective
from ..advisor.search import assign_nics
from ..workload import Workload


class Resources:
    """A fabric's directed links grouped into contention resources (see the module), with their capacity in
    bytes/s. `row_res[offset[node] + port]` is the resource of directed link (node, port), -1 for host links.
    On a symmetric two-level fabric `table[rack, 2q]` is the up resource and `table[rack, 2q + 1]` the down
    resource of the rack's q-th leaf (leaves ordered by the NIC of the rack's first host that reaches them);
    otherwise `table` is None. O(nodes + links)."""

    def __init__(self, fabric: Fabric):
        net = fabric.scenario.topology.network()
        names = [nd.name for nd in net.nodes]
        index = {nm: i for i, nm in enumerate(names)}
        host = np.asarray([nd.kind == "host" for nd in net.nodes])
        ports: list[list[tuple[int, float]]] = [[] for _ in names]
        for ln in net.links:
            a, b = index[ln.a], index[ln.b]
            ports[a].append((b, float(ln.rate)))
            ports[b].append((a, float(ln.rate)))
        self.names_of_nodes = names
        self.offset = np.concatenate([[0], np.cumsum([len(p) for p in ports])]).astype(np.int64)
        level = np.full(len(names), -1, dtype=np.int64)
        queue = deque(int(i) for i in np.flatnonzero(host))
        level[host] = 0
        while queue:
            a = queue.popleft()
            for b, _ in ports[a]:
                if level[b] < 0:
                    level[b] = level[a] + 1
                    queue.append(b)
        self.level = level
        keys: dict[tuple, int] = {}
        cap: list[float] = []
        labels: list[str] = []
        row_res = np.full(int(self.offset[-1]), -1, dtype=np.int64)
        for a, plist in enumerate(ports):
            for p, (b, rate) in enumerate(plist):
                if host[a] or host[b]:
                    continue
                if level[b] > level[a]:
                    key, label = ("up", a), f"{names[a]} up"
                elif level[b] < level[a]:
                    key, label = ("down", b), f"into {names[b]}"
                else:
                    key, label = ("link", a, p), f"{names[a]}->{names[b]}"
                r = keys.get(key)
                if r is None:
                    r = keys[key] = len(cap)
                    cap.append(0.0)
                    labels.append(label)
                cap[r] += rate / 8.0
                row_res[self.offset[a] + p] = r
        self.row_res = row_res
        self.capacity = np.asarray(cap, dtype=np.float64)
        self.labels = labels
        self.keys = keys
        self.table, self.slot_of = self._two_level(fabric, names, index, host, ports)

    def _two_level(self, fabric: Fabric, names, index, host, ports):
        """The (rack, slot) -> resource table if the fabric is a symmetric two-level Clos, else (None, None)."""
        level = self.level
        if level.max(initial=0) != 2 or (level < 0).any():
            return None, None
        sizes = {len(r) for r in fabric.racks}
        if len(sizes) != 1 or len({tuple(o) for o in fabric.nic_order}) != 1 or len(set(fabric.nics.tolist())) != 1:
            return None, None
        for a, plist in enumerate(ports):
            for b, _ in plist:
                if not host[a] and not host[b] and level[a] == level[b]:
                    return None, None
        rack_leaves = []
        for members in fabric.racks:
            h0 = int(members[0])
            leaves: list[int] = []
            for k in range(int(fabric.nics[h0])):
                sw = index[fabric.nic_switch[(h0, k)]]
                if sw not in leaves:
                    leaves.append(sw)
            rack_leaves.append(leaves)
        wiring0 = None
        for r, members in enumerate(fabric.racks):
            pos = {sw: q for q, sw in enumerate(rack_leaves[r])}
            for h in members.tolist():
                w = tuple(pos.get(index[fabric.nic_switch[(h, k)]], -1) for k in range(int(fabric.nics[h])))
                rates = tuple(rate for _, rate in ports[index[fabric.hosts[h]]])
                if wiring0 is None:
                    wiring0 = (w, rates)
                if (w, rates) != wiring0:
                    return None, None
        seen: set[int] = set()
        ups = None
        for leaves in rack_leaves:
            if seen & set(leaves) or len(leaves) != len(rack_leaves[0]):
                return None, None
            seen |= set(leaves)
            up = [sorted((names[b], rate) for b, rate in ports[sw] if not host[b]) for sw in leaves]
            if ups is None:
                ups = up
            if up != ups:
                return None, None
        q = len(rack_leaves[0])
        table = np.empty((len(fabric.racks), 2 * q), dtype=np.int64)
        for r, leaves in enumerate(rack_leaves):
            for j, sw in enumerate(leaves):
                table[r, 2 * j] = self.keys[("up", sw)]
                table[r, 2 * j + 1] = self.keys[("down", sw)]
        slot_of = np.full((len(self.capacity), 2), -1, dtype=np.int64)
        for r in range(table.shape[0]):
            for s in range(table.shape[1]):
                slot_of[table[r, s]] = (r, s)
        return table, slot_of

    def per_resource(self, columns: dict) -> np.ndarray:
        """Bytes a record's run put on each resource (the `queues.tx_bytes` of its links, summed). O(links)."""
        rows = self.offset[np.asarray(columns["queues.node"], dtype=np.int64)] + np.asarray(columns["queues.port"], dtype=np.int64)
        res = self.row_res[rows]
        keep = res >= 0
        return np.bincount(res[keep], weights=np.asarray(columns["queues.tx_bytes"], dtype=np.float64)[keep],
                           minlength=len(self.capacity))


@dataclass(frozen=True)
class Profile:
    """One iteration of a job alone on its placement: `t_solo` seconds, and `bytes[i]` on resource `res[i]` of
    the full fabric (resources it does not touch are left out; `res` is sorted and distinct)."""

    t_solo: float
    res: np.ndarray
    bytes: np.ndarray

    @property
    def rates(self) -> np.ndarray:
        """Bytes/s the job puts on each of its resources when it runs at its solo speed."""
        return self.bytes / self.t_solo


@dataclass(frozen=True)
class _Canonical:
    t_solo: float
    rack_label: np.ndarray
    slot: np.ndarray
    bytes: np.ndarray


class SoloCache:
    """Solo profiles of one collective (`pattern`, `msg_bytes` per message, `interfaces` NICs per node, `packet`)
    on `fabric`, at `fidelity` (flow, or hybrid or packet to confirm), ECMP seed `seed`, cached by canonical shape (see the module). `runs` counts engine
    runs, `hits` the profiles served from the cache, `engine_s` the wall time inside the engine. Share one cache
    between cluster runs on the same fabric and job spec (seeds, policies): it changes no result, only time."""

    def __init__(self, fabric: Fabric, pattern: str, msg_bytes: int, interfaces: int = 1, packet: int = 1024,
                 seed: int = 1, fidelity: str = "flow"):
        self.fabric = fabric
        self.fidelity = fidelity
        self.pattern, self.msg_bytes, self.interfaces, self.packet, self.seed = pattern, int(msg_bytes), interfaces, packet, seed
        self.resources = Resources(fabric)
        self.symmetric = self.resources.table is not None
        self._canon: dict[tuple, _Canonical] = {}
        self._exact: dict[tuple, Profile] = {}
        self._sub: dict[int, tuple[Fabric, Resources]] = {}
        self.runs = 0
        self.hits = 0
        self.engine_s = 0.0

    def shape(self, hosts: Sequence[int]) -> tuple[tuple, list[int]]:
        """The canonical shape of `hosts` (per rank: rack label, server label within its rack, both in order of
        first appearance) and the racks of the labels. O(ranks)."""
        rack_of = self.fabric.rack
        labels: dict[int, int] = {}
        servers: dict[int, int] = {}
        per_rack: dict[int, int] = {}
        key = []
        for h in hosts:
            r = int(rack_of[h])
            lab = labels.setdefault(r, len(labels))
            if h not in servers:
                servers[h] = per_rack.get(r, 0)
                per_rack[r] = servers[h] + 1
            key.append((lab, servers[h]))
        return tuple(key), list(labels)

    def profile(self, hosts: Sequence[int]) -> Profile:
        """The solo profile of the job on `hosts` (host index per rank; a host repeats for nodes sharing it)."""
        hosts = tuple(int(h) for h in hosts)
        if not self.symmetric:
            if hosts in self._exact:
                self.hits += 1
                return self._exact[hosts]
            t, per_res = self._run(self.fabric, self.resources, hosts)
            res = np.flatnonzero(per_res)
            prof = Profile(t, res, per_res[res])
            self._exact[hosts] = prof
            return prof
        key, racks = self.shape(hosts)
        canon = self._canon.get(key)
        if canon is None:
            canon = self._run_canonical(key, len(racks))
            self._canon[key] = canon
        else:
            self.hits += 1
        rack_map = np.asarray(racks, dtype=np.int64)
        res = self.resources.table[rack_map[canon.rack_label], canon.slot]
        order = np.argsort(res, kind="stable")
        return Profile(canon.t_solo, res[order], canon.bytes[order])

    def _target(self, racks: int) -> tuple[Fabric, Resources]:
        """The fabric a shape of `racks` racks runs on: a `leaf_spine` copy with that many racks, else the fabric."""
        sc = self.fabric.scenario
        if getattr(sc.topology, "kind", None) != "leaf_spine" or racks >= len(self.fabric.racks):
            return self.fabric, self.resources
        if racks not in self._sub:
            doc = sc.model_dump(exclude_unset=True)
            doc["topology"] = {**doc["topology"], "racks": racks}
            sub = from_doc(doc, f"{self.fabric.name} ({racks} racks)", ids="numbers", nic_order=self.fabric.nic_order[0])
            res = Resources(sub)
            if res.table is None:  # not expected for a leaf_spine copy of a symmetric fabric
                return self.fabric, self.resources
            self._sub[racks] = (sub, res)
        return self._sub[racks]

    def _run_canonical(self, key: tuple, n_racks: int) -> _Canonical:
        fab, res = self._target(n_racks)
        hosts = tuple(int(fab.racks[r][s]) for r, s in key)
        t, per_res = self._run(fab, res, hosts)
        used = np.flatnonzero(per_res)
        where = res.slot_of[used]
        return _Canonical(t, where[:, 0].copy(), where[:, 1].copy(), per_res[used])

    def _run(self, fab: Fabric, res: Resources, hosts: tuple[int, ...]) -> tuple[float, np.ndarray]:
        """One iteration on `fab` alone: (seconds, bytes per resource of `fab`). One engine run at `fidelity`."""
        wl = Workload(fab.scenario)
        nodes = assign_nics(fab, hosts, fab.all_free(), self.interfaces)
        add_collective(wl, fab, nodes, self.pattern, self.msg_bytes, self.packet)
        t0 = time.perf_counter()
        rec = fab.prepared.run(wl, self.seed, self.fidelity)
        self.engine_s += time.perf_counter() - t0
        self.runs += 1
        done = rec.columns["flows.complete_ps"]
        # The flow engine marks a flow that never completed with -1, the packet engine with u64::MAX.
        if done.size == 0 or (done < 0).any() or (done.dtype.kind == "u" and (done == np.iinfo(done.dtype).max).any()):
            raise ScenarioError(self.fabric.name, "placement", f"a job alone on servers {[self.fabric.ids[h] for h in hosts]} "
                                f"did not complete ({rec.incomplete_reason()})")
        return int(done.max()) * 1e-12, res.per_resource(rec.columns)


def cosimulate(fabric: Fabric, placements: Sequence[Sequence[int]], iterations: Sequence[int], pattern: str,
               msg_bytes: int, interfaces: int = 1, packet: int = 1024, seed: int = 1) -> np.ndarray:
    """Every job's iterations chained (iteration k + 1 after iteration k is delivered) in ONE flow-engine run, all
    jobs starting at 0 on their `placements` (host index per rank): the reference the job-level model is checked
    against. Returns each job's finish time (s). O(one run of all the jobs' messages)."""
    wl = Workload(fabric.scenario)
    free = fabric.all_free()
    spans = []
    for hosts, its in zip(placements, iterations):
        nodes = assign_nics(fabric, hosts, free, interfaces)
        m0 = wl.n_messages
        prev = None
        for _ in range(int(its)):
            prev = add_collective(wl, fabric, nodes, pattern, msg_bytes, packet, after=[prev] if prev is not None else None)
        spans.append((m0, wl.n_messages))
    rec = fabric.prepared.run(wl, seed, "flow")
    done = rec.columns["flows.complete_ps"]
    if (done < 0).any():
        raise ScenarioError(fabric.name, "placement", f"the co-simulation did not complete ({rec.incomplete_reason()})")
    return np.asarray([int(done[a:b].max()) * 1e-12 for a, b in spans])
