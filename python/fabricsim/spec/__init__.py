"""Typed scenario specs (pydantic): the one home of defaults and validation, loaded from TOML/JSON or built in Python.

Units: durations are integer picoseconds, rates bit/s, sizes bytes; every field accepts a plain number in
the base unit (seconds for durations) or a string with a unit ("5ms", "100Gbps", "10MiB"). A scenario is
checked completely when it is loaded or converted: unknown keys, wrong types, impossible values and dangling
names are errors that name the field (`messages[2].after[0]`).

Modules: `base` (strict model, constrained types, error locations, the file being validated, `bulk`), `network`
(nodes, links, queues, ports, routing), `traffic` (sources, messages, barriers, TCP, measure), `roce` (the [pfc]
[ecn] [rdma] tables and the engine's presets), `scenario` (Scenario, its wire form, `scenario_from_dict`), `load`
(documents, error formatting). The topology families a scenario names by `kind` live in `fabricsim.topology`
(see its `registry`); their models are re-exported here. Import order, bottom up: `base` and `network`, the
topology families, `registry`, `scenario`, `load`.
"""

from ..topology.custom import CustomTopology
from ..topology.dragonfly import DragonflyTopology
from ..topology.dumbbell import DumbbellTopology
from ..topology.fat_tree import FatTreeTopology
from ..topology.fat_tree3 import FatTree3Topology
from ..topology.graph import GraphTopology
from ..topology.leaf_spine import LeafSpineTopology
from ..topology.multi_dim import Dimension, MultiDimTopology
from ..topology.rail_optimized import RailOptimizedTopology
from ..topology.torus import TorusTopology
from ..topology.registry import TopologyDef
from .base import (Name, NonNegativeInt, PositiveDuration, PositiveInt, PositiveRate, PositiveSize, Unlimited)
from .load import first_error, format_loc, load_scenario, read_document, scenario_from_dict
from .network import (CodelQdisc, DimensionOrderPolicy, FifoQdisc, FqCodelQdisc, LinkDef, NetEventDef, Network, NodeDef,
                      PortDef, PxnPolicy, QdiscDef, QueueDef, RailServer, RoutingDef, SwitchModelName, ValiantPolicy)
from .roce import EcnDef, EcnRateDef, PfcDef, RdmaDef
from .scenario import Scenario
from .traffic import BarrierDef, CollectiveDef, ComputeDef, MeasureDef, MessageDef, SourceDef, TcpDef

__all__ = [
    "Name", "NonNegativeInt", "PositiveDuration", "PositiveInt", "PositiveRate", "PositiveSize",
    "Unlimited", "first_error", "format_loc", "load_scenario", "read_document", "scenario_from_dict",
    "CodelQdisc", "FifoQdisc", "FqCodelQdisc", "LinkDef", "Network", "NodeDef", "PortDef", "QdiscDef", "QueueDef",
    "RoutingDef", "SwitchModelName", "Scenario", "CustomTopology",
    "DumbbellTopology", "FatTreeTopology", "LeafSpineTopology", "TopologyDef", "BarrierDef", "MeasureDef",
    "MessageDef", "SourceDef", "TcpDef", "ComputeDef", "CollectiveDef", "FatTree3Topology", "RailOptimizedTopology",
    "DragonflyTopology", "TorusTopology", "MultiDimTopology", "Dimension", "GraphTopology", "NetEventDef", "DimensionOrderPolicy", "ValiantPolicy",
    "PxnPolicy", "RailServer", "PfcDef", "EcnDef", "EcnRateDef", "RdmaDef",
]
