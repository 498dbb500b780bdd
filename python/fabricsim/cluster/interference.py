"""Running jobs share the fabric's resources: each job's speed, as a fraction of its solo speed, from the load
the other jobs put on the resources it shares, recomputed per connected component when a job comes or goes.

Job j at speed y_j (0 < y_j <= 1; 1 = its solo speed) puts y_j u_j(l) of resource l's capacity on l, u_j(l)
being its solo rate there over the capacity (bytes per iteration / t_solo / C_l). Two sharing models:
- "ps" (the default): processor sharing at the job's most loaded shared resource. A flow crossing a link that
  other traffic keeps busy a fraction rho of the time takes 1 / (1 - rho) times as long (M/G/1-PS), so
  y_j = 1 - max_l sum_{k != j} y_k u_k(l): a fixed point, found by damped iteration. It is feasible on every
  resource (sum_k y_k u_k(l) <= 1 whenever every u <= 1) and slows jobs even below saturation, as ECMP collisions
  of large flows and misaligned phases do in the flow engine. Against full flow-engine co-simulations of 2-3 jobs
  (tests/test_cluster.py; docs/guide/cluster.md) it predicts completion times with a mean error of -6%.
- "maxmin": the fluid view: y maximal max-min fair subject to sum_j y_j u_j(l) <= 1 on every l and y_j <= 1
  (progressive filling, `fabricsim._core.maxmin`): jobs slow only when their summed average demand exceeds a
  resource; it misses collisions and is about 20% optimistic against the same co-simulations.
In both, a resource used by one job never binds, so only resources with two or more users count, and the
solution decomposes exactly over the connected components of the graph linking jobs to the resources they share:
an arrival or departure recomputes only the component(s) it touches.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .. import _core

PROBE = -1
"""The job id `predict` uses for the candidate it scores."""

SHARING = ("ps", "maxmin")
"""The sharing models (see the module)."""

TOLERANCE = 1e-12
"""The ps fixed point stops when no speed moves by more than this in one step."""

MAX_STEPS = 10_000
"""Damped steps of the ps fixed point at most (a component of tens of jobs converges in well under 100)."""


class Interference:
    """The speeds of the running jobs. `capacity[l]` is resource l's capacity in bytes/s. Each method costs
    O(size of the affected component: its jobs' shared resources) plus one solve over it (ps: O(steps x shared
    entries); maxmin: one progressive filling)."""

    def __init__(self, capacity: np.ndarray, sharing: str = "ps"):
        if sharing not in SHARING:
            raise ValueError(f"sharing: one of {', '.join(SHARING)}, not {sharing!r}")
        self.sharing = sharing
        self.cap = np.asarray(capacity, dtype=np.float64)
        self.count = np.zeros(len(self.cap), dtype=np.int64)
        self.users: dict[int, set[int]] = {}
        self.res: dict[int, np.ndarray] = {}
        self.u: dict[int, np.ndarray] = {}
        self.y: dict[int, float] = {}
        self.solves = 0

    def _insert(self, jid: int, res: np.ndarray, rates: np.ndarray) -> None:
        res = np.asarray(res, dtype=np.int64)
        self.res[jid] = res
        self.u[jid] = np.minimum(np.asarray(rates, dtype=np.float64) / self.cap[res], 1.0)
        self.count[res] += 1
        for r in res.tolist():
            self.users.setdefault(r, set()).add(jid)

    def _delete(self, jid: int) -> set[int]:
        """Take `jid` out; returns the jobs it shared a resource with."""
        res = self.res.pop(jid)
        self.u.pop(jid)
        self.y.pop(jid, None)
        peers: set[int] = set()
        for r in res[self.count[res] >= 2].tolist():
            peers |= self.users[r]
        self.count[res] -= 1
        for r in res.tolist():
            self.users[r].discard(jid)
        peers.discard(jid)
        return peers

    def component(self, starts: Iterable[int]) -> list[int]:
        """Every job connected to `starts` through resources with two or more users (breadth first)."""
        seen = set(starts)
        stack = list(seen)
        done: set[int] = set()
        while stack:
            j = stack.pop()
            r = self.res[j]
            for x in r[self.count[r] >= 2].tolist():
                if x in done:
                    continue
                done.add(x)
                for k in self.users[x]:
                    if k not in seen:
                        seen.add(k)
                        stack.append(k)
        return sorted(seen)

    def solve(self, members: Iterable[int]) -> dict[int, float]:
        """The speeds of `members` (a union of whole components). A job with no shared resource gets exactly 1."""
        out: dict[int, float] = {}
        rows = []
        for j in members:
            r = self.res[j]
            m = self.count[r] >= 2
            if m.any():
                rows.append((j, r[m], self.u[j][m]))
            else:
                out[j] = 1.0
        if not rows:
            return out
        self.solves += 1
        uniq, inv = np.unique(np.concatenate([r for _, r, _ in rows]), return_inverse=True)
        u = np.concatenate([w for _, _, w in rows])
        jj = np.repeat(np.arange(len(rows)), [len(r) for _, r, _ in rows])
        if self.sharing == "maxmin":
            uses, pos = [], 0
            for _, r, w in rows:
                uses.append(list(zip(inv[pos:pos + len(r)].tolist(), w.tolist())))
                pos += len(r)
            speeds = np.minimum(np.asarray(_core.maxmin([1.0] * len(uniq), uses, [1.0] * len(rows))), 1.0)
        else:
            speeds = _ps_fixed_point(jj, inv, u, len(rows), len(uniq))
        for (j, _, _), v in zip(rows, speeds.tolist()):
            out[j] = v
        return out

    def _apply(self, new: dict[int, float]) -> dict[int, float]:
        changed = {j: y for j, y in new.items() if self.y.get(j) != y}
        self.y.update(new)
        return changed

    def add(self, jid: int, res: np.ndarray, rates: np.ndarray) -> dict[int, float]:
        """Start job `jid` using resources `res` at solo rates `rates` (bytes/s); returns the speeds that changed
        (the new job's included)."""
        self._insert(jid, res, rates)
        return self._apply(self.solve(self.component([jid])))

    def remove(self, jid: int) -> dict[int, float]:
        """Stop job `jid`; returns the speeds that changed."""
        peers = self._delete(jid)
        return self._apply(self.solve(self.component(peers))) if peers else {}

    def predict(self, res: np.ndarray, rates: np.ndarray) -> tuple[float, dict[int, float]]:
        """The speed a new job would get beside the running ones, and the speeds of the running jobs of its
        component with it there. Leaves the state as it was."""
        self._insert(PROBE, res, rates)
        try:
            new = self.solve(self.component([PROBE]))
        finally:
            self._delete(PROBE)
        y = new.pop(PROBE)
        return y, new


def _ps_fixed_point(jj: np.ndarray, ll: np.ndarray, u: np.ndarray, n_jobs: int, n_res: int) -> np.ndarray:
    """y = 1 - max over each job's entries of (load of the resource - the job's own share), load_l = sum y_k u_kl:
    damped iteration from y = 1 until no speed moves by TOLERANCE. The map is antitone with slope about -L, L the
    largest solo load of a resource (sum_k u_kl); steps of 1 / (1 + L) cancel that slope (exactly for alike jobs
    on one resource), so it converges at every load (the speeds stay in (0, 1])."""
    y = np.ones(n_jobs)
    alpha = 1.0 / (1.0 + float(np.bincount(ll, weights=u, minlength=n_res).max()))
    for _ in range(MAX_STEPS):
        own = y[jj] * u
        load = np.bincount(ll, weights=own, minlength=n_res)
        worst = np.zeros(n_jobs)
        np.maximum.at(worst, jj, load[ll] - own)
        target = np.clip(1.0 - worst, 1e-9, 1.0)
        step = target - y
        y = y + alpha * step
        if np.abs(step).max() <= TOLERANCE:
            return target
    return y
