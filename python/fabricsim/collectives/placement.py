"""Placements: which server and NIC each collective node uses, a general pack/spread placer, and the named
placements of the Vela-like fabric (`VELA_PRESETS`: study 000's Tables II and III, which
`fabricsim.studies.orchestration` re-exports as its PRESETS).

Servers are numbered 1..R·S in rack order (1–6 in rack 1, 7–12 in rack 2, …) and map to hosts h0…. On the
Vela-like fabric NIC k of a server attaches to leaf k mod 2 of its rack. A node on a server takes that
server's next free NIC in leaf-filling order, NIC 0, 2, 1, 3 (`NIC_ORDER`): a lone node uses NIC 0, so the
nodes of one rack reach each other through one leaf (1 switch hop) and other racks through a spine (3 hops);
a second node on the same server takes NIC 2, on the same leaf; only a third or fourth node lands on the
rack's other leaf, and its traffic to the first leaf crosses a spine, as study 000 §V-A describes for its
Table III placements ("spine crossing ... when traffic moves between switches within the same rack").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    server: int  # 1-based server id
    nic: int

    @property
    def endpoint(self) -> tuple[str, int]:
        return (f"h{self.server - 1}", self.nic)


NIC_ORDER = (0, 2, 1, 3)
"""The order in which a server's NICs are handed to its nodes: both NICs of the rack's first leaf, then the
second leaf's."""


VELA_PRESETS: dict[str, list[list[int]]] = {
    # Table II: one node per server; collectives and their placements.
    "4n_1r": [[1, 2, 3, 4]], "4n_2r": [[1, 2, 7, 8]], "4n_3r": [[1, 2, 7, 13]], "4n_4r": [[1, 7, 13, 19]],
    "6n_1r": [[1, 2, 3, 4, 5, 6]], "6n_2r": [[1, 2, 3, 7, 8, 9]], "6n_3r": [[1, 2, 7, 8, 13, 14]],
    "6n_4r": [[1, 2, 7, 8, 13, 19]],
    "8n_2r": [[1, 2, 3, 4, 7, 8, 9, 10]], "8n_3r": [[1, 2, 3, 7, 8, 9, 13, 14]], "8n_4r": [[1, 2, 7, 8, 13, 14, 19, 20]],
    "12n_2r": [list(range(1, 13))], "12n_3r": [[1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16]],
    "12n_4r": [[1, 2, 3, 7, 8, 9, 13, 14, 15, 19, 20, 21]],
    "4n_1r_6n_1r": [[1, 2, 3, 4], [7, 8, 9, 10, 11, 12]], "4n_2r_6n_2r": [[1, 2, 7, 8], [13, 14, 15, 19, 20, 21]],
    "4n_3r_6n_3r": [[1, 2, 7, 13], [8, 9, 14, 15, 19, 20]], "4n_4r_6n_4r": [[1, 7, 13, 19], [2, 3, 8, 9, 14, 20]],
    "6n_1r_8n_2r": [[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 13, 14, 15, 16]],
    "6n_2r_8n_2r": [[1, 2, 3, 7, 8, 9], [13, 14, 15, 16, 19, 20, 21, 22]],
    "6n_3r_8n_3r": [[1, 2, 7, 8, 13, 14], [9, 10, 11, 15, 16, 17, 19, 20]],
    "6n_4r_8n_4r": [[1, 2, 7, 8, 13, 19], [3, 4, 9, 10, 14, 15, 20, 21]],
    # Table III: several nodes per server within one rack.
    "4n_1_1_1_1": [[1, 2, 3, 4]], "4n_2_1_1": [[1, 1, 2, 3]], "4n_2_2": [[1, 1, 2, 2]], "4n_3_1": [[1, 1, 1, 2]],
    "4n_4": [[1, 1, 1, 1]],
    "6n_1_1_1_1_1": [[1, 2, 3, 4, 5, 6]], "6n_1_1_1_2": [[1, 1, 2, 3, 4, 5]], "6n_1_1_2_2": [[1, 1, 2, 2, 3, 4]],
    "6n_2_2_2": [[1, 1, 2, 2, 3, 3]], "6n_3_3": [[1, 1, 1, 2, 2, 2]], "6n_4_1_1": [[1, 1, 1, 1, 2, 3]],
    "6n_4_2": [[1, 1, 1, 1, 2, 2]],
}
"""The named placements of the Vela-like fabric (4 racks x 6 servers, ids 1-24 in rack order): study 000's Tables
II (one node per server) and III (several nodes per server), as server-id lists per collective. The built-in `vela`
fabric offers them to the placement advisor (`advisor.fabric.named_fabric`), and a trace's `preset:NAME` placement
reads them (`chakra.lower`). Note: Table II prints 4n_3r with the same ids as 4n_2r ([1, 2, 7, 8]); its Table IV
hop counts (0.04 M 1-hop vs 0.20 M 3-hop packets) fit three racks, [1, 2, 7, 13], which is used here."""


def vela_nodes(servers: list[int], interfaces: int = 1) -> list[list[Node]]:
    """Nodes for a list of server ids (repeats = several nodes on one server); each node gets `interfaces`
    NICs of its server, taken in `NIC_ORDER`. Returns one list of Nodes (its NICs) per node."""
    used: dict[int, int] = {}
    out = []
    for s in servers:
        first = used.get(s, 0)
        if first + interfaces > len(NIC_ORDER):
            raise ValueError(f"server {s} has {len(NIC_ORDER)} NICs; {first + interfaces} requested")
        out.append([Node(s, NIC_ORDER[first + k]) for k in range(interfaces)])
        used[s] = first + interfaces
    return out


def pack(n: int, racks: int = 4, per_rack: int = 6, start_rack: int = 0) -> list[int]:
    """n nodes on consecutive servers, filling racks in order from `start_rack`."""
    first = start_rack * per_rack + 1
    if first - 1 + n > racks * per_rack:
        raise ValueError(f"{n} nodes do not fit from rack {start_rack + 1}")
    return list(range(first, first + n))


def spread(n: int, over: int, racks: int = 4, per_rack: int = 6) -> list[int]:
    """n nodes round-robin over the first `over` racks (one server after another in each rack)."""
    if over > racks or n > over * per_rack:
        raise ValueError(f"{n} nodes do not fit in {over} racks")
    return sorted(r * per_rack + (k // over) + 1 for k in range(n) for r in [k % over])


def placement_groups(name: str, racks: int = 4, per_rack: int = 6,
                     presets: Mapping[str, list[list[int]]] | None = None) -> list[list[int]]:
    """Server-id lists per collective for a name of `presets`, `pack:N` (N nodes on consecutive servers) or
    `spread:N:R` (N nodes round-robin over the first R racks), on any leaf-spine of `racks` × `per_rack`."""
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
    raise ValueError(f"unknown placement '{name}': give {given}pack:N or spread:N:RACKS")
