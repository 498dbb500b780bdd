"""Tasks for testing executors and measuring their overhead (importable on every worker): trivial, slow, crashing."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def echo(payload: dict, seed: int) -> dict:
    """Return the payload's `x` and the seed: the cheapest possible run."""
    return {"x": payload.get("x"), "seed_seen": seed}


def sleepy(payload: dict, seed: int) -> dict:
    """Sleep `payload["sleep_s"]` seconds, then echo: a run slow enough to be interrupted."""
    time.sleep(float(payload.get("sleep_s", 0.1)))
    return echo(payload, seed)


def crash_once(payload: dict, seed: int) -> dict:
    """Kill this worker process (SIGKILL) the first time any run of the sweep gets here; afterwards echo.
    The marker file `payload["marker"]` records that the crash happened."""
    marker = Path(payload["marker"])
    if seed == payload.get("crash_seed", 1) and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return echo(payload, seed)


def fail_always(payload: dict, seed: int) -> dict:
    """Raise: a run that never succeeds (exercises retries)."""
    raise RuntimeError(f"deliberate failure (seed {seed})")
