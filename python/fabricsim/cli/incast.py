"""`fabricsim incast`: the incast study's dumbbell (synchronized UDP bursts or staggered TCP) and its metrics."""

from __future__ import annotations

import click

from ..errors import UserError
from ._common import (SEED,
    FIDELITY,
    echo_json,
    pm_text,
    seed_stats,
    seed_text,
    seeds_option,
    stdout_console,
    with_spinner,
)

_POS = click.FloatRange(min=0, min_open=True)
_NONNEG = click.FloatRange(min=0)


@click.command("incast")
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
@click.option("--seed", type=SEED, default=1, show_default=True, help="The seed (the first, S).")
@seeds_option("Runs K, seeds S..S+K-1: one line per run and each metric's mean ± 95% CI; with --json one object "
              "with every run's metrics in `runs`. Default: one run.")
@FIDELITY
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object: the run record plus the metrics.")
def incast(as_json: bool, fidelity: str | None, seeds: int | None, **opts) -> None:
    """Synchronized bursts (or staggered TCP) into one bottleneck: the incast study (seed 001).

    Builds sender0..N-1 -> leaf -> (bottleneck) -> spine -> receiver and reports the study's metrics:
    throughput over the window first TX .. last RX (IP-layer bytes), mean and per-flow delays, Jain's
    index over per-flow mean delays, loss (TX - RX) and the bottleneck discipline's peak depth.
    """
    from pydantic import ValidationError

    from ..studies.incast import IncastParams, run_incast

    try:
        params = IncastParams(**opts)
    except ValidationError as e:
        err = e.errors()[0]
        where = "--" + "-".join(str(p) for p in err["loc"]).replace("_", "-") + ": " if err["loc"] else ""
        raise UserError(f"fabricsim incast: {where}{err['msg'].removeprefix('Value error, ')}") from None
    if seeds is not None:
        _incast_seeds(params, fidelity, seeds, as_json)
        return
    rec, metrics = with_spinner(lambda: run_incast(params, fidelity), "simulating incast", quiet=as_json)
    if as_json:
        echo_json({**rec.to_json_dict(), "params": params.model_dump(), **metrics})
    else:
        _print_incast(params, rec, metrics)


SCALARS = (("offered load (Mb/s)", "offered_load_mbps", ".1f"), ("throughput (Mb/s)", "throughput_mbps", ".1f"),
           ("mean delay (ms)", "mean_delay_ms", ".2f"), ("max flow delay (ms)", "max_flow_delay_ms", ".2f"),
           ("min flow delay (ms)", "min_flow_delay_ms", ".2f"), ("delay spread (ms)", "delay_spread_ms", ".2f"),
           ("Jain's index (flow delays)", "jain_fairness_delay", ".4f"), ("loss (%)", "loss_pct", ".2f"),
           ("peak queue, discipline (pkts)", "peak_queue_pkts", "d"),
           ("TX packets", "tx_packets", ","), ("RX packets", "rx_packets", ","), ("lost packets", "lost_packets", ","))
"""The incast metrics that are one number: (label, key, format)."""


def _incast_seeds(params, fidelity: str | None, seeds: int, as_json: bool) -> None:
    """`incast --seeds K`: K runs, seeds S..S+K-1; per run its metrics, per metric its mean ± 95% CI."""
    from ..studies.incast import run_incast

    seed_list = list(range(params.seed, params.seed + seeds))
    runs = []
    for s in seed_list:
        p = params.model_copy(update={"seed": s})
        rec, m = with_spinner(lambda p=p: run_incast(p, fidelity), f"simulating incast, seed {s}", quiet=as_json)
        runs.append({"seed": s, "events": rec.events, "wall_s": rec.wall_s, "complete": rec.complete, **m})
    stats = {key: seed_stats([r[key] for r in runs]) for _, key, _ in SCALARS}
    if as_json:
        echo_json({"params": params.model_dump(), "seeds": seed_list, **stats, "runs": runs})
        return
    con = stdout_console(140)
    con.print(f"[bold]incast[/bold]  {params.senders} senders ({params.transport})  ->  {params.bottleneck_mbps:g} Mb/s "
              f"bottleneck, {params.qdisc} {params.queue_pkts} + device {params.device_queue_pkts} pkts  "
              f"{params.duration_s:g} s simulated, {seed_text(seed_list)}")
    for r in runs:
        con.print(f"  seed {r['seed']}: throughput {r['throughput_mbps']:.1f} Mb/s, mean delay {r['mean_delay_ms']:.2f} "
                  f"ms, Jain {r['jain_fairness_delay']:.4f}, loss {r['loss_pct']:.2f}%, peak queue "
                  f"{r['peak_queue_pkts']} pkts", highlight=False)
    from rich.table import Table

    t = Table(title=f"metrics: mean ± 95% CI over {seed_text(seed_list)}", title_justify="left")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for label, key, fmt in SCALARS:
        t.add_row(label, pm_text(stats[key], ",.1f" if fmt in ("d", ",") else fmt))
    con.print(t)


def _print_incast(params, rec, m) -> None:
    from rich.table import Table

    con = stdout_console(140)
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
    from ._links import print_links

    print_links(con, rec)
