"""The `torus` topology family: a 2- or 3-dimensional torus of routers with wrap-around links, each router with its hosts, routed in dimension order."""

from __future__ import annotations

import math
from typing import Literal

from ..spec.base import LinkRate, PositiveInt
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


def ring_links(d: int) -> int:
    """Links of a ring of d routers: d with wrap-around (d ≥ 3), 1 for d = 2 (the two neighbours are one
    node: one link, not two), 0 for d = 1. O(1)."""
    return d if d >= 3 else d - 1


class TorusTopology(BuiltTopology):
    """A torus of routers `r{x}.{y}` (2 dimensions) or `r{x}.{y}.{z}` (3), each linked to its neighbours along
    every dimension with wrap-around; a dimension of size 2 gets one link between its two routers, size 1
    none. A torus node is a router (a switch) plus its hosts `r{x}.{y}.{z}.h{i}`, since hosts never forward
    in fabricsim: traffic crosses routers only. The network's policy is dimension-order routing
    (DimensionOrderPolicy: the first coordinate that differs is corrected first, the shorter way round)."""

    kind: Literal["torus"]
    dims: list[PositiveInt]
    """The size of each dimension: 2 or 3 numbers, e.g. [4, 4, 4] (64 routers, 192 router–router links)."""
    rate: LinkRate
    """Rate of every link (router–router and host–router)."""
    delay: Duration = 0
    """Propagation delay of every link."""
    hosts_per_router: PositiveInt = 1
    """Hosts attached to each router."""

    def bisection_bps(self) -> int:
        """Closed form: min(hosts/2, cut)·rate, where cutting the torus in half across a dimension of size d
        crosses routers/d rings, 2 links each (d ≥ 3: the wrap-around crosses too) or 1 (d = 2). The cut is the
        least over the dimensions of even size (halves of equal size); with none, the largest dimension's (its
        halves then differ by one plane of routers); one router alone: the host links. O(dims)."""
        routers = math.prod(self.dims)
        n_hosts = routers * self.hosts_per_router

        def cut(d: int) -> int:
            return routers // d * (2 if d >= 3 else 1)

        even = [cut(d) for d in self.dims if d % 2 == 0]
        if not even and max(self.dims) == 1:
            return n_hosts // 2 * self.rate
        return min(n_hosts // 2, min(even) if even else cut(max(self.dims))) * self.rate


def torus(dims: list[int], rate: int | str, delay: int | str = 0, hosts_per_router: int = 1,
          switch_latency: int | str = 0, switch_model: str = "output_queued",
          input_buffer: int | str = 128 * 1024) -> Network:
    """A 2- or 3-dimensional torus (see TorusTopology for names); raises ScenarioError for another number of
    dimensions.

    Nodes: hosts (router by router, in linear order), then routers in linear order. Links: host links (each
    host's only NIC), then dimension by dimension, each router's link (in linear order) to the next router
    along it (coordinate + 1 mod size; for size 2 from coordinate 0 only). routers·hosts_per_router +
    Σ_dims routers/d·ring_links(d) links. O(nodes + links)."""
    return family_network("torus", locals())
