"""`fabricsim run` and `fabricsim validate`: simulate or check one scenario file."""

from __future__ import annotations

import math

import click

from ..errors import UserError
from ..units import format_duration, format_rate, format_size
from ._common import (SEED, EXIT_INCOMPLETE, FIDELITY, MEMORY_LIMIT, check_figure_path, echo_json, incomplete_runs, load_checked,
                      run_control, seed_stats, seed_text, seeds_option, simulate, simulate_seeds, stdout_console)
from ._links import check_links_figure, links_figure_option, print_links, write_links_figure


@click.command("run")
@click.argument("scenario", metavar="SCENARIO.toml")
@click.option("--seed", type=SEED, default=None, help="Override the scenario's seed (the first, S).")
@seeds_option("Runs K, seeds S..S+K-1 (S = --seed, else the scenario's): one line per run and the completion "
              "time's mean ± 95% CI (Student t over the complete runs); with --json one object with every run's "
              "record in `runs`. Ctrl-C keeps the finished seeds (printed, exit 130). Default: one run.")
@FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object (the run record) on stdout.")
@click.option("--figure", metavar="FILE.png", default=None,
              help="Also draw the run to this image file: the delivered throughput over time (with [measure] "
                   "throughput_interval) with each network event ([[events]]: link down or up, bit errors, link rates) as a "
                   "labelled dashed line; RoCE runs ([pfc], [ecn] or transport = \"rdma\") add the bottleneck queue "
                   "(from the queue samples), each queue pair's rate and the PFC pause timeline. A UEC run "
                   "(transport = \"uec\") draws instead each connection's window (or RCCC credit) over time, 16 at "
                   "most and the median over all; the FCT CDF (sender's last ACK - start); the bytes each upward "
                   "switch port carried (leaf->spine, edge->aggregation->core), per layer with its max/mean; and its "
                   "trims, NACKs, re-sent packets, timeouts and ECN echoes. A run with neither draws the fabric with "
                   "each link coloured by its utilization (as --links-figure).")
@links_figure_option
@run_control
def run(scenario: str, seed: int | None, seeds: int | None, fidelity: str | None, as_json: bool, figure: str | None,
        links_figure: str | None, max_events: int | None, max_wall: float | None, partial: bool, quiet: bool) -> None:
    """Simulate SCENARIO.toml (packet engine, or --fidelity flow) and print a summary.

    The JSON record has completion_time_s (null without messages or if one never completed), per-flow
    FlowMonitor statistics (flows), packet totals (tx = rx + dropped + in_flight), packets by switch
    hops, per-queue drops and peaks, links (every directed link, busiest first: bytes, utilization over
    links_span_s, the completion time or else the end; peak queue, PFC pauses, drops), events, wall_s, seed,
    complete, incomplete_messages, halted and deadlock
    (the cycle of paused ports that stopped a PFC fabric, or null); a RoCE run adds pfc_pauses,
    pfc_paused_s, ecn_marks and cnps; a UEC run adds uec (trims, NACKs, retransmits, timeouts, ECN echoes and
    the other counters of RunRecord.uec) and each message's acked_s and retransmits, and prints a UEC line
    after the RoCE line; a run whose messages lost packets adds retransmit (lost_packets,
    timeouts, re-sent packets and bytes, abandoned messages), and one with [[events]] network_events.

    Messages re-send lost packets on a timeout ([retransmit]), so a lossy fabric or a failed link costs time
    (the record's retransmit counts it). A run whose workload did not complete (a message that gave up
    retransmitting, an RDMA message that lost its tail, a PFC deadlock) prints why on stderr and exits with 3,
    the record still printed. Ctrl-C stops the engine at once (exit 130); runs longer than 2 s show a progress bar
    on a terminal.
    """
    from ..engine import run as run_scenario
    from ..spec import load_scenario

    # One validation: the engine compiles the scenario once and reports any problem before simulating.
    check_figure_path("fabricsim run", figure)
    sc = load_scenario(scenario)
    if figure is not None and not sc.roce and sc.measure.throughput_interval is None:
        links_figure, figure = links_figure or figure, None
    check_links_figure("fabricsim run", links_figure, sc)
    if seeds is not None:
        if figure is not None or links_figure is not None:
            raise UserError("fabricsim run: --figure and --links-figure draw one run; give them without --seeds")
        first = sc.seed if seed is None else seed
        recs = simulate_seeds(lambda s, **kw: run_scenario(sc, seed=s, fidelity=fidelity, **kw),
                              list(range(first, first + seeds)), f"simulating {scenario}", max_events=max_events,
                              max_wall=max_wall, partial=partial, quiet=quiet,
                              show=lambda rs: _show_seeds(scenario, rs, as_json))
        _show_seeds(scenario, recs, as_json)
        incomplete_runs(f"fabricsim: {scenario}", recs, None if sc.stop is None else sc.stop * 1e-12)
        return
    show = (lambda r: click.echo(r.to_json())) if as_json else (lambda r: _print_summary(scenario, r))
    rec = simulate(lambda **kw: run_scenario(sc, seed=seed, fidelity=fidelity, **kw), f"simulating {scenario}",
                   max_events=max_events, max_wall=max_wall, partial=partial, quiet=quiet, show=show)
    show(rec)
    if figure is not None:
        _draw(rec, figure, scenario, sc)
    write_links_figure("fabricsim run", links_figure, sc, rec, f"{scenario}: link utilization")
    reason = rec.incomplete_reason(None if sc.stop is None else sc.stop * 1e-12)
    if reason is not None:
        click.echo(f"fabricsim: {scenario}: {reason}", err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def seeds_summary(recs: list) -> dict:
    """What a multi-seed run adds to its records: the seeds, how many completed, and the completion time's mean
    and 95% CI over the runs that completed."""
    return {"seeds": [r.seed for r in recs], "complete": all(r.complete for r in recs),
            "completion_time_s": seed_stats([r.completion_time_s for r in recs if r.complete])}


def seed_line(rec) -> str:
    """One run of several: its seed, completion time, packets and events."""
    ct, p = rec.completion_time_s, rec.packets
    return (f"seed {rec.seed}: completion {format_duration(ct * 1e12) if ct is not None else 'n/a'}, packets tx "
            f"{p['tx']} rx {p['rx']} dropped {p['dropped']}, {rec.events} events in {rec.wall_s:.3f} s"
            + ("" if rec.complete else " (incomplete)"))


def mean_line(summary: dict) -> str:
    """The completion time over seeds: mean ± 95% CI of the runs that completed."""
    st, seeds = summary["completion_time_s"], summary["seeds"]
    if st["mean"] is None:
        return f"completion over {seed_text(seeds)}: n/a (no run completed)"
    ci = "" if st["ci95"] is None else f" ± {format_duration(st['ci95'] * 1e12)}"
    return (f"completion over {seed_text(seeds)}: {format_duration(st['mean'] * 1e12)}{ci} (mean ± 95% CI of "
            f"{st['n']} complete run{'s' if st['n'] != 1 else ''})")


def _show_seeds(path: str, recs: list, as_json: bool) -> None:
    """A multi-seed run: one JSON object (the scenario, the summary, every record in `runs`), or a line per seed
    and the mean."""
    summary = seeds_summary(recs)
    if as_json:
        echo_json({"scenario": path, **summary, "runs": [r.to_json_dict() for r in recs]})
        return
    click.echo(f"{path}  fidelity {recs[0].fidelity}")
    for r in recs:
        click.echo(f"  {seed_line(r)}")
    click.echo(mean_line(summary))


@click.command("validate")
@click.argument("scenario", metavar="SCENARIO.toml")
@MEMORY_LIMIT
def validate(scenario: str) -> None:
    """Check SCENARIO.toml completely (fields, names, reachability, paths) without simulating."""
    load_checked(scenario)
    click.echo(f"{scenario}: ok")


def _draw(rec, figure: str, scenario: str, sc) -> None:
    """Draw the run to `figure`: a UEC run's figure (report/uec.py), else the throughput, RoCE and pause panels."""
    try:
        if rec.has_uec:
            from ..report.uec import uec_figure

            uec_figure(rec, figure, title=scenario, network=sc.topology.network(),
                       cc=sc.uec.cc if sc.uec is not None else "nscc")
        else:
            from ..report.roce import run_figure

            run_figure(rec, figure, title=scenario)
    except OSError as e:
        raise UserError(f"fabricsim run: --figure: cannot write '{figure}': {e.strerror or e}") from None
    click.echo(f"wrote {figure}", err=True)


def retransmit_lines(rec) -> list[str]:
    """The run's network events and what its message retransmissions cost, one line each (none for a run with
    neither)."""
    from ..report.figures import network_events

    out = [f"network event at {format_duration(t * 1e12)}: {label}" for t, label in network_events(rec)]
    rt = rec.retransmit
    if rt:
        out.append(f"retransmission: {rt['lost_packets']:,} message packets lost, {rt['packets']:,} re-sent "
                   f"({format_size(rt['bytes'])}) after {rt['timeouts']:,} timeouts"
                   + (f", {rt['abandoned']:,} messages gave up" if rt["abandoned"] else ""))
    return out


def roce_summary(rec) -> str:
    """One line on a RoCE run: PFC pauses and paused time, ECN marks, CNPs, and the deadlock if one stopped it."""
    line = (f"RoCE: {rec.pfc_pauses:,} PFC pauses ({format_duration(rec.pfc_paused_s * 1e12)} paused over all "
            f"ports), {rec.ecn_marks:,} ECN marks, {rec.cnps:,} CNPs")
    return line + (f"; DEADLOCK: {rec.deadlock}" if rec.deadlock else "; no deadlock")


def uec_summary(rec) -> str | None:
    """One line on a UEC run (None for any other): packets trimmed, NACKs, packets re-sent, timeouts and ECN echoes,
    and the FCT as uet-htsim counts it (the sender's last ACK less the start): mean and p99 (nearest rank) over the
    connections that finished. Every command that prints a run summary prints it after the RoCE line."""
    if not rec.has_uec:
        return None
    import numpy as np

    u = rec.uec
    fct = rec.uec_fct_s()
    done = fct[~np.isnan(fct)]
    if len(done):
        p99 = float(np.sort(done)[max(1, math.ceil(0.99 * len(done))) - 1])
        fct_text = (f"FCT (sender's last ACK) mean {format_duration(float(done.mean()) * 1e12)}, p99 "
                    f"{format_duration(p99 * 1e12)}" + ("" if len(done) == len(fct) else
                                                       f" over the {len(done):,} of {len(fct):,} that finished"))
    else:
        fct_text = "FCT n/a (no connection finished)"

    def n(k: str, one: str, many: str | None = None) -> str:
        return f"{u[k]:,} {one if u[k] == 1 else (many or one + 's')}"

    return (f"UEC: {n('trims', 'packet trimmed', 'packets trimmed')}, {n('nacks', 'NACK')}, {u['retransmits']:,} "
            f"re-sent, {n('timeouts', 'timeout')}, {n('ecn_echoes', 'ECN echo', 'ECN echoes')}; {fct_text}")


def transport_lines(rec) -> list[str]:
    """The RoCE line (PFC, ECN, CNPs) and the UEC line of a run, those it has: what every command that summarizes
    one run prints after its tables."""
    out = [roce_summary(rec)] if rec.has_roce else []
    line = uec_summary(rec)
    return out + ([line] if line else [])


def _print_summary(path: str, rec) -> None:
    from rich.table import Table

    con = stdout_console(140)
    p = rec.packets
    ct = rec.completion_time_s
    con.print(f"[bold]{path}[/bold]  seed {rec.seed}  fidelity {rec.fidelity}")
    con.print(
        f"completion: {format_duration(ct * 1e12) if ct is not None else 'n/a'}   "
        f"end: {format_duration(rec.end_time_s * 1e12)}   packets tx {p['tx']} rx {p['rx']} "
        f"dropped {p['dropped']} in flight {p['in_flight']}   "
        f"{rec.events} events in {rec.wall_s:.3f} s"
    )
    for line in retransmit_lines(rec):
        con.print(line)
    flows = rec.flows(limit=20)
    n_flows = rec.n_flows
    t = Table(title=f"flows ({n_flows})", title_justify="left")
    for col in ("name", "src", "dst", "tx pkts", "rx pkts", "lost", "throughput", "mean delay", "max delay", "done"):
        t.add_column(col, justify="left" if col in ("name", "src", "dst") else "right", no_wrap=True)
    for f in flows[:20]:
        t.add_row(
            f["name"], f["src"], f["dst"], str(f["tx_packets"]), str(f["rx_packets"]), str(f["lost_packets"]),
            format_rate(f["throughput_bps"]),
            format_duration(f["mean_delay_s"] * 1e12) if f["mean_delay_s"] is not None else "-",
            format_duration(f["max_delay_s"] * 1e12) if f["max_delay_s"] is not None else "-",
            format_duration(f["complete_s"] * 1e12) if f["complete_s"] is not None else "-",
        )
    con.print(t)
    if n_flows > 20:
        con.print(f"... {n_flows - 20} more flows (use --json for all)")
    busiest = sorted(rec.queues(), key=lambda q: (q["drops"], q["peak_packets"]), reverse=True)[:8]
    if busiest:
        q = Table(title="busiest queues", title_justify="left")
        for col in ("queue", "tx pkts", "drops", "peak pkts", "peak bytes"):
            q.add_column(col, justify="left" if col == "queue" else "right", no_wrap=True)
        for row in busiest:
            q.add_row(row["name"], str(row["tx_packets"]), str(row["drops"]), str(row["peak_packets"]),
                      format_size(row["peak_bytes"]))
        con.print(q)
    hosts = rec.host_busy()
    if hosts:
        h = Table(title="hosts: busy time (communication = a message of the host in flight; exposed = with no compute running)",
                  title_justify="left")
        for col in ("host", "compute", "communication", "exposed communication"):
            h.add_column(col, justify="left" if col == "host" else "right", no_wrap=True)
        for row in hosts[:20]:
            h.add_row(row["host"], format_duration(row["compute_s"] * 1e12), format_duration(row["comm_s"] * 1e12),
                      format_duration(row["exposed_comm_s"] * 1e12))
        con.print(h)
        if len(hosts) > 20:
            con.print(f"... {len(hosts) - 20} more hosts (use --json for all)")
    print_links(con, rec)
    if rec.hops:
        con.print("packets by switch hops: " + ", ".join(f"{k}: {v}" for k, v in rec.hops.items()))
    for line in transport_lines(rec):
        con.print(line, markup=False, soft_wrap=True)  # one line each, however wide the terminal
