"""Tasks for testing executors and measuring their overhead (importable on every worker): trivial, slow, gated,
crashing."""

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


def gated(payload: dict, seed: int) -> dict:
    """Echo at once for seeds ≤ `payload["open_seeds"]`; a later seed first waits until the file `payload["gate"]`
    exists (polling, at most `payload["wait_s"]` seconds, default 120, then raises). Until the gate opens, a sweep
    of more seeds than that can store exactly the open ones and no more: it is provably mid-sweep."""
    if seed > int(payload["open_seeds"]):
        gate = Path(payload["gate"])
        deadline = time.monotonic() + float(payload.get("wait_s", 120))
        while not gate.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"gate {gate} still closed after {payload.get('wait_s', 120)} s (seed {seed})")
            time.sleep(0.02)
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


def hold_gil(payload: dict, seed: int) -> dict:
    """Hold the GIL for a long time inside one C call, as the engine does: a regular expression with catastrophic
    backtracking (2^n steps for n = `payload["n"]`, default 40: hours). While it runs, no Python thread of the
    worker (a watchdog) can run; only a signal from the kernel can stop it."""
    import re

    n = int(payload.get("n", 40))
    re.match(r"(a+)+$", "a" * n + "b")
    return echo(payload, seed)
