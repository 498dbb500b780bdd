"""Type stubs of the private native module fabricsim._core (built from crates/fabricsim-py).

Errors are the package's own exceptions (fabricsim.errors): SpecError (with `field` and `reason`),
ConservationError and SimulationError, all deriving from FabricsimError; they are re-exported here."""

from typing import Any

import numpy as np

from .errors import ConservationError as ConservationError
from .errors import SimulationError as SimulationError
from .errors import SpecError as SpecError

MISSING: int
"""A missing time in a uint64 record column (2**64 - 1)."""

def run(header_json: str, columns: dict[str, Any] | None = None,
        fidelity: str = "packet") -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Compile and simulate a scenario with the packet ("packet") or flow-level ("flow") engine; the GIL is
    released.

    `header_json` is the wire RunSpec header (network, routing, sources, tcp, collectives, measure; optional
    `messages`/`barriers` rows, lowered into the same columns). `columns` is the bulk workload
    (`Workload.columns()`): uint32 `src`, `src_nic`, `dst`, `dst_nic`, `packet`, `header`, `path`; uint64
    `size`, `start_ps`, `delay_ps`; int `n_barriers`; uint32 `compute_host`, uint64 `compute_ps`; uint32
    `streams_host`, `streams_count`; uint32 CSR `pred_start`/`pred` over messages, barriers, compute steps
    (references tagged in the top two bits: 0 delivered, 1 sent, 2 barrier, 3 compute); uint32 CSR
    `path_start`/`path_nodes`; `names` (list of str) with uint32 `msg_name`, `barrier_name`, `compute_name`.

    Returns (scalars, columns): scalars hold totals and name lists; columns are numpy arrays keyed
    `flows.*`, `queues.*`, `samples.*`, `compute.*`, `hosts.*` (missing times = MISSING)."""

def validate(header_json: str, columns: dict[str, Any] | None = None, fidelity: str = "packet") -> int:
    """Compile without simulating (every check of `run`); returns the number of messages after collectives
    are expanded."""

def expand_collective(spec_json: str, msgs: int, barriers: int, compute: int) -> dict[str, Any]:
    """Columns of one collective (a CollectiveSpec as JSON) appended to a workload with the given counts;
    dependency references are absolute."""

def maxmin(capacity: list[float], uses: list[list[tuple[int, float]]], caps: list[float | None]) -> list[float]:
    """Max-min fair rates of flows over resources (the flow engine's solver)."""

def version() -> str:
    """Version of the native engine."""
