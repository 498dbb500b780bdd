"""`fabricsim reproduce` and `fabricsim report`: run the studies of experiments/ and write the HTML report."""

from __future__ import annotations

import click

from .. import __version__
from ..errors import UserError
from ._common import stdout_console


@click.command("reproduce")
@click.argument("study", metavar="STUDY|all")
@click.option("--quick", is_flag=True, help="Fewer seeds and points: minutes instead of hours.")
@click.option("--workers", type=click.IntRange(min=0), default=None, help="Local worker processes (default: cores).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run the sweeps on a Dask cluster.")
@click.option("--experiments", "exp_dir", default=None, metavar="DIR", help="Experiments folder (default: ./experiments).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def reproduce(study, quick, workers, scheduler, exp_dir, quiet) -> None:
    """Reproduce a study (or all) from experiments/<study>/: our numbers beside the paper's.

    Prints each published number, ours, and whether it is within the study's tolerance; saves
    experiments/<study>/outputs/report.json and figures. `fabricsim report` then writes the HTML report.
    """
    from ..report.reproduce import discover, experiments_dir
    from ..report.reproduce import reproduce as run_study

    root = experiments_dir(exp_dir)
    studies = discover(root)
    if study != "all" and study not in studies:
        raise UserError(f"fabricsim: unknown study '{study}' (known: {', '.join(studies) or 'none'}; folder {root})")
    for name in studies if study == "all" else [study]:
        rep = run_study(studies[name], quick, workers, scheduler, quiet)
        _print_comparisons(rep)


def _print_comparisons(rep) -> None:
    from rich.table import Table

    con = stdout_console(160)
    t = Table(title=f"{rep.title} ({'quick' if rep.quick else 'full'}, {rep.wall_s:.1f} s)", title_justify="left")
    for col in ("id", "quantity", "paper", "ours", "diff", "tolerance", "result"):
        t.add_column(col, justify="left" if col in ("id", "quantity") else "right")
    for c in rep.comparisons:
        t.add_row(c.id, f"{c.quantity} {('[' + c.unit + ']') if c.unit else ''}", f"{c.paper:.4g}",
                  "-" if c.ours is None else f"{c.ours:.4g}", "-" if c.diff is None else f"{c.diff:+.3g}",
                  c.tolerance, "[green]pass[/green]" if c.passed else "[red]miss[/red]")
    con.print(t)


@click.command("report")
@click.option("--experiments", "exp_dir", default=None, metavar="DIR", help="Experiments folder (default: ./experiments).")
@click.option("--out", "out_path", default="outputs/report.html", show_default=True, help="Where to write the HTML report.")
def report(exp_dir, out_path) -> None:
    """Write the HTML reproduction report from every study's saved outputs (run `reproduce` first)."""
    from ..report.html import write_report
    from ..report.reproduce import experiments_dir, load_reports

    reports = load_reports(experiments_dir(exp_dir))
    if not reports:
        raise UserError("fabricsim: no study outputs found; run 'fabricsim reproduce all --quick' first")
    p = write_report(reports, out_path, __version__)
    n = sum(len(r.comparisons) for r in reports)
    ok = sum(c.passed for r in reports for c in r.comparisons)
    click.echo(f"report: {p.resolve()} ({len(reports)} studies, {ok}/{n} numbers within tolerance)")
