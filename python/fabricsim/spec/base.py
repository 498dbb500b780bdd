"""The building blocks of every scenario model: the strict base model, constrained field types and SpecProblem.

Units: durations are integer picoseconds, rates bit/s, sizes bytes; every field accepts a plain number in
the base unit (seconds for durations) or a string with a unit ("5ms", "100Gbps", "10MiB").
"""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge, Gt
from pydantic import BaseModel, ConfigDict, Field, Strict

from ..units import Duration, FabricRate, FabricSize, Rate, Size

PositiveInt = Annotated[int, Strict(), Gt(0)]
"""A count > 0; booleans, strings and floats are rejected (TOML `true` or `"3"` is an error, not 1 or 3)."""
NonNegativeInt = Annotated[int, Strict(), Ge(0)]
"""A count or index >= 0, strictly an integer."""
PositiveRate = Annotated[Rate, Gt(0)]
PositiveSize = Annotated[Size, Gt(0)]
LinkRate = Annotated[FabricRate, Gt(0)]
"""A link's (or a topology family's, or a port cap's) rate > 0; below 1 Mb/s it is implausible: a FabricsimWarning
names the field and the value as written (`topology.host_rate = 100 means 100 bit/s ...`)."""
MessageSize = Annotated[FabricSize, Gt(0)]
"""A message, collective or packet size > 0; below 1 byte (0.75, which rounds to 1) it is implausible: a
FabricsimWarning names the field and the value as written."""
PositiveDuration = Annotated[Duration, Gt(0)]
Name = Annotated[str, Field(min_length=1, pattern=r"^[^\s:>#]+$")]
Unlimited = Literal["unlimited"]


class SpecProblem(Exception):
    """A cross-reference problem found after field validation: (field path, reason)."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class _Model(BaseModel):
    """Every scenario model: unknown keys are errors, and assignments are validated like construction."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
