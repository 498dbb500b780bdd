"""The `graph` topology family: a network read from a networkx node-link JSON file or a GraphML file (read by the
engine: crates/fabricsim-core/src/scenario/topology/graph.rs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import PrivateAttr, model_validator

from ..spec.base import current_source
from ..spec.network import Network
from .base import BuiltTopology, family_network

def resolve(file: str) -> Path:
    """The graph file's path: as written if absolute, else relative to the folder of the scenario file being
    loaded (`spec.base.current_source()`, as a sweep's `base` is relative to the sweep file), else (a
    scenario built in Python) to the current folder. O(1)."""
    p = Path(file)
    src = current_source()
    if p.is_absolute() or not src or src.startswith("<"):
        return p
    return Path(src).parent / p


class GraphTopology(BuiltTopology):
    """A network read from a file: networkx node-link JSON (`.json`, as `networkx.node_link_data` writes it,
    edges under "edges" or "links") or GraphML (`.graphml`, a flat graph). Every node needs the attribute
    `kind` ("host" or "switch"), and may have `latency` (a duration: "300ns", or seconds) or `latency_ps`;
    switches take the shared switch settings (a node's own latency wins). Every edge is a full-duplex link
    and needs `rate` (a rate: "100Gbps", or bit/s) or `rate_bps`, and may have `delay` (a duration) or
    `delay_ps`, and `weight` (routing cost, an integer ≥ 1; default 1). Other attributes are ignored, so
    `fabricsim.topology.to_networkx` output, written with node_link_data or write_graphml, reads back as the
    same nodes and links in the same order (a link's two ends may come swapped). Nodes keep the file's order;
    links too (a host's NICs are its edges in that order), unless every edge has a distinct integer key
    (node-link `key`, GraphML edge `id`), as networkx writes a MultiGraph's edges: then links are in key
    order. Routing is least-cost ECMP. A bad file is one error naming the file and the node or edge
    (`topo.graphml: edge ('a', 'zz'): node 'zz' does not exist`)."""

    kind: Literal["graph"]
    file: str
    """The graph file, relative to the scenario file's folder (or absolute); its suffix says the format:
    `.json` (networkx node-link) or `.graphml`."""

    _path: Path = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolved(self) -> "GraphTopology":
        """Remember where `file` is: relative to the scenario file being loaded (see `resolve`)."""
        self._path = resolve(self.file)
        return self

    def builder_args(self) -> dict[str, Any]:
        """The builder's keywords, `file` resolved (see `resolve`)."""
        return {**super().builder_args(), "file": str(self._path)}


def graph(file: str, switch_latency: int | str = 0, switch_model: str = "output_queued",
          input_buffer: int | str = 128 * 1024) -> Network:
    """The network of a node-link JSON or GraphML file (see GraphTopology for the attributes), `file` relative
    to the current folder; raises ScenarioError naming the file and the node or edge. O(file size)."""
    return family_network("graph", locals())
