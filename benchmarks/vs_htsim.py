"""fabricsim beside htsim (Broadcom/csg-htsim's RoCE driver `htsim_roce`) on one k = 8 fat-tree: a permutation, an incast and one packet, run in both as whole processes, paired and interleaved.

The case (issue 29; benchmarks/HTSIM.md says how htsim was built and maps every parameter): the k = 8
three-tier fat-tree of 128 hosts (htsim's FatTreeTopology, `-nodes 128 -tiers 3`; fabricsim's `fat_tree3`,
k = 8; host i is `p{i//16}.e{i//4%4}.h{i%4}`, under edge switch i // 4 in both), every link 100 Gb/s with
1 us of delay, switches that forward in zero time. RoCE without congestion control: each flow is one queue
pair sending 1,024 B payloads + 64 B of header (1,088 B on the wire) at line rate, and its receiver returns
one 64 B ACK per packet in the data class (htsim has one FIFO per port; fabricsim's `ack_high_priority =
false`). Lossless input queues: htsim's LosslessInputQueue pauses its upstream when it holds more than
15 × 1,024 B and resumes it below 12 × 1,024 B (`-pfc_thresholds 12 15 -mtu 1024`, ACKs counted); fabricsim's
shared-buffer switch is set to the same static thresholds (`pfc_table`). Per-flow ECMP in both: htsim's
`-strat ecmp_host` hashes the flow id and path id with a salt per switch drawn from `-seed`; fabricsim's
`ecmp = "per_flow"` draws a salt per flow from `seed`.

The workloads, as traffic matrices written by the algorithms of htsim's own generators (`gen_permutation.py`,
`gen_incast.py` in sim/datacenter/connection_matrices, seed 1; when they are beside the binary the script
checks it writes the same files):

- permutation: each of the 128 hosts sends 2 MiB to another, all at t = 0; FCT means over --draws routing
  draws (seeds 1..draws in both tools, one traffic matrix);
- incast: 32 hosts (htsim's shuffle of hosts 1..127) send 4 MiB each to host 0, all at t = 0;
- one: one 1,024 B packet from host 0 to host 127 (6 links each way).

A flow completes when its sender receives the last ACK (htsim's "Flow ... finished at"; the last_rx_s of
fabricsim's ACK flow `<message>/ack`). The incast completes with its last flow.

htsim's RoceSrc constructor calls `srand(time(NULL))`, then draws its path id with `random()`: a run depends
on the wall-clock second it starts in. htsim runs under libfaketime (Debian's `faketime` package), preloaded
with an absolute FAKETIME (--fake-time) that holds `time()` at one second, so every run is reproducible.

Timing: each workload runs --repeat times in each tool, paired and interleaved (fabricsim first in even pairs,
htsim first in odd ones); the permutation's pairs use routing draw 1. Wall time is measured around each child
process, CPU time (user + system) is the child's rusage, and peak RSS is GNU time's %M (see `timed`).
fabricsim is the whole `fabricsim run SCENARIO.toml --json --quiet` process, and its "engine alone" is the
record's `wall_s`. htsim prints no timing, so its engine alone is its whole process (the one-packet run shows
its start-up). Events: fabricsim's record; htsim does not count them.

Without the htsim binary (--htsim, else $HTSIM_BIN, else DEFAULT_HTSIM) it prints fabricsim's side alone and
exits 0. With it, it exits 1 when the results disagree beyond the issue's tolerances (incast completion 1%,
permutation FCT mean over the draws 5%, the one packet's last ACK 1 ns); the speed and memory targets are
reported, not enforced.

Usage:
    .venv/bin/python benchmarks/vs_htsim.py [--htsim PATH] [--repeat 3] [--draws 8] [--workloads one,incast]
    .venv/bin/python benchmarks/vs_htsim.py --json out.json --keep /tmp/vs_htsim   # keeps .toml and .cm files
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_HTSIM = Path("/work/peers/htsim/src/sim/datacenter/htsim_roce")
DEFAULT_FAKETIME_LIB = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
DEFAULT_FAKE_TIME = "2024-01-01 00:00:00"
"""An absolute FAKETIME without '@': libfaketime holds the clock at this instant for the whole run."""
GNU_TIME = Path("/usr/bin/time")
"""GNU time (Debian's `time` package) reports a child's own peak RSS. `os.wait4`'s ru_maxrss cannot: Linux
folds the memory a process execs from into it, and a child that Python spawns execs from this Python's
(vfork), so wait4 never reads below this process's RSS (about 15 MiB)."""

K = 8
HOSTS = K ** 3 // 4
RATE_BPS = 100_000_000_000
DELAY_PS = 1_000_000
PAYLOAD_BYTES = 1024
HEADER_BYTES = 64
"""htsim's RocePacket::ACKSIZE, added to every data packet (1,088 B on the wire)."""
ACK_BYTES = 64
PFC_HIGH_PKTS, PFC_LOW_PKTS = 15, 12
"""htsim's -pfc_thresholds: pause above 15 × MTU bytes held, resume below 12 × MTU (MTU = 1,024 B)."""
HEADROOM_BYTES = 1 << 20
BUFFER_BYTES = 1 << 50
"""fabricsim's shared buffer per switch: so large that its dynamic threshold is static to the byte."""
HTSIM_QUEUE_PKTS = 10_000
"""htsim's -q: its lossless output queues never drop, they only print a warning above this size."""

WORKLOADS = {
    # name: (connections, flow bytes, traffic-matrix seed, htsim -end in us)
    "one": (1, PAYLOAD_BYTES, 0, 1_000),
    "incast": (32, 4 << 20, 1, 30_000),
    "permutation": (HOSTS, 2 << 20, 1, 10_000),
}
TOLERANCE = {"incast_completion": 0.01, "permutation_fct_mean": 0.05, "one_last_ack_ps": 1_000}
TARGETS = {"whole_speedup": 5.0, "engine_speedup": 6.0, "permutation_rss_mib": 30.0}


# ------------------------------------------------------------------------------------------------- workloads

def gen_permutation(nodes: int, conns: int, flow_bytes: int, seed: int) -> str:
    """htsim's `gen_permutation.py <file> nodes conns flowsize 0 seed`, as the text it writes: Python's
    `random` shuffles the sources and the destinations, then a destination equal to its source is swapped with
    the next one."""
    rng = random.Random(seed or None)
    srcs, dsts = list(range(nodes)), list(range(nodes))
    rng.shuffle(srcs)
    rng.shuffle(dsts)
    for n in range(nodes):
        if srcs[n] == dsts[n]:
            i = (n + 1) % nodes
            dsts[n], dsts[i] = dsts[i], dsts[n]
    lines = [f"Nodes {nodes}", f"Connections {conns}"]
    lines += [f"{srcs[n]}->{dsts[n]} id {n + 1} start 0 size {flow_bytes}" for n in range(conns)]
    return "\n".join(lines) + "\n"


def gen_incast(nodes: int, conns: int, flow_bytes: int, seed: int) -> str:
    """htsim's `gen_incast.py <file> nodes conns flowsize 0 seed`: `conns` of hosts 1..nodes-1 (shuffled) send
    to host 0; the start draws `randint(0, 0)` are kept so that the generator's random stream is followed."""
    rng = random.Random(seed or None)
    srcs = list(range(1, nodes))
    rng.shuffle(srcs)
    lines = [f"Nodes {nodes}", f"Connections {conns}"]
    for n in range(conns):
        extra = rng.randint(0, 0)
        lines.append(f"{srcs[n]}->0 id {n + 1} start {extra} size {flow_bytes}")
    return "\n".join(lines) + "\n"


def traffic_matrix(name: str) -> str:
    """The connection-matrix text of a workload (htsim's .cm format)."""
    conns, size, seed, _ = WORKLOADS[name]
    if name == "one":
        return f"Nodes {HOSTS}\nConnections 1\n0->{HOSTS - 1} id 1 start 0 size {size}\n"
    if name == "incast":
        return gen_incast(HOSTS, conns, size, seed)
    return gen_permutation(HOSTS, conns, size, seed)


def check_against_generators(htsim: Path) -> str:
    """Compare the matrices with those of htsim's own generators when its source tree holds them (binary in
    sim/datacenter/, scripts in sim/datacenter/connection_matrices/). Returns a verdict; raises on a
    difference."""
    gen_dir = htsim.resolve().parent / "connection_matrices"
    if not (gen_dir / "gen_permutation.py").is_file():
        return "htsim's generators not found beside the binary: matrices from this script's copy of them"
    with tempfile.TemporaryDirectory() as d:
        for name, script in (("incast", "gen_incast.py"), ("permutation", "gen_permutation.py")):
            conns, size, seed, _ = WORKLOADS[name]
            out = Path(d) / f"{name}.cm"
            argv = [str(gen_dir / script), str(out), str(HOSTS), str(conns), str(size), "0", str(seed)]
            subprocess.run([sys.executable, *argv], check=True, capture_output=True)
            if out.read_text() != traffic_matrix(name):
                raise RuntimeError(f"{script} writes another {name} matrix than this script: "
                                   f"update gen_{name}")
    return f"matrices identical to htsim's gen_incast.py and gen_permutation.py ({gen_dir})"


def connections(cm: str) -> list[tuple[int, int, int]]:
    """(src, dst, bytes) of every connection of a .cm text."""
    pat = re.compile(r"^(\d+)->(\d+) id \d+ start \S+ size (\d+)$")
    return [(int(m[1]), int(m[2]), int(m[3])) for m in map(pat.match, cm.splitlines()) if m]


def timed(argv: list[str], cwd: Path, env: dict | None = None) -> tuple[str, dict]:
    """Run argv as a child process; returns its stdout and its wall time, CPU time (user + system, the child's
    rusage) and peak RSS (GNU time's %M when /usr/bin/time exists, else wait4's upper bound, flagged)."""
    exact_rss = GNU_TIME.is_file()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        pre = [str(GNU_TIME), "-f", "%M", "-o", rss.name] if exact_rss else []
        t0 = time.perf_counter()
        child = subprocess.Popen(pre + argv, stdout=out, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # GNU time's rusage includes the child it waited for
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            raise RuntimeError(f"{Path(argv[0]).name} exited {code}: {err.read().strip()[-800:]}")
        rss_kib = int(rss.read().split()[-1]) if exact_rss else usage.ru_maxrss
        return out.read(), dict(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, rss_mib=rss_kib / 1024,
                                rss_exact=exact_rss)


# ------------------------------------------------------------------------------------------------ fabricsim

def host(i: int) -> str:
    """fat_tree3's name of htsim's host i: both number hosts pod by pod, edge switch by edge switch."""
    half = K // 2
    return f"p{i // (half * half)}.e{i // half % half}.h{i % half}"


def pfc_table() -> dict:
    """fabricsim's [pfc] values equal to htsim's static thresholds on the bytes an ingress port holds.

    htsim pauses when held > 15 × 1,024 (at the 15th 1,088 B packet) and resumes when held < 12 × 1,024 (at 11
    packets). fabricsim pauses when shared ≥ threshold and resumes when shared + resume_offset ≤ threshold (or
    shared = 0), with threshold = floor(alpha × (pool − shared used by all ports)) and
    pool = buffer − ports × (headroom + reserve). With reserve 0 and threshold T = 15,361 B (≥ T ⟺ > 15,360),
    resume_offset = T − 12,287 (≤ 12,287 ⟺ < 12,288); alpha = (T + ½) / pool keeps floor(...) = T while the
    switch holds less than pool / (2T) ≈ 36 GB. Bytes beyond T go to the 1 MiB headroom (never exhausted)."""
    high_bytes = PFC_HIGH_PKTS * PAYLOAD_BYTES + 1
    low_bytes = PFC_LOW_PKTS * PAYLOAD_BYTES - 1
    pool = BUFFER_BYTES - K * HEADROOM_BYTES  # every fat_tree3 switch has k ports
    alpha = (high_bytes + 0.5) / pool
    for used in (0, 1 << 20, 64 << 20):
        assert int((pool - used) * alpha) == high_bytes, f"threshold not static at {used} B used"
    return dict(buffer=BUFFER_BYTES, reserve=0, headroom=HEADROOM_BYTES, alpha=alpha,
                resume_offset=high_bytes - low_bytes)


def scenario_toml(cm: str, seed: int) -> str:
    """The fabricsim scenario of a traffic matrix: fat_tree3 k = 8 of shared-buffer switches, RDMA without
    congestion control, ACKs in the data class, one message per connection (`f{src}_{dst}`). Queues are
    unlimited, as htsim's host queues: a paused NIC holds its ACKs too (the default 100-packet limit drops
    them)."""
    pfc = pfc_table()
    lines = [f"seed = {seed}", 'transport = "rdma"', "", "[topology]", 'kind = "fat_tree3"', f"k = {K}",
             f"rate = {RATE_BPS}", f'delay = "{DELAY_PS}ps"', 'switch_model = "shared_buffer"', "",
             "[queue]", 'limit_packets = "unlimited"', "", "[routing]", 'ecmp = "per_flow"', "", "[pfc]",
             f"buffer = {pfc['buffer']}", f"reserve = {pfc['reserve']}", f"headroom = {pfc['headroom']}",
             f"alpha = {pfc['alpha']!r}", f"resume_offset = {pfc['resume_offset']}", "",
             "[rdma]", 'cc = "none"', f"ack_size = {ACK_BYTES}", "ack_high_priority = false"]
    for s, d, size in connections(cm):
        lines += ["", "[[messages]]", f'name = "f{s}_{d}"', f'src = "{host(s)}"', f'dst = "{host(d)}"',
                  f"size = {size}", f"packet_size = {PAYLOAD_BYTES}", f"header = {HEADER_BYTES}"]
    return "\n".join(lines) + "\n"


def run_fabricsim(cm: str, seed: int, work: Path, tag: str) -> dict:
    """One whole `fabricsim run --json --quiet` process: FCTs (µs) by (src, dst), events, engine and process
    times, peak RSS."""
    exe = Path(sys.executable).parent / "fabricsim"
    path = work / f"{tag}_seed{seed}.toml"
    path.write_text(scenario_toml(cm, seed))
    out, t = timed([str(exe), "run", str(path), "--json", "--quiet"], work)
    rec = json.loads(out)
    if not rec["complete"] or rec["packets"]["dropped"]:
        raise RuntimeError(f"fabricsim {tag} seed {seed}: incomplete or lossy run ({rec['packets']})")
    fct = {}
    for f in rec["flows"]:
        if f["kind"] == "rdma-ack":
            s, d = f["name"].split("/")[0][1:].split("_")
            fct[(int(s), int(d))] = f["last_rx_s"] * 1e6
    return dict(t, fct_us=fct, events=rec["events"], engine_s=rec["wall_s"], pfc_pauses=rec["pfc_pauses"])


# ----------------------------------------------------------------------------------------------------- htsim

FINISHED = re.compile(r"^Flow Roce_(\d+)_(\d+) \d+ finished at (\S+) total bytes (\d+)", re.M)
RTX = re.compile(r"^New: (\d+) Rtx: (\d+)", re.M)


def htsim_argv(htsim: Path, cm_path: str, seed: int | str, end_us: int | str, log_path: str) -> list[str]:
    """htsim_roce's command line: FatTreeTopology of HOSTS hosts in 3 tiers (k = 8) with its default lossless
    input queues (LOSSLESS_INPUT) and fair-priority host queues, per-flow ECMP, 100 Gb/s, 1 us links, zero
    switch latency, MTU 1,024 B, PFC thresholds 12/15 MTUs, routing seed, end time (us), log file."""
    return [str(htsim), "-nodes", str(HOSTS), "-tiers", "3", "-tm", cm_path, "-strat", "ecmp_host",
            "-paths", "1", "-linkspeed", str(RATE_BPS // 1_000_000), "-mtu", str(PAYLOAD_BYTES),
            "-hop_latency", f"{DELAY_PS / 1e6:g}", "-switch_latency", "0", "-q", str(HTSIM_QUEUE_PKTS),
            "-pfc_thresholds", str(PFC_LOW_PKTS), str(PFC_HIGH_PKTS), "-seed", str(seed), "-end", str(end_us),
            "-o", log_path]


def run_htsim(htsim: Path, cm: str, seed: int, end_us: int, work: Path, tag: str, env: dict) -> dict:
    """One whole htsim_roce process under libfaketime: FCTs (µs) by (src, dst), packets sent, process
    times, peak RSS."""
    path = work / f"{tag}.cm"
    path.write_text(cm)
    argv = htsim_argv(htsim, str(path), seed, end_us, str(work / f"{tag}_seed{seed}.log"))
    out, t = timed(argv, work, env)
    fct = {(int(m[1]), int(m[2])): float(m[3]) for m in FINISHED.finditer(out)}
    want = connections(cm)
    if len(fct) != len(want):
        raise RuntimeError(f"htsim {tag} seed {seed}: {len(fct)} of {len(want)} flows done by {end_us} us")
    new, rtx = map(int, RTX.search(out).groups())
    return dict(t, fct_us=fct, packets=new, rtx_packets=rtx, argv=argv)


def htsim_env(lib: Path, fake_time: str) -> dict:
    """The environment htsim runs in: libfaketime preloaded, the clock held at `fake_time`."""
    if not lib.is_file():
        raise SystemExit(f"vs_htsim: {lib} not found: install Debian's faketime package "
                         "(apt-get install faketime) or pass --faketime-lib")
    return dict(os.environ, LD_PRELOAD=str(lib), FAKETIME=fake_time, FAKETIME_DONT_FAKE_MONOTONIC="1")


# ------------------------------------------------------------------------------------------------ reporting

def fct_stats(fct: dict) -> dict:
    """Mean, p99 (nearest rank) and max of a run's FCTs, µs."""
    v = sorted(fct.values())
    return dict(mean=statistics.fmean(v), p99=v[max(0, math.ceil(0.99 * len(v)) - 1)], max=v[-1], n=len(v))


def timing(runs: list[dict]) -> dict:
    """Best and median wall and CPU, and the peak RSS, of repeated runs."""
    w, c = [r["wall_s"] for r in runs], [r["cpu_s"] for r in runs]
    d = dict(wall_best_s=min(w), wall_median_s=statistics.median(w), cpu_best_s=min(c),
             cpu_median_s=statistics.median(c), rss_mib=max(r["rss_mib"] for r in runs), n=len(runs))
    if "engine_s" in runs[0]:
        e = [r["engine_s"] for r in runs]
        d.update(engine_best_s=min(e), engine_median_s=statistics.median(e))
    return d


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def run_workload(name: str, args, work: Path, env: dict | None) -> dict:
    """The paired timed runs of one workload, then (permutation) the other routing draws, once each."""
    cm = traffic_matrix(name)
    end_us = WORKLOADS[name][3]
    ours, theirs = [], []
    for r in range(args.repeat):
        for side in (("fabricsim", "htsim") if r % 2 == 0 else ("htsim", "fabricsim")):
            if side == "fabricsim":
                ours.append(run_fabricsim(cm, 1, work, name))
            elif env is not None:
                theirs.append(run_htsim(args.htsim, cm, 1, end_us, work, name, env))
    draws_ours, draws_theirs = [ours[0]], theirs[:1]
    if name == "permutation":
        for seed in range(2, args.draws + 1):
            draws_ours.append(run_fabricsim(cm, seed, work, name))
            if env is not None:
                draws_theirs.append(run_htsim(args.htsim, cm, seed, end_us, work, name, env))
    res = dict(fabricsim=dict(timing=timing(ours), events=ours[0]["events"], pfc_pauses=ours[0]["pfc_pauses"],
                              draws=[fct_stats(d["fct_us"]) for d in draws_ours]))
    if theirs:
        res["htsim"] = dict(timing=timing(theirs), packets=theirs[0]["packets"],
                            rtx_packets=theirs[0]["rtx_packets"], argv=theirs[0]["argv"],
                            draws=[fct_stats(d["fct_us"]) for d in draws_theirs])
    return res


def report(name: str, res: dict) -> list[str]:
    """Printed lines of one workload; sets res['ratios'] and res['failures'] (names that disagree)."""
    lines, fails, pad = [], [], " " * 11
    sides = [s for s in ("fabricsim", "htsim") if s in res]
    for s in sides:
        t, d = res[s]["timing"], res[s]["draws"]
        mean = statistics.fmean(x["mean"] for x in d)
        eng = f"{t['engine_median_s']:.3g}" if "engine_median_s" in t else "   = "
        ev = f"{res[s]['events']:,}" if "events" in res[s] else "n/a"
        lines.append(f"{name:11} {s:9} {t['wall_median_s']:7.3f} {t['wall_best_s']:7.3f} "
                     f"{t['cpu_median_s']:7.3f} {eng:>8} {d[0]['mean']:10.3f} {d[0]['p99']:10.3f} "
                     f"{d[0]['max']:10.3f} {mean:11.3f} {ev:>12} {t['rss_mib']:7.1f}")
    if len(sides) == 2:
        a, b = res["fabricsim"], res["htsim"]
        ta, tb = a["timing"], b["timing"]
        whole = tb["wall_median_s"] / ta["wall_median_s"]
        whole_best = tb["wall_best_s"] / ta["wall_best_s"]
        cpu = tb["cpu_median_s"] / ta["cpu_median_s"]
        engine = tb["wall_median_s"] / ta["engine_median_s"]
        ma = statistics.fmean(x["mean"] for x in a["draws"])
        mb = statistics.fmean(x["mean"] for x in b["draws"])
        fa, fb = a["draws"][0]["max"], b["draws"][0]["max"]
        res["ratios"] = dict(whole_speedup_median=whole, whole_speedup_best=whole_best,
                             cpu_speedup_median=cpu, engine_speedup_median=engine,
                             fct_mean_rel=(ma - mb) / mb, fct_max_rel=(fa - fb) / fb)
        lines.append(f"{pad} ratio     fabricsim/htsim wall {1 / whole:.3f} median, "
                     f"{1 / whole_best:.3f} best "
                     f"(htsim/fabricsim {whole:.2f}x, {whole_best:.2f}x best); CPU {1 / cpu:.3f} "
                     f"({cpu:.2f}x); engine alone {engine:.2f}x")
        if name == "one":
            ok = abs(fa - fb) * 1e6 <= TOLERANCE["one_last_ack_ps"]
            lines.append(f"{pad} agree     last ACK {fa:.3f} vs {fb:.3f} us: {verdict(ok)} 1 ns "
                         "(htsim prints 1 ns)")
        elif name == "incast":
            rel = res["ratios"]["fct_max_rel"]
            ok = abs(rel) <= TOLERANCE["incast_completion"]
            lines.append(f"{pad} agree     completion {fa:,.1f} vs {fb:,.1f} us ({rel:+.3%}): "
                         f"{verdict(ok)} 1%")
        else:
            rel = res["ratios"]["fct_mean_rel"]
            ok = abs(rel) <= TOLERANCE["permutation_fct_mean"]
            per = ", ".join(f"{x['mean']:.1f}/{y['mean']:.1f}" for x, y in zip(a["draws"], b["draws"]))
            lines.append(f"{pad} agree     FCT mean over {len(a['draws'])} draws {ma:.2f} vs {mb:.2f} us "
                         f"({rel:+.2%}): {verdict(ok)} 5%; per draw fabricsim/htsim: {per}")
        if not ok:
            fails.append(name)
        if name != "one":
            w_ok, e_ok = whole >= TARGETS["whole_speedup"], engine >= TARGETS["engine_speedup"]
            lines.append(f"{pad} targets   whole >= {TARGETS['whole_speedup']:g}x: {verdict(w_ok)}; "
                         f"engine alone >= {TARGETS['engine_speedup']:g}x: {verdict(e_ok)}")
    if name == "permutation":
        rss = res["fabricsim"]["timing"]["rss_mib"]
        lines.append(f"{pad} target    fabricsim peak RSS <= {TARGETS['permutation_rss_mib']:g} MiB: "
                     f"{verdict(rss <= TARGETS['permutation_rss_mib'])} ({rss:.1f} MiB)")
    res["failures"] = fails
    return lines


def run_all(names: list[str], run, report, keep: Path | None) -> tuple[dict, list[str]]:
    """Run each case (`run(name, work)`, in `keep` or a temporary folder), print its report lines as it ends, and
    return the results by name and the names whose results disagree beyond tolerance."""
    out, failures = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in names:
            res = run(name, work)
            for line in report(name, res):
                print(line, flush=True)
            failures += res["failures"]
            out[name] = res
    return out, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", type=Path, default=Path(os.environ.get("HTSIM_BIN", DEFAULT_HTSIM)),
                    help="htsim's RoCE binary (default: $HTSIM_BIN, else %(default)s)")
    ap.add_argument("--workloads", default="one,incast,permutation",
                    help="comma-separated subset of " + ", ".join(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=3, help="timed pairs per workload (default %(default)s)")
    ap.add_argument("--draws", type=int, default=8,
                    help="routing draws (seeds 1..N) of the permutation's FCTs (default %(default)s)")
    ap.add_argument("--faketime-lib", type=Path, default=DEFAULT_FAKETIME_LIB,
                    help="libfaketime, preloaded into htsim (default %(default)s)")
    ap.add_argument("--fake-time", default=DEFAULT_FAKE_TIME,
                    help="the instant htsim's clock is held at (default %(default)s)")
    ap.add_argument("--keep", type=Path,
                    help="write the scenarios, matrices and htsim logs here (else a temporary directory)")
    ap.add_argument("--json", type=Path, help="write every figure to this JSON file")
    args = ap.parse_args()
    names = args.workloads.split(",")
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or args.repeat < 1 or args.draws < 1:
        ap.error(f"unknown workload(s) {unknown}" if unknown else "--repeat and --draws must be >= 1")

    env = None
    if args.htsim.is_file() and os.access(args.htsim, os.X_OK):
        env = htsim_env(args.faketime_lib, args.fake_time)
        print(f"htsim: {args.htsim} (time() held at {args.fake_time} by {args.faketime_lib.name})")
        print(check_against_generators(args.htsim))
        cmd = " ".join(htsim_argv(args.htsim, "WORKLOAD.cm", "SEED", "END_US", "LOG"))
        print(f"htsim command: FAKETIME='{args.fake_time}' FAKETIME_DONT_FAKE_MONOTONIC=1 "
              f"LD_PRELOAD={args.faketime_lib} {cmd}")
        print("fabricsim command: fabricsim run WORKLOAD_seedSEED.toml --json --quiet "
              "(--keep DIR keeps them)")
    else:
        print(f"vs_htsim: no htsim binary at {args.htsim} (benchmarks/HTSIM.md says how to build it; --htsim "
              "or $HTSIM_BIN): fabricsim's side only")
    print(f"machine: {os.cpu_count()} cores; {args.repeat} paired run(s) per workload, interleaved; times in "
          "s, FCT in us (draw 1; mean/draws: over the draws), RSS in MiB")
    print("peak RSS: " + ("GNU time's %M of each child" if GNU_TIME.is_file() else
                          "os.wait4's ru_maxrss, an upper bound (no /usr/bin/time: apt-get install time)"))
    print(f"{'workload':11} {'tool':9} {'wall md':>7} {'best':>7} {'cpu md':>7} {'engine':>8} "
          f"{'FCT mean':>10} {'FCT p99':>10} {'FCT max':>10} {'mean/draws':>11} {'events':>12} "
          f"{'peakRSS':>7}")
    out, failures = run_all(names, lambda name, work: run_workload(name, args, work, env), report, args.keep)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    if failures:
        print(f"vs_htsim: fabricsim and htsim disagree beyond tolerance on: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
