"""fabricsim's Ultra Ethernet transport beside uet-htsim (`htsim_uec`) on one k = 8 fat-tree: a permutation and a 32 -> 1 incast, each with oblivious spraying, REPS and htsim_uec's default MIXED balancer, run in both as whole processes, paired and interleaved.

The case (issue 34; benchmarks/UET_HTSIM.md says how htsim_uec was built and gives the source line of each of
its defaults). Every parameter, htsim_uec's flag or default beside fabricsim's key:

- fabric: htsim's FatTreeTopology `-nodes 128 -tiers 3` (K = 8: 128 hosts, 32 ToRs, 32 aggs, 16 cores, 1:1)
  = fabricsim's `fat_tree3`, k = 8; host i is `p{i//16}.e{i//4%4}.h{i%4}` in fabricsim, under edge switch i // 4
  in both;
- links: `-linkspeed 100000` (Mb/s) = `rate = "100Gbps"`; `-hop_latency 1` (us per link) = `delay = "1us"`;
  `-switch_latency 0` = fat_tree3's default switch latency, 0;
- switch queues: htsim sizes them automatically with trimming on, 1 BDP = 43 x 4,150 B = 178,450 B on every
  switch port, up and down = `[queue] limit_bytes = 178450`, `limit_packets = "unlimited"` (fabricsim's default
  output-queued switches, the only ones htsim_uec has). Host NICs: htsim's FairPriorityQueue of 1,000 packets,
  fed by the source after each serialisation; fabricsim's NIC pulls the connection's next packet when its port
  frees (no packet is dropped at a host in either);
- transport: `transport = "uec"`, whose `[uec]` defaults are htsim_uec's (crates/fabricsim-core/src/uec.rs):
  MTU 4,150 B on the wire with a 64 B header (htsim's `-mtu` default, `_hdr_size`),
  64 B ACKs and NACKs (`ACKSIZE`), trimming on with 64 B trimmed headers (`-trimsize`), an ACK per 16 KiB
  received (`-sack_threshold`) and at once for ECN, AR and duplicates, ACKs, NACKs and trimmed headers ahead
  of data (htsim: 100,000 : 1 at switches; fabricsim: strict priority);
- congestion control: NSCC in both (htsim: no `-sender_cc*` flag, so sender-driven NSCC; fabricsim: `cc =
  "nscc"`, the default), base RTT = the fabric's largest unloaded round trip, 14.02272 us, target delay 0.75 x
  that, maximum and initial window 1.5 BDP = 262,926 B;
- ECN: at every switch egress, low 9 and high 35 packets of 4,150 B (0.2 and 0.8 BDP, both tools' default);
- retransmission timeout: 15 us + 6 drains of a switch queue at 100 Gb/s = 100.656 us (htsim's `_min_rto`;
  fabricsim's `rto = "auto"`);
- spraying over 64 entropies (`-paths` default; `entropies = 64`): `-load_balancing_algo oblivious` = `spray =
  "oblivious"`, `-load_balancing_algo reps` = `spray = "reps"`, `-load_balancing_algo mixed` (htsim_uec's
  default) = `spray = "mixed"` (fabricsim's default too); switches pick among equal-cost next hops by a
  hash of the flow and the packet's entropy (htsim's default `-strat`, ECMP_FIB);
- seed: `-seed 1` = `seed = 1`. The two draw from different generators (htsim's mt19937, fabricsim's PCG), so
  the runs are alike in law, not packet for packet.

Known differences in the models: a full htsim queue trims the arriving packet or its own tail by a coin flip,
fabricsim's trims the arriving one; htsim's SLEEK and RTS are not used here (off by default) and fabricsim
lacks them.

The workloads, as traffic matrices written by the algorithms of uet-htsim's own generators
(sim/datacenter/connection_matrices, seed 1, start 0; the script checks it writes the same files as the stored
ones in benchmarks/data/uet_htsim/, and as the generators when it finds them beside the binary):

- permutation: `gen_permutation.py F 128 128 2097152 0 1`: each of the 128 hosts sends 2 MiB to another
  (514 packets, 2,130,048 B on the wire), `-end 10000`;
- incast: `gen_incast.py F 128 32 4194304 0 1 0`: 32 hosts send 4 MiB each to host 0 (1,027 packets each),
  `-end 30000`. (htsim_uec stops when its event list is empty, before `-end`.)

FCT, as htsim defines it: the time the sender receives the ACK that cumulatively covers the connection's last
packet ("Flow Uec_S_D ... finished at T" on htsim's stdout; the `acked_s` of fabricsim's message flow
`f{S}_{D}`). Every flow starts at 0. Per case: mean and p99 (nearest rank: the 127th of 128 flows, the largest of
32) and max.

Counters: fabricsim's record `uec` section (new data packets = data_packets - retransmits; retransmits, trims,
NACKs, timeouts, ACKs). htsim_uec prints, on its last line, new packets, retransmissions, ACKs and NACKs; it
prints neither trims nor retransmission timeouts (its `rto_events` counter is never incremented), shown as "not
printed" (UET_HTSIM.md counted them with gdb: every NACK answers one trim there).

Timing: each case runs --repeat times in each tool, paired and interleaved (fabricsim first in even pairs,
htsim first in odd ones). Wall time is measured around each child process, CPU time (user + system) is the
child's rusage, and peak RSS is GNU time's %M (vs_htsim.py's `timed`). fabricsim is the whole `fabricsim run
SCENARIO.toml --json --quiet` process, and its "engine alone" is the record's `wall_s`. htsim prints no timing,
so its engine alone is its whole process. Events: fabricsim's record; htsim does not count them. Both tools are
deterministic for a seed: the repeats must give the same FCTs.

Without the htsim_uec binary (--htsim, else $UET_HTSIM_BIN, else DEFAULT_HTSIM) it prints fabricsim's side alone,
with the stored reference runs' FCTs (benchmarks/data/uet_htsim/summary.json) for information, and exits 0. With
it, it exits 1 when the results disagree beyond the issue's tolerances (FCT mean and p99 within 10% of htsim's
in every case) or a tool's repeats differ. The speed target (fabricsim >= 5x faster than htsim_uec, whole
process, median of the paired runs) is reported, not enforced.

Usage:
    .venv/bin/python benchmarks/vs_uet_htsim.py [--htsim PATH] [--repeat 3] [--cases incast_oblivious,...]
    .venv/bin/python benchmarks/vs_uet_htsim.py --json out.json --keep /tmp/vs_uet   # keeps .toml, .cm, logs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from vs_htsim import GNU_TIME, connections, fct_stats, gen_incast, gen_permutation, host, run_all, timed

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "uet_htsim"
DEFAULT_HTSIM = Path("/work/peers/uet-htsim/build/datacenter/htsim_uec")

K = 8
HOSTS = K ** 3 // 4
RATE_MBPS = 100_000
HOP_LATENCY_US = 1
QUEUE_BYTES = 178_450
"""htsim_uec's automatic switch queue with trimming: 1 BDP = ceil(14.02272 us x 100 Gb/s / 8 / 4,150 B) = 43
packets of 4,150 B (main_uec.cpp's calculate_bdp_pkt and memFromPkt)."""

WORKLOADS = {
    # name: (connections, flow bytes, traffic-matrix seed, htsim -end in us, stored .cm file)
    "permutation": (HOSTS, 2 << 20, 1, 10_000, "perm_128n_2MiB_seed1.cm"),
    "incast": (32, 4 << 20, 1, 30_000, "incast_32to1_4MiB_seed1.cm"),
}
CASES = {f"{w}_{s}": (w, s) for w in WORKLOADS for s in ("oblivious", "reps", "mixed")}
TOLERANCE = {"fct_mean": 0.10, "fct_p99": 0.10}
TARGETS = {"whole_speedup": 5.0}
NOT_PRINTED = "not printed"


# ------------------------------------------------------------------------------------------------- workloads

def traffic_matrix(name: str) -> str:
    """The connection-matrix text of a workload (htsim's .cm format), by uet-htsim's generators' algorithms.
    This fork's gen_incast.py takes a 7th argument, prefer_remote; 0 is csg-htsim's algorithm (vs_htsim.py's)."""
    conns, size, seed, _, _ = WORKLOADS[name]
    if name == "incast":
        return gen_incast(HOSTS, conns, size, seed)
    return gen_permutation(HOSTS, conns, size, seed)


def check_matrices(htsim: Path | None) -> list[str]:
    """Compare the matrices with the stored reference ones and, when found beside the binary, with uet-htsim's
    generators (its source tree's sim/datacenter/connection_matrices; the CMake build's binary links back there
    by a symlink, so the build tree beside src/ is looked at too). Returns verdicts; raises on a difference."""
    out = []
    stored = [n for n in WORKLOADS if (DATA / WORKLOADS[n][4]).is_file()]
    for name in stored:
        if (DATA / WORKLOADS[name][4]).read_text() != traffic_matrix(name):
            raise RuntimeError(f"{DATA / WORKLOADS[name][4]} differs from this script's {name} matrix")
    out.append(f"matrices identical to the stored {', '.join(WORKLOADS[n][4] for n in stored)} ({DATA})"
               if stored else f"no stored matrices in {DATA}")
    if htsim is None:
        return out
    candidates = [htsim.parent, htsim.resolve().parent, htsim.resolve().parents[2] / "src/htsim/sim/datacenter"]
    gen_dir = next((d / "connection_matrices" for d in candidates
                    if (d / "connection_matrices" / "gen_permutation.py").is_file()), None)
    if gen_dir is None:
        out.append("uet-htsim's generators not found beside the binary: not re-run")
        return out
    with tempfile.TemporaryDirectory() as d:
        for name, script, extra in (("permutation", "gen_permutation.py", []), ("incast", "gen_incast.py", ["0"])):
            conns, size, seed, _, _ = WORKLOADS[name]
            path = Path(d) / f"{name}.cm"
            argv = [str(gen_dir / script), str(path), str(HOSTS), str(conns), str(size), "0", str(seed), *extra]
            subprocess.run([sys.executable, *argv], check=True, capture_output=True)
            if path.read_text() != traffic_matrix(name):
                raise RuntimeError(f"{script} writes another {name} matrix than this script")
    out.append(f"matrices identical to uet-htsim's gen_permutation.py and gen_incast.py ({gen_dir})")
    return out


# ------------------------------------------------------------------------------------------------ fabricsim

def scenario_toml(cm: str, spray: str, seed: int) -> str:
    """The fabricsim scenario of a traffic matrix: fat_tree3 k = 8 at 100 Gb/s with 1 us links, output-queued
    switches of 178,450 B per port, the UEC transport with its (htsim_uec's) defaults and `spray`, one message
    per connection, named `f{src}_{dst}`."""
    lines = [f"seed = {seed}", 'transport = "uec"', "", "[topology]", 'kind = "fat_tree3"', f"k = {K}",
             f'rate = "{RATE_MBPS // 1000}Gbps"', f'delay = "{HOP_LATENCY_US}us"', "", "[queue]",
             f"limit_bytes = {QUEUE_BYTES}", 'limit_packets = "unlimited"', "", "[uec]", 'cc = "nscc"',
             f'spray = "{spray}"', "entropies = 64", "trimming = true"]
    for s, d, size in connections(cm):
        lines += ["", "[[messages]]", f'name = "f{s}_{d}"', f'src = "{host(s)}"', f'dst = "{host(d)}"',
                  f"size = {size}"]
    return "\n".join(lines) + "\n"


def run_fabricsim(cm: str, spray: str, seed: int, work: Path, tag: str) -> dict:
    """One whole `fabricsim run --json --quiet` process: FCTs (us) by (src, dst), events, engine and process
    times, peak RSS, the UEC counters."""
    exe = Path(sys.executable).parent / "fabricsim"
    path = work / f"{tag}.toml"
    path.write_text(scenario_toml(cm, spray, seed))
    out, t = timed([str(exe), "run", str(path), "--json", "--quiet"], work)
    return dict(t, **fabricsim_result(json.loads(out), tag))


def fabricsim_result(rec: dict, tag: str) -> dict:
    """FCTs (us) by (src, dst), events, engine time and UEC counters of a `fabricsim run --json` record."""
    if not rec["complete"]:
        raise RuntimeError(f"fabricsim {tag}: incomplete run ({rec['incomplete_messages']} messages left)")
    fct = {}
    for f in rec["flows"]:
        if f["kind"] == "message":
            s, d = f["name"][1:].split("_")
            fct[(int(s), int(d))] = f["acked_s"] * 1e6
    u = rec["uec"]
    counters = dict(new=u["data_packets"] - u["retransmits"], rtx=u["retransmits"], trims=u["trims"],
                    nacks=u["nacks"], rtos=u["timeouts"], acks=u["acks"])
    return dict(fct_us=fct, events=rec["events"], engine_s=rec["wall_s"], counters=counters)


# ----------------------------------------------------------------------------------------------------- htsim

FINISHED = re.compile(r"^Flow Uec_(\d+)_(\d+) flowId \d+ uecSrc \d+ finished at (\S+)", re.M)
TOTALS = re.compile(r"^New: (\d+) Rtx: (\d+) RTS: \d+ Bounced: \d+ ACKs: (\d+) NACKs: (\d+)", re.M)


def htsim_argv(htsim: Path, cm_path: str, seed: int | str, end_us: int | str, algo: str, log_path: str) -> list[str]:
    """htsim_uec's command line: FatTreeTopology of HOSTS hosts in 3 tiers (k = 8), 100 Gb/s, 1 us links, zero
    switch latency, routing and spraying seed, traffic matrix, end time (us), load balancer, log file; every
    other parameter is main_uec.cpp's default (UET_HTSIM.md)."""
    return [str(htsim), "-nodes", str(HOSTS), "-tiers", "3", "-linkspeed", str(RATE_MBPS),
            "-hop_latency", str(HOP_LATENCY_US), "-switch_latency", "0", "-seed", str(seed), "-tm", cm_path,
            "-end", str(end_us), "-load_balancing_algo", algo, "-o", log_path]


def run_htsim(htsim: Path, cm: str, spray: str, seed: int, end_us: int, work: Path, tag: str) -> dict:
    """One whole htsim_uec process: FCTs (us) by (src, dst), the printed counters, process times, peak RSS."""
    path = work / f"{tag}.cm"
    path.write_text(cm)
    argv = htsim_argv(htsim, path.name, seed, end_us, spray, f"{tag}.logout")
    out, t = timed(argv, work)
    fct = {(int(m[1]), int(m[2])): float(m[3]) for m in FINISHED.finditer(out)}
    want = connections(cm)
    if len(fct) != len(want):
        raise RuntimeError(f"htsim_uec {tag}: {len(fct)} of {len(want)} flows finished by {end_us} us")
    totals = TOTALS.search(out)
    if totals is None:
        raise RuntimeError(f"htsim_uec {tag}: no 'New: ... NACKs: ...' line on its stdout")
    new, rtx, acks, nacks = map(int, totals.groups())
    counters = dict(new=new, rtx=rtx, trims=NOT_PRINTED, nacks=nacks, rtos=NOT_PRINTED, acks=acks)
    (work / f"{tag}.stdout.txt").write_text(out)  # beside its log (kept under --keep only)
    return dict(t, fct_us=fct, counters=counters, argv=argv)


def stored_reference(case: str) -> dict | None:
    """The stored reference run of a case (benchmarks/data/uet_htsim/summary.json), FCTs in flow-id order."""
    path = DATA / "summary.json"
    if not path.is_file():
        return None
    run = json.loads(path.read_text()).get(case)
    if run is None:
        return None
    c = run.get("counters", {})
    counters = dict(new=c.get("new_pkts", "-"), rtx=c.get("rtx_pkts", "-"), trims=NOT_PRINTED,
                    nacks=c.get("nacks", "-"), rtos=NOT_PRINTED, acks=c.get("acks", "-"))
    return dict(fct_us=dict(enumerate(run["fct_us"])), counters=counters, wall_s=run["wall_s"])


# ------------------------------------------------------------------------------------------------ reporting

def timing(runs: list[dict]) -> dict:
    """Best and median wall and CPU, and the peak RSS, of repeated runs (fabricsim: and its engine alone)."""
    w, c = [r["wall_s"] for r in runs], [r["cpu_s"] for r in runs]
    d = dict(wall_best_s=min(w), wall_median_s=statistics.median(w), cpu_best_s=min(c),
             cpu_median_s=statistics.median(c), rss_mib=max(r["rss_mib"] for r in runs), n=len(runs))
    if "engine_s" in runs[0]:
        e = [r["engine_s"] for r in runs]
        d.update(engine_best_s=min(e), engine_median_s=statistics.median(e))
    return d


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def run_case(case: str, args, work: Path, htsim: Path | None) -> dict:
    """The paired, interleaved timed runs of one case; FCTs from the first run of each tool (the repeats must
    give the same ones)."""
    name, spray = CASES[case]
    cm = traffic_matrix(name)
    end_us = WORKLOADS[name][3]
    ours, theirs = [], []
    for r in range(args.repeat):
        for side in (("fabricsim", "htsim") if r % 2 == 0 else ("htsim", "fabricsim")):
            if side == "fabricsim":
                ours.append(run_fabricsim(cm, spray, args.seed, work, case))
            elif htsim is not None:
                theirs.append(run_htsim(htsim, cm, spray, args.seed, end_us, work, case))
    res = dict(fabricsim=dict(timing=timing(ours), events=ours[0]["events"], counters=ours[0]["counters"],
                              fct=fct_stats(ours[0]["fct_us"]),
                              repeats_identical=all(o["fct_us"] == ours[0]["fct_us"] for o in ours)))
    if theirs:
        res["htsim"] = dict(timing=timing(theirs), counters=theirs[0]["counters"], argv=theirs[0]["argv"],
                            fct=fct_stats(theirs[0]["fct_us"]),
                            repeats_identical=all(t["fct_us"] == theirs[0]["fct_us"] for t in theirs))
    elif (ref := stored_reference(case)) is not None:
        res["htsim_stored"] = dict(fct=fct_stats(ref["fct_us"]), counters=ref["counters"], wall_s=ref["wall_s"])
    return res


def row(case: str, tool: str, t: dict | None, fct: dict, events, c: dict) -> str:
    """One table row: times (s), FCTs (us), events, counters, peak RSS (MiB)."""
    def n(x):
        return f"{x:,}" if isinstance(x, int) else str(x)
    if t is None:
        times = f"{'-':>7} {'-':>7} {'-':>7} {'-':>8}"
        rss = f"{'-':>7}"
    else:
        eng = f"{t['engine_median_s']:.3f}" if "engine_median_s" in t else "   = "
        times = f"{t['wall_median_s']:7.3f} {t['wall_best_s']:7.3f} {t['cpu_median_s']:7.3f} {eng:>8}"
        rss = f"{t['rss_mib']:7.1f}"
    return (f"{case:21} {tool:13} {times} {fct['mean']:10.2f} {fct['p99']:10.2f} {fct['max']:10.2f} "
            f"{n(events):>9} {n(c.get('new', '-')):>7} {n(c.get('rtx', '-')):>6} "
            f"{n(c.get('trims', '-')):>11} {n(c.get('nacks', '-')):>6} {n(c.get('rtos', '-')):>11} {rss}")


def report(case: str, res: dict) -> list[str]:
    """Printed lines of one case; sets res['ratios'] and res['failures'] (what disagrees)."""
    pad = " " * 22
    a = res["fabricsim"]
    lines = [row(case, "fabricsim", a["timing"], a["fct"], a["events"], a["counters"])]
    fails = []
    if "htsim" in res:
        b = res["htsim"]
        lines.append(row(case, "htsim_uec", b["timing"], b["fct"], "n/a", b["counters"]))
    elif "htsim_stored" in res:
        b = res["htsim_stored"]
        lines.append(row(case, "htsim(stored)", None, b["fct"], "n/a", b["counters"]))
    else:
        res["failures"] = fails
        return lines
    rel_mean = (a["fct"]["mean"] - b["fct"]["mean"]) / b["fct"]["mean"]
    rel_p99 = (a["fct"]["p99"] - b["fct"]["p99"]) / b["fct"]["p99"]
    ok_mean, ok_p99 = abs(rel_mean) <= TOLERANCE["fct_mean"], abs(rel_p99) <= TOLERANCE["fct_p99"]
    res["ratios"] = dict(fct_mean_rel=rel_mean, fct_p99_rel=rel_p99)
    stored = "" if "htsim" in res else " (against the stored run: informative, not enforced)"
    lines.append(f"{pad}agree     FCT mean {a['fct']['mean']:.2f} vs {b['fct']['mean']:.2f} us ({rel_mean:+.2%}): "
                 f"{verdict(ok_mean)} {TOLERANCE['fct_mean']:.0%}; p99 {a['fct']['p99']:.2f} vs "
                 f"{b['fct']['p99']:.2f} us ({rel_p99:+.2%}): {verdict(ok_p99)} {TOLERANCE['fct_p99']:.0%}{stored}")
    if "htsim" not in res:
        res["failures"] = fails
        return lines
    if not (ok_mean and ok_p99):
        fails.append(f"{case} FCT")
    for tool in ("fabricsim", "htsim"):
        if not res[tool]["repeats_identical"]:
            fails.append(f"{case} {tool} repeats")
            lines.append(f"{pad}REPEATS   {tool}'s {res[tool]['timing']['n']} runs gave different FCTs")
    ta, tb = a["timing"], b["timing"]
    whole = tb["wall_median_s"] / ta["wall_median_s"]
    whole_best = tb["wall_best_s"] / ta["wall_best_s"]
    cpu = tb["cpu_median_s"] / ta["cpu_median_s"]
    engine = tb["wall_median_s"] / ta["engine_median_s"]
    res["ratios"].update(whole_speedup_median=whole, whole_speedup_best=whole_best, cpu_speedup_median=cpu,
                         engine_speedup_median=engine)
    lines.append(f"{pad}speed     htsim/fabricsim wall {whole:.2f}x median, {whole_best:.2f}x best; CPU "
                 f"{cpu:.2f}x; htsim whole / fabricsim engine alone {engine:.2f}x; target whole >= "
                 f"{TARGETS['whole_speedup']:g}x: {verdict(whole >= TARGETS['whole_speedup'])} (reported, not "
                 "enforced)")
    res["failures"] = fails
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", type=Path, default=Path(os.environ.get("UET_HTSIM_BIN", DEFAULT_HTSIM)),
                    help="uet-htsim's htsim_uec binary (default: $UET_HTSIM_BIN, else %(default)s)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ", ".join(CASES))
    ap.add_argument("--repeat", type=int, default=3, help="timed pairs per case (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1,
                    help="routing and spraying seed of both tools (htsim -seed; fabricsim seed; default "
                         "%(default)s); the traffic matrices stay seed 1")
    ap.add_argument("--keep", type=Path,
                    help="write the scenarios, matrices and htsim's logs and stdout here (else a temporary "
                         "directory, removed)")
    ap.add_argument("--json", type=Path, help="write every figure to this JSON file")
    args = ap.parse_args()
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown or args.repeat < 1:
        ap.error(f"unknown case(s) {unknown}" if unknown else "--repeat must be >= 1")

    htsim = args.htsim if args.htsim.is_file() and os.access(args.htsim, os.X_OK) else None
    for line in check_matrices(htsim):
        print(line)
    if htsim is not None:
        print(f"htsim_uec: {htsim}")
        print("htsim command: " + " ".join(htsim_argv(htsim, "WORKLOAD.cm", args.seed, "END_US", "ALGO",
                                                        "CASE.logout")))
    else:
        print(f"vs_uet_htsim: no htsim_uec binary at {args.htsim} (benchmarks/UET_HTSIM.md says how to build "
              "it; --htsim or $UET_HTSIM_BIN): fabricsim's side only, beside the stored reference FCTs")
    print("fabricsim command: fabricsim run CASE.toml --json --quiet (--keep DIR keeps them)")
    print(f"machine: {os.cpu_count()} cores; {args.repeat} paired run(s) per case, interleaved; times in s "
          "(median, best), FCT in us (p99 nearest rank), peak RSS in MiB")
    print("peak RSS: " + ("GNU time's %M of each child" if GNU_TIME.is_file() else
                          "os.wait4's ru_maxrss, an upper bound (no /usr/bin/time: apt-get install time)"))
    print(f"counters: new data packets, retransmissions, trims, NACKs, retransmission timeouts; htsim_uec does "
          f"not print trims or timeouts ('{NOT_PRINTED}')")
    print(f"{'case':21} {'tool':13} {'wall md':>7} {'best':>7} {'cpu md':>7} {'engine':>8} {'FCT mean':>10} "
          f"{'FCT p99':>10} {'FCT max':>10} {'events':>9} {'new':>7} {'rtx':>6} {'trims':>11} {'NACKs':>6} "
          f"{'RTOs':>11} {'peakRSS':>7}")
    out, failures = run_all(names, lambda case, work: run_case(case, args, work, htsim), report, args.keep)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    if failures:
        print(f"vs_uet_htsim: fabricsim and htsim_uec disagree beyond tolerance on: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
