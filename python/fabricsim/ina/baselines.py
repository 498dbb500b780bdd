"""The study's fixed fabrics (Leaf-Spine, the 6:1 Fat-Tree variant) and the baselines ARO, PARING and SPAR on them.

Readings of what the study leaves open (§IV-A), each one documented where it is used:
- Which switches support INA for ARO and PARING is not stated; they are drawn at random among all switches
  with every repetition (`agg_placement="random"`; "spine" and "tor" are offered too). SPAR chooses them itself.
- ARO: workers and the PS on random distinct hosts, then the exact aggregation-routing optimum on the fixed
  topology (the same MILP as ATRO with links and placement fixed, same layer limit L).
- PARING: the overlay is the PS and the aggregators with hop-count costs; its degree-constrained Steiner tree
  with unbounded degrees and capacities (as the study assumes) is the minimum spanning tree of the overlay's
  metric closure (the classic 2-approximation), rooted at the PS; the PS goes under the ToR that minimizes the
  total hop cost of the tree plus the cheapest n worker hosts, each worker attaches to its nearest tree node,
  and every overlay edge takes a random shortest path. Aggregators left without children are dropped.
- SPAR: workers and the PS on random hosts, each flow on a random shortest path to the PS, aggregated at the
  first aggregator on it; aggregators are chosen greedily among ToRs, each step adding the ToR that most
  raises the throughput (ties: the lower total link load, then at random).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import networkx as nx
import numpy as np

from .atro import Solution, plan_from_routing
from .milp import Problem, solve_problem
from .model import Plan, evaluate


@dataclass(frozen=True)
class Fabric:
    """A fixed switch fabric: switch names, which are top-of-rack (hosts attach there), the switch links, and
    the host slots (host → its ToR's index). Every switch has `ports` ports; every link `link_gbps`."""

    name: str
    switches: list[str]
    tor: list[bool]
    links: list[tuple[int, int]]
    hosts: list[int]
    ports: int = 24
    link_gbps: float = 100.0

    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(range(len(self.switches)))
        g.add_edges_from(self.links)
        return g


def leaf_spine(spines: int = 10, leaves: int = 10, hosts_per_leaf: int = 14, ports: int = 24,
               link_gbps: float = 100.0) -> Fabric:
    """The study's Leaf-Spine: every leaf to every spine, `hosts_per_leaf` hosts under each leaf."""
    if hosts_per_leaf + spines > ports or leaves > ports:
        raise ValueError(f"a leaf needs {hosts_per_leaf + spines} ports and a spine {leaves}; switches have {ports}")
    names = [f"spine{i}" for i in range(spines)] + [f"leaf{i}" for i in range(leaves)]
    links = [(s, spines + l) for l in range(leaves) for s in range(spines)]
    hosts = [spines + l for l in range(leaves) for _ in range(hosts_per_leaf)]
    return Fabric("leaf-spine", names, [i >= spines for i in range(len(names))], links, hosts, ports, link_gbps)


def fat_tree(k: int = 4, hosts_per_edge: int = 12, ports: int = 24, link_gbps: float = 100.0) -> Fabric:
    """The study's Fat-Tree variant: a k-ary fat-tree's switches ((k/2)² cores, k pods of k/2 aggregation and
    k/2 edge switches) with `hosts_per_edge` hosts under each edge (k = 4, 12 hosts: 4 + 8 + 8 switches, 96
    hosts, 12 : 2 = 6 : 1 oversubscription)."""
    if k % 2 or k < 2:
        raise ValueError(f"k must be even and at least 2, not {k}")
    h = k // 2
    cores = [f"core{i}" for i in range(h * h)]
    aggs = [f"aggr{p}.{j}" for p in range(k) for j in range(h)]
    edges = [f"edge{p}.{j}" for p in range(k) for j in range(h)]
    names = cores + aggs + edges
    c0, a0, e0 = 0, len(cores), len(cores) + len(aggs)
    links = []
    for p in range(k):
        for j in range(h):
            agg = a0 + p * h + j
            links += [(c0 + j * h + c, agg) for c in range(h)]
            links += [(agg, e0 + p * h + e) for e in range(h)]
    if hosts_per_edge + h > ports:
        raise ValueError(f"an edge switch needs {hosts_per_edge + h} ports; switches have {ports}")
    hosts = [e0 + e for e in range(len(edges)) for _ in range(hosts_per_edge)]
    return Fabric("fat-tree", names, [i >= e0 for i in range(len(names))], links, hosts, ports, link_gbps)


def fabric(name: str, ports: int = 24, link_gbps: float = 100.0) -> Fabric:
    """The study's fabric by name: "leaf-spine" or "fat-tree" (20 switches each)."""
    if link_gbps <= 0:
        raise ValueError(f"link_gbps: must be positive, not {link_gbps:g}")
    if name == "leaf-spine":
        return leaf_spine(ports=ports, link_gbps=link_gbps)
    if name == "fat-tree":
        return fat_tree(ports=ports, link_gbps=link_gbps)
    raise ValueError(f"topology: must be leaf-spine or fat-tree, not '{name}'")


def _place(fab: Fabric, workers: int, rng: np.random.Generator) -> tuple[list[int], int]:
    """`workers` + 1 distinct random hosts: worker hosts and the PS host."""
    if workers + 1 > len(fab.hosts):
        raise ValueError(f"{workers} workers and the PS need {workers + 1} hosts; {fab.name} has {len(fab.hosts)}")
    picks = rng.choice(len(fab.hosts), size=workers + 1, replace=False)
    return [int(h) for h in picks[1:]], int(picks[0])


def _aggregators(fab: Fabric, count: int, placement: str, rng: np.random.Generator) -> list[bool]:
    pool = {"random": range(len(fab.switches)), "tor": [i for i, t in enumerate(fab.tor) if t],
            "spine": [i for i, t in enumerate(fab.tor) if not t]}.get(placement)
    if pool is None:
        raise ValueError(f"agg_placement must be random, tor or spine, not '{placement}'")
    pool = list(pool)
    if count > len(pool):
        raise ValueError(f"{count} aggregators, but only {len(pool)} {placement} switches")
    chosen = set(int(i) for i in rng.choice(pool, size=count, replace=False)) if count else set()
    return [i in chosen for i in range(len(fab.switches))]


def _plan(fab: Fabric, is_agg: list[bool], worker_hosts: list[int], ps_host: int,
          segments_sw: list[tuple[str, list[int], str]], meta: dict) -> Plan:
    """A plan on `fab` from segments given as (source name, switch path, destination name)."""
    names = fab.switches
    kinds = {n: ("agg" if a else "cs") for n, a in zip(names, is_agg)}
    ports = {n: fab.ports for n in names}
    links = [(names[u], names[v]) for u, v in fab.links]
    for i, h in enumerate(worker_hosts):
        kinds[f"w{i}"], ports[f"w{i}"] = "worker", 1
        links.append((f"w{i}", names[fab.hosts[h]]))
    kinds["ps"], ports["ps"] = "ps", 1
    links.append(("ps", names[fab.hosts[ps_host]]))
    segs = []
    for src, path, dst in segments_sw:
        seg = [src] if src not in names else []
        seg += [names[s] for s in path]
        if dst not in names:
            seg.append(dst)
        segs.append(seg)
    return Plan(kinds, ports, links, segs, fab.link_gbps, meta)


def aro(fab: Fabric, workers: int, aggregators: int, seed: int, *, layers: int = 5, agg_placement: str = "random",
        solver: str = "cpsat", objective: str = "min-load", time_limit_s: float = 60.0,
        rate_levels: int | None = 100) -> Solution:
    """ARO: random placement, then the optimal aggregation routing on the fixed fabric (exact MILP).

    CP-SAT on the min-load objective proves these instances in about a second (HiGHS's LP bound is weak here
    and often leaves a gap of one flow after a minute). `rate_levels=N` reports the study's quantized rate
    (QSR, N = 100 for ARO in §IV-A): the largest b·k/N with k/N ≤ 1/τ, i.e. b·floor(N/τ)/N for the optimal τ."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    worker_hosts, ps_host = _place(fab, workers, rng)
    is_agg = _aggregators(fab, aggregators, agg_placement, rng)
    S = len(fab.switches)
    at = [0] * S
    names: dict[int, list[str]] = {}
    for i, h in enumerate(worker_hosts):
        at[fab.hosts[h]] += 1
        names.setdefault(fab.hosts[h], []).append(f"w{i}")
    pb = Problem(is_agg, workers, layers, sorted((min(u, v), max(u, v)) for u, v in fab.links),
                 workers_at=at, ps_at=fab.hosts[ps_host])
    res = solve_problem(pb, objective, solver, time_limit_s)
    if res.routing is None:
        raise RuntimeError(f"ARO found no routing within {time_limit_s:g} s")
    plan = plan_from_routing(fab.switches, is_agg, [fab.ports] * S, res.routing, fab.link_gbps,
                             fixed_links=pb.pairs, worker_names=names)
    ev = evaluate(plan)
    if not ev.feasible:
        raise AssertionError("ARO's plan fails the evaluator: " + "; ".join(ev.problems[:3]))
    rate = fab.link_gbps * (rate_levels // ev.max_load) / rate_levels if rate_levels else ev.rate_gbps
    plan.meta = {"scheme": "aro", "topology": fab.name, "seed": seed,
                 "aggregators": [n for n, a in zip(fab.switches, is_agg) if a]}
    bound = fab.link_gbps / res.lower_bound
    if rate_levels:
        bound = fab.link_gbps * (rate_levels // res.lower_bound) / rate_levels
    return Solution("aro", plan, rate, res.optimal, 0.0 if res.optimal else max(0.0, (bound - rate) / bound),
                    time.perf_counter() - t0, {"max_load": ev.max_load, "exact_rate_gbps": ev.rate_gbps})


class _Paths:
    """Hop distances and uniformly random shortest paths between switches (one BFS per source, cached)."""

    def __init__(self, fab: Fabric, rng: np.random.Generator):
        self.g = fab.graph()
        self.rng = rng
        self.dist = dict(nx.all_pairs_shortest_path_length(self.g))
        self.count: dict[int, dict[int, int]] = {}

    def _counts(self, dst: int) -> dict[int, int]:
        """Number of shortest paths from every node to `dst`."""
        if dst not in self.count:
            d = self.dist[dst]
            c = {dst: 1}
            for u in sorted(d, key=d.get):
                if u != dst:
                    c[u] = sum(c[v] for v in self.g[u] if d.get(v, -1) == d[u] - 1)
            self.count[dst] = c
        return self.count[dst]

    def random(self, src: int, dst: int) -> list[int]:
        """A shortest path chosen uniformly among all of them."""
        d, c = self.dist[dst], self._counts(dst)
        path = [src]
        while path[-1] != dst:
            u = path[-1]
            nxt = sorted(v for v in self.g[u] if d.get(v, -1) == d[u] - 1)
            wts = np.array([c[v] for v in nxt], dtype=float)
            path.append(nxt[int(self.rng.choice(len(nxt), p=wts / wts.sum()))])
        return path


def paring(fab: Fabric, workers: int, aggregators: int, seed: int, *, agg_placement: str = "random") -> Solution:
    """PARING as read above: joint placement and overlay (Steiner-tree) routing on hop counts."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    is_agg = _aggregators(fab, aggregators, agg_placement, rng)
    P = _Paths(fab, rng)
    aggs = [i for i, a in enumerate(is_agg) if a]
    tors = sorted(set(fab.hosts))
    slots: dict[int, list[int]] = {}
    for h, t in enumerate(fab.hosts):
        slots.setdefault(t, []).append(h)
    best = None
    for t in tors:
        # overlay: "ps" hangs one hop below ToR t; aggregators are switches
        def cost(a, b, t=t):
            da = P.dist[t if a == "ps" else a][t if b == "ps" else b]
            return da + (a == "ps") + (b == "ps")
        overlay = nx.Graph()
        for a, b in itertools.combinations(["ps", *aggs], 2):
            overlay.add_edge(a, b, weight=cost(a, b))
        if len(overlay) == 0:
            overlay.add_node("ps")
        tree = nx.minimum_spanning_tree(overlay, weight="weight")
        tree_cost = tree.size(weight="weight")
        # every free host's cost to its nearest tree node: 1 (host link) + switch hops (+1 into the PS)
        free = [h for h in range(len(fab.hosts)) if h != slots[t][0]]
        hc = []
        for h in free:
            s = fab.hosts[h]
            c = min([P.dist[s][t] + 2] + [P.dist[s][a] + 1 for a in aggs])
            hc.append((c, float(rng.random()), h))
        hc.sort()
        total = tree_cost + sum(c for c, _, _ in hc[:workers])
        key = (total, float(rng.random()))
        if best is None or key < best[0]:
            best = (key, t, tree, [h for _, _, h in hc[:workers]], slots[t][0])
    _, t, tree, worker_hosts, ps_host = best
    children: dict = {}
    segs = []
    attach = {}
    for i, h in enumerate(worker_hosts):
        s = fab.hosts[h]
        opts = [(P.dist[s][t] + 2, "ps")] + [(P.dist[s][a] + 1, a) for a in aggs]
        low = min(c for c, _ in opts)
        choices = [x for c, x in opts if c == low]
        tgt = choices[int(rng.integers(len(choices)))]
        attach[f"w{i}"] = tgt
        children.setdefault(tgt, []).append(f"w{i}")
    parent = {}
    for u, v in nx.bfs_edges(tree, "ps"):
        parent[v] = u
    # an aggregator carries traffic if a worker or a loaded child aggregator hangs below it
    loaded = set()
    for a in sorted(aggs, key=lambda a: -nx.shortest_path_length(tree, "ps", a)):
        if children.get(a) or any(parent.get(b) == a and b in loaded for b in aggs):
            loaded.add(a)

    def up(a):
        """The nearest loaded ancestor (pruned aggregators in between forward transparently)."""
        p = parent[a]
        while p != "ps" and p not in loaded:
            p = parent[p]
        return p

    for i, h in enumerate(worker_hosts):
        w, s = f"w{i}", fab.hosts[h]
        tgt = attach[w]
        if tgt == "ps":
            segs.append((w, P.random(s, t), "ps"))
        else:
            segs.append((w, P.random(s, tgt), fab.switches[tgt]))
    for a in sorted(loaded):
        p = up(a)
        if p == "ps":
            segs.append((fab.switches[a], P.random(a, t), "ps"))
        else:
            segs.append((fab.switches[a], P.random(a, p), fab.switches[p]))
    plan = _plan(fab, is_agg, worker_hosts, ps_host, segs,
                 {"scheme": "paring", "topology": fab.name, "seed": seed, "aggregators": [fab.switches[a] for a in aggs]})
    ev = evaluate(plan)
    if not ev.feasible:
        raise AssertionError("PARING's plan fails the evaluator: " + "; ".join(ev.problems[:3]))
    return Solution("paring", plan, ev.rate_gbps, False, float("nan"), time.perf_counter() - t0, {"max_load": ev.max_load})


def _spar_segments(fab: Fabric, is_agg: list[bool], worker_hosts: list[int], ps_tor: int,
                   wpath: list[list[int]], apath: dict[int, list[int]]) -> list[tuple[str, list[int], str]]:
    """Each flow aggregated at the first aggregator on its path to the PS; aggregator outputs likewise."""
    segs = []
    used = set()
    todo = [(f"w{i}", p) for i, p in enumerate(wpath)]
    while todo:
        src, path = todo.pop(0)
        cut = next((k for k, s in enumerate(path) if is_agg[s] and fab.switches[s] != src), None)
        if cut is None:
            segs.append((src, path, "ps"))
            continue
        a = path[cut]
        segs.append((src, path[:cut + 1], fab.switches[a]))
        if a not in used:
            used.add(a)
            todo.append((fab.switches[a], apath[a]))
    return segs


def spar(fab: Fabric, workers: int, aggregators: int, seed: int) -> Solution:
    """SPAR as read above: greedy ToR aggregator choice over fixed random shortest-path routing."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    worker_hosts, ps_host = _place(fab, workers, rng)
    P = _Paths(fab, rng)
    ps_tor = fab.hosts[ps_host]
    wpath = [P.random(fab.hosts[h], ps_tor) for h in worker_hosts]
    tors = [i for i, t in enumerate(fab.tor) if t]
    apath = {t: P.random(t, ps_tor) for t in tors}
    chosen: list[int] = []
    meta = {"scheme": "spar", "topology": fab.name, "seed": seed}

    def build(sel):
        is_agg = [i in sel for i in range(len(fab.switches))]
        return _plan(fab, is_agg, worker_hosts, ps_host, _spar_segments(fab, is_agg, worker_hosts, ps_tor, wpath, apath), meta)

    for _ in range(min(aggregators, len(tors))):
        cands = []
        for t in tors:
            if t in chosen:
                continue
            ev = evaluate(build(set(chosen) | {t}))
            cands.append((-ev.rate_gbps, sum(ev.loads.values()), float(rng.random()), t))
        chosen.append(min(cands)[3])
    plan = build(set(chosen))
    plan.meta["aggregators"] = [fab.switches[a] for a in chosen]
    ev = evaluate(plan)
    if not ev.feasible:
        raise AssertionError("SPAR's plan fails the evaluator: " + "; ".join(ev.problems[:3]))
    return Solution("spar", plan, ev.rate_gbps, False, float("nan"), time.perf_counter() - t0, {"max_load": ev.max_load})
