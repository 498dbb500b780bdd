"""What the built topology families share: the switch settings every builder takes, and how a model calls its builder."""

from __future__ import annotations

from typing import Any, Callable, get_args

from pydantic import PrivateAttr, ValidationError

from ..errors import ScenarioError
from ..spec.base import PositiveSize, _Model, first_error
from ..spec.network import LinkDef, NodeDef, SwitchModelName
from ..units import Duration, plausibility


class BuiltTopology(_Model):
    """The parameters of a topology made by a builder function, with the switch settings every builder shares.

    Invariant: every field except `kind` is a keyword parameter of the family's builder, so `network()` is
    `builder(**self.builder_args())`."""

    switch_latency: Duration = 0
    """Forwarding delay every switch adds to every packet, on top of serialization and propagation."""
    switch_model: SwitchModelName = "output_queued"
    """"output_queued" (a packet goes straight to its egress queue), "input_buffered" (it waits in its ingress
    port's buffer while the egress is busy; lossless, with credits) or "shared_buffer" (RoCE: one buffer per
    switch with PFC pause frames; needs the scenario's `[pfc]`)."""
    input_buffer: PositiveSize = 128 * 1024
    """Ingress buffer of every switch port in the "input_buffered" model (the credits a sender may have in
    flight)."""
    _built: Any = PrivateAttr(default=None)

    def builder_args(self) -> dict[str, Any]:
        """The builder's keyword arguments: every field but `kind`. Durations and rates dump with explicit
        units, so the builder reads them back exactly."""
        return self.model_dump(exclude={"kind"})

    def build(self, builder: Callable[..., Any]):
        """`builder(**self.builder_args())`, quietly: this model's rates were checked for plausibility (a warning
        naming `topology.<field>`) when it was validated, so the links built from them do not warn again. The
        network is kept for the same arguments (a run needs it for the header and the workload's names; a
        k = 48 fat-tree takes 0.2-0.6 s to build): treat it as read-only."""
        args = self.builder_args()
        key = repr(sorted(args.items()))
        if self._built is not None and self._built[0] == key:
            return self._built[1]
        with plausibility("off"):
            net = builder(**args)
        self._built = (key, net)
        return net

    @classmethod
    def checked(cls, **kwargs: Any):
        """The model of a builder's keyword arguments, validated as a scenario's `topology` table is (a rate below
        1 Mb/s warns, unless `build` is calling); raises ScenarioError naming the family and the field
        (`fat_tree3: k: ...`). A builder that needs its values parsed (rates in bit/s, durations in ps) starts
        here, so a direct Python call gets the same checks and messages as a scenario file. O(fields)."""
        kind = get_args(cls.model_fields["kind"].annotation)[0]
        try:
            return cls.model_validate({"kind": kind, **kwargs})
        except ValidationError as e:
            raise ScenarioError(kind, *first_error(e)) from None

    def switches(self, names, latency: int | None = None) -> list[NodeDef]:
        """Switch nodes with these names and the shared switch settings (`latency` in ps instead of
        `switch_latency` if given). O(len(names))."""
        lat = self.switch_latency if latency is None else latency
        return [node(n, "switch", lat, self.switch_model, self.input_buffer) for n in names]


# ---- trusted construction -----------------------------------------------------------------------------------
# A large fabric has ~10^5 nodes and links; validating each one (its rate and delay through the unit parsers)
# costs ~5 µs, and `model_construct` is no faster (it walks every field's defaults and aliases). The builders'
# own objects are made from values their model validated once, so they are built as `model_construct` builds
# them (`__dict__`, fields set, no extra, no private attributes), without its per-field walk; and the cyclic
# garbage collector, which the ~10^5 new objects would trigger over and over (none of them is in a cycle), is
# paused while a builder runs (`bulk`, from `spec.base`, which the scenario and the workload use too). k=48
# fat_tree3 (113,472 objects): 1.1 s validated, 0.45 s trusted, 0.18 s trusted with the collector paused.
# tests/test_topologies.py checks trusted objects equal validated ones.

_set = object.__setattr__
_LINK_FIELDS = frozenset(LinkDef.model_fields)
_NODE_FIELDS = frozenset(NodeDef.model_fields)


def _trusted(cls: type, values: dict[str, Any], fields: frozenset[str]) -> Any:
    """An instance of model `cls` (no private attributes, no extras) holding `values`, every field given."""
    m = cls.__new__(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", set(fields))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


def link(a: str, b: str, rate: int, delay: int, weight: int = 1) -> LinkDef:
    """A LinkDef from validated values: rate in bit/s (> 0), delay in ps (an int is NOT read as seconds, as
    `LinkDef(delay=...)` would), weight ≥ 1. The caller guarantees the names match `Name`. O(1)."""
    return _trusted(LinkDef, {"a": a, "b": b, "rate": rate, "delay": delay, "weight": weight}, _LINK_FIELDS)


def node(name: str, kind: str, latency: int = 0, model: str = "output_queued", input_buffer: int = 128 * 1024) -> NodeDef:
    """A NodeDef from validated values (latency in ps, input_buffer in bytes), as `link`. O(1)."""
    return _trusted(NodeDef, {"name": name, "kind": kind, "latency": latency, "model": model,
                              "input_buffer": input_buffer, "arbiter": "round_robin"}, _NODE_FIELDS)


def hosts(names) -> list[NodeDef]:
    """Host nodes with these names (hosts never forward; their latency is 0). O(len(names))."""
    return [node(n, "host") for n in names]
