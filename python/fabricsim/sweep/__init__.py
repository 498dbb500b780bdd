"""Sweeps: grids x seeds expanded to hashed runs, executed on local processes or Dask, stored crash-safely."""

from .executors import CONNECT_TIMEOUT_S, SchedulerUnreachable
from .runner import SweepFailed, SweepResult, intify, run_sweep
from .spec import RunTask, SweepSpec, expand, load_sweep
from .store import Store, StoreError

__all__ = ["SweepSpec", "load_sweep", "expand", "RunTask", "run_sweep", "SweepResult", "SweepFailed", "Store",
           "StoreError", "intify", "SchedulerUnreachable", "CONNECT_TIMEOUT_S"]
