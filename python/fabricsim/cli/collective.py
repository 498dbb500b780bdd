"""`fabricsim collective`: a collective on study 000's Vela-like lossless fabric over several seeds, as means and CIs."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import FIDELITY, echo_json


@click.command("collective")
@click.option("--topology", type=click.Choice(["vela"]), default="vela", show_default=True,
              help="The fabric: vela = study 000's 4 racks x 6 servers, 8 leaves, 4 spines, lossless.")
@click.option("--pattern", type=click.Choice(["all-to-all", "all-gather", "all-reduce", "ring-all-reduce",
                                              "reduce-scatter"]), default="all-reduce", show_default=True)
@click.option("--placement", default=None, metavar="PRESET",
              help="A study 000 preset (Tables II, III), e.g. 4n_2r or 6n_3_3; or pack:N (N nodes on consecutive "
                   "servers) or spread:N:R (N nodes round-robin over R racks).")
@click.option("--nodes", default=None, metavar="1,2,7,8", help="Server ids (1-24, repeats = nodes sharing a server).")
@click.option("--nodes-b", default=None, metavar="13,14,...", help="A second, concurrent collective.")
@click.option("--pattern-b", default=None, help="Pattern of the second collective (default: --pattern).")
@click.option("--msg-mb", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="Message size in MiB (per destination, per interface).")
@click.option("--interfaces", type=click.IntRange(1, 4), default=1, show_default=True, help="NICs per node.")
@click.option("--packet-bytes", type=click.IntRange(64, 65536), default=1024, show_default=True)
@click.option("--barrier", is_flag=True, help="Separate phases by a barrier (default: free-running).")
@click.option("--order", type=click.Choice(["sent", "delivered", "parallel"]), default=None,
              help="How a node issues its messages: sent = back to back (the next when the previous has left the "
                   "NIC), delivered = the next after the previous arrived, parallel = all at once. Default: sent for "
                   "All-to-All, parallel for All-Gather (also inside All-Reduce).")
@click.option("--seeds", type=click.IntRange(min=1), default=30, show_default=True, help="Runs (ECMP is random).")
@click.option("--workers", type=click.IntRange(min=0), default=None, help="Local worker processes (default: cores).")
@FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (means and 95% CIs) on stdout.")
def collective(topology, pattern, placement, nodes, nodes_b, pattern_b, msg_mb, interfaces, packet_bytes, barrier,
               order, seeds, workers, fidelity, as_json) -> None:
    """Run a collective on the Vela-like lossless fabric over several seeds and report completion time,
    throughput (aggregate and per interface, Gb/s) and packets by switch hops, as mean and 95% CI."""
    import tempfile

    from ..report.stats import ci95
    from ..sweep import SweepSpec, run_sweep

    if (placement is None) == (nodes is None):
        raise UserError("fabricsim: give exactly one of --placement and --nodes")
    if placement is not None:
        from ..studies.orchestration import placement_groups

        try:
            groups = placement_groups(placement)
        except ValueError as e:
            raise UserError(f"fabricsim: --placement: {e}") from None
    else:
        try:
            groups = [[int(x) for x in nodes.split(",")]]
            if nodes_b:
                groups.append([int(x) for x in nodes_b.split(",")])
        except ValueError:
            raise UserError("fabricsim: --nodes/--nodes-b take comma-separated server ids, e.g. 1,2,7,8") from None
        if any(not 1 <= s <= 24 for g in groups for s in g) or any(len(g) < 2 for g in groups):
            raise UserError("fabricsim: each collective needs at least 2 nodes on servers 1..24")
    patterns = [pattern] + [pattern_b or pattern] * (len(groups) - 1)
    base = {"servers": groups, "patterns": patterns, "msg_mib": msg_mb, "interfaces": interfaces,
            "packet": packet_bytes, "barrier": barrier, "order": order, "fidelity": fidelity}
    spec = SweepSpec(name="collective", base=base, task="fabricsim.collectives.run:sweep_task", seeds=seeds)
    with tempfile.TemporaryDirectory() as d:
        res = run_sweep(spec, base, d, workers=workers, quiet=as_json)
        if res.invalid or res.failed:
            raise UserError(f"fabricsim: {(res.invalid + res.failed)[0][1]}")
        df = res.frame()
    out = {"placement": placement, "servers": groups, "patterns": patterns, "msg_mib": msg_mb,
           "interfaces": interfaces, "fidelity": fidelity or "packet", "runs": len(df)}
    for key in ("completion_time_ms", "throughput_gbps", "throughput_per_interface_gbps"):
        mean, _, half, _ = ci95(df[key])
        out[key] = {"mean": mean, "ci95": None if half != half else half}
    out["hop_packets"] = {"1": float(df["packets_1hop_m"].mean() * 1e6), "3": float(df["packets_3hop_m"].mean() * 1e6)}
    if as_json:
        echo_json(out)
        return
    c, t, ti = out["completion_time_ms"], out["throughput_gbps"], out["throughput_per_interface_gbps"]
    click.echo(f"{pattern} on {groups} ({msg_mb:g} MiB, {interfaces} interface(s), {len(df)} runs):")
    click.echo(f"  completion {c['mean']:.3f} ± {c['ci95'] or 0:.3f} ms; throughput {t['mean']:.1f} ± {t['ci95'] or 0:.1f} Gb/s "
               f"({ti['mean']:.2f} per interface); packets 1-hop {out['hop_packets']['1'] / 1e6:.3f} M, "
               f"3-hop {out['hop_packets']['3'] / 1e6:.3f} M")
