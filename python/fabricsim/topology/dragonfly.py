"""The `dragonfly` topology family: groups of fully connected routers, every pair of groups joined by global links (Kim et al., ISCA 2008)."""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


def links_between(a: int, h: int, g: int, d: int) -> int:
    """Global links between two groups d apart (1 ≤ d < g): one per full round of g − 1 ports, plus one in the
    last, partial round of r = a·h mod (g−1) ports if both offsets d and g − d are in it (≤ r). O(1)."""
    rounds, r = divmod(a * h, g - 1)
    return rounds + (d <= r and g - d <= r)


class DragonflyTopology(BuiltTopology):
    """A dragonfly: g groups of a routers `g{group}.r{router}`, each router with p hosts `g{group}.r{router}.h{i}`
    and h global links; the routers of a group are fully connected by local links.

    Global links, the consecutive ("palmtree") arrangement: group G numbers its a·h global ports k = r·h + j
    (router r's j-th) and port k leads to group (G + k mod (g−1) + 1) mod g. With the maximum g = a·h + 1 every
    pair of groups has exactly one global link (port k of G meets port a·h − 1 − k of G + k + 1). With fewer
    groups the ports go round again: each pair of groups gets ⌊a·h/(g−1)⌋ links, or one more from the last,
    partial round, and the ports of that round whose peer port does not exist stay unused (min(r, g−1−r) per
    group, r = a·h mod (g−1)). Global links weigh 3 and local links 1, so least-cost ECMP is
    the dragonfly's minimal routing: local, global, local (at most 3 router hops; 5 links host to host)."""

    kind: Literal["dragonfly"]
    p: PositiveInt
    """Hosts per router."""
    a: PositiveInt
    """Routers per group."""
    h: PositiveInt
    """Global links per router."""
    g: PositiveInt | None = None
    """Number of groups, 2 to a·h + 1; unset: a·h + 1, the most (one global link between every two groups)."""
    rate: LinkRate
    """Rate of every link (host, local and global)."""
    delay: Duration = 0
    """Propagation delay of every link."""
    routing: Literal["minimal", "valiant"] = "minimal"
    """"minimal" (least-cost ECMP: local, global, local) or "valiant" (a message between groups goes minimally
    to a router of a random third group, then minimally on: the network's policy is a ValiantPolicy). UGAL is
    not supported."""

    @property
    def groups(self) -> int:
        """g, or a·h + 1 when unset."""
        return self.a * self.h + 1 if self.g is None else self.g

    def bisection_bps(self) -> int:
        """Closed form: min(hosts/2, global links between the first ⌊g/2⌋ groups and the others)·rate, the
        standard dragonfly bisection (a cut between halves of the groups; ≈ a·h·g/4 global links). With g odd
        the two halves differ by one group. O(g)."""
        g = self.groups
        cut = sum(links_between(self.a, self.h, g, (j - i) % g) for i in range(g // 2) for j in range(g // 2, g))
        return min(g * self.a * self.p // 2, cut) * self.rate


def dragonfly(p: int, a: int, h: int, rate: int | str, g: int | None = None, delay: int | str = 0,
              routing: str = "minimal", switch_latency: int | str = 0, switch_model: str = "output_queued",
              input_buffer: int | str = 128 * 1024) -> Network:
    """A dragonfly (see DragonflyTopology for names and the global wiring); raises ScenarioError for g outside
    2..a·h+1 or an unsupported routing.

    Nodes: hosts (group, router, host), then routers (group, router). Links: host links (each host's only
    NIC), local links (group, then router pairs r < r'), global links (group, port, each once from its lower
    (group, port) end). g·a·p + g·a(a−1)/2 + (used global ports)/2 links. O(nodes + links)."""
    return family_network("dragonfly", locals())
