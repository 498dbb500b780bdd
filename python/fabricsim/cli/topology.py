"""`fabricsim topology`: the size, diameter and bisection bandwidth of a scenario's fabric, and optionally a drawing of it."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import MEMORY_LIMIT, check_figure_path, echo_json, with_spinner


def _number(v) -> str:
    """A count or a Gb/s figure with thousands separators (an integer without decimals)."""
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.3f}".rstrip("0")
    return f"{int(v):,}"


@click.command("topology")
@click.argument("scenario", metavar="SCENARIO.toml")
@MEMORY_LIMIT
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@click.option("--figure", metavar="OUT.png", default=None,
              help="Also draw the fabric to this image file (png, pdf, svg, ...; fabrics of at most 2,000 nodes): "
                   "Clos fabrics in layers, hosts at the bottom.")
def topology(scenario: str, as_json: bool, figure: str | None) -> None:
    """Describe the fabric of SCENARIO.toml: hosts, switches, links, diameter and bisection bandwidth.

    \b
    kind            the topology family
    hosts           nodes that send and receive (a rail cluster's GPUs)
    switches        nodes that forward (a rail cluster's NICs and NVSwitches included)
    links           full-duplex links, parallel ones counted one by one
    diameter_hops   links on the longest least-cost host-to-host route (the most links among
                    the least-cost routes of any two hosts: ECMP's longest choice; routing
                    policies such as PXN, Valiant or dimension order not applied); - if some
                    hosts cannot reach each other
    bisection_gbps  bandwidth across a balanced cut of the hosts, in Gb/s: the family's closed
                    form (fat_tree3, rail_optimized, dragonfly, torus; see the scenario
                    reference), else an estimate (Kernighan–Lin bisection, then the exact min
                    cut between the two host halves: an upper bound; - above 10,000 nodes)
    policy          the routing policy the family adds to least-cost ECMP, or none

    Example: fabricsim topology fabric.toml --figure fabric.png
    """
    from ..spec import load_scenario
    from ..topology.draw import LAYERED_KINDS, MAX_NODES, draw
    from ..topology.metrics import summary

    check_figure_path("fabricsim topology", figure)
    sc = load_scenario(scenario)
    net = sc.topology.network()
    if figure is not None and len(net.nodes) > MAX_NODES:
        raise UserError(f"fabricsim topology: --figure draws fabrics of at most {MAX_NODES:,} nodes; {scenario} has "
                        f"{len(net.nodes):,} (drop --figure, or draw a smaller instance of the family)")
    try:
        info = with_spinner(lambda: summary(sc.topology, net), f"measuring {scenario}", quiet=as_json)
    except ValueError as e:
        raise UserError(f"fabricsim topology: {scenario}: {e}") from None
    if as_json:
        echo_json({"scenario": scenario, **info})
    else:
        method = f" ({info['bisection']})" if info["bisection"] else ""
        rows = [("kind", info["kind"]), ("hosts", _number(info["hosts"])), ("switches", _number(info["switches"])),
                ("links", _number(info["links"])), ("diameter_hops", _number(info["diameter_hops"])),
                ("bisection_gbps", _number(info["bisection_gbps"]) + method),
                ("policy", info["policy"] or "none (least-cost ECMP)")]
        click.echo(scenario)
        for key, value in rows:
            click.echo(f"  {key:<15} {value}")
    if figure is not None:
        try:
            draw(net, figure, layered=sc.topology.kind in LAYERED_KINDS, title=f"{scenario} ({sc.topology.kind})")
        except OSError as e:
            raise UserError(f"fabricsim topology: --figure: cannot write '{figure}': {e.strerror or e}") from None
        click.echo(f"wrote {figure}", err=True)
