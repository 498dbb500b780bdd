"""fabricsim's RoCEv2 model side by side with HPCC's ns-3 fork on star incasts (issue 19).

Each case runs the same incast with the same parameters on both sides: n senders and one receiver on one
shared-buffer switch, 100 Gb/s links with 1 us delay, one 10 MB message (flow) per sender, all starting
together; PFC on (HPCC's switch MMU: 32 MiB, 4 KiB reserve, alpha 1/8, headroom 3 x rate x delay / 8,
3 KiB resume offset, 43 B PFC frames); the peer's wire sizes (data 1000 B payload + 48 B headers, or + 90 B
with HPCC's INT; ACK 60 B, or 88 B with INT); ECN thresholds of config.txt at 100 Gb/s (400 KB / 1600 KB /
0.2). The cases and their congestion-control settings:

- dcqcn_runpy: DCQCN as the fork's run.py sets it (no window, RP timer 300 us, AI 20 Mb/s, HAI 200 Mb/s,
  min rate 1 Gb/s, ACKs at high priority at the NIC), the case where DCQCN acts;
- dcqcn_config: DCQCN with config.txt (a one-BDP window with VAR_WIN: window-bound, no ECN mark);
- hpcc_config: HPCC with config.txt (eta 0.95, maxStage 0, AI 50 Mb/s, fast react, window);
- none_2to1: two senders, no congestion control and no ECN, PFC alone.

Compared: flow completion times (the peer's FCT ends when the sender receives the last ACK; fabricsim's
message completes when the receiver has the last byte, so the ACK's return, 2 x (1 us + ACK serialisation),
is added and labelled), the time-average bottleneck queue (1 us samples on both sides), PAUSE frames, and
wall time (whole processes: the peer's `third` and `python -c` running fabricsim). The peer must be built
(benchmarks/HPCC_NS3.md); without it this prints fabricsim's side only.

Usage: python benchmarks/vs_hpcc_ns3.py [--cases dcqcn_runpy,none_2to1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "hpcc_ns3"))

US = 1_000_000
GBPS = 1_000_000_000

CASES = {
    "dcqcn_runpy": dict(n=8, cc="dcqcn", preset="runpy", ecn=True,
                        rdma=dict(window=False, rp_timer_ps=300 * US, rate_ai_bps=20_000_000,
                                  rate_hai_bps=200_000_000, min_rate_bps=1000_000_000, ack_high_priority=True)),
    "dcqcn_config": dict(n=8, cc="dcqcn", preset="config", ecn=True,
                         rdma=dict(window=True, var_window=True, ack_high_priority=False)),
    "hpcc_config": dict(n=8, cc="hpcc", preset="config", ecn=True,
                        rdma=dict(window=True, var_window=True, ack_high_priority=False)),
    "none_2to1": dict(n=2, cc="none", preset="config", ecn=False,
                      rdma=dict(window=False, ack_high_priority=False)),
}

SIZE = 10_000_000


def wire_spec(case: dict, seed: int = 1) -> dict:
    """The fabricsim wire spec of a case (JSON form of crates/fabricsim-core/src/spec.rs)."""
    import fabricsim._core as core

    presets = json.loads(core.roce_presets())
    n = case["n"]
    hpcc = case["cc"] == "hpcc"
    nodes = [{"name": "sw", "kind": "switch", "model": "shared_buffer"}]
    nodes += [{"name": f"s{i}", "kind": "host"} for i in range(n)] + [{"name": "rx", "kind": "host"}]
    links = [{"a": h, "b": 0, "rate_bps": 100 * GBPS, "delay_ps": US} for h in range(1, n + 2)]
    rdma = dict(presets["rdma"]["hpcc"][case["cc"]])
    rdma.update(ack_bytes=88 if hpcc else 60, **case["rdma"])
    pfc = dict(presets["pfc"], frame_bytes=43)
    spec = {
        "seed": seed,
        "network": {"nodes": nodes, "links": links},
        "messages": [{"name": f"m{i}", "src": 1 + i, "dst": n + 1, "size_bytes": SIZE, "packet_bytes": 1000,
                      "header_bytes": 90 if hpcc else 48} for i in range(n)],
        "measure": {"queue_sample_ps": US, "sample_ports": [[0, n]]},
        "pfc": pfc,
        "rdma": rdma,
    }
    if case["ecn"]:
        spec["ecn"] = presets["ecn"]["hpcc"]
    return spec


def run_fabricsim(case: dict, seeds: int = 1) -> dict:
    """Run a case over seeds 1..seeds, each in a fresh process (whole-process wall time), and summarise it like
    the peer: FCTs of every run, the mean over seeds of the time-average queue (its spread too), the largest peak,
    the mean PAUSE count, the median wall times."""
    runs = [run_fabricsim_once(case, seed) for seed in range(1, seeds + 1)]
    qs = [r["queue_avg_bytes"] for r in runs]
    return {
        "fct_ns": [f for r in runs for f in r["fct_ns"]],
        "fct_note": runs[0]["fct_note"],
        "queue_avg_bytes": statistics.fmean(qs),
        "queue_avg_range_bytes": [min(qs), max(qs)],
        "queue_max_bytes": max(r["queue_max_bytes"] for r in runs),
        "pauses": statistics.fmean(r["pauses"] for r in runs),
        "drops": sum(r["drops"] for r in runs),
        "events": runs[0]["events"],
        "engine_s": statistics.median(r["engine_s"] for r in runs),
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "seeds": seeds,
    }


def run_fabricsim_once(case: dict, seed: int) -> dict:
    """Run a case with one seed in a fresh process (whole-process wall time) and summarise it like the peer."""
    code = (
        "import json,sys,fabricsim._core as c\n"
        "s,col=c.run(sys.stdin.read(),None,'packet')\n"
        "out={k:(v.tolist() if hasattr(v,'tolist') else v) for k,v in col.items() "
        "if k.startswith(('flows.','samples.','roce.'))}\n"
        "out.update(events=s['events'],engine_s=s['wall_s'],dropped=s['packets']['dropped'])\n"
        "print(json.dumps(out))\n"
    )
    spec = json.dumps(wire_spec(case, seed))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], input=spec, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    r = json.loads(p.stdout)
    n = case["n"]
    hpcc = case["cc"] == "hpcc"
    ack_bytes = 88 if hpcc else 60
    # The ACK of the last byte returns over two links: serialisation (ps, ceil) + 1 us each.
    ack_return_ps = 2 * (-(-ack_bytes * 8 * 10**12 // (100 * GBPS)) + US)
    complete = r["flows.complete_ps"][:n]
    fct_ns = [(c + ack_return_ps) / 1000 for c in complete]
    end = max(complete)
    q = [b for t, b in zip(r["samples.t_ps"], r["samples.bytes"]) if t <= end]
    return {
        "fct_ns": fct_ns,
        "fct_note": f"receiver completion + ACK return {ack_return_ps / 1000:.1f} ns (computed)",
        "queue_avg_bytes": statistics.fmean(q) if q else 0.0,
        "queue_max_bytes": max(q) if q else 0,
        "pauses": sum(r["roce.pause_tx"]),
        "drops": r["dropped"],
        "events": r["events"],
        "engine_s": r["engine_s"],
        "wall_s": wall,
    }


def run_peer(name: str, case: dict) -> dict | None:
    try:
        import peer
    except ImportError:
        return None
    try:
        t0 = time.perf_counter()
        d = peer.run_incast(n_senders=case["n"], size_bytes=SIZE, cc=case["cc"], preset=case["preset"])
        wall = time.perf_counter() - t0
    except FileNotFoundError as e:
        print(f"peer not run: {e}", file=sys.stderr)
        return None
    q = d.get("bottleneck_queue") or {}
    return {
        "fct_ns": [float(x) for x in d["fct_ns"]],
        "queue_avg_bytes": q.get("time_avg_bytes"),
        "queue_max_bytes": q.get("max_bytes"),
        "pauses": (d.get("pfc") or {}).get("pause_frames"),
        "wall_s": d.get("wall_s", wall),
    }


def fmt_pauses(p) -> str:
    return "n/a" if p is None else f"{p:g}"


def pct(a: float, b: float) -> str:
    return f"{100.0 * (a - b) / b:+.1f}%" if b else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ", ".join(CASES))
    ap.add_argument("--json", help="write every figure to this JSON file")
    ap.add_argument("--seeds", type=int, default=5, help="fabricsim seeds per case (ECN marking draws; the peer runs once)")
    args = ap.parse_args()
    out = {}
    print(f"{'case':14} {'side':9} {'FCT mean us':>11} {'FCT min..max us':>19} {'queue avg KB':>12} "
          f"{'queue max KB':>12} {'pauses':>7} {'wall s':>7}")
    for name in args.cases.split(","):
        case = CASES[name]
        ours = run_fabricsim(case, args.seeds)
        theirs = run_peer(name, case)
        out[name] = {"fabricsim": ours, "hpcc_ns3": theirs}
        for side, d in (("fabricsim", ours), ("hpcc-ns3", theirs)):
            if d is None:
                continue
            f = d["fct_ns"]
            qa = d["queue_avg_bytes"]
            qm = d["queue_max_bytes"]
            print(f"{name:14} {side:9} {statistics.fmean(f) / 1000:11.1f} {min(f) / 1000:9.1f}..{max(f) / 1000:<9.1f}"
                  f" {(qa or 0) / 1000:12.1f} {(qm or 0) / 1000:12.1f} {fmt_pauses(d['pauses']):>7} {d['wall_s']:7.3f}")
            if "queue_avg_range_bytes" in d and d["seeds"] > 1:
                lo, hi = d["queue_avg_range_bytes"]
                print(f"{'':14} {'':9} (mean of {d['seeds']} seeds; queue avg {lo / 1000:.1f}..{hi / 1000:.1f} KB)")
        if theirs:
            fm, pm = statistics.fmean(ours["fct_ns"]), statistics.fmean(theirs["fct_ns"])
            print(f"{'':14} {'diff':9} FCT mean {pct(fm, pm)}, queue avg "
                  f"{pct(ours['queue_avg_bytes'], theirs['queue_avg_bytes'] or 0)}, wall ratio "
                  f"{theirs['wall_s'] / ours['wall_s']:.1f}x (engine alone {theirs['wall_s'] / ours['engine_s']:.0f}x)")
    print(f"machine: {os.cpu_count()} cores; fabricsim wall = whole python process; peer wall = its process")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
