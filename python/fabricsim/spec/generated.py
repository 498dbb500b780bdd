"""Scenario models generated from the engine's declaration of a table's keys (crates/fabricsim-core/src/scenario/
keys.rs and the tables declared with it: `roce`, `hybrid`).

A generated model holds no rules: each field keeps what the file or the caller gave, as given (`given()`), and
the engine's reader resolves units and defaults, validates, and names a bad value by the user's key. The
annotations say what a key takes, for readers and the reference page; they are never enforced here. Unknown keys
are kept too, and the engine names them.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

from annotated_types import Ge
from pydantic import BeforeValidator, ConfigDict, Field, SkipValidation, create_model, model_serializer

from .. import _core
from ..units import parse_duration_ps, parse_rate_bps, parse_size_bytes
from .base import _Model


@functools.cache
def schema() -> dict[str, Any]:
    """The engine's declaration of the tables: {table: {"doc", "keys": [{"key", "schema", "doc", "default"}],
    "required"?}}. Read once per process; treat as read-only."""
    return json.loads(_core.scenario_schema())


_UNITS = {unit: Annotated[int | float | str, BeforeValidator(parse)] for unit, parse in
          (("bytes", parse_size_bytes), ("seconds", parse_duration_ps), ("bit/s", parse_rate_bps))}
"""A quantity as given: a number in the unit or a string with one (the parser names the kind for the reference
page; the engine reads the value, so neither parses nor serializes it here)."""


def annotation(s: dict) -> Any:
    """The Python type a key's JSON Schema describes (for reading and the reference page; never enforced)."""
    if "enum" in s:
        return Literal[tuple(s["enum"])]
    if "x-unit" in s:
        return _UNITS[s["x-unit"]]
    if s.get("type") == "integer" and s.get("minimum") == 0:
        return Annotated[int, Ge(0)]
    if "anyOf" in s:
        parts = [annotation(p) for p in s["anyOf"]]
        return parts[0] if len(parts) == 1 else functools.reduce(lambda a, b: a | b, parts)
    if "const" in s:
        return Literal[s["const"]]
    return {"boolean": bool, "number": float, "integer": int, "string": str}[s["type"]]


class Table(_Model):
    """A generated table: any key and value is kept as given (the engine's reader judges them)."""

    model_config = ConfigDict(extra="allow", validate_assignment=False)

    @model_serializer(mode="wrap")
    def _dump_given(self, handler) -> dict[str, Any]:
        """A dump holds the keys that were given (an unset key reads as the engine's default, in the engine's
        units, which a file would read otherwise), so `scenario_from_dict(sc.model_dump())` gives `sc` back."""
        out = handler(self)
        keep = set(self.model_fields_set) | set(self.model_extra or {})
        return {k: v for k, v in out.items() if k in keep}

    def given(self) -> dict[str, Any]:
        """The keys the file or the caller set, as given (the engine fills the rest with its defaults)."""
        out = {k: getattr(self, k) for k in self.model_fields_set}
        out.update(self.model_extra or {})
        return {k: [x.given() if isinstance(x, Table) else x for x in v] if isinstance(v, list) else v
                for k, v in out.items()}


def model(name: str, table: str, module: str, rows: type | None = None) -> type[Table]:
    """The model of `table` from the engine's schema, as a class of `module`; `rows` is the model of a list
    key's items (`[[ecn.rate]]`)."""
    fields: dict[str, Any] = {}
    for k in schema()[table]["keys"]:
        if k["schema"].get("type") == "array":
            fields[k["key"]] = (list[rows], Field(default=[], description=k["doc"]))  # type: ignore[valid-type]
            continue
        default = k.get("default")
        extra = {"required": True} if schema()[table].get("required") else None
        fields[k["key"]] = (Annotated[annotation(k["schema"]) | None, SkipValidation],
                            Field(default=default, description=k["doc"], json_schema_extra=extra))
    return create_model(name, __base__=Table, __doc__=schema()[table]["doc"], __module__=module, **fields)

def choices(table: str, key: str) -> Any:
    """The Literal of a choice key's options, as the engine declares them."""
    return annotation(next(k for k in schema()[table]["keys"] if k["key"] == key)["schema"])


