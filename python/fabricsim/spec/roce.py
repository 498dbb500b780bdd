"""RoCEv2 keys of a scenario: `transport = "rdma"`, `[pfc]` (shared-buffer switches), `[ecn]` and `[rdma]`.

The keys are declared once, in the engine (crates/fabricsim-core/src/scenario/roce.rs: each key's name, unit,
meaning and the engine field it sets). The models here are generated from that declaration
(`_core.scenario_schema()`, through `spec.generated`) and hold no rules: they keep what the file or the caller gave, as given. The engine's
reader takes a scenario's tables to the engine's objects (`Scenario.header()`): it reads units, fills every unset key
from the presets (HPCC's ns-3 `mix/config.txt`, SimAI's `SimAI.conf`, the DCQCN paper; docs/roce_parameters.md
gives the source of every value), validates, and names a bad value by the user's key (`ecn.kmin`,
`ecn.rate[0].kmax`, `rdma.ack_size`).

Adding a key: one entry in the table of `scenario/roce.rs` (and the engine field it sets); this module, the
reference page (docs/reference/scenario.md) and the native front door follow from it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .. import _core
from .generated import choices as _choices
from .generated import model as _model


@functools.cache
def presets() -> dict[str, Any]:
    """The engine's RoCE presets in wire units (bytes, ps, bit/s): {"pfc": {...}, "ecn": {name: {...}}, "rdma":
    {name: {cc: {...}}}}. Read once per process; treat as read-only."""
    return json.loads(_core.roce_presets())


EcnRateDef = _model("EcnRateDef", "ecn.rate", __name__)
PfcDef = _model("PfcDef", "pfc", __name__)
EcnDef = _model("EcnDef", "ecn", __name__, rows=EcnRateDef)
RdmaDef = _model("RdmaDef", "rdma", __name__)


EcnPreset = _choices("ecn", "preset")
RdmaPreset = _choices("rdma", "preset")
RdmaCc = _choices("rdma", "cc")
