"""The link view of a run: the busiest directed links as a table, and the fabric drawn with each link coloured by its utilization.

The rows are the record's `links` (`RunRecord.links()`, written by the engine's one writer of the --json object):
utilization = bytes·8 / (line rate · span), the span being the completion time when the workload has one, else
the run's end (`RunRecord.links_span_s`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..units import format_duration, format_rate, format_size

BUSIEST = 5
"""How many links the human summaries name."""


def busiest(links: list[dict[str, Any]], n: int = BUSIEST) -> list[dict[str, Any]]:
    """The first `n` rows of `links` (which come busiest first) that carried anything."""
    return [x for x in links[:n] if x["bytes"] > 0]


def _pct(u: float | None) -> str:
    return "-" if u is None else f"{100 * u:.1f}%"


def _peak(x: dict[str, Any]) -> str:
    if x["peak_bytes"] is None:
        return "n/a (flow)"
    return f"{format_size(x['peak_bytes'])} / {x['peak_packets']:,} pkts"


def links_table(links: list[dict[str, Any]], span_s: float, n: int = BUSIEST, title: str | None = None):
    """A rich Table of the `n` busiest links (name, utilization %, mean Gb/s, bytes, peak queue, PFC pauses, drops),
    its title saying how many links there are in all and over which span utilization is measured. A link that a
    `link_rate` event changed says so after its name ("leaf0->spine1 (25 Gb/s at the end)"): its utilization is
    over the topology's line rate."""
    from rich.table import Table

    top = busiest(links, n)
    used = sum(1 for x in links if x["bytes"] > 0)
    head = title or (f"busiest links: {len(top)} of {len(links):,} directed links ({used:,} carried traffic; "
                     f"utilization over {format_duration(span_s * 1e12)}; --json has all)")
    t = Table(title=head, title_justify="left")
    for col in ("link", "utilization", "mean rate", "bytes", "peak queue", "PFC pauses", "drops"):
        t.add_column(col, justify="left" if col == "link" else "right", no_wrap=True)
    for x in top:
        name = x["name"] if x.get("rate_end_bps") is None else f"{x['name']} ({format_rate(x['rate_end_bps'])} at the end)"
        t.add_row(name, _pct(x["utilization"]), format_rate(x["gbps"] * 1e9) if x["gbps"] is not None else "-",
                  f"{format_size(x['bytes'])} ({x['bytes']:,} B)", _peak(x), f"{x['pfc_pauses']:,}", f"{x['drops']:,}")
    return t


def print_busiest(con, rec, n: int = BUSIEST) -> None:
    """Print the busiest-links table of `rec` on the rich console `con` (nothing for a record without links)."""
    links = rec.links()
    if links:
        con.print(links_table(links, rec.links_span_s, n))


def utilization_by_edge(links: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """{(node, peer): utilization} of each directed link, parallel links (`#k`) folded to their busiest."""
    out: dict[tuple[str, str], float] = {}
    for x in links:
        a, _, b = x["name"].partition("->")
        b = b.split("#", 1)[0]
        u = x["utilization"] or 0.0
        out[(a, b)] = max(out.get((a, b), 0.0), u)
    return out


def draw_links(scenario, run, path: str | Path, title: str = "") -> Path:
    """Draw the fabric of `scenario` (`fabricsim topology --figure`'s drawing) with each link coloured and
    thickened by the utilization of its busier direction in `run` (a RunRecord, or its (links, links_span_s)); a
    colour bar gives the scale (0..max). Raises ValueError for fabrics of more than `topology.draw.MAX_NODES` nodes."""
    from ..topology.draw import LAYERED_KINDS, draw

    links, span_s = run if isinstance(run, tuple) else (run.links(), run.links_span_s)
    net = scenario.topology.network()
    draw(net, path, layered=scenario.topology.kind in LAYERED_KINDS,
         title=(title or "link utilization") + f" (over {format_duration(span_s * 1e12)})",
         link_utilization=utilization_by_edge(links))
    return Path(path)
