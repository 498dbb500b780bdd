"""All-to-all schedules on FT(2;M0,M1): linear shift, XOR, and FORS (Algorithm 1 of seed 004 with its intra-leaf part).

A schedule is a list of phases; a phase is a list of (src, dst) server pairs sorted by src, in which no server
sends twice and none receives twice. Servers are numbered s = α + γ·M0 (α the position below leaf γ).

Readings of the study's pseudo-code (its §4 and the proofs of Appendix A are followed where they disagree):

- the lcm shift ⌊N_T/lcm(M1−1, M0)⌋ is added to the destination *leaf* (§4, Lemma 4); the printed Algorithm 1
  adds it to the server index, which sends two flows to one server whenever gcd(M0, M1−1) > 1;
- index ranges `[0..X]` are half-open, and θ_α = ⌊(α−1)(M0−f)/M0⌋ + 1 uses a true floor (θ_0 = 0 for f > 0);
- Algorithm 1 schedules only the P − M0 inter-leaf transmissions of every server. The proof leaves the M0 − 1
  transmissions to servers of the same leaf to "any schedule g" in the idle slots (at least f per leaf and
  phase). Ours: a maximum bipartite matching per phase (idle senders × servers not receiving an inter-leaf flow);
  if pairs are left over, CP-SAT places every intra-leaf pair exactly (a small model: only idle slots are
  variables), allowing the fewest extra phases that make it feasible; a König edge colouring of the leftovers
  into extra phases is the fallback. The proof's counting condition f·(M1−1) ≥ M0 − f is necessary, not
  sufficient, for the greedy matching (it missed P_f by one or two phases in 22 of the 1,572 cases with
  M0, M1 ≤ 16); with the exact step every one of those cases has exactly P_f = ⌈M0(P−M0)/(M0−f)⌉ phases;
- for f ≤ ⌊M0/M1⌋ the study points to a schedule of [18] that it does not give. We use Algorithm 1 with the actual
  f (f = 0 included: P − M0 inter-leaf phases followed by M0 − 1 intra-leaf ones, P − 1 in all, as linear shift),
  which is conflict-free by the same lemmas, and report its phase count beside the lower bound
  max(P − 1, ⌈M0(P−M0)/(M0−f)⌉) (`phase_lower_bound`). On FT(2;20,18) with f = 1 that is 361 phases against a
  bound of 359 (CP-SAT proves 360 infeasible for Algorithm 1's inter-leaf part); Algorithm 1 with the smallest f
  for which the proof's condition holds (f = 2) would need 378.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd

Phase = list[tuple[int, int]]
Schedule = list[Phase]


def linear_shift(n: int) -> Schedule:
    """Phases p = 1 … n−1 of the linear shift: server s sends to (s + p) mod n. O(n²)."""
    if n < 2:
        raise ValueError(f"linear shift needs at least 2 servers, not {n}")
    return [[(s, (s + p) % n) for s in range(n)] for p in range(1, n)]


def xor(n: int) -> Schedule:
    """Phases p = 1 … n−1 of the XOR schedule: s sends to s ⊕ p; n must be a power of two. O(n²)."""
    if n < 2 or n & (n - 1):
        raise ValueError(f"the XOR schedule needs a power-of-two number of servers, not {n}")
    return [[(s, s ^ p) for s in range(n)] for p in range(1, n)]


def paper_phases(m0: int, m1: int, f: int) -> int:
    """The study's P_f = ⌈M0(P−M0)/(M0−f)⌉ (phases of the inter-leaf part; optimal for that part)."""
    _check(m0, m1, f)
    p = m0 * m1
    return -(-m0 * (p - m0) // (m0 - f))


def phase_lower_bound(m0: int, m1: int, f: int) -> int:
    """A lower bound on the phases of any conflict-free all-to-all with bandwidth reduction f: every server sends
    P − 1 flows, one per phase, and a leaf's M0(P−M0) outgoing flows share M0 − f uplinks."""
    return max(m0 * m1 - 1, paper_phases(m0, m1, f))


def _check(m0: int, m1: int, f: int) -> None:
    if m0 < 1 or m1 < 2:
        raise ValueError(f"FT(2;{m0},{m1}): need M0 ≥ 1 and M1 ≥ 2")
    if not 0 <= f < m0:
        raise ValueError(f"bandwidth reduction f = {f} on FT(2;{m0},{m1}): a leaf with {m0} uplinks needs f < {m0}")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=64)
def _inter_leaf(m0: int, m1: int, f: int) -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """Algorithm 1 for one leaf (it is the same for every leaf): per phase p < P_f, the transmitting positions α
    in increasing order with the destination leaf offset D_leaf and position D_server. O(M0·(P−M0))."""
    p_total = m0 * m1
    n_tx = p_total - m0
    nphase = paper_phases(m0, m1, f)
    cycle = m0 * (m1 - 1) // gcd(m0, m1 - 1)
    phases: list[list[tuple[int, int, int]]] = [[] for _ in range(nphase)]
    for alpha in range(m0):
        theta = ((alpha - 1) * (m0 - f)) // m0 + 1
        for k in range(n_tx):
            p = _ceil_div((k + theta) * m0, m0 - f) - alpha
            if not 0 <= p < nphase:
                raise AssertionError(f"Lemma 1 violated: phase {p} of α={alpha} outside [0, {nphase})")
            n = k + theta
            phases[p].append((alpha, (n + k // cycle) % (m1 - 1), n % m0))
    return tuple(tuple(ph) for ph in phases)


def _edge_colour_bipartite(edges: list[tuple[int, int]]) -> list[int]:
    """A proper edge colouring of a bipartite (multi)graph with Δ colours (König), by Kempe-chain swaps.
    Left and right vertices are separate name spaces. O(E·V)."""
    left: dict[int, dict[int, int]] = {}
    right: dict[int, dict[int, int]] = {}
    deg: dict[tuple[str, int], int] = {}
    for u, v in edges:
        deg[("l", u)] = deg.get(("l", u), 0) + 1
        deg[("r", v)] = deg.get(("r", v), 0) + 1
    delta = max(deg.values(), default=0)
    colour = [-1] * len(edges)
    for e, (u, v) in enumerate(edges):
        at_u = left.setdefault(u, {})
        at_v = right.setdefault(v, {})
        a = next(c for c in range(delta) if c not in at_u)
        b = next(c for c in range(delta) if c not in at_v)
        if a not in at_v:
            c = a
        else:
            # Swap the a/b path that starts at v with its a-edge; it cannot reach u (bipartite parity).
            path = []
            node, side, want = v, "r", a
            while True:
                table = right if side == "r" else left
                e2 = table.get(node, {}).get(want)
                if e2 is None:
                    break
                path.append(e2)
                u2, v2 = edges[e2]
                node, side = (u2, "l") if side == "r" else (v2, "r")
                want = b if want == a else a
            for e2 in path:
                u2, v2 = edges[e2]
                del left[u2][colour[e2]]
                del right[v2][colour[e2]]
            for e2 in path:
                u2, v2 = edges[e2]
                colour[e2] = b if colour[e2] == a else a
                left[u2][colour[e2]] = e2
                right[v2][colour[e2]] = e2
            c = a
        colour[e] = c
        at_u[c] = e
        at_v[c] = e
    return colour


@lru_cache(maxsize=64)
def _intra_leaf(m0: int, m1: int, f: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The intra-leaf transmissions (α_src, α_dst) of one leaf per phase (the same for every leaf): first into the
    idle slots of the P_f inter-leaf phases by a maximum matching per phase, then into extra phases."""
    inter = _inter_leaf(m0, m1, f)
    need = {a: [b for b in range(m0) if b != a] for a in range(m0)}
    rem_rx = [m0 - 1] * m0
    left = m0 * (m0 - 1)
    out: list[tuple[tuple[int, int], ...]] = []
    for ph in inter:
        if not left:
            out.append(())
            continue
        busy_tx = {a for a, _, _ in ph}
        busy_rx = {ds for _, _, ds in ph}
        senders = [a for a in range(m0) if a not in busy_tx and need[a]]
        free_rx = {b for b in range(m0) if b not in busy_rx}
        # Kuhn's augmenting paths; senders with the most left to send first, each trying the receivers with the
        # most left to receive first, so that no server falls behind.
        senders.sort(key=lambda a: -len(need[a]))
        for a in senders:
            need[a].sort(key=lambda b: -rem_rx[b])
        match_rx: dict[int, int] = {}

        def augment(a: int, seen: set[int], free_rx=free_rx, match_rx=match_rx) -> bool:  # this round's sets
            for b in need[a]:
                if b in free_rx and b not in seen:
                    seen.add(b)
                    if b not in match_rx or augment(match_rx[b], seen):
                        match_rx[b] = a
                        return True
            return False

        for a in senders:
            augment(a, set())
        pairs = sorted((a, b) for b, a in match_rx.items())
        for a, b in pairs:
            need[a].remove(b)
            rem_rx[b] -= 1
        left -= len(pairs)
        out.append(tuple(pairs))
    if left:
        # Leftovers: König colouring of them into extra phases, unless CP-SAT places every intra-leaf pair in
        # fewer (it is exact, and small here: only the idle slots are variables).
        rest = [(a, b) for a in range(m0) for b in need[a]]
        colours = _edge_colour_bipartite(rest)
        extra: list[list[tuple[int, int]]] = [[] for _ in range(max(colours) + 1)]
        for (a, b), c in zip(rest, colours):
            extra[c].append((a, b))
        out.extend(tuple(sorted(x)) for x in extra)
        lb_extra = max(0, phase_lower_bound(m0, m1, f) - len(inter))
        slots = sum(m0 - len(ph) for ph in inter)
        if slots * m0 <= 2_000_000:
            for k in range(lb_extra, len(extra)):
                exact = _intra_exact(m0, inter, k)
                if exact is not None:
                    return exact
    return tuple(out)


def _intra_exact(m0: int, inter, extra: int, time_limit_s: float = 20.0):
    """The intra-leaf pairs of one leaf placed exactly by CP-SAT in the P_f phases plus `extra` phases in which
    nobody transmits between leaves (one Boolean per pair and usable phase; each pair once, each server sending and
    receiving at most once per phase). Per phase tuple of pairs, or None if infeasible or out of time. Single
    worker, fixed seed: deterministic."""
    from ortools.sat.python import cp_model

    nph = len(inter) + extra
    busy_tx = [set() for _ in range(nph)]
    busy_rx = [set() for _ in range(nph)]
    for p, ph in enumerate(inter):
        for a, _, ds in ph:
            busy_tx[p].add(a)
            busy_rx[p].add(ds)
    model = cp_model.CpModel()
    by_pair: dict[tuple[int, int], list] = {}
    by_tx: dict[tuple[int, int], list] = {}
    by_rx: dict[tuple[int, int], list] = {}
    var = {}
    for p in range(nph):
        for a in range(m0):
            if a in busy_tx[p]:
                continue
            for b in range(m0):
                if b != a and b not in busy_rx[p]:
                    v = model.new_bool_var(f"x{a}_{b}_{p}")
                    var[(a, b, p)] = v
                    by_pair.setdefault((a, b), []).append(v)
                    by_tx.setdefault((a, p), []).append(v)
                    by_rx.setdefault((b, p), []).append(v)
    if len(by_pair) < m0 * (m0 - 1):
        return None
    for vs in by_pair.values():
        model.add_exactly_one(vs)
    for vs in list(by_tx.values()) + list(by_rx.values()):
        model.add_at_most_one(vs)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    solver.parameters.max_time_in_seconds = time_limit_s
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    out: list[list[tuple[int, int]]] = [[] for _ in range(nph)]
    for (a, b, p), v in var.items():
        if solver.value(v):
            out[p].append((a, b))
    return tuple(tuple(sorted(x)) for x in out)


@lru_cache(maxsize=256)
def fors_phases(m0: int, m1: int, f: int) -> int:
    """Phases of our FORS schedule for bandwidth reduction f (without building it): P_f plus the extra intra-leaf
    phases, if any."""
    _check(m0, m1, f)
    return max(len(_inter_leaf(m0, m1, f)), len(_intra_leaf(m0, m1, f)))


def fors_schedule_f(m0: int, m1: int, f: int) -> Schedule:
    """The FORS schedule of FT(2;M0,M1) for bandwidth reduction f. O(phases·P)."""
    _check(m0, m1, f)
    p_total = m0 * m1
    inter = _inter_leaf(m0, m1, f)
    intra = _intra_leaf(m0, m1, f)
    out: Schedule = []
    for p in range(max(len(inter), len(intra))):
        ph: Phase = []
        for gamma in range(m1):
            base = gamma * m0
            nxt = (gamma + 1) * m0
            for a, dl, ds in inter[p] if p < len(inter) else ():
                ph.append((base + a, (dl * m0 + ds + nxt) % p_total))
            for a, b in intra[p] if p < len(intra) else ():
                ph.append((base + a, base + b))
        ph.sort()
        out.append(ph)
    return out


def fors_schedule(ft) -> Schedule:
    """The FORS schedule for a FatTree's failures (its bandwidth reduction f = ft.f)."""
    return fors_schedule_f(ft.m0, ft.m1, ft.f)
