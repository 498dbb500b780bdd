"""Local sweep workers die with the sweep: nothing of a SIGKILLed sweep lives on (and holds its stdout open).

A forkserver pool has two generations below the sweep process: the forkserver (its child) and the workers (the
forkserver's children, which also hold the pipe whose end tells the forkserver to quit, so neither goes away by
itself). Two mechanisms, both set up here:

- Linux: the kernel's parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGKILL)`, through ctypes). The forkserver
  sets it when it imports this module as its preload (`FORKSERVER_PRELOAD`: it dies with the sweep's thread that
  started it) and every worker sets it in its initializer (it dies with the forkserver). It acts even while a
  worker's engine holds the GIL.
- Everywhere: a watchdog thread in every worker polls the sweep's process every `POLL_S` and ends the worker once
  it is gone (or a zombie), for systems without prctl and for a forkserver started before this module was its
  preload.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

POLL_S = 0.25
"""How often a worker's watchdog looks at the sweep's process (seconds)."""
PR_SET_PDEATHSIG = 1
"""prctl option: the signal this process gets when its parent (thread) dies (linux/prctl.h)."""
FORKSERVER_PRELOAD = ["__main__", __name__]
"""The forkserver's preload list: multiprocessing's default (`__main__`) and this module."""


def die_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only); False where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a SIGKILLed process its parent has not reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # no /proc: os.kill's answer stands


def _watch(pid: int) -> None:
    """Poll the sweep's process; once it is gone, end this worker at once (no clean-up: the sweep is dead)."""
    import time

    while alive(pid):
        time.sleep(POLL_S)
    os._exit(1)


def worker_init(sweep_pid: int) -> None:
    """A pool worker's initializer: die with the forkserver (Linux) and watch the sweep's process `sweep_pid`."""
    parent = os.getppid()
    die_with_parent()
    if not alive(parent) or not alive(sweep_pid):  # either died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(sweep_pid,), name="fabricsim-sweep-lifeline", daemon=True).start()


def _in_forkserver_main() -> bool:
    """Whether this import runs inside multiprocessing's forkserver `main` (its preload), found on the stack."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "main" and f.f_globals.get("__name__") == "multiprocessing.forkserver":
            return True
        f = f.f_back
    return False


if _in_forkserver_main():  # the forkserver: die with the sweep that started it; any other import does nothing
    die_with_parent()
