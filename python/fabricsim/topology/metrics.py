"""What `fabricsim topology` reports about a network: node and link counts, the diameter of its least-cost routes and its bisection bandwidth."""

from __future__ import annotations

from typing import Any

from ..spec.network import Network

CHUNK_CELLS = 4_000_000
"""Host-class pairs (NIC pairs) handled per step of `diameter_hops` (bounds its working memory to ~100 MB)."""
ROOT_CELLS = 30_000_000
"""`diameter_hops` keeps the distances from its search roots to every switch when they fit in this many cells
(240 MB); otherwise it searches from each attachment switch, chunk by chunk."""
RELAY_DEGREE = 4
"""An attachment switch with at most this many switch neighbours is a relay: its distances are derived from its
neighbours' (`_Distances`) when that means fewer searches (a rail cluster's NICs: 8,192 become 1,280 roots)."""
ESTIMATE_MAX_NODES = 10_000
"""The bisection estimate (Kernighan–Lin) runs on networks up to this many nodes (~1 s per 1,000); larger ones
report none."""


def counts(network: Network) -> dict[str, int]:
    """Hosts, switches and links (parallel links counted one by one). O(nodes + links)."""
    hosts = sum(n.kind == "host" for n in network.nodes)
    return {"hosts": hosts, "switches": len(network.nodes) - hosts, "links": len(network.links)}


class _Fabric:
    """A network as `diameter_hops` sees it: the switch graph (least weight per switch pair), host classes
    (hosts with the same attachments (switch, weight); a host with a direct host–host link is a class of its
    own) with their NICs, class sizes, and the direct host–host links. O(nodes + links)."""

    def __init__(self, network: Network):
        kinds = {n.name: n.kind for n in network.nodes}
        self.sw = {n.name: i for i, n in enumerate(x for x in network.nodes if x.kind == "switch")}
        sw = self.sw
        self.edges: dict[tuple[int, int], int] = {}  # (i, j), i < j -> least weight among parallel links
        attach: dict[str, dict[int, int]] = {n: {} for n, k in kinds.items() if k == "host"}
        self.direct: list[tuple[str, str, int]] = []
        for l in network.links:
            ka, kb = kinds[l.a], kinds[l.b]
            if ka == kb == "switch":
                key = (min(sw[l.a], sw[l.b]), max(sw[l.a], sw[l.b]))
                self.edges[key] = min(self.edges.get(key, l.weight), l.weight)
            elif ka == kb == "host":
                self.direct.append((l.a, l.b, l.weight))
            else:
                h, s = (l.a, l.b) if ka == "host" else (l.b, l.a)
                attach[h][sw[s]] = min(attach[h].get(sw[s], l.weight), l.weight)
        self.n_hosts = len(attach)
        on_direct = {h for a, b, _ in self.direct for h in (a, b)}
        cls_of: dict[Any, int] = {}
        self.host_cls: dict[str, int] = {}
        self.sizes: list[int] = []
        self.nics: list[list[tuple[int, int]]] = []  # per class: (switch, weight), sorted
        for h, att in attach.items():
            sig = ("host", h) if h in on_direct else tuple(sorted(att.items()))
            c = cls_of.get(sig)
            if c is None:
                c = cls_of[sig] = len(self.sizes)
                self.sizes.append(0)
                self.nics.append(sorted(att.items()))
            self.sizes[c] += 1
            self.host_cls[h] = c


class _Distances:
    """Combined distances (`diameter_hops`: weight·M − 1 per link) from attachment switches to every switch.

    A relay (an attachment switch with at most RELAY_DEGREE switch neighbours) is not searched from: its row
    is the least over its neighbours n of (combined weight to n) + (n's row), with 0 at itself, which is exact
    since a least-cost route from it starts with one of those links. The roots searched from (the other
    attachment switches and the relays' neighbours) are searched once when their rows fit in ROOT_CELLS,
    else the relays are dropped and each chunk searches from its own switches."""

    def __init__(self, fabric: _Fabric, attached, M: int):
        import numpy as np

        n = self.n = len(fabric.sw)
        self.uniform = len(set(fabric.edges.values())) <= 1
        w0 = next(iter(fabric.edges.values()), 1)
        self.scale = M * w0 - 1 if self.uniform else 1  # hop counts to combined values
        try:
            from scipy.sparse import csr_matrix
        except ModuleNotFoundError:  # a base install: networkx searches instead (slower, the same distances)
            self.graph = None
            self.edges = [(a, b, 1.0 if self.uniform else w * M - 1.0) for (a, b), w in fabric.edges.items()]
        else:
            if fabric.edges:
                i, j = np.array(list(fabric.edges)).T
                w = np.array(list(fabric.edges.values()), dtype=float)
                self.graph = csr_matrix((np.ones_like(w) if self.uniform else w * M - 1, (i, j)), shape=(n, n))
            else:
                self.graph = csr_matrix((n, n))
        adj: dict[int, dict[int, float]] = {}
        for (a, b), w in fabric.edges.items():
            adj.setdefault(a, {})[b] = adj.setdefault(b, {})[a] = w * M - 1
        attached = set(int(s) for s in attached)
        self.relay = {s: adj[s] for s in attached if 0 < len(adj.get(s, ())) <= RELAY_DEGREE}
        roots = sorted((attached - set(self.relay)) | {v for nb in self.relay.values() for v in nb})
        if len(roots) >= len(attached) or len(roots) * n > ROOT_CELLS:
            self.relay, roots = {}, sorted(attached)
        self.rows = None
        if len(roots) * n <= ROOT_CELLS:
            self.root_pos = {r: k for k, r in enumerate(roots)}
            self.rows = self._search(np.array(roots, dtype=np.int64))

    def _search(self, src):
        """Rows of least combined distances from the switches `src` (SciPy's Dijkstra when SciPy is installed,
        else networkx's; both sum the same integer-valued weights, so the rows are equal)."""
        import numpy as np

        if self.graph is not None:
            from scipy.sparse.csgraph import dijkstra

            return dijkstra(self.graph, directed=False, indices=src, unweighted=self.uniform) * self.scale
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.n))
        g.add_weighted_edges_from(self.edges)
        out = np.full((len(src), self.n), np.inf)
        for k, s in enumerate(np.asarray(src).tolist()):
            for v, d in nx.single_source_dijkstra_path_length(g, s).items():
                out[k, v] = d
        return out * self.scale

    def of(self, switches):
        """Rows (len(switches) × switches) of combined distances from these switches."""
        import numpy as np

        if self.rows is None:
            return self._search(switches)
        out = np.empty((len(switches), self.n))
        for k, s in enumerate(switches.tolist()):
            if s in self.relay:
                row = np.full(self.n, np.inf)
                for v, wc in self.relay[s].items():
                    np.minimum(row, self.rows[self.root_pos[v]] + wc, out=row)
                row[s] = 0
                out[k] = row
            else:
                out[k] = self.rows[self.root_pos[s]]
        return out


def diameter_hops(network: Network) -> int | None:
    """The number of links on the longest least-cost host-to-host route: the maximum over pairs of distinct
    hosts of the most links on any least-cost route between them (the longest path ECMP may use), where a
    route goes host, switches, host (hosts never forward; a direct host–host link is a 1-link route) and its
    cost is the sum of its links' weights, over the cheapest pair of the two hosts' NICs. None if some pair of
    hosts has no route, or there are fewer than two hosts. Routing policies (dimension order, Valiant, PXN)
    are not applied: this is the least-cost routing they start from.

    Method: shortest-path searches over the switch-only graph (scipy: breadth-first when every switch–switch
    link has the same weight, else Dijkstra on weight·M − 1 with M above any hop count, so the least cost
    wins and, among least-cost routes, the most links) from the attachment switches (`_Distances`), then
    every pair of host classes (`_Fabric`) combines its NICs. O(R·(S + L) + E²) for R searches, S switches,
    L switch–switch links, E class NICs: k = 16 fat_tree3 (1,344 nodes) ~0.01 s, k = 48 (30,528) ~1 s, the
    8,192-GPU rail cluster a few seconds. Exact while M·(S + 2)·(largest weight) < 2^52, else ValueError."""
    import numpy as np

    fab = _Fabric(network)
    if fab.n_hosts < 2:
        return None
    n_sw, nics = len(fab.sw), fab.nics
    M = n_sw + 3  # more than any route's number of links
    weights = list(fab.edges.values()) + [w for n in nics for _, w in n] + [w for *_, w in fab.direct]
    if M * (n_sw + 2) * max(weights) >= 2 ** 52:
        raise ValueError("link weights are too large for an exact diameter (keep M·switches·weight below 2^52)")
    # NIC entries, class by class: entry e is (class, switch, weight).
    e_cls = np.array([c for c, n in enumerate(nics) for _ in n], dtype=np.int64)
    e_sw = np.array([s for n in nics for s, _ in n], dtype=np.int64)
    e_w = np.array([w for n in nics for _, w in n], dtype=float)
    n_cls = len(nics)
    has_nic = np.array([bool(n) for n in nics])
    single = all(len(n) == 1 for n in nics)  # entries are classes
    starts = np.searchsorted(e_cls, np.arange(n_cls))
    dist = _Distances(fab, np.unique(e_sw), M)
    direct_at = [(fab.host_cls[a], fab.host_cls[b], w) for a, b, w in fab.direct]
    direct_at += [(b, a, w) for a, b, w in direct_at]
    sizes = np.array(fab.sizes)
    worst = 0
    step = max(1, CHUNK_CELLS // max(len(e_cls), 1))
    for c0 in range(0, n_cls, step):
        c1 = min(n_cls, c0 + step)
        V = np.full((c1 - c0, n_cls), np.inf)
        rows = np.flatnonzero((e_cls >= c0) & (e_cls < c1))
        if len(rows):
            # Combined value of a NIC pair: its two host links, then the switch route between them.
            E = dist.of(e_sw[rows])[:, e_sw] + M * (e_w[rows][:, None] + e_w[None, :]) - 2
            if single:
                V[:] = E
            else:  # least over the NICs of each class: rows by the chunk's classes, columns by all
                ok = has_nic[c0:c1]
                E = np.minimum.reduceat(E, np.searchsorted(e_cls[rows], np.arange(c0, c1))[ok], axis=0)
                V[np.ix_(np.flatnonzero(ok), np.flatnonzero(has_nic))] = np.minimum.reduceat(
                    E, starts[has_nic], axis=1)
        for a, b, w in direct_at:
            if c0 <= a < c1:
                V[a - c0, b] = min(V[a - c0, b], M * w - 1)
        valid = np.ones_like(V, dtype=bool)
        diag = np.arange(c0, c1)
        valid[diag - c0, diag] = sizes[c0:c1] >= 2
        vals = V[valid]
        if not len(vals):
            continue
        if not np.isfinite(vals).all():
            return None
        worst = max(worst, int((np.ceil(vals / M) * M - vals).max()))
    return worst


def estimate_bisection_bps(network: Network, seed: int = 1, tries: int = 4) -> int | None:
    """An estimate of the bisection bandwidth (an upper bound on it), the least over `tries` seeded attempts:
    a Kernighan–Lin bisection of the network (networkx, link rates as weights), its hosts rebalanced to halves
    (⌊n/2⌋ and ⌈n/2⌉: the hosts with the most capacity into the other side move first), then the exact min cut
    between the two host halves (max flow, link rates as capacities, both directions). None for fewer than two
    hosts or more than ESTIMATE_MAX_NODES nodes. Kernighan–Lin is a heuristic: the true bisection may be
    lower."""
    import networkx as nx
    from networkx.algorithms.community import kernighan_lin_bisection

    hosts = [n.name for n in network.nodes if n.kind == "host"]
    if len(hosts) < 2 or len(network.nodes) > ESTIMATE_MAX_NODES:
        return None
    g = nx.Graph()
    g.add_nodes_from(n.name for n in network.nodes)
    for l in network.links:
        cap = g.edges[l.a, l.b]["capacity"] if g.has_edge(l.a, l.b) else 0
        g.add_edge(l.a, l.b, capacity=cap + l.rate)
    return min(_host_cut(g, hosts, kernighan_lin_bisection(g, weight="capacity", seed=seed + i)[0])
               for i in range(tries))


def _host_cut(g, hosts: list[str], side_a: set) -> int:
    """The min cut between the hosts of a bisection (`side_a` and the rest), rebalanced to halves."""
    import networkx as nx

    in_a = [h for h in hosts if h in side_a]
    in_b = [h for h in hosts if h not in side_a]
    big, small = (in_a, in_b) if len(in_a) > len(in_b) else (in_b, in_a)
    big_side = side_a if big is in_a else set(g) - side_a

    def pull(h: str) -> int:
        """Capacity from host h into the other side, less into its own."""
        return sum(d["capacity"] * (-1 if v in big_side else 1) for _, v, d in g.edges(h, data=True))

    movers = set(sorted(big, key=pull, reverse=True)[:(len(big) - len(small)) // 2])
    flow = g.copy()
    flow.add_edges_from(("\0src", h) for h in big if h not in movers)
    flow.add_edges_from((h, "\0dst") for h in small + sorted(movers))
    return int(nx.minimum_cut_value(flow, "\0src", "\0dst", capacity="capacity"))


def summary(topology, network: Network | None = None) -> dict[str, Any]:
    """A scenario topology's numbers: kind, hosts, switches, links, diameter_hops (`diameter_hops`),
    bisection_gbps and how it was found ("closed form" from the family's `bisection_bps()`, else "estimate",
    see `estimate_bisection_bps`; None if neither applies), and the routing policy's kind (None for
    least-cost ECMP alone). `network` is the topology's, if already built."""
    net = topology.network() if network is None else network
    closed = getattr(topology, "bisection_bps", None)
    bps = closed() if closed is not None else estimate_bisection_bps(net)
    return {"kind": topology.kind, **counts(net), "diameter_hops": diameter_hops(net),
            "bisection_gbps": None if bps is None else bps / 1e9,
            "bisection": "closed form" if closed is not None else ("estimate" if bps is not None else None),
            "policy": net.policy.kind if net.policy is not None else None}
