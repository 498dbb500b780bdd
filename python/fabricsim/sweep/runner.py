"""run_sweep: expand, skip what the store has, execute the rest with progress, commit each run as it finishes."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FabricsimError
from .executors import make_executor
from .spec import RunTask, SweepSpec, expand
from .store import MEASURED, Store

STORED = (*MEASURED, "invalid")
"""Run outcomes stored (deterministic, never run again); a "failed" run is not stored."""

GUARD_HINT = ('a script that calls run_sweep with local workers must run it under `if __name__ == "__main__":` '
              "(workers start by importing the script)")


class SweepFailed(FabricsimError):
    """Every run of a sweep failed or was invalid: no run has metrics to summarize. `result` is the SweepResult;
    the message names how many runs failed and the first one's reason."""

    def __init__(self, result: "SweepResult"):
        self.result = result
        bad = result.invalid + result.failed
        reason = bad[0][1] if bad else "no run finished"
        what = "invalid" if result.invalid and not result.failed else "failed"
        msg = f"sweep '{result.name}': all {result.total} runs {what}; the first: {reason}"
        if result.failed and all("BrokenProcessPool" in e for _, e in result.failed) and result.executor == "local":
            msg += f" ({GUARD_HINT})"
        super().__init__(msg)


@dataclass
class SweepResult:
    """What a sweep did. `frame()` gives the stored runs with metrics (ok and incomplete, told apart by `status`)
    of exactly this sweep's tasks (this spec, this code), whenever they ran: a run is stored once, under the first
    sweep that ran it, and runs of older code are left out.

    `ok`, `incomplete` and `invalid` describe this sweep's stored runs, run now or before (each is a
    deterministic outcome, stored and never run again); `failed` lists the runs that failed in this invocation
    (not stored: the next invocation tries them again); `ran` and `skipped` count this invocation's runs."""

    name: str
    store_dir: Path
    total: int
    skipped: int
    ran: int
    invalid: list[tuple[RunTask, str]] = field(default_factory=list)
    """(task, error) of every invalid run, in grid order."""
    failed: list[tuple[RunTask, str]] = field(default_factory=list)
    """(task, error) of every run that failed now, in completion order."""
    wall_s: float = 0.0
    executor: str = ""
    hashes: list[str] = field(default_factory=list)
    points: dict[str, str] = field(default_factory=dict)
    """Run hash -> its point key (the JSON of its parameters)."""
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Point key -> its parameters (by path), in grid order."""
    ok: int = 0
    """Runs of this sweep stored as ok (run now or before)."""
    incomplete: list[tuple[RunTask, str]] = field(default_factory=list)
    """(task, reason) of every run whose workload did not complete (e.g. a message never delivered after a drop),
    in grid order: stored with its metrics, status "incomplete"."""

    def rows(self) -> list[dict[str, Any]]:
        """This sweep's stored runs, one dict per run (params and metrics; what `frame` tabulates), without pandas."""
        want = set(self.hashes)
        with Store(self.store_dir) as s:
            return [dict(r, sweep=self.name) for r in s.rows(None) if r["hash"] in want]

    def frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows())

    def summary(self) -> dict[str, Any]:
        """Counts of the runs (see the class), the distinct errors of invalid and failed runs (sorted) and the
        distinct reasons of incomplete ones (in grid order), the first 20 of each."""
        return {
            "sweep": self.name, "store": str(self.store_dir), "executor": self.executor, "total": self.total,
            "skipped": self.skipped, "ran": self.ran, "ok": self.ok, "incomplete": len(self.incomplete),
            "invalid": len(self.invalid), "failed": len(self.failed), "wall_s": round(self.wall_s, 3),
            "errors": sorted({e for _, e in self.invalid + self.failed})[:20],
            "incomplete_reasons": list(dict.fromkeys(r for _, r in self.incomplete))[:20],
        }

    def point_summary(self) -> dict[str, Any]:
        """Per point and numeric metric: mean, 95% CI half-width (Student t over the point's seeds, None for one
        seed) and n, from the stored runs with metrics (ok and incomplete). Returns {"metrics": [names, first-seen
        order], "points": [{"params", "n", "incomplete", "metrics": {name: {"mean", "ci95", "n"}}}, ...]} with
        points in grid order; "incomplete" counts the point's incomplete runs among its n. Means of integral
        values stay ints (`intify`).

        Vectorised (one pandas group-by over every run and metric), so 10,000 stored runs summarize in well under
        a second; the statistics are `stats.ci95`'s (a mean may differ from it in the last bit of a sum)."""
        with Store(self.store_dir) as s:
            runs = s.metrics(self.hashes)
        return points_summary(self.params, [self.points[h] for h in runs], list(runs.values()),
                              [t.point_key for t, _ in self.incomplete])


def _numeric(col) -> "Any":
    """A metric column as floats: ints and floats (not bools) kept, anything else (text, None, bools) NaN."""
    import numpy as np
    import pandas as pd

    if pd.api.types.is_bool_dtype(col.dtype):
        return pd.Series(np.nan, index=col.index)
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.astype(float)
    keep = col.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
    return col.where(keep).astype(float)


def points_summary(params: dict[str, dict[str, Any]], keys: list[str], metrics: list[dict[str, Any]],
                   incomplete_keys: list[str]) -> dict[str, Any]:
    """`SweepResult.point_summary` from its parts: the points' parameters (point key -> params, grid order), the
    point key and metrics of every stored run (storage order) and the point key of every incomplete run."""
    import numpy as np
    import pandas as pd

    from ..stats import t975

    frame = pd.DataFrame.from_records(metrics) if metrics else pd.DataFrame()
    cols = {c: _numeric(frame[c]) for c in frame.columns}
    # first-seen order: by the first run with a number for the metric, then by its place in the runs' dicts
    first = {c: int(np.argmax(v.notna().to_numpy())) for c, v in cols.items() if v.notna().any()}
    names = sorted(first, key=lambda c: (first[c], frame.columns.get_loc(c)))
    seeds = pd.Series(keys, dtype=object).value_counts().to_dict() if keys else {}
    unfinished = pd.Series(incomplete_keys, dtype=object).value_counts().to_dict() if incomplete_keys else {}
    stats: dict[str, dict[str, dict[str, Any]]] = {k: {} for k in params}
    if names:
        values = pd.DataFrame({c: cols[c] for c in names})
        values["point"] = keys
        g = values.groupby("point", sort=False)
        n, mean, std = g.count(), g.mean(), g.std(ddof=1)
        t = n.map(lambda k: t975(k - 1) if k >= 2 else np.nan)
        half = (t * std / np.sqrt(n)).to_numpy().tolist()
        n_l, mean_l = n.to_numpy().tolist(), mean.to_numpy().tolist()
        for i, key in enumerate(n.index.tolist()):
            if key in stats:
                stats[key] = {m: {"mean": intify(mean_l[i][j]), "ci95": None if n_l[i][j] < 2 else half[i][j],
                                  "n": n_l[i][j]} for j, m in enumerate(names) if n_l[i][j]}
    points = [{"params": p, "n": int(seeds.get(key, 0)), "incomplete": int(unfinished.get(key, 0)),
               "metrics": stats[key]} for key, p in params.items()]
    return {"metrics": names, "points": points}


def intify(x: float) -> int | float:
    """`x` as an int when it is integral within 1e-9 relative (a mean of counts, 81920.00000000004), else `x`:
    counts stay integers in JSON."""
    if x != x or x in (float("inf"), float("-inf")):
        return x
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * max(1.0, abs(x)) else x


def _progress(quiet: bool, transient: bool = False):
    """A rich progress bar on stderr (runs done, failures, incomplete runs, ETA), shown only when stderr is a
    terminal and not `quiet`; `transient` erases it when done."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    console = Console(stderr=True)
    prog = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("failures {task.fields[failures]}"), TextColumn("incomplete {task.fields[incomplete]}"),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=console, disable=quiet or not console.is_terminal, transient=transient,
    )
    return prog


def run_sweep(spec: SweepSpec, base: dict[str, Any], store_dir: str | Path, *, workers: int | None = None,
              scheduler=None, seeds: int | None = None, retries: int = 2, quiet: bool = False,
              source: str = "<sweep>", label: str | None = None, transient: bool = False) -> SweepResult:
    """Run every (point, seed) of `spec` not already in the store at `store_dir`.

    Each finished run is committed at once, so a killed sweep resumes where it stopped. Invalid points are
    stored with their error and incomplete runs (the workload did not complete) with their metrics and reason;
    neither is ever run again, and every invocation reports them. Other failures are retried `retries` times
    and then reported (not stored, so the next invocation tries them again). Raises SweepFailed (with the
    result) when no run of the sweep has metrics (ok or incomplete), e.g. every run failed, and
    SchedulerUnreachable when a Dask scheduler given by address does not answer.

    Progress: a bar on stderr (runs done of those to run, failures, incomplete runs, ETA) when stderr is a
    terminal and not `quiet`, titled `label` (default: the sweep's name); `transient` erases it when the sweep
    ends."""
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
                          hashes=list(unique), points={h: t.point_key for h, t in unique.items()},
                          params={t.point_key: t.params for t in unique.values()})
        if todo:
            executor.connect()
        with _progress(quiet, transient) as prog:
            bar = prog.add_task(label or spec.name, total=len(todo), failures=0, incomplete=0)
            seen = {"failures": 0, "incomplete": 0}
            for task, out in executor.run(todo, retries):
                if out["status"] in STORED:
                    store.put(task, out)
                    res.ran += 1
                else:
                    res.failed.append((task, out["error"]))
                seen["failures"] += out["status"] in ("invalid", "failed")
                seen["incomplete"] += out["status"] == "incomplete"
                prog.update(bar, advance=1, **seen)
        outcomes = store.outcomes(res.hashes)
    for h, t in unique.items():
        status, why = outcomes.get(h, (None, None))
        res.ok += status == "ok"
        if status == "incomplete":
            res.incomplete.append((t, why))
        elif status == "invalid":
            res.invalid.append((t, why))
    res.wall_s = time.perf_counter() - t0
    if res.total and not res.ok and not res.incomplete:
        raise SweepFailed(res)
    return res
