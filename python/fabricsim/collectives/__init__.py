"""Collective operations as lists of message dicts (the engine's collective generator, its rows named) and node placements."""

from .fabrics import FabricFile, builtin_fabrics, read_fabric
from .patterns import (
    all_gather,
    all_reduce,
    all_to_all,
    reduce_scatter,
    ring_all_reduce,
    shift_all_reduce,
    split_barriers,
)
from .placement import pack, placement_groups, spread

__all__ = ["all_to_all", "all_gather", "shift_all_reduce", "all_reduce", "ring_all_reduce", "reduce_scatter", "split_barriers", "pack",
           "spread", "placement_groups", "FabricFile", "builtin_fabrics", "read_fabric"]
