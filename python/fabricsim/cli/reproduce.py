"""`fabricsim reproduce` and `fabricsim report`: run the studies that ship with fabricsim (or those of `--experiments
DIR`) into ./fabricsim-outputs (or `--out DIR`), then write the HTML report there."""

from __future__ import annotations

from pathlib import Path

import click

from .. import __version__
from ..errors import UserError
from ._common import stdout_console


OUT = click.option("--out", "out_dir", default=None, metavar="DIR",
                   help="Outputs folder: one subfolder per study, and report.html (default: ./fabricsim-outputs).")
EXPERIMENTS = click.option("--experiments", "exp_dir", default=None, metavar="DIR",
                           help="Studies folder, e.g. a checkout's experiments/ (default: the studies that ship "
                                "with fabricsim).")


@click.command("reproduce")
@click.argument("study", metavar="STUDY|all")
@click.option("--quick", is_flag=True, help="Fewer seeds and points: minutes instead of hours.")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local worker processes per study's sweeps (default: cores).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Studies run at once, each in its own process, the longest first (default: cores, at most one per "
                   "study; 1: one after another). Their tables print in study order; with more than one, the "
                   "sweeps show no progress bars, a line per finished study instead.")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run the sweeps on a Dask cluster.")
@EXPERIMENTS
@OUT
@click.option("--quiet", is_flag=True, help="No progress bars.")
def reproduce(study, quick, workers, jobs, scheduler, exp_dir, out_dir, quiet) -> None:
    """Reproduce a study (or all) from the studies' folder: our numbers beside the paper's.

    Prints each reference number (the paper's, or ns-3's, a closed form, …), ours, and whether it is within the
    study's tolerance, then each study's totals (pass, miss, calibrated); saves OUT/<study>/report.json, the
    figures and the sweeps' results (OUT: ./fabricsim-outputs unless --out). `fabricsim report` then writes the
    HTML report.
    """
    from ..report.reproduce import discover, experiments_dir, outputs_dir, reproduce_many, totals_lines

    root = experiments_dir(exp_dir)
    if not root.is_dir():
        raise UserError(f"fabricsim: --experiments: {root} is not a folder")
    studies = discover(root)
    if not studies:
        raise UserError(f"fabricsim: no studies (<study>/run.py) in {root}")
    if study != "all" and study not in studies:
        raise UserError(f"fabricsim: unknown study '{study}' (known: {', '.join(studies)}, all; folder {root})")
    out = outputs_dir(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"fabricsim: --out: {out} exists and is not a folder")
    reports = []
    names = list(studies) if study == "all" else [study]

    def finished(name: str, done: int, total: int) -> None:
        if not quiet:
            click.echo(f"[{done}/{total}] {name} done", err=True)

    for rep in reproduce_many([studies[n] for n in names], quick, workers, scheduler, quiet, out=out, jobs=jobs,
                              progress=finished):
        name = rep.study
        reports.append(rep)
        _print_comparisons(rep)
        k = len(rep.figures)
        click.echo(f"wrote {_shown(out / name)}/: report.json and {k} figure{'' if k == 1 else 's'}")
    click.echo("\n".join(totals_lines(reports)))


def _shown(path) -> str:
    """A path as a user reads it: relative to the current folder when inside it, else absolute."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


RESULT_STYLE = {"pass": "green", "miss": "red"}
"""Colours of the result column; calibrated values and inputs (not scored) are dimmed."""


def _print_comparisons(rep) -> None:
    """The study's table: scored rows, then its calibrated values and inputs (labelled so, not scored). The
    reference column gives each reference number with what it is: "6.534 (paper)", "84.2 (closed form)"; the
    setting column the fidelity, seeds and grid our number came from."""
    from rich.markup import escape
    from rich.table import Table

    from ..report.numbers import difference, number

    con = stdout_console(160)
    t = Table(title=f"{rep.title} ({'quick' if rep.quick else 'full'}, {rep.wall_s:.1f} s)", title_justify="left")
    for col in ("id", "quantity", "reference", "ours", "diff", "tolerance", "result", "setting"):
        t.add_column(col, justify="left" if col in ("id", "quantity", "setting") else "right")
    for c in rep.comparisons + rep.unscored:
        style = RESULT_STYLE.get(c.label, "dim")
        t.add_row(escape(c.id), escape(f"{c.quantity} [{c.unit}]" if c.unit else c.quantity),
                  f"{number(c.paper, c.unit)} ({c.reference})", number(c.ours, c.unit),
                  difference(c.diff, c.paper, c.unit), c.tolerance, f"[{style}]{c.label}[/{style}]",
                  escape(c.setting))
    con.print(t)


@click.command("report")
@OUT
@click.option("--html", "html_path", default=None, metavar="FILE",
              help="Where to write the HTML report (default: OUT/report.html).")
def report(out_dir, html_path) -> None:
    """Write the HTML reproduction report from the studies' saved outputs (run `reproduce` first).

    Reads OUT/<study>/report.json for every study reproduced into OUT (./fabricsim-outputs unless --out) and
    writes one self-contained page, OUT/report.html unless --html.
    """
    from ..report.html import write_report
    from ..report.reproduce import load_reports, outputs_dir

    out = outputs_dir(out_dir)
    try:
        reports = load_reports(out)
    except ValueError as e:
        raise UserError(f"fabricsim: {e}") from None
    if not reports:
        raise UserError(f"fabricsim: no study outputs in {_shown(out)}; run 'fabricsim reproduce all --quick' first"
                        + ("" if out_dir is None else f" with --out {out_dir}"))
    p = write_report(reports, html_path or out / "report.html", __version__)
    n = sum(len(r.comparisons) for r in reports)
    ok = sum(c.passed for r in reports for c in r.comparisons)
    k = len(reports)
    click.echo(f"wrote {_shown(p)} ({k} stud{'y' if k == 1 else 'ies'}, {ok}/{n} numbers within tolerance)")
