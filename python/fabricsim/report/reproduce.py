"""Study reproduction: discover <experiments>/<study>/run.py, run it with a context, save its report as JSON.

A study's run.py defines `TITLE` and `reproduce(ctx)`; through `ctx` it runs sweeps, records comparisons
(the paper's number, ours, a tolerance) and figures. The studies ship inside the package (fabricsim/_data/
experiments, a link to the checkout's experiments/ that the wheel carries), so they are found from any folder;
results go to <outputs>/<study>/ (./fabricsim-outputs by default), never into the studies' folder, which may
be read-only in an installed wheel. `fabricsim report` reads <outputs>/*/report.json and writes
<outputs>/report.html.

Every comparison has a role (ROLES): only "result" rows, numbers we compute, are scored pass/miss and counted.
"input" rows (a value we set, e.g. a preset taken from the paper) and "calibrated" rows (a value fitted to the
paper's) are shown beside the paper's number for reference and kept apart in `StudyReport.unscored`. Every
comparison also says what its reference number is (REFERENCES): the paper's, an ns-3 run's, a closed form, ….

Every scored comparison also names the setting that produced our number (`Comparison.setting`): the fidelity, the
seeds and the grid, e.g. "hybrid, 5 seeds, 22 placements", so a reader of a quick report knows what each number
rests on. A study sets it per section (`ctx.setting(...)`) or per comparison (`setting=`); `reproduce` refuses a
study that leaves a scored number without one (StudySettingMissing).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import math
import multiprocessing
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from . import numbers


ROLES = ("result", "input", "calibrated")
"""What a comparison row is. "result": a number the simulator or calculator produces, scored pass/miss.
"input": a value we set (a preset or given copied from the paper), shown as an input, never scored.
"calibrated": a value fitted to the paper's (it reproduces its target by construction), shown, never scored."""
REFERENCES = ("paper", "ns-3", "ASTRA-sim", "closed form", "hand calculation", "packet engine", "optimizer",
              "expectation")
"""What a comparison's reference number (its `paper` field) is: a number the paper publishes or states, one from an
ns-3 or ASTRA-sim run, a closed form or a hand calculation, fabricsim's packet engine (checking another engine
against it), an optimizer's claim (its optimum, checked by simulation, or that it proves optimality), or an
expectation stated in advance (a trend the work set out to show, checked as 1 = holds)."""


@dataclass
class Comparison:
    """A reference number beside ours. Passes when |ours − paper| ≤ abs_tol or ≤ rel_tol·|paper|.

    `paper` holds the reference number, whatever `reference` says it is (REFERENCES: the paper's by default, or
    an ns-3 run's, a closed form, …). Only rows with role "result" are scored; for "input" and "calibrated" rows
    `passed` just says whether the value we set or fitted matches the paper's (a consistency check, not a
    reproduction)."""

    id: str
    quantity: str
    paper: float
    ours: float | None
    unit: str = ""
    rel_tol: float | None = None
    abs_tol: float | None = None
    source: str = ""
    note: str = ""
    role: str = "result"
    reference: str = "paper"
    setting: str = ""
    """The setting our number came from: fidelity, seeds, grid (e.g. "hybrid, 5 seeds, 22 placements"); "" when
    none was stated (only allowed outside `reproduce`, e.g. hand-built reports)."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role: must be one of {', '.join(ROLES)}, not '{self.role}'")
        if self.reference not in REFERENCES:
            raise ValueError(f"reference: must be one of {', '.join(REFERENCES)}, not '{self.reference}'")

    @property
    def scored(self) -> bool:
        """Whether the row counts in the pass/total score (only results do)."""
        return self.role == "result"

    @property
    def diff(self) -> float | None:
        return None if self.ours is None else self.ours - self.paper

    @property
    def passed(self) -> bool:
        if self.ours is None or (isinstance(self.ours, float) and math.isnan(self.ours)):
            return False
        d = abs(self.ours - self.paper)
        ok_abs = self.abs_tol is not None and d <= self.abs_tol
        ok_rel = self.rel_tol is not None and d <= self.rel_tol * abs(self.paper)
        if self.abs_tol is None and self.rel_tol is None:
            return d == 0
        return ok_abs or ok_rel

    @property
    def tolerance(self) -> str:
        """"±2%" (relative), "±2 pp" (absolute on a value in %), "±0.5 ms" (absolute), or "exact"."""
        return numbers.tolerance(self.rel_tol, self.abs_tol, self.unit)

    @property
    def label(self) -> str:
        """The result column: "pass" or "miss" for a scored row, else its role ("calibrated", "input"), with
        " (≠ paper)" when the value set or fitted does not match the reference."""
        if self.scored:
            return "pass" if self.passed else "miss"
        return self.role + ("" if self.passed else " (≠ paper)")


@dataclass
class StudyReport:
    study: str
    title: str
    quick: bool
    summary: str = ""
    comparisons: list[Comparison] = field(default_factory=list)
    unscored: list[Comparison] = field(default_factory=list)
    figures: list[dict[str, str]] = field(default_factory=list)
    tables: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def counts(self) -> dict[str, int]:
        """Scored results, passes, misses, and the unscored calibrated and input rows."""
        passed = sum(c.passed for c in self.comparisons)
        roles = [c.role for c in self.unscored]
        return {"results": len(self.comparisons), "pass": passed, "miss": len(self.comparisons) - passed,
                "calibrated": roles.count("calibrated"), "input": roles.count("input")}

    def settings(self) -> dict[str, int]:
        """Each setting our scored numbers came from (fidelity, seeds, grid), with how many numbers it produced, in
        the order they first appear."""
        out: dict[str, int] = {}
        for c in self.comparisons:
            out[c.setting] = out.get(c.setting, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        """Scored rows carry `passed`; unscored ones carry `matches` (the consistency check) instead. `settings`
        lists each setting of the scored numbers with its count (StudyReport.settings)."""
        d = asdict(self)
        d["settings"] = [{"setting": k, "results": n} for k, n in self.settings().items()]
        for c, cd in zip(self.comparisons, d["comparisons"]):
            cd.update(diff=c.diff, passed=c.passed, tolerance=c.tolerance)
        for c, cd in zip(self.unscored, d["unscored"]):
            cd.update(diff=c.diff, matches=c.passed, tolerance=c.tolerance)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "StudyReport":
        def rows(key: str) -> list[Comparison]:
            return [Comparison(**{k: v for k, v in c.items() if k not in ("diff", "passed", "matches", "tolerance")})
                    for c in d.pop(key, [])]

        comps, unscored = rows("comparisons"), rows("unscored")
        d.pop("settings", None)  # derived from the rows (StudyReport.settings)
        return cls(comparisons=comps, unscored=unscored, **d)


class StudySettingMissing(UserError):
    """A study recorded scored comparisons without saying which setting (fidelity, seeds, grid) produced them."""


class StudyContext:
    """What a study's `reproduce(ctx)` uses: sweeps with the chosen executor, comparisons, figures, tables.

    `setting(text)` names the setting (fidelity, seeds, grid) of the comparisons recorded after it, as a plain
    call or as a `with` block that restores the previous one on exit."""

    def __init__(self, study_dir: Path, quick: bool, workers: int | None = None, scheduler=None, quiet: bool = False,
                 out: str | Path | None = None):
        self.study_dir = Path(study_dir)
        self.out = Path(out) if out is not None else outputs_dir() / self.study_dir.name
        self.out.mkdir(parents=True, exist_ok=True)
        self.quick = quick
        self.workers = workers
        self.scheduler = scheduler
        self.quiet = quiet
        self.report = StudyReport(study=self.study_dir.name, title="", quick=quick)
        self._setting = ""

    def setting(self, text: str):
        """Name the setting of the comparisons that follow ("hybrid, 5 seeds, 22 placements"). Usable as a plain
        call or as a context manager (`with ctx.setting(...):`) that restores the previous setting after."""
        prev, self._setting = self._setting, str(text)

        @contextlib.contextmanager
        def scope():
            try:
                yield self
            finally:
                self._setting = prev

        return scope()

    def sweep(self, spec, base: dict | None = None, seeds: int | None = None):
        """Run a sweep (a SweepSpec, or a sweep file relative to the study) into <study outputs>/store."""
        from ..sweep import load_sweep, run_sweep

        source = "<sweep>"
        if isinstance(spec, (str, Path)):
            source = str(self.study_dir / spec)
            spec, base = load_sweep(self.study_dir / spec)
        return run_sweep(spec, base, self.out / "store", workers=self.workers, scheduler=self.scheduler,
                         seeds=seeds, quiet=self.quiet, source=source)

    def task(self, function: str) -> str:
        """The task name of a function in this study's tasks.py."""
        return f"{(self.study_dir / 'tasks.py').resolve()}:{function}"

    def compare(self, id: str, quantity: str, paper: float, ours: float | None, unit: str = "", *,
                rel: float | None = None, abs: float | None = None, source: str = "", note: str = "",
                role: str = "result", reference: str = "paper", setting: str | None = None) -> Comparison:
        """Record a comparison; `role` "input" or "calibrated" shows it without scoring it (see ROLES); `reference`
        says what `paper` is when it is not the paper's number (see REFERENCES); `setting` the setting our number
        came from (default: the current `ctx.setting`)."""
        c = Comparison(id, quantity, float(paper), None if ours is None else float(ours), unit, rel, abs, source, note,
                       role, reference, self._setting if setting is None else str(setting))
        (self.report.comparisons if c.scored else self.report.unscored).append(c)
        return c

    def figure(self, fig, name: str, caption: str) -> None:
        from .figures import save

        path = self.out / f"{name}.png"
        save(fig, path)
        self.report.figures.append({"path": str(path), "caption": caption})

    def table(self, title: str, frame) -> None:
        """A data table, its numbers written as in the comparisons (numbers.number: 849,600; 0.2501)."""
        fmt = {col: numbers.number for col in frame.columns if frame[col].dtype.kind in "iuf"}
        self.report.tables.append({"title": title, "html": frame.to_html(index=False, formatters=fmt)})

    def note(self, text: str) -> None:
        self.report.notes.append(text)


def totals_line(name: str, counts: dict[str, int]) -> str:
    """One study's (or all studies') totals: "engine_checks: 6 pass, 0 miss, 1 calibrated", inputs added when
    there are any ("…, 6 inputs")."""
    line = f"{name}: {counts['pass']} pass, {counts['miss']} miss, {counts['calibrated']} calibrated"
    n = counts.get("input", 0)
    return line + (f", {n} input{'' if n == 1 else 's'}" if n else "")


def total_counts(reports: list[StudyReport]) -> dict[str, int]:
    """StudyReport.counts summed over `reports`."""
    out = dict.fromkeys(("results", "pass", "miss", "calibrated", "input"), 0)
    for r in reports:
        for k, v in r.counts().items():
            out[k] += v
    return out


def totals_lines(reports: list[StudyReport]) -> list[str]:
    """The totals `fabricsim reproduce` ends with (and the HTML report shows): one line per study, and one for all
    of them when there are several."""
    lines = [totals_line(r.study, r.counts()) for r in reports]
    if len(reports) > 1:
        lines.append(totals_line(f"all {len(reports)} studies", total_counts(reports)))
    return lines


DEFAULT_OUTPUTS = "fabricsim-outputs"
"""Where `reproduce` writes and `report` reads by default: this folder, under the current directory."""


def packaged_experiments() -> Path:
    """The studies that ship with the package (fabricsim/_data/experiments): in a checkout a link to
    experiments/, in an installed wheel a copy of it."""
    return Path(__file__).resolve().parent.parent / "_data" / "experiments"


def experiments_dir(explicit: str | Path | None = None) -> Path:
    """The studies' folder: the given one (`--experiments DIR`), else the package's own."""
    return Path(explicit) if explicit else packaged_experiments()


def outputs_dir(explicit: str | Path | None = None) -> Path:
    """The outputs folder, absolute (report.json records figures by path): the given one (`--out DIR`), else
    ./fabricsim-outputs."""
    return (Path(explicit) if explicit else Path(DEFAULT_OUTPUTS)).absolute()


def discover(exp_dir: Path) -> dict[str, Path]:
    """Study name -> folder, for every <exp_dir>/<study>/run.py."""
    return {p.parent.name: p.parent for p in sorted(Path(exp_dir).glob("*/run.py"))}


def load_study(study_dir: Path):
    spec = importlib.util.spec_from_file_location(f"fabricsim_study_{study_dir.name}", study_dir / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reproduce(study_dir: Path, quick: bool, workers: int | None = None, scheduler=None, quiet: bool = False,
              out: str | Path | None = None) -> StudyReport:
    """Run one study and save <out>/<study>/report.json (out: ./fabricsim-outputs by default); returns the report."""
    mod = load_study(study_dir)
    ctx = StudyContext(study_dir, quick, workers, scheduler, quiet, out=outputs_dir(out) / Path(study_dir).name)
    ctx.report.title = getattr(mod, "TITLE", study_dir.name)
    ctx.report.summary = (mod.__doc__ or "").strip()
    t0 = time.perf_counter()
    mod.reproduce(ctx)
    ctx.report.wall_s = time.perf_counter() - t0
    missing = [c.id for c in ctx.report.comparisons if not c.setting.strip()]
    if missing:
        raise StudySettingMissing(
            f"fabricsim: {Path(study_dir) / 'run.py'}: {len(missing)} scored comparison(s) name no setting "
            f"(fidelity, seeds, grid; ctx.setting(...) or setting=): {', '.join(missing[:5])}"
            + (", …" if len(missing) > 5 else ""))
    (ctx.out / "report.json").write_text(json.dumps(ctx.report.to_json(), indent=1))
    return ctx.report


def weight(study_dir: Path) -> float:
    """The study's `WEIGHT` (a number literal in its run.py: its rough share of a quick run's time), 1 if it states
    none. Read without importing the study; `reproduce_many` starts the heaviest studies first."""
    try:
        tree = ast.parse((Path(study_dir) / "run.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return 1.0
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "WEIGHT" and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, (int, float))):
            return float(node.value.value)
    return 1.0


def _reproduce_quietly(args: tuple) -> StudyReport:
    """`reproduce` in a worker process of `reproduce_many` (top level, so that it pickles)."""
    return reproduce(*args)


def reproduce_many(study_dirs: list[Path], quick: bool, workers: int | None = None, scheduler=None,
                   quiet: bool = False, out: str | Path | None = None, jobs: int | None = None, progress=None):
    """`reproduce` every study of `study_dirs`, yielding each StudyReport in the given order.

    With `jobs` > 1 (None: one per core, at most one per study) the studies run at once on that many local
    processes, the heaviest first (`weight`), each with its own sweeps (`workers` each) and without progress bars;
    `progress(name, done, total)` is called as each study finishes. The studies are independent, so each report is
    the same as when they run one after another (`jobs` 1, or a Dask `scheduler`, which runs the sweeps
    elsewhere)."""
    dirs = [Path(d) for d in study_dirs]
    jobs = min(len(dirs), jobs if jobs is not None else (os.cpu_count() or 1))
    if jobs <= 1 or scheduler is not None:
        for d in dirs:
            yield reproduce(d, quick, workers, scheduler, quiet, out)
        return
    ctx = multiprocessing.get_context("forkserver")
    order = sorted(range(len(dirs)), key=lambda i: -weight(dirs[i]))  # stable: ties keep the given order
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = {i: pool.submit(_reproduce_quietly, (dirs[i], quick, workers, None, True, out)) for i in order}
        index = {f: i for i, f in futures.items()}
        pending, done, nxt = set(futures.values()), 0, 0
        try:
            while nxt < len(dirs):
                while nxt < len(dirs) and futures[nxt].done():
                    yield futures[nxt].result()
                    nxt += 1
                if nxt == len(dirs):
                    break
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    done += 1
                    if progress is not None and f.exception() is None:
                        progress(dirs[index[f]].name, done, len(dirs))
        except BaseException:
            # A study failed (or Ctrl-C): stop the others now rather than let them run to their end.
            for f in futures.values():
                f.cancel()
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.terminate()
            raise


def load_reports(out_dir: str | Path | None = None) -> list[StudyReport]:
    """Every study report saved under the outputs folder (<out_dir>/<study>/report.json), in folder order."""
    out = []
    for p in sorted(outputs_dir(out_dir).glob("*/report.json")):
        try:
            out.append(StudyReport.from_json(json.loads(p.read_text())))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ValueError(f"{p}: not a study report of this fabricsim version ({type(e).__name__}: {e}); "
                             f"run 'fabricsim reproduce {p.parent.name}' again") from None
    return out
