"""`fabricsim sweep`: every grid point × seed of a sweep file, resumable, on local processes or a Dask cluster."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import EXIT_USER_ERROR, FIDELITY, echo_json, stdout_console


@click.command("sweep")
@click.argument("spec_file", metavar="SWEEP.toml")
@click.option("--store", "store_dir", default=None, metavar="DIR",
              help="Results folder (SQLite, WAL); default: ./fabricsim-outputs/<sweep name> (in the current folder).")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local worker processes (default: one per core; 0 = run in this process).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run on an existing Dask cluster instead.")
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="Override the number of seeds (1..N).")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True, help="Retries of a failed run.")
@click.option("--export", "export_path", default=None, metavar="FILE.csv|FILE.parquet", help="Also export the runs.")
@FIDELITY
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the sweep summary) on stdout.")
def sweep(spec_file, store_dir, workers, scheduler, seeds, retries, export_path, fidelity, quiet, as_json) -> None:
    """Run a sweep: every grid point x seed of SWEEP.toml, on local processes or a Dask cluster.

    Every finished run is committed to the store at once; re-running skips stored runs, so an
    interrupted sweep resumes where it stopped. Invalid points are reported once and not retried.
    Prints mean ± 95% CI (Student t over seeds) of every numeric metric per point, and where the results are.
    """
    from pathlib import Path

    from ..sweep import Store, SweepFailed, load_sweep, run_sweep

    if export_path and Path(export_path).suffix not in (".csv", ".parquet"):
        raise UserError(f"fabricsim sweep: --export: '{export_path}' must end in .csv or .parquet")
    spec, base = load_sweep(spec_file)
    if fidelity:
        base = {**base, "fidelity": fidelity}
    store_dir = store_dir or str(Path("fabricsim-outputs") / spec.name)
    try:
        res = run_sweep(spec, base, store_dir, workers=workers, scheduler=scheduler, seeds=seeds, retries=retries,
                        quiet=quiet or as_json, source=spec_file)
    except SweepFailed as e:
        click.echo(f"fabricsim sweep: {e}", err=True)
        raise click.exceptions.Exit(EXIT_USER_ERROR if not e.result.failed else 1) from None
    if export_path:
        with Store(store_dir) as st:
            st.export(export_path, spec.name)
        click.echo(f"wrote the runs of {spec.name} to {export_path}", err=True)
    summary = {**res.summary(), **res.point_summary(), "store": str(Path(store_dir).resolve())}
    if export_path:
        summary["export"] = export_path
    if as_json:
        echo_json(summary)
        return
    _print_points(summary)
    click.echo(f"{spec.name}: {res.total} runs ({res.ok} ok: {res.skipped} already stored, {res.ran} ran; "
               f"{len(res.invalid)} invalid, {len(res.failed)} failed) in {res.wall_s:.1f} s on {res.executor}")
    click.echo(f"results stored in {(Path(store_dir) / 'results.sqlite').resolve()}")
    for err in summary["errors"]:
        click.echo(f"  {err}", err=True)


def _print_points(summary: dict) -> None:
    """The per-point table: one row per point and metric, mean ± 95% CI (Student t over seeds) and n."""
    from rich.table import Table

    t = Table(title=f"{summary['sweep']}: mean ± 95% CI over seeds (Student t)", title_justify="left")
    for col, just in (("point", "left"), ("metric", "left"), ("mean", "right"), ("± 95% CI", "right"), ("n", "right")):
        t.add_column(col, justify=just)
    for p in summary["points"]:
        label = ", ".join(f"{k} = {v}" for k, v in p["params"].items()) or "(base)"
        for i, (m, st) in enumerate(p["metrics"].items()):
            t.add_row(label if i == 0 else "", m, _num(st["mean"]), "-" if st["ci95"] is None else _num(st["ci95"]),
                      str(st["n"]), end_section=i == len(p["metrics"]) - 1)
        if not p["metrics"]:
            t.add_row(label, "(no ok run)", "-", "-", "0", end_section=True)
    stdout_console(120).print(t)


def _num(v) -> str:
    """A summary number: ints with thousands separators, floats to 4 significant digits."""
    return f"{v:,}" if isinstance(v, int) else f"{v:.4g}"
