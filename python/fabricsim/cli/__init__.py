"""The `fabricsim` command line: thin wrappers that parse arguments, call the public API and print.

User errors print one line on stderr and exit with code 2; `--json` prints exactly one JSON object on stdout.
"""

from __future__ import annotations

import json
import sys

import click

from . import __version__
from .errors import FabricsimError, UserError
from .units import format_duration, format_rate, format_size

EXIT_USER_ERROR = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="fabricsim", message="%(prog)s %(version)s")
def cli() -> None:
    """fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics.

    Scenarios are TOML files (see examples/); quantities take units ("5ms", "100Gbps", "10MiB") or
    base-unit numbers (seconds, bit/s, bytes). Every command that simulates accepts --seed and --json.
    """


def _load(path: str):
    from .engine import validate
    from .spec import load_scenario

    sc = load_scenario(path)
    validate(sc)
    return sc


_FIDELITY = click.option("--fidelity", type=click.Choice(["packet", "flow"]), default=None,
                         help="Engine: packet (discrete events: queues, loss, TCP) or flow (max-min fair fluid flows on "
                              "the same routes: much faster, lossless, no queues). Default: the scenario's (packet).")


@cli.command()
@click.argument("scenario", metavar="SCENARIO.toml")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Override the scenario's seed.")
@_FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object (the run record) on stdout.")
def run(scenario: str, seed: int | None, fidelity: str | None, as_json: bool) -> None:
    """Simulate SCENARIO.toml with the packet engine and print a summary.

    The JSON record has completion_time_s (null without messages or if one never completed), per-flow
    FlowMonitor statistics (flows), packet totals (tx = rx + dropped + in_flight), packets by switch
    hops, per-queue drops and peaks, events, wall_s and seed.
    """
    from .engine import run as run_scenario

    sc = _load(scenario)
    from .engine import validate as validate_scenario

    validate_scenario(sc, fidelity)
    rec = _with_spinner(lambda: run_scenario(sc, seed=seed, fidelity=fidelity), f"simulating {scenario}", quiet=as_json)
    if as_json:
        click.echo(json.dumps(rec.to_json_dict()))
    else:
        _print_summary(scenario, rec)


@cli.command()
@click.argument("scenario", metavar="SCENARIO.toml")
def validate(scenario: str) -> None:
    """Check SCENARIO.toml completely (fields, names, reachability, paths) without simulating."""
    _load(scenario)
    click.echo(f"{scenario}: ok")


_POS = click.FloatRange(min=0, min_open=True)
_NONNEG = click.FloatRange(min=0)


@cli.command()
@click.option("--senders", type=click.IntRange(min=1), default=8, show_default=True, help="Senders into the bottleneck.")
@click.option("--transport", type=click.Choice(["udp", "tcp"]), default="udp", show_default=True,
              help="udp: synchronized OnOff bursts; tcp: staggered BulkSend flows.")
@click.option("--rate-mbps", type=_POS, default=30.0, show_default=True, help="UDP payload rate per sender while on.")
@click.option("--on-ms", type=_POS, default=100.0, show_default=True, help="UDP on period.")
@click.option("--off-ms", type=_NONNEG, default=100.0, show_default=True, help="UDP off period (each source starts off).")
@click.option("--start-s", type=_NONNEG, default=1.0, show_default=True, help="When the applications start.")
@click.option("--stagger-s", type=_NONNEG, default=0.5, show_default=True, help="TCP flow i starts at start + i x stagger.")
@click.option("--app-stop-s", type=_POS, default=None, help="When the applications stop [default: duration - 1 s, the study's].")
@click.option("--access-mbps", type=_POS, default=1000.0, show_default=True, help="Sender and receiver link rate.")
@click.option("--access-delay-ms", type=_NONNEG, default=2.0, show_default=True)
@click.option("--bottleneck-mbps", type=_POS, default=100.0, show_default=True, help="leaf -> spine link rate.")
@click.option("--bottleneck-delay-ms", type=_NONNEG, default=5.0, show_default=True)
@click.option("--queue-pkts", type=click.IntRange(min=1), default=100, show_default=True,
              help="The bottleneck queue discipline's packet limit.")
@click.option("--device-queue-pkts", type=click.IntRange(min=1), default=100, show_default=True,
              help="The bottleneck device queue below the discipline.")
@click.option("--qdisc", type=click.Choice(["fifo", "fq_codel", "codel"]), default="fifo", show_default=True,
              help="The bottleneck queue discipline (ns-3 defaults except the limit).")
@click.option("--other-qdisc", type=click.Choice(["fq_codel", "none"]), default="fq_codel", show_default=True,
              help="Discipline on every other port (ns-3 installs FQ-CoDel on every IP device).")
@click.option("--packet-bytes", type=click.IntRange(min=1, max=65_000), default=1024, show_default=True,
              help="UDP payload per packet (+30 B UDP/IP/PPP headers).")
@click.option("--duration-s", type=_POS, default=60.0, show_default=True, help="Simulated time.")
@click.option("--sample-ms", type=_POS, default=None, help="Sample the bottleneck's depth at this period.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@_FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object: the run record plus the metrics.")
def incast(as_json: bool, fidelity: str | None, **opts) -> None:
    """Synchronized bursts (or staggered TCP) into one bottleneck: the incast study (seed 001).

    Builds sender0..N-1 -> leaf -> (bottleneck) -> spine -> receiver and reports the study's metrics:
    throughput over the window first TX .. last RX (IP-layer bytes), mean and per-flow delays, Jain's
    index over per-flow mean delays, loss (TX - RX) and the bottleneck discipline's peak depth.
    """
    from pydantic import ValidationError

    from .incast import IncastParams, run_incast

    try:
        params = IncastParams(**opts)
    except ValidationError as e:
        err = e.errors()[0]
        where = "--" + "-".join(str(p) for p in err["loc"]).replace("_", "-") + ": " if err["loc"] else ""
        raise UserError(f"fabricsim incast: {where}{err['msg'].removeprefix('Value error, ')}") from None
    rec, metrics = _with_spinner(lambda: run_incast(params, fidelity), "simulating incast", quiet=as_json)
    if as_json:
        click.echo(json.dumps({**rec.to_json_dict(), "params": params.model_dump(), **metrics}))
    else:
        _print_incast(params, rec, metrics)


@cli.command()
@click.argument("spec_file", metavar="SWEEP.toml")
@click.option("--store", "store_dir", default=None, metavar="DIR",
              help="Results folder (SQLite, WAL); default: outputs/<sweep name> beside the sweep file.")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local worker processes (default: one per core; 0 = run in this process).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run on an existing Dask cluster instead.")
@click.option("--seeds", type=click.IntRange(min=1), default=None, help="Override the number of seeds (1..N).")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True, help="Retries of a failed run.")
@click.option("--export", "export_path", default=None, metavar="FILE.csv|FILE.parquet", help="Also export the runs.")
@_FIDELITY
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the sweep summary) on stdout.")
def sweep(spec_file, store_dir, workers, scheduler, seeds, retries, export_path, fidelity, quiet, as_json) -> None:
    """Run a sweep: every grid point x seed of SWEEP.toml, on local processes or a Dask cluster.

    Every finished run is committed to the store at once; re-running skips stored runs, so an
    interrupted sweep resumes where it stopped. Invalid points are reported once and not retried.
    """
    from pathlib import Path

    from .sweep import Store, load_sweep, run_sweep

    spec, base = load_sweep(spec_file)
    if fidelity:
        base = {**base, "fidelity": fidelity}
    store_dir = store_dir or str(Path(spec_file).parent / "outputs" / spec.name)
    res = run_sweep(spec, base, store_dir, workers=workers, scheduler=scheduler, seeds=seeds, retries=retries,
                    quiet=quiet or as_json, source=spec_file)
    if export_path:
        with Store(store_dir) as st:
            st.export(export_path, spec.name)
    summary = res.summary()
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(f"{spec.name}: {res.total} runs ({res.skipped} already stored, {res.ran} ran, "
               f"{len(res.invalid)} invalid, {len(res.failed)} failed) in {res.wall_s:.1f} s on {res.executor}; "
               f"store {store_dir}")
    for err in summary["errors"]:
        click.echo(f"  {err}", err=True)


@cli.command()
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
    from .report.reproduce import discover, experiments_dir
    from .report.reproduce import reproduce as run_study

    root = experiments_dir(exp_dir)
    studies = discover(root)
    if study != "all" and study not in studies:
        raise UserError(f"fabricsim: unknown study '{study}' (known: {', '.join(studies) or 'none'}; folder {root})")
    for name in studies if study == "all" else [study]:
        rep = run_study(studies[name], quick, workers, scheduler, quiet)
        _print_comparisons(rep)


def _print_comparisons(rep) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console() if sys.stdout.isatty() else Console(width=160)
    t = Table(title=f"{rep.title} ({'quick' if rep.quick else 'full'}, {rep.wall_s:.1f} s)", title_justify="left")
    for col in ("id", "quantity", "paper", "ours", "diff", "tolerance", "result"):
        t.add_column(col, justify="left" if col in ("id", "quantity") else "right")
    for c in rep.comparisons:
        t.add_row(c.id, f"{c.quantity} {('[' + c.unit + ']') if c.unit else ''}", f"{c.paper:.4g}",
                  "-" if c.ours is None else f"{c.ours:.4g}", "-" if c.diff is None else f"{c.diff:+.3g}",
                  c.tolerance, "[green]pass[/green]" if c.passed else "[red]miss[/red]")
    con.print(t)


@cli.command()
@click.option("--experiments", "exp_dir", default=None, metavar="DIR", help="Experiments folder (default: ./experiments).")
@click.option("--out", "out_path", default="outputs/report.html", show_default=True, help="Where to write the HTML report.")
def report(exp_dir, out_path) -> None:
    """Write the HTML reproduction report from every study's saved outputs (run `reproduce` first)."""
    from .report.html import write_report
    from .report.reproduce import experiments_dir, load_reports

    reports = load_reports(experiments_dir(exp_dir))
    if not reports:
        raise UserError("fabricsim: no study outputs found; run 'fabricsim reproduce all --quick' first")
    p = write_report(reports, out_path, __version__)
    n = sum(len(r.comparisons) for r in reports)
    ok = sum(c.passed for r in reports for c in r.comparisons)
    click.echo(f"report: {p.resolve()} ({len(reports)} studies, {ok}/{n} numbers within tolerance)")


@cli.command()
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
@_FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (means and 95% CIs) on stdout.")
def collective(topology, pattern, placement, nodes, nodes_b, pattern_b, msg_mb, interfaces, packet_bytes, barrier,
               order, seeds, workers, fidelity, as_json) -> None:
    """Run a collective on the Vela-like lossless fabric over several seeds and report completion time,
    throughput (aggregate and per interface, Gb/s) and packets by switch hops, as mean and 95% CI."""
    import tempfile

    from .report.stats import ci95
    from .sweep import SweepSpec, run_sweep

    if (placement is None) == (nodes is None):
        raise UserError("fabricsim: give exactly one of --placement and --nodes")
    if placement is not None:
        from .collectives.placement import placement_groups

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
        click.echo(json.dumps(out))
        return
    c, t, ti = out["completion_time_ms"], out["throughput_gbps"], out["throughput_per_interface_gbps"]
    click.echo(f"{pattern} on {groups} ({msg_mb:g} MiB, {interfaces} interface(s), {len(df)} runs):")
    click.echo(f"  completion {c['mean']:.3f} ± {c['ci95'] or 0:.3f} ms; throughput {t['mean']:.1f} ± {t['ci95'] or 0:.1f} Gb/s "
               f"({ti['mean']:.2f} per interface); packets 1-hop {out['hop_packets']['1'] / 1e6:.3f} M, "
               f"3-hop {out['hop_packets']['3'] / 1e6:.3f} M")


def _with_spinner(fn, label: str, quiet: bool):
    """Run fn() with a transient spinner on stderr when it is a terminal."""
    if quiet or not sys.stderr.isatty():
        return fn()
    from rich.console import Console

    with Console(stderr=True).status(label):
        return fn()


def _print_summary(path: str, rec) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console() if sys.stdout.isatty() else Console(width=140)
    p = rec.packets
    ct = rec.completion_time_s
    con.print(f"[bold]{path}[/bold]  seed {rec.seed}  fidelity {rec.fidelity}")
    con.print(
        f"completion: {format_duration(ct * 1e12) if ct is not None else 'n/a'}   "
        f"end: {format_duration(rec.end_time_s * 1e12)}   packets tx {p['tx']} rx {p['rx']} "
        f"dropped {p['dropped']} in flight {p['in_flight']}   "
        f"{rec.events} events in {rec.wall_s:.3f} s"
    )
    flows = rec.flows()
    t = Table(title=f"flows ({len(flows)})", title_justify="left")
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
    if len(flows) > 20:
        con.print(f"... {len(flows) - 20} more flows (use --json for all)")
    busiest = sorted(rec.queues(), key=lambda q: (q["drops"], q["peak_packets"]), reverse=True)[:8]
    if busiest:
        q = Table(title="busiest queues", title_justify="left")
        for col in ("queue", "tx pkts", "drops", "peak pkts", "peak bytes"):
            q.add_column(col, justify="left" if col == "queue" else "right", no_wrap=True)
        for row in busiest:
            q.add_row(row["name"], str(row["tx_packets"]), str(row["drops"]), str(row["peak_packets"]),
                      format_size(row["peak_bytes"]))
        con.print(q)
    if rec.hops:
        con.print("packets by switch hops: " + ", ".join(f"{k}: {v}" for k, v in rec.hops.items()))


def _print_incast(params, rec, m) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console() if sys.stdout.isatty() else Console(width=140)
    what = (f"{params.senders} x UDP OnOff {params.rate_mbps:g} Mb/s, {params.on_ms:g}/{params.off_ms:g} ms"
            if params.transport == "udp" else f"{params.senders} x TCP BulkSend ({params.tcp_cc}), {params.stagger_s:g} s apart")
    con.print(f"[bold]incast[/bold]  {what}  ->  {params.bottleneck_mbps:g} Mb/s bottleneck, {params.qdisc} "
              f"{params.queue_pkts} + device {params.device_queue_pkts} pkts  seed {rec.seed}  "
              f"{params.duration_s:g} s simulated in {rec.wall_s:.2f} s")

    def num(v, fmt):
        return "-" if v is None else format(v, fmt)

    t = Table(title="metrics", title_justify="left")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for label, key, fmt in (("offered load (Mb/s)", "offered_load_mbps", ".1f"), ("throughput (Mb/s)", "throughput_mbps", ".1f"),
                            ("mean delay (ms)", "mean_delay_ms", ".2f"), ("max flow delay (ms)", "max_flow_delay_ms", ".2f"),
                            ("min flow delay (ms)", "min_flow_delay_ms", ".2f"), ("delay spread (ms)", "delay_spread_ms", ".2f"),
                            ("Jain's index (flow delays)", "jain_fairness_delay", ".4f"), ("loss (%)", "loss_pct", ".2f"),
                            ("peak queue, discipline (pkts)", "peak_queue_pkts", "d"),
                            ("TX packets", "tx_packets", ","), ("RX packets", "rx_packets", ","), ("lost packets", "lost_packets", ",")):
        t.add_row(label, num(m[key], fmt))
    con.print(t)
    f = Table(title="per-flow mean delay", title_justify="left")
    f.add_column("flow")
    f.add_column("delay (ms)", justify="right")
    for name, d in zip(m["flow_names"], m["flow_mean_delays_ms"]):
        f.add_row(name, f"{d:.3f}")
    con.print(f)
    if "queue_samples" in m:
        con.print(f"{len(m['queue_samples']['t_s'])} queue samples of leaf->spine (use --json for them)")


from .cli_fors import fors  # noqa: E402  (registers `fabricsim fors …`)

cli.add_command(fors)

from .cli_ina import ina  # noqa: E402  (registers `fabricsim ina`)

cli.add_command(ina)

from .cli_cpo import design, locality  # noqa: E402  (registers `fabricsim design` and `fabricsim locality …`)

cli.add_command(design)
cli.add_command(locality)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping every user error to one line on stderr and exit code 2."""
    try:
        rc = cli.main(args=argv, prog_name="fabricsim", standalone_mode=False)
        if isinstance(rc, int) and rc:
            return rc  # a command's click Exit(code), returned (not raised) outside standalone mode
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("fabricsim: aborted", err=True)
        return 130
    except click.ClickException as e:
        click.echo(f"fabricsim: {e.format_message()}", err=True)
        return EXIT_USER_ERROR
    except (FabricsimError, UserError) as e:
        click.echo(str(e).replace("\n", " "), err=True)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        click.echo("fabricsim: interrupted", err=True)
        return 130
    except Exception as e:  # an engine or internal failure: one line, exit 1, never a traceback
        from . import _core

        kind = "engine error" if isinstance(e, (_core.SimulationError, _core.ConservationError)) else "internal error"
        click.echo(f"fabricsim: {kind}: {type(e).__name__}: {e}".replace("\n", " "), err=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
