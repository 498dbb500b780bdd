"""What the built topology families share: the switch settings every builder takes, and how a model calls its builder."""

from __future__ import annotations

from typing import Any, Callable

from ..spec.base import PositiveSize, _Model
from ..spec.network import SwitchModelName
from ..units import Duration, plausibility


class BuiltTopology(_Model):
    """The parameters of a topology made by a builder function, with the switch settings every builder shares.

    Invariant: every field except `kind` is a keyword parameter of the family's builder, so `network()` is
    `builder(**self.builder_args())`."""

    switch_latency: Duration = 0
    """Forwarding delay every switch adds to every packet, on top of serialization and propagation."""
    switch_model: SwitchModelName = "output_queued"
    """Either "output_queued" (a packet goes straight to its egress queue) or "input_buffered" (it waits in
    its ingress port's buffer while the egress is busy; lossless, with credits)."""
    input_buffer: PositiveSize = 128 * 1024
    """Ingress buffer of every switch port in the "input_buffered" model (the credits a sender may have in
    flight)."""

    def builder_args(self) -> dict[str, Any]:
        """The builder's keyword arguments: every field but `kind`. Durations and rates dump with explicit
        units, so the builder reads them back exactly."""
        return self.model_dump(exclude={"kind"})

    def build(self, builder: Callable[..., Any]):
        """`builder(**self.builder_args())`, quietly: this model's rates were checked for plausibility (a warning
        naming `topology.<field>`) when it was validated, so the links built from them do not warn again."""
        with plausibility("off"):
            return builder(**self.builder_args())
