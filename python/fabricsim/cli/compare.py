"""`fabricsim compare`: run records side by side (a table, a figure, an HTML page). Not `cluster`'s policy
comparison (fabricsim.cluster.compare), which compares placement policies inside one cluster simulation."""

from __future__ import annotations

import click

from ..collectives.fabrics import builtin_fabrics
from ..errors import UserError
from ._common import check_figure_path, echo_json, fabric_option, stdout_console


@click.command("compare")
@click.argument("files", nargs=-1, metavar="A.json B.json … | STORE")
@fabric_option(builtin_fabrics(), what="The fabric the runs used: its links' rates and delays give each message's "
                                       "ideal FCT, and so the slowdown (without it, no slowdown).")
@click.option("--figure", metavar="FILE.png", default=None,
              help="Also draw the comparison (completion, FCT CDF, slowdown CDF, PFC pauses, ECN marks and CNPs, "
                   "peak queue) to this image file.")
@click.option("--html", "html_path", metavar="FILE.html", default=None,
              help="Also write a self-contained HTML page: the table and the figure.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (every file's numbers) on stdout.")
def compare(files: tuple[str, ...], fabric, figure: str | None, html_path: str | None, as_json: bool) -> None:
    """Compare runs side by side: completion time, FCT percentiles, slowdown, PFC pauses, ECN marks, CNPs, the
    peak queue and, for UEC runs, trims, NACKs, timeouts and re-sent packets, one column per file.

    Each file is the JSON of `fabricsim run --json` (one run) or of `run --seeds K --json` (K runs, pooled:
    completion time as mean ± 95% CI, Student t), or a sweep store (its folder or results.sqlite: one column per
    point, its seeds pooled; a store keeps run-level metrics, so those columns have no FCT or slowdown). A message's FCT is complete_s - start_s; its slowdown is FCT /
    ideal FCT, the ideal being its bytes on the wire at the path's bottleneck rate plus the path's one-way base
    latency (link delays and switch latencies on the fewest-hops path; needs --fabric). Percentiles are
    nearest-rank. Example:

    \b
      fabricsim run examples/roce_incast.toml --seeds 3 --json > dcqcn.json
      fabricsim compare dcqcn.json hpcc.json --fabric examples/roce_incast.toml --figure cmp.png
    """
    from .. import __version__
    from ..report import compare as cmp

    if not files:
        raise UserError("fabricsim compare: give one or more run records (A.json B.json …, from fabricsim run --json)")
    check_figure_path("fabricsim compare", figure)
    if html_path is not None:
        from pathlib import Path

        if not Path(html_path).resolve().parent.is_dir():
            raise UserError(f"fabricsim compare: --html: cannot write '{html_path}': its folder does not exist")
    try:
        runs, summaries = cmp.compare(list(files), None if fabric is None else (fabric.name or fabric.path))
    except cmp.CompareError as e:
        raise UserError(f"fabricsim compare: {e}") from None
    shown, hidden = summaries[:cmp.MAX_COLUMNS], len(summaries) - cmp.MAX_COLUMNS
    table = cmp.rows(shown)
    more = (f"... {hidden:,} more column{'s' if hidden != 1 else ''} not shown (of {len(summaries):,}; --json has "
            "every one)") if hidden > 0 else ""
    png = None
    if figure is not None or html_path is not None:
        import io

        fig = cmp.figure(runs[:cmp.MAX_COLUMNS], shown,
                         title="fabricsim compare: " + " vs ".join(s["label"] for s in shown))
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        png = buf.getvalue()
        if figure is not None:
            try:
                fig.savefig(figure, dpi=150)
            except OSError as e:
                raise UserError(f"fabricsim compare: --figure: cannot write '{figure}': {e.strerror or e}") from None
            click.echo(f"wrote {figure}", err=True)
        import matplotlib.pyplot as plt

        plt.close(fig)
    if html_path is not None:
        try:
            with open(html_path, "w", encoding="utf-8") as f:
                f.write(cmp.page(shown, table, png, __version__, more))
        except OSError as e:
            raise UserError(f"fabricsim compare: --html: cannot write '{html_path}': {e.strerror or e}") from None
        click.echo(f"wrote {html_path}", err=True)
    if as_json:
        echo_json({"ideal_fct": cmp.IDEAL_FCT, "percentiles": "nearest-rank", "runs": summaries})
        return
    _print(table, shown, more)


def _print(table, summaries, more: str) -> None:
    from rich.table import Table

    from ..report.compare import IDEAL_FCT

    t = Table(title="runs side by side", title_justify="left")
    t.add_column("quantity", justify="left")
    for s in summaries:
        t.add_column(s["label"], justify="right")
    for q, cells in table:
        t.add_row(q, *cells)
    con = stdout_console(140)
    con.print(t)
    if more:
        con.print(more, markup=False)
    con.print(f"slowdown = FCT / ideal FCT; ideal = {IDEAL_FCT}" if any(s["slowdown"] for s in summaries)
              else "slowdown: give --fabric (the fabric the runs used) for each message's ideal FCT", markup=False)
