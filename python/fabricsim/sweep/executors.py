"""Executors: run tasks on local worker processes (default) or on a Dask distributed cluster.

Both yield (task, outcome) as runs finish, in completion order. An outcome is the dict `execute` returns, or
{"status": "failed", "error"} once a task has failed `retries + 1` times. A worker process that dies is
replaced and its task retried (local: the pool is rebuilt; Dask: the scheduler reschedules it).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from .spec import RunTask
from .tasks import execute

Outcome = dict


def _one_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:500]


class InlineExecutor:
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


class LocalExecutor:
    """A pool of `workers` local processes (default: one per core), started with forkserver."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1

    def _pool(self) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context("forkserver")
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)

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
                    for fut, t in running.items():
                        attempts[t.hash] += 1
                        queue.append(t)
                    running.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = self._pool()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Submit every task to an existing Dask distributed scheduler (`tcp://HOST:PORT`) or a Client."""

    name = "dask"

    def __init__(self, scheduler):
        self.scheduler = scheduler

    def run(self, tasks: list[RunTask], retries: int) -> Iterator[tuple[RunTask, Outcome]]:
        from distributed import Client, as_completed

        own = not hasattr(self.scheduler, "submit")
        client = Client(self.scheduler, set_as_default=False) if own else self.scheduler
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


def make_executor(workers: int | None = None, scheduler=None):
    """Dask if a scheduler is given, in-process for workers == 0, else a local process pool."""
    if scheduler is not None:
        return DaskExecutor(scheduler)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers)
