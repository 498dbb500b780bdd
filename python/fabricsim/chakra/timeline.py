"""Timelines of a simulated Chakra trace: the critical path, a per-rank Gantt chart and a Perfetto (Chrome trace-event) file.

All three read a `Lowered` trace (`fabricsim.chakra.lower`) and the `RunRecord` of running its workload:
messages are the record's `flows.kind == 2` rows in workload order, compute steps the `compute.*` rows, and
the dependencies the workload's `pred_start` / `pred` columns (references tagged in their top two bits:
0 message delivered, 1 message fully sent, 2 barrier, 3 compute step; nodes ordered messages, barriers,
compute steps). Barriers are not work: a barrier predecessor stands for its own predecessors.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..record import MISSING

_TAG_BITS = 30
_INDEX = (1 << _TAG_BITS) - 1
_DELIVERED, _SENT, _BARRIER, _COMPUTE = 0, 1, 2, 3
_MSG_KIND = 2  # flows.kind of a workload message

COMPUTE_COLOUR = "#e8871e"
SEND_COLOUR = "#1f5fa8"
RECV_COLOUR = "#6fa8dc"
COLLECTIVE_COLOUR = "#9b59b6"
CRITICAL_COLOUR = "#d62728"


@dataclass
class _Timeline:
    """Per-item times (ps, MISSING when absent), ranks and the dependency columns of one lowered run."""

    n_msgs: int
    n_barriers: int
    msg_start: np.ndarray
    msg_end: np.ndarray
    msg_sent: np.ndarray
    msg_src: np.ndarray
    msg_dst: np.ndarray
    msg_bytes: np.ndarray
    msg_coll: np.ndarray
    comp_start: np.ndarray
    comp_end: np.ndarray
    comp_rank: np.ndarray
    pred_start: np.ndarray
    pred: np.ndarray
    hosts: list[str]

    def refs(self, node: int) -> np.ndarray:
        """The dependency references of workload node `node` (messages, then barriers, then compute steps)."""
        if len(self.pred_start) == 0:
            return self.pred[:0]
        return self.pred[self.pred_start[node]: self.pred_start[node + 1]]

    def node(self, tag: int, index: int) -> int:
        """The node index of a message (delivered or sent) or compute-step reference."""
        return index if tag in (_DELIVERED, _SENT) else self.n_msgs + self.n_barriers + index

    def finish(self, tag: int, index: int) -> int:
        """When a message (delivered or sent) or compute-step reference was met, in ps (MISSING if never)."""
        if tag == _DELIVERED:
            return int(self.msg_end[index])
        if tag == _SENT:
            return int(self.msg_sent[index])
        return int(self.comp_end[index])


def _timeline(lowered, rec) -> _Timeline:
    """Gather the record's and the workload's columns for one lowered run. O(messages + compute steps)."""
    cols = rec.columns
    wc = lowered.workload.columns()
    msg = np.flatnonzero(cols["flows.kind"] == _MSG_KIND)
    n_msgs, n_barriers = len(wc["src"]), int(wc["n_barriers"])
    names = rec.scalars["node_names"]
    by_host: dict[str, list[int]] = {}
    for r, h in enumerate(lowered.rank_hosts):
        by_host.setdefault(h, []).append(r)

    # table[v, k]: the k-th rank placed on node v (its first beyond its last), -1 where no rank is placed.
    width = max((len(rs) for rs in by_host.values()), default=1)
    table = np.full((len(names), width + 1), -1, dtype=np.int64)
    for v, name in enumerate(names):
        rs = by_host.get(name)
        if rs:
            table[v, :len(rs)] = rs
            table[v, len(rs):] = rs[0]

    def ranks_of(nodes: np.ndarray, nics: np.ndarray) -> np.ndarray:
        """Rank at (node, NIC): the NIC-th rank placed on that host, else its first (placements "pack" and "nics:K").
        Vectorised: O(messages)."""
        k = np.minimum(np.asarray(nics, dtype=np.int64), width)
        return table[np.asarray(nodes, dtype=np.int64), k]

    coll = np.full(n_msgs, -1, dtype=np.int64)
    for j, c in enumerate(lowered.collectives):
        a, b = c["messages"]
        coll[a:b] = j
    comp_rank = np.full(len(wc["compute_ps"]), -1, dtype=np.int64)
    for r, steps in enumerate(lowered.rank_compute):
        comp_rank[np.asarray(steps, dtype=np.int64)] = r
    return _Timeline(
        n_msgs=n_msgs, n_barriers=n_barriers,
        msg_start=cols["flows.start_ps"][msg], msg_end=cols["flows.complete_ps"][msg], msg_sent=cols["flows.last_tx_ps"][msg],
        msg_src=ranks_of(cols["flows.src"][msg], wc["src_nic"]), msg_dst=ranks_of(cols["flows.dst"][msg], wc["dst_nic"]),
        msg_bytes=wc["size"], msg_coll=coll,
        comp_start=cols["compute.start_ps"], comp_end=cols["compute.end_ps"], comp_rank=comp_rank,
        pred_start=wc.get("pred_start", np.zeros(0, dtype=np.uint32)).astype(np.int64),
        pred=wc.get("pred", np.zeros(0, dtype=np.uint32)).astype(np.int64),
        hosts=list(lowered.rank_hosts))


def _critical(tl: _Timeline) -> list[tuple[int, int]]:
    """The critical path as (tag, index) references in dependency order (a message ends delivered unless its
    successor waited only for it to be sent). O(path + dependencies visited)."""
    best_of_barrier: dict[int, tuple | None] = {}

    def leaf_key(tag: int, index: int) -> tuple | None:
        t = tl.finish(tag, index)
        if t == MISSING:
            return None
        return (t, -tl.node(tag, index), tag == _DELIVERED, tag, index)

    def barrier_best(b: int) -> tuple | None:
        stack = [b]
        while stack:
            x = stack[-1]
            if x in best_of_barrier:
                stack.pop()
                continue
            refs = tl.refs(tl.n_msgs + x)
            pending = [r & _INDEX for r in refs.tolist()
                       if r >> _TAG_BITS == _BARRIER and (r & _INDEX) not in best_of_barrier]
            if pending:
                stack.extend(pending)
                continue
            best_of_barrier[x] = best_of(refs)
            stack.pop()
        return best_of_barrier[b]

    def best_of(refs: np.ndarray) -> tuple | None:
        keys = []
        for r in refs.tolist():
            tag, index = r >> _TAG_BITS, r & _INDEX
            k = barrier_best(index) if tag == _BARRIER else leaf_key(tag, index)
            if k is not None:
                keys.append(k)
        return max(keys) if keys else None

    # The item that completed last, ties to the lowest node index (messages come before compute steps):
    # max(leaf_key) over every delivered message and ended step, vectorised.
    m_ok, c_ok = tl.msg_end != MISSING, tl.comp_end != MISSING
    if not m_ok.any() and not c_ok.any():
        return []
    t_last = max(int(tl.msg_end[m_ok].max(initial=0)), int(tl.comp_end[c_ok].max(initial=0)))
    last_msg = np.flatnonzero(m_ok & (tl.msg_end == t_last))
    cur = (leaf_key(_DELIVERED, int(last_msg[0])) if len(last_msg)
           else leaf_key(_COMPUTE, int(np.flatnonzero(c_ok & (tl.comp_end == t_last))[0])))
    path = []
    while cur is not None:
        tag, index = cur[3], cur[4]
        path.append((tag, index))
        cur = best_of(tl.refs(tl.node(tag, index)))
    return path[::-1]


def _item(tl: _Timeline, tag: int, index: int) -> dict[str, Any]:
    """One critical-path item as a plain dict (times in seconds)."""
    if tag == _COMPUTE:
        r = int(tl.comp_rank[index])
        return {"kind": "compute", "index": index, "rank": r, "host": tl.hosts[r] if r >= 0 else None,
                "start_s": int(tl.comp_start[index]) / 1e12, "end_s": int(tl.comp_end[index]) / 1e12}
    s, d = int(tl.msg_src[index]), int(tl.msg_dst[index])
    c = int(tl.msg_coll[index])
    return {"kind": "message", "index": index, "rank": s, "host": tl.hosts[s] if s >= 0 else None,
            "dst_rank": d, "dst_host": tl.hosts[d] if d >= 0 else None, "bytes": int(tl.msg_bytes[index]),
            "collective": c if c >= 0 else None, "until": "sent" if tag == _SENT else "delivered",
            "start_s": int(tl.msg_start[index]) / 1e12, "end_s": tl.finish(tag, index) / 1e12}


def critical_path(lowered, rec) -> list[dict[str, Any]]:
    """The chain of work items ending at the last completion, in dependency order.

    From the item that completed last (ties: lowest node index), walk back through what each item waited
    for: among its predecessors (a barrier standing for its own predecessors, recursively) the one that
    finished last, ties to the lowest node index (messages, then barriers, then compute steps). Each item:
    kind ("compute" or "message"), index (compute step or message index in workload order), rank and host
    (a message's sender), start_s and end_s; a message also has dst_rank, dst_host, bytes, collective (index
    into `lowered.collectives` or None) and until: "delivered", or "sent" when its successor waited only for
    its last packet to be handed to the NIC (end_s is then that moment). Empty when nothing completed.
    O(path length + dependencies visited)."""
    tl = _timeline(lowered, rec)
    return [_item(tl, tag, index) for tag, index in _critical(tl)]


def _lanes(starts: list[int], ends: list[int]) -> list[int]:
    """Greedy interval partitioning: a lane per item such that items in one lane do not overlap (items
    touching end to start share a lane). O(k log k)."""
    order = sorted(range(len(starts)), key=lambda i: (starts[i], ends[i], i))
    free: list[tuple[int, int]] = []  # (end, lane)
    out = [0] * len(starts)
    n_lanes = 0
    for i in order:
        if free and free[0][0] <= starts[i]:
            _, lane = heapq.heappop(free)
        else:
            lane, n_lanes = n_lanes, n_lanes + 1
        out[i] = lane
        heapq.heappush(free, (ends[i], lane))
    return out


def _fmt_bytes(b: int) -> str:
    """Bytes in binary units (1 MiB, 128 KiB, 512 B)."""
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            v = b / k
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b} B"


def _rank_label(tl: _Timeline, r: int) -> str:
    return f"rank {r} ({tl.hosts[r]})" if r >= 0 else "?"


DETAILS = ("collectives", "messages")
"""What the Perfetto trace and the timeline show: "collectives" (aggregated per collective and rank group, the
default: bounded by collectives × groups, not by messages) or "messages" (every message and compute step)."""


def rank_group_size(n: int, max_groups: int = 32) -> int:
    """Ranks per group when `n` ranks are shown in at most `max_groups` groups of consecutive ranks: 1 up to
    `max_groups` ranks, else ceil(n / max_groups) (256 ranks in 32 groups of 8: a TP-8 job's tensor groups)."""
    return 1 if n <= max_groups else -(-n // max_groups)


def _group_label(tl: _Timeline, a: int, b: int) -> str:
    """Ranks a..b-1 with their first and last hosts."""
    if b - a == 1:
        return _rank_label(tl, a)
    return f"ranks {a}-{b - 1} ({tl.hosts[a]} .. {tl.hosts[b - 1]})"


def _spans(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per distinct key (sorted): the earliest start, the latest end and how many rows. Vectorised, O(k log k)."""
    if len(key) == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e
    order = np.argsort(key, kind="stable")
    k = key[order]
    first = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    return (k[first], np.minimum.reduceat(start[order], first), np.maximum.reduceat(end[order], first),
            np.diff(np.r_[first, len(k)]))


def _compute_slots(lowered, tl: _Timeline) -> np.ndarray:
    """Each compute step's position in its rank's program (its slot), -1 for a step of no rank. O(steps)."""
    slot = np.full(len(tl.comp_start), -1, dtype=np.int64)
    for steps in lowered.rank_compute:
        idx = np.asarray(steps, dtype=np.int64)
        slot[idx] = np.arange(len(idx))
    return slot


def aggregate(lowered, rec, group: int | None = None) -> dict[str, Any]:
    """The run aggregated per rank group (`group` consecutive ranks, default `rank_group_size`), as `perfetto` and
    `gantt` draw it by default. Returns {"group": ranks per group, "groups": count, "compute": rows, "comm": rows,
    "p2p": rows} where each row is a dict of numpy arrays:

    - compute: per (group, slot) the slot-th compute step of each rank of the group: group, slot, start_ps (the
      earliest start), end_ps (the latest end), steps (how many ranks' steps);
    - comm: per (collective, group) the messages of the collective that a rank of the group sends or receives:
      collective, group, start_ps (the first such message's release), end_ps (the last one's delivery), messages;
    - p2p: per (sending group, receiving group) the point-to-point messages (no collective) between them:
      src_group, dst_group, start_ps, end_ps, messages.

    Items that never started or completed are left out. Vectorised: O((messages + steps) log)."""
    tl = _prepared(lowered, rec)[0]
    n = len(tl.hosts)
    g = group or rank_group_size(n)
    n_groups = -(-n // g) if n else 0
    ok = (tl.comp_start != MISSING) & (tl.comp_end != MISSING) & (tl.comp_rank >= 0)
    slot = _compute_slots(lowered, tl)
    width = int(slot.max(initial=0)) + 1
    cg = tl.comp_rank[ok] // g
    key, st, en, cnt = _spans(cg * width + slot[ok], tl.comp_start[ok].astype(np.int64), tl.comp_end[ok].astype(np.int64))
    compute = {"group": key // width, "slot": key % width, "start_ps": st, "end_ps": en, "steps": cnt}
    done = (tl.msg_start != MISSING) & (tl.msg_end != MISSING) & (tl.msg_src >= 0) & (tl.msg_dst >= 0)
    ms, me = tl.msg_start.astype(np.int64), tl.msg_end.astype(np.int64)
    inc = done & (tl.msg_coll >= 0)
    sg, dg = tl.msg_src // g, tl.msg_dst // g
    # A message counts for its sender's group and, when another, its receiver's.
    both = inc & (sg != dg)
    keys = np.r_[tl.msg_coll[inc] * n_groups + sg[inc], tl.msg_coll[both] * n_groups + dg[both]]
    key, st, en, cnt = _spans(keys, np.r_[ms[inc], ms[both]], np.r_[me[inc], me[both]])
    comm = {"collective": key // max(n_groups, 1), "group": key % max(n_groups, 1), "start_ps": st, "end_ps": en,
            "messages": cnt}
    pp = done & (tl.msg_coll < 0)
    key, st, en, cnt = _spans(sg[pp] * n_groups + dg[pp], ms[pp], me[pp])
    p2p = {"src_group": key // max(n_groups, 1), "dst_group": key % max(n_groups, 1), "start_ps": st, "end_ps": en,
           "messages": cnt}
    return {"group": g, "groups": n_groups, "compute": compute, "comm": comm, "p2p": p2p, "timeline": tl,
            "left_out": {"messages": int((~done).sum()), "compute": int((~ok).sum())}}


def _x_events(pid: int, base: str, tid0: int, starts: np.ndarray, ends: np.ndarray, names: list[str], cat: str,
              args: list[str]) -> tuple[list[str], int]:
    """X events (JSON text) on as many threads of `pid` as keep each thread free of partial overlaps, with their
    thread-name metadata; `args` are JSON object texts. Returns (events, next tid)."""
    lanes = _lanes(starts.tolist(), ends.tolist())
    out = []
    n_lanes = max(lanes, default=-1) + 1
    for k in range(n_lanes):
        tid = tid0 + k
        label = json.dumps(base if k == 0 else f"{base} {k + 1}")
        out.append(f'{{"ph": "M", "name": "thread_name", "pid": {pid}, "tid": {tid}, "args": {{"name": {label}}}}}')
        out.append(f'{{"ph": "M", "name": "thread_sort_index", "pid": {pid}, "tid": {tid}, "args": {{"sort_index": {tid}}}}}')
    ts = (starts * 1e-6).tolist()
    dur = ((ends - starts) * 1e-6).tolist()
    cat_j = json.dumps(cat)
    out += [f'{{"name": {nm}, "cat": {cat_j}, "args": {a}, "ph": "X", "pid": {pid}, "tid": {tid0 + k}, '
            f'"ts": {t!r}, "dur": {d!r}}}' for nm, a, k, t, d in zip(names, args, lanes, ts, dur)]
    return out, tid0 + n_lanes


def _meta(pid: int, name: str, sort: int) -> list[str]:
    label = json.dumps(name)
    return [f'{{"ph": "M", "name": "process_name", "pid": {pid}, "tid": 0, "args": {{"name": {label}}}}}',
            f'{{"ph": "M", "name": "process_sort_index", "pid": {pid}, "tid": 0, "args": {{"sort_index": {sort}}}}}']


def _perfetto_groups(lowered, rec, crit, agg: dict) -> list[str]:
    """The aggregated processes of `perfetto`: one per rank group, threads "compute", "collectives" and
    "point-to-point" (each split into lanes as overlaps need)."""
    tl, g, n_groups = agg["timeline"], agg["group"], agg["groups"]
    n = len(tl.hosts)
    crit_comp = np.zeros(len(tl.comp_start), dtype=bool)
    crit_msg_coll = set()
    for t, i in crit:
        if t == _COMPUTE:
            crit_comp[i] = True
        elif tl.msg_coll[i] >= 0:
            crit_msg_coll.add(int(tl.msg_coll[i]))
    slot = _compute_slots(lowered, tl)
    width = int(slot.max(initial=0)) + 1
    on_path = set()
    idx = np.flatnonzero(crit_comp)
    if len(idx):
        on_path = set((tl.comp_rank[idx] // g * width + slot[idx]).tolist())
    c, m, p = agg["compute"], agg["comm"], agg["p2p"]
    cg, mg, pg = c["group"], m["group"], p["src_group"]
    colls = lowered.collectives
    coll_name = [json.dumps(f"{x['kind']} {_fmt_bytes(x['bytes'])} ({x['algorithm']})") for x in colls]
    out: list[str] = []
    for grp in range(n_groups):
        a, b = grp * g, min(n, grp * g + g)
        pid = grp + 1
        out += _meta(pid, _group_label(tl, a, b), grp)
        rows = np.flatnonzero(cg == grp)
        names = ['"compute"'] * len(rows)
        args = [f'{{"slot": {s}, "ranks": {k}, "critical_path": {"true" if grp * width + s in on_path else "false"}}}'
                for s, k in zip(c["slot"][rows].tolist(), c["steps"][rows].tolist())]
        ev, tid = _x_events(pid, "compute", 1, c["start_ps"][rows], c["end_ps"][rows], names, "compute", args)
        out += ev
        rows = np.flatnonzero(mg == grp)
        js = m["collective"][rows].tolist()
        names = [coll_name[j] for j in js]
        args = [f'{{"collective": {j}, "kind": {json.dumps(colls[j]["kind"])}, "bytes": {colls[j]["bytes"]}, '
                f'"messages": {k}, "critical_path": {"true" if j in crit_msg_coll else "false"}}}'
                for j, k in zip(js, m["messages"][rows].tolist())]
        ev, tid = _x_events(pid, "collectives", tid, m["start_ps"][rows], m["end_ps"][rows], names, "collective_group",
                            args)
        out += ev
        rows = np.flatnonzero(pg == grp)
        if len(rows):
            dsts = p["dst_group"][rows].tolist()
            names = [json.dumps(f"send to {_group_label(tl, d * g, min(n, d * g + g))}") for d in dsts]
            args = [f'{{"dst_group": {d}, "messages": {k}}}' for d, k in zip(dsts, p["messages"][rows].tolist())]
            ev, tid = _x_events(pid, "point-to-point", tid, p["start_ps"][rows], p["end_ps"][rows], names, "message",
                                args)
            out += ev
    return out


def perfetto(lowered, rec, path, detail: str = "collectives") -> dict[str, Any]:
    """Write the run as Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing); returns
    {"events": how many, "bytes": the file's size, "detail": detail, "group": ranks per group}.

    Format choices:
    - detail "collectives" (the default; its size is bounded by collectives × rank groups, not messages): one
      process per rank group (`rank_group_size`: 1 rank up to 32 ranks, 8 per group for 256; pid = group + 1,
      named "ranks A-B (first host .. last host)"), threads "compute" (per slot k, the k-th compute step of
      each of the group's ranks, from the earliest start to the latest end, args slot, ranks, critical_path),
      "collectives" (per collective, from the first release to the last delivery of its messages sent or
      received by the group's ranks, args collective, kind, bytes, messages, critical_path) and
      "point-to-point" (messages of no collective, per receiving group).
    - detail "messages": one process per rank (pid = rank + 1, named "rank R (host)"), every compute step and
      every message twice: on its sender's "send" thread and its receiver's "receive" thread, from its release
      (`start_ps`) to its delivery; args message index, bytes, src, dst (rank and host), collective index.
    - Then a process "collectives" (pid = processes + 1): an X event per collective from its first message's
      release to its last delivery, args kind, group, ranks, bytes (comm_size), algorithm and message range;
      and a process "critical path" (pid = processes + 2), one X event per item of `critical_path` in
      dependency order (consecutive, never overlapping), category "critical_path".
    - Work is `X` (complete) events with `ts` and `dur` in microseconds as floats (ps precision). X events on
      one thread must not overlap partially, so each kind of work is split into as many threads as it needs
      ("compute", "compute 2", ...) by greedy interval partitioning; names and sort indices come from `M` events.
    - Items that never started or completed are left out; `otherData` counts them and gives the fidelity, the
      detail, the ranks per group and the completion time (us).
    """
    if detail not in DETAILS:
        from ..errors import UserError

        raise UserError(f"detail: '{detail}' is not one of {', '.join(DETAILS)}")
    tl, crit = _prepared(lowered, rec)
    if detail == "messages":
        events, skipped, n_proc = _perfetto_messages(lowered, tl, crit), None, len(tl.hosts)
        group = 1
    else:
        agg = aggregate(lowered, rec)
        events, skipped, n_proc = _perfetto_groups(lowered, rec, crit, agg), agg["left_out"], agg["groups"]
        group = agg["group"]
    if skipped is None:
        skipped = {"messages": int(((tl.msg_start == MISSING) | (tl.msg_end == MISSING)).sum()),
                   "compute": int(((tl.comp_start == MISSING) | (tl.comp_end == MISSING)).sum())}
    n = n_proc
    rows = []
    for j, c in enumerate(lowered.collectives):
        a, b = c["messages"]
        if b <= a or (tl.msg_start[a:b] == MISSING).any() or (tl.msg_end[a:b] == MISSING).any():
            continue
        rows.append((j, int(tl.msg_start[a:b].min()), int(tl.msg_end[a:b].max())))
    events += _meta(n + 1, "collectives", n)
    colls = lowered.collectives
    ev, _ = _x_events(n + 1, "collectives", 1, np.asarray([r[1] for r in rows], dtype=np.int64),
                      np.asarray([r[2] for r in rows], dtype=np.int64),
                      [json.dumps(f"{colls[j]['kind']} {_fmt_bytes(colls[j]['bytes'])} ({colls[j]['algorithm']})")
                       for j, _, _ in rows], "collective",
                      [json.dumps({"collective": j, "kind": colls[j]["kind"], "group": colls[j]["group"],
                                   "ranks": list(colls[j]["ranks"]), "bytes": colls[j]["bytes"],
                                   "algorithm": colls[j]["algorithm"], "messages": list(colls[j]["messages"])})
                       for j, _, _ in rows])
    events += ev
    events += _meta(n + 2, "critical path", n + 1)
    events.append(f'{{"ph": "M", "name": "thread_name", "pid": {n + 2}, "tid": 1, "args": {{"name": "critical path"}}}}')
    for it in (_item(tl, t, i) for t, i in crit):
        name = (f"compute on rank {it['rank']}" if it["kind"] == "compute"
                else f"message {it['rank']} → {it['dst_rank']}" + (" (sent)" if it["until"] == "sent" else ""))
        events.append(json.dumps({"ph": "X", "pid": n + 2, "tid": 1, "name": name, "cat": "critical_path",
                                  "ts": it["start_s"] * 1e6, "dur": (it["end_s"] - it["start_s"]) * 1e6,
                                  "args": {k: v for k, v in it.items() if k not in ("start_s", "end_s")}}))
    done = rec.completion_time_s
    other = {"fidelity": rec.fidelity, "ranks": len(tl.hosts), "detail": detail, "ranks_per_group": group,
             "completion_us": None if done is None else done * 1e6, "left_out": skipped,
             "critical_path_items": len(crit)}
    text = '{"traceEvents": [' + ", ".join(events) + '], "displayTimeUnit": "ns", "otherData": ' + json.dumps(other) + "}"
    Path(path).write_text(text)
    return {"events": len(events), "bytes": len(text.encode()), "detail": detail, "group": group}


def _perfetto_messages(lowered, tl: _Timeline, crit) -> list[str]:
    """The per-rank processes of `perfetto(detail="messages")`: every compute step and message."""
    on_crit_msg = {i for t, i in crit if t != _COMPUTE}
    on_crit_comp = {i for t, i in crit if t == _COMPUTE}
    n = len(tl.hosts)
    events: list[str] = []
    ok_c = (tl.comp_start != MISSING) & (tl.comp_end != MISSING)
    ok_m = (tl.msg_start != MISSING) & (tl.msg_end != MISSING)
    for r in range(n):
        pid = r + 1
        events += _meta(pid, _rank_label(tl, r), r)
        comp = np.asarray(lowered.rank_compute[r], dtype=np.int64)
        comp = comp[ok_c[comp]]
        ev, tid = _x_events(pid, "compute", 1, tl.comp_start[comp].astype(np.int64), tl.comp_end[comp].astype(np.int64),
                            ['"compute"'] * len(comp), "compute",
                            [f'{{"step": {c}, "critical_path": {"true" if c in on_crit_comp else "false"}}}'
                             for c in comp.tolist()])
        events += ev
        msgs = np.asarray(list(dict.fromkeys(lowered.rank_messages[r])), dtype=np.int64)
        msgs = msgs[ok_m[msgs]]
        for side, mask, verb in (("send", tl.msg_src[msgs] == r, "send to"), ("receive", tl.msg_dst[msgs] == r, "receive from")):
            sel = msgs[mask]
            names, args = [], []
            for mi in sel.tolist():
                s, d, c = int(tl.msg_src[mi]), int(tl.msg_dst[mi]), int(tl.msg_coll[mi])
                prefix = f"{lowered.collectives[c]['kind']} " if c >= 0 else ""
                names.append(json.dumps(f"{prefix}{verb} {d if side == 'send' else s}"))
                args.append(json.dumps({"message": mi, "bytes": int(tl.msg_bytes[mi]), "src": _rank_label(tl, s),
                                        "dst": _rank_label(tl, d), "src_rank": s, "dst_rank": d,
                                        "collective": c if c >= 0 else None, "critical_path": mi in on_crit_msg}))
            ev, tid = _x_events(pid, side, tid, tl.msg_start[sel].astype(np.int64), tl.msg_end[sel].astype(np.int64),
                                names, "message", args)
            events += ev
    return events


def _prepared(lowered, rec) -> tuple[_Timeline, list]:
    """The timeline and critical path of one run, computed once however many exports read them."""
    key = (id(lowered), id(rec))
    hit = _PREPARED.get(key)
    if hit is None or hit[0] is not lowered or hit[1] is not rec:
        tl = _timeline(lowered, rec)
        hit = (lowered, rec, tl, _critical(tl))
        _PREPARED.clear()
        _PREPARED[key] = hit
    return hit[2], hit[3]


_PREPARED: dict = {}
"""The last run `_prepared` saw (one entry: the CLI writes a run's timeline and its Perfetto trace one after the other)."""


def _collective_span(tl, c) -> tuple[int, int] | None:
    """Collective `c`'s span in ps: its messages' earliest start to latest end (those that did both), or None."""
    a, b = c["messages"]
    ok = (tl.msg_start[a:b] != MISSING) & (tl.msg_end[a:b] != MISSING)
    if b <= a or not ok.any():
        return None
    return int(tl.msg_start[a:b][ok].min()), int(tl.msg_end[a:b][ok].max())


def gantt(lowered, rec, path, *, max_ranks: int = 64, title: str | None = None, detail: str = "collectives") -> Path:
    """Draw a Gantt chart of the run and save it (PNG, or SVG/PDF by the path's suffix); returns the path.

    Every rank is shown: one row per rank up to `max_ranks` ranks, else one row per group of
    `rank_group_size(ranks, min(max_ranks, 32))` consecutive ranks (the Perfetto trace's groups: 256 ranks in 32
    rows of 8), labelled with its ranks and hosts. Each row has three lanes. detail "collectives" (the default): compute (per slot, the k-th compute step
    of the row's ranks from the earliest start to the latest end), collectives (per collective, from the first
    release to the last delivery of the messages the row's ranks send or receive in it) and point-to-point
    messages. detail "messages" (rows of one rank only): compute steps, messages the rank sends and messages it
    receives, each message from its release to its delivery, collectives shaded on their member ranks. The
    critical path is outlined in red and joined by a red line. x in microseconds; drawn with the Agg canvas (no
    pyplot state), ~1400 px wide at 100 dpi."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if detail not in DETAILS:
        from ..errors import UserError

        raise UserError(f"detail: '{detail}' is not one of {', '.join(DETAILS)}")
    tl, crit = _prepared(lowered, rec)
    n = len(tl.hosts)
    g = 1 if n <= max_ranks else rank_group_size(n, min(max_ranks, 32))
    shown = -(-n // g)
    per_message = detail == "messages" and g == 1
    us = 1e-6  # ps → us
    lane = {"compute": (-0.42, 0.25), "send": (-0.12, 0.25), "recv": (0.18, 0.25)}  # offset from the row centre, height

    height = min(2.4 + 0.42 * shown, 40)
    if g == 1:
        labels = [f"{r}  {tl.hosts[r]}" for r in range(shown)]
    else:
        labels = [f"{a}-{min(n, a + g) - 1}  {tl.hosts[a]}..{tl.hosts[min(n, a + g) - 1]}" for a in range(0, n, g)]
    # Fixed margins (a constrained layout would draw the figure twice): room for the longest label, 1 in below.
    left = 0.6 + 0.07 * max((len(x) for x in labels), default=4)
    fig = Figure(figsize=(14, height), dpi=100)
    fig.subplots_adjust(left=left / 14, right=1 - 0.2 / 14, bottom=1.0 / height, top=1 - 0.45 / height)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ends = np.concatenate([tl.msg_end[tl.msg_end != MISSING], tl.comp_end[tl.comp_end != MISSING]])
    t_end = int(ends.max()) * us if len(ends) else 0.0

    colls = lowered.collectives
    if per_message:
        for c in colls:
            if (span := _collective_span(tl, c)) is None:
                continue
            s, e = span[0] * us, span[1] * us
            rows = [r for r in c["ranks"] if r < shown]
            for r in rows:
                ax.add_patch(_rect(s, r - 0.5, e - s, 1.0, fc=COLLECTIVE_COLOUR, alpha=0.12, lw=0))
            if rows and (e - s) > 0.06 * max(t_end, 1e-12):
                ax.text((s + e) / 2, min(rows) - 0.47, f"{c['kind']} {_fmt_bytes(c['bytes'])} ({c['algorithm']})",
                        ha="center", va="top", fontsize=9, color=COLLECTIVE_COLOUR, clip_on=True,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
        for r in range(shown):
            bars = {"compute": [], "send": [], "recv": []}
            for c in lowered.rank_compute[r]:
                if tl.comp_start[c] != MISSING and tl.comp_end[c] != MISSING:
                    bars["compute"].append((int(tl.comp_start[c]) * us, int(tl.comp_end[c] - tl.comp_start[c]) * us))
            for m in dict.fromkeys(lowered.rank_messages[r]):
                if tl.msg_start[m] == MISSING or tl.msg_end[m] == MISSING:
                    continue
                span = (int(tl.msg_start[m]) * us, int(tl.msg_end[m] - tl.msg_start[m]) * us)
                if tl.msg_src[m] == r:
                    bars["send"].append(span)
                if tl.msg_dst[m] == r:
                    bars["recv"].append(span)
            for key, colour in (("compute", COMPUTE_COLOUR), ("send", SEND_COLOUR), ("recv", RECV_COLOUR)):
                off, h = lane[key]
                if bars[key]:
                    ax.broken_barh(bars[key], (r + off, h), facecolors=colour, edgecolors="white", linewidths=0.4)
    else:
        agg = aggregate(lowered, rec, g)
        for key, part, col, colour in (("compute", "compute", "group", COMPUTE_COLOUR),
                                       ("send", "comm", "group", COLLECTIVE_COLOUR),
                                       ("recv", "p2p", "src_group", SEND_COLOUR)):
            rows, st, en = agg[part][col], agg[part]["start_ps"] * us, agg[part]["end_ps"] * us
            off, h = lane[key]
            order = np.argsort(rows, kind="stable")
            cut = np.flatnonzero(np.r_[True, rows[order][1:] != rows[order][:-1]]) if len(rows) else []
            xs0, xs1, ys = [], [], []
            for a, b in zip(list(cut), [*list(cut)[1:], len(rows)]):
                sel = order[a:b]
                # Overlapping slices of one lane drawn as their union: the same picture, far fewer rectangles.
                ms, me = _merged(st[sel], en[sel])
                xs0.append(ms)
                xs1.append(me)
                ys.append(np.full(len(ms), float(rows[sel[0]]) + off))
            if xs0:  # one collection per lane: every row's rectangles at once
                x0, x1, y0 = np.concatenate(xs0), np.concatenate(xs1), np.concatenate(ys)
                verts = np.stack([np.c_[x0, y0], np.c_[x1, y0], np.c_[x1, y0 + h], np.c_[x0, y0 + h]], axis=1)
                ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="white", linewidths=0.3))
        if len(colls) <= 40:
            for c in colls:
                if (span := _collective_span(tl, c)) is None:
                    continue
                s, e = span[0] * us, span[1] * us
                top = min(c["ranks"]) // g
                if (e - s) > 0.06 * max(t_end, 1e-12):
                    ax.text((s + e) / 2, top - 0.47, f"{c['kind']} {_fmt_bytes(c['bytes'])} ({c['algorithm']})",
                            ha="center", va="top", fontsize=9, color=COLLECTIVE_COLOUR, clip_on=True,
                            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})

    xs, ys, boxes = [], [], []
    for tag, i in crit:
        it = _item(tl, tag, i)
        s, e = it["start_s"] * 1e6, it["end_s"] * 1e6
        if it["kind"] == "compute":
            r0 = it["rank"] // g
            y0 = y1 = r0 + lane["compute"][0] + lane["compute"][1] / 2
            at = [(r0, "compute")]
        else:
            r0, r1 = it["rank"] // g, it["dst_rank"] // g
            k = "send" if per_message or it["collective"] is not None else "recv"
            k2 = "recv" if per_message else k
            y0 = r0 + lane[k][0] + lane[k][1] / 2
            y1 = r1 + lane[k2][0] + lane[k2][1] / 2
            at = [(r0, k), (r1, k2)]
        for r, key in at:
            if 0 <= r < shown:
                off, h = lane[key]
                boxes.append((s, r + off, e, r + off + h))
        xs += [s, e]
        ys += [y0, y1]
    if boxes:
        b = np.asarray(boxes, dtype=float)
        verts = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)
        ax.add_collection(PolyCollection(verts, facecolors="none", edgecolors=CRITICAL_COLOUR, linewidths=1.6, zorder=4))
    if xs:
        ax.plot(xs, ys, color=CRITICAL_COLOUR, lw=1.2, alpha=0.8, zorder=5)

    ax.set_xlim(0, max(t_end, 1e-12) * 1.01)
    ax.set_ylim(shown - 0.5, -0.5)
    ax.set_ylabel("rank  host" if g == 1 else f"ranks (groups of {g})  hosts")
    ax.set_yticks(range(shown), labels, fontsize=9 if shown <= 32 else 7)
    # Ticks in the unit that keeps their numbers short (the data stay in µs).
    scale, unit = (1e6, "s") if t_end >= 1e6 else (1e3, "ms") if t_end >= 1e4 else (1.0, "µs")
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / scale:g}"))
    ax.set_xlabel(f"time ({unit})")
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    ax.set_axisbelow(True)
    if shown > 1:
        ax.hlines(np.arange(1, shown) - 0.5, 0, 1, transform=ax.get_yaxis_transform(), color="#e4e4e4", lw=0.6, zorder=0)
    done = rec.completion_time_s
    head = title or f"Chakra trace, {n} ranks, {rec.fidelity} fidelity"
    more = f" (all {n} ranks, {shown} rows of {g})" if g > 1 else ""
    from ..units import format_duration

    ax.set_title(f"{head} — completion {format_duration(done * 1e12)}{more}" if done is not None
                 else f"{head} — did not complete{more}", fontsize=12)
    if per_message:
        handles = [Patch(fc=COMPUTE_COLOUR, label="compute (top lane)"),
                   Patch(fc=SEND_COLOUR, label="message sent (middle lane)"),
                   Patch(fc=RECV_COLOUR, label="message received (bottom lane)")]
        if colls:
            handles.append(Patch(fc=COLLECTIVE_COLOUR, alpha=0.25, label="collective span"))
    else:
        handles = [Patch(fc=COMPUTE_COLOUR, label="compute (top lane)"),
                   Patch(fc=COLLECTIVE_COLOUR, label="collective, first release to last delivery (middle lane)"),
                   Patch(fc=SEND_COLOUR, label="point-to-point (bottom lane)")]
    if crit:
        handles.append(Line2D([], [], color=CRITICAL_COLOUR, lw=1.6,
                              label=f"critical path ({len(crit)} item{'s' if len(crit) != 1 else ''}, "
                                    f"{sum(t == _COMPUTE for t, _ in crit)} compute)"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=9, frameon=False)
    out = Path(path)
    # A PNG compressed lightly: a few hundred kB more, several times faster to write than zlib's default level.
    fig.savefig(out, **({"pil_kwargs": {"compress_level": 1}} if out.suffix.lower() == ".png" else {}))
    return out


def _merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals [start, end) as disjoint intervals in order (overlapping ones merged; touching ones
    kept apart, so a lane still shows where one slice ends and the next begins). Vectorised, O(k log k)."""
    if len(start) == 0:
        return start, end
    o = np.argsort(start, kind="stable")
    a, b = start[o], end[o]
    reach = np.maximum.accumulate(b)
    new = np.r_[True, a[1:] >= reach[:-1]]
    first = np.flatnonzero(new)
    return a[first], np.maximum.reduceat(b, first)


def _rect(x: float, y: float, w: float, h: float, **kw):
    """A matplotlib Rectangle with short keyword names (fc, ec, lw)."""
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=kw.pop("fc", None), edgecolor=kw.pop("ec", "none"), linewidth=kw.pop("lw", 0), **kw)
