"""Placement policies of the cluster simulator: pack, spread, random, first-fit, and the advisor, each choosing
the servers of an arriving job from the free ones.

Servers are whole: a server runs nodes of one job at a time, at most `per_server` of them (each node takes
`interfaces` NICs, in the fabric's hand-out order). Every policy returns the job's hosts in rank order; the
heuristics give ranks in server-id order (a ring visits the racks one after the other).
- first-fit: the first free servers in id order, filled up to per_server nodes each.
- pack: the fewest racks, best fit: the fullest rack that holds the job; else the racks with the most free
  servers, whole, until the rest fits in one rack, which is the fullest that holds the rest (study 003's packing).
- spread: one node at a time round robin over every rack with a free server, the racks with the most free first
  (one node per server while servers last).
- random: uniformly random free node slots (the policy's own seeded stream).
- advisor: interference-aware packing. The placement advisor's candidates (`fabricsim.advisor.search.candidates`:
  presets, pack and spread families, Chic-sched-like relaxation) plus the pack and first-fit placements, keeping
  those at least as local as pack's: no more racks, and the free servers left at least as concentrated (as many
  wholly free racks, and free servers per rack, largest first, lexicographically no smaller). A myopic choice
  that breaks up free racks to dodge today's interference costs the later jobs that no longer fit in one rack
  more than it saves. Each is scored by its predicted cost beside the running jobs (solo profile + sharing
  model): its own predicted duration plus the time it adds to the running jobs it slows over their overlap.
  Costs within TIE (1%) of the lowest tie; ties go to the fewest racks, then to the best fit (the fewest free
  slots left in the racks it touches), then the lowest cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import ScenarioError
from .interference import Interference
from .jobs import SOURCE
from .solo import Profile, SoloCache

POLICIES = ("pack", "spread", "random", "first-fit", "advisor")
"""The policies, in the order reports list them."""

TIE = 0.01
"""The advisor treats predicted costs within this fraction of the lowest as ties."""


@dataclass
class ClusterState:
    """What a policy sees: the fabric's busy servers, slots per server, the running jobs (their speeds, remaining
    iterations and solo times) and the solo profiles. `rng` is the policy's own random stream."""

    solo: SoloCache
    busy: np.ndarray
    per_server: int
    interference: Interference
    rng: np.random.Generator
    remaining: Callable[[int], float] = lambda jid: 0.0
    last: dict = field(default_factory=dict)

    @property
    def fabric(self):
        return self.solo.fabric

    def free_slots(self) -> np.ndarray:
        """Node slots per server: per_server on a free server, 0 on a busy one."""
        return np.where(self.busy, 0, self.per_server)

    def fits(self, n: int) -> bool:
        return int(self.free_slots().sum()) >= n


def _fill(order, slots: np.ndarray, n: int) -> list[int]:
    out: list[int] = []
    for h in order:
        k = min(int(slots[h]), n - len(out))
        out += [int(h)] * k
        if len(out) == n:
            break
    return out


def first_fit(state: ClusterState, n: int) -> tuple[tuple[int, ...], str]:
    """The first free servers in id order. O(servers)."""
    return tuple(_fill(np.flatnonzero(~state.busy), state.free_slots(), n)), "first-fit"


def pack(state: ClusterState, n: int) -> tuple[tuple[int, ...], str]:
    """Fewest racks, best fit (see the module). O(racks × servers per rack)."""
    slots = state.free_slots()
    racks = state.fabric.racks
    room = np.asarray([int(slots[r].sum()) for r in racks])
    chosen: list[int] = []
    left = n
    avail = set(range(len(racks)))
    while left > 0:
        fit = [r for r in avail if room[r] >= left]
        if fit:
            r = min(fit, key=lambda r: (room[r], r))
            chosen.append(r)
            break
        r = max(avail, key=lambda r: (room[r], -r))
        chosen.append(r)
        avail.discard(r)
        left -= int(room[r])
    hosts: list[int] = []
    for r in chosen:
        hosts += _fill(racks[r], slots, n - len(hosts))
    return tuple(sorted(hosts)), "pack"


def spread(state: ClusterState, n: int) -> tuple[tuple[int, ...], str]:
    """Round robin over the racks with free servers, most free first: one node per server while servers last,
    then further slots round robin again. O(servers)."""
    slots = state.free_slots()
    racks = state.fabric.racks
    room = [int((slots[r] > 0).sum()) for r in racks]
    order = sorted((r for r in range(len(racks)) if room[r]), key=lambda r: (-room[r], r))
    queues = []
    for r in order:
        free = [int(h) for h in racks[r] if slots[h] > 0]
        queues.append([h for k in range(state.per_server) for h in free if slots[h] > k])
    hosts: list[int] = []
    while len(hosts) < n:
        for q in queues:
            if q and len(hosts) < n:
                hosts.append(q.pop(0))
    return tuple(sorted(hosts)), "spread"


def random_policy(state: ClusterState, n: int) -> tuple[tuple[int, ...], str]:
    """n node slots drawn uniformly without replacement among the free ones. O(servers)."""
    slots = state.free_slots()
    pool = np.repeat(np.arange(len(slots)), slots)
    pick = state.rng.choice(len(pool), size=n, replace=False)
    return tuple(sorted(int(h) for h in pool[pick])), "random"


def advisor(state: ClusterState, n: int, iterations: int) -> tuple[tuple[int, ...], str]:
    """The candidate with the lowest predicted cost (see the module). O(candidates × (a solo profile, cached by
    shape, + one sharing solve over the candidate's component))."""
    from ..advisor.search import candidates

    fab = state.fabric
    free = [[] if state.busy[h] else list(fab.nic_order[h]) for h in range(fab.n)]
    cands = [(lab, hosts) for lab, hosts in candidates(fab, n, free, state.solo.interfaces, state.per_server)]
    seen = {h for _, h in cands}
    packed = pack(state, n)[0]
    for extra in ((packed, "pack"), first_fit(state, n)):
        if extra[0] not in seen:
            cands.append((extra[1], extra[0]))
            seen.add(extra[0])
    slots = state.free_slots()
    whole = {r for r, members in enumerate(fab.racks) if not state.busy[members].any()}
    keep = len(whole - set(fab.rack[list(packed)].tolist()))
    floor_left = _left_per_rack(state, packed)
    most = len(set(fab.rack[list(packed)].tolist()))
    scored = []
    for i, (label, hosts) in enumerate(cands):
        touched = sorted(set(fab.rack[list(hosts)].tolist()))
        if len(touched) > most or len(whole - set(touched)) < keep or _left_per_rack(state, hosts) < floor_left:
            continue
        cost = predicted_cost(state, state.solo.profile(hosts), iterations)
        left = sum(int(slots[fab.racks[r]].sum()) for r in touched) - len(hosts)
        scored.append((cost, len(touched), left, i, hosts, label))
    floor = min(c[0] for c in scored) * (1.0 + TIE)
    cost, _, _, _, hosts, label = min((c for c in scored if c[0] <= floor), key=lambda c: (c[1], c[2], c[0], c[3]))
    state.last = {"candidates": len(cands), "predicted_s": cost}
    return hosts, f"advisor: {label}"


def _left_per_rack(state: ClusterState, hosts: tuple[int, ...]) -> list[int]:
    """Free servers per rack once `hosts` are taken, largest first (compared as lists: lexicographically). O(servers)."""
    free = ~state.busy
    free[list(hosts)] = False
    return sorted(np.bincount(state.fabric.rack, weights=free, minlength=len(state.fabric.racks)).astype(int).tolist(),
                  reverse=True)


def predicted_cost(state: ClusterState, prof: Profile, iterations: int) -> float:
    """Predicted seconds a placement costs: its own duration at the speed it would get beside the running jobs
    (assumed to keep running), plus, for each running job it slows from speed y to y', the time that job loses
    over their overlap T = min(own duration, that job's remaining time at y'): T (1 - y'/y)."""
    y, others = state.interference.predict(prof.res, prof.rates)
    own = iterations * prof.t_solo / y
    cost = own
    for j, y_new in others.items():
        y_old = state.interference.y.get(j, 1.0)
        if y_new < y_old:
            rest = state.remaining(j) / y_new
            cost += min(own, rest) * (1.0 - y_new / y_old)
    return cost


def choose(policy: str, state: ClusterState, n: int, iterations: int) -> tuple[tuple[int, ...], str]:
    """The hosts (rank order) and a label for a job of `n` nodes under `policy`; the job must fit."""
    if policy == "pack":
        return pack(state, n)
    if policy == "spread":
        return spread(state, n)
    if policy == "random":
        return random_policy(state, n)
    if policy == "first-fit":
        return first_fit(state, n)
    if policy == "advisor":
        return advisor(state, n, iterations)
    raise ScenarioError(SOURCE, "policy", f"unknown policy {policy!r} (one of {', '.join(POLICIES)}, or all)")
