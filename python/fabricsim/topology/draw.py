"""Drawing a small network to an image file: Clos fabrics in layers (hosts at the bottom), the others by a force-directed layout."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..spec.network import Network
from .nx import to_networkx

MAX_NODES = 2000
"""The most nodes `draw` draws: beyond, a drawing is an unreadable blot and the layout slow."""
_CMAP = "plasma"
"""The colour map of link utilization (dark: idle, yellow: the busiest link)."""
LAYERED_KINDS = frozenset({"fat_tree", "fat_tree3", "leaf_spine", "rail_optimized", "dumbbell"})
"""Families drawn in layers (`to_networkx`'s `layer`: hosts, then edge/leaf/rail, aggregation/spine, core)."""


def supported_formats() -> list[str]:
    """The image suffixes matplotlib can write here (png, pdf, svg, ...)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return sorted(FigureCanvasAgg(Figure()).get_supported_filetypes())


def layered_positions(g) -> dict[str, tuple[float, float]]:
    """Each node at (x, layer): the nodes of a layer in the graph's order, evenly spaced and centred, the widest
    layer spanning [-1, 1]. O(nodes)."""
    rows: dict[int, list[str]] = {}
    for n, layer in g.nodes(data="layer"):
        rows.setdefault(layer, []).append(n)
    span = max(max(len(r) for r in rows.values()) - 1, 1)
    return {n: ((2 * i - (len(r) - 1)) / span, float(layer)) for layer, r in rows.items() for i, n in enumerate(r)}


def draw(network: Network, path: str | Path, layered: bool, title: str = "",
         link_utilization: dict[tuple[str, str], float] | None = None) -> None:
    """Draw `network` to `path` (its suffix is the format): in layers by `layer` when `layered`
    (`layered_positions`: each layer a row, hosts at the bottom), else by a seeded spring layout; hosts small and grey,
    switches coloured by layer, parallel links drawn once, names shown up to 60 nodes. With `link_utilization`
    ({(node, peer): utilization} per direction, `report.links.utilization_by_edge`) each link is coloured and
    thickened by its busier direction's utilization, with a colour bar. Raises ValueError for more than MAX_NODES
    nodes. O(nodes + links) for layers; spring layout O(iterations · nodes²)."""
    if len(network.nodes) > MAX_NODES:
        raise ValueError(f"draws at most {MAX_NODES:,} nodes, this network has {len(network.nodes):,}")
    import networkx as nx
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    g = nx.Graph(to_networkx(network))
    if layered:
        pos = layered_positions(g)
        widest = max(Counter(nx.get_node_attributes(g, "layer").values()).values())
        size = (min(40.0, max(6.0, 0.12 * widest)), 6.0)
    else:
        pos = nx.spring_layout(g, seed=1)
        side = min(24.0, max(6.0, len(g) ** 0.5))
        size = (side, side)
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    hosts = [n for n, d in g.nodes(data=True) if d["kind"] == "host"]
    switches = [n for n, d in g.nodes(data=True) if d["kind"] == "switch"]
    small = len(g) <= 60
    if link_utilization is None:
        nx.draw_networkx_edges(g, pos, ax=ax, width=0.5, alpha=0.35, edge_color="#555555")
    else:
        from matplotlib import colormaps
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        edges = list(g.edges())
        util = [max(link_utilization.get((a, b), 0.0), link_utilization.get((b, a), 0.0)) for a, b in edges]
        top = max(util, default=0.0) or 1.0
        norm = Normalize(0.0, top)
        order = sorted(range(len(edges)), key=lambda i: util[i])  # the busiest drawn last, on top
        nx.draw_networkx_edges(g, pos, ax=ax, edgelist=[edges[i] for i in order], edge_color=[util[i] for i in order],
                               edge_cmap=colormaps[_CMAP], edge_vmin=0.0, edge_vmax=top,
                               width=[0.4 + 2.6 * util[i] / top for i in order], alpha=0.9)
        bar = fig.colorbar(ScalarMappable(norm=norm, cmap=colormaps[_CMAP]), ax=ax, fraction=0.03, pad=0.01)
        bar.set_label("utilization of the busier direction (bytes·8 / (rate · span))")
    nx.draw_networkx_nodes(g, pos, nodelist=hosts, ax=ax, node_size=40 if small else 8, node_color="#9a9a9a")
    nx.draw_networkx_nodes(g, pos, nodelist=switches, ax=ax, node_size=160 if small else 30, cmap="viridis",
                           node_color=[g.nodes[n]["layer"] for n in switches], vmin=0,
                           vmax=max([g.nodes[n]["layer"] for n in switches], default=1) + 1)
    if small:
        nx.draw_networkx_labels(g, pos, ax=ax, font_size=6)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
