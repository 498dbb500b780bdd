"""CLI pieces of the link view and the exports: the --links-figure and --detail options, the busiest-links table, and the "… N more rows" line of a truncated table."""

from __future__ import annotations

from typing import Callable

import click

from ..errors import UserError

LINKS_FIGURE_HELP = ("Draw the fabric with each link coloured and thickened by its utilization (the busier "
                     "direction's bytes·8 / (line rate · completion time)) to this image file (png, pdf, svg; "
                     "fabrics of at most 2,000 nodes).")

DETAIL_HELP = ("What --perfetto and --timeline show: collectives (default: per rank group, each collective's span "
               "from its first message's release to its last delivery, compute steps merged slot by slot; the "
               "file's size follows collectives x rank groups) or messages (every message and compute step of "
               "every rank: large for big traces; the timeline draws ranks one by one only up to 64 ranks).")


def links_figure_option(fn: Callable) -> Callable:
    """--links-figure FILE: the fabric drawn with its links coloured by utilization."""
    return click.option("--links-figure", "links_figure", metavar="FILE.png", default=None, help=LINKS_FIGURE_HELP)(fn)


def detail_option(fn: Callable) -> Callable:
    """--detail collectives|messages for the timeline and Perfetto exports."""
    return click.option("--detail", type=click.Choice(["collectives", "messages"]), default="collectives",
                        show_default=True, help=DETAIL_HELP)(fn)


def more_rows(shown: int, total: int, what: str) -> str | None:
    """The line under a table that shows `shown` of `total` rows ("… 2,848 more collectives; --json has all"), or
    None when nothing was left out."""
    if total <= shown:
        return None
    return f"… {total - shown:,} more {what}; --json has all"


def print_links(con, rec) -> None:
    """The 5 busiest links of `rec` on the rich console `con`, and how many links there are."""
    from ..report.links import print_busiest

    print_busiest(con, rec)


def check_links_figure(cmd: str, path: str | None, scenario) -> None:
    """Refuse, before simulating, a --links-figure that cannot be drawn: an unknown image suffix or too big a fabric."""
    if path is None:
        return
    from ._common import check_figure_path
    from ..topology.draw import MAX_NODES

    check_figure_path(cmd, path)
    nodes = len(scenario.topology.network().nodes)
    if nodes > MAX_NODES:
        raise UserError(f"{cmd}: --links-figure draws fabrics of at most {MAX_NODES:,} nodes; this one has {nodes:,} "
                        "(the busiest links are in the summary and --json)")


def write_links_figure(cmd: str, path: str | None, scenario, rec, title: str) -> None:
    """Draw the link utilization of `rec` (a RunRecord, or its (links, links_span_s)) on `scenario`'s fabric to
    `path` (nothing without a path)."""
    if path is None:
        return
    from ..report.links import draw_links

    try:
        draw_links(scenario, rec, path, title=title)
    except OSError as e:
        raise UserError(f"{cmd}: --links-figure: cannot write '{path}': {e.strerror or e}") from None
    click.echo(f"wrote the link utilization figure to {path}", err=True)


def preload_figures() -> None:
    """Import matplotlib's Agg canvas on a daemon thread while the engine simulates (it releases the GIL), so that a
    figure drawn after the run does not wait for the import (about a second). Any failure is left to the drawing,
    which imports the same modules and reports it."""
    import threading

    def load() -> None:
        try:
            import matplotlib.backends.backend_agg  # noqa: F401
            import matplotlib.collections  # noqa: F401
            import matplotlib.figure  # noqa: F401
            import matplotlib.lines  # noqa: F401
            import matplotlib.patches  # noqa: F401
        except Exception:  # noqa: BLE001 - the drawing itself will say what is wrong
            pass

    threading.Thread(target=load, name="fabricsim-preload-matplotlib", daemon=True).start()
