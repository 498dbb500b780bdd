"""`fabricsim cluster`: a stream of jobs placed by policies on one fabric, over seeds; slowdown, JCT, utilization."""

from __future__ import annotations

import sys
import time

import click

from ..collectives.fabrics import default_fabric
from ..collectives.patterns import RENAMED_PATTERNS
from ..errors import ScenarioError
from ._common import (
    EXIT_INTERRUPTED,
    PATTERN_RENAMED_WHY,
    Fabric,
    FiniteFloat,
    check_figure_path,
    deprecated_option,
    echo_json,
    fabric_option,
    renamed_value,
    size_option,
    stdout_console,
)
from .place import FABRICS, MIB

OPTION = {"policy": "--policy", "fabric": "--fabric", "jobs": "--jobs", "sizes": "--sizes", "iterations": "--iterations",
          "pattern": "--pattern", "msg_mb": "--size", "interfaces": "--interfaces", "per_server": "--per-server",
          "packet": "--packet-bytes", "load": "--load", "arrival_rate": "--arrival-rate", "sharing": "--sharing",
          "seed": "--seed", "hosts": "--policy"}
"""ClusterConfig field -> the option that sets it (errors name the option)."""

PREFIX = "fabricsim cluster"


def _as_option(e: ScenarioError) -> ScenarioError:
    """An API error on a ClusterConfig field (source "cluster") or a built-in fabric, said with the option."""
    if e.source == "cluster" or e.source.startswith("--"):
        return ScenarioError(PREFIX, OPTION.get(e.field, e.source if e.source.startswith("--") else e.field), e.reason)
    return e


class _Progress:
    """Progress on stderr: a rich bar over all jobs of all runs on a terminal, else one plain line per run."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet = total, quiet
        self.bar = None
        self.task = None
        self.base = 0
        self.tty = sys.stderr.isatty()

    def job(self, label: str, done: int, n: int) -> None:
        if self.quiet or not self.tty:
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(label, total=self.total)
        self.bar.update(self.task, completed=self.base + done, description=label)

    def run_done(self, label: str, n: int, result) -> None:
        self.base += n
        if not self.quiet and not self.tty:
            m = result.metrics()
            click.echo(f"{PREFIX}: {label}: {n} jobs, mean slowdown {m['mean_slowdown']:.3f}, mean JCT "
                       f"{m['mean_jct_s']:.4g} s ({result.wall_s:.1f} s)", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


@click.command("cluster")
@fabric_option(FABRICS, default=default_fabric(), what="A file's hosts are the servers.")
@deprecated_option("--scenario", lambda v: {"fabric": Fabric(v, path=v)}, lambda v: f"--fabric {v}")
@click.option("--policy", "policies", multiple=True, metavar="P",
              help="pack, spread, random, first-fit, advisor, or all (the default); repeat for several.")
@click.option("--jobs", type=int, default=100, show_default=True, help="Jobs per run.")
@click.option("--sizes", default="cpo", show_default=True, metavar="DIST",
              help="Nodes per job: cpo (study 003's synthetic VM trace, capped at the fabric), N, choice:4,8,16 or "
                   "uniform:2:16 (at least 2 nodes).")
@click.option("--iterations", default="100", show_default=True, metavar="DIST",
              help="Collectives per job, back to back: N, choice:..., uniform:LO:HI or exp:MEAN.")
@click.option("--pattern", default="ring-all-reduce", show_default=True,
              callback=renamed_value(RENAMED_PATTERNS, PATTERN_RENAMED_WHY),
              help="all-to-all, all-gather, shift-all-reduce (study 000's), ring-all-reduce or reduce-scatter.")
@size_option("10MiB", "Message size S per interface (as `fabricsim collective --size`)")
@deprecated_option("--msg-mb", lambda v: {"size": round(v * MIB)}, lambda v: f"--size {v:g}MiB",
                   type=FiniteFloat())
@click.option("--interfaces", type=int, default=1, show_default=True, help="NICs per node.")
@click.option("--per-server", type=int, default=None,
              help="Nodes of a job per server at most (a server runs one job at a time) [default: 1; on a GPU fabric "
                   "(rail_optimized), where a node is a GPU, the server's GPUs / --interfaces].")
@click.option("--packet-bytes", type=int, default=1024, show_default=True)
@click.option("--load", type=float, default=None, metavar="RHO",
              help="Offered load (default 0.7): arrivals at RHO x servers / the jobs' mean server-seconds alone, "
                   "packed.")
@click.option("--arrival-rate", type=float, default=None, metavar="JOBS/S", help="Poisson arrival rate instead of --load.")
@click.option("--sharing", default="ps", show_default=True,
              help="How running jobs share links: ps (processor sharing at the most loaded link group) or maxmin "
                   "(fluid max-min).")
@click.option("--seed", type=int, default=1, show_default=True, help="The first seed; runs use seeds S..S+K-1.")
@click.option("--seeds", type=int, default=1, show_default=True, metavar="K", help="Runs K per policy, one per seed.")
@click.option("--out", "out_dir", default=None, metavar="DIR",
              help="Write jobs.parquet, jobs.csv, timeline.csv, runs.csv and figures (JCT CDF, slowdown, timeline, "
                   "policies) here.")
@click.option("--figure", default=None, metavar="FILE.png", help="Draw the policy comparison (slowdown and JCT, 95% CI).")
@click.option("--fidelity", type=click.Choice(["flow", "hybrid", "packet"]), default="flow", show_default=True,
              help="The engine behind the solo profiles (one run per placement shape). flow is fast but models no "
                   "buffers (pessimistic by up to 28% on contended collectives); confirm a result with hybrid (the "
                   "packet engine with steady-state fast-forward, docs/guide/hybrid.md) or packet.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def cluster(fabric, policies, jobs, sizes, iterations, pattern, size, interfaces, per_server,
            packet_bytes, load, arrival_rate, sharing, seed, seeds, out_dir, figure, fidelity, quiet, as_json) -> None:
    """Multi-job cluster simulator: Poisson job arrivals, placement policies, interference, slowdown.

    Jobs arrive as a Poisson stream, wait in one FIFO queue, and are placed by each policy on whole servers. A job
    runs its collective --iterations times; its speed is its solo speed (one engine run per placement shape, flow
    by default, --fidelity hybrid to confirm)
    scaled down by the jobs it shares links with. Reports per policy the mean over seeds (95% CI) of the jobs'
    mean slowdown (time running / time alone), mean and p95 JCT (queueing included), utilization and
    fragmentation (the share of free servers in partly busy racks). The same seed gives every policy the same jobs.

    \b
    Examples:
      fabricsim cluster --fabric vela --sizes uniform:2:8 --pattern shift-all-reduce --interfaces 4 --load 0.8 --seeds 5
      fabricsim cluster --fabric cpo_baseline --jobs 1000 --policy pack --policy advisor --json
      fabricsim cluster --fabric examples/leaf_spine_16.toml --size 4MiB --seeds 3 --out cluster-out
    """
    from dataclasses import replace

    from ..cluster.compare import draw_comparison, policy_frame, runs_frame, write_outputs
    from ..cluster.policies import POLICIES
    from ..cluster.sim import ClusterConfig, load_fabric, simulate
    from ..cluster.solo import SoloCache

    if load is not None and arrival_rate is not None:
        raise ScenarioError(PREFIX, "--arrival-rate", "give --load or --arrival-rate, not both")
    if seeds < 1:
        raise ScenarioError(PREFIX, "--seeds", f"must be >= 1, got {seeds}")
    chosen: list[str] = []
    for p in policies or ("all",):
        for name in (POLICIES if p == "all" else (p,)):
            if name not in POLICIES:
                raise ScenarioError(PREFIX, "--policy", f"unknown policy {name!r} (one of {', '.join(POLICIES)}, or all)")
            if name not in chosen:
                chosen.append(name)
    check_figure_path(PREFIX, figure)
    base = ClusterConfig(policy=chosen[0], fabric=fabric.name, scenario=fabric.path, jobs=jobs, sizes=sizes,
                         iterations=iterations, pattern=pattern, msg_mb=size / MIB, interfaces=interfaces,
                         per_server=per_server, packet=packet_bytes,
                         load=None if arrival_rate is not None else (0.7 if load is None else load),
                         arrival_rate=arrival_rate, sharing=sharing, seed=seed, fidelity=fidelity)
    try:
        fab = load_fabric(base)
        base = base.resolved(fab)
        for p in chosen:
            replace(base, policy=p).check(fab)
        solo = SoloCache(fab, base.pattern, base.msg_bytes, base.interfaces, base.packet, fidelity=base.fidelity)
    except ScenarioError as e:
        raise _as_option(e) from None
    seed_list = list(range(seed, seed + seeds))
    prog = _Progress(jobs * len(chosen) * len(seed_list), quiet)
    results = []
    t0 = time.perf_counter()
    try:
        for s in seed_list:
            for p in chosen:
                label = f"{p} seed {s}"
                cfg = replace(base, policy=p, seed=s)
                try:
                    res = simulate(cfg, fabric=fab, solo=solo, progress=lambda d, n, label=label: prog.job(label, d, n))
                except ScenarioError as e:
                    raise _as_option(e) from None
                results.append(res)
                prog.run_done(label, jobs, res)
    except KeyboardInterrupt:
        prog.close()
        click.echo(f"{PREFIX}: interrupted after {len(results)} of {len(chosen) * len(seed_list)} runs", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    prog.close()
    runs = runs_frame(results)
    frame = policy_frame(runs)
    written = []
    if out_dir:
        from pathlib import Path

        written = [str(p) for p in write_outputs(results, out_dir)]
        written.append(str(draw_comparison(frame, Path(out_dir) / "policies.png")))
    if figure:
        written.append(str(draw_comparison(frame, figure)))
    out = _summary(base, fab, chosen, seed_list, frame, runs, results, time.perf_counter() - t0, written)
    if as_json:
        echo_json(out)
    else:
        _print(out, frame)


def _summary(base, fab, chosen, seed_list, frame, runs, results, wall_s, written) -> dict:
    """The JSON object: the set-up, per policy each metric's mean over seeds with its 95% CI, and every run."""
    import math

    def num(v):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    per = {}
    for row in frame.to_dict("records"):
        per[row["policy"]] = {k: {"mean": num(row[k]), "ci95": num(row.get(f"{k}_ci95"))}
                              for k in row if k not in ("policy", "runs") and not k.endswith("_ci95")}
        per[row["policy"]]["runs"] = row["runs"]
    counts = fab.hierarchy()
    return {"fabric": fab.name, "servers": fab.n, "racks": len(fab.racks), "pods": counts["pods"],
            **({"gpus": counts["gpus"]} if counts["gpus"] else {}), "jobs": base.jobs, "sizes": base.sizes,
            "iterations": base.iterations, "pattern": base.pattern, "msg_mb": base.msg_mb, "interfaces": base.interfaces,
            "per_server": base.per_server, "sharing": base.sharing, "load": base.load, "fidelity": base.fidelity,
            "arrival_rate": {str(r.config.seed): r.arrival_rate for r in results if r.config.policy == chosen[0]},
            "seeds": seed_list, "policies": per,
            "runs": [{k: num(v) for k, v in row.items()} for row in runs.to_dict("records")],
            "solo_runs": int(runs["solo_runs"].sum()), "wall_s": round(wall_s, 3), "outputs": written}


def _counts(out: dict) -> str:
    """The fabric's hierarchy in words: GPUs (on a GPU fabric, where a node is a GPU), servers, racks, pods."""
    def n(k: int, what: str) -> str:
        return f"{k:,} {what}{'' if k == 1 else 's'}"

    gpu = f"{n(out['gpus'], 'GPU')} on " if out.get("gpus") else ""
    pods = f", {n(out['pods'], 'scalable unit' if out.get('gpus') else 'pod')}" if out.get("gpus") or out["pods"] > 1 else ""
    return f"{gpu}{n(out['servers'], 'server')}, {n(out['racks'], 'rack')}{pods}"


def _print(out: dict, frame) -> None:
    """The human summary: one table row per policy (means over seeds; slowdown and JCT with their 95% CI), then
    the files written."""
    from rich.table import Table

    n = len(out["seeds"])
    load = f"load {out['load']:g}" if out["load"] is not None else "arrival rate given"
    head = (f"{out['jobs']} jobs of {out['sizes']} nodes x {out['iterations']} {out['pattern']} ({out['msg_mb']:g} MiB) on "
            f"{out['fabric']} ({_counts(out)}), {load}, sharing {out['sharing']}; "
            + (f"mean ± 95% CI over seeds {out['seeds'][0]}..{out['seeds'][-1]}" if n > 1 else f"seed {out['seeds'][0]}"))
    con = stdout_console(120)
    con.print(head, highlight=False, soft_wrap=True)
    t = Table(show_edge=False)
    for col in ("policy", "mean slowdown", "mean JCT (s)", "p95 JCT (s)", "mean wait (s)", "utilization",
                "fragmentation", "racks/job"):
        t.add_column(col, justify="left" if col == "policy" else "right")

    def pm(row, k, fmt):
        ci = row.get(f"{k}_ci95")
        return format(row[k], fmt) + ("" if ci is None or ci != ci else " ± " + format(ci, fmt))

    for row in frame.to_dict("records"):
        t.add_row(row["policy"], pm(row, "mean_slowdown", ".3f"), pm(row, "mean_jct_s", ".3g"), f"{row['p95_jct_s']:.3g}",
                  f"{row['mean_wait_s']:.3g}", f"{row['utilization']:.3f}", f"{row['fragmentation']:.3f}",
                  f"{row['mean_racks']:.2f}")
    con.print(t)
    for p in out["outputs"]:
        click.echo(f"wrote {p}", err=True)
