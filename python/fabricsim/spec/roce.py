"""RoCEv2 keys of a scenario: `transport = "rdma"`, `[pfc]` (shared-buffer switches), `[ecn]` and `[rdma]`.

The keys are declared once, in the engine (crates/fabricsim-core/src/scenario/roce.rs: each key's name, unit,
meaning and the engine field it sets). The models here are generated from that declaration
(`_core.roce_schema()`) and hold no rules: they keep what the file or the caller gave, as given. The engine's
reader takes a scenario's tables to the engine's objects (`roce_wire`): it reads units, fills every unset key
from the presets (HPCC's ns-3 `mix/config.txt`, SimAI's `SimAI.conf`, the DCQCN paper; docs/roce_parameters.md
gives the source of every value), validates, and names a bad value by the user's key (`ecn.kmin`,
`ecn.rate[0].kmax`, `rdma.ack_size`).

Adding a key: one entry in the table of `scenario/roce.rs` (and the engine field it sets); this module, the
reference page (docs/reference/scenario.md) and the native front door follow from it.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

from annotated_types import Ge
from pydantic import ConfigDict, Field, SkipValidation, create_model

from .. import _core
from ..errors import SpecError
from ..units import Duration, Rate, Size
from .base import SpecProblem, _Model


@functools.cache
def schema() -> dict[str, Any]:
    """The engine's declaration of the RoCE tables: {"pfc" | "ecn" | "ecn.rate" | "rdma": {"doc", "keys": [{"key",
    "schema", "doc", "default"}]}}. Read once per process; treat as read-only."""
    return json.loads(_core.roce_schema())


@functools.cache
def presets() -> dict[str, Any]:
    """The engine's RoCE presets in wire units (bytes, ps, bit/s): {"pfc": {...}, "ecn": {name: {...}}, "rdma":
    {name: {cc: {...}}}}. Read once per process; treat as read-only."""
    return json.loads(_core.roce_presets())


_UNITS = {"bytes": Size, "seconds": Duration, "bit/s": Rate}


def _annotation(s: dict) -> Any:
    """The Python type a key's JSON Schema describes (for reading and the reference page; never enforced)."""
    if "enum" in s:
        return Literal[tuple(s["enum"])]
    if "x-unit" in s:
        return _UNITS[s["x-unit"]]
    if s.get("type") == "integer" and s.get("minimum") == 0:
        return Annotated[int, Ge(0)]
    if "anyOf" in s:
        parts = [_annotation(p) for p in s["anyOf"]]
        return parts[0] if len(parts) == 1 else functools.reduce(lambda a, b: a | b, parts)
    if "const" in s:
        return Literal[s["const"]]
    return {"boolean": bool, "number": float, "integer": int, "string": str}[s["type"]]


class _Table(_Model):
    """A generated RoCE table: any key and value is kept as given (the engine's reader judges them)."""

    model_config = ConfigDict(extra="allow", validate_assignment=False)

    def given(self) -> dict[str, Any]:
        """The keys the file or the caller set, as given (the engine reads the rest from the presets)."""
        out = {k: getattr(self, k) for k in self.model_fields_set}
        out.update(self.model_extra or {})
        return {k: [x.given() if isinstance(x, _Table) else x for x in v] if isinstance(v, list) else v
                for k, v in out.items()}


def _model(name: str, table: str, rows: type | None = None) -> type[_Table]:
    """The model of `table` from the engine's schema; `rows` is the model of the `[[ecn.rate]]` items."""
    fields: dict[str, Any] = {}
    for k in schema()[table]["keys"]:
        if k["schema"].get("type") == "array":
            fields[k["key"]] = (list[rows], Field(default=[], description=k["doc"]))  # type: ignore[valid-type]
            continue
        default = k.get("default")
        extra = {"required": True} if schema()[table].get("required") else None
        fields[k["key"]] = (Annotated[_annotation(k["schema"]) | None, SkipValidation],
                            Field(default=default, description=k["doc"], json_schema_extra=extra))
    model = create_model(name, __base__=_Table, __doc__=schema()[table]["doc"], __module__=__name__, **fields)
    return model


EcnRateDef = _model("EcnRateDef", "ecn.rate")
PfcDef = _model("PfcDef", "pfc")
EcnDef = _model("EcnDef", "ecn", rows=EcnRateDef)
RdmaDef = _model("RdmaDef", "rdma")


def _choices(table: str, key: str) -> Any:
    """The Literal of a choice key's options, as the engine declares them."""
    return _annotation(next(k for k in schema()[table]["keys"] if k["key"] == key)["schema"])


EcnPreset = _choices("ecn", "preset")
RdmaPreset = _choices("rdma", "preset")
RdmaCc = _choices("rdma", "cc")


def roce_wire(sc) -> dict:
    """The scenario's `pfc`, `ecn` and `rdma` wire objects (only those it has), as the engine's reader makes
    them; raises SpecProblem naming the user's key."""
    doc = {"transport": sc.transport, "pfc": sc.pfc and sc.pfc.given(), "ecn": sc.ecn and sc.ecn.given(),
           "rdma": sc.rdma and sc.rdma.given()}
    try:
        return json.loads(_core.roce_tables(json.dumps(doc, default=str)))
    except SpecError as e:
        raise SpecProblem(e.field, e.reason) from None
