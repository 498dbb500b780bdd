"""Per-rank Chakra traces as numpy columns (decoded by the engine's streaming reader), and `info` over a whole trace.

Node types and collective types are the enum values of Chakra's `et_def.proto`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ScenarioError, SpecError

NODE_TYPES = {0: "INVALID_NODE", 1: "METADATA_NODE", 2: "MEM_LOAD_NODE", 3: "MEM_STORE_NODE", 4: "COMP_NODE",
              5: "COMM_SEND_NODE", 6: "COMM_RECV_NODE", 7: "COMM_COLL_NODE"}
COMM_TYPES = {0: "ALL_REDUCE", 1: "REDUCE", 2: "ALL_GATHER", 3: "GATHER", 4: "SCATTER", 5: "BROADCAST",
              6: "ALL_TO_ALL", 7: "REDUCE_SCATTER", 8: "REDUCE_SCATTER_BLOCK", 9: "BARRIER"}
COMP, SEND, RECV, COLL, MEM_LOAD, MEM_STORE = 4, 5, 6, 7, 2, 3


@dataclass
class RankTrace:
    """One rank's file: `cols` are the reader's columns (id, node_type, duration_micros, comm_*, num_ops,
    tensor_size, data/ctrl dependency CSR), `names` its interned strings."""

    rank: int
    path: str
    cols: dict[str, Any]

    @property
    def n(self) -> int:
        return len(self.cols["id"])

    @property
    def names(self) -> list[str]:
        return self.cols["names"]

    def deps(self, i: int) -> list[int]:
        """Node ids node i waits for (data and control dependencies)."""
        c = self.cols
        d = c["data_deps"][c["data_dep_start"][i]: c["data_dep_start"][i + 1]]
        k = c["ctrl_deps"][c["ctrl_dep_start"][i]: c["ctrl_dep_start"][i + 1]]
        return d.tolist() + k.tolist()

    def pg(self, i: int) -> str | None:
        k = int(self.cols["pg_name"][i])
        return None if k == np.iinfo(np.uint32).max else self.names[k]


def trace_prefix(prefix: str | Path) -> Path:
    """The PREFIX of a trace given as PREFIX or as a folder holding one trace, NAME.{rank}.et (what `fabricsim trace
    synth --out DIR` writes): then DIR/NAME. A folder holding several traces is a ScenarioError naming them."""
    p = Path(prefix)
    if not p.is_dir():
        return p
    pat = re.compile(r"^(.+)\.\d+\.et(\.gz)?$")
    names = sorted({m.group(1) for f in p.iterdir() if (m := pat.match(f.name))})
    if len(names) > 1:
        raise ScenarioError(str(prefix), "", f"the folder holds several traces ({', '.join(names)}): give "
                                             f"{p / names[0]}")
    return p / names[0] if names else p


def load(prefix: str | Path) -> list[RankTrace]:
    """Every `PREFIX.{rank}.et` (or `.et.gz`) file, ranks 0..n−1 without gaps; errors name the file. `prefix` may
    be a folder holding one trace (`trace_prefix`)."""
    from ..checks import path

    p = trace_prefix(path(prefix, "prefix"))
    folder = p.parent if str(p.parent) else Path(".")
    pat = re.compile(re.escape(p.name) + r"\.(\d+)\.et(\.gz)?$")
    found: dict[int, Path] = {}
    if folder.is_dir():
        for f in folder.iterdir():
            m = pat.match(f.name)
            if m:
                found[int(m.group(1))] = f
    if not found:
        raise ScenarioError(str(prefix), "", f"no trace files {p.name}.{{rank}}.et in {folder}")
    missing = [r for r in range(max(found) + 1) if r not in found]
    if missing:
        raise ScenarioError(str(prefix), "", f"rank {missing[0]} has no file ({p.name}.{missing[0]}.et)")
    from .. import _core

    out = []
    for r in range(len(found)):
        try:
            cols = _core.read_chakra(str(found[r]))
        except SpecError as e:
            raise ScenarioError(str(found[r]), e.field.replace(str(found[r]), "").strip(": "), e.reason) from None
        out.append(RankTrace(r, str(found[r]), cols))
    return out


def check_traces(traces: object, name: str = "traces") -> list[RankTrace]:
    """`traces` if it is a non-empty list of RankTrace (what `load` returns), else an ArgumentError saying so."""
    from ..errors import ArgumentError

    if not isinstance(traces, (list, tuple)) or not traces or not all(isinstance(t, RankTrace) for t in traces):
        got = f"{type(traces).__name__} {traces!r}"[:80]
        raise ArgumentError(name, f"expected the list of rank traces fabricsim.chakra.load(prefix) returns, got {got}")
    return list(traces)


def info(traces: list[RankTrace]) -> dict[str, Any]:
    """Node counts by type, bytes by collective type (summed over ranks, as each rank lists its share), point to
    point bytes, and the critical path: the longest dependency chain within a rank, in nodes and in compute
    time (COMP nodes' duration_micros). O(nodes + dependencies)."""
    traces = check_traces(traces)
    counts: dict[str, int] = {}
    coll_bytes: dict[str, int] = {}
    p2p = 0
    longest_nodes, longest_us = 0, 0
    for t in traces:
        c = t.cols
        for code, cnt in zip(*np.unique(c["node_type"], return_counts=True)):
            name = NODE_TYPES.get(int(code), f"type {int(code)}")
            counts[name] = counts.get(name, 0) + int(cnt)
        coll = c["node_type"] == COLL
        for code in np.unique(c["comm_type"][coll]):
            name = COMM_TYPES.get(int(code), f"comm_type {int(code)}")
            coll_bytes[name] = coll_bytes.get(name, 0) + int(c["comm_size"][coll & (c["comm_type"] == code)].sum())
        p2p += int(c["comm_size"][c["node_type"] == SEND].sum())
        index = {int(x): i for i, x in enumerate(c["id"].tolist())}
        depth = [0] * t.n
        time_us = [0] * t.n
        for i in _topo_order(t, index):
            own = int(c["duration_micros"][i]) if c["node_type"][i] == COMP else 0
            best_n, best_t = 0, 0
            for d in t.deps(i):
                j = index.get(d)
                if j is not None:
                    best_n, best_t = max(best_n, depth[j]), max(best_t, time_us[j])
            depth[i], time_us[i] = best_n + 1, best_t + own
        longest_nodes = max(longest_nodes, max(depth, default=0))
        longest_us = max(longest_us, max(time_us, default=0))
    return {"ranks": len(traces), "nodes": counts, "collective_bytes": coll_bytes, "p2p_bytes": p2p,
            "critical_path_nodes": longest_nodes, "critical_path_compute_us": longest_us}


def _topo_order(t: RankTrace, index: dict[int, int]) -> list[int]:
    """Nodes of one rank in dependency order (Kahn); a cycle or a missing dependency is an error naming the node."""
    n = t.n
    ids = t.cols["id"]
    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for d in t.deps(i):
            j = index.get(d)
            if j is None:
                raise ScenarioError(t.path, f"node {int(ids[i])}", f"depends on node {d}, which is not in the trace")
            succ[j].append(i)
            indeg[i] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    order = []
    while ready:
        i = ready.pop()
        order.append(i)
        for k in succ[i]:
            indeg[k] -= 1
            if indeg[k] == 0:
                ready.append(k)
    if len(order) < n:
        stuck = next(i for i in range(n) if indeg[i] > 0)
        raise ScenarioError(t.path, f"node {int(ids[stuck])}", "is on a dependency cycle")
    return order


def read_comm_groups(prefix: str | Path) -> dict[str, list[int]] | None:
    """PREFIX.comm_groups.json as written by `write`, or None when there is none (`prefix` may be a folder holding
    one trace, as `trace.load` reads); a file that is not one is a ScenarioError naming it."""
    f = Path(f"{trace_prefix(prefix)}.comm_groups.json")
    if not f.exists():
        return None
    try:
        doc = json.loads(f.read_bytes())
        return {str(k): [int(r) for r in v] for k, v in doc.items()}
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise ScenarioError(str(f), "", f"not a JSON object of communicator -> rank list ({e})") from None
