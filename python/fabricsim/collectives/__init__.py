"""Collective operations as lists of message dicts (the engine's collective generator, its rows named) and node placements."""

from .patterns import all_gather, all_reduce, all_to_all, reduce_scatter, ring_all_reduce, split_barriers
from .placement import Node, pack, placement_groups, spread, vela_nodes

__all__ = ["all_to_all", "all_gather", "all_reduce", "ring_all_reduce", "reduce_scatter", "split_barriers", "Node",
           "vela_nodes", "pack", "spread", "placement_groups"]
