"""run(scenario) -> RunRecord: the single entry point every command, sweep and study calls.

The scenario's header (network, routing, sources, TCP, collectives, hand-written message rows) goes to the
engine as one small JSON document; bulk workloads (`fabricsim.Workload`) go as numpy columns. The engine
validates both once and compiles one scenario for either fidelity.
"""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Callable

from . import _core, checks
from .errors import ArgumentError, FabricsimWarning, RunInterrupted, ScenarioError, SpecError

if TYPE_CHECKING:
    from .record import RunRecord
    from .spec import Scenario
    from .workload import Workload

FIDELITIES = ("packet", "hybrid", "flow")
"""The fidelities `run` and `validate` take."""


def _fidelity(scenario: Scenario, fidelity: str | None) -> str:
    """The fidelity a run uses: the caller's, else the scenario's (the engine judges it)."""
    return fidelity or scenario.fidelity


def _scenario(scenario: object) -> Scenario:
    """The scenario argument of `run` and `validate`: a Scenario, or a path to a scenario file (read with
    `load_scenario`); anything else is an ArgumentError saying what to pass."""
    import os

    from .spec import Scenario, load_scenario

    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)) and not isinstance(scenario, bool):
        return load_scenario(checks.path(scenario, "scenario"))
    raise ArgumentError("scenario", "expected a fabricsim.Scenario (fabricsim.load_scenario(path) or "
                        f"fabricsim.scenario_from_dict(dict)) or a path to a scenario file, got {type(scenario).__name__}")


def _workload(workload: object) -> "Workload | None":
    """The workload argument: None or a fabricsim.Workload."""
    from .workload import Workload

    return checks.instance(workload, Workload, "workload", "a fabricsim.Workload", none=True)


def _said(scenario: Scenario, e: SpecError) -> ScenarioError:
    """An engine error as the scenario's: the engine names the user's key; this adds the file."""
    return ScenarioError(scenario.source, e.field, e.reason)


def _header(scenario: Scenario, seed: int | None, fidelity: str = "packet") -> str:
    """The wire header as JSON. At flow fidelity queue sampling is dropped with a FabricsimWarning: the flow
    model has no queues, and a scenario written for the packet engine should still run."""
    if seed is not None:
        scenario = scenario.with_seed(seed)
    if fidelity != "flow" or scenario.measure.queue_interval is None:
        return scenario.header_json()
    return json.dumps(_for_fidelity(scenario, scenario.header(), fidelity))


def _for_fidelity(scenario: Scenario, header: dict, fidelity: str) -> dict:
    """`header` (or a whole wire spec) as `fidelity` can run it: at flow fidelity queue sampling is dropped,
    with a FabricsimWarning."""
    if fidelity == "flow" and header["measure"].get("queue_sample_ps") is not None:
        warnings.warn(f"{scenario.source or 'scenario'}: measure.queue_interval is ignored at flow fidelity "
                      "(the flow model has no queues)", FabricsimWarning, stacklevel=3)
        header = {**header, "measure": {**header["measure"], "queue_sample_ps": None, "sample_ports": None}}
    return header


def _columns(scenario: Scenario, workload: "Workload | None") -> dict | None:
    """The workload columns: the given workload (which already holds the scenario's own rows), or the
    scenario's rows lowered on their own."""
    if workload is not None:
        if not workload.belongs_to(scenario):
            raise ScenarioError(scenario.source, "workload", "was built on another scenario (its topology or its "
                                "own messages differ); build it with fabricsim.Workload(scenario)")
        return workload.columns()
    if scenario.has_workload_rows or scenario.streams:
        return scenario.workload().columns()
    return None


def validate(scenario: Scenario, fidelity: str | None = None, workload: "Workload | None" = None) -> int:
    """Check the scenario (and `workload`) completely, including what only the engine knows (reachability,
    paths, dependency cycles, what the chosen fidelity can model). Returns the number of messages. `scenario`
    may be a path to a scenario file."""
    scenario = _scenario(scenario)
    fidelity = checks.text(fidelity, "fidelity", none=True)  # its value the engine judges, naming the file
    workload = _workload(workload)
    try:
        fid = _fidelity(scenario, fidelity)
        if workload is None and scenario.row_form:  # a small hand-written scenario: JSON rows, no numpy
            return _core.validate(json.dumps(_for_fidelity(scenario, scenario.to_wire(), fid)), None, fid)
        return _core.validate(_header(scenario, None, fid), _columns(scenario, workload), fid)
    except SpecError as e:
        raise _said(scenario, e) from None


ProgressFn = Callable[[int, "int | None", int, int, int, float], object]
"""`progress(now_ps, stop_ps, events, msgs_done, msgs_total, wall_s)`: called about every 50 ms of a run. A callable
with a true `progress_bytes` attribute is also given `bytes_done=` (the messages' payload bytes delivered so far:
received in order at packet fidelity, sent at the fluid rates at flow fidelity) and `bytes_total=` (their sum)."""


def run(scenario: Scenario, seed: int | None = None, fidelity: str | None = None,
        workload: "Workload | None" = None, *, max_events: int | None = None, max_wall_s: float | None = None,
        progress: ProgressFn | None = None) -> RunRecord:
    """Simulate `scenario` (with `seed` overriding its seed) plus an optional bulk `workload`, with the packet
    engine or, with `fidelity="flow"` (or the scenario's `fidelity`), the flow-level engine; the GIL is
    released. The record carries the fidelity used.

    `max_events` and `max_wall_s` (wall-clock seconds of the event loop) stop a run early: the record so far
    comes back with `halted` set ("max_events", "max_wall") and `complete` False. Ctrl-C stops the engine
    within about 50 ms and raises `RunInterrupted` (a KeyboardInterrupt) carrying the record so far. The flow
    engine checks the limits between instants, so it may pass `max_events` by the events of one instant.
    `scenario` may be a path to a scenario file; a misused argument raises `fabricsim.errors.ArgumentError`
    naming it (numpy integers and floats are accepted)."""
    from .spec.base import bulk

    scenario = _scenario(scenario)
    seed = checks.integer(seed, "seed", low=0, none=True)
    fidelity = checks.text(fidelity, "fidelity", none=True)  # its value the engine judges, naming the file
    workload = _workload(workload)
    max_events = checks.integer(max_events, "max_events", low=1, none=True)
    max_wall_s = checks.number(max_wall_s, "max_wall_s", low=0, above=True, high=1e7, none=True)
    progress = checks.function(progress, "progress", none=True)
    try:
        fid = _fidelity(scenario, fidelity)
        header, columns = bulk(lambda: (_header(scenario, seed, fid), _columns(scenario, workload)))()
        scalars, columns = _core.run(header, columns, fid, max_events=max_events, max_wall_s=max_wall_s,
                                     progress=progress)
    except SpecError as e:
        raise _said(scenario, e) from None
    from .record import RunRecord

    rec = RunRecord(scalars, columns)
    if rec.halted == "interrupted":
        raise RunInterrupted(rec)
    _say_packet_by_packet(scenario, rec)
    return rec


def _say_packet_by_packet(scenario: Scenario, rec: "RunRecord") -> None:
    """A hybrid run that a feature of its scenario kept packet by packet says so (one FabricsimWarning line)."""
    ff = rec.fast_forward
    if ff is not None and ff["note"]:
        warnings.warn(f"{scenario.source or 'scenario'}: {ff['note']}", FabricsimWarning, stacklevel=3)


class Prepared:
    """A scenario's fabric made ready for many runs of different workloads and seeds (a placement search, a
    cluster simulation): its wire header is built and serialised once per fidelity, so a run costs only the
    engine's own work. O(size of the fabric) per fidelity, once."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self._rest: dict[str, str] = {}

    def _head(self, seed: int, fidelity: str) -> str:
        if fidelity not in self._rest:
            from .spec.base import bulk

            header = bulk(lambda: _for_fidelity(self.scenario, self.scenario.header(), fidelity))()
            rest = {k: v for k, v in header.items() if k != "seed"}
            self._rest[fidelity] = json.dumps(rest)[1:]
        return f'{{"seed": {int(seed)}, ' + self._rest[fidelity]

    def run(self, workload: "Workload", seed: int, fidelity: str = "flow", *, max_wall_s: float | None = None,
            progress: ProgressFn | None = None) -> RunRecord:
        """`run(scenario, seed, fidelity, workload)` with the cached header; `progress` as `run`'s (an exception it
        raises stops the run and propagates: how a run in a worker thread, where Ctrl-C never arrives, is stopped)."""
        from .record import RunRecord

        fid = _fidelity(self.scenario, fidelity)
        try:
            scalars, columns = _core.run(self._head(seed, fid), _columns(self.scenario, workload), fid,
                                         max_wall_s=max_wall_s, progress=progress)
        except SpecError as e:
            raise _said(self.scenario, e) from None
        rec = RunRecord(scalars, columns)
        if rec.halted == "interrupted":
            raise RunInterrupted(rec)
        return rec


def run_wire(wire: dict, fidelity: str = "packet") -> RunRecord:
    """Simulate a resolved wire spec (the dict `Scenario.to_wire()` returns; message rows included)."""
    from .record import RunRecord

    scalars, columns = _core.run(json.dumps(wire), None, fidelity)
    return RunRecord(scalars, columns)
