"""`fabricsim sweep`: every grid point × seed of a sweep file, resumable, on local processes or a Dask cluster."""

from __future__ import annotations

import click

from ._common import FIDELITY, echo_json


@click.command("sweep")
@click.argument("spec_file", metavar="SWEEP.toml")
@click.option("--store", "store_dir", default=None, metavar="DIR",
              help="Results folder (SQLite, WAL); default: outputs/<sweep name> beside the sweep file.")
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
    """
    from pathlib import Path

    from ..sweep import Store, load_sweep, run_sweep

    spec, base = load_sweep(spec_file)
    if fidelity:
        base = {**base, "fidelity": fidelity}
    store_dir = store_dir or str(Path(spec_file).parent / "outputs" / spec.name)
    res = run_sweep(spec, base, store_dir, workers=workers, scheduler=scheduler, seeds=seeds, retries=retries,
                    quiet=quiet or as_json, source=spec_file)
    if export_path:
        with Store(store_dir) as st:
            st.export(export_path, spec.name)
    summary = res.summary()
    if as_json:
        echo_json(summary)
        return
    click.echo(f"{spec.name}: {res.total} runs ({res.skipped} already stored, {res.ran} ran, "
               f"{len(res.invalid)} invalid, {len(res.failed)} failed) in {res.wall_s:.1f} s on {res.executor}; "
               f"store {store_dir}")
    for err in summary["errors"]:
        click.echo(f"  {err}", err=True)
