"""Topology families (custom, dumbbell, leaf-spine, fat-tree) and their registry, FT(2;M0,M1) failure models, networkx export.

`fabricsim.topology.custom`, `.dumbbell`, `.leaf_spine` and `.fat_tree` are the builder functions (each
returns a `Network` with documented node names); each family's module, parameters model included, is
reached through `registry`.
"""

# First: `spec` must finish initializing before any family module starts, since the scenario's topology union
# imports every family through `registry`; importing `spec.network` here runs `spec` to completion.
from ..spec.network import LinkDef, Network, NodeDef
from .custom import custom
from .dumbbell import dumbbell
from .fat_tree import fat_tree
from .fattree import FatTree, random_failures
from .leaf_spine import leaf_spine
from .nx import to_networkx
from .registry import FAMILIES, KINDS, TopologyDef

__all__ = ["custom", "dumbbell", "leaf_spine", "fat_tree", "to_networkx", "FatTree", "random_failures", "FAMILIES",
           "KINDS", "TopologyDef", "Network", "NodeDef", "LinkDef"]
