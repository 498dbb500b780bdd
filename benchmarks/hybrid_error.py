"""Hybrid fidelity's error and speed-up against the packet engine, over a corpus of scenarios (issue 30, deliverable 4).

Every scenario of the corpus runs twice with the same seed: at `fidelity="packet"` (the reference) and at
`fidelity="hybrid"` (the packet engine jumping over steady intervals, docs/guide/hybrid.md), with the detector's
defaults (two scenarios, named *_tol5, set `hybrid = {tolerance = 0.05}`). Per scenario it reports

- completion error: hybrid completion time / packet completion time − 1 (the completion time is when the last
  message or compute step finished, `RunRecord.completion_time_s`), in %;
- FCT p50 / p99 error: the 50th / 99th percentile of the per-message flow completion times (complete − start of
  every row of kind "message": single messages, the messages of collectives and of lowered traces, RDMA queue
  pairs), hybrid / packet − 1, in %;
- speed-up: packet engine seconds / hybrid engine seconds (`RunRecord.wall_s`, the event loop alone); the JSON
  also carries the whole `fabricsim.run` call's wall seconds (time.perf_counter around it) of each run;
- flow max: the largest |error| of one message's FCT, the same message compared at both fidelities (no target:
  it shows when the aggregate figures hide a reshuffle among flows), in %;
- jumps: the hybrid run's steady-state jumps, and skipped: the simulated time they jumped over as a % of the
  packet run's completion time.

The corpus (≥ 30 scenarios, each packet run ≤ ~3 s on a 2-core machine; message sizes 1–64 MB, seeds varied):
collectives (ring / halving-doubling / shift all-reduce, all-to-all, all-gather, reduce-scatter) on lossless
fabrics (output-queued switches with unlimited queues, and input-buffered switches with credit flow control)
and on RoCE (shared-buffer switches, PFC, ECN, RDMA with DCQCN, HPCC or no congestion control); incasts (N → 1
messages, message transport and RDMA with DCQCN, HPCC, none); training steps (compute + gradient all-reduce as
examples/training_step.toml, and Chakra traces synthesized with `fabricsim.chakra.synth.data_parallel`); two
jobs sharing links (two collectives on disjoint rank sets whose traffic crosses the same spine); failures during
a run (a link that goes down mid-transfer under RDMA DCQCN's go-back-N, a link that comes back mid-transfer, a
link that fails between two phases of a job: messages do not retransmit, so a failure that loses a packet of a
plain message would leave the workload incomplete); UDP CBR background traffic beside messages. Output-queued
switches with unlimited queues under oversubscription (incasts, two rings sharing an uplink) grow their queues
without bound, which the detector rightly never calls steady: those rows show no jumps.

Targets (issue 30): completion-time median |error| ≤ 0.5 % and max |error| ≤ 2 %; per-flow FCT p99 |error| ≤ 3 %
(the median over scenarios). The script reports whether each is met and always exits 0.

Usage:
    python benchmarks/hybrid_error.py                  # the whole corpus (a few minutes)
    python benchmarks/hybrid_error.py --quick          # 8 scenarios, one per category (smoke test)
    python benchmarks/hybrid_error.py --only a,b       # the named scenarios
    python benchmarks/hybrid_error.py --list           # the corpus' names and categories
    python benchmarks/hybrid_error.py --json out.json  # also write every figure as JSON

`markdown(results)` renders the results (the list `run_corpus` returns) as a Markdown table plus the summary, for
the docs generator (benchmarks/readme_numbers.py).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

MAX_WALL_S = 60.0
"""Each run's wall-clock limit (`fabricsim.run(max_wall_s=...)`): a run that reaches it is reported as halted."""

TARGETS = {"completion_median_pct": 0.5, "completion_max_pct": 2.0, "fct_p99_median_pct": 3.0}


# ---- scenario builders --------------------------------------------------------------------------------------

def leaf_spine(racks: int = 2, hosts: int = 4, spines: int = 2, host_rate: str = "100Gbps",
               fabric_rate: str = "400Gbps", model: str | None = None, delay: str = "1us") -> dict:
    t = {"kind": "leaf_spine", "racks": racks, "hosts_per_rack": hosts, "spines": spines, "host_rate": host_rate,
         "fabric_rate": fabric_rate, "host_delay": delay, "fabric_delay": delay, "switch_latency": "500ns"}
    if model:
        t["switch_model"] = model
    return t


def fat_tree(m0: int = 4, m1: int = 4, rate: str = "100Gbps", model: str | None = None) -> dict:
    t = {"kind": "fat_tree", "m0": m0, "m1": m1, "rate": rate, "delay": "1us", "switch_latency": "500ns"}
    if model:
        t["switch_model"] = model
    return t


def lossless_oq(topo: dict, seed: int, **extra) -> dict:
    """Message transport over output-queued switches whose queues never drop (unlimited)."""
    return {"seed": seed, "topology": topo, "routing": {"ecmp": "per_message"},
            "queue": {"limit_packets": "unlimited"}, **extra}


def with_model(topo: dict, model: str) -> dict:
    """`topo` with every switch of `model` (a custom topology names it per node)."""
    if topo["kind"] == "custom":
        return {**topo, "nodes": [{**n, "model": model} if n["kind"] == "switch" else n for n in topo["nodes"]]}
    return {**topo, "switch_model": model}


def lossless_ib(topo: dict, seed: int, **extra) -> dict:
    """Message transport over input-buffered switches (credit flow control: lossless)."""
    topo = with_model(topo, "input_buffered")
    return {"seed": seed, "topology": topo, "routing": {"ecmp": "per_message"}, **extra}


def roce(topo: dict, seed: int, cc: str, **extra) -> dict:
    """RoCEv2: RDMA queue pairs over shared-buffer switches with PFC and ECN at HPCC's defaults."""
    topo = with_model(topo, "shared_buffer")
    return {"seed": seed, "transport": "rdma", "topology": topo, "routing": {"ecmp": "per_message"},
            "pfc": {}, "ecn": {"preset": "hpcc"}, "rdma": {"cc": cc}, **extra}


def coll(kind: str, size: str, ranks: Any = "all", algorithm: str | None = None, packet_size: int = 1024,
         header: int = 0, **kw) -> dict:
    c = {"kind": kind, "ranks": ranks, "size": size, "packet_size": packet_size, "header": header, **kw}
    if algorithm:
        c["algorithm"] = algorithm
    return c


def incast(senders: list[str], dst: str, size: str, packet_size: int = 1000, header: int = 48, start_step: str | None = None) -> list[dict]:
    out = []
    for i, s in enumerate(senders):
        m = {"name": f"m{i}", "src": s, "dst": dst, "size": size, "packet_size": packet_size, "header": header}
        if start_step:
            m["start"] = f"{i * float(start_step.rstrip('us'))}us"
        out.append(m)
    return out


def star(n: int, model: str | None = None, rate: str = "100Gbps") -> dict:
    """n senders s0.. and a receiver rx on one switch (examples/roce_incast.toml's fabric)."""
    sw = {"name": "sw", "kind": "switch"}
    if model:
        sw["model"] = model
    hosts = [f"s{i}" for i in range(n)] + ["rx"]
    return {"kind": "custom", "nodes": [sw] + [{"name": h, "kind": "host"} for h in hosts],
            "links": [{"a": h, "b": "sw", "rate": rate, "delay": "1us"} for h in hosts]}


def training_step(hosts: int, grad: str, fwd_us: int, bwd_us: int, opt_us: int, seed: int, rate: str = "25Gbps") -> dict:
    """examples/training_step.toml's shape: forward, backward, a ring all-reduce of the gradients, optimizer."""
    names = [f"h{i}" for i in range(hosts)]
    nodes = [{"name": h, "kind": "host"} for h in names] + [{"name": "s", "kind": "switch", "model": "input_buffered"}]
    compute = []
    for i, h in enumerate(names):
        compute += [{"name": f"fwd{i}", "host": h, "duration": f"{fwd_us}us"},
                    {"name": f"bwd{i}", "host": h, "duration": f"{bwd_us}us", "after": [f"fwd{i}"]},
                    {"name": f"opt{i}", "host": h, "duration": f"{opt_us}us", "after": ["grads"]}]
    return {"seed": seed, "topology": {"kind": "custom", "nodes": nodes,
                                       "links": [{"a": h, "b": "s", "rate": rate, "delay": "1us"} for h in names]},
            "compute": compute,
            "collectives": [{"name": "grads", "kind": "all_reduce", "algorithm": "ring", "ranks": "all", "size": grad,
                             "packet_size": 1000, "after": [f"bwd{i}" for i in range(hosts)]}]}


def chakra_dp(sc_dict: dict, ranks: int, layers: int, hidden: int, seq_len: int, forward_us: float,
              packet_size: int = 4096):
    """A scenario plus the workload of a synthesized data-parallel Chakra trace (per-layer gradient all-reduce
    overlapping the backward pass) lowered onto it."""
    def build():
        import fabricsim
        from fabricsim.chakra import load, lower
        from fabricsim.chakra.synth import Model, data_parallel, write

        sc = fabricsim.scenario_from_dict(sc_dict)
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/dp", data_parallel(Model(layers=layers, hidden=hidden, seq_len=seq_len, forward_us=forward_us),
                                           ranks))
            low = lower(load(f"{d}/dp"), sc, packet_size=packet_size)
        return sc, low.workload
    return build


@dataclass
class Case:
    name: str
    category: str
    spec: dict | Callable[[], tuple[Any, Any]]
    """A scenario dict (for `fabricsim.scenario_from_dict`) or a function returning (scenario, workload)."""
    quick: bool = False
    notes: str = ""

    def build(self):
        import fabricsim

        if callable(self.spec):
            return self.spec()
        return fabricsim.scenario_from_dict(self.spec), None


def corpus() -> list[Case]:
    C: list[Case] = []
    add = lambda *a, **k: C.append(Case(*a, **k))  # noqa: E731
    H8 = [f"h{i}" for i in range(8)]

    # -- collectives on lossless fabrics (message transport) -----------------------------------------------------
    add("ar_ring_ls8_64M", "collective/lossless", lossless_oq(leaf_spine(), 1, collectives=[coll("all_reduce", "64MiB", algorithm="ring")]), quick=True)
    add("ar_hd_ft16_64M", "collective/lossless", lossless_oq(fat_tree(4, 4), 2, collectives=[coll("all_reduce", "64MiB", algorithm="halving_doubling")]))
    add("a2a_ls8_32M", "collective/lossless", lossless_oq(leaf_spine(), 3, collectives=[coll("all_to_all", "32MiB")]))
    add("ag_ring_ft16_48M", "collective/lossless", lossless_oq(fat_tree(4, 4), 4, collectives=[coll("all_gather", "48MiB", algorithm="ring")]))
    add("rs_ring_ls8_64M", "collective/lossless", lossless_oq(leaf_spine(fabric_rate="100Gbps"), 5, collectives=[coll("reduce_scatter", "64MiB", algorithm="ring")]))
    add("ar_ring_ib_ls16_64M", "collective/lossless-ib", lossless_ib(leaf_spine(2, 8, 2), 6, collectives=[coll("all_reduce", "64MiB", algorithm="ring")]), quick=True)
    add("a2a_ib_ft16_16M", "collective/lossless-ib", lossless_ib(fat_tree(4, 4), 7, collectives=[coll("all_to_all", "16MiB")]))
    add("ar_shift_ib_ls8_32M", "collective/lossless-ib", lossless_ib(leaf_spine(fabric_rate="100Gbps"), 8, collectives=[coll("all_reduce", "32MiB", algorithm="shift")]))
    add("ar_hd_ib_ls8_24M", "collective/lossless-ib", lossless_ib(leaf_spine(), 9, collectives=[coll("all_reduce", "24MiB", algorithm="halving_doubling")]))

    # -- collectives on RoCE ----------------------------------------------------------------------------------------
    add("roce_ar_dcqcn_64M", "collective/roce", roce(leaf_spine(), 1, "dcqcn", collectives=[coll("all_reduce", "64MiB", algorithm="ring", packet_size=1000, header=48)]), quick=True)
    add("roce_ar_hpcc_32M_tol5", "collective/roce", {**roce(leaf_spine(), 2, "hpcc", collectives=[coll("all_reduce", "32MiB", algorithm="ring", packet_size=1000, header=48)]),
                                                     "hybrid": {"tolerance": 0.05}}, notes="detector tolerance 0.05")
    add("roce_ar_hpcc_32M", "collective/roce", roce(leaf_spine(), 2, "hpcc", collectives=[coll("all_reduce", "32MiB", algorithm="ring", packet_size=1000, header=48)]))
    add("roce_a2a_dcqcn_4M", "collective/roce", roce(leaf_spine(fabric_rate="100Gbps"), 3, "dcqcn", collectives=[coll("all_to_all", "4MiB", packet_size=1000, header=48)]))
    add("roce_ag_none_16M", "collective/roce", roce(leaf_spine(), 4, "none", collectives=[coll("all_gather", "16MiB", algorithm="ring", packet_size=1000, header=48)]))
    add("roce_a2a_hpcc_8M", "collective/roce", roce(leaf_spine(fabric_rate="100Gbps"), 5, "hpcc", collectives=[coll("all_to_all", "8MiB", packet_size=1000, header=48)]))

    # -- incasts ----------------------------------------------------------------------------------------------------
    add("incast_msg_8to1_4M", "incast", lossless_oq(star(8), 1, messages=incast([f"s{i}" for i in range(8)], "rx", "4MB")), quick=True)
    add("incast_msg_ls_7to1_8M", "incast", lossless_oq(leaf_spine(), 2, messages=incast(H8[1:], "h0", "8MB", 1024, 0)))
    add("incast_ib_8to1_16M", "incast", lossless_ib(star(8), 3, messages=incast([f"s{i}" for i in range(8)], "rx", "16MB", 1024, 0)))
    add("incast_ib_staggered_4to1_32M", "incast", lossless_ib(star(4), 4, messages=incast([f"s{i}" for i in range(4)], "rx", "32MB", 1024, 0, start_step="500us")))
    add("roce_incast_dcqcn_8x10M", "incast/roce", {**roce(star(8, "shared_buffer"), 1, "dcqcn"), "rdma": {"cc": "dcqcn", "preset": "hpcc"},
                                                    "messages": incast([f"s{i}" for i in range(8)], "rx", "10MB")}, quick=True)
    add("roce_incast_hpcc_8x10M", "incast/roce", {**roce(star(8, "shared_buffer"), 2, "hpcc"), "messages": incast([f"s{i}" for i in range(8)], "rx", "10MB")})
    add("roce_incast_hpcc_8x10M_tol5", "incast/roce", {**roce(star(8, "shared_buffer"), 2, "hpcc"), "hybrid": {"tolerance": 0.05},
                                                        "messages": incast([f"s{i}" for i in range(8)], "rx", "10MB")},
        notes="the detector's tolerance 0.05 (default 0.02): HPCC's rates wobble more than 2 % per window")
    add("roce_incast_dcqcn_16x4M", "incast/roce", {**roce(star(16, "shared_buffer"), 3, "dcqcn"), "messages": incast([f"s{i}" for i in range(16)], "rx", "4MB")})
    add("roce_incast_hpcc_4x32M", "incast/roce", {**roce(star(4, "shared_buffer"), 4, "hpcc"), "messages": incast([f"s{i}" for i in range(4)], "rx", "32MB")})
    add("roce_incast_none_4x32M", "incast/roce", {**roce(star(4, "shared_buffer"), 5, "none"), "messages": incast([f"s{i}" for i in range(4)], "rx", "32MB")})
    add("roce_incast_dcqcn_ls_6to1_4M", "incast/roce", roce(leaf_spine(fabric_rate="100Gbps"), 6, "dcqcn", messages=incast(["h1", "h2", "h4", "h5", "h6", "h7"], "h0", "4MB")))

    # -- training steps ---------------------------------------------------------------------------------------------
    add("train_step_4h_4M", "training", training_step(4, "4MB", 100, 200, 50, 1, rate="8Gbps"), quick=True)
    add("train_step_8h_32M", "training", training_step(8, "32MB", 300, 600, 100, 2, rate="100Gbps"))
    add("chakra_dp8_ls_oq", "training", chakra_dp(lossless_oq(leaf_spine(), 3), 8, 2, 2048, 512, 40.0))
    add("chakra_dp8_ib", "training", chakra_dp(lossless_ib(leaf_spine(fabric_rate="100Gbps"), 4), 8, 3, 2048, 1024, 60.0))
    add("chakra_dp8_roce_dcqcn", "training", chakra_dp(roce(leaf_spine(), 5, "dcqcn"), 8, 3, 1024, 512, 20.0, packet_size=1000))

    # -- two jobs sharing links (rack-crossing rank sets on one spine) --------------------------------------------------------
    jobA = ["h0", "h1", "h4", "h5"]
    jobB = ["h2", "h3", "h6", "h7"]
    one_spine = leaf_spine(2, 4, 1, "100Gbps", "100Gbps")
    add("two_jobs_ar_ar_oq_64M", "two-jobs", lossless_oq(one_spine, 1, collectives=[coll("all_reduce", "64MiB", jobA, "ring", name="jobA"),
                                                                                    coll("all_reduce", "64MiB", jobB, "ring", name="jobB")]), quick=True)
    add("two_jobs_ar_ar_ib_64M", "two-jobs", lossless_ib(one_spine, 5, collectives=[coll("all_reduce", "64MiB", jobA, "ring", name="jobA"),
                                                                                   coll("all_reduce", "64MiB", jobB, "ring", name="jobB")]))
    add("two_jobs_ar_a2a_ib_32M", "two-jobs", lossless_ib(one_spine, 2, collectives=[coll("all_reduce", "32MiB", jobA, "ring", name="jobA"),
                                                                                    coll("all_to_all", "16MiB", jobB, name="jobB")]))
    add("two_jobs_roce_dcqcn_16M", "two-jobs", roce(one_spine, 3, "dcqcn", collectives=[coll("all_reduce", "16MiB", jobA, "ring", 1000, 48, name="jobA"),
                                                                                        coll("all_reduce", "16MiB", jobB, "ring", 1000, 48, name="jobB")]))
    add("two_jobs_roce_hpcc_staggered_8M", "two-jobs", roce(one_spine, 4, "hpcc", collectives=[coll("all_reduce", "8MiB", jobA, "ring", 1000, 48, name="jobA"),
                                                                                               coll("all_reduce", "8MiB", jobB, "ring", 1000, 48, name="jobB", start="300us")]))

    # -- failures during a run -----------------------------------------------------------------------------------------------
    add("fail_roce_dcqcn_ar_link_down_32M", "failure", roce(leaf_spine(fabric_rate="100Gbps"), 1, "dcqcn", routing={"ecmp": "per_message", "detection_delay": "20us"},
                                                             collectives=[coll("all_reduce", "32MiB", algorithm="ring", packet_size=1000, header=48)],
                                                             events=[{"at": "1ms", "kind": "link_down", "link": ["leaf0", "spine1"]}]), quick=True)
    # (HPCC is window-based: when a link failure loses every packet in flight, no later packet arrives out of order
    # to draw a NACK and the queue pair stalls for good; so HPCC meets a failure only as a link coming back.)
    add("fail_roce_dcqcn_incast_link_down_8M", "failure", roce(leaf_spine(fabric_rate="100Gbps"), 2, "dcqcn", routing={"ecmp": "per_message", "detection_delay": "20us"},
                                                               messages=incast(["h4", "h5", "h6", "h7"], "h0", "8MB"),
                                                               events=[{"at": "1ms", "kind": "link_down", "link": ["leaf1", "spine0"]}]))
    add("fail_ib_link_up_mid_a2a_16M", "failure", lossless_ib(leaf_spine(fabric_rate="100Gbps"), 3, routing={"ecmp": "per_packet", "detection_delay": "10us"},
                                                             collectives=[coll("all_to_all", "16MiB", start="30us")],
                                                             events=[{"at": "0us", "kind": "link_down", "link": ["leaf0", "spine1"]},
                                                                     {"at": "400us", "kind": "link_up", "link": ["leaf0", "spine1"]}]))
    add("fail_oq_between_phases_64M", "failure", lossless_oq(leaf_spine(fabric_rate="100Gbps"), 4, routing={"ecmp": "per_message", "detection_delay": "20us"},
                                                             collectives=[coll("all_reduce", "4MiB", algorithm="ring", name="p1"),
                                                                          coll("all_reduce", "64MiB", algorithm="ring", name="p2", start="2ms")],
                                                             events=[{"at": "1500us", "kind": "link_down", "link": ["leaf1", "spine1"]}]))
    add("fail_roce_hpcc_link_up_mid_ar_32M", "failure", roce(leaf_spine(fabric_rate="100Gbps"), 5, "hpcc", routing={"ecmp": "per_message", "detection_delay": "10us"},
                                                             collectives=[coll("all_reduce", "32MiB", algorithm="ring", packet_size=1000, header=48, start="30us")],
                                                             events=[{"at": "0us", "kind": "link_down", "link": ["leaf1", "spine0"]},
                                                                     {"at": "2ms", "kind": "link_up", "link": ["leaf1", "spine0"]}]))

    # -- UDP CBR background -------------------------------------------------------------------------------------------------
    add("cbr_bg_incast_ib_8M", "udp", lossless_ib(leaf_spine(fabric_rate="100Gbps"), 1, messages=incast(["h1", "h4", "h5"], "h0", "8MB", 1024, 0),
                                                  sources=[{"name": "bg", "kind": "cbr", "src": "h6", "dst": "h2", "rate": "20Gbps", "packet_size": 1024,
                                                            "header": 64, "stop": "2ms"}]), quick=False)
    add("cbr_bg_roce_ar_dcqcn_8M", "udp", roce(leaf_spine(fabric_rate="100Gbps"), 2, "dcqcn", collectives=[coll("all_reduce", "8MiB", ["h0", "h1", "h4", "h5"], "ring", 1000, 48)],
                                               sources=[{"name": "bg", "kind": "cbr", "src": "h2", "dst": "h6", "rate": "30Gbps", "packet_size": 1000,
                                                         "header": 48, "stop": "1ms"}]))
    return C


# ---- measurement --------------------------------------------------------------------------------------------

def _fcts(rec) -> np.ndarray:
    """Per-message flow completion times (s) of the completed messages, in record order."""
    from fabricsim.record import FLOW_KINDS, MISSING, PS

    c = rec.columns
    msg = c["flows.kind"] == FLOW_KINDS.index("message")
    start, done = c["flows.start_ps"][msg], c["flows.complete_ps"][msg]
    ok = (start != MISSING) & (done != MISSING)
    out = np.full(len(start), np.nan)
    out[ok] = (done[ok].astype(np.float64) - start[ok].astype(np.float64)) * PS
    return out


def _rel(h: float | None, p: float | None) -> float | None:
    if h is None or p is None or not math.isfinite(h) or not math.isfinite(p) or p == 0:
        return None
    return h / p - 1.0


def _one(sc, workload, fidelity: str) -> tuple[Any, float]:
    import fabricsim

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = fabricsim.run(sc, fidelity=fidelity, workload=workload, max_wall_s=MAX_WALL_S)
    return rec, time.perf_counter() - t0


def measure(case: Case) -> dict:
    """Run `case` at packet and at hybrid fidelity; every figure of the comparison as a dict."""
    r: dict[str, Any] = {"name": case.name, "category": case.category, "notes": case.notes}
    try:
        sc, wl = case.build()
        p, p_total = _one(sc, wl, "packet")
        h, h_total = _one(sc, wl, "hybrid")
    except Exception as e:  # noqa: BLE001 — the report names the failure and goes on
        r["error"] = f"{type(e).__name__}: {e}"
        r["traceback"] = traceback.format_exc(limit=3)
        return r
    fp, fh = _fcts(p), _fcts(h)
    both = np.isfinite(fp) & np.isfinite(fh)
    ff = h.fast_forward or {}
    pct = lambda v: None if v is None else v * 100  # noqa: E731
    per_flow = (fh[both] / fp[both] - 1.0) if both.any() else np.zeros(0)
    r.update(
        packet_completion_s=p.completion_time_s, hybrid_completion_s=h.completion_time_s,
        packet_complete=p.complete, hybrid_complete=h.complete, packet_halted=p.halted, hybrid_halted=h.halted,
        completion_err_pct=pct(_rel(h.completion_time_s, p.completion_time_s)),
        messages=int(len(fp)), messages_incomplete_packet=int((~np.isfinite(fp)).sum()),
        messages_incomplete_hybrid=int((~np.isfinite(fh)).sum()),
        fct_p50_packet_s=float(np.nanpercentile(fp, 50)) if np.isfinite(fp).any() else None,
        fct_p99_packet_s=float(np.nanpercentile(fp, 99)) if np.isfinite(fp).any() else None,
        fct_p50_hybrid_s=float(np.nanpercentile(fh, 50)) if np.isfinite(fh).any() else None,
        fct_p99_hybrid_s=float(np.nanpercentile(fh, 99)) if np.isfinite(fh).any() else None,
        fct_max_abs_per_flow_err_pct=float(np.abs(per_flow).max() * 100) if len(per_flow) else None,
        packet_engine_s=p.wall_s, hybrid_engine_s=h.wall_s, packet_total_s=p_total, hybrid_total_s=h_total,
        speedup=p.wall_s / h.wall_s if h.wall_s > 0 else None,
        speedup_total=p_total / h_total if h_total > 0 else None,
        packet_events=p.events, hybrid_events=h.events,
        packet_pkts=p.packets, hybrid_pkts=h.packets,
        jumps=ff.get("jumps"), window_s=ff.get("window_s"), skipped_s=ff.get("skipped_s"),
        skipped_packets=ff.get("skipped_packets"), note=ff.get("note"),
    )
    r["fct_p50_err_pct"] = pct(_rel(r["fct_p50_hybrid_s"], r["fct_p50_packet_s"]))
    r["fct_p99_err_pct"] = pct(_rel(r["fct_p99_hybrid_s"], r["fct_p99_packet_s"]))
    r["skipped_pct"] = (100 * r["skipped_s"] / p.completion_time_s) if (r["skipped_s"] is not None and p.completion_time_s) else None
    return r


def run_corpus(cases: list[Case], echo: Callable[[str], None] | None = print) -> list[dict]:
    out = []
    if echo:
        echo(_header())
    for c in cases:
        r = measure(c)
        out.append(r)
        if echo:
            echo(_row(r))
    return out


# ---- reporting ----------------------------------------------------------------------------------------------

_COLS = (("scenario", 34), ("category", 22), ("packet ms", 10), ("compl err %", 11), ("FCT p50 %", 10),
         ("FCT p99 %", 10), ("flow max %", 10), ("speed-up", 9), ("jumps", 6), ("skipped %", 9))


def _f(v, fmt: str, width: int) -> str:
    return ("-" if v is None else format(v, fmt)).rjust(width)


def _header() -> str:
    return " ".join(n.ljust(w) if i < 2 else n.rjust(w) for i, (n, w) in enumerate(_COLS))


def _row(r: dict) -> str:
    w = [x[1] for x in _COLS]
    head = r["name"].ljust(w[0]) + " " + r["category"].ljust(w[1])
    if "error" in r:
        return f"{head} ERROR {r['error'][:160]}"
    cells = [_f(None if r["packet_completion_s"] is None else r["packet_completion_s"] * 1e3, ".3f", w[2]),
             _f(r["completion_err_pct"], "+.3f", w[3]), _f(r["fct_p50_err_pct"], "+.3f", w[4]),
             _f(r["fct_p99_err_pct"], "+.3f", w[5]), _f(r["fct_max_abs_per_flow_err_pct"], ".3f", w[6]),
             _f(r["speedup"], ".2f", w[7]) + "x", _f(r["jumps"], "d", w[8]), _f(r["skipped_pct"], ".1f", w[9])]
    flags = []
    if not r["packet_complete"]:
        flags.append("packet run incomplete" + (f" ({r['packet_halted']})" if r["packet_halted"] else ""))
    if not r["hybrid_complete"]:
        flags.append("HYBRID RUN INCOMPLETE" + (f" ({r['hybrid_halted']})" if r["hybrid_halted"] else ""))
    if r.get("note"):
        flags.append(f"note: {r['note']}")
    return head + " " + " ".join(cells) + ("  [" + "; ".join(flags) + "]" if flags else "")


def summary(results: list[dict]) -> dict:
    ok = [r for r in results if "error" not in r]
    ce = [abs(r["completion_err_pct"]) for r in ok if r["completion_err_pct"] is not None]
    p99 = [abs(r["fct_p99_err_pct"]) for r in ok if r["fct_p99_err_pct"] is not None]
    p50 = [abs(r["fct_p50_err_pct"]) for r in ok if r["fct_p50_err_pct"] is not None]
    fm = [r["fct_max_abs_per_flow_err_pct"] for r in ok if r["fct_max_abs_per_flow_err_pct"] is not None]
    sp = [r["speedup"] for r in ok if r["speedup"] is not None]
    spt = [r["speedup_total"] for r in ok if r["speedup_total"] is not None]
    med = lambda v: statistics.median(v) if v else None  # noqa: E731
    s = {
        "scenarios": len(results), "measured": len(ok), "errors": [r["name"] for r in results if "error" in r],
        "incomplete_hybrid": [r["name"] for r in ok if not r["hybrid_complete"]],
        "incomplete_packet": [r["name"] for r in ok if not r["packet_complete"]],
        "completion_abs_err_pct_median": med(ce), "completion_abs_err_pct_max": max(ce) if ce else None,
        "completion_worst": max(ok, key=lambda r: abs(r["completion_err_pct"] or 0))["name"] if ce else None,
        "fct_p99_abs_err_pct_median": med(p99), "fct_p99_abs_err_pct_max": max(p99) if p99 else None,
        "fct_p50_abs_err_pct_median": med(p50),
        "flow_max_abs_err_pct_median": med(fm), "flow_max_abs_err_pct_max": max(fm) if fm else None,
        "flow_worst": max(ok, key=lambda r: r["fct_max_abs_per_flow_err_pct"] or 0)["name"] if fm else None,
        "speedup_median": med(sp), "speedup_min": min(sp) if sp else None, "speedup_max": max(sp) if sp else None,
        "speedup_total_median": med(spt),
        "scenarios_with_jumps": sum(1 for r in ok if r["jumps"]),
    }
    met = lambda v, t: None if v is None else v <= t  # noqa: E731
    s["met"] = {"completion_median": met(s["completion_abs_err_pct_median"], TARGETS["completion_median_pct"]),
                "completion_max": met(s["completion_abs_err_pct_max"], TARGETS["completion_max_pct"]),
                "fct_p99_median": met(s["fct_p99_abs_err_pct_median"], TARGETS["fct_p99_median_pct"])}
    return s


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def summary_lines(results: list[dict]) -> list[str]:
    s = summary(results)
    g = lambda v, f=".3f": "-" if v is None else format(v, f)  # noqa: E731
    lines = [
        f"{s['measured']} of {s['scenarios']} scenarios measured"
        + (f"; errors: {', '.join(s['errors'])}" if s["errors"] else "")
        + (f"; hybrid incomplete: {', '.join(s['incomplete_hybrid'])}" if s["incomplete_hybrid"] else "")
        + (f"; packet incomplete: {', '.join(s['incomplete_packet'])}" if s["incomplete_packet"] else ""),
        f"completion time |error|: median {g(s['completion_abs_err_pct_median'])} % (target <= "
        f"{TARGETS['completion_median_pct']} %: {_verdict(s['met']['completion_median'])}), max "
        f"{g(s['completion_abs_err_pct_max'])} % ({s['completion_worst']}; target <= {TARGETS['completion_max_pct']} %: "
        f"{_verdict(s['met']['completion_max'])})",
        f"per-flow FCT p99 |error|, median over scenarios: {g(s['fct_p99_abs_err_pct_median'])} % (target <= "
        f"{TARGETS['fct_p99_median_pct']} %: {_verdict(s['met']['fct_p99_median'])}); max {g(s['fct_p99_abs_err_pct_max'])} %; "
        f"FCT p50 |error| median {g(s['fct_p50_abs_err_pct_median'])} %",
        f"largest single-message FCT |error| (same message at both fidelities; no target): median over scenarios "
        f"{g(s['flow_max_abs_err_pct_median'])} %, max {g(s['flow_max_abs_err_pct_max'])} % ({s['flow_worst']})",
        f"speed-up (engine seconds, packet / hybrid): median {g(s['speedup_median'], '.2f')}x, min "
        f"{g(s['speedup_min'], '.2f')}x, max {g(s['speedup_max'], '.2f')}x; whole fabricsim.run call: median "
        f"{g(s['speedup_total_median'], '.2f')}x; {s['scenarios_with_jumps']} of {s['measured']} scenarios jumped",
    ]
    return lines


def markdown(results: list[dict]) -> str:
    """The results as a Markdown table (one row per scenario) followed by the summary lines."""
    g = lambda v, f: "–" if v is None else format(v, f)  # noqa: E731
    out = ["| scenario | category | packet completion (ms) | completion error | FCT p50 error | FCT p99 error | "
           "largest message FCT error | speed-up | jumps | skipped |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "error" in r:
            out.append(f"| {r['name']} | {r['category']} | error: {r['error'][:80]} | | | | | | | |")
            continue
        pc = None if r["packet_completion_s"] is None else r["packet_completion_s"] * 1e3
        out.append(f"| {r['name']} | {r['category']} | {g(pc, '.3f')} | {g(r['completion_err_pct'], '+.3f')} % | "
                   f"{g(r['fct_p50_err_pct'], '+.3f')} % | {g(r['fct_p99_err_pct'], '+.3f')} % | "
                   f"{g(r['fct_max_abs_per_flow_err_pct'], '.3f')} % | "
                   f"{g(r['speedup'], '.2f')}× | {g(r['jumps'], 'd')} | {g(r['skipped_pct'], '.1f')} % |")
    return "\n".join(out) + "\n\n" + "\n".join(f"- {x}" for x in summary_lines(results)) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", metavar="PATH", help="write every figure (per scenario and the summary) as JSON")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="run only these scenarios")
    ap.add_argument("--quick", action="store_true", help="a smoke-test subset (~8 scenarios, one or two per category)")
    ap.add_argument("--list", action="store_true", help="list the corpus and exit")
    ap.add_argument("--markdown", action="store_true", help="also print the Markdown table")
    a = ap.parse_args(argv)
    cases = corpus()
    if a.list:
        for c in cases:
            print(f"{c.name:36} {c.category}{'  (quick)' if c.quick else ''}")
        return 0
    if a.only:
        want = [x.strip() for x in a.only.split(",") if x.strip()]
        unknown = sorted(set(want) - {c.name for c in cases})
        if unknown:
            print(f"unknown scenario(s): {', '.join(unknown)} (see --list)", file=sys.stderr)
            return 2
        cases = [c for c in cases if c.name in want]
    elif a.quick:
        cases = [c for c in cases if c.quick]
    t0 = time.perf_counter()
    results = run_corpus(cases)
    print()
    for line in summary_lines(results):
        print(line)
    print(f"({time.perf_counter() - t0:.1f} s in all)")
    if a.markdown:
        print()
        print(markdown(results))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"targets_pct": TARGETS, "summary": summary(results), "scenarios": results}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
