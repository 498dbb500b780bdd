"""The FORS verifier: checks that a schedule (and its routing) is a complete, conflict-free all-to-all on FT(2;M0,M1)."""

from __future__ import annotations


def verify(ft, schedule, routing=None, limit: int = 10) -> list[str]:
    """Problems found, at most `limit` lines (empty = valid). Checks: every ordered pair of distinct servers exactly
    once; no server sends or receives twice in a phase; with a routing (per phase, (src, dst, spine) aligned with
    the schedule, spine −1 within a leaf): no failed link used and no leaf→spine or spine→leaf link carrying more
    than one flow in a phase. O(P² + flows)."""
    P, m0 = ft.servers, ft.m0
    out: list[str] = []

    def say(msg: str) -> bool:
        out.append(msg)
        return len(out) >= limit

    seen = bytearray(P * P)
    for p, phase in enumerate(schedule):
        tx: set[int] = set()
        rx: set[int] = set()
        for s, d in phase:
            if not (0 <= s < P and 0 <= d < P) or s == d:
                if say(f"phase {p}: pair ({s}, {d}) is not two distinct servers of 0..{P - 1}"):
                    return out
                continue
            if s in tx and say(f"phase {p}: server {s} sends twice"):
                return out
            if d in rx and say(f"phase {p}: server {d} receives twice"):
                return out
            tx.add(s)
            rx.add(d)
            if seen[s * P + d] and say(f"phase {p}: pair ({s}, {d}) was already scheduled"):
                return out
            seen[s * P + d] = 1
    missing = P * P - P - sum(seen)
    if missing > 0:
        first = next((s, d) for s in range(P) for d in range(P) if s != d and not seen[s * P + d])
        if say(f"{missing} ordered pairs never scheduled, e.g. ({first[0]}, {first[1]})"):
            return out
    if routing is None:
        return out
    if len(routing) != len(schedule):
        say(f"routing has {len(routing)} phases, schedule {len(schedule)}")
        return out
    for p, (phase, routes) in enumerate(zip(schedule, routing)):
        if [tuple(x) for x in phase] != [(s, d) for s, d, _ in routes]:
            if say(f"phase {p}: routed pairs differ from the schedule's"):
                return out
            continue
        up: dict[tuple[int, int], tuple[int, int]] = {}
        down: dict[tuple[int, int], tuple[int, int]] = {}
        for s, d, sp in routes:
            ls, ld = s // m0, d // m0
            if ls == ld:
                if sp != -1 and say(f"phase {p}: ({s}, {d}) stays below leaf {ls} but is routed via spine {sp}"):
                    return out
                continue
            if not 0 <= sp < m0:
                if say(f"phase {p}: ({s}, {d}) has no spine (got {sp})"):
                    return out
                continue
            for leaf in (ls, ld):
                if not ft.alive(leaf, sp) and say(f"phase {p}: ({s}, {d}) uses failed link leaf {leaf}–spine {sp}"):
                    return out
            if (ls, sp) in up and say(f"phase {p}: link leaf {ls}→spine {sp} carries {up[(ls, sp)]} and ({s}, {d})"):
                return out
            if (sp, ld) in down and say(f"phase {p}: link spine {sp}→leaf {ld} carries {down[(sp, ld)]} and ({s}, {d})"):
                return out
            up[(ls, sp)] = (s, d)
            down[(sp, ld)] = (s, d)
    return out
