"""Run a star incast on HPCC's ns-3 fork (alibaba-edu/High-Precision-Congestion-Control,
ns-3.17 + mix/qbb/rdma-hw/switch-mmu) and summarise it, for side-by-side comparison with
fabricsim's RoCEv2 model.

The peer binary is built outside this repository (see benchmarks/HPCC_NS3.md); this module
only writes the peer's input files (config / topology / flow / trace), runs its
`scratch/third` program and parses what it writes. Standard library only.

    python3 benchmarks/hpcc_ns3/peer.py --cc dcqcn --n-senders 8 --size-bytes 10000000

Binary lookup: `binary=` argument, else $HPCC_NS3_BINARY, else
/work/peers/hpcc/src/simulation/build/scratch/third. Its shared libraries are in the
`build/` directory one level above `scratch/` (put on LD_LIBRARY_PATH automatically).

The queue time series needs the peer patched with the sampler of
/work/peers/hpcc/patches/0001-third-qlen-trace-sampler.patch (kept with the build, outside
this repository):
config keys QLEN_TRACE_FILE / QLEN_TRACE_START / QLEN_TRACE_INTERVAL / QLEN_TRACE_END and
QBB_ENABLED. An unpatched binary ignores those keys; the queue fields are then None.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

DEFAULT_BINARY = "/work/peers/hpcc/src/simulation/build/scratch/third"

# mix/config.txt of the fork, verbatim values, in file order (the fork's own defaults).
# File names are replaced per run; everything else is taken as is unless a run overrides it.
CONFIG_TXT_DEFAULTS = [
    ("ENABLE_QCN", "1"),
    ("USE_DYNAMIC_PFC_THRESHOLD", "1"),
    ("PACKET_PAYLOAD_SIZE", "1000"),
    ("TOPOLOGY_FILE", "mix/topology.txt"),
    ("FLOW_FILE", "mix/flow.txt"),
    ("TRACE_FILE", "mix/trace.txt"),
    ("TRACE_OUTPUT_FILE", "mix/mix.tr"),
    ("FCT_OUTPUT_FILE", "mix/fct.txt"),
    ("PFC_OUTPUT_FILE", "mix/pfc.txt"),
    ("SIMULATOR_STOP_TIME", "4.00"),
    ("CC_MODE", "3"),
    ("ALPHA_RESUME_INTERVAL", "1"),
    ("RATE_DECREASE_INTERVAL", "4"),
    ("CLAMP_TARGET_RATE", "0"),
    ("RP_TIMER", "900"),
    ("EWMA_GAIN", "0.00390625"),
    ("FAST_RECOVERY_TIMES", "1"),
    ("RATE_AI", "50Mb/s"),
    ("RATE_HAI", "100Mb/s"),
    ("MIN_RATE", "100Mb/s"),
    ("DCTCP_RATE_AI", "1000Mb/s"),
    ("ERROR_RATE_PER_LINK", "0.0000"),
    ("L2_CHUNK_SIZE", "4000"),
    ("L2_ACK_INTERVAL", "1"),
    ("L2_BACK_TO_ZERO", "0"),
    ("HAS_WIN", "1"),
    ("GLOBAL_T", "1"),
    ("VAR_WIN", "1"),
    ("FAST_REACT", "1"),
    ("U_TARGET", "0.95"),
    ("MI_THRESH", "0"),
    ("INT_MULTI", "1"),
    ("MULTI_RATE", "0"),
    ("SAMPLE_FEEDBACK", "0"),
    ("PINT_LOG_BASE", "1.05"),
    ("PINT_PROB", "1.0"),
    ("RATE_BOUND", "1"),
    ("ACK_HIGH_PRIO", "0"),
    ("LINK_DOWN", "0 0 0"),
    ("ENABLE_TRACE", "1"),
    ("KMAX_MAP", "3 25000000000 400 50000000000 800 100000000000 1600"),
    ("KMIN_MAP", "3 25000000000 100 50000000000 200 100000000000 400"),
    ("PMAX_MAP", "3 25000000000 0.2 50000000000 0.2 100000000000 0.2"),
    ("BUFFER_SIZE", "32"),
    ("QLEN_MON_FILE", "mix/qlen.txt"),
    ("QLEN_MON_START", "2000000000"),
    ("QLEN_MON_END", "2010000000"),
]

CC_MODES = {"dcqcn": 1, "hpcc": 3}

FLOW_START_S = 2.0  # the fork's own convention (mix/flow.txt, QLEN_MON_START)
PG = 3  # priority group of data in mix/flow.txt
DPORT = 100


def _runpy_overrides(cc: str, bw: int) -> dict:
    """The values simulation/run.py of the fork writes for `--cc dcqcn` / `--cc hp --bw bw`
    (Python 2 integer division kept)."""
    kmax = "2 %d %d %d %d" % (bw * 10**9, 400 * bw // 25, bw * 4 * 10**9, 400 * bw * 4 // 25)
    kmin = "2 %d %d %d %d" % (bw * 10**9, 100 * bw // 25, bw * 4 * 10**9, 100 * bw * 4 // 25)
    pmax = "2 %d %.2f %d %.2f" % (bw * 10**9, 0.2, bw * 4 * 10**9, 0.2)
    common = {
        "ALPHA_RESUME_INTERVAL": "1", "RATE_DECREASE_INTERVAL": "4", "RP_TIMER": "300",
        "EWMA_GAIN": "0.00390625", "FAST_RECOVERY_TIMES": "1", "MIN_RATE": "1000Mb/s",
        "DCTCP_RATE_AI": "1000Mb/s", "U_TARGET": "0.95", "MI_THRESH": "0",
        "PINT_LOG_BASE": "1.01", "PINT_PROB": "1.0", "ENABLE_TRACE": "0",
        "KMAX_MAP": kmax, "KMIN_MAP": kmin, "PMAX_MAP": pmax,
        "BUFFER_SIZE": str(16 * bw // 50),
        # run.py also writes QLEN_MON_END 3000000000: its 100 ns histogram monitor then runs for
        # 1 s of simulated time (10 M events, ~6x the wall time of the incast itself); kept at
        # config.txt's 2010000000 here since the patched sampler gives the queue anyway.
    }
    if cc in ("dcqcn", "none"):
        common.update({"RATE_AI": "%dMb/s" % (5 * bw // 25), "RATE_HAI": "%dMb/s" % (50 * bw // 25),
                       "HAS_WIN": "0", "VAR_WIN": "0", "FAST_REACT": "0", "INT_MULTI": "1",
                       "ACK_HIGH_PRIO": "1"})
    else:  # hp
        ai = 10 * bw // 25
        common.update({"RATE_AI": "%dMb/s" % ai, "RATE_HAI": "%dMb/s" % ai,
                       "HAS_WIN": "1", "VAR_WIN": "1", "FAST_REACT": "1",
                       "INT_MULTI": str(bw // 25), "ACK_HIGH_PRIO": "0"})
    return common


def wire_bytes(cc: str, payload: int = 1000) -> dict:
    """Bytes on the wire as the fork serialises them (tx time = size*8/rate, no preamble/IFG:
    QbbNetDevice::TransmitStart uses p->GetSize(), InterframeGap default 0).
    PppHeader is patched in the fork to 14 bytes (ppp-header.cc:80-82) = Ethernet-sized L2.
    data = L2 14 + IPv4 20 + UDP 8 + SeqTs 6 (pg 2 + seq 4) + INT + payload
    INT: HPCC (IntHeader::NORMAL) 5 hops x 8 B + 2 B nhop = 42; DCQCN (NONE) 0.
    ACK = L2 14 + IPv4 20 + qbbHeader (sport,dport,flags,pg 2 B each + seq 4 = 12, + INT),
    padded so that 14+20+qbb+pad >= 60 (rdma-hw.cc:324).
    PFC = L2 14 + IPv4 20 + PauseHeader 9."""
    intsz = 42 if cc == "hpcc" else 0
    data_hdr = 14 + 20 + 8 + 6 + intsz
    ack_l4 = 12 + intsz
    ack = 14 + 20 + ack_l4 + max(60 - 14 - 20 - ack_l4, 0)
    return {"data_packet": data_hdr + payload, "data_header": data_hdr, "payload": payload,
            "int_header": intsz, "ack": ack, "pfc": 14 + 20 + 9, "cnp": "no CNP packet; ECN echo is a flag in the ACK"}


def _serialize_ns(size_bytes: int, cc: str, rate_gbps: float, payload: int = 1000) -> int:
    """Wire time of one flow's data packets back to back, as the peer computes it: each packet
    takes int(bytes*8/rate) ns (DataRate::CalculateTxTime then Seconds(), which truncates)."""
    hdr = wire_bytes(cc, payload)["data_header"]
    full, rem = divmod(int(size_bytes), payload)
    t = full * int((hdr + payload) * 8 / rate_gbps)
    if rem:
        t += int((hdr + rem) * 8 / rate_gbps)
    return t


def _ip_to_node(ip_hex: str) -> int:
    return (int(ip_hex, 16) >> 8) & 0xFFFF


def run_incast(n_senders=8, size_bytes=10_000_000, cc="dcqcn", rate_gbps=100, delay_us=1.0,
               pfc=True, binary=None, workdir=None, preset="config", qlen_interval_ns=1000,
               overrides=None, series_step_us=10.0, timeout_s=3600) -> dict:
    """Star incast on the HPCC ns-3 fork: hosts 1..n_senders send one flow of size_bytes each to
    host n_senders+1, all on switch node 0, all starting at t = 2.0 s (the fork's convention).

    cc: "dcqcn" (CC_MODE 1), "hpcc" (CC_MODE 3) or "none" (CC_MODE 1 with ENABLE_QCN 0 and
    HAS_WIN 0: no ECN marks so DCQCN never reacts, no window: line rate + PFC only).
    preset: "config" = the fork's mix/config.txt for everything not set here;
            "runpy"  = the values the fork's run.py writes for --cc dcqcn / --cc hp at this bw.
    pfc=False sets QBB_ENABLED 0 (patched key): devices ignore received PAUSE frames (the
    switch still generates them, and then drops when the headroom is full).
    overrides: dict of extra config keys (applied last).
    """
    if cc not in ("dcqcn", "hpcc", "none"):
        raise ValueError("cc must be dcqcn, hpcc or none")
    binary = os.path.abspath(binary or os.environ.get("HPCC_NS3_BINARY") or DEFAULT_BINARY)
    if not os.path.exists(binary):
        raise FileNotFoundError(f"peer binary not found: {binary} (build it, see benchmarks/HPCC_NS3.md)")
    build_dir = os.path.dirname(os.path.dirname(binary))
    workdir = os.path.abspath(workdir or tempfile.mkdtemp(prefix="hpcc_incast_"))
    os.makedirs(workdir, exist_ok=True)

    rate_bps = int(round(rate_gbps * 1e9))
    delay_ns = int(round(delay_us * 1000))
    sw = 0
    senders = list(range(1, n_senders + 1))
    rcv = n_senders + 1
    n_nodes = n_senders + 2
    bottleneck_port = rcv  # switch device index: links listed in node order, device 0 = loopback

    # --- config
    cfg = dict(CONFIG_TXT_DEFAULTS)
    order = [k for k, _ in CONFIG_TXT_DEFAULTS]
    notes = []
    if preset == "runpy":
        cfg.update(_runpy_overrides(cc, int(rate_gbps)))
    elif preset != "config":
        raise ValueError("preset must be 'config' or 'runpy'")
    cfg["CC_MODE"] = str(CC_MODES.get(cc, 1))
    if cc == "none":
        cfg["ENABLE_QCN"] = "0"
        cfg["HAS_WIN"] = "0"
        notes.append("cc=none: CC_MODE 1 with ENABLE_QCN 0 (switches never mark, so DCQCN never cuts) and HAS_WIN 0")
    # ECN thresholds must exist for the link rate (third.cc asserts); extend the map the way
    # run.py scales it (kmin 100*bw/25 KB, kmax 400*bw/25 KB, pmax 0.2) if the rate is not listed.
    for key, val in (("KMAX_MAP", 400 * rate_gbps / 25), ("KMIN_MAP", 100 * rate_gbps / 25), ("PMAX_MAP", 0.2)):
        parts = cfg[key].split()
        rates = parts[1::2]
        if str(rate_bps) not in rates:
            parts = [str(int(parts[0]) + 1)] + parts[1:] + [str(rate_bps), ("%g" % val) if key == "PMAX_MAP" else str(int(val))]
            cfg[key] = " ".join(parts)
            notes.append(f"{key}: added entry for {rate_bps} bps")
    files = {
        "TOPOLOGY_FILE": "topology.txt", "FLOW_FILE": "flow.txt", "TRACE_FILE": "trace.txt",
        "TRACE_OUTPUT_FILE": "mix.tr", "FCT_OUTPUT_FILE": "fct.txt", "PFC_OUTPUT_FILE": "pfc.txt",
        "QLEN_MON_FILE": "qlen.txt",
    }
    for k, v in files.items():
        cfg[k] = os.path.join(workdir, v)
    ideal_s = n_senders * size_bytes * 8 / rate_bps
    need_stop = FLOW_START_S + 20 * ideal_s + 0.01
    if float(cfg["SIMULATOR_STOP_TIME"]) < need_stop:
        cfg["SIMULATOR_STOP_TIME"] = "%.6f" % need_stop
        notes.append("SIMULATOR_STOP_TIME raised to fit the incast")
    start_ns = int(round(FLOW_START_S * 1e9))
    extra = {
        "QLEN_TRACE_FILE": os.path.join(workdir, "qtrace.txt"),
        "QLEN_TRACE_START": str(start_ns),
        "QLEN_TRACE_INTERVAL": str(int(qlen_interval_ns)),
        "QLEN_TRACE_END": str(start_ns + int((20 * ideal_s + 0.01) * 1e9)),
        "QBB_ENABLED": "1" if pfc else "0",
    }
    if overrides:
        for k, v in overrides.items():
            (cfg if k in cfg else extra)[k] = str(v)
    with open(os.path.join(workdir, "config.txt"), "w") as f:
        for k in order:
            f.write(f"{k} {cfg[k]}\n")
        for k, v in extra.items():
            f.write(f"{k} {v}\n")

    # --- topology: "nodes switches links", switch ids, then "a b rate delay error"
    with open(os.path.join(workdir, "topology.txt"), "w") as f:
        f.write(f"{n_nodes} 1 {n_nodes - 1}\n{sw}\n")
        for h in range(1, n_nodes):
            f.write(f"{sw} {h} {rate_gbps:g}Gbps {delay_ns}ns 0\n")
    # --- flows: "src dst pg dport size start_s"
    with open(os.path.join(workdir, "flow.txt"), "w") as f:
        f.write(f"{n_senders}\n")
        for s in senders:
            f.write(f"{s} {rcv} {PG} {DPORT} {int(size_bytes)} {FLOW_START_S}\n")
    # --- packet-trace nodes: none (mix.tr then holds only the SimSetting header)
    with open(os.path.join(workdir, "trace.txt"), "w") as f:
        f.write("0\n\n")

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = build_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    t0 = time.perf_counter()
    proc = subprocess.run([binary, os.path.join(workdir, "config.txt")], cwd=workdir, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout_s)
    wall = time.perf_counter() - t0
    with open(os.path.join(workdir, "stdout.txt"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(workdir, "stderr.txt"), "w") as f:
        f.write(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"peer exited {proc.returncode}: {proc.stderr[-2000:]}")
    out_lines = proc.stdout.strip().splitlines()
    cpu_s = None
    try:
        cpu_s = float(out_lines[-1])
    except (ValueError, IndexError):
        pass
    drops = sum(1 for l in out_lines if "Drop" in l)

    # --- FCT: "sip dip sport dport size start_ns fct_ns standalone_fct_ns"
    flows = []
    with open(cfg["FCT_OUTPUT_FILE"]) as f:
        for line in f:
            p = line.split()
            if len(p) < 8:
                continue
            flows.append({"src": _ip_to_node(p[0]), "dst": _ip_to_node(p[1]), "sport": int(p[2]),
                          "size": int(p[4]), "start_ns": int(p[5]), "fct_ns": int(p[6]),
                          "standalone_fct_ns": int(p[7])})
    flows.sort(key=lambda r: r["src"])
    done = len(flows)
    end_ns = max((r["start_ns"] + r["fct_ns"] for r in flows), default=None)

    # --- PFC: "time_ns node nodetype ifindex type" logged at the RECEIVING device, type 1 = pause
    # (time > 0), 0 = resume. Map to the sending side of the link.
    pauses_by_sender, resumes_by_sender = {}, {}
    pause_rx = {}
    n_pause = n_resume = 0
    first_pause = last_pause = None
    with open(cfg["PFC_OUTPUT_FILE"]) as f:
        for line in f:
            p = line.split()
            if len(p) < 5:
                continue
            t, node, ntype, ifidx, typ = int(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4])
            if ntype == 0:  # a host received it: sent by switch port == host id
                sender = f"switch{sw}:port{node}(->host{node})"
            else:  # the switch received it on port ifidx: sent by host ifidx
                sender = f"host{ifidx}:nic"
            rx = f"node{node}:if{ifidx}"
            if typ == 1:
                n_pause += 1
                pauses_by_sender[sender] = pauses_by_sender.get(sender, 0) + 1
                pause_rx[rx] = pause_rx.get(rx, 0) + 1
                first_pause = t if first_pause is None else first_pause
                last_pause = t
            else:
                n_resume += 1
                resumes_by_sender[sender] = resumes_by_sender.get(sender, 0) + 1

    # --- queue time series (patched sampler): "t_ns node port egress_bytes paused_mask"
    q = {"time_avg_bytes": None, "max_bytes": None}
    series = []
    other_port_max = {}
    qpath = extra["QLEN_TRACE_FILE"]
    if os.path.exists(qpath) and os.path.getsize(qpath) > 0:
        samples = []
        with open(qpath) as f:
            for line in f:
                p = line.split()
                if len(p) < 4:
                    continue
                t, node, port, b = int(p[0]), int(p[1]), int(p[2]), int(p[3])
                if node == sw and port == bottleneck_port:
                    samples.append((t, b))
                else:
                    key = f"switch{node}:port{port}"
                    other_port_max[key] = max(other_port_max.get(key, 0), b)
        win = [(t, b) for t, b in samples if end_ns is None or t < end_ns]
        if win:
            q["time_avg_bytes"] = sum(b for _, b in win) / len(win)
            q["max_bytes"] = max(b for _, b in win)
            q["n_samples"] = len(win)
            q["window_ns"] = [win[0][0], end_ns]
            step = max(1, int(round(series_step_us * 1000 / qlen_interval_ns)))
            series = [[round((t - start_ns) / 1000, 3), b] for t, b in win[::step]]

    fcts = [r["fct_ns"] for r in flows]
    return {
        "peer": "alibaba-edu/High-Precision-Congestion-Control (ns-3.17 fork), scratch/third",
        "binary": binary,
        "workdir": workdir,
        "scenario": {"n_senders": n_senders, "size_bytes": size_bytes, "cc": cc, "rate_gbps": rate_gbps,
                     "delay_us": delay_us, "pfc": pfc, "preset": preset, "switch": sw,
                     "senders": senders, "receiver": rcv, "bottleneck": f"switch{sw}:port{bottleneck_port}",
                     "flow_start_ns": start_ns},
        "flows_completed": done,
        "fct_ns": fcts,
        "fct_by_sender": {str(r["src"]): r["fct_ns"] for r in flows},
        "standalone_fct_ns": [r["standalone_fct_ns"] for r in flows],
        "incast_end_ns": (end_ns - start_ns) if end_ns is not None else None,
        # all data bytes through the bottleneck at the peer's per-packet wire time (ns, truncated
        # like ns-3.17's Seconds(double)): the FCT floor for the last finisher, ignoring the RTT
        "ideal_drain_ns": n_senders * _serialize_ns(size_bytes, cc, rate_gbps, int(cfg["PACKET_PAYLOAD_SIZE"])),
        "bottleneck_queue": q,
        "bottleneck_queue_series_us_bytes": series,
        "other_switch_port_max_bytes": other_port_max,
        "pfc": {"pause_frames": n_pause, "resume_frames": n_resume,
                "pauses_by_sender": pauses_by_sender, "resumes_by_sender": resumes_by_sender,
                "pauses_by_receiving_device": pause_rx,
                "first_pause_ns": (first_pause - start_ns) if first_pause is not None else None,
                "last_pause_ns": (last_pause - start_ns) if last_pause is not None else None},
        "drops_reported": drops,
        "wire_bytes": wire_bytes(cc, int(cfg["PACKET_PAYLOAD_SIZE"])),
        "wall_s": wall,
        "peer_cpu_s": cpu_s,
        "config": {**{k: cfg[k] for k in order}, **extra},
        "config_notes": notes,
    }


SUITE = [
    # name, kwargs
    ("8to1_dcqcn_config", dict(n_senders=8, cc="dcqcn", preset="config")),
    ("8to1_hpcc_config", dict(n_senders=8, cc="hpcc", preset="config")),
    ("8to1_dcqcn_runpy", dict(n_senders=8, cc="dcqcn", preset="runpy")),
    ("8to1_hpcc_runpy", dict(n_senders=8, cc="hpcc", preset="runpy")),
    ("2to1_none_config", dict(n_senders=2, cc="none", preset="config")),
    ("8to1_none_config", dict(n_senders=8, cc="none", preset="config")),
    ("2to1_none_nopfc", dict(n_senders=2, cc="none", preset="config", pfc=False)),
]


def run_suite(outdir, binary=None):
    """The cases of benchmarks/HPCC_NS3.md (10 MB per sender, 100 G, 1 us); one JSON per case in
    outdir and a markdown table on stdout."""
    os.makedirs(outdir, exist_ok=True)
    rows = []
    for name, kw in SUITE:
        r = run_incast(size_bytes=10_000_000, rate_gbps=100, delay_us=1.0, binary=binary,
                       workdir=os.path.join(outdir, name), **kw)
        with open(os.path.join(outdir, name + ".json"), "w") as f:
            json.dump(r, f, indent=1)
        fct = r["fct_ns"]
        q = r["bottleneck_queue"]
        rows.append("| %s | %d/%d | %.4f | %.4f | %.4f | %s | %s | %d | %d | %.3f |" % (
            name, r["flows_completed"], kw["n_senders"], min(fct) / 1e6, sum(fct) / len(fct) / 1e6,
            max(fct) / 1e6, "%.0f" % q["time_avg_bytes"] if q["time_avg_bytes"] is not None else "-",
            q["max_bytes"], r["pfc"]["pause_frames"], r["drops_reported"], r["wall_s"]))
    print("| case | done | FCT min ms | FCT mean ms | FCT max ms | queue avg B | queue max B | PAUSE sent | drops | wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-senders", type=int, default=8)
    ap.add_argument("--size-bytes", type=int, default=10_000_000)
    ap.add_argument("--cc", default="dcqcn", choices=["dcqcn", "hpcc", "none"])
    ap.add_argument("--rate-gbps", type=float, default=100)
    ap.add_argument("--delay-us", type=float, default=1.0)
    ap.add_argument("--no-pfc", action="store_true")
    ap.add_argument("--preset", default="config", choices=["config", "runpy"])
    ap.add_argument("--binary", default=None)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--no-series", action="store_true", help="omit the downsampled queue series")
    ap.add_argument("--suite", metavar="OUTDIR", default=None,
                    help="run the HPCC_NS3.md cases, write OUTDIR/<case>.json, print a table")
    a = ap.parse_args(argv)
    if a.suite:
        run_suite(a.suite, binary=a.binary)
        return
    rate = int(a.rate_gbps) if a.rate_gbps == int(a.rate_gbps) else a.rate_gbps
    r = run_incast(n_senders=a.n_senders, size_bytes=a.size_bytes, cc=a.cc, rate_gbps=rate,
                   delay_us=a.delay_us, pfc=not a.no_pfc, binary=a.binary, workdir=a.workdir,
                   preset=a.preset)
    if a.no_series:
        r.pop("bottleneck_queue_series_us_bytes", None)
    json.dump(r, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
