"""Topology families (custom, dumbbell, leaf-spine, fat-tree, 3-tier fat-tree, rail-optimized, dragonfly, torus, ASTRA-sim's multi-dimensional networks, graph file) and their registry, FT(2;M0,M1) failure models, networkx export, size metrics.

`fabricsim.topology.custom`, `.dumbbell`, `.leaf_spine`, `.fat_tree`, `.fat_tree3`, `.rail_optimized`,
`.dragonfly`, `.torus`, `.multi_dim` and `.graph` are the builder functions (each returns a `Network` with documented node
names); each family's module, parameters model included, is reached through `registry`. `metrics` computes
what `fabricsim topology` prints (counts, diameter, bisection).
"""

# First: `spec` must finish initializing before any family module starts, since the scenario's topology union
# imports every family through `registry`; importing `spec.network` here runs `spec` to completion.
from ..spec.network import LinkDef, Network, NodeDef
from .custom import custom
from .dragonfly import dragonfly
from .dumbbell import dumbbell
from .fat_tree import fat_tree
from .fat_tree3 import fat_tree3
from .fattree import FatTree, random_failures
from .graph import graph
from .leaf_spine import leaf_spine
from .multi_dim import multi_dim
from .nx import to_networkx
from .rail_optimized import rail_gpus, rail_optimized
from .registry import FAMILIES, KINDS, TopologyDef
from .torus import torus

__all__ = ["custom", "dumbbell", "leaf_spine", "fat_tree", "fat_tree3", "rail_optimized", "rail_gpus", "dragonfly",
           "torus", "multi_dim", "graph", "to_networkx", "FatTree", "random_failures", "FAMILIES", "KINDS", "TopologyDef",
           "Network", "NodeDef", "LinkDef"]
