"""run_sweep: expand, skip what the store has, execute the rest with progress, commit each run as it finishes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .executors import make_executor
from .spec import RunTask, SweepSpec, expand
from .store import Store


@dataclass
class SweepResult:
    """What a sweep did. `frame()` gives the stored ok runs of exactly this sweep's tasks (this spec, this code),
    whenever they ran: a run is stored once, under the first sweep that ran it, and runs of older code are left out."""

    name: str
    store_dir: Path
    total: int
    skipped: int
    ran: int
    invalid: list[tuple[RunTask, str]] = field(default_factory=list)
    failed: list[tuple[RunTask, str]] = field(default_factory=list)
    wall_s: float = 0.0
    executor: str = ""
    hashes: list[str] = field(default_factory=list)

    def frame(self):
        import pandas as pd

        want = set(self.hashes)
        with Store(self.store_dir) as s:
            rows = [dict(r, sweep=self.name) for r in s.rows(None) if r["hash"] in want]
        return pd.DataFrame(rows)

    def summary(self) -> dict[str, Any]:
        return {
            "sweep": self.name, "store": str(self.store_dir), "executor": self.executor, "total": self.total,
            "skipped": self.skipped, "ran": self.ran, "invalid": len(self.invalid), "failed": len(self.failed),
            "wall_s": round(self.wall_s, 3),
            "errors": sorted({e for _, e in self.invalid + self.failed})[:20],
        }


def _progress(quiet: bool, total: int, label: str):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    prog = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("failures {task.fields[failures]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=Console(stderr=True), disable=quiet, transient=False,
    )
    return prog


def run_sweep(spec: SweepSpec, base: dict[str, Any], store_dir: str | Path, *, workers: int | None = None,
              scheduler=None, seeds: int | None = None, retries: int = 2, quiet: bool = False,
              source: str = "<sweep>") -> SweepResult:
    """Run every (point, seed) of `spec` not already in the store at `store_dir`.

    Each finished run is committed at once, so a killed sweep resumes where it stopped. Invalid points are
    recorded once with their error and never retried; other failures are retried `retries` times and then
    reported (not stored, so the next invocation tries them again)."""
    t0 = time.perf_counter()
    tasks = expand(spec, base, seeds=seeds, source=source)
    unique: dict[str, RunTask] = {}
    for t in tasks:
        unique.setdefault(t.hash, t)
    store_dir = Path(store_dir)
    executor = make_executor(workers, scheduler)
    with Store(store_dir) as store:
        have = store.hashes()
        todo = [t for h, t in unique.items() if h not in have]
        res = SweepResult(spec.name, store_dir, len(unique), len(unique) - len(todo), 0, executor=executor.name,
                          hashes=list(unique))
        with _progress(quiet, len(todo), spec.name) as prog:
            bar = prog.add_task(spec.name, total=len(todo), failures=0)
            for task, out in executor.run(todo, retries):
                if out["status"] in ("ok", "invalid"):
                    store.put(task, out)
                    res.ran += 1
                    if out["status"] == "invalid":
                        res.invalid.append((task, out["error"]))
                else:
                    res.failed.append((task, out["error"]))
                prog.update(bar, advance=1, failures=len(res.invalid) + len(res.failed))
    res.wall_s = time.perf_counter() - t0
    return res
