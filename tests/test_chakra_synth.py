"""Synthetic training-step traces (fabricsim.chakra.synth): 1F1B and bucketed data parallelism match hand-derived step
times on a contention-free star at both fidelities, every kind round-trips through the writer and lowers, and a
million-node trace writes."""

import json

import numpy as np
import pytest

import fabricsim
from fabricsim import _core
from fabricsim.chakra import info, load, lower
from fabricsim.chakra import synth as sy
from test_chakra import star

P = 1024  # packet payload (B); links carry 1 byte per ns, so one packet's store-and-forward at the switch is 1024 ns


def run(tmp_path, traces, n, fidelity, groups=None):
    pfx = sy.write(tmp_path / "t", traces, groups)
    sc = star(n)
    low = lower(load(pfx), sc, comm_groups=sy.read_comm_groups(pfx))
    return low, fabricsim.run(sc, workload=low.workload, fidelity=fidelity)


def test_model_formulas():
    m = sy.Model(layers=2, hidden=64, seq_len=32, micro_batch=2)
    assert m.params_per_layer == 12 * 64 * 64 == 49152
    assert m.grad_bytes_per_layer == 98304  # 49152 parameters × 2 bytes
    assert m.activation_bytes == 2 * 32 * 64 * 2 == 8192
    assert m.forward_flops == 24 * 2 * 32 * 64**2 + 4 * 2 * 32**2 * 64 == 6815744
    assert m.backward_flops == 2 * m.forward_flops
    # Roofline at half the H100's peak: 6815744 FLOPs / (989e12 × 0.5) = 0.0138 µs, and 49152·2 + 2·8192 bytes
    # / (3.35e12 × 0.5) = 0.068 µs: both round to the 1 µs minimum.
    assert int(m.duration_us(m.forward_flops, 114688)) == 1
    # A 8192-wide layer, 16 × 2048 tokens: 24·16·2048·8192² + 4·16·2048²·8192 = 52776558133248 + 2199023255552
    # = 54975581388800 FLOPs, / 494.5e12 FLOP/s = 111174.08 µs; its bytes (12·8192²·2 = 1.61 GB of weights,
    # 2·16·2048·8192·2 = 1.07 GB of activations) take 1.6 ms at 1.675 TB/s, so the FLOPs bound: 111174 µs.
    big = sy.Model(layers=1, hidden=8192, seq_len=2048, micro_batch=16)
    assert big.forward_flops == 54975581388800
    nbytes = big.grad_bytes_per_layer + 2 * big.activation_bytes
    assert int(big.duration_us(big.forward_flops, nbytes)) == 111174
    # Calibrated: forward_us = 5 makes one layer's forward 5 µs and its backward 10 µs.
    c = sy.Model(layers=2, hidden=64, seq_len=32, forward_us=5)
    assert c.duration_us([c.forward_flops, c.backward_flops], 0).tolist() == [5, 10]


def one_f_one_b_length(p, m, F, B, T):
    """The 1F1B DAG evaluated as a max-plus recurrence: each compute starts at the later of its predecessor in
    the stage's order and its input's arrival (producer's end + T); an independent check of the hand formula."""
    orders = []
    for s in range(p):
        w = min(p - s - 1, m)
        orders.append([("F", j) for j in range(w)] + [x for i in range(m - w) for x in (("F", w + i), ("B", i))]
                      + [("B", j) for j in range(m - w, m)])
    end, pos, clock = {}, [0] * p, [0] * p
    while any(pos[s] < 2 * m for s in range(p)):
        for s in range(p):
            while pos[s] < 2 * m:
                k, j = orders[s][pos[s]]
                src = ("F", s - 1, j) if k == "F" else (("F", s, j) if s == p - 1 else ("B", s + 1, j))
                if k == "F" and s == 0:
                    ready = 0
                elif src in end:
                    ready = end[src] + (0 if src[1] == s else T)
                else:
                    break
                clock[s] = end[(k, s, j)] = max(clock[s], ready) + (F if k == "F" else B)
                pos[s] += 1
    return max(clock)


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_pipeline_1f1b_matches_the_hand_schedule(tmp_path, fidelity):
    # 4 stages, 8 micro-batches; 8 layers → 2 per stage at forward_us = 5: F = 10 µs, B = 20 µs per stage and
    # micro-batch. Activations (and their gradients) are b·s·h·d = 1·32·64·2 = 4096 B: T = 4096 ns + one packet
    # (1024 ns) = 5.12 µs per hop. Each stage's order (w = 3 − s warm-up forwards):
    #   s0: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7
    #   s1: F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7
    #   s2: F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7
    #   s3: F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7
    # Critical path: micro-batch 0 down and back up (F0 on s0..s3, B0 on s3..s0: 4F + 4B + 6T); s0 runs F4 right
    # after B0, and micro-batch 4 goes down to s3 and back up to s1 (4F + 3B + 5T); s1 runs F7 right after B4,
    # and micro-batch 7 goes down from s1 and back up to s0 (3F + 4B + 5T): 11(F + B) + 16T, i.e.
    # (m + p − 1)(F + B) + 2T·(p − 1 + ⌊(m − 1)(p − 1)/p⌋) = 11·30 + 16·5.12 = 411.92 µs. The sends overlap
    # the next compute (nothing waits for a send to finish), so only the hops' T count. Then s0's optimizer
    # (3 µs; every other stage ends earlier and has the same optimizer): 414.92 µs. Every message lasts T < F
    # and the timeline has no two messages on one link at once, so the star adds no contention.
    model = sy.Model(layers=8, hidden=64, seq_len=32, forward_us=5, optimizer_us=3)
    F, B, T, p, m = 10.0, 20.0, 5.12, 4, 8
    assert (m + p - 1) * (F + B) + 2 * T * (p - 1 + (m - 1) * (p - 1) // p) == pytest.approx(411.92)
    assert one_f_one_b_length(p, m, F, B, T) == pytest.approx(411.92)
    traces = sy.pipeline_parallel(model, p, m)
    low, rec = run(tmp_path, traces, p, fidelity)
    assert rec.completion_time_s == pytest.approx(414.92e-6, rel=1e-9)
    assert len(low.rank_messages[0]) == 2 * m  # stage 0: 8 activations out, 8 gradients in
    # Stage 0: 8 forwards, 8 backwards, 8 activation sends, 8 gradient receives, the optimizer.
    c = traces[0]
    assert len(c["id"]) == 33
    assert sorted(c["comm_tag"][c["node_type"] == 5].tolist()) == [2 * j for j in range(8)]
    assert sorted(c["comm_tag"][c["node_type"] == 6].tolist()) == [2 * j + 1 for j in range(8)]


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_data_parallel_hides_all_but_the_last_bucket(tmp_path, fidelity):
    # 4 ranks, 4 layers, h = 64: 12·64² = 49152 parameters and 98304 gradient bytes per layer; buckets of 2
    # layers hold 196608 B. Ring all-reduce over 4 ranks: 2·3 = 6 steps of 196608/4 = 49152 B plus one packet at
    # the switch: 6 × (49152 + 1024) ns = 301.056 µs. forward_us = 100: forward 100 µs, backward 200 µs per layer.
    # Timeline: forwards 0–400; backward of layers 3, 2: 400–800; bucket 0's all-reduce 800–1101.056 under the
    # backward of layers 1, 0 (800–1200); bucket 1's all-reduce 1200–1501.056 with nothing to hide it; the
    # optimizer (10 µs) 1501.056–1511.056. Step = 4·100 + 4·200 + 301.056 + 10 = 1511.056 µs; exposed
    # communication per host = the last all-reduce, 301.056 µs; compute = 400 + 800 + 10 = 1210 µs.
    model = sy.Model(layers=4, hidden=64, seq_len=32, forward_us=100, optimizer_us=10)
    traces = sy.data_parallel(model, 4, bucket_layers=2)
    c = traces[0]
    coll = c["node_type"] == 7
    assert c["comm_size"][coll].tolist() == [196608, 196608] and (c["pg_name"][coll] == 2**32 - 1).all()
    low, rec = run(tmp_path, traces, 4, fidelity)
    assert rec.completion_time_s == pytest.approx(1511.056e-6, rel=1e-9)
    busy = rec.host_busy()
    assert len(busy) == 4
    for b in busy:
        assert b["exposed_comm_s"] == pytest.approx(301.056e-6, rel=1e-9)
        assert b["compute_s"] == pytest.approx(1210e-6, rel=1e-9)
    assert [x["bytes"] for x in low.collectives] == [196608, 196608]


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_tensor_parallel_chain(tmp_path, fidelity):
    # 2 ranks, 2 layers, forward_us = 10 per unsharded layer: 5 µs forward and 10 µs backward per rank. Each
    # all-reduce of 4096 activation bytes over 2 ranks: 2 ring steps of 2048 + 1024 ns = 6.144 µs; 4 of them
    # (2 layers × 2 directions) in the chain: 2·5 + 2·10 + 4·6.144 + 3 (optimizer) = 57.576 µs.
    model = sy.Model(layers=2, hidden=64, seq_len=32, forward_us=10, optimizer_us=3)
    _, rec = run(tmp_path, sy.tensor_parallel(model, 2), 2, fidelity)
    assert rec.completion_time_s == pytest.approx(57.576e-6, rel=1e-9)


def kinds():
    m = sy.Model(layers=4, hidden=64, seq_len=32, micro_batch=2)
    tr, groups = sy.data_tensor_parallel(m, dp=2, tp=2, bucket_layers=2)
    return {
        "data": (sy.data_parallel(m, 4, bucket_layers=3), None, 4),
        "tensor": (sy.tensor_parallel(m, 4, collective="all_gather"), None, 4),
        "pipeline": (sy.pipeline_parallel(m, 4, 3), None, 4),
        "expert": (sy.expert_parallel(m, 4, experts_per_rank=2, top_k=2), None, 4),
        "dp_tp": (tr, groups, 4),
    }


def assert_same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("kind", ["data", "tensor", "pipeline", "expert", "dp_tp"])
def test_round_trip_and_lowering(tmp_path, kind):
    traces, groups, n = kinds()[kind]
    pfx = sy.write(tmp_path / kind, traces, groups)
    for r, cols in enumerate(traces):
        assert_same(cols, _core.read_chakra(f"{pfx}.{r}.et"))
        assert (cols["id"] == np.arange(len(cols["id"]))).all()
        # file order is an execution order: every dependency points backwards
        for key in ("data", "ctrl"):
            owner = np.repeat(np.arange(len(cols["id"])), np.diff(cols[f"{key}_dep_start"]))
            assert (cols[f"{key}_deps"] < owner).all()
    assert sy.read_comm_groups(pfx) == groups
    # These small models compute for a few µs against messages of several µs, so links are shared and the two
    # fidelities may differ; each step still lasts at least its longest chain of compute within a rank.
    floor_s = info(load(pfx))["critical_path_compute_us"] * 1e-6
    for fidelity in ("packet", "flow"):
        sc = star(n)
        low = lower(load(pfx), sc, comm_groups=groups)
        rec = fabricsim.run(sc, workload=low.workload, fidelity=fidelity)
        assert rec.completion_time_s >= floor_s > 0


def test_dp_tp_communicators(tmp_path):
    # tp-major: rank r = i·tp + k is in "tp{r // tp}" and "dp{r % tp}".
    m = sy.Model(layers=3, hidden=64, seq_len=32)
    traces, groups = sy.data_tensor_parallel(m, dp=2, tp=3)
    assert groups == {"tp0": [0, 1, 2], "tp1": [3, 4, 5], "dp0": [0, 3], "dp1": [1, 4], "dp2": [2, 5]}
    for r, c in enumerate(traces):
        coll = c["node_type"] == 7
        pgs = [c["names"][k] for k in c["pg_name"][coll].tolist()]
        assert set(pgs) == {f"tp{r // 3}", f"dp{r % 3}"}
        # 3 layers × 2 directions of TP all-reduces of b·s·h·d = 4096 B; 3 gradient buckets of 1/3 of 98304 B
        assert pgs.count(f"tp{r // 3}") == 6 and pgs.count(f"dp{r % 3}") == 3
        assert sorted(set(c["comm_size"][coll].tolist())) == [4096, 32768]
    pfx = sy.write(tmp_path / "h", traces, groups)
    assert json.loads((tmp_path / "h.comm_groups.json").read_text()) == groups
    low = lower(load(pfx), star(6), comm_groups=groups)
    assert len(low.collectives) == 2 * 6 + 3 * 3  # 2 TP groups × 6, 3 DP groups × 3


def test_million_node_trace_writes(tmp_path):
    # data parallel over 2 ranks, 333333 layers, one layer per bucket: per rank 333333 forwards, 333333
    # backwards, 333333 all-reduces and the optimizer = 1,000,000 nodes.
    model = sy.Model(layers=333_333, hidden=1024, seq_len=2048)
    traces = sy.data_parallel(model, 2)
    assert len(traces[0]["id"]) == 1_000_000
    pfx = sy.write(tmp_path / "big", traces[:1])
    back = _core.read_chakra(f"{pfx}.0.et")
    assert len(back["id"]) == 1_000_000 and len(back["data_deps"]) == len(traces[0]["data_deps"])


def test_lower_reads_the_comm_groups_beside_the_trace(tmp_path):
    """Issue 33: `lower` without `comm_groups` reads PREFIX.comm_groups.json as `fabricsim trace run` does, so a
    DP×TP trace lowers in Python. DP 2 × TP 2 on 4 ranks: each TP pair and each DP pair is a communicator of 2
    ranks; read as "all ranks" (the old behaviour) every collective would span 4 ranks instead."""
    m = sy.Model(layers=1, hidden=64, seq_len=32, micro_batch=2)
    traces, groups = sy.data_tensor_parallel(m, 2, 2)
    pfx = sy.write(tmp_path / "dptp", traces, groups)
    assert all(len(v) == 2 for v in groups.values()) and len(groups) == 4
    implicit = lower(load(pfx), star(4))
    explicit = lower(load(pfx), star(4), comm_groups=groups)
    assert implicit.collectives == explicit.collectives
    assert all(len(c["ranks"]) == 2 for c in implicit.collectives)
    (tmp_path / "dptp.comm_groups.json").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(fabricsim.errors.ScenarioError, match=r"dptp\.comm_groups\.json: not a JSON object"):
        lower(load(pfx), star(4))
