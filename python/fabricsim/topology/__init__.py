"""Topology builders (dumbbell, leaf-spine, fat-tree, custom) and networkx export."""

from .builders import custom, dumbbell, fat_tree, leaf_spine
from .fattree import SCENARIOS, FatTree, random_failures, scenario
from .nx import to_networkx

__all__ = ["custom", "dumbbell", "leaf_spine", "fat_tree", "to_networkx", "FatTree", "scenario", "SCENARIOS",
           "random_failures"]
