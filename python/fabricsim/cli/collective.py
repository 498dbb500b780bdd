"""`fabricsim collective`: a collective on a built-in fabric or on any fabric file, over several seeds."""

from __future__ import annotations


import click

from ..collectives.fabrics import builtin_fabrics, default_fabric
from ..collectives.patterns import PATTERNS, RENAMED_PATTERNS
from ..errors import UserError
from ._common import (SEED,
    EXIT_INCOMPLETE,
    FIDELITY,
    MEMORY_LIMIT,
    PATTERN_RENAMED_WHY,
    Fabric,
    RenamedChoice,
    deprecated_option,
    echo_json,
    fabric_option,
    seed_stats,
    seeds_option,
    size_option,
    stdout_console,
)
from ._links import check_links_figure, links_figure_option, write_links_figure

MIB = 1 << 20

def _parse_ids(text: str, option: str, hosts: list[str], numbered: bool) -> list:
    """Comma-separated node ids: server ids 1..H on a numbered fabric; else 1-based host numbers or host names.
    Returns server ids (numbered) or host names; raises UserError naming the first bad value and the valid range."""
    top = len(hosts)
    valid = f"server ids are 1..{top}" if numbered else f"the fabric's {top} hosts are numbered 1..{top} (or named)"
    out = []
    for raw in (x.strip() for x in text.split(",")):
        if not numbered and raw in hosts:
            out.append(raw)
            continue
        try:
            v = int(raw)
        except ValueError:
            raise UserError(f"fabricsim collective: {option}: '{raw}' is not a node id: {valid}") from None
        if not 1 <= v <= top:
            raise UserError(f"fabricsim collective: {option}: {v} is out of range: {valid}")
        out.append(v if numbered else hosts[v - 1])
    if len(out) < 2:
        raise UserError(f"fabricsim collective: {option}: a collective needs at least 2 nodes, not {len(out)}")
    return out


def _placement(placement: str, fab, sc, hosts: list[str]) -> list[list]:
    """A named placement of the fabric, pack:N or spread:N:R on a numbered leaf-spine (server ids); on a fabric
    file of named hosts, pack:N (the first N hosts) or spread:N (round-robin over the edge switches)."""
    if fab.numbered or placement in fab.placements:
        try:
            return fab.placement(placement)
        except ValueError as e:
            raise UserError(f"fabricsim collective: --placement: {e}") from None
    from ..chakra.lower import placement_endpoints

    kind, _, arg = placement.partition(":")
    if kind not in ("pack", "spread") or not arg.isdigit() or int(arg) < 2:
        names = f"one of its placements ({', '.join(fab.placements)}), " if fab.placements else ""
        raise UserError(f"fabricsim collective: --placement: '{placement}' on a fabric file: give {names}pack:N or "
                        f"spread:N (N ≥ 2 nodes)")
    n = int(arg)
    if n > len(hosts):
        raise UserError(f"fabricsim collective: --placement: {n} nodes, but {sc.source} has {len(hosts)} hosts")
    return [[h for h, _ in placement_endpoints(sc, n, kind)]]


@click.command("collective")
@fabric_option(builtin_fabrics(), default=default_fabric(),
               what="A file's hosts are the candidate nodes, numbered 1..H in fabric order (or named).")
@deprecated_option("--scenario", lambda v: {"fabric": Fabric(v, path=v)}, lambda v: f"--fabric {v}")
@deprecated_option("--topology", lambda v: {"fabric": Fabric(v, name=v)}, lambda v: f"--fabric {v}",
                   type=click.Choice(list(builtin_fabrics())))
@click.option("--pattern", type=RenamedChoice(PATTERNS, RENAMED_PATTERNS, PATTERN_RENAMED_WHY),
              default="shift-all-reduce", show_default=True)
@click.option("--placement", default=None, metavar="PRESET",
              help="One of the fabric's named placements (vela: study 000's Tables II, III, e.g. 4n_2r or 6n_3_3); "
                   "on a fabric of numbered servers (the built-in ones) pack:N (N nodes on consecutive servers) or "
                   "spread:N:R (N nodes round-robin over R racks); on a fabric file of named hosts pack:N (the first "
                   "N hosts) or spread:N (round-robin over the edge switches).")
@click.option("--nodes", default=None, metavar="1,2,7,8",
              help="Server ids 1..H on a fabric of numbered servers (vela: 1-24); on a fabric file of named hosts, "
                   "host numbers 1..H or host names. Repeats = nodes sharing a server.")
@click.option("--nodes-b", default=None, metavar="13,14,...", help="A second, concurrent collective.")
@click.option("--pattern-b", type=RenamedChoice(PATTERNS, RENAMED_PATTERNS, PATTERN_RENAMED_WHY), default=None,
              help="Pattern of the second collective (default: --pattern).")
@size_option("10MiB", "Size S per interface",
             "What S is depends on the pattern: all-to-all: what a node sends to each other node; all-gather: each "
             "node's block, sent to every other node; shift-all-reduce (study 000's All-to-All then All-Gather): S to each "
             "other node in each part; ring-all-reduce: a node's whole buffer, sent in 2(N-1) steps of S/N; "
             "reduce-scatter: the whole buffer, N-1 steps of S/N.")
@deprecated_option("--msg-mib", lambda v: {"size": round(v * MIB)}, lambda v: f"--size {v:g}MiB",
                   type=click.FloatRange(min=0, min_open=True))
@deprecated_option("--msg-mb", lambda v: {"size": round(v * MIB)}, lambda v: f"--size {v:g}MiB",
                   type=click.FloatRange(min=0, min_open=True))
@click.option("--interfaces", type=click.IntRange(1, 4), default=1, show_default=True, help="NICs per node.")
@click.option("--packet-bytes", type=click.IntRange(64, 65536), default=1024, show_default=True)
@click.option("--barrier", is_flag=True, help="Separate phases by a barrier (default: free-running).")
@click.option("--order", type=click.Choice(["sent", "delivered", "parallel"]), default=None,
              help="How a node issues its messages: sent = back to back (the next when the previous has left the "
                   "NIC), delivered = the next after the previous arrived, parallel = all at once. Default: sent for "
                   "All-to-All, parallel for All-Gather (also inside All-Reduce).")
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="The first seed; runs use seeds S..S+K-1 (ECMP is random).")
@seeds_option("Runs K, one per seed.", default=5)
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local worker processes (default: cores; 0 = in this process).")
@FIDELITY
@MEMORY_LIMIT
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (means and 95% CIs, and the first "
                                                     "seed's links: every directed link, busiest first) on stdout.")
@links_figure_option
def collective(fabric, pattern, placement, nodes, nodes_b, pattern_b, size, interfaces, packet_bytes, barrier, order,
               seed, seeds, workers, fidelity, as_json, links_figure) -> None:
    """Run a collective on a built-in fabric or any fabric file over several seeds and report
    completion time, throughput (aggregate and per interface, Gb/s) and packets by switch hops, as mean and 95% CI.

    S (--size) is per interface: with --interfaces K each of a node's K NICs runs the whole collective
    with S. A multi-seed run shows a progress bar on stderr when it is a terminal; the seeds used are printed
    with the result. Runs that do not complete (a message that gave up re-sending its drops, see [retransmit]) are
    named on stderr, and the command exits with 3.

    \b
    Examples:
      fabricsim collective --placement 4n_2r --pattern shift-all-reduce --size 10MiB --seeds 30 --json
      fabricsim collective --fabric examples/leaf_spine_16.toml --placement spread:8 --pattern all-to-all
    """
    import tempfile

    import numpy as np

    from ..sweep import SweepFailed, SweepSpec, intify, run_sweep

    msg_mib = size / MIB  # exact: a power-of-two divisor
    if (placement is None) == (nodes is None):
        raise UserError("fabricsim collective: give exactly one of --placement and --nodes")
    from ..collectives.run import host_nics
    from ..spec import scenario_from_dict

    fab, doc = _fabric(fabric)
    sc = scenario_from_dict({**fab.doc, "seed": seed}, fab.name)
    hosts = list(host_nics(sc))
    check_links_figure("fabricsim collective", links_figure, sc)
    if placement is not None:
        groups = _placement(placement, fab, sc, hosts)
    else:
        groups = [_parse_ids(nodes, "--nodes", hosts, fab.numbered)]
        if nodes_b:
            groups.append(_parse_ids(nodes_b, "--nodes-b", hosts, fab.numbered))
    patterns = [pattern] + [pattern_b or pattern] * (len(groups) - 1)
    base = {"fabric": doc, "source": fab.name, "servers": groups, "patterns": patterns, "msg_mib": msg_mib,
            "interfaces": interfaces, "packet": packet_bytes, "barrier": barrier, "order": order, "fidelity": fidelity,
            "links": True}
    seed_list = list(range(seed, seed + seeds))
    spec = SweepSpec(name="collective", base=base, task="fabricsim.collectives.run:sweep_task", seeds=seed_list)
    where = fabric.text
    label = f"{pattern} on {where.rsplit('/', 1)[-1]}, seeds"
    with tempfile.TemporaryDirectory() as d:
        try:
            res = run_sweep(spec, base, d, workers=workers, quiet=seeds == 1, label=label, transient=True)
        except SweepFailed as e:
            res = e.result
        if res.invalid or res.failed:
            raise UserError(f"fabricsim collective: {(res.invalid + res.failed)[0][1]}")
        rows = sorted(res.rows(), key=lambda r: r["seed"])  # rows, not a frame: a base install has no pandas
    used = [int(r["seed"]) for r in rows]
    short = [r for r in rows if (r.get("incomplete_messages") or 0) > 0]
    out = {"fabric": where, "placement": placement, "servers": groups, "patterns": patterns, "msg_mib": msg_mib,
           "bytes": size, "interfaces": interfaces,
           "fidelity": fidelity or sc.fidelity, "seeds": used, "runs": len(rows),
           "complete": not short,
           "incomplete_runs": [{"seed": int(r["seed"]), "incomplete_messages": int(r["incomplete_messages"])}
                               for r in short]}
    for key in ("completion_time_ms", "throughput_gbps", "throughput_per_interface_gbps"):
        out[key] = seed_stats([r.get(key) for r in rows])  # over the runs that completed (None and NaN dropped)
    cols = dict.fromkeys(c for r in rows for c in r)
    hop_cols = sorted((c for c in cols if c.startswith("packets_") and c.endswith("hop") and c[8:-3].isdigit()),
                      key=lambda c: int(c[8:-3]))
    # The mean over every run, a run without the column counting 0 (numpy's sum / n, as pandas' mean).
    out["hop_packets"] = {c[8:-3]: intify(float(np.asarray([_or0(r.get(c)) for r in rows], dtype=float).mean()))
                          for c in hop_cols}
    for h in ("1", "3"):
        out["hop_packets"].setdefault(h, 0)
    # The links of the first seed's run (every directed link, busiest first; the seeds differ only in ECMP's choices).
    first = rows[0] if rows else {}
    out["links_seed"], out["links_span_s"], out["links"] = first.get("seed"), first.get("links_span_s"), first.get("links")
    if as_json:
        echo_json(out)
    else:
        _print_text(out, pattern, where, groups, size, interfaces)
        if out["links"]:
            out["links_seed"] = int(out["links_seed"])
            from ..report.links import links_table

            stdout_console(140).print(links_table(out["links"], out["links_span_s"], title=(
                f"busiest links of seed {out['links_seed']}: {min(5, len(out['links']))} of {len(out['links']):,} "
                f"directed links (utilization over {out['links_span_s'] * 1e3:.6g} ms; --json has all)")))
    if out["links"]:
        write_links_figure("fabricsim collective", links_figure, sc, (out["links"], out["links_span_s"]),
                           f"{pattern} on {where}, seed {out['links_seed']}: link utilization")
    if short:
        first = short[0]
        click.echo(f"fabricsim collective: {len(short)} of {len(rows)} runs did not complete "
                   f"({_seed_text([int(r['seed']) for r in short])}); seed {int(first['seed'])}: {first['incomplete_reason']}",
                   err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _or0(v) -> float:
    """A metric of one run, 0 when the run has none (None or NaN)."""
    return 0.0 if v is None or v != v else v


def _fabric(fabric: Fabric):
    """The --fabric value read as data, and the document its runs are given (a built-in fabric's name, or the file's
    whole document: its traffic tables are ignored); ScenarioError names the file and field."""
    from ..collectives.fabrics import fabric_from_doc, read_fabric
    from ..spec import read_document

    if fabric.name is not None:
        return read_fabric(fabric.name), fabric.name
    doc = read_document(fabric.path)
    return fabric_from_doc(doc, fabric.path), doc


def _print_text(out: dict, pattern: str, where: str, groups: list, size: int, interfaces: int) -> None:
    """The human summary: what ran, on which seeds, and the means ± 95% CI of the runs that completed."""
    c, t, ti = out["completion_time_ms"], out["throughput_gbps"], out["throughput_per_interface_gbps"]
    used = out["seeds"]
    runs = len(used)
    stat = f"mean ± 95% CI over {runs} runs, {_seed_text(used)}" if runs > 1 else f"one run, seed {used[0]}: no CI"
    if c["n"] < runs:
        stat += f" ({c['n']} completed)"
    hops = sorted(out["hop_packets"].items(), key=lambda kv: int(kv[0]))
    shown = [(k, v) for k, v in hops if v] or hops
    hop_text = ", ".join(f"{k}-hop {v:,}" if isinstance(v, int) else f"{k}-hop {v:,.1f}" for k, v in shown)
    from ..units import format_size

    click.echo(f"{pattern} on {where}, nodes {groups} ({format_size(size)}, {interfaces} interface(s)); {stat}:")
    per_if = "n/a" if ti["mean"] is None else f"{ti['mean']:.2f}"
    click.echo(f"  completion {_pm(c, 3)} ms; throughput {_pm(t, 1)} Gb/s ({per_if} per interface); "
               f"packets by switch hops {hop_text}")


def _pm(x: dict, decimals: int) -> str:
    """mean ± CI with at least `decimals` decimals, more for small means (4 significant digits)."""
    import math

    m = x["mean"]
    if m is None or m != m:
        return "n/a"
    if m:
        decimals = max(decimals, 3 - math.floor(math.log10(abs(m))))
    return f"{m:.{decimals}f}" + ("" if x["ci95"] is None else f" ± {x['ci95']:.{decimals}f}")


def _seed_text(seeds: list[int]) -> str:
    """The seeds as a range when consecutive ("1..5"), else listed ("1, 4, 9")."""
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]}..{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))
