#!/usr/bin/env python3
"""ns-3 (3.44, PyPI ``ns3`` package) reference runs of the AI-incast study.

Cross-validation target for fabricsim.  Reproduces the four scenarios of the
study in /work/shared/seeds/001_a01fd68705a44c94.txt ("A Simulation Study of AI
Traffic Patterns ...", ns-3 3.43):

    8 senders --1 Gbps/2 ms--> leaf --100 Mbps/5 ms--> spine --1 Gbps/2 ms--> receiver

    S1  8 TCP BulkSend flows, started 0.5 s apart (ns-3 defaults otherwise)
    S2  8 synchronized UDP OnOff, 30 Mb/s, 100 ms on / 100 ms off, start 1.0 s, FIFO
    S3  as S2 at 200 Mb/s, FIFO
    S4  as S3, FQ-CoDel (target 5 ms, interval 100 ms) at the bottleneck

The scenario is built only with ns-3's C++ helpers (called through cppyy); the
only code of our own that runs during the simulation is a small C++ block
(compiled with cppyy.cppdef) that tracks the bottleneck queue-disc / device
queue peaks through their "PacketsInQueue" traces and, optionally, samples
both depths every ``sample_ms`` into C++ vectors.  No Python runs per packet.

Usage:
    python benchmarks/ns3_incast.py [S1 S2 S3 S4] [--duration-s 60] [--json]

Importing this module has no side effects; ns-3 is loaded lazily on the first
call of run_scenario().  Each call resets the ns-3 global state
(Simulator::Destroy, Config::Reset, Names::Clear) so runs are independent.

Byte counts: FlowMonitor rxBytes/txBytes are IP-layer bytes (IP header
included, PPP header not): a 1024-byte UDP payload is 1052 IP bytes (1054 on
the wire).  ``throughput_mbps`` uses those IP-layer rxBytes;
``goodput_mbps`` uses the application bytes counted by the PacketSink
(PacketSink::GetTotalRx) over the same window.
"""
from __future__ import annotations

import argparse
import json
import sys

# --------------------------------------------------------------------------
# Study parameters
# --------------------------------------------------------------------------
ACCESS_RATE = "1Gbps"
ACCESS_DELAY = "2ms"
BOTTLENECK_RATE = "100Mbps"
BOTTLENECK_DELAY = "5ms"
PACKET_SIZE = 1024
SINK_PORT = 9

#: The setup that reproduces the study's FlowMonitor packet counts exactly.
APP_START_S = 1.0          # all OnOff apps start together (study: t = 1.0 s)
APP_STOP_BEFORE_END_S = 1.0  # apps stop at duration - 1 s (59 s for 60 s runs)

PRESETS = {
    "S1": dict(transport="tcp", udp_rate_mbps=None, qdisc="fifo"),
    "S2": dict(transport="udp", udp_rate_mbps=30.0, qdisc="fifo"),
    "S3": dict(transport="udp", udp_rate_mbps=200.0, qdisc="fifo"),
    "S4": dict(transport="udp", udp_rate_mbps=200.0, qdisc="fq_codel"),
}

#: FlowMonitor totals published in the study (Table 4).
STUDY = {
    # S1 counts/delay/loss in the study include the reverse ACK flows (see README of run).
    "S1": dict(tx_packets=1_856_018, rx_packets=1_852_796, lost_packets=3_222,
               throughput_mbps=100.0, mean_delay_ms=12.9, loss_pct=0.17, peak_queue_pkts=100,
               max_flow_delay_ms=13.30, min_flow_delay_ms=12.40, delay_spread_ms=0.90,
               jain_fairness_delay=0.9996),
    "S2": dict(tx_packets=849_608, rx_packets=401_253, lost_packets=448_355,
               throughput_mbps=58.3, mean_delay_ms=23.84, max_flow_delay_ms=24.94,
               min_flow_delay_ms=17.55, delay_spread_ms=7.39, jain_fairness_delay=0.9901,
               offered_load_mbps=123.4, loss_pct=52.77, peak_queue_pkts=100, peak_queue_sampled_pkts=100),
    "S3": dict(tx_packets=5_664_056, rx_packets=401_940, lost_packets=5_262_116,
               throughput_mbps=58.4, mean_delay_ms=24.65, max_flow_delay_ms=25.75,
               min_flow_delay_ms=17.42, delay_spread_ms=8.33, jain_fairness_delay=0.9880,
               offered_load_mbps=822.9, loss_pct=92.90, peak_queue_pkts=100, peak_queue_sampled_pkts=100),
    "S4": dict(tx_packets=5_664_056, rx_packets=400_780, lost_packets=5_263_276,
               throughput_mbps=58.2, mean_delay_ms=17.90, max_flow_delay_ms=18.10,
               min_flow_delay_ms=17.72, delay_spread_ms=0.38, jain_fairness_delay=1.0000,
               offered_load_mbps=822.9, loss_pct=92.92, peak_queue_pkts=94, peak_queue_sampled_pkts=94),
}

# --------------------------------------------------------------------------
# Lazy ns-3 loading + C++ helpers
# --------------------------------------------------------------------------
_NS = None

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/flow-monitor-module.h"
#include "ns3/applications-module.h"
#include <vector>
#include <string>
#include <sstream>
#include <chrono>
#include <ctime>

namespace fabricsim_ns3 {
using namespace ns3;

// Tracks the peak of a queue disc and of a device queue through their
// "PacketsInQueue" traces (C++ callbacks) and optionally samples both depths
// every `period` into vectors.
struct QueueProbe
{
    Ptr<QueueDisc> disc;
    Ptr<Queue<Packet>> devq;
    uint32_t peakDisc = 0;
    uint32_t peakDev = 0;
    Time period;
    Time stop;
    std::vector<double> t;
    std::vector<uint32_t> discDepth;
    std::vector<uint32_t> devDepth;

    void OnDisc(uint32_t, uint32_t n) { if (n > peakDisc) peakDisc = n; }
    void OnDev(uint32_t, uint32_t n) { if (n > peakDev) peakDev = n; }

    void Sample()
    {
        t.push_back(Simulator::Now().GetSeconds());
        discDepth.push_back(disc ? disc->GetNPackets() : 0);
        devDepth.push_back(devq ? devq->GetNPackets() : 0);
        if (Simulator::Now() + period <= stop)
        {
            Simulator::Schedule(period, &QueueProbe::Sample, this);
        }
    }
};

inline QueueProbe* AttachProbe(Ptr<NetDevice> dev, double sampleMs, double stopS)
{
    auto* p = new QueueProbe();
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    p->disc = tc->GetRootQueueDiscOnDevice(dev);
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    p->devq = p2p->GetQueue();
    if (p->disc)
    {
        p->disc->TraceConnectWithoutContext("PacketsInQueue",
                                            MakeCallback(&QueueProbe::OnDisc, p));
    }
    p->devq->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&QueueProbe::OnDev, p));
    if (sampleMs > 0)
    {
        p->period = MilliSeconds(sampleMs);
        p->stop = Seconds(stopS);
        Simulator::Schedule(Seconds(0), &QueueProbe::Sample, p);
    }
    return p;
}

inline std::string RootQueueDiscType(Ptr<NetDevice> dev)
{
    Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
    if (!tc) return "none";
    Ptr<QueueDisc> q = tc->GetRootQueueDiscOnDevice(dev);
    if (!q) return "none";
    std::ostringstream os;
    os << q->GetInstanceTypeId().GetName();
    UintegerValue v;
    QueueSizeValue qs;
    if (q->GetAttributeFailSafe("MaxSize", qs)) os << "(MaxSize=" << qs.Get() << ")";
    return os.str();
}

inline std::string DeviceQueueDesc(Ptr<NetDevice> dev)
{
    Ptr<PointToPointNetDevice> p2p = DynamicCast<PointToPointNetDevice>(dev);
    Ptr<Queue<Packet>> q = p2p->GetQueue();
    std::ostringstream os;
    os << q->GetInstanceTypeId().GetName() << "(MaxSize=" << q->GetMaxSize() << ")";
    return os.str();
}

// Run the simulation; returns {wall-clock s, thread CPU s} of Simulator::Run() only.
inline std::vector<double> TimedRun()
{
    timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double cpu = (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec);
    return {std::chrono::duration<double>(t1 - t0).count(), cpu};
}

inline uint64_t SinkTotalRx(Ptr<Application> a)
{
    Ptr<PacketSink> s = DynamicCast<PacketSink>(a);
    return s ? s->GetTotalRx() : 0;
}

struct FlowRow
{
    uint32_t id;
    std::string src, dst;
    uint32_t proto, sport, dport;
    uint64_t txPackets, rxPackets, lostPackets, txBytes, rxBytes;
    double delaySum, firstTx, lastRx, jitterSum;
    uint32_t timesForwarded;
    std::vector<uint32_t> packetsDropped;
    std::vector<uint64_t> bytesDropped;
};

inline std::vector<FlowRow> CollectFlows(FlowMonitorHelper& h, Ptr<FlowMonitor> mon)
{
    mon->CheckForLostPackets();
    Ptr<Ipv4FlowClassifier> cls = DynamicCast<Ipv4FlowClassifier>(h.GetClassifier());
    std::vector<FlowRow> out;
    for (const auto& kv : mon->GetFlowStats())
    {
        FlowRow r;
        Ipv4FlowClassifier::FiveTuple t = cls->FindFlow(kv.first);
        std::ostringstream s, d;
        s << t.sourceAddress;
        d << t.destinationAddress;
        r.id = kv.first;
        r.src = s.str();
        r.dst = d.str();
        r.proto = t.protocol;
        r.sport = t.sourcePort;
        r.dport = t.destinationPort;
        const FlowMonitor::FlowStats& f = kv.second;
        r.txPackets = f.txPackets;
        r.rxPackets = f.rxPackets;
        r.lostPackets = f.lostPackets;
        r.txBytes = f.txBytes;
        r.rxBytes = f.rxBytes;
        r.delaySum = f.delaySum.GetSeconds();
        r.jitterSum = f.jitterSum.GetSeconds();
        r.firstTx = f.timeFirstTxPacket.GetSeconds();
        r.lastRx = f.timeLastRxPacket.GetSeconds();
        r.timesForwarded = f.timesForwarded;
        r.packetsDropped = f.packetsDropped;
        r.bytesDropped = f.bytesDropped;
        out.push_back(r);
    }
    return out;
}
}  // namespace fabricsim_ns3
"""


def _ns():
    """Import ns-3 and compile the C++ helpers once per process (lazily), even when this file is loaded
    as more than one module object (benchmarks/validate_incast.py and vs_ns3_fattree.py each load it)."""
    global _NS
    if _NS is None:
        from ns import ns  # noqa: WPS433  (heavy import, deliberately lazy)
        import cppyy

        if not hasattr(cppyy.gbl, "fabricsim_ns3"):
            cppyy.cppdef(_CPP)
        _NS = (ns, cppyy.gbl.fabricsim_ns3, cppyy)
    return _NS


def _reset(ns):
    ns.Simulator.Destroy()
    ns.Config.Reset()
    ns.Names.Clear()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)


def _jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if s2 > 0 else None


def flow_dicts(rows) -> list[dict]:
    """FlowMonitor rows (CollectFlows' C++ FlowRow vector) as plain dicts: counts, IP-layer bytes, seconds."""
    return [dict(
        id=int(r.id), src=str(r.src), dst=str(r.dst), proto=int(r.proto),
        sport=int(r.sport), dport=int(r.dport),
        tx_packets=int(r.txPackets), rx_packets=int(r.rxPackets),
        lost_packets=int(r.lostPackets), tx_bytes=int(r.txBytes), rx_bytes=int(r.rxBytes),
        delay_sum_s=float(r.delaySum), jitter_sum_s=float(r.jitterSum),
        first_tx_s=float(r.firstTx), last_rx_s=float(r.lastRx),
        drops_by_reason=[int(x) for x in r.packetsDropped],
    ) for r in rows]


# --------------------------------------------------------------------------
# Scenario runner
# --------------------------------------------------------------------------
def run_scenario(
    name: str | None = None,
    *,
    duration_s: float = 60.0,
    senders: int = 8,
    udp_rate_mbps: float | None = None,
    qdisc: str | None = None,
    queue_pkts: int = 100,
    device_queue_pkts: int = 100,
    sample_ms: float | None = None,
    seed: int = 1,
    transport: str | None = None,
    app_start_s: float = APP_START_S,
    app_stop_s: float | None = None,
    tcp_stagger_s: float = 0.5,
    tcp_start_s: float = APP_START_S,
    fq_codel_limit_pkts: int | None = None,
    other_qdisc: str = "default",
) -> dict:
    """Run one scenario in ns-3 and return its metrics.

    name: "S1".."S4" presets the study's transport/rate/qdisc; explicit
      keyword arguments override the preset.  name=None requires transport.
    qdisc: bottleneck (leaf->spine and spine->leaf) root queue disc:
      "fifo" (FifoQueueDisc, MaxSize=queue_pkts), "fq_codel"
      (FqCoDelQueueDisc, Target 5 ms, Interval 100 ms, MaxSize=queue_pkts
      unless fq_codel_limit_pkts is given -- the ns-3 default 10240p does NOT
      reproduce the study's S4; 100p does), "codel" (CoDelQueueDisc,
      Target 5 ms, Interval 100 ms, MaxSize=queue_pkts) or "none" (no qdisc
      anywhere: device queues only).  Installed on both leaf-spine devices
      before address assignment.
    device_queue_pkts: MaxSize of every PointToPointNetDevice's DropTail
      transmit queue (ns-3 default 100p).
    other_qdisc: qdisc on all non-bottleneck devices; "default" = what
      Ipv4AddressHelper::Assign installs (TrafficControlHelper::Default(),
      i.e. FqCoDelQueueDisc with its defaults), or "none".
    app_start_s / app_stop_s: OnOff start (1.0 s) and stop (default
      duration_s - 1, i.e. 59 s for the 60 s runs) -- this reproduces the
      study's counts.  OnOff waits one OffTime before its first burst, so
      bursts run 1.1-1.2, 1.3-1.4, ..., 58.9-59.0 s (290 bursts).  The
      simulation itself stops at duration_s.
    tcp_start_s / tcp_stagger_s: BulkSend i starts at tcp_start_s + i*0.5 s
      (default 1.0 s, like the UDP apps), stops at app_stop_s.
    sample_ms: if set, sample bottleneck qdisc and device-queue depth every
      sample_ms from t=0 (C++ event, results in "queue_samples").  Exact
      peaks are always tracked via the PacketsInQueue traces.

    Returns a dict (see module docstring and the CLI table); per-flow
    FlowMonitor rows are in result["flows"].
    """
    ns, cx, _ = _ns()
    preset = dict(PRESETS.get(name, {})) if name else {}
    if name and name not in PRESETS:
        raise ValueError(f"unknown scenario {name!r}; expected one of {sorted(PRESETS)}")
    transport = transport or preset.get("transport")
    if transport is None:
        transport = "udp" if udp_rate_mbps else "tcp"
    if udp_rate_mbps is None:
        udp_rate_mbps = preset.get("udp_rate_mbps")
    qdisc = qdisc or preset.get("qdisc", "fifo")
    if transport == "udp" and not udp_rate_mbps:
        raise ValueError("udp transport needs udp_rate_mbps")
    if app_stop_s is None:
        app_stop_s = duration_s - APP_STOP_BEFORE_END_S

    _reset(ns)
    ns.RngSeedManager.SetSeed(int(seed))

    ns.Config.SetDefault("ns3::DropTailQueue<Packet>::MaxSize",
                         ns.QueueSizeValue(ns.QueueSize(f"{int(device_queue_pkts)}p")))

    # ---------------- topology ----------------
    snd = ns.NodeContainer()
    snd.Create(senders)
    core = ns.NodeContainer()
    core.Create(3)  # 0 = leaf, 1 = spine, 2 = receiver
    leaf, spine, rcv = core.Get(0), core.Get(1), core.Get(2)

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue(ACCESS_RATE))
    access.SetChannelAttribute("Delay", ns.StringValue(ACCESS_DELAY))
    bott = ns.PointToPointHelper()
    bott.SetDeviceAttribute("DataRate", ns.StringValue(BOTTLENECK_RATE))
    bott.SetChannelAttribute("Delay", ns.StringValue(BOTTLENECK_DELAY))

    stack = ns.InternetStackHelper()
    stack.InstallAll()

    access_devs = [access.Install(snd.Get(i), leaf) for i in range(senders)]
    bott_devs = bott.Install(leaf, spine)
    rcv_devs = access.Install(spine, rcv)

    # Bottleneck queue disc, installed before address assignment so that
    # Ipv4AddressHelper::Assign does not install its default there.
    tch = ns.TrafficControlHelper()
    if qdisc == "fifo":
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                             ns.QueueSizeValue(ns.QueueSize(f"{int(queue_pkts)}p")))
    elif qdisc == "fq_codel":
        lim = queue_pkts if fq_codel_limit_pkts is None else fq_codel_limit_pkts
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "Target", ns.StringValue("5ms"),
                             "Interval", ns.StringValue("100ms"),
                             "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{int(lim)}p")))
    elif qdisc == "codel":
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "Target", ns.StringValue("5ms"),
                             "Interval", ns.StringValue("100ms"),
                             "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{int(queue_pkts)}p")))
    elif qdisc != "none":
        raise ValueError(f"unknown qdisc {qdisc!r}")
    if qdisc != "none":
        tch.Install(bott_devs)
    addr = ns.Ipv4AddressHelper()
    access_ifs = []
    for i, d in enumerate(access_devs):
        addr.SetBase(ns.Ipv4Address(f"10.1.{i + 1}.0"), ns.Ipv4Mask("255.255.255.0"))
        access_ifs.append(addr.Assign(d))
    addr.SetBase(ns.Ipv4Address("10.2.1.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bott_devs)
    addr.SetBase(ns.Ipv4Address("10.3.1.0"), ns.Ipv4Mask("255.255.255.0"))
    rcv_ifs = addr.Assign(rcv_devs)

    if other_qdisc == "none" or qdisc == "none":
        # remove the FqCoDel that Ipv4AddressHelper::Assign installed
        unt = ns.TrafficControlHelper()
        for d in access_devs:
            unt.Uninstall(d)
        unt.Uninstall(rcv_devs)
        if qdisc == "none":
            unt.Uninstall(bott_devs)

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # ---------------- applications ----------------
    sink_addr = ns.InetSocketAddress(rcv_ifs.GetAddress(1), SINK_PORT).ConvertTo()
    any_addr = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), SINK_PORT).ConvertTo()
    sink_factory = "ns3::UdpSocketFactory" if transport == "udp" else "ns3::TcpSocketFactory"
    sink = ns.PacketSinkHelper(sink_factory, any_addr)
    sink_apps = sink.Install(rcv)
    sink_apps.Start(ns.Seconds(0.0))
    sink_apps.Stop(ns.Seconds(duration_s))

    if transport == "udp":
        onoff = ns.OnOffHelper("ns3::UdpSocketFactory", sink_addr)
        onoff.SetAttribute("DataRate", ns.DataRateValue(ns.DataRate(f"{udp_rate_mbps}Mbps")))
        onoff.SetAttribute("PacketSize", ns.UintegerValue(PACKET_SIZE))
        onoff.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0.1]"))
        onoff.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0.1]"))
        apps = onoff.Install(snd)
        apps.Start(ns.Seconds(app_start_s))
        apps.Stop(ns.Seconds(app_stop_s))
    else:
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", sink_addr)
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        for i in range(senders):
            a = bulk.Install(snd.Get(i))
            a.Start(ns.Seconds(tcp_start_s + i * tcp_stagger_s))
            a.Stop(ns.Seconds(app_stop_s))

    fmh = ns.FlowMonitorHelper()
    mon = fmh.InstallAll()

    # exact peaks via the PacketsInQueue traces; optional periodic samples
    probe = cx.AttachProbe(bott_devs.Get(0), float(sample_ms or 0), float(duration_s))
    qdisc_desc = {
        "bottleneck": str(cx.RootQueueDiscType(bott_devs.Get(0))),
        "bottleneck_reverse": str(cx.RootQueueDiscType(bott_devs.Get(1))),
        "access_sender_side": str(cx.RootQueueDiscType(access_devs[0].Get(0))),
        "access_leaf_side": str(cx.RootQueueDiscType(access_devs[0].Get(1))),
        "receiver_link": str(cx.RootQueueDiscType(rcv_devs.Get(0))),
        "device_queue": str(cx.DeviceQueueDesc(bott_devs.Get(0))),
    }

    ns.Simulator.Stop(ns.Seconds(duration_s))
    timing = cx.TimedRun()
    wall, cpu = float(timing[0]), float(timing[1])

    flows = flow_dicts(cx.CollectFlows(fmh, mon))
    rcv_ip = str(rcv_ifs.GetAddress(1))
    data = [f for f in flows if f["dst"] == rcv_ip and f["dport"] == SINK_PORT]
    acks = [f for f in flows if f not in data]

    def totals(fs):
        tx = sum(f["tx_packets"] for f in fs)
        rx = sum(f["rx_packets"] for f in fs)
        lost = sum(f["lost_packets"] for f in fs)
        rxb = sum(f["rx_bytes"] for f in fs)
        dsum = sum(f["delay_sum_s"] for f in fs)
        first = min((f["first_tx_s"] for f in fs), default=0.0)
        last = max((f["last_rx_s"] for f in fs if f["rx_packets"]), default=0.0)
        win = last - first
        return dict(
            flows=len(fs), tx_packets=tx, rx_packets=rx, lost_packets=lost,
            tx_minus_rx=tx - rx, tx_bytes=sum(f["tx_bytes"] for f in fs), rx_bytes=rxb,
            loss_pct=100.0 * lost / tx if tx else 0.0,
            loss_pct_tx_minus_rx=100.0 * (tx - rx) / tx if tx else 0.0,
            mean_delay_ms=1e3 * dsum / rx if rx else None,
            window_s=win,
            throughput_mbps=rxb * 8 / win / 1e6 if win > 0 else 0.0,
        )

    td = totals(data)
    flow_delays = [1e3 * f["delay_sum_s"] / f["rx_packets"] if f["rx_packets"] else None
                   for f in data]
    valid = [d for d in flow_delays if d is not None]

    payload = int(cx.SinkTotalRx(sink_apps.Get(0)))  # application bytes at the sink
    out = dict(
        scenario=name, transport=transport, udp_rate_mbps=udp_rate_mbps, qdisc=qdisc,
        duration_s=duration_s, senders=senders, queue_pkts=queue_pkts,
        device_queue_pkts=device_queue_pkts, app_start_s=app_start_s, app_stop_s=app_stop_s,
        seed=seed, ns3_version="3.44",
        throughput_mbps=td["throughput_mbps"],
        throughput_basis="sum of FlowMonitor rxBytes (IP-layer bytes: IP+UDP/TCP headers + payload) "
                         "of the data flows x 8 / (latest timeLastRx - earliest timeFirstTx)",
        goodput_mbps=payload * 8 / td["window_s"] / 1e6 if td["window_s"] > 0 else 0.0,
        sink_rx_bytes=payload,
        # the study's "Offered Load" row = FlowMonitor txBytes x 8 / the same window
        offered_load_mbps=td["tx_bytes"] * 8 / td["window_s"] / 1e6 if td["window_s"] > 0 else 0.0,
        window_s=td["window_s"],
        mean_delay_ms=td["mean_delay_ms"],
        max_flow_delay_ms=max(valid) if valid else None,
        min_flow_delay_ms=min(valid) if valid else None,
        loss_pct=td["loss_pct"],
        loss_pct_tx_minus_rx=td["loss_pct_tx_minus_rx"],
        peak_queue_pkts=int(probe.peakDisc),
        peak_device_queue_pkts=int(probe.peakDev),
        peak_total_pkts_bound=int(probe.peakDisc) + int(probe.peakDev),
        tx_packets=td["tx_packets"], rx_packets=td["rx_packets"],
        lost_packets=td["lost_packets"], tx_minus_rx=td["tx_minus_rx"],
        tx_bytes=td["tx_bytes"], rx_bytes=td["rx_bytes"],
        flow_mean_delays_ms=flow_delays,
        jain_fairness_delay=_jain(flow_delays),
        delay_spread_ms=(max(valid) - min(valid)) if valid else None,
        wall_s=wall,
        cpu_s=cpu,  # thread CPU time of Simulator::Run (robust to a loaded machine)
        queue_discs=qdisc_desc,
        flows=flows,
    )
    if transport == "tcp":
        ta = totals(acks)
        tall = totals(flows)
        out["ack_flows"] = {k: ta[k] for k in ("flows", "tx_packets", "rx_packets", "lost_packets",
                                               "tx_minus_rx", "tx_bytes", "rx_bytes", "mean_delay_ms")}
        out["all_flows_incl_acks"] = {k: tall[k] for k in ("flows", "tx_packets", "rx_packets",
                                                           "lost_packets", "tx_minus_rx", "loss_pct",
                                                           "mean_delay_ms")}
        # per TCP connection (data flow + its reverse ACK flow pooled)
        conn = []
        for f in data:
            a = next((g for g in acks if g["src"] == f["dst"] and g["dst"] == f["src"]
                      and g["sport"] == f["dport"] and g["dport"] == f["sport"]), None)
            rxp = f["rx_packets"] + (a["rx_packets"] if a else 0)
            ds = f["delay_sum_s"] + (a["delay_sum_s"] if a else 0.0)
            conn.append(1e3 * ds / rxp if rxp else None)
        cv = [c for c in conn if c is not None]
        out["connection_mean_delays_ms"] = conn
        out["connection_delay_min_max_ms"] = (min(cv), max(cv)) if cv else None
        out["jain_fairness_connection_delay"] = _jain(conn)
    if sample_ms:
        qd = [int(x) for x in probe.discDepth]
        dv = [int(x) for x in probe.devDepth]
        out["queue_samples"] = dict(t_s=[float(x) for x in probe.t], qdisc_pkts=qd, device_pkts=dv)
        out["peak_queue_sampled_pkts"] = max(qd, default=0)
        out["peak_device_queue_sampled_pkts"] = max(dv, default=0)
    # release the probe and ns-3 state
    ns.Simulator.Destroy()
    return out


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------
def _fmt(v, nd=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*", default=["S1", "S2", "S3", "S4"])
    ap.add_argument("--duration-s", type=float, default=60.0)
    ap.add_argument("--sample-ms", type=float, default=100.0,
                    help="queue-depth sampling period (study: 100 ms); 0 disables")
    ap.add_argument("--json", action="store_true", help="print full JSON results")
    ap.add_argument("--json-out", default=None, help="also write the JSON results to this file")
    args = ap.parse_args(argv)

    results = {}
    for s in args.scenarios:
        r = run_scenario(s, duration_s=args.duration_s, sample_ms=args.sample_ms or None)
        results[s] = r
        if not args.json:
            print(f"{s}: done in {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU (Simulator::Run)",
                  file=sys.stderr)

    slim = {k: {kk: vv for kk, vv in v.items() if kk not in ("flows", "queue_samples")}
            for k, v in results.items()}
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(results, fh, indent=1)
    if args.json:
        print(json.dumps(slim, indent=2))
    else:
        rows = [
            ("offered_load_mbps", "Offered (Mb/s, IP txBytes)"),
            ("throughput_mbps", "Throughput (Mb/s, IP bytes)"),
            ("goodput_mbps", "Goodput (Mb/s, payload)"),
            ("mean_delay_ms", "Mean delay (ms)"),
            ("max_flow_delay_ms", "Max flow delay (ms)"),
            ("min_flow_delay_ms", "Min flow delay (ms)"),
            ("delay_spread_ms", "Delay spread (ms)"),
            ("jain_fairness_delay", "Jain (delays)"),
            ("loss_pct", "Loss (%)"),
            ("peak_queue_pkts", "Peak qdisc (pkts)"),
            ("peak_queue_sampled_pkts", "Peak qdisc, sampled"),
            ("peak_device_queue_pkts", "Peak device queue (pkts)"),
            ("tx_packets", "TX packets"),
            ("rx_packets", "RX packets"),
            ("lost_packets", "Lost packets (FlowMon)"),
            ("tx_minus_rx", "TX - RX"),
            ("wall_s", "Wall (Simulator::Run, s)"),
            ("cpu_s", "CPU (Simulator::Run, s)"),
        ]
        names = list(results)
        w = 14
        hdr = "".join(f"{n:>{w}s}{'(study)':>{w - 4}s}" for n in names)
        print(f"{'metric (data flows only)':30s}" + hdr)
        for key, label in rows:
            nd = 4 if key == "jain_fairness_delay" else 2
            cells = ""
            for n in names:
                sv = STUDY.get(n, {}).get(key) if args.duration_s == 60.0 else None
                cells += f"{_fmt(results[n].get(key), nd):>{w}s}{_fmt(sv, nd):>{w - 4}s}"
            print(f"{label:30s}" + cells)
        if "S1" in names:
            print("note: the study's S1 TX/RX/lost/delay/loss are totals over data + ACK flows; "
                  "compare them with the 'incl. ACKs' line below.")
        for n in names:
            r = results[n]
            if "ack_flows" in r:
                a, t = r["ack_flows"], r["all_flows_incl_acks"]
                print(f"{n} ACK flows: {a['flows']} flows, tx={a['tx_packets']:,} rx={a['rx_packets']:,} "
                      f"lost={a['lost_packets']:,}; incl. ACKs: tx={t['tx_packets']:,} "
                      f"rx={t['rx_packets']:,} lost={t['lost_packets']:,} loss={t['loss_pct']:.3f}% "
                      f"mean delay={t['mean_delay_ms']:.2f} ms")
                lo, hi = r["connection_delay_min_max_ms"]
                print(f"{n} per-connection (data+ACK) mean delays: min {lo:.2f} max {hi:.2f} "
                      f"spread {hi - lo:.2f} ms, Jain {r['jain_fairness_connection_delay']:.4f}")
    ok = True
    for n, r in results.items():
        if n in ("S2", "S3", "S4") and args.duration_s == 60.0:
            exp = STUDY[n]
            m = r["tx_packets"] == exp["tx_packets"] and r["rx_packets"] == exp["rx_packets"]
            ok &= m
            print(f"{n}: {'MATCH' if m else 'MISMATCH'}  tx {r['tx_packets']:,} vs study "
                  f"{exp['tx_packets']:,}; rx {r['rx_packets']:,} vs study {exp['rx_packets']:,}",
                  file=sys.stderr if args.json else sys.stdout)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
