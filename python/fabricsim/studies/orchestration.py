"""Study 000 (Santos et al.): the named placements of its Tables II and III, on its Vela-like fabric of 4 racks × 6
servers (server ids 1–24 in rack order), and the sweep task its experiments run by preset name.
"""

from __future__ import annotations

from typing import Any

from ..advisor.api import place
from ..collectives import run as collective_run
from ..collectives.placement import VELA_PRESETS
from ..collectives.placement import placement_groups as _placement_groups

PRESETS = VELA_PRESETS
"""Study 000's Tables II (one node per server) and III (several nodes per server), as server-id lists per
collective: the named placements of the library's built-in Vela-like fabric, `collectives.placement.VELA_PRESETS`
(the placement advisor offers them on `--fabric vela`, `preset:NAME` places a trace by them)."""


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
