"""The registry of topology families: the scenario's `topology` field is the discriminated union of FAMILIES.

A family is one module of this package holding its parameters model (a spec model with a `kind: Literal[...]`
field, its defaults, and `network() -> Network`) and its builder function, named like its kind and taking
exactly the model's other fields as keywords. Adding a family takes its module plus its import and its entry
in FAMILIES here; `spec` derives the union, the kinds an unknown-kind error lists and the union tags it drops
from error locations from this module.
"""

from __future__ import annotations

from typing import Annotated, Union, get_args

from pydantic import Field

from .custom import CustomTopology
from .dragonfly import DragonflyTopology
from .dumbbell import DumbbellTopology
from .fat_tree import FatTreeTopology
from .fat_tree3 import FatTree3Topology
from .graph import GraphTopology
from .leaf_spine import LeafSpineTopology
from .multi_dim import MultiDimTopology
from .rail_optimized import RailOptimizedTopology
from .torus import TorusTopology

FAMILIES = (CustomTopology, DumbbellTopology, LeafSpineTopology, FatTreeTopology, FatTree3Topology,
            RailOptimizedTopology, DragonflyTopology, TorusTopology, MultiDimTopology, GraphTopology)
"""Every topology family, in the order an unknown kind's error lists them."""

KINDS: tuple[str, ...] = tuple(get_args(f.model_fields["kind"].annotation)[0] for f in FAMILIES)
"""The `kind` of every family, in FAMILIES order (unique: the union's discriminator)."""

TopologyDef = Annotated[Union[FAMILIES], Field(discriminator="kind")]
"""A scenario's `topology`: one of FAMILIES, chosen by its `kind`."""
