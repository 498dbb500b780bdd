"""Collective communication patterns as message lists for the workload DAG.

A *node* is an endpoint: a (host name, NIC) pair, or a host name meaning its NIC 0 (`endpoints` checks them);
`size` and `packet` are bytes, an int or a string with a unit ("10MiB"; `sizes` checks them). Every generator
returns message dicts for `Scenario.messages` (name, src, src_nic, dst, dst_nic, size, packet_size, after,
after_sent); with `barrier=True` the list also holds one barrier entry per phase ({"barrier": True, "name",
"after"}, for `Scenario.barriers`; `split_barriers` separates them), so a phase barrier costs O(N) edges, not
O(N²). Conventions (documented, as the study leaves them open):
- All-to-All: N−1 phases; in phase k node i sends one message of `size` bytes to node (i+k) mod N. Phases
  are free-running: by default (`order="sent"`) a node starts its phase-k message when its phase-(k−1)
  message has left its NIC (`"delivered"`: when it has arrived), unless `barrier=True`, which also waits for
  every phase-(k−1) message.
- All-Gather: each node's message reaches every other node (N−1 messages per node, shift order); by default
  a node sends them all at once, its NIC interleaving their packets ("multiple parallel data transfers",
  study 000 §III-B), which makes a single-interface All-Gather insensitive to placement (its §V-B).
- All-Reduce (the study's approximation): All-to-All followed by All-Gather, both of `size` bytes per
  message; a node's All-Gather starts when every All-to-All message addressed to it has been delivered (it
  must hold the whole shard before it broadcasts the reduced one) and, with a non-parallel `ag_order`,
  after its own last All-to-All message.
- Ring All-Reduce: `size` is a node's whole buffer: 2(N−1) steps of ⌊size/N⌋ (at least 1 byte) around the
  ring; step s of node i waits for step s−1 from i−1.
- Reduce-Scatter: the whole buffer too: the first N−1 steps of the ring.

So `size` is per destination for the shift patterns (All-to-All, All-Gather: a node's block, All-Reduce: in
each of its two parts) and the whole buffer for the ring patterns.
"""

from __future__ import annotations

from typing import Sequence

Endpoint = tuple[str, int]


def endpoints(nodes: Sequence) -> list[Endpoint]:
    """Normalize `nodes`: a host name means its NIC 0; a (host, nic) pair is kept. Anything else (a bare
    string split into characters, a negative NIC, fewer than 2 nodes) raises ValueError naming the entry. O(N)."""
    if isinstance(nodes, str):
        raise ValueError(f"nodes: expected a list of host names or (host, nic) pairs, got the string {nodes!r}")
    out: list[Endpoint] = []
    for i, x in enumerate(nodes):
        if isinstance(x, str) and x:
            out.append((x, 0))
        elif (isinstance(x, (tuple, list)) and len(x) == 2 and isinstance(x[0], str) and x[0]
              and isinstance(x[1], int) and not isinstance(x[1], bool) and x[1] >= 0):
            out.append((x[0], int(x[1])))
        else:
            raise ValueError(f"nodes[{i}]: expected a host name or a (host, nic) pair with nic >= 0, got {x!r}")
    if len(out) < 2:
        raise ValueError(f"nodes: a collective needs at least 2 nodes, got {len(out)}")
    if len(set(out)) != len(out):
        dup = next(e for e in out if out.count(e) > 1)
        raise ValueError(f"nodes: endpoint {dup} appears more than once")
    return out


def sizes(size, packet) -> tuple[int, int]:
    """Check a generator's `size` and `packet`: bytes as an int > 0 or a string with a unit ("10MiB", "4KiB").
    Returns both in bytes; raises ValueError naming the argument."""
    from ..units import parse_size_bytes

    out = []
    for what, v in (("size", size), ("packet", packet)):
        try:
            n = parse_size_bytes(v)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{what}: {e}") from None
        if n <= 0:
            raise ValueError(f"{what}: must be at least 1 byte, got {v!r}")
        out.append(n)
    return out[0], out[1]


def _msg(name: str, src: Endpoint, dst: Endpoint, size: int, packet: int, header: int, after: list[str],
         after_sent: list[str] | None = None) -> dict:
    return {"name": name, "src": src[0], "src_nic": src[1], "dst": dst[0], "dst_nic": dst[1], "size": size,
            "packet_size": packet, "header": header, "after": after, "after_sent": after_sent or []}


ORDERS = ("sent", "delivered", "parallel")
"""How a node orders its own messages: "sent" (default) = back to back, the next starts when the previous has
been fully handed to the NIC; "delivered" = the next waits until the previous has arrived (blocking sends);
"parallel" = all at once, the NIC interleaving their packets round-robin."""


def _shift(tag: str, nodes: Sequence[Endpoint], size: int, packet: int, header: int, barrier: bool, order: str,
           gate: dict[int, list[str]] | None = None,
           last_own: dict[int, str] | None = None) -> tuple[list[dict], dict[int, str], dict[int, list[str]]]:
    """N−1 shift phases. A node's messages chain per `order`, the first after `last_own[i]` (its previous
    message, if any); every message of node i also waits for `gate[i]` to be delivered.
    Returns (messages, last message sent by node i, messages addressed to node i)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    nodes = endpoints(nodes)
    size, packet = sizes(size, packet)
    n = len(nodes)
    msgs: list[dict] = []
    sent: dict[int, str] = dict(last_own or {})
    received: dict[int, list[str]] = {i: [] for i in range(n)}
    for k in range(1, n):
        phase = []
        for i in range(n):
            j = (i + k) % n
            after = list((gate or {}).get(i, [])) if k == 1 or order == "parallel" else []
            after_sent: list[str] = []
            if i in sent and order == "delivered":
                after.append(sent[i])
            elif i in sent and order == "sent":
                after_sent = [sent[i]]
            if barrier and k > 1:
                after.append(f"{tag}.b{k - 1}")
            name = f"{tag}.p{k}.{i}to{j}"
            msgs.append(_msg(name, nodes[i], nodes[j], size, packet, header, sorted(set(after)), after_sent))
            sent[i] = name
            received[j].append(name)
            phase.append(name)
        if barrier:
            msgs.append({"barrier": True, "name": f"{tag}.b{k}", "after": phase})
    return msgs, sent, received


def split_barriers(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """(messages, barriers) of a generator's output, ready for `Scenario.messages` and `Scenario.barriers`."""
    msgs = [m for m in items if not m.get("barrier")]
    bars = [{"name": b["name"], "after": b["after"]} for b in items if b.get("barrier")]
    return msgs, bars


def all_to_all(nodes: Sequence[Endpoint], size: int, *, packet: int = 1024, header: int = 0, barrier: bool = False,
               order: str = "sent", tag: str = "a2a") -> list[dict]:
    """Every node sends `size` bytes to every other node: N(N−1) messages."""
    return _shift(tag, nodes, size, packet, header, barrier, order)[0]


def all_gather(nodes: Sequence[Endpoint], size: int, *, packet: int = 1024, header: int = 0, barrier: bool = False,
               order: str = "parallel", tag: str = "ag") -> list[dict]:
    """Every node's `size`-byte block reaches every other node (shift pattern): N(N−1) messages."""
    return _shift(tag, nodes, size, packet, header, barrier, order)[0]


def all_reduce(nodes: Sequence[Endpoint], size: int, *, packet: int = 1024, header: int = 0, barrier: bool = False,
               order: str = "sent", ag_order: str = "parallel", tag: str = "ar") -> list[dict]:
    """All-to-All (distributed reduction, `order`) then All-Gather (broadcast, `ag_order`): 2N(N−1) messages of
    `size` bytes. Node i's All-Gather waits for every All-to-All message addressed to i (with `barrier`, for the
    whole All-to-All) and, unless parallel, follows i's own last All-to-All message."""
    a2a, sent, received = _shift(f"{tag}.a2a", nodes, size, packet, header, barrier, order)
    gate = received if not barrier else {i: [f"{tag}.a2a.b{len(nodes) - 1}"] for i in range(len(nodes))}
    ag = _shift(f"{tag}.ag", nodes, size, packet, header, barrier, ag_order, gate=gate,
                last_own=sent if ag_order != "parallel" else None)[0]
    return a2a + ag


def _ring(tag: str, nodes: Sequence[Endpoint], size: int, steps: int, packet: int, header: int) -> list[dict]:
    nodes = endpoints(nodes)
    size, packet = sizes(size, packet)
    n = len(nodes)
    chunk = max(1, size // n)
    msgs = []
    for s in range(steps):
        for i in range(n):
            after = [f"{tag}.s{s - 1}.{(i - 1) % n}"] if s > 0 else []
            msgs.append(_msg(f"{tag}.s{s}.{i}", nodes[i], nodes[(i + 1) % n], chunk, packet, header, after))
    return msgs


def ring_all_reduce(nodes: Sequence[Endpoint], size: int, *, packet: int = 1024, header: int = 0,
                    tag: str = "ring") -> list[dict]:
    """Ring All-Reduce: reduce-scatter then all-gather, 2(N−1) steps of size/N to the right neighbour."""
    return _ring(tag, nodes, size, 2 * (len(nodes) - 1), packet, header)


def reduce_scatter(nodes: Sequence[Endpoint], size: int, *, packet: int = 1024, header: int = 0,
                   tag: str = "rs") -> list[dict]:
    """Ring Reduce-Scatter: N−1 steps of size/N to the right neighbour."""
    return _ring(tag, nodes, size, len(nodes) - 1, packet, header)
