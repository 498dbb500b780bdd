"""Executors: run tasks on local worker processes (default) or on a Dask distributed cluster.

Both yield (task, outcome) as runs finish, in completion order. An outcome is the dict `execute` returns, or
{"status": "failed", "error"} once a task has failed `retries + 1` times. A worker process that dies is
replaced and its task retried (local: the pool is rebuilt; Dask: the scheduler reschedules it). `connect()`
reaches the executor's workers before any task is submitted (a no-op but for Dask, whose scheduler may be
unreachable: SchedulerUnreachable).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from ..errors import FabricsimError
from .spec import RunTask
from .tasks import execute

Outcome = dict

CONNECT_TIMEOUT_S = 5.0
"""How long connecting to a Dask scheduler may take before the sweep gives up (distributed's default is 30 s);
a scheduler that answers at all answers in milliseconds."""


class SchedulerUnreachable(FabricsimError, ConnectionError):
    """The Dask scheduler at `address` could not be reached (refused, no answer within the connect timeout,
    or a malformed address); nothing was run. The message is one line naming the address and the cause."""

    def __init__(self, address: str, reason: str):
        self.address = address
        self.reason = reason
        super().__init__(f"cannot reach the Dask scheduler at {address}: {reason}")


def _one_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:500]


def _root_cause(e: BaseException) -> BaseException:
    """The innermost exception with a message in `e`'s `raise ... from` chain (`e` itself if none has one; an
    attempt cancelled by a timeout has none)."""
    found, seen = e, {id(e)}
    while e.__cause__ is not None and id(e.__cause__) not in seen:
        e = e.__cause__
        seen.add(id(e))
        if str(e):
            found = e
    return found


def _check_address(address: str) -> None:
    """Raise ValueError for a scheduler address no connection can be made to: an unknown scheme or no port.
    (Checked before a Client exists: a Client that fails on a malformed address blocks for seconds when it is
    garbage-collected and prints a traceback.)"""
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address

    scheme, loc = parse_address(address)
    backend = registry.get_backend(scheme)
    try:
        backend.get_address_host_port(loc)
    except NotImplementedError:  # inproc:// and other addresses without a host and port
        pass


class Executor:
    """What every executor shares: `connect()` (nothing to do for local processes)."""

    name = ""

    def connect(self) -> None:
        """Reach the workers before the first task; raises if they cannot be reached."""


class InlineExecutor(Executor):
    """Run tasks one by one in this process (`--workers 0`): for debugging and tiny sweeps."""

    name = "inline"

    def run(self, tasks: list[RunTask], retries: int) -> Iterator[tuple[RunTask, Outcome]]:
        for t in tasks:
            for attempt in range(retries + 1):
                try:
                    yield t, execute(t)
                    break
                except Exception as e:  # noqa: BLE001 - any failure of a run is retried, then reported
                    if attempt == retries:
                        yield t, {"status": "failed", "error": _one_line(e)}


class LocalExecutor(Executor):
    """A pool of `workers` local processes (default: one per core), started with forkserver. The workers and the
    forkserver die with this process, even by SIGKILL (`lifeline`)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1

    def _pool(self) -> ProcessPoolExecutor:
        from . import lifeline

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(lifeline.FORKSERVER_PRELOAD)  # takes effect when the forkserver starts
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=lifeline.worker_init,
                                   initargs=(os.getpid(),))

    def run(self, tasks: list[RunTask], retries: int) -> Iterator[tuple[RunTask, Outcome]]:
        attempts = {t.hash: 0 for t in tasks}
        queue = list(reversed(tasks))
        window = self.workers * 4  # bounded number of submitted tasks keeps memory flat on huge sweeps
        pool = self._pool()
        running: dict = {}
        try:
            while queue or running:
                while queue and len(running) < window:
                    t = queue.pop()
                    running[pool.submit(execute, t)] = t
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    t = running.pop(fut)
                    try:
                        yield t, fut.result()
                        continue
                    except BrokenProcessPool as e:
                        broken, err = True, e
                    except Exception as e:  # noqa: BLE001
                        err = e
                    attempts[t.hash] += 1
                    if attempts[t.hash] > retries:
                        yield t, {"status": "failed", "error": _one_line(err)}
                    else:
                        queue.append(t)
                if broken:
                    # A worker died: every running future is lost. Requeue them and start a fresh pool.
                    for t in running.values():
                        attempts[t.hash] += 1
                        queue.append(t)
                    running.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = self._pool()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """Submit every task to an existing Dask distributed scheduler (`tcp://HOST:PORT`) or a Client. Connecting
    to an address gives up after `connect_timeout_s` (SchedulerUnreachable)."""

    name = "dask"

    def __init__(self, scheduler, connect_timeout_s: float = CONNECT_TIMEOUT_S):
        self.scheduler = scheduler
        self.connect_timeout_s = connect_timeout_s
        self._client = None

    def connect(self):
        """The Client: the one given, else a new one connected to the address (once). Raises
        SchedulerUnreachable if the address is malformed or no scheduler answers within the timeout."""
        if self._client is not None:
            return self._client
        if hasattr(self.scheduler, "submit"):
            self._client = self.scheduler
            return self._client
        from distributed import Client

        try:
            if isinstance(self.scheduler, str):
                _check_address(self.scheduler)
            self._client = Client(self.scheduler, set_as_default=False, timeout=self.connect_timeout_s)
        except OSError as e:  # refused, unresolvable or silent: distributed retries until its timeout
            cause = _root_cause(e)
            detail = f" ({_one_line(cause)})" if cause is not e else ""
            raise SchedulerUnreachable(str(self.scheduler),
                                       f"no connection within {self.connect_timeout_s:g} s{detail}") from None
        except (ValueError, TypeError) as e:  # a malformed address: no scheme, no port, unknown scheme
            raise SchedulerUnreachable(str(self.scheduler), str(e)) from None
        return self._client

    def run(self, tasks: list[RunTask], retries: int) -> Iterator[tuple[RunTask, Outcome]]:
        if not tasks:
            return  # nothing to run: no cluster needed (a re-run of a stored sweep works without one)
        from distributed import as_completed

        own = not hasattr(self.scheduler, "submit")
        client = self.connect()
        try:
            futures = {client.submit(execute, t, key=f"fabricsim-run-{t.hash}", retries=retries, pure=False): t
                       for t in tasks}
            for fut in as_completed(futures, loop=client.loop):
                t = futures[fut]
                try:
                    yield t, fut.result()
                except Exception as e:  # noqa: BLE001 - retries exhausted, or a worker kept dying
                    yield t, {"status": "failed", "error": _one_line(e)}
        finally:
            if own:
                client.close()
                self._client = None


def make_executor(workers: int | None = None, scheduler=None,
                  connect_timeout_s: float = CONNECT_TIMEOUT_S) -> Executor:
    """Dask if a scheduler is given, in-process for workers == 0, else a local process pool."""
    if scheduler is not None:
        return DaskExecutor(scheduler, connect_timeout_s)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers)
