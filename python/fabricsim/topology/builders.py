"""Topology builders: each returns a `Network` (nodes and links in user units) with documented node names."""

from __future__ import annotations

from ..spec import LinkDef, Network, NodeDef


def custom(nodes: list[dict | NodeDef], links: list[dict | LinkDef]) -> Network:
    """A network from explicit nodes ({name, kind, latency}) and links ({a, b, rate, delay})."""
    return Network(nodes=[NodeDef.model_validate(n) for n in nodes], links=[LinkDef.model_validate(l) for l in links])


def dumbbell(
    senders: int = 8,
    access_rate: int | str = "1Gbps",
    access_delay: int | str = "2ms",
    bottleneck_rate: int | str = "100Mbps",
    bottleneck_delay: int | str = "5ms",
    switch_latency: int | str = 0,
    switch_model: str = "output_queued",
    input_buffer: int | str = 128 * 1024,
) -> Network:
    """The incast bottleneck: sender0..sender{N-1} -> leaf -> (bottleneck) -> spine -> receiver.

    Links are listed senders first, then leaf-spine, then spine-receiver, so every host has NIC 0 only."""
    nodes = [NodeDef(name=f"sender{i}", kind="host") for i in range(senders)]
    sw = dict(kind="switch", latency=switch_latency, model=switch_model, input_buffer=input_buffer)
    nodes += [NodeDef(name="leaf", **sw), NodeDef(name="spine", **sw), NodeDef(name="receiver", kind="host")]
    links = [LinkDef(a=f"sender{i}", b="leaf", rate=access_rate, delay=access_delay) for i in range(senders)]
    links.append(LinkDef(a="leaf", b="spine", rate=bottleneck_rate, delay=bottleneck_delay))
    links.append(LinkDef(a="spine", b="receiver", rate=access_rate, delay=access_delay))
    return Network(nodes=nodes, links=links)


def leaf_spine(
    racks: int,
    hosts_per_rack: int,
    spines: int,
    host_rate: int | str,
    fabric_rate: int | str,
    leaves_per_rack: int = 1,
    nics_per_host: int = 1,
    parallel_links: int = 1,
    host_delay: int | str = 0,
    fabric_delay: int | str = 0,
    switch_latency: int | str = 0,
    switch_model: str = "output_queued",
    input_buffer: int | str = 128 * 1024,
) -> Network:
    """A two-tier leaf-spine.

    Hosts h0..h{racks*hosts_per_rack-1} in rack order; leaves `leaf{r}` (or `leaf{r}_{j}` with several per
    rack); spines `spine{s}`. NIC k of a host attaches to leaf k mod leaves_per_rack of its rack, so a
    Vela-like server (4 NICs, 2 leaves) has NICs 0, 2 on its rack's first leaf and 1, 3 on the second.
    Every leaf links to every spine with `parallel_links` links. Host links come first (host by host,
    NIC by NIC), then fabric links (leaf by leaf, spine by spine)."""
    def leaf(r: int, j: int) -> str:
        return f"leaf{r}" if leaves_per_rack == 1 else f"leaf{r}_{j}"

    nodes: list[NodeDef] = []
    links: list[LinkDef] = []
    for r in range(racks):
        for h in range(hosts_per_rack):
            nodes.append(NodeDef(name=f"h{r * hosts_per_rack + h}", kind="host"))
    sw = dict(kind="switch", latency=switch_latency, model=switch_model, input_buffer=input_buffer)
    for r in range(racks):
        for j in range(leaves_per_rack):
            nodes.append(NodeDef(name=leaf(r, j), **sw))
    for s in range(spines):
        nodes.append(NodeDef(name=f"spine{s}", **sw))
    for r in range(racks):
        for h in range(hosts_per_rack):
            for k in range(nics_per_host):
                links.append(LinkDef(a=f"h{r * hosts_per_rack + h}", b=leaf(r, k % leaves_per_rack), rate=host_rate, delay=host_delay))
    for r in range(racks):
        for j in range(leaves_per_rack):
            for s in range(spines):
                for _ in range(parallel_links):
                    links.append(LinkDef(a=leaf(r, j), b=f"spine{s}", rate=fabric_rate, delay=fabric_delay))
    return Network(nodes=nodes, links=links)


def fat_tree(m0: int, m1: int, rate: int | str, delay: int | str = 0, switch_latency: int | str = 0,
             switch_model: str = "output_queued", input_buffer: int | str = 128 * 1024) -> Network:
    """FT(2;M0,M1): M1 leaves `leaf{l}`, each with M0 servers h{l*M0+j} and one uplink to each of M0 spines
    `spine{s}` (so a leaf has M0 down and M0 up ports: a non-blocking two-level fat-tree)."""
    nodes = [NodeDef(name=f"h{l * m0 + j}", kind="host") for l in range(m1) for j in range(m0)]
    sw = dict(kind="switch", latency=switch_latency, model=switch_model, input_buffer=input_buffer)
    nodes += [NodeDef(name=f"leaf{l}", **sw) for l in range(m1)]
    nodes += [NodeDef(name=f"spine{s}", **sw) for s in range(m0)]
    links = [LinkDef(a=f"h{l * m0 + j}", b=f"leaf{l}", rate=rate, delay=delay) for l in range(m1) for j in range(m0)]
    links += [LinkDef(a=f"leaf{l}", b=f"spine{s}", rate=rate, delay=delay) for l in range(m1) for s in range(m0)]
    return Network(nodes=nodes, links=links)
