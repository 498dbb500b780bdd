"""Routing of phased all-to-all schedules on FT(2;M0,M1): OpenSM's Ftree and Min-Hop, FORS Algorithm 2, and the
FORS per-phase router (list edge colouring with Kempe chains, CP-SAT or HiGHS as the exact fallback).

A routing mirrors its schedule: per phase, a list of (src, dst, spine) in the schedule's order, spine −1 for a
pair below one leaf. On a two-level fat-tree the spine fixes the whole path (up from the source leaf, down to the
destination leaf), so routing is choosing one spine per inter-leaf pair and phase.
"""

from __future__ import annotations

import random
from collections import deque

from ..topology.fattree import FatTree
from .opensm import export_opensm, parse_lfts, trace

Route = tuple[int, int, int]
Routing = list[list[Route]]

__all__ = ["ftree", "minhop", "fors_algorithm2", "fors_route", "route_phase", "ilp_route_phase", "export_opensm",
           "parse_lfts", "trace"]


def _common(ft) -> list[list[list[int]]]:
    """common[a][b]: spines usable between leaves a and b (both links alive), increasing."""
    return [[ft.common_spines(a, b) if a != b else [] for b in range(ft.m1)] for a in range(ft.m1)]


def _unreachable(a: int, b: int) -> ValueError:
    return ValueError(f"leaves {a} and {b} share no live spine: no route between their servers")


def fat_tree_arg(ft: object) -> FatTree:
    """`ft` if it is a `fabricsim.topology.FatTree`, else an ArgumentError saying what to pass."""
    from ..checks import instance

    return instance(ft, FatTree, "ft", "a fabricsim.topology.FatTree (e.g. FatTree(4, 4) or random_failures(...))")


def ftree(ft, schedule) -> Routing:
    """OpenSM Ftree, destination-based: leaf ℓ sends every packet for server d up to spine U[α_d mod |U|], U the
    spines alive from ℓ to d's leaf. Without failures this spreads the M0 destinations of a leaf over the M0
    spines (conflict-free with linear shift); with failures it keeps the destination-based rule, as OpenSM does."""
    m0 = fat_tree_arg(ft).m0
    common = _common(ft)
    out: Routing = []
    for phase in schedule:
        rp = []
        for s, d in phase:
            a, b = s // m0, d // m0
            if a == b:
                rp.append((s, d, -1))
                continue
            u = common[a][b]
            if not u:
                raise _unreachable(a, b)
            rp.append((s, d, u[(d % m0) % len(u)]))
        out.append(rp)
    return out


def minhop(ft, schedule) -> Routing:
    """OpenSM Min-Hop: every leaf walks the destinations in LID (server) order and routes each remote one up the
    least-loaded usable up-port so far (ties to the lowest spine), counting routes per port. Fixed per leaf and
    destination, whatever the phase."""
    m0, m1, P = fat_tree_arg(ft).m0, ft.m1, ft.servers
    common = _common(ft)
    table: list[list[int]] = []
    for a in range(m1):
        load = [0] * m0
        row = [-1] * P
        for d in range(P):
            b = d // m0
            if b == a:
                continue
            u = common[a][b]
            if not u:
                raise _unreachable(a, b)
            sp = min(u, key=lambda x: (load[x], x))
            load[sp] += 1
            row[d] = sp
        table.append(row)
    return [[(s, d, table[s // m0][d]) for s, d in phase] for phase in schedule]


def fors_algorithm2(ft, schedule) -> Routing:
    """FORS Algorithm 2: only the spines without any failed link (S, increasing) are used; within a phase the
    inter-leaf pairs of each source leaf take S[0], S[1], … in schedule order. The counter restarts for every
    source leaf (as printed it runs across the whole phase, which on FT(2;20,18) puts two flows on one
    spine→leaf link in the last, shorter phase of 1F_SW0, 2F_SW0 and SW_{18,19}). Needs m ≤ f."""
    m0 = fat_tree_arg(ft).m0
    if fat_tree_arg(ft).m > ft.f:
        raise ValueError(f"Algorithm 2 needs m ≤ f (spines impacted ≤ bandwidth reduction); here m = {ft.m}, f = {ft.f}")
    bad = {sp for _, sp in ft.failed}
    S = [sp for sp in range(m0) if sp not in bad]
    out: Routing = []
    for phase in schedule:
        rp = []
        nxt: dict[int, int] = {}
        for s, d in phase:
            a = s // m0
            if a == d // m0:
                rp.append((s, d, -1))
                continue
            i = nxt.get(a, 0)
            rp.append((s, d, S[i % len(S)]))
            nxt[a] = i + 1
        out.append(rp)
    return out


def _phase_conflicts(m0: int, routes) -> bool:
    """Whether two flows of one phase share a leaf→spine or spine→leaf link."""
    up, down = set(), set()
    for s, d, sp in routes:
        if sp < 0:
            continue
        ku, kd = (s // m0, sp), (sp, d // m0)
        if ku in up or kd in down:
            return True
        up.add(ku)
        down.add(kd)
    return False


def route_phase(ft, phase, common=None) -> list[Route] | None:
    """One phase by list edge colouring of the leaf-to-leaf multigraph (spines are colours, an edge's colours the
    spines alive at both its leaves). Greedy from the rank of the source within its leaf (Algorithm 2's choice, a
    proper colouring without failures); the rest, most constrained first, by first fit, else one Kempe-chain swap
    (the c/d path from the blocked end, accepted only if every edge on it may take its new colour), else an
    ejection (the allowed colour with the fewest clashes; the clashing edges are uncoloured and queued again,
    with a one-step tabu; seeded, so deterministic). None after 20·E + 100 ejections.
    O(E·M0) plus O(M0²·path) per Kempe attempt."""
    m0 = fat_tree_arg(ft).m0
    common = common or _common(ft)
    n = len(phase)
    colour = [-1] * n
    at_u: dict[int, dict[int, int]] = {}
    at_v: dict[int, dict[int, int]] = {}
    rank: dict[int, int] = {}
    pending = []
    for i, (s, d) in enumerate(phase):
        a, b = s // m0, d // m0
        if a == b:
            continue
        allowed = common[a][b]
        if not allowed:
            raise _unreachable(a, b)
        r = rank.get(a, 0)
        rank[a] = r + 1
        cu, cv = at_u.setdefault(a, {}), at_v.setdefault(b, {})
        if r < m0 and ft.alive(a, r) and ft.alive(b, r) and r not in cu and r not in cv:
            colour[i] = r
            cu[r] = i
            cv[r] = i
        else:
            pending.append(i)

    def ok(i: int, c: int) -> bool:
        """Whether edge i may take colour c (spine c alive at both of its leaves)."""
        s, d = phase[i]
        return ft.alive(s // m0, c) and ft.alive(d // m0, c)

    rng = random.Random(len(phase))
    queue = deque(sorted(pending, key=lambda i: len(common[phase[i][0] // m0][phase[i][1] // m0])))
    tabu: dict[int, int] = {}
    ejections, limit = 0, 20 * sum(rank.values()) + 100
    while queue:
        i = queue.popleft()
        s, d = phase[i]
        a, b = s // m0, d // m0
        cu, cv = at_u[a], at_v[b]
        allowed = common[a][b]
        c = next((x for x in allowed if x not in cu and x not in cv), None)
        if c is None:
            done = False
            for x in allowed:
                for blocked_side in ("v", "u"):
                    if blocked_side == "v" and not (x not in cu and x in cv):
                        continue
                    if blocked_side == "u" and not (x not in cv and x in cu):
                        continue
                    free_here = cv if blocked_side == "v" else cu
                    for y in range(m0):
                        if y == x or y in free_here:
                            continue
                        path = _alt_path(phase, m0, at_u, at_v, b if blocked_side == "v" else a, blocked_side, x, y)
                        if all(ok(e, y if colour[e] == x else x) for e in path):
                            for e in path:
                                es, ed = phase[e]
                                del at_u[es // m0][colour[e]]
                                del at_v[ed // m0][colour[e]]
                            for e in path:
                                es, ed = phase[e]
                                colour[e] = y if colour[e] == x else x
                                at_u[es // m0][colour[e]] = e
                                at_v[ed // m0][colour[e]] = e
                            c = x
                            done = True
                            break
                    if done:
                        break
                if done:
                    break
            if c is None:
                # Ejection: take the allowed colour with the fewest clashes (not the one this edge just lost),
                # uncolour the clashing edges and queue them.
                ejections += 1
                if ejections > limit:
                    return None
                cand = [x for x in allowed if tabu.get(i) != x] or allowed
                c = min(cand, key=lambda x: ((x in cu) + (x in cv), rng.random()))
                for e2 in {cu.get(c), cv.get(c)} - {None}:
                    es, ed = phase[e2]
                    del at_u[es // m0][c]
                    del at_v[ed // m0][c]
                    colour[e2] = -1
                    tabu[e2] = c
                    queue.append(e2)
        colour[i] = c
        cu[c] = i
        cv[c] = i
    return [(s, d, colour[i]) for i, (s, d) in enumerate(phase)]


def _alt_path(phase, m0: int, at_u, at_v, node: int, side: str, x: int, y: int) -> list[int]:
    """Edges of the maximal path alternating colours x, y that starts at `node` (a destination leaf if side is
    "v", a source leaf if "u") with its x-edge. In a bipartite multigraph it never returns to the other end of
    the edge being coloured, which has x free."""
    path = []
    want = x
    while True:
        tab = at_v if side == "v" else at_u
        e = tab.get(node, {}).get(want)
        if e is None:
            return path
        path.append(e)
        s, d = phase[e]
        if side == "v":
            node, side = s // m0, "u"
        else:
            node, side = d // m0, "v"
        want = y if want == x else x


def ilp_route_phase(ft, phase, solver: str = "cpsat", time_limit_s: float = 60.0, partial: bool = False) -> list[Route]:
    """The study's ILP for one phase (§5.2) with the failed-link constraint it omits: v(s,d,sp) only for spines
    alive at both leaves; exactly one spine per inter-leaf pair; per leaf and spine at most one flow up and one
    down. Feasibility only. `solver`: "cpsat" (OR-Tools, one worker, fixed seed) or "highs" (HiGHS MIP).
    Raises ValueError if infeasible or out of time. With `partial` (CP-SAT only), "exactly one" becomes "at most
    one" and the routed flows are maximized; unrouted inter-leaf flows get spine −2."""
    m0 = fat_tree_arg(ft).m0
    common = _common(ft)
    inter = [(i, s, d) for i, (s, d) in enumerate(phase) if s // m0 != d // m0]
    up: dict[tuple[int, int], list] = {}
    down: dict[tuple[int, int], list] = {}
    keys = []
    for i, s, d in inter:
        a, b = s // m0, d // m0
        if not common[a][b]:
            raise _unreachable(a, b)
        for sp in common[a][b]:
            k = len(keys)
            keys.append((i, sp))
            up.setdefault((a, sp), []).append(k)
            down.setdefault((sp, b), []).append(k)
    per_flow: dict[int, list[int]] = {}
    for k, (i, _) in enumerate(keys):
        per_flow.setdefault(i, []).append(k)
    chosen: dict[int, int] = {}
    if solver not in ("cpsat", "highs"):
        raise ValueError(f"solver must be 'cpsat' or 'highs', not '{solver}'")
    if not keys:
        return [(s, d, -1) for s, d in phase]
    if solver == "cpsat":
        from ortools.sat.python import cp_model

        model = cp_model.CpModel()
        x = [model.new_bool_var(f"v{k}") for k in range(len(keys))]
        for ks in per_flow.values():
            if partial:
                model.add_at_most_one(x[k] for k in ks)
            else:
                model.add_exactly_one(x[k] for k in ks)
        for ks in list(up.values()) + list(down.values()):
            if len(ks) > 1:
                model.add_at_most_one(x[k] for k in ks)
        if partial:
            model.maximize(sum(x))
        cp = cp_model.CpSolver()
        cp.parameters.num_workers = 1
        cp.parameters.random_seed = 0
        cp.parameters.max_time_in_seconds = time_limit_s
        st = cp.solve(model)
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise ValueError(f"the routing ILP of this phase is {cp.status_name(st).lower()}")
        for k, (i, sp) in enumerate(keys):
            if cp.value(x[k]):
                chosen[i] = sp
    elif solver == "highs":
        import highspy
        import numpy as np

        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("time_limit", float(time_limit_s))
        h.setOptionValue("random_seed", 0)
        h.setOptionValue("threads", 1)
        nv = len(keys)
        inf = highspy.kHighsInf
        h.addVars(nv, np.zeros(nv), np.ones(nv))
        h.changeColsIntegrality(nv, np.arange(nv, dtype=np.int32), np.full(nv, highspy.HighsVarType.kInteger))
        for ks in per_flow.values():
            h.addRow(1.0, 1.0, len(ks), np.array(ks, dtype=np.int32), np.ones(len(ks)))
        for ks in list(up.values()) + list(down.values()):
            if len(ks) > 1:
                h.addRow(-inf, 1.0, len(ks), np.array(ks, dtype=np.int32), np.ones(len(ks)))
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ValueError(f"the routing ILP of this phase: HiGHS says {h.modelStatusToString(status)}")
        vals = h.getSolution().col_value
        for k, (i, sp) in enumerate(keys):
            if vals[k] > 0.5:
                chosen[i] = sp
    else:
        raise ValueError(f"solver must be 'cpsat' or 'highs', not '{solver}'")
    return [(s, d, chosen.get(i, -1 if s // m0 == d // m0 else -2)) for i, (s, d) in enumerate(phase)]


def fors_route(ft, schedule, method: str = "auto", stats: dict | None = None) -> Routing:
    """The FORS router. `method`: "auto" (the study's m ≤ f rule: Algorithm 2 when it applies, otherwise the
    per-phase edge colouring; a phase the colouring cannot finish goes to CP-SAT), "algorithm2", "colouring"
    (same fallback), "cpsat" or "highs" (the ILP for every phase). A phase that has no conflict-free routing at
    all (possible under heavy failures: a pair count within the common spines is necessary, not sufficient)
    is split: the most flows CP-SAT can route stay, the rest form a new phase right after it, so the routing
    may have more phases than the schedule (its pairs define the schedule actually run). `stats`, if given,
    receives the method used, the phases that went to the ILP and the phases split."""
    if method not in ("auto", "algorithm2", "colouring", "cpsat", "highs"):
        raise ValueError(f"method must be auto, algorithm2, colouring, cpsat or highs, not '{method}'")
    m0 = fat_tree_arg(ft).m0
    st = stats if stats is not None else {}
    st.update(method=method, ilp_phases=0)
    if method in ("cpsat", "highs"):
        st["ilp_phases"] = len(schedule)
        return [ilp_route_phase(ft, ph, method) for ph in schedule]
    if method == "algorithm2" or (method == "auto" and ft.m <= ft.f):
        out = fors_algorithm2(ft, schedule)
        st["method"] = "algorithm2"
        if method == "algorithm2" or not any(_phase_conflicts(m0, r) for r in out):
            return out
        st["method"] = "colouring"
    else:
        st["method"] = "colouring"
    common = _common(ft)
    out = []
    st["split_phases"] = 0
    todo = list(schedule)
    while todo:
        ph = todo.pop(0)
        r = route_phase(ft, ph, common)
        if r is None:
            st["ilp_phases"] += 1
            try:
                r = ilp_route_phase(ft, ph, "cpsat")
            except ValueError:
                # No conflict-free routing of this phase exists: route the most flows, move the rest to a new
                # phase right after it.
                r = ilp_route_phase(ft, ph, "cpsat", partial=True)
                rest = [(s, d) for s, d, sp in r if sp == -2]
                r = [x for x in r if x[2] != -2]
                todo.insert(0, rest)
                st["split_phases"] += 1
        out.append(r)
    return out
