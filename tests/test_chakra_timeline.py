"""Timelines of a simulated Chakra trace: the critical path of the custom ring all-reduce runs through all 7 reductions
and ends at the completion, the Perfetto JSON is well formed, and the Gantt chart is a real PNG, at both fidelities."""

import json

import numpy as np
import pytest

from fabricsim.chakra.timeline import critical_path, gantt, perfetto

from test_chakra import DATA, prefix, run_trace

RING = DATA / "custom_ring_allreduce" / "8npus_1MB" / "custom_allreduce"


def expanded_preds(low, kind, index):
    """(kind, index) of the work items `kind`/`index` waits for, barriers replaced by their own predecessors."""
    c = low.workload.columns()
    nm, nb = len(c["src"]), int(c["n_barriers"])
    ps, pred = c["pred_start"], c["pred"]
    out, todo = set(), [index if kind == "message" else nm + nb + index]
    while todo:
        node = todo.pop()
        for r in pred[ps[node]: ps[node + 1]].tolist():
            tag, i = r >> 30, r & ((1 << 30) - 1)
            if tag == 2:
                todo.append(nm + i)
            else:
                out.add(("compute" if tag == 3 else "message", i))
    return out


@pytest.fixture(scope="module", params=["packet", "flow"])
def ring(request):
    return run_trace(RING, 8, request.param)


@pytest.mark.shared
def test_critical_path_runs_through_every_reduction(ring):
    low, rec = ring
    path = critical_path(low, rec)
    assert path[-1]["end_s"] == pytest.approx(rec.completion_time_s, rel=1e-12)
    assert path[0]["start_s"] == 0.0 and expanded_preds(low, path[0]["kind"], path[0]["index"]) == set()
    for a, b in zip(path, path[1:]):
        assert (a["kind"], a["index"]) in expanded_preds(low, b["kind"], b["index"])
        assert a["end_s"] <= b["start_s"] + 1e-15
    compute = [it for it in path if it["kind"] == "compute"]
    assert len(compute) == 7 and sum(it["end_s"] - it["start_s"] for it in compute) == pytest.approx(7 * 7e-6, rel=1e-9)
    assert len({it["rank"] for it in compute}) == 7
    messages = [it for it in path if it["kind"] == "message"]
    assert len(messages) == 14 and all(it["bytes"] == (1 << 20) // 8 and it["dst_rank"] == (it["rank"] + 1) % 8 for it in messages)
    # the ring runs without gaps: every item starts when its predecessor ends
    assert sum(it["end_s"] - it["start_s"] for it in path) == pytest.approx(rec.completion_time_s, rel=1e-9)


@pytest.mark.shared
def test_perfetto_json(ring, tmp_path):
    low, rec = ring
    out = tmp_path / "ring.json"
    perfetto(low, rec, out, detail="messages")
    doc = json.loads(out.read_text())
    ev = doc["traceEvents"]
    assert ev and {e["ph"] for e in ev} <= {"M", "X"}
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    ranks = {pid: name for pid, name in names.items() if name.startswith("rank ")}
    assert sorted(ranks.values()) == sorted(f"rank {r} (h{r})" for r in range(8))
    xs = [e for e in ev if e["ph"] == "X"]
    assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in xs)
    assert sum(e["cat"] == "compute" for e in xs) == 56 and sum(e["cat"] == "message" for e in xs) == 2 * 112
    # events on one thread never overlap partially (Perfetto would misdraw them)
    by_thread = {}
    for e in xs:
        by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():
        spans.sort()
        assert all(b[0] >= a[1] - 1e-9 for a, b in zip(spans, spans[1:]))
    path = critical_path(low, rec)
    crit = [e for e in xs if e["cat"] == "critical_path"]
    (crit_pid,) = {e["pid"] for e in crit}
    assert names[crit_pid] == "critical path" and len(crit) == len(path)
    assert sum(e["dur"] for e in crit) == pytest.approx(sum((it["end_s"] - it["start_s"]) * 1e6 for it in path), rel=1e-12)
    assert max(e["ts"] + e["dur"] for e in xs) == pytest.approx(rec.completion_time_s * 1e6, rel=1e-12)


@pytest.mark.shared
def test_perfetto_collectives_track(tmp_path):
    low, rec = run_trace(prefix("all_reduce", 8), 8, "packet")
    perfetto(low, rec, tmp_path / "ar.json")
    doc = json.loads((tmp_path / "ar.json").read_text())
    colls = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "collective"]
    assert len(colls) == 1 and colls[0]["args"]["kind"] == "all_reduce" and colls[0]["args"]["bytes"] == 1 << 20
    assert colls[0]["ts"] + colls[0]["dur"] == pytest.approx(rec.completion_time_s * 1e6, rel=1e-12)
    assert len([e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "critical_path"]) == 14


@pytest.mark.shared
def test_gantt_writes_a_png(ring, tmp_path):
    low, rec = ring
    out = gantt(low, rec, tmp_path / "ring.png", title="custom ring all-reduce")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width = int.from_bytes(data[16:20], "big")
    assert 1200 <= width <= 1600


@pytest.mark.shared
def test_gantt_other_formats_and_rank_limit(tmp_path):
    low, rec = run_trace(prefix("all_reduce", 8), 8, "flow")
    svg = gantt(low, rec, tmp_path / "ar.svg", max_ranks=4)
    text = svg.read_text()
    # Beyond max_ranks every rank is still drawn, in groups of consecutive ranks: 8 ranks in 4 rows of 2.
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "all 8 ranks, 4 rows of 2" in text
    assert gantt(low, rec, tmp_path / "ar.pdf").read_bytes()[:5] == b"%PDF-"


def test_a_lone_compute_step_is_the_whole_path():
    import fabricsim
    from fabricsim.chakra import Lowered
    from test_chakra import star

    sc = star(2)
    low = Lowered(fabricsim.Workload(sc), ["h0", "h1"], [0, 1], rank_messages=[[], []], rank_compute=[[], []])
    low.workload.compute("h0", 5_000_000)
    low.rank_compute[0].append(0)
    rec = fabricsim.run(sc, workload=low.workload, fidelity="flow")
    assert np.isclose(rec.completion_time_s, 5e-6)
    (only,) = critical_path(low, rec)
    assert only == {"kind": "compute", "index": 0, "rank": 0, "host": "h0", "start_s": 0.0, "end_s": 5e-6}
