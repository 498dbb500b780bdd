"""Placements: the general pack/spread placer over server ids, and named placements.

Servers are numbered 1..R·S in rack order (1..S in rack 1, S+1..2S in rack 2, …) on a fabric whose [fabric] table
says `servers = "numbers"`; a fabric's named placements are data, its [fabric.placements] table
(`collectives.fabrics`), which `placement_groups` takes as `presets`. Which NIC a node on a server takes is the
fabric's `nic_order` (`run.host_nodes`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..checks import integer, text
from ..errors import ArgumentError


def pack(n: int, racks: int, per_rack: int, start_rack: int = 0) -> list[int]:
    """n nodes on consecutive servers, filling racks in order from `start_rack`."""
    n, racks, per_rack = integer(n, "n", low=1), integer(racks, "racks", low=1), integer(per_rack, "per_rack", low=1)
    start_rack = integer(start_rack, "start_rack", low=0)
    first = start_rack * per_rack + 1
    if first - 1 + n > racks * per_rack:
        raise ArgumentError("n", f"{n} nodes do not fit from rack {start_rack + 1}")
    return list(range(first, first + n))


def spread(n: int, over: int, racks: int, per_rack: int) -> list[int]:
    """n nodes round-robin over the first `over` racks (one server after another in each rack)."""
    n, over = integer(n, "n", low=1), integer(over, "over", low=1)
    racks, per_rack = integer(racks, "racks", low=1), integer(per_rack, "per_rack", low=1)
    if over > racks or n > over * per_rack:
        raise ArgumentError("n", f"{n} nodes do not fit in {over} racks")
    return sorted(r * per_rack + (k // over) + 1 for k in range(n) for r in [k % over])


def placement_groups(name: str, racks: int, per_rack: int,
                     presets: Mapping[str, list[list[int]]] | None = None) -> list[list[int]]:
    """Server-id lists per collective for a name of `presets`, `pack:N` (N nodes on consecutive servers) or
    `spread:N:R` (N nodes round-robin over the first R racks), on any leaf-spine of `racks` × `per_rack`."""
    name = text(name, "name")
    presets = presets or {}
    if name in presets:
        return presets[name]
    kind, _, rest = name.partition(":")
    try:
        args = [int(x) for x in rest.split(":")] if rest else []
    except ValueError:
        args = None
    if kind == "pack" and args is not None and len(args) == 1:
        return [pack(args[0], racks, per_rack)]
    if kind == "spread" and args is not None and len(args) == 2:
        return [spread(args[0], args[1], racks, per_rack)]
    given = f"a preset ({', '.join(presets)}), " if presets else ""
    raise ArgumentError("name", f"unknown placement '{name}': give {given}pack:N or spread:N:RACKS")
