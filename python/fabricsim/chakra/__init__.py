"""Chakra execution traces (MLCommons ET): read per-rank files as columns, lower them onto a fabric as one workload, summarize.

`load(PREFIX)` reads `PREFIX.{rank}.et` (gzip or not) through the engine's reader; `lower(...)` turns the
ranks' nodes into one `fabricsim.Workload` (compute steps, messages, engine collectives, barriers); `info`
counts nodes and bytes and measures the critical path; `rescale(...)` grows or shrinks its data-parallel degree
(`synth.write` writes the result). See docs/guide/run-a-trace.md.
"""

from .lower import DEVICES, Device, Lowered, lower
from .rescale import Layout, Rescaled, rescale
from .trace import NODE_TYPES, COMM_TYPES, RankTrace, info, load

__all__ = ["load", "info", "lower", "rescale", "Rescaled", "Layout", "Lowered", "RankTrace", "Device", "DEVICES", "NODE_TYPES", "COMM_TYPES"]
