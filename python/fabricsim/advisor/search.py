"""The placement search: candidates (the fabric's named presets, pack/spread families, Chic-sched-like constraint
relaxation), local search by moves and swaps scored by the flow engine, and the best few confirmed at hybrid fidelity
(the packet engine with steady-state fast-forward; `confirm_with="packet"` for the packet engine alone)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ScenarioError
from .fabric import Background, Fabric
from .score import Evaluation, JobSpec, Scorer

Hosts = tuple[int, ...]
"""A placement: the host index of each node in rank order (a host repeats for nodes sharing it)."""


def slots(fabric: Fabric, free: Sequence[Sequence[int]], interfaces: int) -> np.ndarray:
    """How many nodes of `interfaces` NICs each host can still take."""
    return np.asarray([len(f) // interfaces for f in free], dtype=np.int64)


def room(fabric: Fabric, free: Sequence[Sequence[int]], interfaces: int, per_server: int,
         taken: np.ndarray | None = None) -> np.ndarray:
    """How many more nodes each host can take: its free NICs // `interfaces`, at most `per_server` less the nodes of
    other jobs already on it (`taken`, counted only when a cap was asked for)."""
    cap = np.minimum(slots(fabric, free, interfaces), per_server)
    return cap if taken is None else np.minimum(cap, np.maximum(per_server - taken, 0))


def racks_used(fabric: Fabric, hosts: Sequence[int]) -> int:
    return len(set(fabric.rack[list(hosts)].tolist()))


def assign_nics(fabric: Fabric, hosts: Sequence[int], free: Sequence[Sequence[int]], interfaces: int,
                where: str = "placement") -> list[list[tuple[int, int]]]:
    """Per node, its (host, NIC) list: the host's next `interfaces` free NICs in hand-out order.
    ScenarioError naming the server if it has too few free NICs."""
    used: dict[int, int] = {}
    out = []
    for h in hosts:
        first = used.get(h, 0)
        f = free[h]
        if first + interfaces > len(f):
            raise ScenarioError(where, "server", f"server {fabric.ids[h]} has {len(f)} free NIC(s); "
                                f"{first + interfaces} requested")
        out.append([(h, f[first + k]) for k in range(interfaces)])
        used[h] = first + interfaces
    return out


def _fill(hosts_in_order: Sequence[int], cap: np.ndarray, n: int, per_server: int) -> list[int] | None:
    """n nodes taking up to `per_server` slots of each host in the given order; None if they do not fit."""
    out: list[int] = []
    for h in hosts_in_order:
        k = min(int(cap[h]), per_server, n - len(out))
        out += [h] * k
        if len(out) == n:
            return out
    return None


def _round_robin(racks: Sequence[np.ndarray], cap: np.ndarray, n: int) -> list[int] | None:
    """n nodes dealt one server at a time over `racks` in turn (each rack's free servers in order)."""
    queues = [[h for h in r if cap[h] > 0] for r in racks]
    out: list[int] = []
    i = 0
    while len(out) < n and any(queues):
        q = queues[i % len(queues)]
        if q:
            out.append(q.pop(0))
        i += 1
    return sorted(out) if len(out) == n else None


def candidates(fabric: Fabric, n: int, free: Sequence[Sequence[int]], interfaces: int = 1,
               per_server: int | None = None, presets: bool = True, taken: np.ndarray | None = None
               ) -> list[tuple[str, Hosts]]:
    """Distinct feasible starting placements, labelled by how they were built:
    - `preset NAME`: the fabric's named placements of n nodes (`Fabric.presets`, its data file's
      [fabric.placements]), unless `presets` is False;
    - `pack` (first fit in server order) and `pack best-fit` (the racks with the fewest free servers that hold
      the job, fullest first), one node per server, and `pack xK` with K nodes per server; on a GPU fabric
      (`Fabric.gpus`) the pack family fills each server's GPUs first, and `spread servers` puts one node per
      server;
    - `pack emptiest racks` / `pack untouched servers` / `spread R emptiest`: the same, racks with the fewest
      busy NICs first (least interference with background jobs);
    - `spread R` (round robin over the R racks with the most free servers, R = 2, 3, 4, powers of two, and
      min(racks, n));
    - `chic LEVEL` (Chic-sched-like constraint relaxation: the tightest single server, rack, then pod that holds
      all n nodes, relaxing one level at a time; one node per server first within it, on a GPU fabric its
      servers' GPUs filled first).
    O(candidates × hosts)."""
    per = per_server or int(slots(fabric, free, interfaces).max(initial=0)) or 1
    cap = room(fabric, free, interfaces, per, taken)
    one = np.minimum(cap, 1)
    if int(np.minimum(cap, per).sum()) < n:
        raise ScenarioError("fabricsim place", "--nodes", f"{n} nodes of {interfaces} NIC(s) do not fit: the free servers take "
                            f"{int(np.minimum(cap, per).sum())} (at most {per} per server)")
    out: dict[Hosts, str] = {}

    def add(label: str, hosts: list[int] | None) -> None:
        if hosts is not None and len(hosts) == n:
            out.setdefault(tuple(int(h) for h in hosts), label)

    if presets:
        for name, groups in fabric.presets.items():
            if len(groups) == 1 and len(groups[0]) == n and all(s in fabric.index for s in groups[0]):
                hosts = [fabric.index[s] for s in groups[0]]
                need = np.bincount(hosts, minlength=fabric.n)
                if (need <= np.minimum(cap, per)).all():
                    add(f"preset {name}", hosts)
    # Pack: on a GPU fabric, fill a server's GPUs (one NVLink domain), then the next server of its SU; elsewhere
    # one node per server on the fewest servers' racks (study 000's packing: fewest racks, not shared NICs).
    gpu = fabric.gpus is not None
    unit, uper = (cap, per) if gpu else (one, 1)
    if gpu:  # named "pack" before the chic relaxation finds the same servers
        add("pack", _fill(np.arange(fabric.n), cap, n, per))
    # Chic-sched-like: the lowest level whose tightest domain holds all nodes.
    for h in sorted(range(fabric.n), key=lambda h: (cap[h], h)):
        if min(int(cap[h]), per) >= n:
            add("chic server", [h] * n)
            break
    for level, domains in (("rack", fabric.racks), ("pod", _pods(fabric))):
        space = [(int(np.minimum(cap[d], per).sum()), i) for i, d in enumerate(domains)]
        fit = sorted((r, i) for r, i in space if r >= n)
        if fit:
            d = domains[fit[0][1]]
            add(f"chic {level}", _fill(d, cap, n, per) if gpu else _fill(d, one, n, 1) or _fill(d, cap, n, per))
    order = np.arange(fabric.n)
    add("pack", _fill(order, unit, n, uper))
    if gpu:
        add("spread servers", _fill(order, one, n, 1))
    free_per_rack = np.asarray([int(np.minimum(unit[r], uper).sum()) for r in fabric.racks])
    by_fullness = sorted(range(len(fabric.racks)), key=lambda r: (free_per_rack[r], r))
    tight = [r for r in by_fullness if free_per_rack[r] >= n]
    if tight:
        add("pack best-fit", _fill(fabric.racks[tight[0]], unit, n, uper))
    most = sorted(range(len(fabric.racks)), key=lambda r: (-free_per_rack[r], r))
    add("pack fewest racks", _fill(np.concatenate([fabric.racks[r] for r in most]), unit, n, uper))
    # Racks by how little of them is taken (busy NICs or background nodes), emptiest first: least interference.
    busy_nics = np.asarray([int(fabric.nics[r].sum()) - sum(len(free[h]) for h in r) for r in fabric.racks])
    clean = sorted(range(len(fabric.racks)), key=lambda r: (busy_nics[r], -free_per_rack[r], r))
    untouched = [h for r in clean for h in fabric.racks[r] if len(free[h]) == fabric.nics[h]]
    add("pack emptiest racks", _fill(np.concatenate([fabric.racks[r] for r in clean]), unit, n, uper))
    add("pack untouched servers", _fill(untouched, unit, n, uper))
    for k in range(2, per + 1):
        add(f"pack x{k}", _fill(order, cap, n, k))
        fits = [r for r in by_fullness if int(np.minimum(cap[fabric.racks[r]], k).sum()) >= n]
        if fits:
            add(f"pack x{k} best-fit", _fill(fabric.racks[fits[0]], cap, n, k))
    top_r = min(len(fabric.racks), n)
    for r in sorted({2, 3, 4, top_r} | {1 << k for k in range(1, top_r.bit_length())} - {0, 1}):
        if r > top_r:
            continue
        add(f"spread {r}", _round_robin([fabric.racks[x] for x in most[:r]], one, n))
        add(f"spread {r} emptiest", _round_robin([fabric.racks[x] for x in clean[:r]], one, n))
    return [(label, hosts) for hosts, label in out.items()]


def _pods(fabric: Fabric) -> list[np.ndarray]:
    pods = fabric.pod[fabric.rack]
    return [np.flatnonzero(pods == p) for p in range(int(fabric.pod.max()) + 1)]


@dataclass
class Placement:
    """One ranked placement: server ids per node (repeated for nodes sharing a server), the predicted completion
    time (mean over seeds) with its 95% CI, the fidelity that predicted it, and how it was found."""

    servers: list[Any]
    completion_ms: float
    ci95_ms: float
    fidelity: str
    origin: str
    hosts: Hosts = ()
    endpoints: list[list[tuple[str, int]]] = field(default_factory=list)
    flow_ms: float | None = None
    racks: int = 0

    @property
    def server_count(self) -> int:
        """Distinct servers the placement uses."""
        return len(set(self.hosts))

    def to_dict(self) -> dict[str, Any]:
        return {"servers": self.servers, "completion_ms": round(self.completion_ms, 6), "ci95_ms": round(self.ci95_ms, 6),
                "fidelity": self.fidelity, "origin": self.origin, "racks": self.racks,
                "server_count": self.server_count,
                "nics": [[[h, k] for h, k in node] for node in self.endpoints],
                **({"flow_ms": round(self.flow_ms, 6)} if self.flow_ms is not None else {})}


@dataclass
class PlaceResult:
    """The ranked placements (best first), the bottleneck links of the winner, and why it wins."""

    placements: list[Placement]
    bottlenecks: list[dict[str, Any]]
    why: str
    job: str
    fabric: str
    evaluations: int
    wall_s: float
    baseline: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"fabric": self.fabric, "job": self.job, "placements": [p.to_dict() for p in self.placements],
                "bottlenecks": self.bottlenecks, "why": self.why, "evaluations": self.evaluations,
                "wall_s": round(self.wall_s, 3), **({"baseline": self.baseline} if self.baseline else {})}


class Search:
    """Local search over placements of one job: first-improvement hill climbing from the best candidates by
    moving a node to a free server (one representative free server per rack, plus every free server of the racks
    in use) or swapping two nodes' ranks, each move scored by the flow engine's mean over `flow_seeds`."""

    def __init__(self, scorer: Scorer, free: Sequence[Sequence[int]], interfaces: int, flow_seeds: Sequence[int],
                 cap: np.ndarray, rng: np.random.Generator, deadline: float, max_evals: int):
        self.scorer, self.free, self.k, self.seeds = scorer, free, interfaces, list(flow_seeds)
        self.fabric = scorer.fabric
        self.cap = cap
        self.rng, self.deadline, self.max_evals = rng, deadline, max_evals
        self.scores: dict[Hosts, float] = {}

    def score(self, hosts: Hosts) -> float:
        if hosts not in self.scores:
            nodes = assign_nics(self.fabric, hosts, self.free, self.k)
            self.scores[hosts] = float(self.scorer.evaluate(nodes, self.seeds, "flow").times.mean())
        return self.scores[hosts]

    def out_of_budget(self) -> bool:
        return time.perf_counter() > self.deadline or len(self.scores) >= self.max_evals

    def neighbours(self, hosts: Hosts) -> list[Hosts]:
        used = np.bincount(hosts, minlength=self.fabric.n)
        left = self.cap - used
        in_use = set(self.fabric.rack[list(hosts)].tolist())
        targets: list[int] = []
        for r, members in enumerate(self.fabric.racks):
            open_ = [h for h in members if left[h] > 0]
            if not open_:
                continue
            targets += open_ if r in in_use else open_[:1]
        out: list[Hosts] = []
        for i in range(len(hosts)):
            for t in targets:
                if t != hosts[i]:
                    out.append(hosts[:i] + (t,) + hosts[i + 1:])
        n = len(hosts)
        for i in range(n):
            for j in range(i + 1, n):
                if hosts[i] != hosts[j]:
                    h = list(hosts)
                    h[i], h[j] = h[j], h[i]
                    out.append(tuple(h))
        self.rng.shuffle(out)
        return out

    def climb(self, start: Hosts) -> Hosts:
        best, best_t = start, self.score(start)
        improved = True
        while improved and not self.out_of_budget():
            improved = False
            for nb in self.neighbours(best):
                if self.out_of_budget():
                    break
                t = self.score(nb)
                if t < best_t * (1 - 1e-4):
                    best, best_t, improved = nb, t, True
                    break
        return best


def place(fabric: Fabric, nodes: int, job: JobSpec | None = None, *, free: Sequence[Sequence[int]] | None = None,
          background: Sequence[Background] = (), top: int = 2, seeds: int = 3, extra: int = 3, flow_seeds: int | None = None,
          per_server: int | None = None, budget_s: float | None = None, max_evals: int | None = None,
          confirm: bool = True, confirm_with: str = "hybrid", seed: int = 1, presets: bool = True,
          compare: Sequence[tuple[str, Hosts]] = (), progress: Callable[[str], None] | None = None) -> PlaceResult:
    """Rank placements of `nodes` nodes of `job` on `fabric` (free NICs `free`, default all) beside `background`.

    Candidates (see `candidates`) are scored by the flow engine over `flow_seeds` seeds from `seed` (ECMP draws
    `seed`..`seed`+`flow_seeds`-1, as the confirming runs' `seed`..`seed`+`seeds`-1; default 3
    on fabrics of up to 100 servers, else 1), the best three are improved by local search until `max_evals`
    distinct placements have been scored (default 300 up to 100 servers, else 60; deterministic for a given
    `seed`) or, if given, `budget_s` seconds have passed (a time cap makes the result depend on the machine), and
    the `top` best distinct shapes (nodes per rack, servers used) are run at fidelity `confirm_with` ("hybrid", the
    default, or "packet") over `seeds` seeds (`confirm`) and ranked first. The flow engine cannot stand in for them:
    it models no buffers, so at 4 MiB input buffers (study 000's calibration) it is pessimistic by up to 28% on contended
    collectives (issue 30; docs/guide/hybrid.md). They rank first; the `extra` next best follow with their flow-engine prediction (fidelity "flow"). Placements are ranked by their best-fidelity completion
    time. `compare` adds named placements to score and rank beside the search's (e.g. a study's recommendation)."""
    t0 = time.perf_counter()
    job = job or JobSpec()
    free = [list(f) for f in (free if free is not None else fabric.all_free())]
    if job.trace is not None and nodes != len(job.trace):
        raise ScenarioError("fabricsim place", "--nodes", f"the trace has {len(job.trace)} ranks; --nodes gives {nodes}")
    if nodes < 2:
        raise ScenarioError("fabricsim place", "--nodes", f"a collective needs at least 2 nodes, got {nodes}")
    if confirm_with not in ("hybrid", "packet"):
        raise ScenarioError("fabricsim place", "--confirm-with", f"must be hybrid or packet, got {confirm_with!r}")
    if top < 1 or seeds < 1:
        raise ScenarioError("fabricsim place", "--top" if top < 1 else "--seeds", "must be >= 1")
    small = fabric.n <= 100
    flow_seeds = flow_seeds or (3 if small else 1)
    max_evals = max_evals or (300 if small else 60)
    deadline = t0 + budget_s if budget_s is not None else float("inf")
    most = int(slots(fabric, free, job.interfaces).max(initial=0)) or 1
    per = min(per_server or most, most)
    scorer = Scorer(fabric, job, background)
    taken = None
    if per_server is not None:  # a background job's nodes count against per_server
        taken = np.zeros(fabric.n, dtype=np.int64)
        for b in background:
            for node in b.nodes:
                taken[node[0][0]] += 1
    cands = candidates(fabric, nodes, free, job.interfaces, per, presets, taken)
    labels = {h: lab for lab, h in cands}
    for lab, h in compare:
        labels.setdefault(tuple(h), lab)
    search = Search(scorer, free, job.interfaces, range(seed, seed + flow_seeds), room(fabric, free, job.interfaces, per, taken),
                    np.random.default_rng(seed), deadline, max_evals)
    say = progress or (lambda s: None)
    say(f"scoring {len(labels)} candidates with the flow engine ({flow_seeds} seed(s) each)")
    for h in labels:
        search.score(h)
    starts = sorted(labels, key=search.score)[:3]
    for s in starts:
        if search.out_of_budget():
            break
        say(f"local search from {labels[s]} ({search.score(s) * 1e3:.3f} ms)")
        best = search.climb(s)
        if best not in labels:
            labels[best] = f"local search from {labels[s]}"
    ranked = sorted(search.scores, key=lambda h: (search.scores[h], racks_used(fabric, h), len(set(h)), h))
    chosen: list[Hosts] = []
    seen: set[Hosts] = set()
    for h in ranked:  # the best of each distinct shape: how many nodes in each rack, on how many servers
        key = (tuple(np.bincount(fabric.rack[list(h)], minlength=len(fabric.racks)).tolist()), len(set(h)))
        if key not in seen:
            seen.add(key)
            chosen.append(h)
        if len(chosen) == top + extra:
            break
    rest = chosen[top:] if confirm else []
    chosen = chosen[:top] if confirm else chosen
    for _, h in compare:
        if tuple(h) not in chosen:
            chosen.append(tuple(h))
    # On a GPU fabric pack (a server's GPUs filled in rank order, NCCL's layout) is confirmed too: the flow engine,
    # which models no per-packet latency, can prefer a same-shape reordering that the packet engine finds slower.
    packed = _fill(np.arange(fabric.n), search.cap, nodes, per) if fabric.gpus is not None and confirm else None
    packed = tuple(packed) if packed is not None else None
    if packed is not None and packed not in chosen:
        chosen.append(packed)
        rest = [h for h in rest if h != packed]
    # The confirmed placements with their hybrid- or packet-fidelity times, then the rest (flow engine only) after them.
    shown = chosen + rest
    nodes_of = [assign_nics(fabric, h, free, job.interfaces) for h in shown]
    flows = scorer.evaluate_all(nodes_of, list(range(seed, seed + flow_seeds)), "flow")
    evs = list(flows)
    if confirm:
        say(f"{confirm_with} fidelity: {len(chosen)} placements x {seeds} seed(s)")
        evs[:len(chosen)] = scorer.evaluate_all(nodes_of[:len(chosen)], list(range(seed, seed + seeds)), confirm_with)
    out = [Placement([fabric.ids[x] for x in h], ev.mean_ms, ev.ci95_ms, ev.fidelity, labels.get(h, "local search"), h,
                     [[fabric.endpoint(*e) for e in node] for node in nd], fl.mean_ms, racks_used(fabric, h))
           for h, nd, fl, ev in zip(shown, nodes_of, flows, evs)]
    out.sort(key=lambda p: (p.fidelity == "flow", p.completion_ms, p.racks, len(set(p.hosts)), p.hosts))
    best = out[0]
    best_nodes = assign_nics(fabric, best.hosts, free, job.interfaces)
    alone = Scorer(fabric, job).evaluate(best_nodes, [1], "flow", detail=True)
    shared = scorer.evaluate(best_nodes, [1], "flow", detail=True) if background else None
    bottlenecks = _bottlenecks(fabric, alone, shared)
    why = _why(fabric, out, bottlenecks, background, alone.hop_packets)
    return PlaceResult(out, bottlenecks, why, job.label, fabric.name, scorer.evaluations,
                       time.perf_counter() - t0)


def _bottlenecks(fabric: Fabric, ev: Evaluation, shared: Evaluation | None, k: int = 3) -> list[dict[str, Any]]:
    """The `k` directed links the winner's own traffic keeps busiest (flow engine, seed 1, the job alone): its bytes
    over the link / (the link's rate × the job's completion time). `shared_with_background`: the background jobs
    send over the link too (`shared`: the run beside them)."""
    net = fabric.scenario.topology.network()
    names = [nd.name for nd in net.nodes]
    ports: dict[str, list] = {}
    for ln in net.links:
        ports.setdefault(ln.a, []).append((ln.b, ln.rate))
        ports.setdefault(ln.b, []).append((ln.a, ln.rate))
    t = float(ev.times[0])
    hosts = fabric.network_hosts
    rows = []
    for (node, port), b in ev.link_bytes.items():
        a = names[node]
        peer, rate = ports[a][port]
        label = f"{a} NIC {port} -> {peer}" if a in hosts else f"{a} -> {peer}"
        row = {"link": label, "utilization": round(float(b) * 8 / (rate * t), 4) if t else 0.0,
               "mbytes": round(float(b) / 1e6, 3)}
        if shared is not None:
            row["shared_with_background"] = shared.link_bytes.get((node, port), 0.0) > b * (1 + 1e-9)
        rows.append(row)
    rows.sort(key=lambda r: (-r["utilization"], r["link"]))
    return rows[:k]


def _why(fabric: Fabric, ranked: list[Placement], bottlenecks: list[dict], background, hops: dict[int, int]) -> str:
    """One sentence on why the winner wins: where its nodes sit, how much of its traffic stays under one switch,
    what limits it (its NICs, or a shared link), and by how much it beats the runner-up."""
    best = ranked[0]
    shared = len(best.hosts) - len(set(best.hosts))
    if fabric.gpus is not None:  # a GPU fabric: nodes are GPUs, servers NVLink domains, racks an SU's rail leaves
        k = len(set(best.hosts))
        where = (f"its {len(best.hosts)} GPUs sit on {k} server{'s' if k > 1 else ''} in {best.racks} "
                 f"rack{'s' if best.racks > 1 else ''} (scalable units)")
    else:
        where = (f"its {len(best.hosts)} nodes sit in {best.racks} rack{'s' if best.racks > 1 else ''}"
                 + (f" ({shared} sharing a server)" if shared else ""))
    total = sum(hops.values())
    local = f", {100 * hops.get(min(hops), 0) / total:.0f}% of its packets stay under one switch" if total else ""
    link = bottlenecks[0] if bottlenecks else None
    limit = ""
    if link:
        kind = "NIC" if " NIC " in link["link"] else "fabric link"
        limit = (f"; its busiest link ({kind} {link['link']}) is busy {100 * link['utilization']:.0f}% of the run"
                 + (", shared with the background" if link.get("shared_with_background") else ""))
    vs = ""
    if len(ranked) > 1:
        nxt = ranked[1]
        gap = (nxt.completion_ms - best.completion_ms) / nxt.completion_ms * 100 if nxt.completion_ms else 0
        vs = (f"; the runner-up ({nxt.origin}) is {gap:.1f}% slower" if gap > 0.05 else
              f"; it ties with the runner-up ({nxt.origin}) and is ranked first for using "
              f"{'fewer racks' if best.racks < nxt.racks else 'fewer servers' if len(set(best.hosts)) < len(set(nxt.hosts)) else 'lower server ids'}")
    bg = f" beside {len(background)} background job{'s' if len(background) > 1 else ''}" if background else ""
    return f"{best.origin} wins{bg}: {where}{local}{limit}{vs}."
