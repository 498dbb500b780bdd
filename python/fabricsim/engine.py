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


def validate(scenario: Scenario) -> None:
    """Check the scenario completely, including what only the engine knows (reachability, paths)."""
    try:
        _core.validate(_wire_json(scenario, None))
    except _core.SpecError as e:
        raise ScenarioError(scenario.source, *_split(str(e))) from None


def run(scenario: Scenario, seed: int | None = None) -> RunRecord:
    """Simulate `scenario` (with `seed` overriding its seed) with the packet engine; the GIL is released."""
    try:
        raw = _core.run(_wire_json(scenario, seed))
    except _core.SpecError as e:
        raise ScenarioError(scenario.source, *_split(str(e))) from None
    return RunRecord(json.loads(raw))
