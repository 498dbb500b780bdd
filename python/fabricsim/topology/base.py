"""What the built topology families share: the switch settings every builder takes, and how a model calls its builder."""

from __future__ import annotations

from typing import Any

from pydantic import PrivateAttr, TypeAdapter

from ..spec.base import PositiveSize, _Model, bulk, engine_read
from ..spec.network import LinkDef, Network, NodeDef, RoutingPolicy, SwitchModelName
from ..units import Duration


class BuiltTopology(_Model):
    """The parameters of a topology family, with the switch settings every family shares. The engine builds the
    network (crates/fabricsim-core/src/scenario/topology/, one file per family) and judges the parameters:
    `network()` and the family's builder function both go through `network_of`.

    Invariant: every field except `kind` is a key of the family's `[topology]` table and a keyword parameter of
    its builder function."""

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
        """The family's parameters as a `[topology]` table's keys: every field but `kind`. Durations and rates
        dump with explicit units, so the engine's reader reads them back exactly."""
        return self.model_dump(exclude={"kind"})

    def network(self) -> Network:
        """The built network (`network_of` this table: the engine's builder, the one for every family). Kept
        for the same parameters (a run needs it for the header and the workload's names): treat it as
        read-only."""
        args = self.builder_args()
        key = repr(sorted(args.items()))
        if self._built is not None and self._built[0] == key:
            return self._built[1]
        net = network_of({"kind": self.kind, **args}, quiet=True)
        self._built = (key, net)
        return net


# ---- trusted construction -----------------------------------------------------------------------------------
# A large fabric has ~10^5 nodes and links; validating each one (its rate and delay through the unit parsers)
# costs ~5 µs, and `model_construct` is no faster (it walks every field's defaults and aliases). The network the
# engine built (`network_of`) holds values its reader judged, so its objects are built as `model_construct`
# builds them (`__dict__`, fields set, no extra, no private attributes), without its per-field walk; and the
# cyclic garbage collector, which the ~10^5 new objects would trigger over and over (none of them is in a cycle),
# is paused meanwhile (`bulk`, from `spec.base`, which the scenario and the workload use too).
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


_POLICY = TypeAdapter(RoutingPolicy)


@bulk
def network_of(table: dict[str, Any], source: str = "", quiet: bool = False) -> Network:
    """The network of a `[topology]` table (`{"kind": "fat_tree", "m0": 4, ...}`, values as a scenario file
    writes them), built and checked by the engine's reader (`_core.scenario_read(..., "network")`); a `graph`
    file is relative to the current folder. Raises ScenarioError naming `source` (default: the family) and the
    key (`topology.k`); the first implausible rate or size warns (FabricsimWarning), unless `quiet`.
    O(nodes + links)."""
    raw = engine_read(table, "network", source or str(table.get("kind", "topology")), quiet)
    nodes = [_trusted(NodeDef, n, _NODE_FIELDS) for n in raw["nodes"]]
    links = [_trusted(LinkDef, x, _LINK_FIELDS) for x in raw["links"]]
    policy = None if raw["policy"] is None else _POLICY.validate_python(raw["policy"])
    return Network.model_construct(nodes=nodes, links=links, policy=policy)


def family_network(kind: str, args: dict[str, Any]) -> Network:
    """A builder function's network: its keyword arguments (`locals()`, None meaning "not given") as the
    `[topology]` table of family `kind`; an error names the family and the argument (`fat_tree3: k: must be
    even ...`). O(nodes + links)."""
    from ..checks import plain
    from ..errors import ScenarioError

    try:
        return network_of({"kind": kind, **{k: plain(v) for k, v in args.items() if v is not None}})
    except ScenarioError as e:
        if e.source == kind and e.field.startswith("topology."):
            raise ScenarioError(kind, e.field.removeprefix("topology."), e.reason) from None
        raise
