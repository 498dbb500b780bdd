"""Rescaling a Chakra trace to another data-parallel degree: an N-rank trace from an n-rank one of the same model.

A trace's ranks are laid out tp × pp × dp, Megatron-LM's default order: rank = t + tp·(d + dp·p), tensor
parallel fastest, then data parallel, then pipeline parallel (what `trace synth dp-tp` writes: rank = d·tp + t).
A data-parallel replica d is the tp·pp ranks with that d; its data-parallel groups are the dp ranks with the same
(t, p). Rescaling grows (or shrinks) only dp, keeping the model and each replica's work fixed (weak scaling: the
global batch grows with dp):

- new rank R = (t, d', p) runs the program of old rank (t, d' mod dp, p): the same nodes, ids, dependencies,
  durations and sizes; point-to-point peers (which must be in the rank's own replica) move to the same (t, p)
  in replica d';
- a communicator within one replica (tensor or pipeline parallel) is copied into each new replica: replica d' < dp
  keeps its name, a new one gets a new name, `{stem}{d'}` when every old replica's copy is named `{stem}{d}` (as
  `trace synth dp-tp` names its "tp{d}"), else `{name}.dp{d'}`;
- a data-parallel communicator keeps its name and spans the new dp ranks (a trace without communicators is pure
  data parallel: tp = pp = 1, every collective over all ranks, as before);
- collective sizes over a data-parallel group: NCCL's per-rank buffers for a fixed model. ALL_REDUCE (the
  gradient bucket), REDUCE, BROADCAST: comm_size unchanged (the per-rank buffer is the rank's shard of the model,
  whatever dp is). REDUCE_SCATTER: unchanged (the per-rank input is the full buffer; each rank's output shard,
  comm_size / dp, shrinks as dp grows). ALL_GATHER: unchanged when comm_size is the gathered buffer (fabricsim's
  reading, `all_gather_size="total"`: each rank's block, comm_size / dp, shrinks); when it is each rank's block
  (ASTRA-sim's reading, "block") the block shrinks with the buffer fixed: comm_size · dp / dp' (it must divide).
  ALL_TO_ALL over a data-parallel group (expert parallelism across replicas) is refused: with each rank's
  program fixed its experts would stay, so the model would grow with dp. GATHER, SCATTER and
  REDUCE_SCATTER_BLOCK over it are refused too (the lowering models none of them). Collectives within a replica
  are copied unchanged.

Refused, each as one ScenarioError: a layout that does not divide the ranks, a communicator that spans replicas
without being a data-parallel group, a send or receive between replicas (a hand-written collective across
them), a trace with a single replica (no data-parallel communication to grow), fewer than 2 replicas asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ScenarioError
from .trace import COLL, COMM_TYPES, RECV, SEND, RankTrace, check_traces

NO_NAME = np.iinfo(np.uint32).max
ALL_GATHER, ALL_TO_ALL = 2, 6
REFUSED_OVER_DP = {ALL_TO_ALL: "its experts per rank would stay, so the model would grow with dp",
                   3: "the lowering does not model it", 4: "the lowering does not model it",
                   8: "the lowering does not model it"}
"""comm_type → why a collective of that type over a data-parallel group is not rescaled."""


@dataclass(frozen=True)
class Layout:
    """tp × pp × dp ranks, rank = t + tp·(d + dp·p)."""

    tp: int
    pp: int
    dp: int

    @property
    def ranks(self) -> int:
        return self.tp * self.pp * self.dp

    def rank(self, t: int, d: int, p: int) -> int:
        return t + self.tp * (d + self.dp * p)

    def coords(self, r: int) -> tuple[int, int, int]:
        """(t, d, p) of rank r."""
        return r % self.tp, r // self.tp % self.dp, r // (self.tp * self.dp)

    def __str__(self) -> str:
        return f"tp {self.tp} × pp {self.pp} × dp {self.dp}"


@dataclass
class Rescaled:
    """The rescaled trace: one column dict per rank (as `_core.read_chakra` returns them, `synth.write` writes
    them), its communicators (None when the input had none), and the layouts before and after."""

    traces: list[dict[str, Any]]
    comm_groups: dict[str, list[int]] | None
    before: Layout
    after: Layout


def _groups_used(traces: list[RankTrace]) -> dict[str | None, tuple[int, int]]:
    """Every communicator a COLL node names (None: no pg_name, all ranks) → (rank, node index) of its first use."""
    used: dict[str | None, tuple[int, int]] = {}
    for t in traces:
        c = t.cols
        for i in np.flatnonzero(c["node_type"] == COLL).tolist():
            k = int(c["pg_name"][i])
            used.setdefault(None if k == NO_NAME else t.names[k], (t.rank, i))
    return used


def _peers(traces: list[RankTrace]) -> set[tuple[int, int]]:
    """(rank, peer) of every send and receive."""
    out: set[tuple[int, int]] = set()
    for t in traces:
        c = t.cols
        for col, ty in (("comm_dst", SEND), ("comm_src", RECV)):
            out.update((t.rank, int(q)) for q in np.unique(c[col][c["node_type"] == ty]).tolist())
    return out


def _roles(layout: Layout, groups: dict[str | None, list[int]],
           peers: set[tuple[int, int]] = frozenset()) -> dict[str | None, str] | str:
    """Each communicator's role under `layout`: "dp" (a data-parallel group: the dp ranks of one (t, p)) or
    "replica" (all its ranks in one replica); else the reason the layout does not fit (a str): a communicator
    spanning replicas otherwise, no data-parallel communicator at all, or (for inference) a send or receive
    between replicas."""
    for r, q in sorted(peers):
        if not 0 <= q < layout.ranks or layout.coords(q)[1] != layout.coords(r)[1]:
            return f"rank {r} sends to or receives from rank {q}, in another data-parallel replica ({layout})"
    roles: dict[str | None, str] = {}
    for g, ranks in groups.items():
        co = [layout.coords(r) for r in ranks]
        if len({d for _, d, _ in co}) <= 1:
            roles[g] = "replica"
        elif len({(t, p) for t, _, p in co}) == 1 and sorted(d for _, d, _ in co) == list(range(layout.dp)):
            roles[g] = "dp"
        else:
            shown = "all ranks" if g is None else f"communicator '{g}'"
            listed = ranks if len(ranks) <= 8 else [*ranks[:8], "..."]
            return (f"{shown} (ranks {listed}) spans data-parallel replicas without being a data-parallel group of "
                    f"{layout} (rank = t + tp·(d + dp·p))")
    if "dp" not in roles.values():
        return f"no communicator is a data-parallel group of {layout}: its replicas do not communicate, nothing to grow"
    return roles


def infer_layout(n: int, groups: dict[str | None, list[int]], peers: set[tuple[int, int]] = frozenset()) -> Layout | None:
    """The layout with the smallest replica (tp·pp; tp before pp on a tie) under which every communicator is a
    data-parallel group or lies within one replica, some communicator is data parallel, every send and receive
    (`peers`: (rank, peer)) stays within a replica, and there are at least 2 replicas; None if there is none.
    O(divisors × (group members + peers))."""
    for size in range(1, n // 2 + 1):
        if n % size:
            continue
        for tp in [d for d in range(size, 0, -1) if size % d == 0]:
            layout = Layout(tp, size // tp, n // size)
            if isinstance(_roles(layout, groups, peers), dict):
                return layout
    return None


def rescale(traces: list[RankTrace], ranks: int | None = None, *, dp: int | None = None, tp: int | None = None,
            pp: int | None = None, comm_groups: dict[str, list[int]] | None = None, all_gather_size: str = "total",
            source: str = "trace") -> Rescaled:
    """The trace grown (or shrunk) to `ranks` ranks, or to `dp` data-parallel replicas (give one of them), keeping
    the model and each replica's work fixed (see the module docstring for what happens to each node). `tp` and
    `pp` give the trace's layout (rank = t + tp·(d + dp·p)); without them it is inferred from `comm_groups` (the
    smallest replica under which every communicator is data parallel or within a replica; tp = pp = 1 without
    communicators). `all_gather_size` is how an all-gather's comm_size is read ("total" or "block", as `lower`).
    Raises ScenarioError naming `source` (the trace), a rank's file and node, or the argument (source "", field
    "ranks", "dp", "tp", "pp" or "all_gather_size"). O(nodes)."""
    from ..checks import _is_int

    traces = check_traces(traces)
    n = len(traces)
    if all_gather_size not in ("total", "block"):
        raise ScenarioError("", "all_gather_size", f"must be 'total' or 'block', not {all_gather_size!r}")
    if (ranks is None) == (dp is None):
        raise ScenarioError("", "ranks", "give the new size: the ranks or the data-parallel degree (one of them)")
    for key, v in (("ranks", ranks), ("dp", dp), ("tp", tp), ("pp", pp)):
        if v is not None and (not _is_int(v) or not 1 <= int(v) <= 2**31):
            raise ScenarioError("", key, f"must be a whole number of at least 1 (and at most 2^31), not {v!r}")
    ranks, dp, tp, pp = (None if v is None else int(v) for v in (ranks, dp, tp, pp))
    if comm_groups is not None and not isinstance(comm_groups, dict):
        raise ScenarioError("", "comm_groups", f"expected a dict of communicator -> ranks, not {type(comm_groups).__name__}")
    groups: dict[str | None, list[int]] = {str(k): sorted(int(r) for r in v) for k, v in (comm_groups or {}).items()}
    for g in _groups_used(traces):
        groups.setdefault(g, list(range(n)))
    if tp is None and pp is None:
        peers = _peers(traces)
        layout = infer_layout(n, groups, peers)
        if layout is None:
            why = _roles(Layout(1, 1, n), groups, peers)
            raise ScenarioError(source, "", f"{why}; no other tp × pp layout (rank = t + tp·(d + dp·p)) fits either")
    else:
        size = (tp or 1) * (pp or 1)
        if n % size:
            raise ScenarioError("", "tp", f"tp × pp = {size} does not divide the trace's {n} ranks")
        layout = Layout(tp or 1, pp or 1, n // size)
    if layout.dp < 2:
        raise ScenarioError(source, "", f"{layout}: a single data-parallel replica has no data-parallel "
                            "communication to grow")
    _check_p2p(traces, layout)
    roles = _roles(layout, groups)
    if isinstance(roles, str):
        raise ScenarioError(source, "", roles)
    per = layout.tp * layout.pp
    if ranks is not None and ranks % per:
        raise ScenarioError("", "ranks", f"{ranks} is not a multiple of the replica's tp × pp = {per} ranks ({layout})")
    new_dp = dp if dp is not None else ranks // per
    if new_dp < 2:
        raise ScenarioError("", "dp" if dp is not None else "ranks",
                            f"{new_dp} data-parallel replica: a rescaled trace needs at least 2")
    after = Layout(layout.tp, layout.pp, new_dp)
    _check_nodes(traces, layout, roles, all_gather_size, new_dp)
    names = _new_names(layout, after, groups, roles, source)
    out_groups: dict[str, list[int]] = {}
    for g, members in groups.items():
        if g is None:
            continue
        co = [layout.coords(r) for r in members]
        if roles[g] == "dp":
            t, _, p = co[0]
            out_groups[g] = [after.rank(t, d, p) for d in range(new_dp)]
    for (g, d2), name in names.items():
        out_groups[name] = [after.rank(t, d2, p) for t, _, p in (layout.coords(r) for r in groups[g])]
    out = [_rank(traces[layout.rank(*_source(after, layout, R))], layout, after, R, groups, roles, names,
                 all_gather_size) for R in range(after.ranks)]
    return Rescaled(out, out_groups if comm_groups else None, layout, after)


def _source(after: Layout, before: Layout, r: int) -> tuple[int, int, int]:
    """(t, d, p) of the old rank whose program new rank r runs."""
    t, d, p = after.coords(r)
    return t, d % before.dp, p


def _check_p2p(traces: list[RankTrace], layout: Layout) -> None:
    """Refuse a send or receive between replicas, naming its node."""
    for tr in traces:
        c = tr.cols
        _, d, _ = layout.coords(tr.rank)
        for i in np.flatnonzero((c["node_type"] == SEND) | (c["node_type"] == RECV)).tolist():
            peer = int(c["comm_dst"][i] if c["node_type"][i] == SEND else c["comm_src"][i])
            if not 0 <= peer < layout.ranks or layout.coords(peer)[1] != d:
                raise ScenarioError(tr.path, f"node {int(c['id'][i])}", f"a {'send to' if c['node_type'][i] == SEND else 'receive from'} "
                                    f"rank {peer}, outside its data-parallel replica ({layout}): point-to-point traffic "
                                    "between replicas (a collective written out by hand) is not rescaled")


def _check_nodes(traces: list[RankTrace], layout: Layout, roles: dict, all_gather_size: str, new_dp: int) -> None:
    """Refuse a collective type over a data-parallel group that `REFUSED_OVER_DP` lists, and an all-gather block
    that does not divide (block reading)."""
    for tr in traces:
        c = tr.cols
        for i in np.flatnonzero(c["node_type"] == COLL).tolist():
            k = int(c["pg_name"][i])
            g = None if k == NO_NAME else tr.names[k]
            if roles.get(g) != "dp":
                continue
            ct, size = int(c["comm_type"][i]), int(c["comm_size"][i])
            if ct in REFUSED_OVER_DP:
                raise ScenarioError(tr.path, f"node {int(c['id'][i])}", f"{COMM_TYPES[ct]} over the data-parallel group "
                                    f"is not rescaled: {REFUSED_OVER_DP[ct]}")
            if ct == ALL_GATHER and all_gather_size == "block" and size * layout.dp % new_dp:
                raise ScenarioError(tr.path, f"node {int(c['id'][i])}", f"ALL_GATHER block of {size} B × dp {layout.dp} / "
                                    f"{new_dp} is not a whole number of bytes")


def _new_names(before: Layout, after: Layout, groups: dict, roles: dict, source: str) -> dict[tuple[str, int], str]:
    """(replica communicator, new replica d') → its name there, for every replica communicator and every new
    replica d' that copies its replica (d' < dp keeps the name). A slot is the communicators at the same (t, p)
    positions in every replica (several on the same positions: in name order); a slot whose copy in every old
    replica d is named `{stem}{d}` gets `{stem}{d'}`, any other `{name}.dp{d'}`."""
    keyed: dict[tuple[int, tuple], list[str]] = {}
    for g, members in groups.items():
        if g is not None and roles[g] == "replica":
            co = [before.coords(r) for r in members]
            keyed.setdefault((co[0][1], tuple(sorted((t, p) for t, _, p in co))), []).append(g)
    slots: dict[tuple, dict[int, str]] = {}
    for (d, key), gs in keyed.items():
        for j, g in enumerate(sorted(gs)):
            slots.setdefault((key, j), {})[d] = g
    names: dict[tuple[str, int], str] = {}
    taken = {g for g in groups if g is not None}
    for by_d in slots.values():
        found = {d: re.fullmatch(r"(.*?)(\d+)", g) for d, g in by_d.items()}
        stems = {m.group(1) for d, m in found.items() if m and int(m.group(2)) == d}
        numbered = len(by_d) == before.dp and len(stems) == 1 and all(
            m and int(m.group(2)) == d for d, m in found.items())
        for d2 in range(after.dp):
            g = by_d.get(d2 % before.dp)
            if g is None:
                continue
            if d2 < before.dp:
                names[(g, d2)] = g
                continue
            name = f"{next(iter(stems))}{d2}" if numbered else f"{g}.dp{d2}"
            if name in taken:
                raise ScenarioError(source, "", f"communicator '{g}' copied into replica {d2} would be named "
                                    f"'{name}', which the trace already uses")
            taken.add(name)
            names[(g, d2)] = name
    return names


def _rank(src: RankTrace, before: Layout, after: Layout, r: int, groups: dict, roles: dict,
          names: dict[tuple[str, int], str], all_gather_size: str) -> dict[str, Any]:
    """New rank r's columns: `src`'s, peers moved into r's replica, communicators renamed, data-parallel all-gather
    blocks resized (block reading)."""
    c = src.cols
    out = dict(c)
    _, d2, _ = after.coords(r)
    ty = c["node_type"]
    p2p = (ty == SEND) | (ty == RECV)
    if p2p.any():
        for col in ("comm_src", "comm_dst"):
            v = c[col].copy()
            sel = np.flatnonzero(p2p & (v >= 0))
            for i in sel.tolist():
                t, _, p = before.coords(int(v[i]))
                v[i] = after.rank(t, d2, p)
            out[col] = v
    strings = list(c["names"])
    pg = c["pg_name"]
    used_pg = set(np.unique(pg[pg != NO_NAME]).tolist())
    node_names = set(np.unique(c["name"]).tolist())
    new_pg = pg
    for k in sorted(used_pg):
        g = strings[k]
        new = names.get((g, d2), g) if roles.get(g) == "replica" else g
        if new == g:
            continue
        if k in node_names:  # the string names a node too: give the communicator its own entry
            if new_pg is pg:
                new_pg = pg.copy()
            new_pg[pg == k] = len(strings)
            strings.append(new)
        else:
            strings[k] = new
    out["names"] = strings
    out["pg_name"] = new_pg
    if all_gather_size == "block" and before.dp != after.dp:
        coll = np.flatnonzero((ty == COLL) & (c["comm_type"] == ALL_GATHER)).tolist()
        dp_nodes = [i for i in coll if roles.get(None if pg[i] == NO_NAME else c["names"][int(pg[i])]) == "dp"]
        if dp_nodes:
            size = c["comm_size"].copy()
            size[dp_nodes] = size[dp_nodes] * before.dp // after.dp
            out["comm_size"] = size
    return out
