"""run(scenario) -> RunRecord: the single entry point every command, sweep and study calls."""

from __future__ import annotations

import json

from . import _core
from .errors import ScenarioError
from .record import RunRecord
from .spec import Scenario


def _wire_json(scenario: Scenario, seed: int | None) -> str:
    if seed is not None:
        scenario = scenario.with_seed(seed)
    return json.dumps(scenario.to_wire())


def _split(msg: str) -> tuple[str, str]:
    field, sep, reason = str(msg).partition(": ")
    return (field, reason) if sep else ("", field)


FIDELITIES = ("packet", "flow")


def _fidelity(scenario: Scenario, fidelity: str | None) -> str:
    f = fidelity or scenario.fidelity
    if f not in FIDELITIES:
        raise ScenarioError(scenario.source, "fidelity", f"must be 'packet' or 'flow', not {f!r}")
    return f


def validate(scenario: Scenario, fidelity: str | None = None) -> None:
    """Check the scenario completely, including what only the engine knows (reachability, paths, and what the
    chosen fidelity can model)."""
    try:
        _core.validate(_wire_json(scenario, None), _fidelity(scenario, fidelity))
    except _core.SpecError as e:
        raise ScenarioError(scenario.source, *_split(str(e))) from None


def run(scenario: Scenario, seed: int | None = None, fidelity: str | None = None) -> RunRecord:
    """Simulate `scenario` (with `seed` overriding its seed) with the packet engine or, with
    `fidelity="flow"` (or the scenario's `fidelity`), the flow-level engine; the GIL is released. The record
    carries the fidelity used."""
    try:
        raw = _core.run(_wire_json(scenario, seed), _fidelity(scenario, fidelity))
    except _core.SpecError as e:
        raise ScenarioError(scenario.source, *_split(str(e))) from None
    return RunRecord(json.loads(raw))


def run_wire(wire: dict, fidelity: str = "packet") -> RunRecord:
    """Simulate a resolved wire spec (the dict `Scenario.to_wire()` returns)."""
    return RunRecord(json.loads(_core.run(json.dumps(wire), fidelity)))
