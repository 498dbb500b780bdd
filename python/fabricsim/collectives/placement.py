"""Placements: which server and NIC each collective node uses. Study 000's presets and a general pack/spread placer.

Servers are numbered 1..R·S in rack order (1–6 in rack 1, 7–12 in rack 2, …) and map to hosts h0…; a node on
a server gets that server's next free NIC (NIC k attaches to leaf k mod 2 of the rack on the Vela-like
fabric), so a lone node uses NIC 0 and nodes of one rack reach each other through one leaf (1 switch hop),
while a second node on the same server uses NIC 1 on the other leaf (its traffic crosses a spine).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Node:
    server: int  # 1-based server id
    nic: int

    @property
    def endpoint(self) -> tuple[str, int]:
        return (f"h{self.server - 1}", self.nic)


def vela_nodes(servers: list[int], interfaces: int = 1) -> list[list[Node]]:
    """Nodes for a list of server ids (repeats = several nodes on one server); each node gets `interfaces`
    NICs of its server, taken in order. Returns one list of Nodes (its NICs) per node."""
    used: dict[int, int] = {}
    out = []
    for s in servers:
        first = used.get(s, 0)
        if first + interfaces > 4:
            raise ValueError(f"server {s} has 4 NICs; {first + interfaces} requested")
        out.append([Node(s, first + k) for k in range(interfaces)])
        used[s] = first + interfaces
    return out


PRESETS: dict[str, list[list[int]]] = {
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
"""Study 000's Tables II (one node per server) and III (several nodes per server), as server-id lists per
collective. Note: Table II prints 4n_3r with the same ids as 4n_2r ([1, 2, 7, 8]); its Table IV hop counts
(0.04 M 1-hop vs 0.20 M 3-hop packets) fit three racks, [1, 2, 7, 13], which is used here."""


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
