"""A large-fabric race against ns-3 3.44: one seeded permutation of 1 MiB UDP messages on a k-ary three-tier fat-tree, run in both simulators, compared on throughput, delay and speed.

The fabric: the k-ary fat-tree of `fabricsim.topology.fat_tree3` (k³/4 hosts `p{pod}.e{edge}.h{i}`, k²/2 edge
and aggregation switches, k²/4 cores), every link 100 Gb/s with 1 µs of delay, switches that forward in zero
time. The traffic: every host sends one 1 MiB message to one other host and receives one (a seeded random
derangement), all starting at t = 0, in 1,024 packets of 1,024 payload bytes each, at line rate.

Same packets in both.  ns-3 frames a 1,024-byte UDP payload with UDP 8 + IPv4 20 + PPP 2 = 30 header bytes
(1,054 bytes on the wire, 84.32 ns at 100 Gb/s); fabricsim's messages carry `header = 30`, so every packet
serializes in the same 84,320 ps.  ns-3 runs at picosecond resolution (Time::SetResolution(PS), for this whole
process) so that 84.32 ns is exact there too.  Each ns-3 host runs a UdpClient (PacketSize 1,024, MaxPackets
1,024, Interval 84.32 ns: back to back at line rate, never queueing in its own NIC) and a UDP PacketSink;
fabricsim's NIC pulls the message's packets back to back.  In both, a packet's delay runs from the start of
its serialization at the sender (ns-3: FlowMonitor's IP send, the same instant) to its arrival at the
receiver's IP layer.

Same queues.  Every port is one DropTail FIFO of QUEUE_PACKETS packets: ns-3's PointToPointNetDevice queue
with the default FQ-CoDel queue disc removed, fabricsim's `[queue] limit_packets`.  Drops are counted in both
(none expected).

Same ECMP.  ns-3 3.44's global routing has one ECMP mode: RandomEcmpRouting, a uniformly random next hop among
the equal-cost ones at every hop for every packet (no per-flow hash).  fabricsim runs `[routing] ecmp =
"per_packet"`, the same rule (a uniform choice per packet and hop, from its own seeded RNG).

Timings.  fabricsim: the whole `fabricsim run scenario.toml --json` process (start-up, load, engine, JSON
out), median of --repeat runs, with its peak RSS.  ns-3: wall time of Simulator::Run alone (`ns3_run_s`), and
with the scenario's set-up (`ns3_total_s`: nodes, links, addresses, routing tables, applications, FlowMonitor,
collection). With --max-ns3-wall a C++ watchdog (every 50 ns of simulated time) stops ns-3 once Simulator::Run
has used that much wall time; the result then says `ns3_partial: true` with its event rate, the full run's
projected time (ns-3's events in this case are packets + 3 × links crossed, fabricsim's record counts the
links) and the payload each simulator delivered before that stop (fabricsim's throughput-over-time bin of that
width).

Usage:
    .venv/bin/python benchmarks/vs_ns3_fattree.py --k 8 [--json] [--seed 1] [--max-ns3-wall S] [--repeat 3]
    .venv/bin/python benchmarks/vs_ns3_fattree.py --k 16 --fabricsim-only --json     # no ns-3 at all
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RATE = "100Gbps"
RATE_BPS = 100e9
DELAY = "1us"
DELAY_PS = 1_000_000
MESSAGE_BYTES = 1 << 20
PAYLOAD = 1024
"""UDP payload bytes per packet; 1 MiB is exactly 1,024 of them."""
UDP_IP_HEADER = 8 + 20
PPP_HEADER = 2
HEADER = UDP_IP_HEADER + PPP_HEADER
"""Bytes ns-3 adds to a UDP payload on a point-to-point link, and so fabricsim's `header`."""
PACKETS = math.ceil(MESSAGE_BYTES / PAYLOAD)
SER_PS = round((PAYLOAD + HEADER) * 8 / RATE_BPS * 1e12)
"""Serialization time of one packet, ps (84,320): exact in both simulators."""
QUEUE_PACKETS = 10_000
"""Every port's DropTail limit, in both simulators."""
HORIZON_PS = 2 * (PACKETS * SER_PS + 6 * ((QUEUE_PACKETS + 1) * SER_PS + DELAY_PS))
"""Where ns-3's run stops (10.3 ms): twice the latest any packet can arrive (its sender's last start, then
6 hops, each behind a full queue). ns-3 needs a stop: FlowMonitor's loss check reschedules itself forever."""
PORT = 9
WATCHDOG_SLICE_US = 0.05
"""Simulated time between the ns-3 watchdog's wall-clock checks (k = 16 simulates 1 µs in about 40 s)."""
WATCHDOG_IDLE_US = 2.0
"""Simulated time without any other event after which the watchdog stops checking: more than a packet's
1.08 µs per hop, so nothing is left in flight."""
NS3_EVENTS_PER_PACKET, NS3_EVENTS_PER_LINK = 1, 3
"""ns-3's events in this case, as counted: one per packet sent and three per link a packet crosses. Full runs
at k = 4 and 8 (seed 1) count this plus 282 and 2,082 start-up events (0.1%)."""
TOLERANCE = {"throughput": 0.05, "delay": 0.10}


# ------------------------------------------------------------------------------------------------- the case

def permutation(n: int, seed: int) -> list[int]:
    """A seeded random derangement of range(n) (n ≥ 2): host i sends to result[i], every host receives once
    and no host sends to itself. Uniform over derangements (rejection: about e draws of a permutation)."""
    import numpy as np

    if n < 2:
        raise ValueError(f"a permutation without fixed points needs at least 2 hosts, got {n}")
    rng = np.random.default_rng(seed)
    while True:
        p = rng.permutation(n)
        if not (p == np.arange(n)).any():
            return p.tolist()


def fabric(k: int) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(hosts, switches, links as (a, b) name pairs) of `fabricsim.topology.fat_tree3(k)`, in its order: the
    one description of the fabric that both simulators are built from."""
    from fabricsim.topology import fat_tree3

    net = fat_tree3(k, RATE, DELAY)
    return ([n.name for n in net.nodes if n.kind == "host"], [n.name for n in net.nodes if n.kind != "host"],
            [(ln.a, ln.b) for ln in net.links])


def scenario_toml(k: int, seed: int) -> str:
    """The fabricsim scenario as TOML: `fat_tree3`, the same queues, per-packet ECMP, one message per host."""
    hosts, _, _ = fabric(k)
    dst = permutation(len(hosts), seed)
    lines = [f"seed = {seed}", "", "[topology]", 'kind = "fat_tree3"', f"k = {k}", f'rate = "{RATE}"',
             f'delay = "{DELAY}"', "", "[queue]", f"limit_packets = {QUEUE_PACKETS}", "", "[routing]",
             'ecmp = "per_packet"']
    for i, h in enumerate(hosts):
        lines += ["", "[[messages]]", f'name = "m{i}"', f'src = "{h}"', f'dst = "{hosts[dst[i]]}"',
                  f"size = {MESSAGE_BYTES}", f"packet_size = {PAYLOAD}", f"header = {HEADER}"]
    return "\n".join(lines) + "\n"


def summarize(flows: list[dict]) -> dict:
    """Aggregate figures over flow rows with tx_packets, rx_packets, payload_bytes (delivered), delay_sum_s,
    first_tx_s and last_rx_s: throughput = delivered payload bytes × 8 / (last receive − first send), in Gb/s,
    and the mean one-way packet delay in µs."""
    rx = sum(f["rx_packets"] for f in flows)
    got = [f for f in flows if f["rx_packets"]]
    first = min((f["first_tx_s"] for f in flows if f["tx_packets"]), default=0.0)
    last = max((f["last_rx_s"] for f in got), default=0.0)
    payload = sum(f["payload_bytes"] for f in flows)
    return dict(
        flows=len(flows), tx_packets=sum(f["tx_packets"] for f in flows), rx_packets=rx,
        payload_bytes=payload,
        first_tx_us=first * 1e6, last_rx_us=last * 1e6,
        throughput_gbps=payload * 8 / (last - first) / 1e9 if last > first else None,
        mean_delay_us=sum(f["delay_sum_s"] for f in flows) / rx * 1e6 if rx else None,
        max_flow_mean_delay_us=max((f["delay_sum_s"] / f["rx_packets"] * 1e6 for f in got), default=None),
    )


# ------------------------------------------------------------------------------------------------ fabricsim

def run_fabricsim(k: int, seed: int, repeat: int = 3) -> dict:
    """`fabricsim run scenario.toml --json` as whole processes (`repeat` of them; the median is
    `fabricsim_s`): wall time, CPU time, peak RSS and the record's figures."""
    exe = Path(sys.executable).parent / "fabricsim"
    walls, cpus, rss = [], [], []
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"fat_tree3_k{k}.toml"
        path.write_text(scenario_toml(k, seed))
        out_path = Path(d) / "record.json"
        for _ in range(repeat):
            with open(out_path, "w") as out, tempfile.TemporaryFile("w+") as err:
                t0 = time.perf_counter()
                argv = [str(exe), "run", str(path), "--json", "--quiet"]
                child = subprocess.Popen(argv, stdout=out, stderr=err)
                _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage: its peak RSS
                walls.append(time.perf_counter() - t0)
                cpus.append(usage.ru_utime + usage.ru_stime)
                rss.append(usage.ru_maxrss / 1024)
                code = os.waitstatus_to_exitcode(status)
                if code not in (0, 3):  # 3: the run did not complete (a drop); its record says how far it got
                    err.seek(0)
                    raise RuntimeError(f"fabricsim run exited {code}: {err.read().strip()[-500:]}")
        rec = json.loads(out_path.read_text())
    flows = [dict(tx_packets=f["tx_packets"], rx_packets=f["rx_packets"],
                  payload_bytes=f["rx_bytes"] - HEADER * f["rx_packets"],
                  delay_sum_s=(f["mean_delay_s"] or 0.0) * f["rx_packets"],
                  first_tx_s=f["first_tx_s"], last_rx_s=f["last_rx_s"]) for f in rec["flows"]]
    s = summarize(flows)
    s.update(drops=rec["packets"]["dropped"], complete=rec["complete"],
             peak_queue_packets=max((q["peak_packets"] for q in rec["queues"]), default=0),
             link_traversals=sum((int(h) + 1) * n for h, n in rec["hops"].items()))  # hops counts switches
    return dict(summary=s, walls_s=walls, wall_s=statistics.median(walls), cpu_s=statistics.median(cpus),
                peak_rss_mb=max(rss), events=rec["events"], engine_s=rec["wall_s"])


# ----------------------------------------------------------------------------------------------------- ns-3

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include <chrono>

namespace fabricsim_fattree {
using namespace ns3;

// Packets dropped by every point-to-point device queue of the simulation (read once, after the run).
inline uint64_t DeviceQueueDrops()
{
    uint64_t n = 0;
    for (auto it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        for (uint32_t i = 0; i < (*it)->GetNDevices(); ++i)
        {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>((*it)->GetDevice(i));
            if (d) n += d->GetQueue()->GetTotalDroppedPackets();
        }
    }
    return n;
}

// A wall-clock bound on Simulator::Run: every `slice` of simulated time it stops the simulation once
// `maxWall` seconds have passed since its first check (at t = 0, inside Run).  It stops checking once `idle`
// of simulated time has passed with no event but its own (the traffic is over), so it does not run on to the
// stop time.
struct Watchdog
{
    double maxWall;
    Time slice;
    Time idle;
    Time lastActive;
    std::chrono::steady_clock::time_point t0;
    uint64_t lastEvents = 0;
    bool started = false;
    bool stopped = false;
    int64_t stoppedAtPs = 0;

    void Check()
    {
        auto now = std::chrono::steady_clock::now();
        if (!started) { t0 = now; started = true; }
        else if (std::chrono::duration<double>(now - t0).count() >= maxWall)
        {
            stopped = true;
            stoppedAtPs = Simulator::Now().GetPicoSeconds();
            Simulator::Stop();
            return;
        }
        uint64_t events = Simulator::GetEventCount();
        if (events - lastEvents > 1) lastActive = Simulator::Now();
        lastEvents = events;
        if (Simulator::Now() - lastActive < idle) Simulator::Schedule(slice, &Watchdog::Check, this);
    }
};

// Entries in every node's Ipv4GlobalRouting table (host, network and external routes, one per next hop):
// a lookup scans them one by one, so they set ns-3's cost per packet and hop.
inline std::vector<uint32_t> GlobalRouteCounts()
{
    std::vector<uint32_t> out;
    for (auto it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        Ptr<Ipv4RoutingProtocol> top = (*it)->GetObject<Ipv4>()->GetRoutingProtocol();
        Ptr<Ipv4ListRouting> list = DynamicCast<Ipv4ListRouting>(top);
        for (uint32_t i = 0; list && i < list->GetNRoutingProtocols(); ++i)
        {
            int16_t priority;
            Ptr<Ipv4GlobalRouting> g = DynamicCast<Ipv4GlobalRouting>(list->GetRoutingProtocol(i, priority));
            if (g) out.push_back(g->GetNRoutes());
        }
    }
    return out;
}

inline Watchdog* ArmWatchdog(double maxWall, double sliceUs, double idleUs)
{
    auto* w = new Watchdog();
    w->maxWall = maxWall;
    w->slice = PicoSeconds(static_cast<int64_t>(sliceUs * 1e6));
    w->idle = PicoSeconds(static_cast<int64_t>(idleUs * 1e6));
    Simulator::Schedule(Seconds(0), &Watchdog::Check, w);
    return w;
}
}  // namespace fabricsim_fattree
"""


def _ns3():
    """(ns, incast C++ helpers, this file's C++ helpers, benchmarks/ns3_incast.py), each loaded once."""
    mod = sys.modules.get("ns3_incast")
    if mod is None:
        spec = importlib.util.spec_from_file_location("ns3_incast", HERE / "ns3_incast.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["ns3_incast"] = mod
    ns, cx, cppyy = mod._ns()
    if not hasattr(cppyy.gbl, "fabricsim_fattree"):
        cppyy.cppdef(_CPP)
    return ns, cx, cppyy.gbl.fabricsim_fattree, mod


def run_ns3(k: int, seed: int, max_wall: float | None = None) -> dict:
    """The case in ns-3 3.44, built with its C++ helpers only; FlowMonitor on the hosts gives the flows. Sets
    ns-3's time resolution to picoseconds for the rest of this process."""
    t_import = time.perf_counter()
    ns, cx, fx, incast = _ns3()
    t0 = time.perf_counter()
    if ns.Time.GetResolution() != ns.Time.PS:
        ns.Time.SetResolution(ns.Time.PS)
    incast._reset(ns)
    ns.RngSeedManager.SetRun(int(seed))
    ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::DropTailQueue<Packet>::MaxSize",
                         ns.QueueSizeValue(ns.QueueSize(f"{QUEUE_PACKETS}p")))

    hosts, switches, links = fabric(k)
    names = hosts + switches
    index = {n: i for i, n in enumerate(names)}
    nodes = ns.NodeContainer()
    nodes.Create(len(names))
    host_nodes = ns.NodeContainer()
    for i in range(len(hosts)):
        host_nodes.Add(nodes.Get(i))
    ns.InternetStackHelper().Install(nodes)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(RATE))
    p2p.SetChannelAttribute("Delay", ns.StringValue(DELAY))
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
    no_qdisc = ns.TrafficControlHelper()
    host_addr = {}
    for a, b in links:
        devs = p2p.Install(nodes.Get(index[a]), nodes.Get(index[b]))
        ifs = addr.Assign(devs)
        addr.NewNetwork()
        no_qdisc.Uninstall(devs)  # Assign installed FQ-CoDel; the device's DropTail queue is the only queue
        for side, n in enumerate((a, b)):
            if index[n] < len(hosts):
                host_addr[n] = ifs.GetAddress(side)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    routes = [int(x) for x in fx.GlobalRouteCounts()]

    dst = permutation(len(hosts), seed)
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo())
    sinks = sink.Install(host_nodes)
    sinks.Start(ns.Seconds(0))
    for i in range(len(hosts)):
        client = ns.UdpClientHelper(host_addr[hosts[dst[i]]].ConvertTo(), PORT)
        client.SetAttribute("MaxPackets", ns.UintegerValue(PACKETS))
        client.SetAttribute("Interval", ns.TimeValue(ns.PicoSeconds(SER_PS)))
        client.SetAttribute("PacketSize", ns.UintegerValue(PAYLOAD))
        client.Install(nodes.Get(i)).Start(ns.Seconds(0))
    fmh = ns.FlowMonitorHelper()
    mon = fmh.Install(host_nodes)
    watchdog = fx.ArmWatchdog(float(max_wall), WATCHDOG_SLICE_US, WATCHDOG_IDLE_US) if max_wall else None
    ns.Simulator.Stop(ns.PicoSeconds(HORIZON_PS))
    t_setup = time.perf_counter()

    wall, cpu = (float(x) for x in cx.TimedRun())
    events = int(ns.Simulator.GetEventCount())
    t_run = time.perf_counter()
    flows = incast.flow_dicts(cx.CollectFlows(fmh, mon))
    drops = int(fx.DeviceQueueDrops())
    partial = bool(watchdog and watchdog.stopped)
    stopped_at_ps = int(watchdog.stoppedAtPs) if partial else None
    ns.Simulator.Destroy()
    t_end = time.perf_counter()
    rows = [dict(tx_packets=f["tx_packets"], rx_packets=f["rx_packets"],
                 payload_bytes=f["rx_bytes"] - UDP_IP_HEADER * f["rx_packets"], delay_sum_s=f["delay_sum_s"],
                 first_tx_s=f["first_tx_s"], last_rx_s=f["last_rx_s"]) for f in flows]
    s = summarize(rows)
    s.update(drops=drops, complete=not partial and s["rx_packets"] == len(hosts) * PACKETS)
    out = dict(summary=s, run_s=wall, cpu_s=cpu, events=events, partial=partial, stopped_at_ps=stopped_at_ps,
               import_s=t0 - t_import, setup_s=t_setup - t0, collect_s=t_end - t_run, total_s=t_end - t0,
               routes_max=max(routes), routes_mean=sum(routes) / len(routes),
               peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


# ------------------------------------------------------------------------------------------------- the race

def delivered_before(k: int, seed: int, stop_ps: int) -> int:
    """Payload bytes fabricsim delivers before `stop_ps` (where a partial ns-3 run stopped): the first bin of
    its throughput over time with that bin width (one more fabricsim run, in this process)."""
    import tomllib

    import fabricsim

    doc = tomllib.loads(scenario_toml(k, seed))
    doc["measure"] = {"throughput_interval": f"{stop_ps}ps"}
    rec = fabricsim.run(fabricsim.scenario_from_dict(doc))
    return int(rec.columns["timeline.rx_payload_bytes"][0])


def rel(ours: float | None, ref: float | None) -> float | None:
    """(ours − ref) / ref, or None without both."""
    return None if ours is None or not ref else (ours - ref) / ref


def race(k: int, seed: int = 1, max_ns3_wall: float | None = None, repeat: int = 3, ns3: bool = True) -> dict:
    """Both simulators on the case (fabricsim first, as child processes; then ns-3 in this process)."""
    hosts = len(fabric(k)[0])
    fs = run_fabricsim(k, seed, repeat)
    out = dict(k=k, hosts=hosts, seed=seed, messages=hosts, message_bytes=MESSAGE_BYTES, payload=PAYLOAD,
               header_bytes=HEADER, wire_bytes=PAYLOAD + HEADER, queue_packets=QUEUE_PACKETS,
               ecmp="random per packet and hop (ns-3 RandomEcmpRouting; fabricsim per_packet)",
               fabricsim_s=fs["wall_s"], fabricsim_runs_s=fs["walls_s"], fabricsim_cpu_s=fs["cpu_s"],
               fabricsim_engine_s=fs["engine_s"],
               fabricsim_peak_rss_mb=fs["peak_rss_mb"], fabricsim_events=fs["events"],
               fabricsim_events_per_s=fs["events"] / fs["engine_s"] if fs["engine_s"] else None,
               fabricsim=fs["summary"])
    if not ns3:
        return out
    n3 = run_ns3(k, seed, max_ns3_wall)
    a, b = n3["summary"], fs["summary"]
    # both route every packet on a shortest path, so fabricsim's link count is ns-3's too
    expected = NS3_EVENTS_PER_PACKET * hosts * PACKETS + NS3_EVENTS_PER_LINK * b["link_traversals"]
    out.update(
        ns3_version="3.44 (PyPI ns3==3.44.post0)", ns3_run_s=n3["run_s"], ns3_cpu_s=n3["cpu_s"],
        ns3_total_s=n3["total_s"], ns3_setup_s=n3["setup_s"], ns3_import_s=n3["import_s"],
        ns3_events=n3["events"], ns3_events_per_s=n3["events"] / n3["run_s"] if n3["run_s"] else None,
        ns3_routes_per_node_max=n3["routes_max"], ns3_routes_per_node_mean=n3["routes_mean"],
        ns3_peak_rss_mb=n3["peak_rss_mb"],
        ns3_events_expected=expected, ns3_partial=n3["partial"], ns3=a,
        ratio=None if n3["partial"] else n3["run_s"] / fs["wall_s"],
        # the same ratio in CPU time (Simulator::Run's thread vs the whole fabricsim process), less sensitive
        # to a busy machine, and engine against engine (fabricsim's record wall_s: its event loop alone)
        ratio_cpu=None if n3["partial"] else n3["cpu_s"] / fs["cpu_s"],
        ratio_engine=None if n3["partial"] else n3["run_s"] / fs["engine_s"],
    )
    if n3["partial"]:
        projected = expected * n3["run_s"] / n3["events"]
        upto = delivered_before(k, seed, n3["stopped_at_ps"])
        out.update(ns3_max_wall_s=max_ns3_wall, ns3_stopped_at_us=n3["stopped_at_ps"] / 1e6,
                   ns3_delivered_fraction=a["rx_packets"] / (hosts * PACKETS), ns3_projected_run_s=projected,
                   ratio_projected=projected / fs["wall_s"], ns3_payload_before_stop=a["payload_bytes"],
                   fabricsim_payload_before_stop=upto,
                   delivered_before_stop_rel_diff=rel(upto, a["payload_bytes"]))
    else:
        out.update(throughput_rel_diff=rel(b["throughput_gbps"], a["throughput_gbps"]),
                   delay_rel_diff=rel(b["mean_delay_us"], a["mean_delay_us"]))
        out["agree"] = (out["throughput_rel_diff"] is not None and out["delay_rel_diff"] is not None
                        and abs(out["throughput_rel_diff"]) <= TOLERANCE["throughput"]
                        and abs(out["delay_rel_diff"]) <= TOLERANCE["delay"])
    return out


def _fmt(v, nd: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def report(r: dict) -> str:
    """The result as a few lines of text."""
    lines = [f"k = {r['k']} fat-tree, {r['hosts']:,} hosts, permutation seed {r['seed']}: "
             f"{r['messages']:,} x 1 MiB, {r['payload']} B payload + {r['header_bytes']} B headers a packet, "
             f"ECMP {r['ecmp']}"]
    sides = [("fabricsim", r["fabricsim"])] + ([("ns-3 3.44", r["ns3"])] if "ns3" in r else [])
    lines.append(f"{'':28}" + "".join(f"{n:>16}" for n, _ in sides))
    rows = (("throughput_gbps", "throughput (Gb/s)"), ("mean_delay_us", "mean delay (us)"),
            ("max_flow_mean_delay_us", "worst flow's mean delay (us)"), ("last_rx_us", "last receive (us)"),
            ("tx_packets", "packets sent"), ("rx_packets", "packets received"), ("drops", "drops"))
    for key, label in rows:
        lines.append(f"{label:28}" + "".join(f"{_fmt(s.get(key)):>16}" for _, s in sides))
    lines.append(f"fabricsim: {r['fabricsim_s']:.3f} s whole process "
                 f"(median of {len(r['fabricsim_runs_s'])}; CPU {r['fabricsim_cpu_s']:.3f} s; "
                 f"engine {r['fabricsim_engine_s']:.3f} s), "
                 f"{r['fabricsim_events']:,} events, peak RSS {r['fabricsim_peak_rss_mb']:.0f} MB")
    if "ns3" not in r:
        return "\n".join(lines)
    lines.append(f"ns-3: Simulator::Run {r['ns3_run_s']:.2f} s (CPU {r['ns3_cpu_s']:.2f} s; "
                 f"{r['ns3_events']:,} events, {r['ns3_events_per_s']:,.0f} events/s), with set-up "
                 f"{r['ns3_total_s']:.2f} s; global routing tables "
                 f"{r['ns3_routes_per_node_mean']:,.0f} entries per node on average "
                 f"(at most {r['ns3_routes_per_node_max']:,}), peak RSS {r['ns3_peak_rss_mb']:,.0f} MB")
    if r["ns3_partial"]:
        lines.append(f"ns-3 stopped by --max-ns3-wall {r['ns3_max_wall_s']:g} s at "
                     f"{r['ns3_stopped_at_us']:.2f} us simulated, "
                     f"{100 * r['ns3_delivered_fraction']:.1f}% of the packets delivered, "
                     f"{r['ns3_events']:,} of about {r['ns3_events_expected']:,} events; full run projected "
                     f"{r['ns3_projected_run_s']:,.0f} s at this event rate, ratio projected "
                     f"{r['ratio_projected']:,.0f}x")
        lines.append(f"payload delivered before ns-3's stop: ns-3 {r['ns3_payload_before_stop']:,} B, "
                     f"fabricsim {r['fabricsim_payload_before_stop']:,} B "
                     f"({100 * r['delivered_before_stop_rel_diff']:+.2f}%)")
    else:
        lines.append(f"ratio ns-3 Run / fabricsim whole process: {r['ratio']:.1f}x "
                     f"(target >= 100x at k = 8); in CPU time {r['ratio_cpu']:.1f}x; "
                     f"against fabricsim's engine alone {r['ratio_engine']:.1f}x")
        lines.append(f"fabricsim vs ns-3: throughput {100 * r['throughput_rel_diff']:+.2f}% (within 5%), "
                     f"mean delay {100 * r['delay_rel_diff']:+.2f}% (within 10%): "
                     f"{'agree' if r['agree'] else 'DISAGREE'}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, required=True, help="fat-tree radix (even): k^3/4 hosts")
    ap.add_argument("--seed", type=int, default=1, help="permutation and both simulators' seed (default 1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--max-ns3-wall", type=float, default=None, metavar="SECONDS",
                    help="stop ns-3's Simulator::Run after this much wall time (a partial run: its event "
                         "rate, a projection of the full run)")
    ap.add_argument("--repeat", type=int, default=3, help="fabricsim whole-process runs (median reported)")
    ap.add_argument("--fabricsim-only", action="store_true", help="run fabricsim alone (no ns-3 needed)")
    args = ap.parse_args(argv)
    if args.k < 2 or args.k % 2:
        ap.error(f"--k must be an even number >= 2, got {args.k}")
    r = race(args.k, args.seed, args.max_ns3_wall, max(1, args.repeat), ns3=not args.fabricsim_only)
    print(json.dumps(r, indent=1) if args.json else report(r))
    return 0 if r.get("agree", True) or r.get("ns3_partial") else 1


if __name__ == "__main__":
    sys.exit(main())
