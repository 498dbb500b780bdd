"""UEC beside RoCE on one fabric and workload: examples/uec_alltoall.toml (an MoE all-to-all of 1 MiB per pair,
32 hosts, a 2:1 leaf-spine at 100 Gb/s) run as it is, with per-flow ECMP instead of spraying, and as RoCEv2 with
DCQCN and with HPCC on lossless shared-buffer switches with PFC. docs/guide/ultra-ethernet.md shows the table and
the figure (benchmarks/readme_numbers.py, region `uec-vs-roce`); tests/test_uec_example.py checks the runs.

The RoCE variants are built from the example in code (`variants`): the same topology, link delays, seed and
collective; `transport = "rdma"`, `switch_model = "shared_buffer"` with `[pfc]` at HPCC's defaults, `[ecn]` at the
"hpcc" preset for DCQCN, and RoCE's 4 KiB MTU (4,096 B payload + 48 B headers, 4,144 B on the wire, beside UEC's
4,150 B). The example's `[queue]` (UEC's one-BDP trimming queues) and `[uec]` go.

Usage: python benchmarks/uec_vs_roce.py [--figure uec_vs_roce.png]
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "uec_alltoall.toml"
FIGURE = ROOT / "docs" / "img" / "uec_vs_roce.png"
ROCE_PAYLOAD, ROCE_HEADER = 4096, 48
"""RoCEv2 at a 4 KiB MTU: payload per packet, and headers as HPCC's fork counts them (examples/roce_*.toml)."""

LABELS = {"uec": "UEC: NSCC, sprayed (MIXED), trimming",
          "uec_ecmp": "UEC with per-flow ECMP (spray = \"ecmp\")",
          "dcqcn": "RoCE DCQCN + PFC",
          "hpcc": "RoCE HPCC + PFC"}
TIERS = {"leaf→spine": r"^leaf\d+->spine", "spine→leaf": r"^spine\d+->leaf", "leaf→host": r"^leaf\d+->h"}
"""The fabric's three switch egress tiers, by queue name (a host's NIC pulls its next packet from its connections
when the link is free, so its port never queues)."""


def variants() -> dict:
    """Name → Scenario: the example, the example with `spray = "ecmp"`, and the RoCE DCQCN and HPCC variants."""
    import fabricsim

    base = tomllib.loads(EXAMPLE.read_text())
    out = {"uec": fabricsim.scenario_from_dict(base, str(EXAMPLE))}
    ecmp = copy.deepcopy(base)
    ecmp["uec"] = {**ecmp.get("uec", {}), "spray": "ecmp"}
    out["uec_ecmp"] = fabricsim.scenario_from_dict(ecmp, f"{EXAMPLE} (spray = ecmp)")
    for cc in ("dcqcn", "hpcc"):
        d = copy.deepcopy(base)
        del d["uec"], d["queue"]
        d["transport"] = "rdma"
        d["topology"]["switch_model"] = "shared_buffer"
        d["pfc"] = {}
        if cc == "dcqcn":
            d["ecn"] = {"preset": "hpcc"}
        d["rdma"] = {"cc": cc}
        for c in d["collectives"]:
            c.update(packet_size=ROCE_PAYLOAD, header=ROCE_HEADER)
        out[cc] = fabricsim.scenario_from_dict(d, f"{EXAMPLE} (RoCE {cc})")
    return out


def wire_bytes(sc) -> int:
    """Bytes one message of the all-to-all puts on the wire: its payload plus a header per packet."""
    size = sc.collectives[0].size
    if sc.transport == "uec":
        mss, header = sc.uec.mtu - sc.uec.header, sc.uec.header
    else:
        mss, header = sc.collectives[0].packet_size, sc.collectives[0].header
    return size + -(-size // mss) * header


def lower_bound_s(sc) -> float:
    """The all-to-all's completion can be no shorter than the larger of: the bytes a leaf sends up to the spines
    over its uplinks' capacity, and the bytes a NIC sends over its rate (tests/test_uec_example.py derives both)."""
    t = sc.topology
    n, h = t.racks * t.hosts_per_rack, t.hosts_per_rack
    w = wire_bytes(sc)
    spine = h * (n - h) * w * 8 / (t.spines * t.parallel_links * t.fabric_rate)
    nic = (n - 1) * w * 8 / t.host_rate
    return max(spine, nic)


@dataclass
class Result:
    name: str
    completion_s: float
    lower_bound_s: float
    fct_s: np.ndarray
    """Each message's completion (its last byte at the receiver) minus its start, sorted."""
    peak_bytes: dict
    """Tier → the largest peak egress queue of its ports, bytes."""
    uplink_max_bytes: int
    """Bytes the busiest leaf→spine link carried (data, trimmed headers and retransmissions)."""
    uplink_skew: float
    """Bytes the busiest leaf→spine link carried over the mean of all of them (1: spread evenly)."""
    uec: dict | None
    pfc_pauses: int
    pfc_paused_s: float
    ecn_marks: int
    dropped: int
    complete: bool
    events: int

    def pct(self, q: float) -> float:
        """Nearest-rank percentile of the FCTs (q in 0..100)."""
        return float(np.percentile(self.fct_s, q, method="inverted_cdf"))


def measure(name: str, sc) -> Result:
    """Run one variant at packet fidelity and reduce its record."""
    import fabricsim

    rec = fabricsim.run(sc)
    f = rec.frame("flows")
    m = f[f["kind"] == "message"]
    fct = np.sort((m["complete_ps"].to_numpy() - m["start_ps"].to_numpy()) * 1e-12)
    q = rec.frame("queues")
    peak = {tier: int(q.loc[q["name"].str.match(rx), "peak_bytes"].max()) for tier, rx in TIERS.items()}
    up = [link["bytes"] for link in rec.links() if re.match(TIERS["leaf→spine"], link["name"])]
    skew = max(up) / (sum(up) / len(up))
    return Result(name, rec.completion_time_s, lower_bound_s(sc), fct, peak, max(up), skew, rec.scalars.get("uec"), rec.pfc_pauses,
                  rec.pfc_paused_s, rec.ecn_marks, rec.packets["dropped"], rec.complete, rec.events)


LONG_RTO = "1ms"
"""The longer retransmission timeout of the timeouts' check."""


def default_rto_s(sc) -> float:
    """htsim_uec's timeout, which `[uec] rto = "auto"` takes: 15 µs plus six drain times of the largest switch queue
    at the NIC rate (the example: 15 µs + 6 x 120,350 B x 8 / 100 Gb/s = 72.768 µs)."""
    return 15e-6 + 6 * sc.queue.limit_bytes * 8 / sc.topology.host_rate


def with_uec(what: str, **keys):
    """The example with these `[uec]` keys set."""
    import fabricsim

    d = tomllib.loads(EXAMPLE.read_text())
    d["uec"] = {**d.get("uec", {}), **keys}
    return fabricsim.scenario_from_dict(d, f"{EXAMPLE} ({what})")


def run_all() -> dict[str, Result]:
    """Every variant, run once, and the two runs of the timeouts' check: the example with an ACK for every packet
    ("uec_ack1": `ack_every` = one MTU instead of 16 KiB) and with a longer timeout ("uec_rto")."""
    out = {name: measure(name, sc) for name, sc in variants().items()}
    out["uec_ack1"] = measure("uec_ack1", with_uec("an ACK per packet", ack_every=4150))
    out["uec_rto"] = measure("uec_rto", with_uec(f"rto = {LONG_RTO}", rto=LONG_RTO))
    return out


def _kb(b: int) -> str:
    return f"{b / 1e3:,.0f}" if b >= 1e4 else f"{b / 1e3:,.1f}"


def render(res: dict[str, Result]) -> str:
    """The guide's region: the comparison table, the loss and flow-control counters, the timeouts' check and the
    lower bounds."""
    shown = {n: r for n, r in res.items() if n in LABELS}
    head = ["transport", "completion", "÷ lower bound", "FCT median", "FCT p99", "busiest uplink ÷ mean",
            "peak queue KB: " + " / ".join(TIERS)]
    rows = [[LABELS[n], f"{r.completion_s * 1e3:.3f} ms", f"{r.completion_s / r.lower_bound_s:.2f}×",
             f"{r.pct(50) * 1e3:.3f} ms", f"{r.pct(99) * 1e3:.3f} ms", f"{r.uplink_skew:.3f}",
             " / ".join(_kb(r.peak_bytes[t]) for t in TIERS)] for n, r in shown.items()]
    count = []
    for n, r in shown.items():
        if r.uec is not None:
            u = r.uec
            count.append([LABELS[n], f"{u['trims']:,} trims of {u['data_packets']:,} data packets "
                          f"({100 * u['trims'] / u['data_packets']:.1f}%), {u['nacks']:,} NACKs, {u['timeouts']:,} "
                          f"timeouts, {u['retransmits']:,} retransmissions, {u['out_of_order']:,} out of order; "
                          f"{r.dropped:,} packets dropped", "none (lossy switches that trim)"])
        else:
            count.append([LABELS[n], f"none needed: {r.dropped:,} packets dropped",
                          f"{r.pfc_pauses:,} PAUSE frames, {r.pfc_paused_s * 1e3:.2f} ms paused over all ports; "
                          f"{r.ecn_marks:,} ECN marks"])
    u, d, a = res["uec"], res["dcqcn"], res["uec_ack1"]
    sc = variants()
    return "\n".join([
        table(head, rows), "", table(["transport", "loss and recovery", "PFC"], count), "",
        timeouts(u, a, res["uec_rto"]), "",
        f"Lower bounds (the larger of a leaf's uplink bytes over its 400 Gb/s and a NIC's bytes over 100 Gb/s; the "
        f"spine layer binds): {u.lower_bound_s * 1e3:.3f} ms for UEC's packets ({wire_bytes(sc['uec']):,} B on the "
        f"wire per 1 MiB message), {d.lower_bound_s * 1e3:.3f} ms for RoCE's ({wire_bytes(sc['dcqcn']):,} B). "
        f"{len(u.fct_s):,} messages per run; FCT percentiles are nearest-rank."])


def timeouts(u: Result, a: Result, r: Result) -> str:
    """What UEC's retransmission timeouts were, beside the runs with an ACK per packet (a) and a longer timeout (r)."""
    t = u.uec["timeouts"]
    what = (f"UEC's {t:,} timeouts came with no packet dropped: each timed out a packet that had arrived or was on "
            f"its way, whose ACK had not come back ({u.uec['duplicates']:,} of them were re-sent and arrived twice)."
            if t and not u.dropped
            else f"UEC had {t:,} timeouts and {u.dropped:,} packets dropped.")
    still = "still " if t and r.uec["timeouts"] >= t / 2 else ""
    return (f"{what} With an ACK for every packet (`[uec] ack_every = 4150` instead of 16 KiB) the run has "
            f"{a.uec['timeouts']:,} timeouts and {a.uec['duplicates']:,} duplicates, and completes in "
            f"{a.completion_s * 1e3:.3f} ms. With `[uec] rto = \"{LONG_RTO}\"` (instead of "
            f"{default_rto_s(variants()['uec']) * 1e6:.1f} µs) it {still}has {r.uec['timeouts']:,} timeouts, and "
            f"completes in {r.completion_s * 1e3:.3f} ms.")


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(r) + " |" for r in rows])


def draw(res: dict[str, Result], path: Path | str = FIGURE) -> Path:
    """The figure: each variant's FCT CDF (left) and its peak queue per fabric tier (right, log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"uec": "#4c72b0", "uec_ecmp": "#8da0cb", "dcqcn": "#dd8452", "hpcc": "#55a868"}
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    shown = {n: r for n, r in res.items() if n in LABELS}
    for name, r in shown.items():
        y = np.arange(1, len(r.fct_s) + 1) / len(r.fct_s)
        a.step(r.fct_s * 1e3, y, where="post", color=colors[name], ls="--" if name == "uec_ecmp" else "-",
               label=LABELS[name])
    a.axvline(res["uec"].lower_bound_s * 1e3, color="k", lw=0.8, ls=":", label="lower bound (spine layer)")
    a.set_xlabel("flow completion time (ms)")
    a.set_ylabel("fraction of the 992 messages")
    a.set_title("FCT CDF, MoE all-to-all, 1 MiB per pair")
    a.grid(alpha=0.3)
    a.legend(fontsize=7, loc="upper left")
    x = np.arange(len(TIERS))
    width = 0.8 / len(shown)
    for i, (name, r) in enumerate(shown.items()):
        b.bar(x + (i - (len(shown) - 1) / 2) * width, [r.peak_bytes[t] / 1e3 for t in TIERS], width,
              color=colors[name], label=LABELS[name])
    b.set_yscale("log")
    b.set_xticks(x, list(TIERS))
    b.set_ylabel("peak egress queue (KB, largest port of the tier)")
    b.set_title("peak queue depth per fabric tier")
    b.grid(axis="y", alpha=0.3)
    fig.suptitle("32 hosts, 2:1 leaf-spine at 100 Gb/s (examples/uec_alltoall.toml)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figure", type=Path, help="also draw the figure to this PNG")
    args = ap.parse_args(argv)
    res = run_all()
    print(render(res))
    if args.figure:
        print(f"wrote {draw(res, args.figure)}")
    return 0 if all(r.complete for r in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
