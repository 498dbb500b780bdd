"""Two-level fat-trees FT(2;M0,M1) with failed leaf–spine links: the model the FORS study (seed 004) works on.

The study's named failure scenarios of FT(2;20,18) are in `fabricsim.studies.fors`.

Numbering (the study's §4): server s = α + γ·M0 sits below leaf γ ∈ [0, M1) at position α ∈ [0, M0); there
are M0 spines, and every leaf has one uplink to every spine (the k-ary-L-tree view for L = 2: M0 servers and
M0 uplinks per leaf). The study's switch ids (its Fig. 2) number the leaves SW_0 … SW_{M1−1} and the spines
SW_{M1} … SW_{M1+M0−1}, so on FT(2;20,18) spine σ is SW_{18+σ}.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..checks import flag, integer
from ..errors import ArgumentError

MAX_SERVERS = 20_000_000
"""The most servers an FT(2;M0,M1) may have (the engine's fabric limit)."""


@dataclass(frozen=True)
class FatTree:
    """FT(2;M0,M1) and a set of failed (leaf, spine) links. Immutable; O(1) queries."""

    m0: int
    m1: int
    failed: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    def __post_init__(self):
        object.__setattr__(self, "m0", integer(self.m0, "m0"))
        object.__setattr__(self, "m1", integer(self.m1, "m1"))
        if self.m0 < 1 or self.m1 < 2:
            raise ArgumentError("m0" if self.m0 < 1 else "m1",
                                f"FT(2;{self.m0},{self.m1}): need M0 ≥ 1 spines and M1 ≥ 2 leaves")
        if self.m0 * self.m1 > MAX_SERVERS:
            raise ArgumentError("m0", f"FT(2;{self.m0},{self.m1}) has more than {MAX_SERVERS:,} servers")
        if not isinstance(self.failed, (set, frozenset, list, tuple)):
            raise ArgumentError("failed", f"expected a set of (leaf, spine) pairs, got {type(self.failed).__name__}")
        for leaf, spine in self.failed:
            if not (0 <= leaf < self.m1 and 0 <= spine < self.m0):
                raise ArgumentError("failed", f"failed link ({leaf}, {spine}) is outside FT(2;{self.m0},{self.m1})")

    @property
    def servers(self) -> int:
        """P = M0·M1."""
        return self.m0 * self.m1

    def leaf(self, s: int) -> int:
        """γ_s, the leaf of server s."""
        return s // self.m0

    def alive(self, leaf: int, spine: int) -> bool:
        return (leaf, spine) not in self.failed

    def uplinks(self, leaf: int) -> list[int]:
        """The spines leaf can reach."""
        return [sp for sp in range(self.m0) if (leaf, sp) not in self.failed]

    def common_spines(self, a: int, b: int) -> list[int]:
        """Spines usable from leaf a to leaf b (both links alive)."""
        return [sp for sp in range(self.m0) if (a, sp) not in self.failed and (b, sp) not in self.failed]

    @property
    def f(self) -> int:
        """Bandwidth reduction: the most failed uplinks on any leaf (study §4)."""
        per_leaf: dict[int, int] = {}
        for leaf, _ in self.failed:
            per_leaf[leaf] = per_leaf.get(leaf, 0) + 1
        return max(per_leaf.values(), default=0)

    @property
    def m(self) -> int:
        """Spines impacted by failures (with at least one failed link)."""
        return len({sp for _, sp in self.failed})

    def connected(self) -> bool:
        """Whether every pair of leaves shares at least one spine."""
        return all(self.common_spines(a, b) for a in range(self.m1) for b in range(a + 1, self.m1))

    def with_failed(self, links) -> "FatTree":
        return FatTree(self.m0, self.m1, frozenset(self.failed) | frozenset(links))

    def switch_id(self, kind: str, index: int) -> int:
        """The study's switch number of leaf or spine `index`."""
        return index if kind == "leaf" else self.m1 + index


def random_failures(m0: int, m1: int, links: int, seed: int = 0, keep_connected: bool = True) -> FatTree:
    """`links` failed leaf–spine links drawn uniformly (seeded); with `keep_connected`, redrawn until every
    pair of leaves still shares a spine (raises ValueError after 1000 tries)."""
    FatTree(m0, m1)  # checks m0 and m1
    links = integer(links, "links", low=0, high=int(m0) * int(m1))
    seed = integer(seed, "seed", low=0)
    keep_connected = flag(keep_connected, "keep_connected")
    m0, m1 = int(m0), int(m1)
    rnd = random.Random(seed)
    pool = [(leaf, sp) for leaf in range(m1) for sp in range(m0)]
    for _ in range(1000):
        ft = FatTree(m0, m1, frozenset(rnd.sample(pool, links)))
        if not keep_connected or ft.connected():
            return ft
    raise ValueError(f"no connected FT(2;{m0},{m1}) with {links} failed links found in 1000 draws")
