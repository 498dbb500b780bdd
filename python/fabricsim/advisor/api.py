"""`fabricsim.place(...)`: where should a job go? The advisor's one public entry point."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np

from ..collectives.fabrics import default_fabric
from ..errors import ScenarioError
from .fabric import Fabric, named_fabric, read_busy, scenario_fabric
from .score import MIB, JobSpec
from .search import PlaceResult, place as _search


SOURCE = "fabricsim.place"


def _count(name: str, v, low: int) -> int | None:
    """`v` as an int >= `low` (a Python or numpy integer; None passes: the default); ScenarioError otherwise."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ScenarioError(SOURCE, name, f"must be a whole number >= {low}, got {v!r}")
    if v < low:
        raise ScenarioError(SOURCE, name, f"must be >= {low}, got {int(v)}")
    return int(v)


def _number(name: str, v, low: float, open_low: bool = False) -> float:
    """`v` as a finite float >= `low` (> with `open_low`); ScenarioError naming `name` otherwise."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ScenarioError(SOURCE, name, f"must be a number, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or f < low or (open_low and f == low):
        raise ScenarioError(SOURCE, name, f"must be a finite number {'>' if open_low else '>='} {low:g}, got {v!r}")
    return f


def load_fabric(fabric: str | Fabric | None = None, scenario: str | Path | None = None) -> Fabric:
    """A Fabric from `scenario` (a fabric file), a Fabric, a built-in fabric's name or a fabric file's path
    (`collectives.fabrics`); None: the default built-in fabric (`collectives.fabrics.default_fabric`)."""
    if scenario is not None:
        return scenario_fabric(scenario)
    if isinstance(fabric, Fabric):
        return fabric
    return named_fabric(default_fabric() if fabric is None else fabric)


def place(nodes: int | None = None, *, fabric: str | Fabric | None = None, scenario: str | Path | None = None,
          pattern: str = "shift-all-reduce", msg_mb: float = 10.0, interfaces: int = 1, trace: str | Path | None = None,
          busy: str | Path | list[dict] | None = None, top: int = 2, seeds: int = 3, per_server: int | None = None,
          budget_s: float | None = None, max_evals: int | None = None, flow_seeds: int | None = None, confirm: bool = True, seed: int = 1,
          confirm_with: str = "hybrid", progress: Callable[[str], None] | None = None) -> PlaceResult:
    """Rank placements of a job of `nodes` nodes by predicted completion time (ms, mean and 95% CI over `seeds`
    runs at fidelity `confirm_with`, "hybrid" or "packet", for the `top` best; flow-engine predictions for the rest).
    `fabric` is a built-in fabric's name, a fabric file's path or a Fabric (`load_fabric`; None: the default
    built-in fabric, whose data file says `default = true`), or `scenario` a fabric file.

    The job is `pattern` with `msg_mb` MiB per message and interface (`interfaces` NICs per node), or the Chakra
    trace at `trace` (PREFIX of PREFIX.{rank}.et; `nodes` defaults to its ranks). `busy` is a CSV of occupied
    servers or NICs and background jobs, or its rows as dicts (see `fabric.read_busy`). `per_server` caps the nodes on a server, background jobs' nodes included
    (default: as many as its free NICs allow, as study 000's Table III). Returns a PlaceResult whose
    `placements` are best first; `to_dict()` is what `fabricsim place --json` prints."""
    nodes, interfaces, top, seeds, per_server, max_evals, flow_seeds, seed = (
        _count(name, v, low) for name, v, low in (
            ("nodes", nodes, 2), ("interfaces", interfaces, 1), ("top", top, 1), ("seeds", seeds, 1),
            ("per_server", per_server, 1), ("max_evals", max_evals, 1), ("flow_seeds", flow_seeds, 1), ("seed", seed, 0)))
    msg_mb = _number("msg_mb", msg_mb, 0.0, open_low=True)
    budget_s = None if budget_s is None else _number("budget_s", budget_s, 0.0)
    if confirm_with not in ("hybrid", "packet"):
        raise ScenarioError(SOURCE, "confirm_with", f"must be 'hybrid' or 'packet', got {confirm_with!r}")
    if not isinstance(confirm, (bool, np.bool_)):
        raise ScenarioError(SOURCE, "confirm", f"must be True or False, got {confirm!r}")
    fab = load_fabric(fabric, scenario)
    traces = None
    if trace is not None:
        from ..chakra.trace import load

        traces = load(trace)
        if interfaces != 1:
            raise ScenarioError("fabricsim place", "--interfaces", "a trace rank uses one NIC; --interfaces applies to --pattern jobs")
        nodes = nodes if nodes is not None else len(traces)
    if nodes is None:
        raise ScenarioError("fabricsim place", "--nodes", "how many nodes? give --nodes N (or a --trace, whose ranks count)")
    job = JobSpec(pattern=pattern, msg_bytes=int(round(msg_mb * MIB)), interfaces=interfaces, trace=traces)
    free, background = (read_busy(fab, busy) if busy is not None else (fab.all_free(), []))
    if per_server is not None and per_server < 1:
        raise ScenarioError("fabricsim place", "--per-server", f"must be >= 1, got {per_server}")
    return _search(fab, nodes, job, free=free, background=background, top=top, seeds=seeds, flow_seeds=flow_seeds,
                   per_server=per_server, budget_s=budget_s, max_evals=max_evals, confirm=confirm,
                   confirm_with=confirm_with, seed=seed, progress=progress)
