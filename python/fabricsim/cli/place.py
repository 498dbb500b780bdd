"""`fabricsim place`: rank placements of a job on a fabric by predicted completion time (the placement advisor)."""

from __future__ import annotations

import sys

import click

from ..collectives.fabrics import builtin_fabrics, default_fabric
from ..collectives.patterns import PATTERNS, RENAMED_PATTERNS
from ._common import (SEED,
    PATTERN_RENAMED_WHY,
    Fabric,
    FiniteFloat,
    RenamedChoice,
    check_figure_path,
    deprecated_option,
    echo_json,
    fabric_option,
    resolve_trace,
    seeds_option,
    size_option,
)

MIB = 1 << 20

FABRICS = builtin_fabrics()
"""The built-in fabrics of `place --fabric` (and `cluster --fabric`): fabricsim/_data/fabrics/NAME.toml, each with
its one-line description; `default_fabric()` is the one whose file says `default = true`."""


@click.command("place")
@click.option("--nodes", type=click.IntRange(min=2), default=None, metavar="N",
              help="Nodes of the job (a node drives --interfaces NICs of one server; several nodes may share a "
                   "server while it has free NICs, see --per-server). With --trace: its ranks (the default).")
@fabric_option(FABRICS, default=default_fabric(),
               what="A file's hosts are the servers, by name (numbered 1..H if its [fabric] table says so).")
@deprecated_option("--scenario", lambda v: {"fabric": Fabric(v, path=v)}, lambda v: f"--fabric {v}")
@click.option("--interfaces", type=click.IntRange(1, 8), default=1, show_default=True, metavar="K",
              help="NICs per node; the collective runs once per interface (NIC k to NIC k) with --size each.")
@click.option("--pattern", type=RenamedChoice(PATTERNS, RENAMED_PATTERNS, PATTERN_RENAMED_WHY),
              default="shift-all-reduce", show_default=True)
@size_option("10MiB", "Message size S per interface, as `fabricsim collective --size`")
@deprecated_option("--msg-mb", lambda v: {"size": round(v * MIB)}, lambda v: f"--size {v:g}MiB",
                   type=FiniteFloat(min=0, min_open=True))
@click.option("--trace", default=None, metavar="PREFIX|DIR",
              help="A Chakra trace (PREFIX.{rank}.et, or a folder of one, as `trace synth --out DIR` writes) instead "
                   "of --pattern: its ranks are the nodes.")
@click.option("--busy", default=None, metavar="BUSY.csv",
              help="Occupied servers or NICs and background jobs. Columns: server (required), nic (blank = the whole "
                   "server), job (rows with one job name are the nodes of a background job that keeps running and "
                   "shares the links), pattern and msg_mb (the job's; default shift-all-reduce, 10).")
@click.option("--top", type=click.IntRange(min=1), default=2, show_default=True, metavar="T",
              help="Placements confirmed at --confirm-with fidelity, ranked first; the next 3 follow with the flow "
                   "engine's prediction (fidelity flow).")
@click.option("--confirm-with", type=click.Choice(["hybrid", "packet"]), default="hybrid", show_default=True,
              help="The fidelity that confirms the best T: hybrid (the packet engine with steady-state fast-forward, "
                   "docs/guide/hybrid.md) or packet. The flow engine models no buffers and is pessimistic by up to "
                   "28% on contended collectives, so it only ranks the candidates.")
@seeds_option("Runs K per confirmed placement, seeds S..S+K-1 (ECMP draws); the 95% CI is over them.", default=3)
@click.option("--flow-seeds", type=click.IntRange(min=1), default=None, metavar="F",
              help="Flow-engine runs per scored placement, seeds S..S+F-1 [default: 3 up to 100 servers, else 1].")
@click.option("--per-server", type=click.IntRange(min=1), default=None, metavar="M",
              help="At most M nodes per server, background jobs' nodes included [default: as many as its free NICs allow].")
@click.option("--evals", "max_evals", type=click.IntRange(min=1), default=None, metavar="N",
              help="Distinct placements the search scores [default: 300 up to 100 servers, else 60].")
@click.option("--budget", "budget_s", type=FiniteFloat(min=0), default=None, metavar="SECONDS",
              help="Also stop the local search after this long (the result then depends on the machine's speed).")
@click.option("--no-confirm", is_flag=True, help="Rank by the flow engine only (no confirming runs).")
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="The first seed S: of the engine runs (ECMP draws, S..S+K-1) and of the local search's RNG.")
@click.option("--figure", default=None, metavar="FILE.png", help="Draw the ranking (completion time and 95% CI).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: placements (servers, completion_ms, ci95_ms, fidelity, ...), best first; "
                   "bottlenecks; why.")
def place(nodes, fabric, interfaces, pattern, size, trace, busy, top, confirm_with, seeds, flow_seeds,
          per_server, max_evals, budget_s, no_confirm, seed, figure, as_json) -> None:
    """Where should this job go? Rank placements of N nodes on a fabric by predicted completion time.

    The search scores candidates (the fabric's named placements, pack and spread families, Chic-sched-like
    constraint relaxation: the tightest server, rack, then pod that holds the job) with the flow engine, improves
    the best by local search (moving a node to a free server, swapping two nodes' ranks), and runs the best T at
    hybrid fidelity (or --confirm-with packet) over R seeds. It prints the ranking (completion time in ms, mean ± 95% CI), the winner's
    busiest links and one sentence on why it wins. Progress goes to stderr.

    On a GPU fabric (rail_optimized) a node is one GPU, a server is a GPU server (gpus_per_server GPUs on one
    NVSwitch; ids su{U}.s{S}, its NICs 0..G-1 its GPUs), a rack is a scalable unit's rail leaves and a pod the
    scalable unit; pack fills a server's GPUs, then the next server of its SU, and spread puts one GPU per server.

    \b
    Examples:
      fabricsim place --nodes 8
      fabricsim place --nodes 8 --per-server 1 --busy busy.csv --json
      fabricsim place --fabric examples/leaf_spine_16.toml --nodes 4 --pattern all-to-all --size 4MiB
      fabricsim place --fabric cpo_baseline --nodes 32 --top 2 --seeds 2
    """
    from ..advisor.api import place as advise

    check_figure_path("fabricsim place", figure)
    say = None if as_json or not sys.stderr.isatty() else (lambda s: click.echo(f"  {s}", err=True))
    res = advise(nodes, fabric=fabric.name, scenario=fabric.path, pattern=pattern, msg_mb=size / MIB,
                 interfaces=interfaces, trace=resolve_trace(trace) if trace else None, busy=busy, top=top, seeds=seeds, per_server=per_server, budget_s=budget_s, max_evals=max_evals,
                 flow_seeds=flow_seeds, confirm=not no_confirm, confirm_with=confirm_with, seed=seed, progress=say)
    if figure:
        _figure(res, figure)
    if as_json:
        echo_json(res.to_dict())
        return
    first = res.placements[0]
    click.echo(f"{res.job}, {len(first.servers)} nodes on {res.fabric}: {res.evaluations:,} engine runs in "
               f"{res.wall_s:.1f} s. Best first:")
    width = max(len("server of each node"), *(len(_servers(p.servers)) for p in res.placements))
    click.echo(f"  {'#':>2}  {'completion (ms)':>20}  {'fidelity':8}  {'racks':>5}  {'servers':>7}  "
               f"{'server of each node':{width}}  found by")
    for i, p in enumerate(res.placements, 1):
        ci = f" ± {p.ci95_ms:.3f}" if p.fidelity != "flow" and seeds > 1 or p.ci95_ms else ""
        click.echo(f"  {i:>2}  {p.completion_ms:>11.3f}{ci:>9}  {p.fidelity:8}  {p.racks:>5}  {p.server_count:>7}  "
                   f"{_servers(p.servers):{width}}  {p.origin}")
    if res.bottlenecks:
        links = "; ".join(f"{b['link']} {100 * b['utilization']:.0f}%" for b in res.bottlenecks)
        click.echo(f"Busiest links of the winner (flow engine, seed 1, share of the run they were busy): {links}")
    click.echo(f"Why: {res.why}")
    if figure:
        click.echo(f"Figure: {figure}")


def _servers(ids: list) -> str:
    """Server ids, at most 16 shown."""
    text = ",".join(map(str, ids[:16]))
    return text + (f",… ({len(ids)} nodes)" if len(ids) > 16 else "")


def _figure(res, path: str) -> None:
    """Horizontal bars: each ranked placement's completion time with its 95% CI, best on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = res.placements
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(ps) + 1.5), layout="constrained")
    ax.barh(range(len(ps)), [p.completion_ms for p in ps], xerr=[p.ci95_ms for p in ps],
            color=["C2"] + ["C0"] * (len(ps) - 1), capsize=3)
    ax.set_yticks(range(len(ps)), [f"{p.origin} [{_servers(p.servers)}]" for p in ps], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"predicted completion time (ms; {ps[0].fidelity} engine, 95% CI)")
    ax.set_title(f"fabricsim place: {res.job} on {res.fabric}")
    ax.grid(axis="x", alpha=0.3)
    fig.savefig(path, dpi=120)
    plt.close(fig)
