"""Closed-form and hand-computed checks of the packet engine, run through the same sweep, statistics and report
machinery as the studies. Every row's reference is a closed form or a hand calculation (its source names it), so
the reference column says "closed form" or "hand calculation", never "paper"."""

from __future__ import annotations

import pandas as pd

from fabricsim import run, scenario_from_dict
from fabricsim.report.figures import grouped_bars
from fabricsim.report.stats import summarize
from fabricsim.sweep import SweepSpec

TITLE = "Engine checks: closed forms and hand calculations"
GBPS = "Gbps"


def chain(k_links: int, rate: str, delay: str, latency: str) -> dict:
    nodes = [{"name": "h0", "kind": "host"}]
    nodes += [{"name": f"s{i}", "kind": "switch", "latency": latency} for i in range(1, k_links)]
    nodes += [{"name": "h1", "kind": "host"}]
    names = [n["name"] for n in nodes]
    links = [{"a": names[i], "b": names[i + 1], "rate": rate, "delay": delay} for i in range(k_links)]
    return {"topology": {"kind": "custom", "nodes": nodes, "links": links}, "queue": {"limit_packets": "unlimited"}}


def closed_forms(ctx) -> None:
    ctx.setting("packet, 1 run (deterministic)")
    one = chain(1, "1Gbps", "1us", "0s")
    one["messages"] = [{"name": "m", "src": "h0", "dst": "h1", "size": 10_000, "packet_size": 1000, "header": 40}]
    r = run(scenario_from_dict(one))
    ctx.compare("link-1", "one message over one link: 10 x 1040 B at 1 Gb/s + 1 us", 84.2, r.completion_time_s * 1e6,
                "us", abs=1e-6, source="(P+h)·8/rate + d", reference="closed form")
    four = chain(4, "10Gbps", "1us", "500ns")
    four["messages"] = [{"name": "m", "src": "h0", "dst": "h1", "size": 150_000, "packet_size": 1500}]
    r = run(scenario_from_dict(four))
    ctx.compare("hops-4", "100 x 1500 B over 4 store-and-forward hops, 10 Gb/s, 1 us, 500 ns/switch", 129.1,
                r.completion_time_s * 1e6, "us", abs=1e-6, source="(P+k−1)·ser + k·d + (k−1)·L", reference="closed form")


def droptail(ctx) -> None:
    res = ctx.sweep("droptail.toml")
    ctx.setting(f"packet, 1 run per limit (deterministic); {res.total} limits B (droptail.toml)")
    df = res.frame().rename(columns={"queue.limit_packets": "B"})
    for _, row in df.sort_values("B").iterrows():
        b = int(row["B"])
        ctx.compare(f"droptail-B{b}", f"drops of a 20-packet burst, DropTail limit {b}", max(0, 11 - b),
                    row["dropped_packets"], "packets", abs=0, source="20 − 9 served − B queued",
                    reference="hand calculation")


def fairness(ctx) -> None:
    period = 129_442_719  # ps: 8000 bits at 61.803399 Mb/s, incommensurate with the 80 us service time

    def shares(offsets_ps):
        sc = {
            "topology": {"kind": "dumbbell", "senders": 4, "bottleneck_rate": "100Mbps"},
            "sources": [{"name": f"f{i}", "kind": "cbr", "src": f"sender{i}", "dst": "receiver", "rate": 61_803_399,
                         "packet_size": 1000, "start": f"{o}ps", "stop": "4s"} for i, o in enumerate(offsets_ps)],
        }
        r = run(scenario_from_dict(sc))
        rx = r.values("flows.rx_bytes")
        return [b / sum(rx) for b in rx]

    ctx.setting("packet, 1 run per start pattern (deterministic), 4 s of CBR")
    even = shares([0, 3 * period + period // 4, 7 * period + period // 2, 2 * period + 3 * period // 4])
    for i, s in enumerate(even):
        ctx.compare(f"fair-{i}", f"share of CBR flow {i}, starts interleaved evenly", 0.25, s, rel=0.02, source="1/N",
                    reference="closed form")
    gaps = shares([0, period // 10, period // 2, 6 * period // 10])
    for i, (s, want) in enumerate(zip(gaps, [0.4, 0.1, 0.4, 0.1])):
        ctx.compare(f"phase-{i}", f"share of CBR flow {i}, start phases 0/.1/.5/.6", want, s, abs=0.01,
                    source="phase gap before the flow", reference="hand calculation")


def ecmp(ctx) -> None:
    nodes = [{"name": "h0", "kind": "host"}, {"name": "s0", "kind": "switch"}, {"name": "s9", "kind": "switch"},
             {"name": "h1", "kind": "host"}] + [{"name": f"sp{k}", "kind": "switch"} for k in range(8)]
    links = [{"a": "h0", "b": "s0", "rate": "100Gbps"}, {"a": "s9", "b": "h1", "rate": "100Gbps"}]
    links += [{"a": "s0", "b": f"sp{k}", "rate": "100Gbps"} for k in range(8)]
    links += [{"a": f"sp{k}", "b": "s9", "rate": "100Gbps"} for k in range(8)]
    base = {"topology": {"kind": "custom", "nodes": nodes, "links": links}, "routing": {"ecmp": "per_message"},
            "queue": {"limit_packets": "unlimited"},
            "messages": [{"name": f"m{i}", "src": "h0", "dst": "h1", "size": 1000, "packet_size": 1000} for i in range(10_000)]}
    spec = SweepSpec(name="ecmp_spread", base=base, task=ctx.task("ecmp_spread"), seeds=5 if ctx.quick else 30)
    df = ctx.sweep(spec, base).frame()
    ctx.setting(f"packet, {spec.seeds} seeds, 10,000 one-packet messages over 8 spines")
    long = pd.DataFrame([{"spine": k, "seed": r["seed"], "packets": r[f"spine{k}"]} for _, r in df.iterrows() for k in range(8)])
    summary = summarize(long, ["spine"], ["packets"])
    for _, row in summary.iterrows():
        ctx.compare(f"ecmp-sp{int(row['spine'])}", f"mean packets on spine {int(row['spine'])} of 10,000 (per-message ECMP)",
                    1250, row["packets_mean"], "packets", rel=0.05, source="10,000 / 8", reference="closed form")
    ctx.figure(grouped_bars(summary, "spine", "packets", title=f"Per-message ECMP over 8 spines ({len(df)} seeds, 95% CI)",
                            ylabel="packets", paper={k: 1250 for k in range(8)}, paper_label="even split",
                            bar_label=f"fabricsim, mean of {len(df)} seeds"), "ecmp_spread",
               "Packets per spine path, mean and 95% CI over seeds; diamonds: the even split (1,250).")
    ctx.table("Per-message ECMP: packets per spine (mean and 95% CI)", summary)


def reproduce(ctx) -> None:
    closed_forms(ctx)
    droptail(ctx)
    fairness(ctx)
    ecmp(ctx)
