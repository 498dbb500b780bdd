"""Fabrics as data: the built-in fabrics and fabric files, read by one generic reader.

A fabric file is a scenario document (or an ASTRA-sim network configuration, read as its `multi_dim` fabric) whose traffic tables are ignored (`fabric_of`: its [topology], [routing],
[queue], ... make the fabric), with an optional [fabric] table that says how commands name its servers and which
placements it names:

- `description`: one line for `--help`;
- `default`: true on the one built-in fabric that commands use when no fabric is given (`default_fabric`);
- `servers`: "names" (the default: a server is a host, by name) or "numbers" (servers are 1..H in fabric order);
- `nic_order`: the order in which a server's NICs are handed to its nodes (default 0, 1, 2, ...);
- `placements`: named placements, `NAME = [[server, ...], ...]` (server ids per collective; a repeated server
  holds several nodes), which `--placement NAME`, a trace's `preset:NAME` and the placement advisor use;
- `nvls`: true when a server's NVSwitch can reduce (NVLink SHARP: NVSwitch 3, H100 and later), for `fabricsim
  nccl-tests` (default false);
- `nics`: the NICs a server really has when its [topology] rails stand for them (4 NICs of 100 Gb/s shared by 8
  GPUs: 8 rails of 50 Gb/s), for `fabricsim nccl-tests` (default: one per rail).

The built-in fabrics are such files, shipped in `fabricsim/_data/fabrics/NAME.toml` (`BUILTIN_DIR`); `--fabric NAME`
reads one by name. The code here knows no fabric by name: whatever a study calibrated (a buffer size fitted to a
paper's table, its placements) is written, and labelled, in the data file.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .placement import placement_groups

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "_data" / "fabrics"
"""The built-in fabrics, one NAME.toml each."""

FABRIC_KEY = "fabric"
"""The table of a fabric file that describes the fabric for placement (not a scenario table)."""

TRAFFIC_KEYS = ("sources", "messages", "tcp", "barriers", "compute", "collectives", "streams")
"""The top-level scenario tables that describe traffic; what remains (topology, routing, queue, ports, ...) is the fabric."""

MODEL_KEYS = {"input_buffer": "topology", "spine_arbiter": "topology", "ecmp": "routing", "flowlet_gap": "routing"}
"""Model details a collective run may override on any fabric (`FabricFile.with_model`) -> the table they are in."""


def fabric_of(doc: dict) -> dict:
    """The fabric part of a scenario document: every table but the traffic ones (`TRAFFIC_KEYS`) and [fabric]."""
    return {k: v for k, v in doc.items() if k not in TRAFFIC_KEYS and k != FABRIC_KEY}


@dataclass(frozen=True)
class FabricFile:
    """A fabric read from data: `doc` (its scenario tables, traffic left out) and its [fabric] table."""

    name: str
    """The built-in fabric's name, or the file's path."""
    doc: dict[str, Any]
    description: str = ""
    numbered: bool = False
    """Servers are numbered 1..H in fabric order (`servers = "numbers"`), else named by their hosts."""
    nic_order: tuple[int, ...] = ()
    placements: dict[str, list[list[Any]]] = field(default_factory=dict)
    nvls: bool = False
    """A server's NVSwitch can reduce (NVLink SHARP), `nvls = true`."""
    nics: int | None = None
    """The NICs a server has, when its rails stand for fewer or more NICs (`nics = 4`); None: one per rail."""

    def with_model(self, **model: Any) -> FabricFile:
        """This fabric with model details replaced (`MODEL_KEYS`: input_buffer, spine_arbiter, ecmp, flowlet_gap;
        None leaves one as it is)."""
        doc = {k: dict(v) if isinstance(v, dict) else v for k, v in self.doc.items()}
        for key, value in model.items():
            if value is not None:
                doc.setdefault(MODEL_KEYS[key], {})[key] = value
        return replace(self, doc=doc)

    def placement(self, name: str) -> list[list[Any]]:
        """Server ids per collective for one of this fabric's named placements, or `pack:N` / `spread:N:R` on a
        numbered leaf-spine (`placement.placement_groups`); ValueError naming the choices if unknown."""
        racks, per_rack = self.rack_shape() if self.numbered and name not in self.placements else (0, 0)
        return placement_groups(name, racks, per_rack, presets=self.placements)

    def rack_shape(self) -> tuple[int, int]:
        """(racks, servers per rack) of a leaf-spine fabric, for `pack:N` and `spread:N:R` placements; ScenarioError
        on another topology."""
        topo = self.doc.get("topology") or {}
        if topo.get("kind") != "leaf_spine":
            raise ScenarioError(self.name, "topology", "pack:N and spread:N:R placements need a leaf_spine fabric")
        return int(topo.get("racks", 1)), int(topo["hosts_per_rack"])


@functools.cache
def _builtin_meta() -> dict[str, dict]:
    """Every built-in fabric's name -> its [fabric] table, the default fabric first, then by name (cheap: no
    validation)."""
    out = {}
    for p in sorted(BUILTIN_DIR.glob("*.toml")):
        with open(p, "rb") as f:
            out[p.stem] = tomllib.load(f).get(FABRIC_KEY, {})
    return dict(sorted(out.items(), key=lambda kv: (kv[1].get("default") is not True, kv[0])))


def builtin_fabrics() -> dict[str, str]:
    """Every built-in fabric's name -> its one-line description, the default fabric first, then by name."""
    return {name: str(meta.get("description", "")) for name, meta in _builtin_meta().items()}


def default_fabric() -> str:
    """The name of the built-in fabric whose data file says `default = true`: the fabric of `fabricsim collective`,
    `place` and `cluster` without `--fabric`, and of `fabricsim.place` and `ClusterConfig` without a fabric."""
    (name,) = [name for name, meta in _builtin_meta().items() if meta.get("default") is True]
    return name


def read_fabric(fabric: str | Path) -> FabricFile:
    """A built-in fabric by name, or a fabric file by path (a scenario TOML or JSON, or an ASTRA-sim network
    configuration, .yml/.yaml or its JSON: `spec.read_document` reads it as a `multi_dim` fabric); ScenarioError
    naming the file and field on bad input, or listing the built-in names for an unknown one."""
    from ..spec import read_document

    text = str(fabric)
    if text in builtin_fabrics():
        return fabric_from_doc(read_document(BUILTIN_DIR / f"{text}.toml"), text)
    if not (text.endswith((".toml", ".json", ".yml", ".yaml")) or "/" in text or "\\" in text or Path(text).is_file()):
        raise ScenarioError("fabric", "", f"unknown fabric {text!r}: give a built-in one "
                            f"({', '.join(builtin_fabrics())}) or a fabric file")
    return fabric_from_doc(read_document(text), text)


def fabric_from_doc(doc: dict, name: str) -> FabricFile:
    """A FabricFile from a scenario document (traffic tables ignored) and its optional [fabric] table, checked."""
    meta = doc.get(FABRIC_KEY) or {}
    if not isinstance(meta, dict):
        raise ScenarioError(name, FABRIC_KEY, "must be a table")
    unknown = sorted(set(meta) - {"description", "default", "servers", "nic_order", "placements", "nvls", "nics"})
    if unknown:
        raise ScenarioError(name, f"{FABRIC_KEY}.{unknown[0]}", "unknown key (keys: description, default, servers, "
                            "nic_order, placements, nvls, nics)")
    nvls = meta.get("nvls", False)
    if not isinstance(nvls, bool):
        raise ScenarioError(name, f"{FABRIC_KEY}.nvls", f"must be true or false, not {nvls!r}")
    nics = meta.get("nics")
    if nics is not None and (not isinstance(nics, int) or isinstance(nics, bool) or nics < 1):
        raise ScenarioError(name, f"{FABRIC_KEY}.nics", f"must be a count of NICs per server (>= 1), not {nics!r}")
    servers = meta.get("servers", "names")
    if servers not in ("names", "numbers"):
        raise ScenarioError(name, f"{FABRIC_KEY}.servers", f"must be 'names' or 'numbers', not {servers!r}")
    order = meta.get("nic_order", [])
    if (not isinstance(order, list) or not all(isinstance(k, int) and k >= 0 for k in order)
            or sorted(order) != list(range(len(order)))):
        raise ScenarioError(name, f"{FABRIC_KEY}.nic_order", f"must list the NICs 0..K-1 once each, not {order!r}")
    placements = meta.get("placements", {})
    kind = int if servers == "numbers" else str
    for pname, groups in (placements.items() if isinstance(placements, dict) else [("", None)]):
        if not (isinstance(groups, list) and groups and all(
                isinstance(g, list) and len(g) >= 2 and all(isinstance(s, kind) for s in g) for g in groups)):
            raise ScenarioError(name, f"{FABRIC_KEY}.placements{'.' + pname if pname else ''}",
                                f"must be lists (one per collective) of at least 2 server {servers}")
    return FabricFile(name, fabric_of(doc), str(meta.get("description", "")), servers == "numbers", tuple(order),
                      dict(placements), nvls, nics)
