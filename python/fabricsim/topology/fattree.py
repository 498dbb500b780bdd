"""Two-level fat-trees FT(2;M0,M1) with failed leaf–spine links: the model the FORS study (seed 004) works on.

Numbering (the study's §4): server s = α + γ·M0 sits below leaf γ ∈ [0, M1) at position α ∈ [0, M0); there
are M0 spines, and every leaf has one uplink to every spine (the k-ary-L-tree view for L = 2: M0 servers and
M0 uplinks per leaf). The study's switch ids (its Fig. 2) number the leaves SW_0 … SW_{M1−1} and the spines
SW_{M1} … SW_{M1+M0−1}, so on FT(2;20,18) spine σ is SW_{18+σ}.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FatTree:
    """FT(2;M0,M1) and a set of failed (leaf, spine) links. Immutable; O(1) queries."""

    m0: int
    m1: int
    failed: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    def __post_init__(self):
        if self.m0 < 1 or self.m1 < 2:
            raise ValueError(f"FT(2;{self.m0},{self.m1}): need M0 ≥ 1 spines and M1 ≥ 2 leaves")
        for leaf, spine in self.failed:
            if not (0 <= leaf < self.m1 and 0 <= spine < self.m0):
                raise ValueError(f"failed link ({leaf}, {spine}) is outside FT(2;{self.m0},{self.m1})")

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


def _fail_spines(ft: FatTree, spines) -> FatTree:
    return ft.with_failed((leaf, sp) for sp in spines for leaf in range(ft.m1))


def scenario(name: str, m0: int = 20, m1: int = 18, seed: int = 0) -> FatTree:
    """The study's named failure scenarios (§3.1), on FT(2;M0,M1) (FT(2;20,18) by default):

    - `0F`: no failure;
    - `xF_SW0` (x = 1, 2, 3): x failed links between leaf SW_0 and spines drawn at random (`seed`);
    - `xF_SW0_5_11`: leaves SW_0, SW_5 and SW_11 each lose x links, to consecutive spines, each leaf to other
      spines: 1F is SW_0–SW_18, SW_5–SW_19, SW_11–SW_20; 3F is SW_0–SW_{18,19,20}, SW_5–SW_{21,22,23},
      SW_11–SW_{24,25,26} (spines are SW_{M1+σ});
    - `SW18_19`, `SW18_19_22_23`: whole spines SW_18, SW_19 (and SW_22, SW_23) fail, i.e. σ = 0, 1 (, 4, 5).
    """
    ft = FatTree(m0, m1)
    if name == "0F":
        return ft
    parts = name.split("_")
    if parts[0].endswith("F") and parts[0][:-1].isdigit():
        x = int(parts[0][:-1])
        leaves = [int(p.removeprefix("SW")) for p in parts[1:]]
        if not leaves or not parts[1].startswith("SW") or x < 1:
            raise ValueError(f"unknown scenario '{name}'")
        if len(leaves) == 1:
            spines = random.Random(seed).sample(range(m0), x)
            return ft.with_failed((leaves[0], sp) for sp in spines)
        if len(leaves) * x > m0:
            raise ValueError(f"scenario '{name}' needs {len(leaves) * x} spines; FT(2;{m0},{m1}) has {m0}")
        return ft.with_failed((leaf, i * x + k) for i, leaf in enumerate(leaves) for k in range(x))
    if parts[0].startswith("SW") and all(p.removeprefix("SW").isdigit() for p in parts):
        ids = [int(p.removeprefix("SW")) for p in parts]
        if any(not m1 <= i < m1 + m0 for i in ids):
            raise ValueError(f"scenario '{name}': spines are SW_{m1}..SW_{m1 + m0 - 1} on FT(2;{m0},{m1})")
        return _fail_spines(ft, [i - m1 for i in ids])
    raise ValueError(f"unknown scenario '{name}' (known: {', '.join(SCENARIOS)})")


SCENARIOS = ["0F", "1F_SW0", "2F_SW0", "3F_SW0", "1F_SW0_5_11", "2F_SW0_5_11", "3F_SW0_5_11", "SW18_19",
             "SW18_19_22_23"]
"""The study's scenarios, in the order of its Figs. 3 and 6."""


def random_failures(m0: int, m1: int, links: int, seed: int = 0, keep_connected: bool = True) -> FatTree:
    """`links` failed leaf–spine links drawn uniformly (seeded); with `keep_connected`, redrawn until every
    pair of leaves still shares a spine (raises ValueError after 1000 tries)."""
    rnd = random.Random(seed)
    pool = [(leaf, sp) for leaf in range(m1) for sp in range(m0)]
    for _ in range(1000):
        ft = FatTree(m0, m1, frozenset(rnd.sample(pool, links)))
        if not keep_connected or ft.connected():
            return ft
    raise ValueError(f"no connected FT(2;{m0},{m1}) with {links} failed links found in 1000 draws")
