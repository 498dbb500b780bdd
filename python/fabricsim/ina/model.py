"""The in-network-aggregation plan (a topology plus reduction segments) and its evaluator, independent of any optimizer.

A plan has workers (each sends exactly one reduction flow and receives none), one PS (receives, sends nothing),
common switches (forward) and aggregators (an aggregator that receives any flow emits exactly one). Routing is
a list of *segments*: node paths from a worker or an aggregator to the aggregator that reduces it next, or to
the PS. A segment's interior nodes are switches; an aggregator a segment merely passes through forwards it
untouched (the baselines' overlays do this; ATRO's model never routes through an aggregator). All workers send
at one rate r, and the PS multicasts the result back over the reversed segments at r (pipelined), so a link
carrying k segments in either direction needs k·r ≤ b (the study's constraint (14)): r = min b / k.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("worker", "ps", "cs", "agg")


@dataclass
class Plan:
    """A topology (`kinds`, `ports`, undirected `links`, every link `link_gbps`) and its `segments`."""

    kinds: dict[str, str]
    ports: dict[str, int]
    links: list[tuple[str, str]]
    segments: list[list[str]]
    link_gbps: float = 100.0
    meta: dict[str, Any] = field(default_factory=dict)

    def worker_paths(self) -> dict[str, list[str]]:
        """Each worker's whole path to the PS: its segment, then its aggregator's, and so on."""
        out_of = {seg[0]: seg for seg in self.segments}
        paths = {}
        for w in (n for n, k in self.kinds.items() if k == "worker"):
            path, node, hops = [w], w, 0
            while node in out_of and hops <= len(self.kinds):
                path += out_of[node][1:]
                node = out_of[node][-1]
                hops += 1
            paths[w] = path
        return paths

    def to_json(self) -> dict[str, Any]:
        return {"link_gbps": self.link_gbps, "kinds": self.kinds, "ports": self.ports,
                "links": [list(x) for x in self.links], "segments": self.segments,
                "paths": self.worker_paths(), "meta": self.meta}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Plan":
        return cls(kinds=dict(d["kinds"]), ports={k: int(v) for k, v in d["ports"].items()},
                   links=[(a, b) for a, b in d["links"]], segments=[list(s) for s in d["segments"]],
                   link_gbps=float(d.get("link_gbps", 100.0)), meta=dict(d.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1))


@dataclass
class Evaluation:
    """What a plan achieves: `feasible`, the `problems` if not, the common rate and the largest link load."""

    feasible: bool
    problems: list[str]
    rate_gbps: float
    max_load: int
    loads: dict[tuple[str, str], int]
    active_aggregators: int
    links_used: int


def evaluate(plan: Plan) -> Evaluation:
    """Check `plan` against the model and compute its rate. O(total segment length + links)."""
    probs: list[str] = []
    kinds = plan.kinds
    for n, k in kinds.items():
        if k not in KINDS:
            probs.append(f"node {n}: unknown kind '{k}'")
    adj: dict[str, set[str]] = defaultdict(set)
    for a, b in plan.links:
        if a not in kinds or b not in kinds:
            probs.append(f"link {a}-{b}: unknown node")
            continue
        if a == b or b in adj[a]:
            probs.append(f"link {a}-{b}: a self-loop or a duplicate")
        if kinds[a] in ("worker", "ps") and kinds[b] in ("worker", "ps"):
            probs.append(f"link {a}-{b}: workers and the PS connect to switches only")
        adj[a].add(b)
        adj[b].add(a)
    for n, k in kinds.items():
        limit = 1 if k in ("worker", "ps") else plan.ports.get(n, 0)
        if len(adj[n]) > limit:
            probs.append(f"node {n}: {len(adj[n])} links, more than its {limit} ports")
        if k in ("worker", "ps") and len(adj[n]) != 1:
            probs.append(f"node {n}: a {k} needs exactly one link, it has {len(adj[n])}")
    starts: dict[str, int] = defaultdict(int)
    ends: dict[str, int] = defaultdict(int)
    nxt: dict[str, str] = {}
    loads: dict[tuple[str, str], int] = defaultdict(int)
    for i, seg in enumerate(plan.segments):
        if len(seg) < 2:
            probs.append(f"segment {i}: fewer than two nodes")
            continue
        if any(n not in kinds for n in seg):
            probs.append(f"segment {i}: unknown node")
            continue
        s, e = seg[0], seg[-1]
        if kinds[s] not in ("worker", "agg"):
            probs.append(f"segment {i}: starts at {s}, a {kinds[s]} (only workers and aggregators send)")
        if kinds[e] not in ("agg", "ps"):
            probs.append(f"segment {i}: ends at {e}, a {kinds[e]} (only aggregators and the PS receive)")
        if len(set(seg)) != len(seg):
            probs.append(f"segment {i}: visits a node twice")
        for n in seg[1:-1]:
            if kinds[n] not in ("cs", "agg"):
                probs.append(f"segment {i}: passes through {n}, a {kinds[n]}")
        for a, b in zip(seg, seg[1:]):
            if b not in adj[a]:
                probs.append(f"segment {i}: no link {a}-{b}")
            loads[(a, b) if a < b else (b, a)] += 1
        starts[s] += 1
        ends[e] += 1
        nxt[s] = e
    for n, k in kinds.items():
        if k == "worker" and starts[n] != 1:
            probs.append(f"worker {n}: sends {starts[n]} flows, not exactly one")
        if k == "agg" and starts[n] != (1 if ends[n] else 0):
            probs.append(f"aggregator {n}: receives {ends[n]} flows and sends {starts[n]}"
                         " (an aggregator that receives any flow emits exactly one)")
    ps = [n for n, k in kinds.items() if k == "ps"]
    if len(ps) != 1:
        probs.append(f"{len(ps)} PS nodes, not one")
    else:
        for s in nxt:
            seen, node = set(), s
            while node in nxt and node not in seen:
                seen.add(node)
                node = nxt[node]
            if node != ps[0]:
                probs.append(f"{s}: its flow never reaches the PS (a loop or a dead end at {node})")
                break
    worst = max(loads.values(), default=0)
    rate = plan.link_gbps / worst if worst and not probs else 0.0
    return Evaluation(not probs, probs, rate, worst, dict(loads), sum(1 for n, k in kinds.items() if k == "agg" and ends[n]),
                      len(loads))
