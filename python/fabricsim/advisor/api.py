"""`fabricsim.place(...)`: where should a job go? The advisor's one public entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Callable


from ..collectives.fabrics import default_fabric
from ..errors import ScenarioError
from .fabric import Fabric, named_fabric, read_busy, scenario_fabric
from .score import MIB, JobSpec
from .search import PlaceResult, place as _search




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
    `placements` are best first; `to_dict()` is what `fabricsim place --json` prints. A misused argument raises
    `fabricsim.errors.ArgumentError` naming it (numpy numbers are accepted)."""
    from .. import checks

    nodes = checks.integer(nodes, "nodes", low=1, high=2**31, none=True)
    pattern = checks.text(pattern, "pattern")
    msg_mb = checks.number(msg_mb, "msg_mb", low=0, above=True, high=2**50 / MIB)
    interfaces = checks.integer(interfaces, "interfaces", low=1, high=2**16)
    top, seeds = checks.integer(top, "top", low=1, high=2**31), checks.integer(seeds, "seeds", low=1, high=2**31)
    per_server = checks.integer(per_server, "per_server", low=1, high=2**31, none=True)
    budget_s = checks.number(budget_s, "budget_s", low=0, none=True)
    max_evals = checks.integer(max_evals, "max_evals", low=1, high=2**63 - 1, none=True)
    flow_seeds = checks.integer(flow_seeds, "flow_seeds", low=1, high=2**31, none=True)
    confirm, seed = checks.flag(confirm, "confirm"), checks.integer(seed, "seed", low=0)
    confirm_with = checks.text(confirm_with, "confirm_with", choices=("hybrid", "packet"))
    progress = checks.function(progress, "progress", none=True)
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
