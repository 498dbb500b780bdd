"""Loading scenarios: TOML/JSON documents, validation into a Scenario, and one-line errors that name the field.

A scenario is checked completely when it is loaded: unknown keys, wrong types, impossible values and dangling
names are errors that name the field (`messages[2].after[0]`).
"""

from __future__ import annotations

import contextvars
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ScenarioError
from ..topology.registry import KINDS
from .scenario import Scenario


_PYDANTIC_STEP = re.compile(r"^(function-|constrained-|literal\[|lax-|strict-)|^(str|int|float|bool|list|dict)$")
"""Location parts pydantic adds for validator steps and union branches (never a field name of ours)."""


def format_loc(loc: tuple) -> str:
    """Pydantic error location -> dotted path with [i] indices (the topology union's tags, `KINDS`, dropped)."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i > 0 and loc[i - 1] == "topology" and part in KINDS:
            continue
        elif isinstance(part, str) and _PYDANTIC_STEP.match(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def first_error(e: ValidationError) -> tuple[str, str]:
    err = e.errors()[0]
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "union_tag_invalid":
        ctx = err.get("ctx", {})
        tag = ctx.get("tag", err["input"])
        msg = f"unknown kind {tag!r} (expected one of: {ctx.get('expected_tags', '')})"
    # A union of an int and "unlimited" reports the last branch; name what was expected instead.
    if err["type"] == "literal_error" and "unlimited" in msg:
        msg = f"expected a positive number or 'unlimited', got {err['input']!r}"
    elif err["type"].endswith("_type") and isinstance(err.get("input"), (bool, int, float, str)):
        msg = f"{msg}, got {err['input']!r}"
    return format_loc(tuple(err["loc"])), msg


_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("fabricsim_scenario_source", default=None)


def current_source() -> str | None:
    """The file `scenario_from_dict` is validating (for warnings that name it), else None."""
    return _SOURCE.get()


def scenario_from_dict(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a parsed scenario (dict) completely; raises ScenarioError naming the field. An implausible link
    rate or message size (a missing unit) is a FabricsimWarning naming the file, the field and the value."""
    if not isinstance(data, dict):
        raise ScenarioError(source, "", "a scenario must be a table of keys")
    token = _SOURCE.set(source)
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        field, msg = first_error(e)
        raise ScenarioError(source, field, msg) from None
    finally:
        _SOURCE.reset(token)
    sc._source = source
    sc.check()
    return sc


def read_document(path: str | Path) -> dict:
    """Parse a TOML (or .json) file; raises ScenarioError naming the file (and line) on any failure."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(p), "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        return json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(e))
        if m:
            raise ScenarioError(str(p), f"line {m[2]}", f"TOML syntax error: {m[1]} (column {m[3]})") from None
        raise ScenarioError(str(p), "", f"TOML syntax error: {e}") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(str(p), f"line {e.lineno}", f"JSON syntax error: {e.msg} (column {e.colno})") from None


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario from a TOML (or .json) file; raises ScenarioError naming file and field."""
    return scenario_from_dict(read_document(path), str(path))
