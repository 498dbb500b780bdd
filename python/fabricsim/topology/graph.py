"""The `graph` topology family: a network read from a networkx node-link JSON file or a GraphML file."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import PrivateAttr, field_validator, model_validator

from ..errors import FabricsimWarning, ScenarioError
from ..spec.base import bulk, current_source
from ..spec.network import LinkDef, Network, NodeDef
from ..units import PLAUSIBILITY_MARK, check_fabric_rate, parse_duration_ps, parse_rate_bps, plausibility
from .base import BuiltTopology, link, node

SUFFIXES = {".json": "node-link JSON", ".graphml": "GraphML"}
_NAME = re.compile(r"^[^\s:>#]+$")
_GRAPHML_TYPES = {"int": int, "long": int, "float": float, "double": float, "string": str}


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

    @field_validator("file")
    @classmethod
    def _readable(cls, file: str) -> str:
        p = resolve(file)
        if p.suffix.lower() not in SUFFIXES:
            raise ValueError(f"'{file}': the graph file's suffix must be .json (networkx node-link) or .graphml")
        if not p.is_file():
            raise ValueError(f"cannot read '{file}' ({p}): no such file")
        return file

    @model_validator(mode="after")
    def _resolved(self) -> "GraphTopology":
        self._path = resolve(self.file)
        return self

    def builder_args(self) -> dict[str, Any]:
        """The builder's keywords, `file` resolved (see `resolve`)."""
        return {**super().builder_args(), "file": str(self._path)}

    def network(self) -> Network:
        return self.build(graph)


@bulk
def graph(file: str, switch_latency: int | str = 0, switch_model: str = "output_queued",
          input_buffer: int | str = 128 * 1024) -> Network:
    """The network of a node-link JSON or GraphML file (see GraphTopology for the attributes), `file` relative
    to the current folder; raises ScenarioError naming the file and the node or edge. O(file size)."""
    m = GraphTopology.checked(**locals())
    path = str(m._path)
    raw_nodes, raw_edges = (read_node_link if m._path.suffix.lower() == ".json" else read_graphml)(m._path)
    if not raw_nodes:
        raise ScenarioError(path, "", "the graph has no nodes")
    if not raw_edges:
        raise ScenarioError(path, "", "the graph has no edges (links)")
    names: dict[Any, str] = {}  # node id -> node name
    taken: set[str] = set()
    nodes: list[NodeDef] = []
    for nid, attrs in raw_nodes:
        where = f"node {nid!r}"
        name = str(nid)
        if not _NAME.match(name):
            raise ScenarioError(path, where, "a node id must be non-empty, without whitespace, ':', '>' or '#'")
        if name in taken:
            raise ScenarioError(path, where, "declared twice")
        kind = attrs.get("kind")
        if kind not in ("host", "switch"):
            raise ScenarioError(path, where, "needs the attribute kind = \"host\" or \"switch\"" +
                                ("" if kind is None else f", got {kind!r}"))
        latency = _quantity(attrs, "latency", parse_duration_ps, path, where)
        if kind == "host":
            nodes.append(node(name, "host", 0 if latency is None else latency))
        else:
            nodes.append(node(name, "switch", m.switch_latency if latency is None else latency, m.switch_model,
                              m.input_buffer))
        names[nid] = name
        taken.add(name)
    links: list[LinkDef] = []
    for u, v, attrs in in_key_order(raw_edges):
        where = f"edge ({u!r}, {v!r})"
        for end in (u, v):
            if end not in names:
                raise ScenarioError(path, where, f"node {end!r} does not exist")
        if u == v:
            raise ScenarioError(path, where, "a link joins two different nodes")
        rate = _quantity(attrs, "rate", parse_rate_bps, path, where)
        if rate is None:
            raise ScenarioError(path, where, "needs the attribute rate (\"100Gbps\", or bit/s) or rate_bps")
        if rate == 0:
            raise ScenarioError(path, where, "rate must be > 0")
        delay = _quantity(attrs, "delay", parse_duration_ps, path, where)
        weight = attrs.get("weight", 1)
        if isinstance(weight, float) and weight.is_integer():
            weight = int(weight)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ScenarioError(path, where, f"weight must be an integer ≥ 1, got {weight!r}")
        links.append(link(names[u], names[v], rate, 0 if delay is None else delay, weight))
    return Network(nodes=nodes, links=links)


def in_key_order(edges: list[tuple[Any, Any, dict]]) -> list[tuple[Any, Any, dict]]:
    """The edges sorted by their `key` if every edge has a distinct integer one (networkx's MultiGraph keys,
    which `to_networkx` sets to the link index), else as they are. O(E log E)."""
    keys = [a.get("key") for _, _, a in edges]
    if not all(isinstance(k, int) and not isinstance(k, bool) or isinstance(k, str) and k.isdigit() for k in keys):
        return edges
    ints = [int(k) for k in keys]
    if len(set(ints)) != len(ints):
        return edges
    return [e for _, e in sorted(zip(ints, edges), key=lambda t: t[0])]


def _quantity(attrs: dict, key: str, parse, path: str, where: str) -> int | None:
    """Attribute `key` (a number in the base unit or a string with a unit) or `{key}_ps`/`{key}_bps` (an integer
    in ps or bit/s) parsed, or None if neither is there; a rate below 1 Mb/s warns (FabricsimWarning naming
    the file and the edge). O(1)."""
    exact = f"{key}_bps" if parse is parse_rate_bps else f"{key}_ps"
    if exact in attrs:
        v = attrs[exact]
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ScenarioError(path, where, f"{exact} must be an integer ≥ 0, got {v!r}")
        return v
    if key not in attrs:
        return None
    value = attrs[key]
    try:
        if parse is not parse_rate_bps:
            return parse(value)
        with plausibility("raise"):
            return check_fabric_rate(value, parse, None)
    except ValueError as e:
        msg = str(e)
        if PLAUSIBILITY_MARK not in msg:
            raise ScenarioError(path, where, f"{key}: {msg}") from None
        written = json.dumps(value) if isinstance(value, str) else repr(value)
        warnings.warn(f"{path}: {where}: {key} = {written} {msg.split(PLAUSIBILITY_MARK, 1)[1]}", FabricsimWarning,
                      stacklevel=2)
        return parse(value)


Raw = tuple[list[tuple[Any, dict]], list[tuple[Any, Any, dict]]]
"""A graph file's nodes (id, attributes) and edges (source id, target id, attributes), in file order."""


def read_node_link(path: Path) -> Raw:
    """Nodes and edges of a networkx node-link JSON document ({"nodes": [{"id": ..., attrs}], "edges" or
    "links": [{"source": ..., "target": ..., attrs}]}); raises ScenarioError naming the file and the entry.
    O(file size)."""
    p = str(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(p, "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(p, f"line {e.lineno}", f"JSON syntax error: {e.msg} (column {e.colno})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise ScenarioError(p, "", "not a node-link document: expected an object with a \"nodes\" list")
    key = "edges" if "edges" in doc else "links"
    if not isinstance(doc.get(key, []), list):
        raise ScenarioError(p, key, "expected a list of edges")
    nodes = []
    for i, n in enumerate(doc["nodes"]):
        if not isinstance(n, dict) or "id" not in n or not isinstance(n["id"], (str, int)) or isinstance(n["id"], bool):
            raise ScenarioError(p, f"nodes[{i}]", "a node is an object with an \"id\" (a string or an integer)")
        nodes.append((n["id"], {k: v for k, v in n.items() if k != "id"}))
    edges = []
    for i, e in enumerate(doc.get(key, [])):
        if not isinstance(e, dict) or "source" not in e or "target" not in e:
            raise ScenarioError(p, f"{key}[{i}]", "an edge is an object with a \"source\" and a \"target\"")
        edges.append((e["source"], e["target"], {k: v for k, v in e.items() if k not in ("source", "target")}))
    return nodes, edges


def read_graphml(path: Path) -> Raw:
    """Nodes and edges of a flat GraphML document, attributes typed by their <key> declarations (defaults
    included), an edge's `id` as its `key`; an edge's endpoints are checked against the declared <node> ids by the builder (networkx's
    reader would create missing nodes silently). Raises ScenarioError naming the file. O(file size)."""
    import xml.etree.ElementTree as ET  # here, not at import: only GraphML files need it

    p = str(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        line, col = e.position
        raise ScenarioError(p, f"line {line}", f"GraphML syntax error (column {col + 1})") from None
    except OSError as e:
        raise ScenarioError(p, "", f"cannot read: {e.strerror or e}") from None

    def tag(el) -> str:
        return el.tag.rsplit("}", 1)[-1]

    keys: dict[str, tuple[str, str, Any]] = {}  # key id -> (domain, attribute name, type)
    defaults: dict[str, dict[str, Any]] = {"node": {}, "edge": {}}
    for k in root:
        if tag(k) != "key":
            continue
        kid, name, typ = k.get("id"), k.get("attr.name", k.get("id")), k.get("attr.type", "string")
        keys[kid] = (k.get("for", "all"), name, typ)
        for d in k:
            if tag(d) == "default":
                for dom in ("node", "edge"):
                    if k.get("for", "all") in (dom, "all"):
                        defaults[dom][name] = _typed(d.text or "", typ, p, f"key {kid!r}")
    graphs = [g for g in root if tag(g) == "graph"]
    if not graphs:
        raise ScenarioError(p, "", "not a GraphML document: no <graph> element")

    def data(el, dom: str, where: str) -> dict[str, Any]:
        out = dict(defaults[dom])
        for d in el:
            if tag(d) == "data":
                if d.get("key") not in keys:
                    raise ScenarioError(p, where, f"data for the undeclared key {d.get('key')!r}")
                _, name, typ = keys[d.get("key")]
                out[name] = _typed(d.text or "", typ, p, where)
        return out

    nodes, edges = [], []
    for el in graphs[0]:
        if tag(el) == "node":
            nid = el.get("id")
            nodes.append((nid, data(el, "node", f"node {nid!r}")))
        elif tag(el) == "edge":
            u, v = el.get("source"), el.get("target")
            attrs = data(el, "edge", f"edge ({u!r}, {v!r})")
            if el.get("id") is not None:
                attrs.setdefault("key", el.get("id"))
            edges.append((u, v, attrs))
    return nodes, edges


def _typed(text: str, typ: str, path: str, where: str) -> Any:
    """A GraphML <data> or <default> text as its declared type (int, long, float, double, boolean, string)."""
    text = text.strip()
    if typ == "boolean":
        return text.lower() in ("true", "1")
    try:
        return _GRAPHML_TYPES.get(typ, str)(text)
    except ValueError:
        raise ScenarioError(path, where, f"cannot read {text!r} as {typ}") from None
