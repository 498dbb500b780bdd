"""The `fat_tree3` topology family: the k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008), edge ports optionally oversubscribed."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Strict

from ..spec.base import LinkRate, PositiveInt, Requires
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network

PositiveNumber = Annotated[float, Strict(), Requires("number > 0")]
"""A finite number > 0 (an integer is taken as it is; booleans and strings are errors)."""


def hosts_per_edge(k: int, oversubscription: float) -> int:
    """Hosts below each edge switch: oversubscription·k/2 rounded half up (k/2 when it is 1). O(1)."""
    return math.floor(oversubscription * k / 2 + 0.5)


class FatTree3Topology(BuiltTopology):
    """The k-ary three-tier fat-tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)² core switches and
    k³/4 hosts (k/2 per edge switch) when not oversubscribed; every link at `rate`. Edge switch j of pod p is
    `p{p}.e{j}`, its hosts `p{p}.e{j}.h{i}`, aggregation switch j `p{p}.a{j}`, core switch i `c{i}`; every edge
    switch links to every aggregation switch of its pod, and core switch c(j·k/2 + m) (m < k/2) links to
    aggregation switch j of every pod. Routing is least-cost ECMP (every weight 1), which on a fat-tree is
    up/down routing; the longest host-to-host route has 6 links."""

    kind: Literal["fat_tree3"]
    k: PositiveInt
    """Switch radix: an even number ≥ 2. Every switch has k/2 ports down and k/2 up (cores: k down)."""
    rate: LinkRate
    """Rate of every link, host links included."""
    delay: Duration = 0
    """Propagation delay of every link."""
    oversubscription: PositiveNumber = 1
    """Ratio of an edge switch's down-ports (hosts) to its k/2 up-ports: each edge switch has
    round(oversubscription·k/2) hosts (halves rounded up; at least 1), its up-links stay k/2. 1: the classic
    non-blocking fat-tree; 3: three times k/2 hosts per edge switch."""

    def bisection_bps(self) -> int:
        """Closed form: min(hosts/2, k³/8)·rate. Cutting the pods into two halves of k/2 crosses k³/8 links (the
        aggregation–core links of half the pods), and no balanced cut of the hosts crosses fewer than
        min(hosts/2 host links, that); with oversubscription r the k³/8 term rules (hosts/2 = r·k³/8). O(1)."""
        n = self.k * (self.k // 2) * hosts_per_edge(self.k, self.oversubscription)
        return min(n // 2, self.k ** 3 // 8) * self.rate


def fat_tree3(k: int, rate: int | str, delay: int | str = 0, oversubscription: float = 1,
              switch_latency: int | str = 0, switch_model: str = "output_queued",
              input_buffer: int | str = 128 * 1024) -> Network:
    """The k-ary three-tier fat-tree (see FatTree3Topology for names and wiring); raises ScenarioError for an
    odd k (`fat_tree3: k: must be even ...`).

    Nodes: hosts (pod by pod, edge by edge), then edge, aggregation and core switches. Links: host links (each
    host's only NIC), then edge–aggregation (pod, edge, aggregation), then aggregation–core (pod, aggregation,
    core): hosts + k³/2 links. O(hosts + k³)."""
    return family_network("fat_tree3", locals())
