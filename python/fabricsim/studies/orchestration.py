"""Study 000 (Santos et al.): its Vela-like fabric of 4 racks × 6 servers (server ids 1–24 in rack order; the data
file fabricsim/_data/fabrics/vela.toml, with the named placements of its Tables II and III and the input buffer
calibrated to its Table IV), collectives on it, and the sweep task its experiments run by preset name.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Sequence

from ..advisor.api import place
from ..collectives import run as collective_run
from ..collectives.fabrics import FabricFile, read_fabric
from ..spec import Scenario

FABRIC = "vela"
"""The study's fabric: the built-in Vela-like fabric, fabricsim/_data/fabrics/vela.toml (4 racks x 6 servers, its
input buffer calibrated to Table IV, its named placements Tables II and III)."""


def fabric() -> FabricFile:
    """The study's fabric, read as data."""
    return read_fabric(FABRIC)


PRESETS: dict[str, list[list[int]]] = fabric().placements
"""Study 000's Tables II (one node per server) and III (several nodes per server), as server-id lists per
collective: the named placements of its fabric's data file (the placement advisor offers them on `--fabric vela`,
`preset:NAME` places a trace by them)."""


def placement_groups(name: str) -> list[list[int]]:
    """Server-id lists per collective for a preset of PRESETS (Tables II, III), `pack:N` or `spread:N:R` on the
    study's fabric (ValueError naming the presets if unknown)."""
    return fabric().placement(name)


def preset_groups(preset: str) -> list[list[int]]:
    """Server ids per collective for a preset, pack:N or spread:N:R on the Vela-like fabric (KeyError if unknown)."""
    try:
        return placement_groups(preset)
    except ValueError as e:
        raise KeyError(str(e)) from None


def collective_scenario(groups: Sequence[Sequence[int]], patterns: Sequence[str], msg_mib: float, *,
                        input_buffer: str | int | None = None, ecmp: str | None = None, flowlet_gap: str | None = None,
                        spine_arbiter: str | None = None, **opts: Any) -> Scenario:
    """Collectives on the study's fabric (`collectives.run.fabric_collective_scenario`; `opts`: interfaces, packet,
    seed, barrier, order): group g runs `patterns[g]` on the server ids `groups[g]`. The model details the study
    leaves unpublished are parameters (None: the data file's, the buffer its Table IV calibration): the switches'
    `input_buffer` per input port, the `ecmp` granularity ("per_message", "per_packet", or "flowlet" with
    `flowlet_gap`), and the spines' output arbiter (`spine_arbiter`: "round_robin" or "fifo")."""
    fab = fabric().with_model(input_buffer=input_buffer, ecmp=ecmp, flowlet_gap=flowlet_gap,
                              spine_arbiter=spine_arbiter)
    return collective_run.fabric_collective_scenario(fab, groups, patterns, msg_mib, **opts)


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task: `collectives.run.sweep_task` on the study's fabric (unless the payload names one), with
    {"preset": name} accepted in place of "servers"."""
    payload = {"fabric": FABRIC, **payload}
    if "servers" not in payload:
        payload["servers"] = preset_groups(payload["preset"])
    return collective_run.sweep_task(payload, seed)


def _advise(nodes: int, busy: list[dict] | None, per_server: int | None, seeds: int) -> dict[str, Any]:
    """One `place` call of `advisor_cases`: the best placement's servers and origin, and the advisor's reasons."""
    res = place(nodes, fabric=FABRIC, busy=busy, per_server=per_server, seeds=seeds)
    return {"servers": res.placements[0].servers, "origin": res.placements[0].origin, "why": res.why}


def advisor_cases(single: dict[str, list[str]], concurrent: dict[str, list[str]], per_server: int | None = None,
                  seeds: int = 3, workers: int | None = 1) -> list[dict[str, Any]]:
    """The placement advisor (`fabricsim.place`, default settings but `per_server`) on each Table IV group: for a
    single collective, N nodes on the empty fabric; for a concurrent pair, the second collective's nodes with the
    first's placement fixed as in each row (a background All-Reduce that keeps running). Returns per case its
    group, a label, the Table IV rows it is compared with, and the server-id lists per collective to simulate.

    The `place` calls are independent and deterministic: with `workers` > 1 (None: one per core) they run on that
    many local processes, with the same results as one after the other (`workers` 0 or 1)."""
    presets = PRESETS
    cases, calls = [], []
    for group, rows in single.items():
        n = len(presets[rows[0]][0])
        cases.append({"group": group, "case": f"{n} nodes", "rows": rows, "first": None})
        calls.append((n, None))
    for group, rows in concurrent.items():
        for row in rows:
            first, second = presets[row]
            busy = [{"server": s, "job": "first", "pattern": "shift-all-reduce"} for s in first]
            cases.append({"group": group, "case": f"first as {row}", "rows": rows, "fixed": row, "first": first})
            calls.append((len(second), busy))
    n_workers = min(len(calls), workers if workers is not None else (os.cpu_count() or 1))
    if n_workers > 1:
        ctx = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx) as pool:
            got = list(pool.map(_advise, *zip(*calls), [per_server] * len(calls), [seeds] * len(calls)))
    else:
        got = [_advise(n, busy, per_server, seeds) for n, busy in calls]
    out = []
    for case, res in zip(cases, got):
        first = case.pop("first")
        out.append({**case, "servers": ([first] if first is not None else []) + [res["servers"]],
                    "origin": res["origin"], "why": res["why"]})
    return out
