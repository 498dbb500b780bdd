"""`fabricsim fors …`: fault-adaptive all-to-all on FT(2;M0,M1) for operators: schedule, route, verify, evaluate, export."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from ..errors import UserError
from ..studies import fors as study
from ._common import (SEED,
    OUT_HELP,
    deprecated_option,
    echo_json,
    out_file,
    pm_text,
    seed_stats,
    seed_text,
    seeds_option,
    size_option,
)

SCHEDULE_FILE = "schedule.json"
"""What `fors schedule --out DIR` writes in DIR."""
ROUTES_FILE = "routes.json"
"""What `fors route --out DIR` writes in DIR."""


def _fat_tree(m0: int, m1: int, scenario: str | None, failed: str | None, random_links: int | None, seed: int):
    """FT(2;m0,m1) with the failures of --failure-case (`scenario`), --failed or --random-failures."""
    from ..topology.fattree import FatTree, random_failures

    given = sum(x is not None for x in (scenario, failed, random_links))
    if given > 1:
        raise UserError("fabricsim fors: give at most one of --failure-case, --failed and --random-failures")
    try:
        if scenario is not None:
            return study.scenario(scenario, m0, m1, seed)
        if random_links is not None:
            if random_links > m0 * m1:
                raise ValueError(f"--random-failures {random_links}: FT(2;{m0},{m1}) has {m0 * m1} leaf-spine links")
            return random_failures(m0, m1, random_links, seed)
        links = []
        for item in (failed or "").split(","):
            if item.strip():
                leaf, _, spine = item.partition(":")
                links.append((int(leaf), int(spine)))
        return FatTree(m0, m1, frozenset(links))
    except ValueError as e:
        from ..errors import ArgumentError

        msg = e.reason if isinstance(e, ArgumentError) else str(e)  # the reason alone: this names the option
        if random_links is not None and not msg.startswith("--"):
            msg = f"--random-failures {random_links}: {msg}"
        elif failed is not None and msg.startswith("failed link"):
            msg = f"--failed: {msg} (leaves 0..{m1 - 1}, spines 0..{m0 - 1})"
        elif "invalid literal" in msg:
            msg = "--failed takes LEAF:SPINE pairs (0-based leaf and spine indices), e.g. 0:0,5:1"
        elif msg.startswith("unknown scenario"):
            msg = (f"--failure-case: unknown failure case '{scenario}': give one of the study's, "
                   f"{', '.join(study.SCENARIOS)}, or xF_SW<leaf>[_<leaf>...] (x >= 1 failed links per leaf) or "
                   f"SW<spine>[_<spine>...] (failed spines, numbered {m1}..{m1 + m0 - 1})")
        elif scenario is not None:
            if msg.startswith("Sample larger than population"):  # xF_SW<leaf> with x > M0 spines to fail
                msg = f"more failed links per leaf than FT(2;{m0},{m1}) has spines ({m0})"
            msg = (f"--failure-case: {msg.replace('scenario', 'failure case', 1)}" if msg.startswith("scenario '")
                   else f"--failure-case {scenario}: {msg}")
        raise UserError(f"fabricsim fors: {msg}") from None


def _topology_options(fn):
    fn = click.option("--seed", type=SEED, default=0, show_default=True,
                      help="Seed of random failures (and of the spines of xF_SW0).")(fn)
    fn = click.option("--random-failures", "random_links", type=click.IntRange(min=1), default=None,
                      help="This many failed leaf-spine links drawn at random, every leaf pair still connected.")(fn)
    fn = click.option("--failed", default=None, metavar="LEAF:SPINE,…",
                      help="Failed leaf-spine links as 0-based leaf and spine indices.")(fn)
    fn = deprecated_option("--scenario", lambda v: {"failure_case": v}, lambda v: f"--failure-case {v}")(fn)
    fn = click.option("--failure-case", "failure_case", default=None, metavar="CASE",
                      help="A named failure case of the study: 0F, 1F_SW0 … 3F_SW0, 1F_SW0_5_11 … "
                           "3F_SW0_5_11, SW18_19, SW18_19_22_23 (switch ids as the study's Fig. 2).")(fn)
    fn = click.option("--m1", type=click.IntRange(min=2), default=study.M1, show_default=True,
                      help="Leaves (default: the study's network).")(fn)
    fn = click.option("--m0", type=click.IntRange(min=1), default=study.M0, show_default=True,
                      help="Servers per leaf = spines (default: the study's network).")(fn)
    return fn


def _write(obj: dict, path: Path | None, what: str) -> None:
    """`obj` as JSON: into `path` (from `out_file`), saying on stderr what was written where, or on stdout."""
    text = json.dumps(obj)
    if path is not None:
        path.write_text(text)
        click.echo(f"wrote {what} ({len(obj['phases'])} phases) to {path}", err=True)
    else:
        click.echo(text)


def _header(ft) -> dict:
    return {"m0": ft.m0, "m1": ft.m1, "failed": sorted(map(list, ft.failed)), "f": ft.f, "m": ft.m}


def _schedule(ft, scheme: str):
    from ..schedule import fors_schedule, linear_shift, xor

    try:
        if scheme == "fors":
            return fors_schedule(ft)
        if scheme == "linear-shift":
            return linear_shift(ft.servers)
        return xor(ft.servers)
    except ValueError as e:
        raise UserError(f"fabricsim fors: {e}") from None


def _route(ft, scheme: str, sched, method: str = "auto", stats: dict | None = None):
    from ..routing import fors_algorithm2, fors_route, ftree, minhop

    try:
        if scheme == "fors":
            return fors_route(ft, sched, method, stats)
        return {"ftree": ftree, "minhop": minhop, "algorithm2": fors_algorithm2}[scheme](ft, sched)
    except ValueError as e:
        raise UserError(f"fabricsim fors: {e}") from None


def _load_phases(path: str, what: str):
    try:
        doc = json.loads(Path(path).read_text())
        phases = doc["phases"] if isinstance(doc, dict) else doc
        return [[tuple(x) for x in phase] for phase in phases]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"{path}: {what}: cannot read phases ({e})") from None


@click.group()
def fors() -> None:
    """Fault-adaptive all-to-all on two-level fat-trees FT(2;M0,M1) (the FORS study, seed 004).

    Servers are numbered s = position + leaf·M0; spines 0…M0−1 (the study's SW_{M1+σ}). A schedule lists per
    phase the (src, dst) pairs; a routing adds the spine of every inter-leaf pair (−1 within a leaf).
    """


@fors.command("schedule")
@_topology_options
@click.option("--scheme", type=click.Choice(["fors", "linear-shift", "xor"]), default="fors", show_default=True,
              help="fors adapts to the failures (Algorithm 1); linear-shift and xor ignore them.")
@click.option("--out", default=None, metavar="DIR", help=f"{OUT_HELP}: DIR/{SCHEDULE_FILE} instead of stdout.")
def schedule_cmd(m0, m1, failure_case, failed, random_links, seed, scheme, out) -> None:
    """Write the all-to-all schedule as JSON: {"phases": [[[src, dst], …], …], "f", "m", …}."""
    path = out_file("fabricsim fors schedule", out, SCHEDULE_FILE, (".json",))
    ft = _fat_tree(m0, m1, failure_case, failed, random_links, seed)
    sched = _schedule(ft, scheme)
    _write({**_header(ft), "scheme": scheme, "phases": [[list(p) for p in ph] for ph in sched]}, path, "the schedule")


@fors.command("route")
@_topology_options
@click.option("--scheme", type=click.Choice(["fors", "ftree", "minhop", "algorithm2"]), default="fors", show_default=True,
              help="fors: FORS schedule, spines by Algorithm 2 / edge colouring / CP-SAT as the failures need; "
                   "ftree, minhop: linear shift with OpenSM's routing; algorithm2: FORS schedule, Algorithm 2 only.")
@click.option("--schedule", "schedule_file", default=None, metavar="FILE.json",
              help="Route this schedule (from `fors schedule`) instead of the scheme's own.")
@click.option("--method", type=click.Choice(["auto", "algorithm2", "colouring", "cpsat", "highs"]), default="auto",
              show_default=True, help="FORS router: auto = Algorithm 2 if m ≤ f, else edge colouring with the ILP as "
                                      "fallback; cpsat/highs = the study's ILP on every phase (slow).")
@click.option("--out", default=None, metavar="DIR", help=f"{OUT_HELP}: DIR/{ROUTES_FILE} instead of stdout.")
def route_cmd(m0, m1, failure_case, failed, random_links, seed, scheme, method, schedule_file, out) -> None:
    """Write the routing as JSON: {"phases": [[[src, dst, spine], …], …]} (spine −1 within a leaf)."""
    path = out_file("fabricsim fors route", out, ROUTES_FILE, (".json",))
    ft = _fat_tree(m0, m1, failure_case, failed, random_links, seed)
    if schedule_file:
        sched = _load_phases(schedule_file, "schedule")
    else:
        sched = _schedule(ft, "fors" if scheme in ("fors", "algorithm2") else "linear-shift")
    t0 = time.perf_counter()
    stats: dict = {}
    routing = _route(ft, scheme, sched, method, stats)
    how = f" ({stats['method']}, {stats['ilp_phases']} phases by ILP, {stats.get('split_phases', 0)} split)" if stats else ""
    click.echo(f"routed {len(routing)} phases in {time.perf_counter() - t0:.2f} s{how}", err=True)
    _write({**_header(ft), "scheme": scheme, "phases": [[list(x) for x in ph] for ph in routing]}, path, "the routing")


@fors.command("verify")
@_topology_options
@click.option("--routes", "routes_file", default=None, metavar="FILE.json",
              help=f"A routing from `fors route` (its --out DIR/{ROUTES_FILE}).")
@click.option("--schedule", "schedule_file", default=None, metavar="FILE.json",
              help=f"A schedule from `fors schedule` (its --out DIR/{SCHEDULE_FILE}).")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Conflicts to print at most.")
def verify_cmd(m0, m1, failure_case, failed, random_links, seed, routes_file, schedule_file, limit) -> None:
    """Check a schedule (and routing): every ordered pair exactly once, no server sending or receiving twice in a
    phase, no failed link used, no link carrying two flows in a phase. Prints the first conflicts; exit 1 if any."""
    from ..schedule.verify import verify

    if (routes_file is None) == (schedule_file is None):
        raise UserError("fabricsim fors verify: give exactly one of --routes and --schedule")
    ft = _fat_tree(m0, m1, failure_case, failed, random_links, seed)
    if routes_file:
        routing = _load_phases(routes_file, "routes")
        sched = [[(s, d) for s, d, _ in ph] for ph in routing]
    else:
        routing, sched = None, _load_phases(schedule_file, "schedule")
    problems = verify(ft, sched, routing, limit=limit)
    if problems:
        for line in problems:
            click.echo(line)
        sys.exit(1)
    click.echo(f"ok: {len(sched):,} phases, {sum(map(len, sched)):,} flows, no conflict (f = {ft.f}, m = {ft.m})")


@fors.command("evaluate")
@_topology_options
@seeds_option("Runs K, seeds S..S+K-1 (S = --seed): K draws of --random-failures (or of xF_SW0's spines), each "
              "simulated; prints every run and the mean ± 95% CI. Default: one run, seed S.")
@click.option("--scheme", type=click.Choice(["fors", "ftree", "minhop", "ftree-ar"]), default="fors", show_default=True)
@click.option("--active", type=click.IntRange(min=2), default=None,
              help=f"Servers taking part, spread evenly over the leaves. Default: the study's {study.ACTIVE_SERVERS} on "
                   f"its FT(2;{study.M0},{study.M1}), every server (M0·M1) on any other fat-tree.")
@click.option("--link-gbps", type=click.FloatRange(min=0, min_open=True), default=study.LINK_GBPS, show_default=True,
              help="Every link's rate, Gb/s.")
@size_option(f"{study.MSG_BYTES >> 20}MiB", "Message per pair and phase")
@deprecated_option("--msg-kib", lambda v: {"size": v * 1024}, lambda v: f"--size {v}KiB", type=click.IntRange(min=1))
@click.option("--overhead-us", type=click.FloatRange(min=0), default=None,
              help="Per-phase synchronization overhead in microseconds, an input. Default: on the study's "
                   f"FT(2;{study.M0},{study.M1}), calibrated so that 0F with linear shift + Ftree gives the study's "
                   f"{study.PER_SERVER_GBPS_0F:g} Gb/s per server ({study.ACTIVE_SERVERS} servers, "
                   f"{study.LINK_GBPS:g} Gb/s, this message size) and held fixed; on any other fat-tree "
                   f"{study.DEFAULT_OVERHEAD_US:g} (the network alone).")
@click.option("--fidelity", type=click.Choice(["packet", "flow"]), default=None,
              help="Engine (default: flow; packet for ftree-ar, whose adaptive choice needs queues).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def evaluate_cmd(m0, m1, failure_case, failed, random_links, seed, seeds, scheme, active, link_gbps, size, overhead_us,
                 fidelity, as_json) -> None:
    """Simulate the synchronized phased all-to-all (a barrier between phases) and report throughput per server
    (Gb/s), total (Tb/s), phases and the most flows on one link in a phase, with the inputs it used (the overhead
    labelled as calibrated to the study's 141 Gb/s, on the study's network only, or as an input)."""
    from ..units import format_size

    seed_list = list(range(seed, seed + (seeds or 1)))
    runs = []
    for s in seed_list:
        ft = _fat_tree(m0, m1, failure_case, failed, random_links, s)
        if active is not None and active > ft.servers:
            raise UserError(f"fabricsim fors evaluate: --active {active}: FT(2;{m0},{m1}) has {ft.servers} servers, "
                            f"so at most {ft.servers}")
        try:
            ev = study.evaluate(ft, scheme, active=active, link_gbps=link_gbps, msg_bytes=size,
                                overhead_s=None if overhead_us is None else overhead_us * 1e-6, fidelity=fidelity)
        except ValueError as e:
            raise UserError(f"fabricsim fors evaluate: {e}") from None
        out = ev.to_json()
        out.update(scenario=failure_case, overhead_us=ev.extra["overhead_s"] * 1e6, link_gbps=link_gbps)
        runs.append((s, ft, ev, out))
    active_from = ("given" if active is not None else
                   "the study's" if study.is_study_network(runs[0][1]) else f"all of FT(2;{m0},{m1})")
    if seeds is None:
        _, ft, ev, out = runs[0]
        if as_json:
            echo_json(out)
            return
        _print_evaluation(scheme, m0, m1, failure_case, ev)
    else:
        keys = ("throughput_per_server_gbps", "total_tbps", "completion_s", "phases", "max_flows_per_link")
        summary = {"seeds": seed_list, "runs": [{"seed": s, **o} for s, _, _, o in runs],
                   **{k: seed_stats([o[k] for *_, o in runs]) for k in keys}}
        if as_json:
            echo_json(summary)
            return
        for s, _, e, _ in runs:
            click.echo(f"seed {s}: ", nl=False)
            _print_evaluation(scheme, m0, m1, failure_case, e, inputs=False)
        st = summary
        click.echo(f"mean ± 95% CI over {seed_text(seed_list)}: {pm_text(st['throughput_per_server_gbps'], '.1f')} Gb/s "
                   f"per server, {pm_text(st['total_tbps'], '.2f')} Tb/s; {pm_text(st['phases'], '.1f')} phases")
        ev = runs[0][2]
    if ev.extra["overhead_role"] == "calibrated":
        how = f"{study.CALIBRATED}: 0F, linear shift + Ftree, {study.ACTIVE_SERVERS} servers, {study.LINK_GBPS:g} Gb/s"
    elif overhead_us is not None:
        how = "input: --overhead-us"
    else:
        how = f"input: --overhead-us default, {study.DEFAULT_OVERHEAD_US:g} off the study's network"
    click.echo(f"  inputs: {ev.active} active servers ({active_from}), {link_gbps:g} Gb/s links, {format_size(size)} "
               f"per pair and phase; overhead {ev.extra['overhead_s'] * 1e6:.2f} us per phase ({how})")


def _print_evaluation(scheme: str, m0: int, m1: int, case: str | None, ev, inputs: bool = True) -> None:
    """One evaluation's line: throughput per server and in total, phases, the worst link, the engine."""
    name = f"{case} " if case else ""
    click.echo(f"{scheme} on FT(2;{m0},{m1}) {name}(f = {ev.f}, m = {ev.m}): {ev.throughput_per_server_gbps:.1f} "
               f"Gb/s per server, {ev.total_tbps:.2f} Tb/s over {ev.active} servers; {ev.phases} phases, at most "
               f"{ev.max_flows_per_link} flow(s) per link and phase; {ev.fidelity} engine")


@fors.command("export-opensm")
@_topology_options
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help=f"{OUT_HELP}: the tables and the LID choices.")
def export_cmd(m0, m1, failure_case, failed, random_links, seed, out_dir) -> None:
    """Write OpenSM `file` routing-engine tables (LMC multipath: one LID per server and spine) and, per phase,
    the LID each source uses for each destination."""
    from ..routing import export_opensm, fors_route
    from ..schedule import fors_schedule

    ft = _fat_tree(m0, m1, failure_case, failed, random_links, seed)
    try:
        routing = fors_route(ft, fors_schedule(ft))
    except ValueError as e:
        raise UserError(f"fabricsim fors export-opensm: {e}") from None
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    paths = export_opensm(ft, routing, out_dir)
    click.echo(f"wrote {len(paths)} files to {out_dir}: " + ", ".join(Path(x).name for x in paths), err=True)
