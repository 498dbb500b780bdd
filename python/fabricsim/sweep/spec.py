"""Sweep specs: a base scenario, a grid and/or explicit points, and seeds; expanded to hashed run tasks."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import ScenarioError
from ..spec import first_error, read_document
from .params import parse_path


class SweepSpec(BaseModel):
    """A sweep. `base` is a scenario (inline table, or a path relative to the sweep file); `grid` maps
    parameter paths to value lists (cartesian product); `points` lists explicit parameter sets (each
    combined with every grid point); `seeds` is a count (seeds 1..n) or an explicit list; `task` names
    what each run does: "simulate" (the packet engine + standard metrics) or "module:function"."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    base: dict[str, Any] | str
    task: str = "simulate"
    seeds: int | list[int] = 1
    grid: dict[str, list[Any]] = {}
    points: list[dict[str, Any]] = []
    description: str = ""

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v):
        if isinstance(v, int) and v < 1:
            raise ValueError("need at least one seed")
        if isinstance(v, list) and (not v or any(s < 0 for s in v) or len(set(v)) != len(v)):
            raise ValueError("seeds must be distinct non-negative integers")
        return v

    @field_validator("grid")
    @classmethod
    def _grid(cls, v):
        for path, values in v.items():
            parse_path(path)
            if not values:
                raise ValueError(f"grid '{path}' has no values")
        return v

    @field_validator("points")
    @classmethod
    def _points(cls, v):
        for p in v:
            for path in p:
                parse_path(path)
        return v

    def seed_list(self, override: int | None = None) -> list[int]:
        if override is not None:
            return list(range(1, override + 1))
        return list(range(1, self.seeds + 1)) if isinstance(self.seeds, int) else list(self.seeds)


@functools.cache
def code_fingerprint(task: str = "") -> str:
    """A hash of the code a run executes: fabricsim's Python sources and native module, plus a task file given
    as "path.py:function". Part of every run's hash, so a store never serves results of other code. O(package size)."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for p in root.rglob("*") if p.is_file() and (p.suffix == ".py" or p.name.startswith("_core")))
    path = task.rpartition(":")[0]
    if path.endswith(".py") and Path(path).is_file():
        files.append(Path(path))
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class RunTask:
    """One run: parameters applied to the base, one seed. `hash` identifies its content (task, payload, seed)
    and the code that runs it (`code_fingerprint`)."""

    sweep: str
    task: str
    point_key: str
    params: dict[str, Any]
    seed: int
    payload: dict[str, Any] = field(repr=False)
    source: str = "<sweep>"

    @property
    def hash(self) -> str:
        blob = json.dumps({"task": self.task, "payload": self.payload, "seed": self.seed,
                           "code": code_fingerprint(self.task)}, sort_keys=True,
                          separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


def expand(spec: SweepSpec, base: dict[str, Any], seeds: int | None = None, source: str = "<sweep>") -> list[RunTask]:
    """Every (point, seed) as a RunTask, points in grid order (last grid key varies fastest), seeds innermost.
    Parameters are applied lazily by the worker (payload = base + params), so an invalid point fails alone."""
    from .params import apply_params

    keys = list(spec.grid)
    combos = [dict(zip(keys, vals)) for vals in itertools.product(*(spec.grid[k] for k in keys))] or [{}]
    points = spec.points or [{}]
    tasks = []
    for p in points:
        for g in combos:
            params = {**p, **g}
            key = json.dumps(params, sort_keys=True, default=str)
            try:
                payload = apply_params(base, params)
            except ValueError as e:
                payload = {"__invalid__": str(e)}
            for s in spec.seed_list(seeds):
                tasks.append(RunTask(spec.name, spec.task, key, params, s, payload, source))
    return tasks


def load_sweep(path: str | Path) -> tuple[SweepSpec, dict[str, Any]]:
    """Load a sweep file and its base scenario dict; raises ScenarioError naming the file and field."""
    from ..checks import path as a_path

    p = a_path(path, "path")
    try:
        spec = SweepSpec.model_validate(read_document(p))
    except ValidationError as e:
        raise ScenarioError(str(p), *first_error(e)) from None
    if not isinstance(spec.base, str):
        return spec, spec.base
    try:
        return spec, read_document(p.parent / spec.base)
    except ScenarioError as e:
        if e.reason.startswith("cannot read"):
            raise ScenarioError(str(p), "base", f"cannot read '{spec.base}': {e.reason.removeprefix('cannot read: ')}") from None
        raise
