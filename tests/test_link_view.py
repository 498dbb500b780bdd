"""The link view (issue 33, deliverable 1), exports that scale (deliverable 5) and tables that say what they left out.

Hand calculation used throughout: ASTRA-sim's 1 MiB ring all-reduce on 8 ranks (tests/test_chakra.py's `star`: 8 hosts
on one switch, 8 Gb/s = 1 B/ns, 1 KiB packets without headers, no propagation delay). A ring all-reduce runs
2(n-1) = 14 steps, each moving one S/n = 128 KiB block per rank, so every host uplink (and every switch downlink)
carries 2(n-1)/n * S = 14 * 131,072 = 1,835,008 bytes in 1,792 packets; a step lasts its block's serialization plus
one packet's store-and-forward at the switch, 131,072 + 1,024 ns, so the run completes at 14 * 132,096 ns =
1.849344 ms and every link's utilization is 131,072 / 132,096 = 128/129 (8 Gb/s * 128/129 mean rate).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabricsim.chakra.timeline import aggregate, perfetto, rank_group_size
from fabricsim.cli import main
from fabricsim.cli._common import progress_measure
from fabricsim.cli._links import more_rows

from test_chakra import DATA, prefix, run_trace

ALL_REDUCE = prefix("all_reduce", 8)
RING = DATA / "custom_ring_allreduce" / "8npus_1MB" / "custom_allreduce"
BYTES = 14 * (1 << 20) // 8  # 2(n-1)/n * S
COMPLETION_S = 14 * (131_072 + 1_024) * 1e-9


def _star_file(tmp_path):
    fabric = tmp_path / "star.toml"
    fabric.write_text('[topology]\nkind = "custom"\nnodes = [' + ", ".join(f'{{name = "h{i}", kind = "host"}}' for i in range(8))
                      + ', {name = "s", kind = "switch"}]\nlinks = [' + ", ".join(f'{{a = "h{i}", b = "s", rate = "8Gbps"}}' for i in range(8)) + "]\n")
    return fabric


@pytest.mark.shared
@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_trace_run_links_by_hand(tmp_path, capsys, fidelity):
    fabric = _star_file(tmp_path)
    assert main(["trace", "run", str(ALL_REDUCE), "--fabric", str(fabric), "--fidelity", fidelity, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["completion_time_s"] == pytest.approx(COMPLETION_S, rel=1e-12)
    assert out["links_span_s"] == out["completion_time_s"]
    links = out["links"]
    assert sorted(x["name"] for x in links) == sorted([f"h{i}->s" for i in range(8)] + [f"s->h{i}" for i in range(8)])
    for x in links:
        assert (x["bytes"], x["packets"], x["rate_bps"]) == (BYTES, BYTES // 1024, 8_000_000_000)
        assert x["utilization"] == pytest.approx(128 / 129, rel=1e-12)
        assert x["gbps"] == pytest.approx(8 * 128 / 129, rel=1e-12)
        assert (x["pfc_pauses"], x["drops"]) == (0, 0)
        if fidelity == "flow":  # the fluid model has no queues
            assert x["peak_bytes"] is None and x["peak_packets"] is None
        else:  # a switch port holds at most the packet behind the one it serialises; hosts pace their own
            assert x["peak_packets"] in (0, 1) and x["peak_bytes"] == 1024 * x["peak_packets"]
    assert main(["trace", "run", str(ALL_REDUCE), "--fabric", str(fabric), "--fidelity", fidelity]) == 0
    text = capsys.readouterr().out
    assert "busiest links: 5 of 16 directed links (16 carried traffic" in text
    assert text.count("99.2%") == 5 and "1,835,008 B" in text


@pytest.mark.shared
def test_record_links_are_the_json_objects_and_rates_the_topologys():
    low, rec = run_trace(ALL_REDUCE, 8, "packet")
    assert rec.links() == rec.to_json_dict()["links"]
    assert rec.columns["queues.rate_bps"].tolist() == [8_000_000_000] * 16
    # busiest first: ties (all 16 links here) in port order
    assert [x["name"] for x in rec.links()][:2] == [rec.scalars["queue_names"][0], rec.scalars["queue_names"][1]]


def test_more_rows_line():
    assert more_rows(32, 32, "ranks") is None
    assert more_rows(32, 2880, "collectives") == "… 2,848 more collectives; --json has all"


@pytest.mark.shared
def test_trace_tables_say_what_they_left_out(tmp_path, capsys):
    # 40 layers, one gradient bucket each: 40 all-reduces, so the collectives table (32 rows) leaves 8 out.
    assert main(["trace", "synth", "dp", "--ranks", "4", "--layers", "40", "--hidden", "64", "--seq-len", "16",
                 "--out", str(tmp_path / "dp")]) == 0
    fabric = _star_file(tmp_path)
    assert main(["trace", "run", str(tmp_path / "dp"), "--fabric", str(fabric), "--fidelity", "flow", "--json"]) == 0
    n = len(json.loads(capsys.readouterr().out)["collectives"])
    assert n == 40
    assert main(["trace", "run", str(tmp_path / "dp"), "--fabric", str(fabric), "--fidelity", "flow"]) == 0
    text = capsys.readouterr().out
    assert f"… {n - 32:,} more collectives; --json has all" in text and "more ranks" not in text


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_progress_counts_the_messages_bytes(fidelity):
    import fabricsim

    from test_chakra import star

    sc = star(4)
    w = sc.workload()
    w.collective("all_to_all", ["h0", "h1", "h2", "h3"], 65_536)
    calls = []

    class Bytes:
        progress_bytes = True

        def __call__(self, *args, bytes_done=None, bytes_total=None):
            calls.append((args, bytes_done, bytes_total))

    rec = fabricsim.run(sc, workload=w, fidelity=fidelity, progress=Bytes())
    sizes = int(np.asarray(w.columns()["size"]).sum())
    assert sizes == 12 * 65_536  # n(n-1) = 12 messages of 64 KiB (an all-to-all's size is per destination)
    (args, done, total) = calls[-1]  # the final poll: everything delivered
    assert (done, total) == (sizes, sizes) and args[3:5] == (12, 12) and rec.complete
    assert all(0 <= d <= t for _, d, t in calls)
    plain = []
    fabricsim.run(sc, workload=w, fidelity=fidelity, progress=lambda *a: plain.append(a))
    assert plain and all(len(a) == 6 for a in plain)  # a plain callable keeps its six arguments


def test_progress_bar_text():
    assert progress_measure(0, None, 0, 992, 512 << 10, 1 << 20) == (512 << 10, 1 << 20, "512 KiB/1 MiB delivered, 0/992 messages")
    assert progress_measure(5, 10, 0, 992, 1, 2)[2] == "simulated time"
    assert progress_measure(0, None, 3, 4, None, None) == (3, 4, "3/4 messages")


@pytest.mark.shared
def test_aggregated_collective_spans_by_hand(tmp_path):
    # One ring all-reduce on a symmetric star: every rank sends its first block at 0 and receives its last at the
    # completion, so each rank's (group of 1) collective slice spans [0, completion], as does the collective's own.
    low, rec = run_trace(ALL_REDUCE, 8, "packet")
    agg = aggregate(low, rec)
    assert agg["group"] == 1 and agg["groups"] == 8
    comm = agg["comm"]
    assert comm["collective"].tolist() == [0] * 8 and comm["group"].tolist() == list(range(8))
    assert comm["start_ps"].tolist() == [0] * 8
    assert comm["end_ps"].tolist() == [round(COMPLETION_S * 1e12)] * 8
    assert comm["messages"].tolist() == [2 * 14] * 8  # 14 sent and 14 received per rank
    got = perfetto(low, rec, tmp_path / "ar.json")
    doc = json.loads((tmp_path / "ar.json").read_text())
    assert got["bytes"] == (tmp_path / "ar.json").stat().st_size and got["events"] == len(doc["traceEvents"])
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "collective_group"]
    assert len(slices) == 8 and all(e["ts"] == 0.0 and e["dur"] == pytest.approx(COMPLETION_S * 1e6, rel=1e-12) for e in slices)
    (coll,) = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "collective"]
    assert coll["ts"] == 0.0 and coll["ts"] + coll["dur"] == pytest.approx(COMPLETION_S * 1e6, rel=1e-12)
    assert doc["otherData"]["detail"] == "collectives"


@pytest.mark.shared
def test_aggregated_groups_by_hand():
    # The custom ring: 8 ranks, each sends 14 point-to-point messages to rank r+1 and runs 7 compute steps. In groups
    # of 4 (ranks 0-3, 4-7) the ring's edges 0->1, 1->2, 2->3 stay in group 0, 3->4 crosses to group 1, 4..7 stay
    # in group 1 and 7->0 crosses back: 42, 14, 14 and 42 messages; compute: 2 groups x 7 slots of 4 steps each.
    low, rec = run_trace(RING, 8, "packet")
    agg = aggregate(low, rec, group=4)
    p = agg["p2p"]
    got = {(a, b): k for a, b, k in zip(p["src_group"].tolist(), p["dst_group"].tolist(), p["messages"].tolist())}
    assert got == {(0, 0): 42, (0, 1): 14, (1, 0): 14, (1, 1): 42}
    c = agg["compute"]
    assert len(c["group"]) == 14 and c["steps"].tolist() == [4] * 14
    # slot 0 of group 0: from the earliest start to the latest end of ranks 0-3's first compute steps
    first = [low.rank_compute[r][0] for r in range(4)]
    row = int(np.flatnonzero((c["group"] == 0) & (c["slot"] == 0))[0])
    assert c["start_ps"][row] == rec.columns["compute.start_ps"][first].min()
    assert c["end_ps"][row] == rec.columns["compute.end_ps"][first].max()
    # the p2p slices run from the first release to the last delivery of their messages
    m = np.flatnonzero(rec.columns["flows.kind"] == 2)
    start, end = rec.columns["flows.start_ps"][m], rec.columns["flows.complete_ps"][m]
    assert int(p["start_ps"].min()) == int(start.min()) and int(p["end_ps"].max()) == int(end.max())


def test_rank_groups():
    assert rank_group_size(8) == 1 and rank_group_size(32) == 1
    assert rank_group_size(256) == 8 and rank_group_size(33) == 2
    assert rank_group_size(256, 64) == 4


def test_idle_is_what_neither_compute_nor_exposed_communication_covers(tmp_path, capsys):
    # tests/test_chakra_synth.py's data-parallel step by hand: finish 1,511.056 µs = compute 1,210 µs + the last
    # bucket's exposed all-reduce 301.056 µs, so no rank is ever idle (no pipeline, no bubble).
    from fabricsim.chakra import synth as sy
    from fabricsim.chakra.lower import summarize

    from test_chakra_synth import run

    traces = sy.data_parallel(sy.Model(layers=4, hidden=64, seq_len=32, forward_us=100, optimizer_us=10), 4,
                              bucket_layers=2)
    low, rec = run(tmp_path, traces, 4, "flow")
    for r in summarize(low, rec)["ranks"]:
        assert r["finish_s"] == pytest.approx(1511.056e-6, rel=1e-9)
        assert r["idle_s"] == pytest.approx(0.0, abs=1e-12)
    # A pipeline: stage 0 of tests/test_chakra_synth.py's 1F1B step computes 8·(10 + 20) + 3 = 243 µs of its
    # 414.92 µs; the rest is exposed communication (the gradients it waits for, in flight) or idle, the bubble.
    (tmp_path / "pp").mkdir()
    low, rec = run(tmp_path / "pp", sy.pipeline_parallel(sy.Model(layers=8, hidden=64, seq_len=32, forward_us=5,
                                                                  optimizer_us=3), 4, 8), 4, "flow")
    r0 = summarize(low, rec)["ranks"][0]
    assert r0["compute_s"] == pytest.approx(243e-6, rel=1e-9)
    assert r0["idle_s"] + r0["exposed_comm_s"] == pytest.approx(414.92e-6 - 243e-6, rel=1e-9)
    assert r0["idle_s"] > 0


@pytest.mark.shared
def test_collective_reports_its_first_seeds_links(tmp_path, capsys):
    fabric = _star_file(tmp_path)
    assert main(["collective", "--fabric", str(fabric), "--nodes", "h0,h1,h2,h3", "--pattern", "shift-all-reduce",
                 "--size", "64KiB", "--seeds", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["links_seed"] == 1 and len(out["links"]) == 16
    for x in out["links"]:
        used = x["name"].split("->")[0 if x["name"].startswith("h") else 1] in ("h0", "h1", "h2", "h3")
        assert (x["bytes"] > 0) == used  # h4..h7 take no part
        assert x["utilization"] == pytest.approx(x["bytes"] * 8 / (8e9 * out["links_span_s"]), rel=1e-12)
