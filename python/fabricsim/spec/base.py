"""The building blocks of every scenario model: the strict base model, constrained field types; the engine's reader
(`engine_read`, the one validator);
how a validation error names its field (`format_loc`, `first_error`); the file being validated
(`current_source`); and `bulk`, which builders of many model objects run under.

Units: durations are integer picoseconds, rates bit/s, sizes bytes; every field accepts a plain number in
the base unit (seconds for durations) or a string with a unit ("5ms", "100Gbps", "10MiB").

This module sits below the topology families and the scenario (both import it), so it knows neither: the
topology union's tags that `format_loc` drops are passed in (`spec.load` and `spec.scenario` pass the
registry's KINDS).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import gc
import math
import re
from collections.abc import Callable, Collection, Iterator
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Strict, ValidationError

from ..units import Duration, Rate, Size


# The field types of the scenario models say what a value is, not which values are allowed: the engine's reader
# judges every value (ranges, names, implausible rates and sizes), for a file and for a scenario built in Python
# alike (`engine_read`). The names keep what the engine requires, for the reader of a model.
@dataclasses.dataclass(frozen=True)
class Requires:
    """What the engine requires of a value, for the reference pages (documentation: pydantic ignores it, the
    engine's reader judges)."""

    text: str


PositiveInt = Annotated[int, Strict(), Requires("count > 0")]
"""A count the engine requires > 0; an integer (booleans, strings and floats are not one)."""
NonNegativeInt = Annotated[int, Strict(), Requires("count ≥ 0")]
"""A count or index the engine requires >= 0; an integer."""
PositiveRate = Rate
PositiveSize = Size
LinkRate = Rate
"""A link's (or a topology family's, or a port cap's) rate, which the engine requires > 0; below 1 Mb/s it warns
(`topology.host_rate = 100 means 100 bit/s ...`)."""
MessageSize = Size
"""A message, collective or packet size, which the engine requires > 0; below 1 byte (0.75, which rounds to 1)
it warns."""
PositiveDuration = Duration
Name = Annotated[str, Requires("name")]
"""A node, flow or barrier name: the engine requires it non-empty, without whitespace, ':', '>' or '#'."""
Unlimited = Literal["unlimited"]


class _Model(BaseModel):
    """Every scenario model: unknown keys are errors, and assignments are validated like construction."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


# ---- the engine's reader ---------------------------------------------------------------------------------

def _base(source: str) -> str | None:
    """The folder a `graph` file named in a scenario from `source` is relative to (None: the current folder)."""
    from pathlib import Path

    return None if not source or source.startswith("<") else str(Path(source).parent)


def non_finite(data: Any, at: str = "") -> tuple[str, float] | None:
    """The first NaN or infinite float in a document (TOML reads `nan` and `inf`; JSON has neither) as (the key
    as written, e.g. `links[2].rate`, its value), or None. O(size of the document)."""
    if isinstance(data, float):
        return None if math.isfinite(data) else (at, data)
    if isinstance(data, dict):
        items = ((f"{at}.{k}" if at else str(k), v) for k, v in data.items())
    elif isinstance(data, (list, tuple)):
        items = ((f"{at}[{i}]", v) for i, v in enumerate(data))
    else:
        return None
    for key, v in items:
        found = non_finite(v, key)
        if found is not None:
            return found
    return None


def engine_read(data: dict, what: str, source: str, quiet: bool = True, parse: bool = True) -> Any:
    """The engine's reading of a scenario document (`what`: "header", "rows", "warnings") or of a `[topology]`
    table ("network"), parsed from its JSON; raises ScenarioError naming the file (`source`, or the graph file the
    error is in) and the key as written. Unless `quiet`, implausible values are said as FabricsimWarnings first
    (a scenario's: the first three and how many more, `say_warnings`; a topology table's: the
    first). The result parsed, or its JSON text when not `parse`. O(size of the document)."""
    import json

    from .. import _core
    from ..errors import ScenarioError

    # TOML reads nan and inf, and a table the engine declares (`[uec]`, `[rdma]`) keeps them as given; JSON carries
    # neither, so the engine would name no key: name it here.
    bad = non_finite(data)
    if bad is not None:
        field = f"topology.{bad[0]}" if what == "network" else bad[0]
        raise ScenarioError(source, field, f"must be a finite number, got {bad[1]}")
    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError) as e:
        raise ScenarioError(source, "", f"not a scenario document: {e}") from None
    verdict, file, said = _core.scenario_read(text, what, _base(source), quiet)
    if verdict == "warning":
        import warnings

        from ..errors import FabricsimWarning

        if what == "network":
            where = file or source
            warnings.warn(f"{where}: {said}" if where else said, FabricsimWarning, stacklevel=3)
        else:
            say_warnings(data, source)
        verdict, file, said = _core.scenario_read(text, what, _base(source), True)
    if verdict != "ok":
        raise said_error(said, file or source)
    return json.loads(said) if parse else said


def said_error(said: str, source: str):
    """The ScenarioError of the engine reader's "field: reason" (a reason alone names no field), in `source`."""
    from ..errors import ScenarioError

    field, sep, reason = said.partition(": ")
    return ScenarioError(source, field if sep else "", reason if sep else said)


def say_warnings(doc: dict, source: str) -> None:
    """One FabricsimWarning per implausible value the engine's reader finds in `doc` (the first three, then how
    many more): `file: path = value as written means ...` (the file: the graph file the value is in, or
    `source`). O(size of the scenario) when it has none to say; up to five readings when it has."""
    import warnings

    from ..errors import FabricsimWarning

    found = engine_read(doc, "warnings", source)
    for w in found["said"]:
        where = w["file"] or source
        warnings.warn(f"{where}: {w['text']}" if where else w["text"], FabricsimWarning, stacklevel=3)
    if found["total"] > 3:
        where = f"{source}: " if source else ""
        warnings.warn(f"{where}{found['total'] - 3:,} more implausible rate(s) or size(s) like these", FabricsimWarning,
                      stacklevel=3)


# ---- validation errors, named by field ----------------------------------------------------------------------

_PYDANTIC_STEP = re.compile(r"^(function-|constrained-|literal\[|lax-|strict-)|^(str|int|float|bool|list|dict)$")
"""Location parts pydantic adds for validator steps and union branches (never a field name of ours)."""


def format_loc(loc: tuple, tags: Collection[str] = ()) -> str:
    """Pydantic error location -> dotted path with [i] indices (a part of `tags` right after a "topology" part,
    the topology union's tag, dropped)."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif i > 0 and loc[i - 1] == "topology" and part in tags:
            continue
        elif isinstance(part, str) and _PYDANTIC_STEP.match(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def first_error(e: ValidationError, tags: Collection[str] = ()) -> tuple[str, str]:
    """(field path, message) of the first error of `e`, the path as `format_loc(loc, tags)` writes it."""
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
    return format_loc(tuple(err["loc"]), tags), msg


# ---- the file being validated ------------------------------------------------------------------------------

_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("fabricsim_scenario_source", default=None)


def current_source() -> str | None:
    """The file `scenario_from_dict` is validating (for warnings that name it), else None."""
    return _SOURCE.get()


@contextlib.contextmanager
def validating(source: str) -> Iterator[None]:
    """`current_source()` is `source` inside the block (restored after)."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


# ---- building many model objects ------------------------------------------------------------------------------

F = TypeVar("F", bound=Callable[..., Any])


def bulk(fn: F) -> F:
    """Decorate a builder: the cyclic garbage collector is paused while it runs (and resumed after, if it was
    on), since it allocates many objects that form no cycle."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        was_on = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_on:
                gc.enable()
    return wrapper  # type: ignore[return-value]
