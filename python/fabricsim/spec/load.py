"""Loading scenarios: TOML/JSON documents, validation into a Scenario, and one-line errors that name the field.

A scenario is checked completely when it is loaded: unknown keys, wrong types, impossible values and dangling
names are errors that name the field (`messages[2].after[0]`). Validating a parsed document is
`scenario.scenario_from_dict` (re-exported here); the error formatting is `base`'s, with the topology union's
tags (the registry's KINDS) dropped.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from pydantic import ValidationError

from ..errors import ScenarioError
from ..topology.registry import KINDS
from . import base
from .base import current_source
from .scenario import Scenario, scenario_from_dict

__all__ = ["current_source", "first_error", "format_loc", "load_scenario", "read_document", "scenario_from_dict"]


def format_loc(loc: tuple) -> str:
    """Pydantic error location -> dotted path with [i] indices (the topology union's tags, `KINDS`, dropped)."""
    return base.format_loc(loc, KINDS)


def first_error(e: ValidationError) -> tuple[str, str]:
    """(field path, message) of the first error of a scenario's `e` (the topology union's tags dropped)."""
    return base.first_error(e, KINDS)


ASTRA_SUFFIXES = (".yml", ".yaml")
"""Files read as ASTRA-sim network configurations (`astra_fabric`); a `.json` file is one when `is_astra` says so."""


def is_astra(doc: object) -> bool:
    """Whether a JSON document is an ASTRA-sim configuration rather than a scenario: no [topology] table, and one of
    ASTRA-sim's network keys (topology as a list, npus_count, bandwidth, latency) or a hyphenated key (its older
    network format's and its system configuration's; a scenario's keys have none)."""
    return isinstance(doc, dict) and not isinstance(doc.get("topology"), dict) and (
        bool({"topology", "npus_count", "bandwidth", "latency"} & set(doc)) or any("-" in str(k) for k in doc))


def astra_fabric(text: str, source: str, fmt: str = "yaml") -> dict:
    """The fabric document of an ASTRA-sim network configuration (the engine's reader, `scenario/astra.rs`): a
    `multi_dim` [topology] (one dimension per entry of its topology, npus_count, bandwidth and latency lists)
    with unlimited queues. Raises ScenarioError naming `source` and the configuration's key (`npus_count[1]`)."""
    from .. import _core

    verdict, said = _core.astra_network(text, fmt)
    if verdict == "ok":
        return json.loads(said)
    field, sep, reason = said.partition(": ")
    if sep and (" " not in field or re.fullmatch(r"line \d+", field)):
        raise ScenarioError(source, field, reason)
    raise ScenarioError(source, "", said)


def read_document(path: str | Path) -> dict:
    """Parse a TOML (or .json) file; raises ScenarioError naming the file (and line) on any failure. An ASTRA-sim
    network configuration (a .yml or .yaml file, or a .json one with its keys) is read as its fabric document
    (`astra_fabric`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(p), "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    if p.suffix.lower() in ASTRA_SUFFIXES:
        return astra_fabric(text, str(p))
    try:
        if p.suffix == ".json":
            doc = json.loads(text)
            return astra_fabric(text, str(p), "json") if is_astra(doc) else doc
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(e))
        if m:
            raise ScenarioError(str(p), f"line {m[2]}", f"TOML syntax error: {m[1]} (column {m[3]})") from None
        raise ScenarioError(str(p), "", f"TOML syntax error: {e}") from None
    except json.JSONDecodeError as e:
        raise ScenarioError(str(p), f"line {e.lineno}", f"JSON syntax error: {e.msg} (column {e.colno})") from None


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario from a TOML (or .json) file; raises ScenarioError naming file and field (an
    ArgumentError when `path` is not a path)."""
    from ..checks import path as a_path

    path = a_path(path, "path")
    return scenario_from_dict(read_document(path), str(path))
