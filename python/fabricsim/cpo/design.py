"""The two-level (leaf-spine) network design calculator of study 003: switch counts, bisection, endpoints, optics.

A design is built from switch I/O bandwidth and port speed (so the radix), the leaf oversubscription, the servers
per first-level group, dual-homing and the number of groups (or of endpoints):

- a first-level *group* is `servers_per_group` servers under `homes` leaves (2 when dual-homed: every server
  has one endpoint on each leaf of its group's pair); a leaf has `servers_per_group` down ports and
  ⌈down / oversubscription⌉ up ports, which must fit its radix;
- spines = ⌈all leaf up ports / spine radix⌉; with up ports per leaf = spines every leaf reaches every spine
  once, and any two servers are at most 3 switch hops (4 links) apart, one switch hop within a group;
- bisection bandwidth = half of all leaf-to-spine capacity (the cut between two halves of the leaves);
- optics: the links that are optical (`optics="fabric"`: leaf–spine only, e.g. AOCs with copper to the
  servers; `"all"`: every link, as with co-packaged optics) have a transceiver at each end; power is
  pJ/bit × port rate per transceiver, cost is `cost_per_port` per transceiver.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ScenarioError


class DesignSpec(BaseModel):
    """A two-level network design. Units: Tb/s for switch I/O, Gb/s per port, pJ/bit, currency per port."""

    model_config = ConfigDict(extra="forbid")

    name: str = "design"
    spine_tbps: float = Field(gt=0, description="I/O bandwidth of a spine switch, Tb/s")
    leaf_tbps: float = Field(gt=0, description="I/O bandwidth of a leaf (first-level) switch, Tb/s")
    port_gbps: float = Field(gt=0, description="Speed of every port and link, Gb/s")
    oversubscription: float = Field(3.0, ge=1, description="Leaf down:up capacity ratio")
    servers_per_group: int | None = Field(None, ge=1, description="Servers per first-level group; default: the "
                                          "most a leaf takes at this oversubscription")
    dual_homed: bool = True
    groups: int | None = Field(None, ge=1)
    endpoints: int | None = Field(None, ge=1, description="Alternative to groups: the fewest groups reaching this")
    optics: Literal["fabric", "all"] = "fabric"
    pj_per_bit: float | None = Field(None, ge=0, description="Optics energy per bit, per transceiver")
    cost_per_port: float | None = Field(None, ge=0, description="Cost of one optical transceiver (port)")

    @model_validator(mode="after")
    def _check(self) -> "DesignSpec":
        if (self.groups is None) == (self.endpoints is None):
            raise ValueError("give exactly one of groups and endpoints")
        for what, tbps in (("leaf_tbps", self.leaf_tbps), ("spine_tbps", self.spine_tbps)):
            radix = tbps * 1000 / self.port_gbps
            if abs(radix - round(radix)) > 1e-9 or round(radix) < 2:
                raise ValueError(f"{what}: {tbps:g} Tb/s is not a whole number (≥ 2) of {self.port_gbps:g} Gb/s ports")
        return self


PRESETS: dict[str, dict[str, Any]] = {
    "baseline": {"name": "baseline", "spine_tbps": 25.6, "leaf_tbps": 6.4, "port_gbps": 100, "oversubscription": 3,
                 "servers_per_group": 48, "dual_homed": True, "groups": 128, "optics": "fabric"},
    "motion": {"name": "motion", "spine_tbps": 51.2, "leaf_tbps": 51.2, "port_gbps": 400, "oversubscription": 3,
               "servers_per_group": 96, "dual_homed": True, "groups": 64, "optics": "all", "pj_per_bit": 2.0},
}
"""Study 003 §2: the baseline (25.6 Tb/s spines, 6.4 Tb/s leaves, 100G, 3:1, 48 servers per leaf pair, 128
groups; AOCs between the layers, DAC to the servers) and the MOTION network (51.2 Tb/s switches of 128 × 400G,
3:1, 96 servers per leaf pair, 64 groups, co-packaged optics everywhere; < 2 pJ/bit, Table 1, 2nd gen.)."""


class Design:
    """The network a DesignSpec describes; every figure the study reports, as attributes and `to_json()`."""

    def __init__(self, spec: DesignSpec):
        self.spec = s = spec
        self.leaf_radix = round(s.leaf_tbps * 1000 / s.port_gbps)
        self.spine_radix = round(s.spine_tbps * 1000 / s.port_gbps)
        self.homes = 2 if s.dual_homed else 1
        o = s.oversubscription
        spg = s.servers_per_group if s.servers_per_group is not None else math.floor(self.leaf_radix * o / (o + 1))
        self.servers_per_group = spg
        self.leaf_down = spg
        self.leaf_up = math.ceil(spg / o - 1e-9)
        if self.leaf_down + self.leaf_up > self.leaf_radix:
            raise ValueError(f"servers_per_group: {spg} server ports + {self.leaf_up} uplinks (oversubscription "
                             f"{o:g}) exceed a leaf's {self.leaf_radix} ports")
        if s.groups is not None:
            self.groups = s.groups
        else:
            self.groups = math.ceil(s.endpoints / (spg * self.homes))
        self.leaf_switches = self.groups * self.homes
        self.uplinks = self.leaf_switches * self.leaf_up
        self.spine_switches = math.ceil(self.uplinks / self.spine_radix)
        self.switches = self.leaf_switches + self.spine_switches
        self.servers = self.groups * spg
        self.endpoints = self.servers * self.homes
        self.bisection_tbps = self.uplinks * s.port_gbps / 2 / 1000
        self.server_gbps = s.port_gbps * self.homes
        if self.leaf_switches > self.spine_radix or self.leaf_up < self.spine_switches:
            what = "groups" if s.groups is not None else "endpoints"
            most = self.spine_radix // self.homes
            raise ValueError(f"{what}: {self.groups} groups need {self.leaf_switches} leaves with {self.leaf_up} uplinks "
                             f"each, but a two-level network of {self.spine_radix}-port spines links every leaf to "
                             f"every spine for at most {self.spine_radix} leaves: at most {most} groups, "
                             f"{most * spg * self.homes:,} endpoints")
        self.max_switch_hops = 3
        server_links = self.servers * self.homes
        self.optical_ports = 2 * self.uplinks + (2 * server_links if s.optics == "all" else 0)

    def to_json(self) -> dict[str, Any]:
        s = self.spec
        d: dict[str, Any] = {
            "name": s.name, "switches": self.switches, "leaf_switches": self.leaf_switches,
            "spine_switches": self.spine_switches, "bisection_tbps": self.bisection_tbps, "servers": self.servers,
            "endpoints": self.endpoints, "servers_per_group": self.servers_per_group, "groups": self.groups,
            "leaf_radix": self.leaf_radix, "spine_radix": self.spine_radix, "leaf_down_ports": self.leaf_down,
            "leaf_up_ports": self.leaf_up, "server_gbps": self.server_gbps, "max_switch_hops": self.max_switch_hops,
            "max_switch_hops_in_group": 1,
            "optical_ports": self.optical_ports, "port_gbps": s.port_gbps, "oversubscription": s.oversubscription,
            "dual_homed": s.dual_homed, "optics": s.optics,
        }
        if s.pj_per_bit is not None:
            watts = self.optical_ports * s.port_gbps * 1e9 * s.pj_per_bit * 1e-12
            d["optics_power_kw"] = watts / 1e3
            d["optics_power_w_per_bisection_tbps"] = watts / self.bisection_tbps
        if s.cost_per_port is not None:
            cost = self.optical_ports * s.cost_per_port
            d["optics_cost"] = cost
            d["optics_cost_per_bisection_tbps"] = cost / self.bisection_tbps
        return d


COMPARED = ("switches", "leaf_switches", "spine_switches", "bisection_tbps", "servers", "endpoints",
            "servers_per_group", "groups", "server_gbps", "max_switch_hops", "optical_ports", "optics_power_kw",
            "optics_cost", "optics_cost_per_bisection_tbps")


def compare(a: Design, b: Design) -> list[dict[str, Any]]:
    """Rows (quantity, a, b, b / a, change %) for every figure both designs have."""
    ja, jb = a.to_json(), b.to_json()
    rows = []
    for k in COMPARED:
        va, vb = ja.get(k), jb.get(k)
        if va is None or vb is None:
            continue
        ratio = vb / va if va else None
        rows.append({"quantity": k, a.spec.name: va, b.spec.name: vb, "ratio": ratio,
                     "change_pct": None if ratio is None else (ratio - 1) * 100})
    return rows


def load(source: str, overrides: dict[str, Any] | None = None) -> Design:
    """A design from a preset name or a JSON/TOML file, with field overrides. Raises ScenarioError naming the
    file and the field."""
    from ..checks import instance, path, text

    source = str(path(source, "source")) if not isinstance(source, str) else text(source, "source")
    instance(overrides, dict, "overrides", "a dict of field overrides", none=True)
    if source in PRESETS:
        raw, where = dict(PRESETS[source]), f"preset '{source}'"
    else:
        p = Path(source)
        try:
            text = p.read_text()
            raw = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
        except FileNotFoundError:
            raise ScenarioError("", "design", f"'{source}' is neither a preset ({', '.join(PRESETS)}) nor a file") from None
        except (OSError, ValueError) as e:
            raise ScenarioError(source, "", f"cannot read: {e}") from None
        raw.setdefault("name", p.stem)
        where = source
    if overrides:
        if "groups" in overrides:
            raw.pop("endpoints", None)
        if "endpoints" in overrides:
            raw.pop("groups", None)
        raw.update(overrides)
    try:
        return Design(DesignSpec(**raw))
    except ValidationError as e:
        err = e.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        field = ".".join(str(x) for x in err["loc"])
        if not field:
            head, sep, rest = msg.partition(": ")
            field, msg = (head, rest) if sep and " " not in head else ("design", msg)
        raise ScenarioError(where, field, msg) from None
    except ValueError as e:
        field, _, why = str(e).partition(": ")
        raise ScenarioError(where, field if why else "", why or str(e)) from None
