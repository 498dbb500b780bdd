"""Study 000 (Santos et al.): the named placements of its Tables II and III, on its Vela-like fabric of 4 racks × 6
servers (server ids 1–24 in rack order), and the sweep task its experiments run by preset name.
"""

from __future__ import annotations

from typing import Any

from ..collectives import run as collective_run
from ..collectives.placement import placement_groups as _placement_groups

PRESETS: dict[str, list[list[int]]] = {
    # Table II: one node per server; collectives and their placements.
    "4n_1r": [[1, 2, 3, 4]], "4n_2r": [[1, 2, 7, 8]], "4n_3r": [[1, 2, 7, 13]], "4n_4r": [[1, 7, 13, 19]],
    "6n_1r": [[1, 2, 3, 4, 5, 6]], "6n_2r": [[1, 2, 3, 7, 8, 9]], "6n_3r": [[1, 2, 7, 8, 13, 14]],
    "6n_4r": [[1, 2, 7, 8, 13, 19]],
    "8n_2r": [[1, 2, 3, 4, 7, 8, 9, 10]], "8n_3r": [[1, 2, 3, 7, 8, 9, 13, 14]], "8n_4r": [[1, 2, 7, 8, 13, 14, 19, 20]],
    "12n_2r": [list(range(1, 13))], "12n_3r": [[1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16]],
    "12n_4r": [[1, 2, 3, 7, 8, 9, 13, 14, 15, 19, 20, 21]],
    "4n_1r_6n_1r": [[1, 2, 3, 4], [7, 8, 9, 10, 11, 12]], "4n_2r_6n_2r": [[1, 2, 7, 8], [13, 14, 15, 19, 20, 21]],
    "4n_3r_6n_3r": [[1, 2, 7, 13], [8, 9, 14, 15, 19, 20]], "4n_4r_6n_4r": [[1, 7, 13, 19], [2, 3, 8, 9, 14, 20]],
    "6n_1r_8n_2r": [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 13, 14, 15, 16]],
    "6n_2r_8n_2r": [[1, 2, 3, 7, 8, 9], [13, 14, 15, 16, 19, 20, 21, 22]],
    "6n_3r_8n_3r": [[1, 2, 7, 8, 13, 14], [9, 10, 11, 15, 16, 17, 19, 20]],
    "6n_4r_8n_4r": [[1, 2, 7, 8, 13, 19], [3, 4, 9, 10, 14, 15, 20, 21]],
    # Table III: several nodes per server within one rack.
    "4n_1_1_1_1": [[1, 2, 3, 4]], "4n_2_1_1": [[1, 1, 2, 3]], "4n_2_2": [[1, 1, 2, 2]], "4n_3_1": [[1, 1, 1, 2]],
    "4n_4": [[1, 1, 1, 1]],
    "6n_1_1_1_1_1": [[1, 2, 3, 4, 5, 6]], "6n_1_1_1_2": [[1, 1, 2, 3, 4, 5]], "6n_1_1_2_2": [[1, 1, 2, 2, 3, 4]],
    "6n_2_2_2": [[1, 1, 2, 2, 3, 3]], "6n_3_3": [[1, 1, 1, 2, 2, 2]], "6n_4_1_1": [[1, 1, 1, 1, 2, 3]],
    "6n_4_2": [[1, 1, 1, 1, 2, 2]],
}
"""Study 000's Tables II (one node per server) and III (several nodes per server), as server-id lists per
collective. Note: Table II prints 4n_3r with the same ids as 4n_2r ([1, 2, 7, 8]); its Table IV hop counts
(0.04 M 1-hop vs 0.20 M 3-hop packets) fit three racks, [1, 2, 7, 13], which is used here."""


def placement_groups(name: str) -> list[list[int]]:
    """Server-id lists per collective for a preset of PRESETS, `pack:N` or `spread:N:R` on the study's fabric
    (ValueError naming the presets if unknown)."""
    return _placement_groups(name, presets=PRESETS)


def preset_groups(preset: str) -> list[list[int]]:
    """Server ids per collective for a preset, pack:N or spread:N:R on the Vela-like fabric (KeyError if unknown)."""
    try:
        return placement_groups(preset)
    except ValueError as e:
        raise KeyError(str(e)) from None


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task: `collectives.run.sweep_task`, with {"preset": name} accepted in place of "servers"."""
    if "servers" not in payload:
        payload = {**payload, "servers": preset_groups(payload["preset"])}
    return collective_run.sweep_task(payload, seed)


def advisor_cases(single: dict[str, list[str]], concurrent: dict[str, list[str]], per_server: int | None = None,
                  seeds: int = 3) -> list[dict[str, Any]]:
    """The placement advisor (`fabricsim.place`, default settings but `per_server`) on each Table IV group: for a
    single collective, N nodes on the empty fabric; for a concurrent pair, the second collective's nodes with the
    first's placement fixed as in each row (a background All-Reduce that keeps running). Returns per case its
    group, a label, the Table IV rows it is compared with, and the server-id lists per collective to simulate."""
    from ..advisor.api import place

    out = []
    for group, rows in single.items():
        n = len(PRESETS[rows[0]][0])
        res = place(n, per_server=per_server, seeds=seeds)
        out.append({"group": group, "case": f"{n} nodes", "rows": rows, "servers": [res.placements[0].servers],
                    "origin": res.placements[0].origin, "why": res.why})
    for group, rows in concurrent.items():
        for row in rows:
            first, second = PRESETS[row]
            busy = [{"server": s, "job": "first", "pattern": "all-reduce"} for s in first]
            res = place(len(second), busy=busy, per_server=per_server, seeds=seeds)
            out.append({"group": group, "case": f"first as {row}", "rows": rows, "fixed": row,
                        "servers": [first, res.placements[0].servers], "origin": res.placements[0].origin,
                        "why": res.why})
    return out
