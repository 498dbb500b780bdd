"""Regenerate the measured figures the docs quote, between their `<!-- generated: NAME -->` … `<!-- end: NAME -->`
markers, so no measured number in them is typed by hand.

Each region has a generator here, and each generator names the page its region lives in (`Generator.page`:
README.md or a page under docs/). A study's page, docs/studies/STUDY.md, is also experiments/STUDY/README.md:
`--write` rewrites both (`study_copies` in docs/gen_reference.py). Deterministic regions (simulation results: the
same code and seeds give the same text) are checked by tests/test_readme_numbers.py. Timing regions are rewritten
only by `--write`; each ends with the date, the machine it was measured on and how loaded that machine was. Several
regions come from one run (e.g. Table IV's results, its time and the flow engine's agreement): asking for any of
them runs it once.

Usage:
    python benchmarks/readme_numbers.py                      # show which regions differ from a fresh run
    python benchmarks/readme_numbers.py --write              # rewrite them in their pages (all: about 25 min)
    python benchmarks/readme_numbers.py --only cpo-results --only cpo-time --write   # some (repeatable)
    python benchmarks/readme_numbers.py --list               # every region, its page, kind and about how long
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"
EXPERIMENTS = ROOT / "experiments"
BIN = Path(sys.executable).parent
REGION = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- end: (?P=name) -->)", re.S)
WORKERS = os.cpu_count() or 1
"""Worker processes of the sweeps timed here: one per core, as `fabricsim reproduce` uses by default."""

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the benchmark scripts (bench_*.py) are reused as modules


@dataclass(frozen=True)
class Generator:
    fn: Callable[[], str]
    deterministic: bool
    """Whether the same code gives the same text (a test checks it), or a timing (rewritten by --write only)."""
    seconds: float
    """About how long it takes on the development machine (2 cores), the run it shares with others included."""
    page: str
    """The file its region lives in, relative to the repository: README.md or docs/….md."""

    @property
    def path(self) -> Path:
        return ROOT / self.page


# ---------------------------------------------------------------------------------------------------- helpers

def machine() -> str:
    """One line naming the machine a timing was measured on."""
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def stamp() -> str:
    """The line a timing region ends with, taken right after its measurement: date, machine and load."""
    load = os.getloadavg()[0]
    return (f"<sub>Measured {datetime.date.today().isoformat()} on {machine()}; 1-minute load average {load:.1f} "
            f"just after, the measurement's own processes included.</sub>")


def signed(x: float, digits: int = 1) -> str:
    """A signed percentage with a true minus sign: +4.1%, −4.2%."""
    return f"{x:+.{digits}f}%".replace("-", "−")


def span(values, fmt: str = "{:.2f}") -> str:
    """"a" when all values print alike, else "min–max"."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


LAUNCHER = ("import json, os, subprocess, sys, time\n"
            "t0 = time.perf_counter()\n"
            "_, status, ru = os.wait4(subprocess.Popen(sys.argv[1:]).pid, 0)\n"
            "print(json.dumps([time.perf_counter() - t0, ru.ru_maxrss, os.waitstatus_to_exitcode(status)]), file=sys.stderr)")
"""Runs a command and reports its wall time, peak RSS (KiB) and exit code as a last stderr line. Linux carries a
process's peak RSS across fork and exec, so a child of this (large) process would report at least this process's
size; a child of the small launcher reports its own."""


def process(argv: list, cwd: Path = ROOT) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of one command, through LAUNCHER; raises on a failure."""
    r = subprocess.run([sys.executable, "-c", LAUNCHER, *map(str, argv)], cwd=cwd, capture_output=True, text=True)
    *err, last = r.stderr.strip().splitlines() or [""]
    try:
        wall, rss_kib, code = json.loads(last)
    except ValueError:
        raise RuntimeError(f"`{' '.join(map(str, argv))}` could not be run: {last}") from None
    if code:
        raise RuntimeError(f"`{' '.join(map(str, argv))}` exited {code}: {(err or [''])[-1]}")
    return wall, rss_kib / 1024, r.stdout


def case(script: str, name: str) -> dict:
    """One case of a benchmark script that runs a case per process (benchmarks/_cases.py): its JSON line, whose
    peak RSS is then the case's own."""
    return json.loads(process([sys.executable, HERE / script, name])[2].strip().splitlines()[-1])


def timed(fn, *args, **kw):
    """(fn(*args, **kw), seconds)."""
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def study(name: str):
    """A study's run.py as a module (experiments/NAME/run.py)."""
    from fabricsim.report.reproduce import load_study

    return load_study(EXPERIMENTS / name)


def paper(name: str) -> dict:
    """A study's published numbers (experiments/NAME/paper.json)."""
    return json.loads((EXPERIMENTS / name / "paper.json").read_text())


def reproduce_cli(name: str, out: str, quick: bool = False) -> float:
    """Wall seconds of `fabricsim reproduce NAME` as a whole process, into `out`, on WORKERS workers."""
    argv = [BIN / "fabricsim", "reproduce", name, "--out", out, "--quiet", "--workers", str(WORKERS)]
    return process(argv + (["--quick"] if quick else []), cwd=Path(out))[0]


def reproduce_quick_time() -> str:
    """`fabricsim reproduce all --quick` as one process (what `make run` runs after set-up; issue 33's target: at
    most 3 min on 2 cores), with each study's own time (the studies run at once, so they add up to more) and
    its score."""
    with tempfile.TemporaryDirectory() as d:
        wall = process([BIN / "fabricsim", "reproduce", "all", "--quick", "--out", d, "--quiet"], cwd=Path(d))[0]
        when = stamp()
        reps = [json.loads(p.read_text()) for p in sorted(Path(d).glob("*/report.json"))]
    rows = [[r["study"], f"{r['wall_s']:.0f} s", f"{sum(c['passed'] for c in r['comparisons'])}/{len(r['comparisons'])}",
             str(len(r["settings"]))] for r in reps]
    verdict = "met" if wall <= 180 else "**missed**"
    return "\n".join([f"`fabricsim reproduce all --quick` took {wall // 60:.0f} min {wall % 60:.0f} s as a whole "
                      f"(issue 33's target: ≤ 3 min on 2 cores, {verdict}), the studies at once, one process per core:", "",
                      table(["study", "its own time", "scored numbers within tolerance", "settings"], rows), "", when])


# ------------------------------------------------------------------------------------------- study 001: incast

@functools.cache
def _incast() -> dict:
    """The study's four 60 s scenarios, each timed as one in-process run, beside its ns-3 reference."""
    from fabricsim.studies.incast import IncastParams, run_incast

    mod = study("incast")
    ours, wall = {}, {}
    for name, kw in mod.SCENARIOS.items():
        (_, ours[name]), wall[name] = timed(run_incast, IncastParams(duration_s=60.0, sample_ms=1.0, **kw))
    ns3, why = mod.load_ns3(60.0)
    if ns3 is None:
        raise RuntimeError(why)
    return {"ours": ours, "wall": wall, "ns3": ns3, "paper": paper("incast"), "tol": mod.TOL, "stamp": stamp()}


def incast_s2_s4() -> str:
    """S2–S4: the paper's Tables 4–5, ns-3 3.44 and fabricsim, a cell per number."""
    r = _incast()
    rows = [("TX packets", "tx_packets", "table4", "{:,.0f}", "{:,.0f}"),
            ("RX packets", "rx_packets", "table4", "{:,.0f}", "{:,.0f}"),
            ("throughput (Mb/s)", "throughput_mbps", "table4", "{:.1f}", "{:.2f}"),
            ("mean delay (ms)", "mean_delay_ms", "table5", "{:.2f}", "{:.2f}"),
            ("loss (%)", "loss_pct", "table4", "{:.2f}", "{:.2f}")]
    out = []
    for label, key, tab, pfmt, fmt in rows:
        cells = [label]
        for s in ("S2", "S3", "S4"):
            v = [pfmt.format(r["paper"][tab]["rows"][key][s]), fmt.format(r["ns3"][s][key]), fmt.format(r["ours"][s][key])]
            cells.append(f"{v[0]} in all three" if len(set(v)) == 1 else " / ".join(v))
        out.append(cells)
    return table(["60 s run (paper / ns-3 3.44 / fabricsim)", "S2 moderate burst", "S3 heavy, FIFO", "S4 heavy, FQ-CoDel"],
                 out)


def incast_s1() -> str:
    """S1 (TCP) against ns-3 3.44 only, with the relative difference and, where the study has one, its tolerance."""
    r = _incast()
    n, m = r["ns3"]["S1"], r["ours"]["S1"]
    out = []
    for label, key, fmt in (("throughput (Mb/s)", "throughput_mbps", "{:.2f}"), ("loss (%)", "loss_pct", "{:.2f}"),
                            ("mean delay (ms)", "mean_delay_ms", "{:.2f}"), ("TX packets", "tx_packets", "{:,.0f}")):
        tol = r["tol"].get(key, {})
        bound = (f"±{tol['rel'] * 100:g}%" if "rel" in tol else f"±{tol['abs']:g} points" if "abs" in tol
                 else "not compared")
        diff = signed((m[key] - n[key]) / n[key] * 100) if key != "loss_pct" else f"{m[key] - n[key]:+.2f} points".replace("-", "−")
        out.append([label, fmt.format(n[key]), fmt.format(m[key]), diff, bound])
    return table(["S1 (packets over data and ACK flows)", "ns-3 3.44", "fabricsim", "difference", "tolerance"], out)


def incast_speed() -> str:
    """fabricsim's time per 60 s scenario (measured now) against ns-3's `Simulator::Run` (as recorded)."""
    r = _incast()
    names = {"S1": "S1 (TCP)", "S2": "S2 (moderate burst)", "S3": "S3 (heavy, FIFO)", "S4": "S4 (heavy, FQ-CoDel)"}
    rows = [[names[s], f"{r['ours'][s]['tx_packets']:,}", f"{r['wall'][s]:.2f} s", f"{r['ns3'][s]['wall_s']:.1f} s",
             f"{r['ns3'][s]['wall_s'] / r['wall'][s]:.0f}×"] for s in names]
    from validate_incast import s3_whole_process

    whole = s3_whole_process(60.0)
    ns3 = r["ns3"]["S3"]["wall_s"]
    return (table(["60 s scenario", "TX packets", "fabricsim (whole run)", "ns-3 3.44 (`Simulator::Run`)", "ratio"], rows)
            + "\n\nfabricsim: each scenario run once in one process (building, simulating, metrics), on the date below. "
              "ns-3: `Simulator::Run` alone, as recorded in experiments/incast/ns3_reference.json when that file was "
              "made; `make validate` runs both side by side and prints the ratios again. "
              f"S3 as a whole `fabricsim incast --rate-mbps 200 --json` process (Python start-up, imports, building, "
              f"simulating, metrics, JSON; best of 3): {whole:.2f} s, {ns3 / whole:.0f}× ns-3's `Simulator::Run` "
              f"(issue 21's target: ≥ 100×, " + ("met" if ns3 / whole >= 100 else "**missed**") + ").\n" + r["stamp"])


# ------------------------------------------------------------------------------------ study 000: collectives

def collective_example() -> str:
    """Study 000's page's collective example on its fabric: 4n_2r all-reduce of 10 MiB, 30 seeds."""
    cmd = ["fabricsim", "collective", "--placement", "4n_2r", "--pattern", "shift-all-reduce", "--size", "10MiB",
           "--seeds", "30", "--json"]
    out = json.loads(subprocess.run([str(BIN / cmd[0]), *cmd[1:]], capture_output=True, text=True, check=True,
                                    cwd=ROOT).stdout)
    ct = out["completion_time_ms"]
    mean, ci = ct["mean"], ct["ci95"]
    return (f"`{' '.join(cmd)}` gives a completion time of {mean:.3f} ± {ci:.3f} ms (mean ± 95% CI over 30 seeds; "
            f"the paper's Table IV: 5.67 ms).")


@functools.cache
def _table4() -> dict:
    """Study 000's Table IV exactly as `fabricsim reproduce orchestration` runs it (its own `table4`), each sweep timed."""
    from fabricsim.report.reproduce import StudyContext

    mod = study("orchestration")
    seconds, results = {}, {}

    class Timed(StudyContext):
        def sweep(self, spec, base=None, seeds=None):
            res, seconds[spec.name] = timed(super().sweep, spec, base, seeds)
            results[spec.name] = res
            return res

    with tempfile.TemporaryDirectory() as d:
        ctx = Timed(EXPERIMENTS / "orchestration", quick=False, workers=WORKERS, quiet=True, out=d)
        mod.table4(ctx)
        when = stamp()
        packet, flow = (results[n].frame().set_index(["preset", "seed"])["completion_time_ms"]
                        for n in ("table4", "table4_flow"))
    rows = paper("orchestration")["table4"]
    return {"rows": rows, "comps": {c.id: c for c in ctx.report.comparisons}, "per_seed": (packet, flow),
            "packet": packet.groupby("preset").mean(), "flow": flow.groupby("preset").mean(),
            "seeds": int(packet.groupby("preset").size().max()),
            "free": [r["placement"] for r in rows if r["placement"] in mod.CONTENTION_FREE], "seconds": seconds,
            "stamp": when}


def table4() -> str:
    """Table IV against the paper: contention-free rows, hop counts, best placements, the rest by distance."""
    r = _table4()
    c, rows, free = r["comps"], r["rows"], r["free"]
    time_of = {x["placement"]: c[f"t4-{x['placement']}-time"] for x in rows}
    hops = [c[f"t4-{x['placement']}-{k}"] for x in rows for k in ("hop1_m", "hop3_m")]
    ok_free = sum(time_of[p].passed for p in free)
    best = []
    for group in dict.fromkeys(x["group"] for x in rows):
        g = [x["placement"] for x in rows if x["group"] == group]
        theirs = min(g, key=lambda p: time_of[p].paper)
        ours = min(g, key=lambda p: time_of[p].ours)
        best.append((group, theirs, ours))
    agree = [b for b in best if b[1] == b[2]]
    differ = "".join(f"; for {g} nodes ours is {o} ({time_of[o].ours:.2f} ms), the paper's {t} "
                     f"({time_of[t].ours:.2f} ms here)" for g, t, o in best if t != o)
    rest = [x["placement"] for x in rows if x["placement"] not in free]
    near = [p for p in rest if time_of[p].passed]
    far = [p for p in rest if not time_of[p].passed]
    dist = {p: (time_of[p].ours - time_of[p].paper) / time_of[p].paper * 100 for p in far}
    tol = time_of[rest[0]].rel_tol * 100 if rest else 15
    out = [[f"Table IV, contention-free rows ({', '.join(free)})",
            f"{', '.join(f'{time_of[p].ours:.2f}' for p in free)} ms: {ok_free} of {len(free)} as the paper "
            f"(±{time_of[free[0]].rel_tol * 100:g}%)"],
           ["Table IV, 1-hop / 3-hop packet counts",
            f"{sum(h.passed for h in hops)} of {len(hops)} within two significant digits (concurrent rows: see below)"],
           ["Table IV, best placement per group", f"{len(agree)} of {len(best)} as the paper{differ}"],
           [f"Table IV, other rows within ±{tol:g}%",
            f"{len(near)} of {len(rest)}: " + ", ".join(f"{p} {time_of[p].ours:.2f} ({time_of[p].paper:g})" for p in near)]]
    if far:
        out.append([f"Table IV, the other {len(far)} rows", f"{signed(min(dist.values()), 0)} to {signed(max(dist.values()), 0)}: "
                    + ", ".join(f"{p} {signed(dist[p], 0)}" for p in far)])
    return (f"Table IV against the paper (All-Reduce of 10 MiB, {r['seeds']} seeds per placement, the paper's value in "
            f"parentheses):\n\n" + table(["what", "result"], out))


def table4_time() -> str:
    """How long Table IV takes in each engine."""
    r = _table4()
    s = r["seconds"]
    verdict = "met" if s["table4"] <= 120 else "**missed**"
    return (f"Table IV as `fabricsim reproduce orchestration` runs it, {len(r['rows'])} placements × {r['seeds']} seeds: "
            f"{s['table4']:.0f} s in the packet engine (issue 21's target: ≤ 120 s on 2 workers, {verdict}) and "
            f"{s['table4_flow']:.1f} s in the flow engine, on {WORKERS} workers.\n" + r["stamp"])


def flow_agreement() -> str:
    """The flow engine against the packet engine on Table IV's placements (the same seeds and routes)."""
    r = _table4()
    pk, fl, free = r["packet"], r["flow"], r["free"]
    rest = [x["placement"] for x in r["rows"] if x["placement"] not in free]
    rel = {p: (fl[p] - pk[p]) / pk[p] for p in pk.index}
    worst_free = max(abs(rel[p]) for p in free)
    ex = [p for p in ("12n_2r", "6n_2r_8n_2r") if p in rest]
    rows = [[f"Table IV's contention-free rows ({', '.join(free)}), All-Reduce 10 MiB, mean of {r['seeds']} seeds",
             " / ".join(f"{pk[p]:.3f}" for p in free) + " ms", " / ".join(f"{fl[p]:.3f}" for p in free) + " ms",
             "none" if worst_free == 0 else f"at most {worst_free:.1e} relative"],
            [f"Table IV's other {len(rest)} rows (contended), mean of {r['seeds']} seeds",
             "e.g. " + ", ".join(f"{p} {pk[p]:.2f} ms" for p in ex), ", ".join(f"{fl[p]:.2f}" for p in ex) + " ms",
             f"{signed(min(rel[p] for p in rest) * 100)} to {signed(max(rel[p] for p in rest) * 100)}"],
            ["phased all-to-all on FT(2;8,16), 128 hosts, 64 KiB (`tests/test_flow.py`)", "", "", "within 5% (asserted)"],
            ["random permutation on a 3:1 leaf-spine, 48 hosts, 1 MiB (`tests/test_flow.py`)", "", "",
             "within 5%, mean of 5 seeds (asserted)"]]
    packet, flow = r["per_seed"]
    seed_rel = ((flow - packet) / packet * 100).loc[rest]
    lo, hi = seed_rel.idxmin(), seed_rel.idxmax()
    return (table(["scenario", "packet", "flow", "difference"], rows)
            + f"\n\nSingle seeds of the contended rows differ more, from {signed(seed_rel[lo])} ({lo[0]}, seed {lo[1]}) "
              f"to {signed(seed_rel[hi])} ({hi[0]}, seed {hi[1]}): when two messages collide on a link, the packet "
              "engine's order of service decides which node falls behind, and that changes the later phases. The fluid "
              "model splits every collision evenly. The contended rows' mean gap comes from the Vela-like fabric's "
              "4 MiB input buffers: a NIC hands a message over at line rate while the switches absorb it, and the node "
              "starts its next message sooner than a fluid flow at its max-min rate would let it; with 128 KiB buffers "
              "the two engines agree within 5% (asserted in `tests/test_flow.py` for 4n_2r, 6n_4r and 4n_3r_6n_3r, "
              "and for 15 more rows in its slow tests).")


# ------------------------------------------------------------------------------------------ placement advisor

@functools.cache
def _advisor() -> dict:
    """The advisor section of `fabricsim reproduce orchestration` (its own `advisor`), on Table IV's 30-seed presets."""
    from fabricsim.report.reproduce import StudyContext

    from fabricsim.report.stats import summarize

    per_seed = _table4()["per_seed"][0]
    presets = summarize(per_seed.reset_index(), ["preset"], ["completion_time_ms"]).set_index("preset")
    mod = study("orchestration")
    with tempfile.TemporaryDirectory() as d:
        ctx = StudyContext(EXPERIMENTS / "orchestration", quick=False, workers=WORKERS, quiet=True, out=d)
        mod.advisor(ctx, presets)
    return {"comps": list(ctx.report.comparisons)}


def advisor() -> str:
    """The advisor against study 000's presets per Table IV group (packet engine, 30 seeds)."""
    comps = _advisor()["comps"]
    rows = []
    for c in comps:
        mode = "one node per server" if c.id.startswith("adv-one") else "shared servers allowed"
        case = c.quantity.split(", ", 1)[1].split(":")[0]
        rows.append([mode, case, "yes" if c.ours == 1.0 else "**no**", c.note])
    ok = sum(c.ours == 1.0 for c in comps)
    return (f"`fabricsim place` on every Table IV group, packet engine, 30 seeds (mean ± 95% CI); at least as fast as "
            f"the preset compared with, within the CI, in {ok} of {len(comps)} cases:\n\n"
            + table(["advisor setting", "group, case", "at least as fast", "figures"], rows))


def place_speed() -> str:
    """benchmarks/bench_place.py: decisions as whole `fabricsim place` processes."""
    import bench_place as bp

    rows = [[f"{r['fabric']}, {r['nodes']} nodes {r['options']}".strip(), f"{r['wall_s']:.1f} s",
             f"{r['runs']:,}", f"{r['completion_ms']:.2f} ms, {r['racks']} rack(s)",
             f"≤ {r['target_s']:g} s" + ("" if r["met"] else ": **missed**")] for r in bp.measure()]
    return (table(["decision (all-reduce, 10 MiB)", "whole process", "engine runs", "best found", "target"], rows)
            + "\n\n" + stamp())


def cluster_policies() -> str:
    """`fabricsim cluster`'s policy comparison (10 seeds) as `fabricsim reproduce orchestration` runs it; writes the
    figure docs/img/cluster_policies.png that docs/guide/cluster.md shows."""
    from fabricsim.cluster import ClusterConfig, compare_policies, draw_comparison

    mod = study("orchestration")
    df = compare_policies(ClusterConfig(**mod.CLUSTER), seeds=range(1, 11))
    draw_comparison(df, ROOT / "docs" / "img" / "cluster_policies.png")
    rows = []
    for _, r in df.iterrows():
        vs = "" if r["policy"] == "pack" else f"{signed(r['jct_vs_pack_pct'])} ± {r['jct_vs_pack_pct_ci95']:.1f}%"
        rows.append([r["policy"], f"{r['mean_slowdown']:.3f} ± {r['mean_slowdown_ci95']:.3f}",
                     f"{r['mean_jct_s']:.2f} ± {r['mean_jct_s_ci95']:.2f} s", vs, f"{r['utilization']:.2f}",
                     f"{r['fragmentation']:.2f}"])
    return (f"{mod.CLUSTER['jobs']} jobs of 2–8 nodes on the Vela-like fabric, Poisson arrivals at 60% offered load, "
            f"each study 000's All-Reduce of 10 MiB on 4 NICs per node, 100 times; mean ± 95% CI over 10 seeds (the "
            f"same job stream per seed for every policy):\n\n"
            + table(["policy", "mean slowdown", "mean JCT", "JCT vs pack (paired)", "utilization", "fragmentation"],
                    rows))


def cluster_speed() -> str:
    """benchmarks/bench_cluster.py: 1,000 jobs on the 6,144-server baseline, one process per policy."""
    import bench_cluster as bc

    rows = [[p, f"{w:.0f} s", f"{m['solo_runs']:,}", f"{m['mean_slowdown']:.3f}",
             f"≤ {bc.TARGET_S / 60:g} min" + ("" if w <= bc.TARGET_S else ": **missed**")] for p, w, m in bc.measure()]
    return (table(["policy (1,000 jobs, study 003's trace sizes, ring all-reduce)", "whole simulation",
                   "flow-engine solo runs", "mean slowdown", "target"], rows) + "\n\n" + stamp())


# ---------------------------------------------------------------------------------------------- study 004: FORS

def fors_throughput() -> str:
    """Figs 3 and 6 as `fabricsim reproduce fors` computes them (full run): the table, the fit, the study's numbers
    and its claims."""
    from fabricsim.fors import default_scheme
    from fabricsim.studies.fors import SCENARIOS, calibrate, evaluate, scenario
    from fabricsim.topology.fattree import FatTree

    ar_msg = 256 * 1024
    fit, fit_ar = calibrate(FatTree(20, 18)), calibrate(FatTree(20, 18), msg_bytes=ar_msg)
    doc = paper("fors")
    val, total, rows = {}, {}, []
    stated = {(p["scheme"], p["scenario"]): p["gbps"] for p in doc["per_server_gbps"]}
    for name in SCENARIOS:
        ft = scenario(name)
        routing = default_scheme(ft)
        d = evaluate(ft, routing, overhead_s=fit)
        f = evaluate(ft, "fors", overhead_s=fit)
        a = evaluate(ft, "ftree-ar", msg_bytes=ar_msg, overhead_s=fit_ar)
        for scheme, ev in (("default", d), ("fors", f), ("ftree-ar", a)):
            val[scheme, name], total[scheme, name] = ev.throughput_per_server_gbps, ev.total_tbps
        label = {"ftree": "Ftree", "minhop": "Min-Hop"}[routing] + (", calibrated" if name == "0F" else "")
        study_cell = " → ".join(f"{stated[k, name]:g}" for k in ("default", "fors") if (k, name) in stated)
        rows.append([name, str(ft.f), str(ft.m), f"{d.throughput_per_server_gbps:.1f} ({label})", str(d.max_flows_per_link),
                     f"{f.throughput_per_server_gbps:.1f}", str(f.phases), f"{a.throughput_per_server_gbps:.1f}", study_cell])
    names = {"default": "default", "fors": "FORS"}
    checks = [(f"{names[p['scheme']]} {p['scenario']}", val[p["scheme"], p["scenario"]], p["gbps"], "Gb/s")
              for p in doc["per_server_gbps"] if (p["scheme"], p["scenario"]) != ("default", "0F")]
    checks += [(f"{names[p['scheme']]} {p['scenario']} total", total[p["scheme"], p["scenario"]], p["tbps"], "Tb/s")
               for p in doc["total_tbps"] if (p["scheme"], p["scenario"]) != ("default", "0F")]
    within = sum(abs(o - s) <= 0.10 * s for _, o, s, _ in checks)
    fors_first = [n for n in SCENARIOS if val["fors", n] < max(v for (k, s), v in val.items() if s == n and k != "fors") - 1e-6]
    holds, misses = [], []
    for cl in doc["claims"]:
        a, b = val[tuple(cl["a"])], val[tuple(cl["b"])]
        ok = abs(a - b) <= 0.02 * max(a, b) if cl["kind"] == "equal" else a > b
        (holds if ok else misses).append(f"{cl['text']}: {a:.1f} against {b:.1f} Gb/s")
    text = [table(["scenario", "f", "m", "default routing (Gb/s)", "default: most flows on a link", "FORS (Gb/s)",
                   "FORS phases", "Ftree-AR (Gb/s)", "study (default → FORS)"], rows), "",
            f"The overhead fitted on 0F to the study's 141 Gb/s is {fit * 1e6:.2f} µs per phase with 1 MiB messages "
            f"(Ftree-AR, packet engine, {ar_msg // 1024} KiB messages: {fit_ar * 1e6:.2f} µs, fitted the same way); 0F's "
            f"default row is that fit, not a result. Against the study's other stated numbers, {within} of "
            f"{len(checks)} within ±10%: " + ", ".join(f"{n} {o:.1f} against {s:g} {u}" for n, o, s, u in checks) + ". "
            + ("FORS is at least every other scheme in every scenario." if not fors_first else
               f"FORS is below another scheme in {', '.join(fors_first)}."),
            "", f"Of the study's {len(doc['claims'])} qualitative claims, {len(holds)} hold and {len(misses)} miss:"]
    text += [f"- holds: {h}" for h in holds] + [f"- **misses**: {m}" for m in misses]
    return "\n".join(text)


# ---------------------------------------------------------------------------------------------- study 002: INA

@functools.cache
def _ina() -> dict:
    """ATRO on the study's instances, the baselines over 30 seeds, the aggregator-placement variants, whole
    `fabricsim ina` processes and the default plan in the flow engine, each timed."""
    from fabricsim.ina import Instance, atro, solve
    from fabricsim.ina.simulate import simulate

    inst = {("default", 90, 4): Instance()}
    inst.update({("workers", w, 4): Instance(workers=w) for w in range(60, 90)})
    inst.update({("aggregators", 90, a): Instance(aggregators=a) for a in (2, 3, 6, 7, 8)})
    at = {k: timed(atro, i) for k, i in inst.items()}
    base = {(s, t): [timed(solve, s, t, seed) for seed in range(1, 31)]
            for s in ("aro", "paring", "spar") for t in ("leaf-spine", "fat-tree")}
    placed = {(s, p): [solve(s, "leaf-spine", seed, agg_placement=p) for seed in range(1, 31)]
              for s, p in (("paring", "tor"), ("aro", "spine"))}
    procs = {}
    for key in (("default", 90, 4), ("workers", 60, 4), ("workers", 89, 4), ("aggregators", 90, 2),
                ("aggregators", 90, 3), ("aggregators", 90, 6), ("aggregators", 90, 8)):
        argv = [BIN / "fabricsim", "ina", "--json", "--ina-workers", str(key[1]), "--aggregators", str(key[2])]
        procs[key] = process(argv)[0]
    sim, sim_s = timed(simulate, at["default", 90, 4][0].plan)
    return {"atro": at, "base": base, "placed": placed, "procs": procs, "sim": sim, "sim_s": sim_s, "stamp": stamp()}


def _atro_groups(r: dict) -> list[tuple[str, list]]:
    """The ATRO table's rows: (label, the instance keys it covers)."""
    keys = list(r["atro"])
    return [("90 workers, 4 aggregators (default)", [("default", 90, 4)]),
            ("60–89 workers, 4 aggregators", [k for k in keys if k[0] == "workers"]),
            ("90 workers, 2 / 3 aggregators", [("aggregators", 90, 2), ("aggregators", 90, 3)]),
            ("90 workers, 6–8 aggregators", [("aggregators", 90, a) for a in (6, 7, 8)])]


def ina_results() -> str:
    """ATRO's optimum per instance against the study, the baselines' means, factors, ties and placement variants."""
    r = _ina()
    doc = paper("ina")
    study_cells = ['50 (Fig. 3); "about 33" (§IV-B3)', "100 up to 80", "", "100"]
    rows = []
    for (label, keys), cell in zip(_atro_groups(r), study_cells):
        gbps = [r["atro"][k][0].throughput_gbps for k in keys]
        ours = (" / ".join(f"{g:.3g}" for g in gbps) if label.startswith("90 workers, 2")
                else span(gbps, "{:.3g}"))
        rows.append([label, ours, cell])
    proven = all(s.optimal for s, _ in r["atro"].values())
    best = r["atro"]["default", 90, 4][0].throughput_gbps
    factor = {(f["scheme"], f["topology"]): f["factor"] for f in doc["fig3_improvement"]}
    mean = {k: statistics.fmean(s.throughput_gbps for s, _ in v) for k, v in r["base"].items()}
    ties = {k: sum(abs(s.throughput_gbps - best) < 1e-9 for s, _ in v) for k, v in r["base"].items()}
    above = [k for k, v in r["base"].items() if any(s.throughput_gbps > best + 1e-9 for s, _ in v)]
    aro_proven = all(s.optimal for t in ("leaf-spine", "fat-tree") for s, _ in r["base"]["aro", t])
    sch = {"aro": "ARO", "paring": "PARING", "spar": "SPAR"}
    brows = [[sch[s]] + [x for t in ("leaf-spine", "fat-tree") for x in (f"{mean[s, t]:.1f}", f"{best / factor[s, t]:.1f}")]
             for s in sch]
    fac = {t: ", ".join(f"{best / mean[s, t]:.1f}× ({sch[s]})" for s in sch) for t in ("leaf-spine", "fat-tree")}
    theirs = {t: ", ".join(f"{factor[s, t]:.1f}×" for s in sch) for t in ("leaf-spine", "fat-tree")}
    tie_text = ", ".join(f"{sch[s]} on {n} {t} seeds" for (s, t), n in ties.items() if n) or "none"
    placed = {k: statistics.fmean(s.throughput_gbps for s in v) for k, v in r["placed"].items()}
    sim = r["sim"]
    return "\n".join([
        f"ATRO, {'proven optimal at every point' if proven else 'NOT proven optimal everywhere'} (HiGHS, one thread; "
        "solve times in \"Performance\"):", "",
        table(["instance", "ours (Gb/s)", "study"], rows), "",
        f"Cross-check: the default ATRO plan in the flow engine (`--simulate`) runs at {sim.rate_gbps:.2f} Gb/s per "
        f"worker, the optimizer's {best:g} ({sim.messages:,} messages).", "",
        "Baselines, mean over 30 seeds, against the study's (50 Gb/s over its improvement factor)"
        + (", every ARO run proven optimal (CP-SAT):" if aro_proven else ", not every ARO run proven optimal:"), "",
        table(["scheme", "Leaf-Spine ours", "study", "Fat-Tree ours", "study"], brows), "",
        ("ATRO's optimum is at least every baseline's on every seed" if not above else
         f"A baseline beats ATRO on some seed ({', '.join(f'{sch[s]} {t}' for s, t in above)})")
        + f" (ties: {tie_text}). ATRO over the baselines' means: {fac['leaf-spine']} on the Leaf-Spine, against the "
          f"study's {theirs['leaf-spine']}; {fac['fat-tree']} on the Fat-Tree, against {theirs['fat-tree']}. "
          f"With ToR aggregators PARING gives {placed['paring', 'tor']:.2f} Gb/s on the Leaf-Spine (random ones: "
          f"{mean['paring', 'leaf-spine']:.1f}; the study: {best / factor['paring', 'leaf-spine']:.2f}), and ARO with "
          f"spine aggregators {placed['aro', 'spine']:.1f} (random ones: {mean['aro', 'leaf-spine']:.1f}; the study: "
          f"{best / factor['aro', 'leaf-spine']:.1f})."])


def ina_times() -> str:
    """ATRO's solve times, whole `fabricsim ina` processes, the baselines' time per seed, the plan's simulation."""
    r = _ina()
    rows = []
    for label, keys in _atro_groups(r):
        solve_s = [r["atro"][k][1] for k in keys]
        proc = [r["procs"][k] for k in keys if k in r["procs"]]
        joined = label.startswith("90 workers, 2")
        rows.append([label, (" / ".join(f"{s:.2f}" for s in solve_s) if joined else span(solve_s)) + " s",
                     (" / ".join(f"{s:.2f}" for s in proc) if joined else span(proc)) + " s"])
    per = {k: statistics.fmean(t for _, t in v) for k, v in r["base"].items()}
    sch = {"aro": "ARO", "paring": "PARING", "spar": "SPAR"}
    return "\n".join([
        "`benchmarks/bench_ina.py`'s cases: ATRO to proven optimality (HiGHS, one thread; target ≤ 10 s for the default "
        "instance; the study took 2–330 s with Gurobi), in-process and as a whole `fabricsim ina --json` process:", "",
        table(["ATRO instance", "solve", "whole process"], rows), "",
        "The baselines, mean time per seed (Leaf-Spine / Fat-Tree): "
        + ", ".join(f"{sch[s]} {per[s, 'leaf-spine']:.2f} / {per[s, 'fat-tree']:.2f} s" for s in sch)
        + f". The default plan in the flow engine (`--simulate`): {r['sim_s']:.2f} s of wall time.", r["stamp"]])


def ina_quick_time() -> str:
    """`fabricsim reproduce ina --quick`, whole process."""
    with tempfile.TemporaryDirectory() as d:
        wall = reproduce_cli("ina", d, quick=True)
        when = stamp()
    return f"`fabricsim reproduce ina --quick` took {wall // 60:.0f} min {wall % 60:.0f} s on {WORKERS} workers.\n{when}"


# ---------------------------------------------------------------------------------------------- study 003: CPO

def _bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} B"


@functools.cache
def _cpo() -> dict:
    """`fabricsim reproduce cpo` as a whole process, timed; its Fig. 2 grid read back from the sweep store."""
    from fabricsim.sweep.store import Store

    with tempfile.TemporaryDirectory() as d:
        wall = reproduce_cli("cpo", d)
        when = stamp()
        with Store(Path(d) / "cpo" / "store") as s:
            runs = len(s.rows(None, status=None))
            fig2 = s.frame("fig2")
    return {"wall": wall, "runs": runs, "fig2": fig2, "stamp": when}


def cpo_results() -> str:
    """Locality on the synthetic trace, Fig. 2's largest increases against the study's, two sensitivity cells."""
    from fabricsim.cpo import load
    from fabricsim.cpo.locality import pack, synthetic_trace
    from fabricsim.cpo.locality_sim import overhead

    seeds = range(1, 11)
    share = {n: statistics.fmean(pack(load(n), synthetic_trace(s)).summary()["large_single_group_fraction"] for s in seeds)
             for n in ("baseline", "motion")}
    g = _cpo()["fig2"].groupby(["vnic_gbps", "stack_us", "msg_bytes", "packet_bytes"])["increase_pct"].mean().reset_index()
    rows = []
    for p in paper("cpo")["fig2_max_increase_pct"]:
        sub = g[g["vnic_gbps"] == p["vnic_gbps"]]
        top = sub.loc[sub["increase_pct"].idxmax()]
        rows.append([p["stack"].replace("-", "–").replace("us", " µs"), f"{p['value']:g}%", f"{top['increase_pct']:.1f}%",
                     f"{_bytes(int(top['msg_bytes']))} messages, {_bytes(int(top['packet_bytes']))} packets, "
                     f"{top['stack_us']:g} µs"])
    delay = overhead(256, 256, 70, 1.25, fabric_delay_us=0.3)["increase_pct"]
    three = overhead(256, 256, 70, 1.25, leaves=3)["increase_pct"]
    return (f"On our synthetic trace (seeds 1–10) MOTION keeps {share['motion'] * 100:.0f}% of the jobs of ≥ 24 VMs in "
            f"one group and the baseline {share['baseline'] * 100:.0f}%.\n\n"
            + table(["stacks", "study's largest increase", "ours", "where"], rows)
            + f"\n\nAt 256 B messages and packets and a 1.25 µs stack, 0.3 µs of propagation on each leaf-spine link "
              f"(`--fabric-delay-us 0.3`) gives {delay:.1f}%, and spreading over three switches instead of two {three:.1f}%.")


def cpo_time() -> str:
    """`fabricsim reproduce cpo`, whole process, with its sweep runs counted."""
    r = _cpo()
    f = r["fig2"]
    cells = len(f.groupby(["vnic_gbps", "stack_us", "msg_bytes", "packet_bytes"]))
    return (f"`fabricsim reproduce cpo` (the design numbers, locality over 10 seeds, and Fig. 2: {cells} cells × "
            f"{f['seed'].nunique()} seeds, each run two packet-engine simulations; {r['runs']} sweep runs in all) took "
            f"{r['wall']:.0f} s on {WORKERS} workers.\n" + r["stamp"])


# ----------------------------------------------------------------------------------------------- benchmarks

def frontdoor() -> str:
    """benchmarks/bench_frontdoor.py's four cases, each in its own process."""
    a = case("bench_frontdoor.py", "ft_flow")
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "a2a.toml"
        p.write_text('seed = 1\nfidelity = "flow"\n[topology]\nkind = "fat_tree"\nm0 = 20\nm1 = 18\nrate = "200Gbps"\n'
                     '[[collectives]]\nkind = "all_to_all"\nalgorithm = "shift"\nranks = "all"\nsize = "1MB"\n'
                     'packet_size = 4096\nbarrier = true\n')
        toml_s, _, out = process([BIN / "fabricsim", "run", p, "--fidelity", "flow", "--json"])
    flows = len(json.loads(out)["flows"])
    c = case("bench_frontdoor.py", "direct1000")
    b = case("bench_frontdoor.py", "ft_packet")
    when = stamp()

    def miss(bad: bool) -> str:
        return ": **missed**" if bad else ""

    ratio = a["total_s"] / a["engine_s"]
    rows = [[f"phased all-to-all FT(2;20,18), {a['messages']:,} × 1 MB, flow: `fabricsim.run` from Python, build included",
             f"{a['total_s']:.2f} s (engine {a['engine_s']:.3f} s): {ratio:.1f}×", "≤ 2.5× the engine" + miss(ratio > 2.5)],
            ["the same as a `[[collectives]]` scenario, `fabricsim run --fidelity flow --json`, whole process",
             f"{toml_s:.2f} s ({flows:,} flow rows of JSON)", "≤ 0.6 s" + miss(toml_s > 0.6)],
            [f"1,000-host direct all-to-all, {c['messages']:,} messages, built, validated and handed to the engine",
             f"{c['total_s']:.2f} s, {c['peak_rss_mb']:.0f} MB peak RSS",
             "≤ 1.0 s, ≤ 400 MB" + miss(c["total_s"] > 1.0 or c["peak_rss_mb"] > 400)],
            ["FT(2;20,18) phased all-to-all of 64 KiB, packet, lossless, per-message ECMP: peak RSS",
             f"{b['peak_rss_mb']:.0f} MB ({b['total_s']:.1f} s)", "≤ 200 MB" + miss(b["peak_rss_mb"] > 200)]]
    return table(["case", "measured", "target"], rows) + "\n\n" + when


def chakra_speed() -> str:
    """benchmarks/bench_chakra.py's cases, each in its own process."""
    big = case("bench_chakra.py", "big")
    flow = case("bench_chakra.py", "dp64_flow")
    packet = case("bench_chakra.py", "dp64_packet")
    hybrid = case("bench_chakra.py", "dp64_hybrid")
    when = stamp()
    err = abs(hybrid["step_ms"] / packet["step_ms"] - 1) * 100
    parse = big["parse_s"] + big["lower_s"]
    rows = [[f"{big['nodes']:,}-node synthesized trace (2 ranks): parse + lower",
             f"{big['parse_s']:.2f} s + {big['lower_s']:.2f} s, {big['peak_rss_mb']:.0f} MB peak",
             "≤ 3 s, ≤ 1 GB" + (": **missed**" if parse > 3 or big["peak_rss_mb"] > 1024 else "")],
            ["64-rank data-parallel step, 24 layers (h = 4096, s = 2048), FT(2;8,8) at 100 Gb/s, flow",
             f"{flow['total_s']:.2f} s", "≤ 1 s" + (": **missed**" if flow["total_s"] > 1 else "")],
            [f"the same, packet ({packet['events'] / 1e9:.2f} G events, 4 KiB packets)", f"{packet['total_s']:.1f} s",
             "≤ 30 s" + (": **missed**" if packet["total_s"] > 30 else "")],
            [f"the same, hybrid ({hybrid['events'] / 1e6:.0f} M events; step {hybrid['step_ms']:.3f} ms against packet's "
             f"{packet['step_ms']:.3f} ms, {err:.3f}% apart)", f"{hybrid['total_s']:.2f} s",
             "≤ 3 s" + (": **missed**" if hybrid["total_s"] > 3 else "")]]
    return table(["case", "measured", "target"], rows) + "\n\n" + when


def synth_3d_speed() -> str:
    """`fabricsim trace synth 3d` of GPT-3 175B on 1,024 ranks, a whole process (start-up and writing included)."""
    from fabricsim.train.chakra import make_job, synthesize

    args = dict(tp=8, pp=8, dp=16, global_batch=1536)
    job = make_job("gpt3-175b", **args)
    nodes = synthesize(job).nodes
    with tempfile.TemporaryDirectory() as d:
        wall, rss, _ = process([BIN / "fabricsim", "trace", "synth", "3d", "--model", "gpt3-175b",
                                *[x for k, v in args.items() for x in (f"--{k.replace('_', '-')}", v)], "--out", d])
        written = sum(f.stat().st_size for f in Path(d).iterdir())
    when = stamp()
    rows = [[f"GPT-3 175B, TP 8 × PP 8 × DP 16 ({job.par.world:,} ranks), global batch 1,536 ({job.micro_batches} "
             f"micro-batches per pipeline), 1F1B: {nodes / 1e6:.1f} M nodes, {written / 1e9:.2f} GB written",
             f"{wall:.1f} s, {rss:.0f} MB peak", "≤ 60 s" + (": **missed**" if wall > 60 else "")]]
    return table(["`fabricsim trace synth 3d`, whole process", "measured", "target"], rows) + "\n\n" + when


def fabrics_speed() -> str:
    """benchmarks/bench_fabrics.py's cases, each a whole process (median of 3)."""
    import bench_fabrics as bf

    rows = []
    labels = {"packet16": "packet, k = 16 fat_tree3 (1,024 hosts), random permutation of 1 MiB messages (4 KiB packets)",
              "flow48": "flow, k = 48 fat_tree3 (27,648 hosts), one all-to-all phase of 1 MiB",
              "rail8192": "flow, 8,192-GPU rail cluster (32 SUs × 32 servers), hierarchical all-reduce (tree) of 1 GiB"}
    for name, target in bf.CASES.items():
        runs = [bf.whole_process(name) for _ in range(3)]
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        res = runs[0][2]
        gb = bf.RSS_GB.get(name)
        missed = wall > target or (gb is not None and rss > gb)
        rows.append([labels[name], f"{wall:.2f} s, {res['events']:,} events, {rss:.2f} GB peak",
                     f"≤ {target:g} s" + (f", ≤ {gb:g} GB" if gb else "") + (": **missed**" if missed else "")])
    return table(["case", "measured (whole process)", "target"], rows) + "\n\n" + stamp()


def roce_speed() -> str:
    """benchmarks/bench_roce.py: the 8-to-1 DCQCN incast as a whole `fabricsim run` process, median of 5."""
    import bench_roce as br

    m = br.measure(5)
    missed = m["wall_s"] > br.TARGET_S
    return (table(["case", "measured (whole process)", "target"],
                  [["8-to-1 RoCE incast, 10 MB per sender, 100 Gb/s, DCQCN + PFC + ECN (examples/roce_incast.toml)",
                    f"{m['wall_s']:.2f} s ({m['events']:,} events; engine {m['engine_s']:.3f} s)",
                    f"≤ {br.TARGET_S:g} s" + (": **missed**" if missed else "")]])
            + "\n\n" + stamp())


def roce_vs_hpcc() -> str:
    """benchmarks/vs_hpcc_ns3.py: the star incasts on fabricsim (5 seeds) and HPCC's ns-3 fork (when built)."""
    import vs_hpcc_ns3 as vh

    rows = []
    for name, case in vh.CASES.items():
        ours, theirs = vh.run_fabricsim(case, 5), vh.run_peer(name, case)
        if theirs is None:
            raise RuntimeError("HPCC's ns-3 fork is not built here (benchmarks/HPCC_NS3.md)")
        fo, ft = statistics.fmean(ours["fct_ns"]), statistics.fmean(theirs["fct_ns"])
        qo, qt = ours["queue_avg_bytes"], theirs["queue_avg_bytes"]
        rows.append([name.replace("_", " "), f"{fo / 1e3:,.0f} / {ft / 1e3:,.0f} ({signed(100 * (fo - ft) / ft)})",
                     f"{qo / 1e3:,.1f} / {qt / 1e3:,.1f} ({signed(100 * (qo - qt) / qt) if qt else 'n/a'})",
                     f"{ours['pauses']:g} / {theirs['pauses']}",
                     f"{ours['wall_s']:.2f} / {theirs['wall_s']:.2f} s ({theirs['wall_s'] / ours['wall_s']:.1f}×; "
                     f"engine alone {theirs['wall_s'] / ours['engine_s']:.0f}×)"])
    return (table(["incast (100 Gb/s, 10 MB per sender)", "mean FCT µs, fabricsim / fork", "mean queue KB",
                   "PAUSEs", "wall, whole processes"], rows)
            + "\n\n" + stamp())


def uec_vs_roce() -> str:
    """benchmarks/uec_vs_roce.py: the MoE all-to-all of examples/uec_alltoall.toml over UEC (sprayed and per-flow
    ECMP) and over RoCE with DCQCN and HPCC on the same fabric; writes the figure docs/img/uec_vs_roce.png that
    docs/guide/ultra-ethernet.md shows."""
    import uec_vs_roce as uv

    res = uv.run_all()
    uv.draw(res, uv.FIGURE)
    return uv.render(res)


def bench_engine() -> str:
    """benchmarks/bench_engine.py's three cases: events, events per packet-hop and link crossings per second (median
    of 3 runs), against issue 29's figures before its re-baselining and its targets."""
    import bench_engine as be

    before = {"micro": "51.2 M, 2.00", "ft-a2a": "88.5 M, 2.75", "s3": "18.6 M, —"}
    names = {"micro": "micro-benchmark: 64 flows × 100,000 packets × 4 hops, FIFO queues",
             "ft-a2a": "FT(2;20,18) all-to-all of 64 KiB, lossless (credits), per-message ECMP",
             "s3": "incast S3: 8 OnOff senders into one bottleneck, 60 s (engine alone)"}
    rows = []
    for case in ("micro", "ft-a2a", "s3"):
        m = be.measure(case, 3)
        per_hop = m["per_hop"]
        verdict = "—" if per_hop is None else "≤ 1.2: " + ("met" if per_hop <= 1.2 else "**missed**")
        rows.append([names[case], f"{m['events'] / 1e6:.1f} M", f"{per_hop:.2f}" if per_hop else "—", before[case],
                     verdict, f"**{m['crossings_rate'] / 1e6:.1f} M** / {m['rate'] / 1e6:.1f} M "
                     f"({m['min'] / 1e6:.1f}–{m['max'] / 1e6:.1f})", f"{m['engine_s']:.2f} s"])
    b = be.bare_loop()
    ratio = b["crossings"] / b["heap"]
    bare = (f"Beside a bare event loop, in one process (the Rust example `bench_engine`: the micro-benchmark, then the "
            f"event queue alone, popping as many events as the engine crossed links, with as many pending and no "
            f"queues, packets or statistics): the engine crosses {b['crossings'] / 1e6:.1f} M links/s "
            f"({b['engine'] / 1e6:.1f} M events/s); a bare binary-heap loop pops {b['heap'] / 1e6:.1f} M/s and the "
            f"engine's radix heap alone {b['radix'] / 1e6:.1f} M/s. Crossings per second = {ratio:.2f}× the bare "
            f"binary-heap loop (issue 29's target ≥ 1.4×: " + ("met" if ratio >= 1.4 else "**missed**") + ").")
    return (table(["case", "events", "events per packet-hop", "before issue 29 (events, per hop)",
                   "target (per hop)", "link crossings/s / events/s (min–max of 3)", "engine"], rows)
            + "\n\n" + bare + "\n" + stamp())


def _fresh(binary: Path, *crates: str) -> None:
    """Raise unless `binary` exists and is newer than every Rust source of `crates` (this script never builds)."""
    sources = [p for c in crates for p in (ROOT / "crates" / c).rglob("*.rs")]
    if not binary.exists() or binary.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        raise RuntimeError(f"{binary.relative_to(ROOT)} is missing or older than crates/{{{','.join(crates)}}}: build "
                           "it first (`make bench` does)")


def bench_flow() -> str:
    """benchmarks/bench_flow.py's cases: the Rust example as whole processes, median wall of 3, its own peak RSS."""
    import bench_flow as bf

    binary = ROOT / "target" / "release" / "examples" / "bench_flow"
    _fresh(binary, "fabricsim-flow", "fabricsim-core")
    names = {"shift": "one all-to-all phase on FT(2;100,100), shift permutation",
             "random": "the same, random permutation (contends for links)",
             "a2a": "full phased all-to-all on FT(2;20,18), barrier between phases"}
    rows = []
    for mode, m0, m1, target in bf.CASES:
        runs = [process([binary, mode, m0, m1]) for _ in range(3)]
        wall = statistics.median(w for w, _, _ in runs)
        flows = int(re.search(r"(\d+) flows", runs[0][2]).group(1))
        rows.append([names[mode], f"{flows:,}", f"**{wall:.2f} s**", f"{max(m for _, m, _ in runs):.0f} MiB",
                     f"≤ {target:g} s" + (": **missed**" if wall > target else "")])
    return table(["case", "flows", "whole process (median of 3)", "peak memory", "target"], rows) + "\n\n" + stamp()


def bench_fors() -> str:
    """benchmarks/bench_fors.py's cases: FORS schedule + route of every phase, in-process and as whole processes."""
    from fabricsim.routing import fors_route
    from fabricsim.schedule import fors_schedule
    from fabricsim.studies.fors import SCENARIOS, scenario
    from fabricsim.topology.fattree import random_failures

    cases = [scenario(n) for n in SCENARIOS] + [random_failures(20, 18, k, seed=s) for k in (5, 20, 80) for s in (0, 1)]
    inproc, whole = [], []
    for ft in cases:
        inproc.append(timed(lambda ft=ft: fors_route(ft, fors_schedule(ft)))[1])
        failed = ",".join(f"{a}:{b}" for a, b in sorted(ft.failed))
        whole.append(process([BIN / "fabricsim", "fors", "route", "--out", os.devnull]
                             + (["--failed", failed] if failed else []))[0])
    return (f"`benchmarks/bench_fors.py` times FORS scheduling and routing of every phase of FT(2;20,18), for the "
            f"study's {len(SCENARIOS)} named failure scenarios and 6 random sets of 5, 20 and 80 failed links: "
            f"{span(inproc)} s in-process, {span(whole)} s as a whole `fabricsim fors route` process (target ≤ 3 s; the "
            f"study's Gurobi ILP took 27–37 s on 8 threads).\n" + stamp())


def hybrid_error() -> str:
    """benchmarks/hybrid_error.py: every corpus scenario at packet and at hybrid fidelity (issue 30's error and
    speed-up), as its Markdown table and summary lines."""
    import hybrid_error as he

    results = he.run_corpus(he.corpus(), echo=None)
    lines = "\n".join(f"- {line}" for line in he.summary_lines(results))
    return f"{he.markdown(results)}\n\n{lines}\n\n{stamp()}"


HYBRID_EXAMPLES = [("training_step.toml", ""), ("roce_allreduce.toml", " (DCQCN, PFC, 64 MiB ring)"),
                   ("roce_incast.toml", " (8 × 10 MB, DCQCN)"), ("rail_allreduce.toml", " (short ring steps)")]
"""The shipped examples docs/guide/hybrid.md measures at packet and at hybrid fidelity, with what to say of each."""


def hybrid_examples() -> str:
    """The shipped examples (HYBRID_EXAMPLES) at packet and at hybrid fidelity: completion, hybrid's error and the
    engine speed-up (engine seconds, `RunRecord.wall_s`; "no jump" when hybrid jumped nothing), then Table IV's 22
    rows as benchmarks/hybrid_table4.py runs them (2 seeds; task seconds)."""
    import statistics
    import warnings

    import fabricsim
    import hybrid_table4 as t4
    from fabricsim.errors import FabricsimWarning

    rows = []
    for name, what in HYBRID_EXAMPLES:
        sc = fabricsim.load_scenario(ROOT / "examples" / name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FabricsimWarning)
            pk, hy = fabricsim.run(sc, fidelity="packet"), fabricsim.run(sc, fidelity="hybrid")
        jumps = (hy.fast_forward or {}).get("jumps", 0)
        speed = f"{pk.wall_s / hy.wall_s:.2g}x" if jumps else "no jump"
        err = (hy.completion_time_s / pk.completion_time_s - 1) * 100
        rows.append([f"`examples/{name}`{what}", f"{pk.completion_time_s * 1e3:,.3f} ms",
                     signed(err, 3) if round(err, 3) else "0.000%", speed])
    t4rows = []
    for p in t4.ROWS:
        pk = [t4.one(p, seed, "packet") for seed in (1, 2)]
        hy = [t4.one(p, seed, "hybrid") for seed in (1, 2)]
        t4rows.append((statistics.mean(x for x, _ in pk), statistics.mean(x for x, _ in hy),
                       sum(w for _, w in pk), sum(w for _, w in hy)))
    worst = max(abs(h / q - 1) for q, h, _, _ in t4rows) * 100
    tp, th = sum(r[2] for r in t4rows), sum(r[3] for r in t4rows)
    rows.append(["Table IV's 22 rows (`benchmarks/hybrid_table4.py`, 2 seeds)",
                 f"{span([r[0] for r in t4rows], '{:.1f}')} ms", f"max {worst:.3f}% of a row's mean", f"{tp / th:.2g}x in all"])
    return table(["scenario", "packet completion", "hybrid error", "engine speed-up"], rows) + "\n\n" + stamp()


def hybrid_scale() -> str:
    """benchmarks/hybrid_scale.py: issue 30's job-size cases at hybrid fidelity under the 60 s target."""
    import hybrid_scale as hs

    return "\n".join(f"- {hs.line(r)}" for r in hs.measure()) + "\n\n" + stamp()


def bench_sweep() -> str:
    """benchmarks/bench_sweep.py: runs/s of a trivial scenario inline, on local processes and on Dask."""
    import bench_sweep as bs
    from distributed import LocalCluster

    runs = 400
    inline, _ = bs.timed(runs, workers=0)
    local, _ = bs.timed(runs, workers=WORKERS)
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=50) as cluster:
        bs.timed(8, scheduler=cluster.scheduler_address)  # warm the workers' imports
        dask, _ = bs.timed(runs, scheduler=cluster.scheduler_address)
    rows = [["inline (`--workers 0`)", f"{inline:.0f}", f"{1e3 / inline:.2f} ms"],
            ["local processes (default)", f"{local:.0f}", f"{1e3 / local:.2f} ms, pool start included"],
            [f"Dask LocalCluster, {WORKERS} worker processes on loopback", f"{dask:.0f}",
             f"{1e3 / dask:.2f} ms, cluster already up"]]
    summary = bs.summary_wall(10_000)
    return (f"`benchmarks/bench_sweep.py` measures the sweep overhead: {runs} runs of a trivial scenario (one 1 KiB "
            f"message over one link), each with an SQLite commit, using {WORKERS} workers:\n\n"
            + table(["executor", "runs/s", "per run"], rows) + "\n\n"
            + f"A sweep of 10,000 runs, all already stored, prints its summary in {summary:.1f} s (`fabricsim sweep` "
              "as a whole process: expansion, the per-point statistics, the table of the first 25 points).\n\n"
            + stamp())


def bench_startup() -> str:
    """benchmarks/bench_startup.py's commands, and the two imports `validate` cannot avoid or does avoid, as whole
    processes: median of 10 runs each after 2 warm-up runs, round-robin."""
    import bench_startup as bst

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmds = [(f"`{label}`", argv, target, ratio) for label, argv, target, ratio in bst.commands()]
    cmds += [("`python -c \"import click, pydantic\"`", [sys.executable, "-c", "import click, pydantic"], None, None),
             ("`python -c \"import numpy\"`", [sys.executable, "-c", "import numpy"], None, None)]
    runs = 10
    times: dict[str, list[float]] = {label: [] for label, _, _, _ in cmds}
    for i in range(runs + 2):
        for label, argv, _, _ in cmds:
            t = bst.once(argv, env)
            if i >= 2:
                times[label].append(t)
    base = statistics.median(times[cmds[0][0]])
    rows = []
    for label, _, target, ratio in cmds:
        med = statistics.median(times[label])
        parts = ([f"≤ {target:.2f} s"] if target is not None else []) + ([f"≤ {ratio:g}×"] if ratio is not None else [])
        met = (target is None or med <= target) and (ratio is None or med / base <= ratio)
        goal = f"{' and '.join(parts)}: " + ("met" if met else "**missed**") if parts else ""
        rows.append([label, f"{med:.3f} s", f"{med / base:.1f}", goal])
    return (f"`benchmarks/bench_startup.py` times the command line's start as whole processes, side by side in one run "
            f"(median of {runs} runs each, round-robin, bytecode cached):\n\n"
            + table(["command", "median", "× `python -c pass`", "target"], rows) + "\n\n" + stamp())


# -------------------------------------------------------------------------------------------------------- SimAI

def _simai_names() -> list[str]:
    import vs_simai as vs

    return [*vs.default_names(), *vs.LONG]


def simai() -> str:
    """benchmarks/vs_simai.py: fabricsim (a fresh run) beside SimAI's stored runs of its own AICB workloads, and the
    hand calculation of every difference."""
    import vs_simai as vs

    return vs.tables(vs.measure(_simai_names(), None))


def simai_speed() -> str:
    """benchmarks/vs_simai.py with SimAI built: both tools' whole processes, workload by workload."""
    import vs_simai as vs

    root = vs.simai_root(None)
    if root is None:
        raise RuntimeError("SimAI is not built here (benchmarks/SIMAI.md)")
    rows = vs.measure(_simai_names(), root)
    return ("`benchmarks/vs_simai.py` runs each workload in both tools, one after the other, as whole processes "
            "(`fabricsim train --aicb FILE --json` and `SimAI_analytical -w FILE ...`):\n\n" + vs.walls(rows)
            + "\n\n" + stamp())


def train_speed() -> str:
    """benchmarks/bench_train.py: `fabricsim train` at scale as whole processes, against issue 32's targets."""
    import bench_train as bt

    return "\n".join(f"- {bt.line(r)}" for r in bt.measure()) + "\n\n" + stamp()


# --------------------------------------------------------------------------------------------------- ASTRA-sim

def astra() -> str:
    """ASTRA-sim's finish times beside fabricsim's on the same traces (benchmarks/astra_sim_compare.py)."""
    out = subprocess.run([sys.executable, str(HERE / "astra_sim_compare.py"), "--json"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    rows = json.loads(out)
    order = {"Ring_4chunks": 0, "HGX-H100-validated": 1}
    kinds = {"all_reduce": 0, "reduce_scatter": 1, "all_gather": 2, "all_to_all": 3}
    rows.sort(key=lambda r: (order[r["config"]], kinds[r["workload"]], r["npus"]))
    lines = ["| workload | NPUs | config | ASTRA-sim (congestion-aware) | fabricsim packet | flow | packet vs ASTRA-sim "
             "| packet, 1 GB = 2^30 B | vs ASTRA-sim |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cfg = "Ring" if r["config"] == "Ring_4chunks" else "HGX"
        lines.append(f"| {r['workload']} | {r['npus']} | {cfg} | {r['astra_aware_ns'] / 1e3:.1f} µs | "
                     f"{r['packet_ns'] / 1e3:.1f} µs | {r['flow_ns'] / 1e3:.1f} µs | {signed(r['diff_packet_pct'])} | "
                     f"{r['packet_gib_ns'] / 1e3:.1f} µs | {signed(r['diff_packet_gib_pct'])} |")
    return "\n".join(lines)


# The pages the regions live in (a study's page, docs/studies/STUDY.md, is copied to experiments/STUDY/README.md).
INCAST, ORCHESTRATION = "docs/studies/incast.md", "docs/studies/orchestration.md"
FORS, INA, CPO = "docs/studies/fors.md", "docs/studies/ina.md", "docs/studies/cpo.md"
FLOW, HYBRID, FABRICS = "docs/guide/flow-engine.md", "docs/guide/hybrid.md", "docs/guide/fabrics.md"
PLACE, CLUSTER = "docs/guide/place-a-job.md", "docs/guide/cluster.md"
WORKLOADS, TRACE = "docs/guide/large-workloads.md", "docs/guide/run-a-trace.md"
PERFORMANCE, ROCE = "docs/performance.md", "docs/roce.md"
TRAIN = "docs/guide/train.md"
UEC = "docs/guide/ultra-ethernet.md"

GENERATORS: dict[str, Generator] = {
    "incast-s2-s4": Generator(incast_s2_s4, deterministic=True, seconds=6, page=INCAST),
    "incast-s1": Generator(incast_s1, deterministic=True, seconds=6, page=INCAST),
    "incast-speed": Generator(incast_speed, deterministic=False, seconds=6, page=INCAST),
    "collective-example": Generator(collective_example, deterministic=True, seconds=10, page=ORCHESTRATION),
    "table4": Generator(table4, deterministic=True, seconds=450, page=ORCHESTRATION),
    "table4-time": Generator(table4_time, deterministic=False, seconds=450, page=ORCHESTRATION),
    "flow-agreement": Generator(flow_agreement, deterministic=True, seconds=450, page=FLOW),
    "advisor": Generator(advisor, deterministic=True, seconds=750, page=PLACE),
    "place-speed": Generator(place_speed, deterministic=False, seconds=90, page=PLACE),
    "cluster-policies": Generator(cluster_policies, deterministic=True, seconds=15, page=CLUSTER),
    "cluster-speed": Generator(cluster_speed, deterministic=False, seconds=200, page=CLUSTER),
    "fors-throughput": Generator(fors_throughput, deterministic=True, seconds=90, page=FORS),
    "ina-results": Generator(ina_results, deterministic=True, seconds=85, page=INA),
    "ina-times": Generator(ina_times, deterministic=False, seconds=85, page=PERFORMANCE),
    "ina-quick-time": Generator(ina_quick_time, deterministic=False, seconds=120, page=INA),
    "reproduce-quick-time": Generator(reproduce_quick_time, deterministic=False, seconds=180, page="docs/report.md"),
    "cpo-results": Generator(cpo_results, deterministic=True, seconds=40, page=CPO),
    "cpo-time": Generator(cpo_time, deterministic=False, seconds=40, page=CPO),
    "frontdoor": Generator(frontdoor, deterministic=False, seconds=10, page=WORKLOADS),
    "chakra-speed": Generator(chakra_speed, deterministic=False, seconds=105, page=TRACE),
    "synth-3d-speed": Generator(synth_3d_speed, deterministic=False, seconds=5, page=TRACE),
    "astra": Generator(astra, deterministic=True, seconds=1, page=TRACE),
    "bench-engine": Generator(bench_engine, deterministic=False, seconds=90, page=PERFORMANCE),
    "hybrid-error": Generator(hybrid_error, deterministic=False, seconds=40, page=HYBRID),
    "hybrid-scale": Generator(hybrid_scale, deterministic=False, seconds=170, page=HYBRID),
    "hybrid-examples": Generator(hybrid_examples, deterministic=False, seconds=60, page=HYBRID),
    "bench-flow": Generator(bench_flow, deterministic=False, seconds=5, page=PERFORMANCE),
    "bench-fors": Generator(bench_fors, deterministic=False, seconds=25, page=PERFORMANCE),
    "bench-sweep": Generator(bench_sweep, deterministic=False, seconds=30, page=PERFORMANCE),
    "bench-startup": Generator(bench_startup, deterministic=False, seconds=15, page=PERFORMANCE),
    "fabrics-speed": Generator(fabrics_speed, deterministic=False, seconds=30, page=FABRICS),
    "roce-speed": Generator(roce_speed, deterministic=False, seconds=3, page=ROCE),
    "roce-vs-hpcc": Generator(roce_vs_hpcc, deterministic=False, seconds=30, page=ROCE),
    "uec-vs-roce": Generator(uec_vs_roce, deterministic=True, seconds=8, page=UEC),
    "simai": Generator(simai, deterministic=True, seconds=100, page=TRAIN),
    "simai-speed": Generator(simai_speed, deterministic=False, seconds=150, page=TRAIN),
    "train-speed": Generator(train_speed, deterministic=False, seconds=900, page=TRAIN),
}


def regions(text: str) -> dict[str, str]:
    """Region name → its current body in `text`."""
    return {m.group("name"): m.group("body") for m in REGION.finditer(text)}


def rewrite(text: str, bodies: dict[str, str]) -> str:
    """`text` with the named regions' bodies replaced."""
    return REGION.sub(lambda m: m.group(1) + bodies.get(m.group("name"), m.group("body")) + m.group(4), text)


def pages() -> list[Path]:
    """Every page that holds a region, in a stable order."""
    return sorted({g.path for g in GENERATORS.values()})


def copies(page: Path) -> list[Path]:
    """The files that must stay identical to `page`: a study page's experiments/STUDY/README.md."""
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    from gen_reference import study_copies

    return [copy for source, copy in study_copies() if source == page]


def current() -> dict[str, str]:
    """Region name → its body, each read from its own page (a region found in another page does not count)."""
    out: dict[str, str] = {}
    for page in pages():
        have = regions(page.read_text())
        out.update({n: have[n] for n, g in GENERATORS.items() if g.path == page and n in have})
    return out


def write(bodies: dict[str, str]) -> list[Path]:
    """Rewrite the named regions in their pages, and each page's copies; returns the files written."""
    written = []
    for page in pages():
        mine = {n: body for n, body in bodies.items() if GENERATORS[n].path == page}
        if mine:
            text = rewrite(page.read_text(), mine)
            for f in [page, *copies(page)]:
                f.write_text(text)
                written.append(f)
    return written


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"readme_numbers.py: {message}\n")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the regions in their pages")
    ap.add_argument("--only", action="append", metavar="NAME", help="only this region (repeatable; see --list)")
    ap.add_argument("--list", action="store_true", help="list the regions and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, g in GENERATORS.items():
            print(f"{name:20s} {g.page:32s} {'deterministic' if g.deterministic else 'timing':13s} about {g.seconds:g} s")
        return 0
    unknown = sorted(set(args.only or ()) - set(GENERATORS))
    if unknown:
        ap.error(f"--only: unknown region {', '.join(unknown)} (known: {', '.join(GENERATORS)})")
    have = current()
    missing = sorted(set(GENERATORS) - set(have))
    if missing:
        print("no region for " + ", ".join(f"{n} in {GENERATORS[n].page}" for n in missing), file=sys.stderr)
        return 2
    fresh, failed = {}, []
    for name in args.only or GENERATORS:
        t0 = time.perf_counter()
        try:
            fresh[name] = GENERATORS[name].fn()
        except (RuntimeError, OSError, subprocess.CalledProcessError, ValueError) as e:
            failed.append(name)
            print(f"{name}: failed: {e}", file=sys.stderr)
            continue
        print(f"{name}: {'differs' if fresh[name] != have[name] else 'unchanged'} ({time.perf_counter() - t0:.0f} s)",
              flush=True)
    changed = [n for n, body in fresh.items() if body != have[n]]
    if args.write and changed:
        for f in write({n: fresh[n] for n in changed}):
            print(f"wrote {f.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
