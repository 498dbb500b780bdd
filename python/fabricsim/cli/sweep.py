"""`fabricsim sweep`: every grid point × seed of a sweep file, resumable, on local processes or a Dask cluster."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import EXIT_INCOMPLETE, EXIT_USER_ERROR, FIDELITY, echo_json, seeds_option, stdout_console

EXIT_RUNS_FAILED = 1
"""Some runs were invalid or failed, others have results (stored and summarized)."""


@click.command("sweep")
@click.argument("spec_file", metavar="SWEEP.toml")
@click.option("--store", "store_dir", default=None, metavar="DIR",
              help="Results folder (DIR/results.sqlite: SQLite, WAL), created if needed, or an earlier sweep's "
                   "results.sqlite itself (resumed and appended to; any other file is refused); default: "
                   "./fabricsim-outputs/<sweep name> (in the current folder).")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local worker processes (default: one per core; 0 = run in this process).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Run on an existing Dask cluster instead. Connecting gives up after 5 s (exit 2, one line).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="The first seed S: every point runs seeds S..S+K-1 (K = --seeds, else the file's count of seeds).")
@seeds_option("Runs K per point, seeds S..S+K-1 (S = --seed, else 1), instead of the file's seeds.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True, help="Retries of a failed run.")
@click.option("--export", "export_path", default=None, metavar="FILE.csv|FILE.parquet",
              help="Also export the runs to this one file (the store is the sweep's folder, --store DIR).")
@FIDELITY
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the sweep summary) on stdout.")
def sweep(spec_file, store_dir, workers, scheduler, seed, seeds, retries, export_path, fidelity, quiet,
          as_json) -> None:
    """Run a sweep: every grid point x seed of SWEEP.toml, on local processes or a Dask cluster.

    Every finished run is committed to the store at once; re-running skips stored runs, so an
    interrupted sweep resumes where it stopped. Invalid points and incomplete runs (the workload did not
    complete, e.g. a message that gave up re-sending a drop: stored with their metrics and reason) are
    outcomes: stored, never run again, and reported by every invocation; failed runs are retried.
    Prints mean ± 95% CI (Student t over seeds) of every numeric metric per point (incomplete runs
    included, marked), the counts, and where the results are.

    \b
    Exit status, after storing every run and printing the summary:
      0  every run ok
      1  some runs invalid or failed, others ran (one line: how many, the first error)
      2  bad input: every run invalid, an unreadable sweep file, an unreachable scheduler
      3  some runs incomplete, none invalid or failed (one line: how many, the first reason)
    """
    from pathlib import Path

    from ..sweep import SchedulerUnreachable, Store, StoreError, SweepFailed, load_sweep, run_sweep
    from ..sweep.store import store_path

    if export_path and Path(export_path).suffix not in (".csv", ".parquet"):
        raise UserError(f"fabricsim sweep: --export: '{export_path}' must end in .csv or .parquet")
    spec, base = load_sweep(spec_file)
    if seed is not None:  # seeds S..S+K-1 in place of the file's
        k = seeds or (spec.seeds if isinstance(spec.seeds, int) else len(spec.seeds))
        spec, seeds = spec.model_copy(update={"seeds": list(range(seed, seed + k))}), None
    if fidelity:
        base = {**base, "fidelity": fidelity}
    store_dir = store_dir or str(Path("fabricsim-outputs") / spec.name)
    try:
        res = run_sweep(spec, base, store_dir, workers=workers, scheduler=scheduler, seeds=seeds, retries=retries,
                        quiet=quiet or as_json, source=spec_file)
    except SweepFailed as e:
        click.echo(f"fabricsim sweep: {e}", err=True)
        raise click.exceptions.Exit(EXIT_USER_ERROR if not e.result.failed else EXIT_RUNS_FAILED) from None
    except (SchedulerUnreachable, StoreError) as e:
        click.echo(f"fabricsim sweep: {'--store: ' if isinstance(e, StoreError) else ''}{e}", err=True)
        raise click.exceptions.Exit(EXIT_USER_ERROR) from None
    if export_path:
        with Store(store_dir) as st:
            st.export(export_path, spec.name)
        click.echo(f"wrote the runs of {spec.name} to {export_path}", err=True)
    summary = {**res.summary(), **res.point_summary(), "store": str(Path(store_dir).resolve())}
    if export_path:
        summary["export"] = export_path
    if as_json:
        echo_json(summary)
    else:
        _print_points(summary)
        click.echo(f"{spec.name}: {res.total} runs ({res.skipped} already stored, {res.ran} ran): {res.ok} ok, "
                   f"{len(res.incomplete)} incomplete, {len(res.invalid)} invalid, {len(res.failed)} failed "
                   f"in {res.wall_s:.1f} s on {res.executor}")
        click.echo(f"results stored in {store_path(store_dir).resolve()}")
    _exit_status(res)


def _exit_status(res) -> None:
    """One stderr line per kind of trouble (invalid or failed runs; incomplete runs), naming how many and the
    first one's error or reason; then exit 1 (invalid or failed) or 3 (incomplete), or return (all ok)."""
    bad = res.invalid + res.failed
    if bad:
        kinds = [f"{len(x)} {word}" for x, word in ((res.invalid, "invalid"), (res.failed, "failed")) if x]
        what = kinds[0].split(" ", 1)[1] if len(kinds) == 1 else f"invalid or failed ({', '.join(kinds)})"
        click.echo(f"fabricsim sweep: {res.name}: {len(bad)} of {res.total} runs {what}; the first "
                   f"({_run_label(bad[0][0])}): {bad[0][1]}", err=True)
    if res.incomplete:
        task, reason = res.incomplete[0]
        click.echo(f"fabricsim sweep: {res.name}: {len(res.incomplete)} of {res.total} runs incomplete; the first "
                   f"({_run_label(task)}): {reason}", err=True)
    if bad:
        raise click.exceptions.Exit(EXIT_RUNS_FAILED)
    if res.incomplete:
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _point_label(params: dict) -> str:
    """A point as `path = value, ...` ("(base)" for the base scenario itself)."""
    return ", ".join(f"{k} = {v}" for k, v in params.items()) or "(base)"


def _run_label(task) -> str:
    """A run as its point and seed."""
    return f"{_point_label(task.params)}, seed {task.seed}"


TABLE_POINTS = 25
"""The per-point table shows the first this many points (grid order); a line says how many more there are."""


def _print_points(summary: dict) -> None:
    """The per-point table: one row per point and metric, mean ± 95% CI (Student t over seeds) and n, for the first
    TABLE_POINTS points (a line after it counts the others: --json or --export has every one)."""
    from rich.table import Table

    t = Table(title=f"{summary['sweep']}: mean ± 95% CI over seeds (Student t)", title_justify="left")
    for col, just in (("point", "left"), ("metric", "left"), ("mean", "right"), ("± 95% CI", "right"), ("n", "right")):
        t.add_column(col, justify=just)
    for p in summary["points"][:TABLE_POINTS]:
        label = _point_label(p["params"])
        if p["incomplete"]:
            label += " (incomplete)" if p["incomplete"] == p["n"] else f" ({p['incomplete']} of {p['n']} incomplete)"
        for i, (m, st) in enumerate(p["metrics"].items()):
            t.add_row(label if i == 0 else "", m, _num(st["mean"]), "-" if st["ci95"] is None else _num(st["ci95"]),
                      str(st["n"]), end_section=i == len(p["metrics"]) - 1)
        if not p["metrics"]:
            t.add_row(label, "(no ok run)", "-", "-", "0", end_section=True)
    con = stdout_console(120)
    con.print(t)
    more = len(summary["points"]) - TABLE_POINTS
    if more > 0:
        con.print(f"... {more:,} more point{'s' if more != 1 else ''} not shown (of {len(summary['points']):,}; "
                  "--json prints every point, --export FILE.csv every run)", markup=False)


def _num(v) -> str:
    """A summary number: ints with thousands separators, floats to 4 significant digits."""
    return f"{v:,}" if isinstance(v, int) else f"{v:.4g}"
