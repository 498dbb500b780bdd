"""`fabricsim trace rescale`: a data-parallel trace rescaled equals `trace synth` writing the larger one, a DP × TP
and a hand-built PP × DP trace keep their model-parallel groups and peers, ASTRA-sim's 8-rank all-reduce grows to
32 ranks and runs in its closed form, and what cannot be rescaled is one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fabricsim
from fabricsim.chakra import load, lower, rescale
from fabricsim.chakra import synth as sy
from fabricsim.chakra.synth import _Graph
from fabricsim.chakra.trace import COLL, RECV, SEND
from fabricsim.cli import main

from conftest import CHAKRA_TRACES

MODEL = sy.Model(layers=3, hidden=256, seq_len=128)
EXAMPLES = CHAKRA_TRACES / "astra-sim-examples"


def same_columns(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert np.array_equal(a[k], b[k]), k
        else:
            assert a[k] == b[k], k


def cli(capsys, *args) -> tuple[int, str]:
    rc = main(["trace", "rescale", *map(str, args)])
    return rc, capsys.readouterr().err


def test_data_parallel_4_to_16_is_synth_16(tmp_path, capsys):
    sy.write(tmp_path / "in" / "dp", sy.data_parallel(MODEL, 4, bucket_layers=2))
    rc, err = cli(capsys, tmp_path / "in", "--ranks", 16, "--out", tmp_path / "out")
    assert rc == 0 and "wrote 16 ranks (tp 1 × pp 1 × dp 16, from tp 1 × pp 1 × dp 4)" in err
    got = load(tmp_path / "out" / "dp")
    want = sy.data_parallel(MODEL, 16, bucket_layers=2)
    assert len(got) == 16
    for r in range(16):
        same_columns(got[r].cols, want[r])
    # Every rank's all-reduces keep their bucket bytes: 2 layers × 12·h²·2 B, then the last layer's alone.
    coll = got[5].cols["comm_size"][got[5].cols["node_type"] == COLL].tolist()
    assert coll == [2 * 12 * 256**2 * 2, 12 * 256**2 * 2]
    assert not (tmp_path / "out" / "dp.comm_groups.json").exists()


def test_data_tensor_parallel_8_to_32_is_synth_32(tmp_path, capsys):
    traces, groups = sy.data_tensor_parallel(MODEL, 4, 2)
    sy.write(tmp_path / "in" / "t", traces, groups)
    # No --tp: the layout is inferred from t.comm_groups.json (tp 2: "tp{d}" within a replica, "dp{t}" across).
    rc, err = cli(capsys, tmp_path / "in" / "t", "--dp", 16, "--out", tmp_path / "out")
    assert rc == 0 and "(tp 2 × pp 1 × dp 16, from tp 2 × pp 1 × dp 4)" in err
    want, want_groups = sy.data_tensor_parallel(MODEL, 16, 2)
    got_groups = json.loads((tmp_path / "out" / "t.comm_groups.json").read_text())
    assert got_groups == want_groups
    assert got_groups["dp1"] == list(range(1, 32, 2)) and got_groups["tp15"] == [30, 31]
    got = load(tmp_path / "out" / "t")
    for r in range(32):
        same_columns(got[r].cols, want[r])


def pp_dp(dp: int, size: int) -> tuple[list[dict], dict[str, list[int]]]:
    """A 2-stage pipeline × dp replicas, rank = d + dp·p: stage 0 computes and sends its activations (tag 7) to
    stage 1 of its replica, which receives them; then each stage all-reduces `size` gradient bytes over its
    data-parallel group "grad_s{p}"."""
    out = []
    for r in range(2 * dp):
        d, p = r % dp, r // dp
        g = _Graph()
        if p == 0:
            c = g.comp(0, "forward", MODEL, 10**9, 10**6)
            s = g.p2p(1, SEND, "send_act", r, d + dp, 7, 4096)
            g.dep(c, s)
        else:
            s = g.p2p(0, RECV, "recv_act", d, r, 7, 4096)
            c = g.comp(1, "forward", MODEL, 10**9, 10**6)
            g.dep(s, c)
        a = g.add(2, COLL, "grad_all_reduce", f"grad_s{p}", comm_type=0, comm_size=size)
        g.dep(c, a)
        out.append(g.columns())
    return out, {f"grad_s{p}": [d + dp * p for d in range(dp)] for p in range(2)}


def test_pipeline_by_data_parallel_keeps_its_peers(tmp_path, capsys):
    traces, groups = pp_dp(2, 1 << 20)
    sy.write(tmp_path / "in" / "pp", traces, groups)
    # Inferred: tp 1 × pp 2 × dp 2 (tp 2 would put ranks 0 and 2, which send to each other, in two replicas).
    rc, err = cli(capsys, tmp_path / "in" / "pp", "--ranks", 6, "--out", tmp_path / "out")
    assert rc == 0 and "(tp 1 × pp 2 × dp 3, from tp 1 × pp 2 × dp 2)" in err
    got = load(tmp_path / "out" / "pp")
    # New rank 4 = (d 1, p 1) runs old rank 3's program (d 1, p 1), receiving from (d 1, p 0) = new rank 1; new
    # rank 5 = (d 2, p 1) runs old rank 2's (d 2 mod 2 = 0, p 1), receiving from (d 2, p 0) = new rank 2.
    assert [int(t.cols["comm_src"][0]) for t in got[3:]] == [0, 1, 2]
    assert [int(t.cols["comm_dst"][1]) for t in got[:3]] == [3, 4, 5]
    assert json.loads((tmp_path / "out" / "pp.comm_groups.json").read_text()) == {"grad_s0": [0, 1, 2], "grad_s1": [3, 4, 5]}
    # The same as building the 6-rank trace directly.
    want, _ = pp_dp(3, 1 << 20)
    for r in range(6):
        same_columns(got[r].cols, want[r])


@pytest.mark.shared
def test_astra_sims_all_reduce_8_to_32_runs_its_closed_form(tmp_path, capsys):
    rc, err = cli(capsys, EXAMPLES / "all_reduce" / "8npus_1MB" / "all_reduce", "--ranks", 32, "--out", tmp_path)
    assert rc == 0
    got = load(tmp_path / "all_reduce")
    # 32 files of one COMM_COLL node each: ALL_REDUCE of 1 MiB, all ranks (no pg_name), as the 8 were.
    assert [t.n for t in got] == [1] * 32
    for t in got:
        c = t.cols
        assert (int(c["node_type"][0]), int(c["comm_type"][0]), int(c["comm_size"][0])) == (COLL, 0, 1 << 20)
        assert t.pg(0) is None
    # On an ideal star of 32 (1 B/ns, 1 KiB packets): ring all-reduce, 2·31 steps of S/32 + one packet's
    # store-and-forward: 62 × (32,768 + 1,024) ns.
    sc = fabricsim.scenario_from_dict({"topology": {
        "kind": "custom", "nodes": [{"name": f"h{i}", "kind": "host"} for i in range(32)] + [{"name": "s", "kind": "switch"}],
        "links": [{"a": f"h{i}", "b": "s", "rate": "8Gbps"} for i in range(32)]}})
    rec = fabricsim.run(sc, workload=lower(got, sc).workload)
    assert rec.completion_time_s * 1e9 == pytest.approx(62 * (32_768 + 1_024), rel=1e-9)


@pytest.mark.shared
def test_all_gather_block_shrinks_total_stays(tmp_path, capsys):
    pfx = EXAMPLES / "all_gather" / "8npus_1MB" / "all_gather"
    assert cli(capsys, pfx, "--ranks", 16, "--out", tmp_path / "total")[0] == 0
    assert cli(capsys, pfx, "--ranks", 16, "--all-gather-size", "block", "--out", tmp_path / "block")[0] == 0
    # The gathered buffer stays: read as the total, comm_size stays 1 MiB; read as each rank's block (ASTRA-sim),
    # the 8 MiB buffer now comes from 16 ranks: 1 MiB × 8 / 16 = 512 KiB each.
    assert int(load(tmp_path / "total" / "all_gather")[9].cols["comm_size"][0]) == 1 << 20
    assert int(load(tmp_path / "block" / "all_gather")[9].cols["comm_size"][0]) == 512 << 10


def test_the_python_function(tmp_path):
    traces, groups = sy.data_tensor_parallel(MODEL, 2, 2)
    sy.write(tmp_path / "t", traces, groups)
    res = rescale(load(tmp_path / "t"), 12, comm_groups=groups)
    assert (str(res.before), str(res.after), len(res.traces)) == ("tp 2 × pp 1 × dp 2", "tp 2 × pp 1 × dp 6", 12)
    assert res.comm_groups["dp0"] == [0, 2, 4, 6, 8, 10] and res.comm_groups["tp5"] == [10, 11]


BAD = [
    # (the trace: DP × TP 4 × 2 or a 4-stage pipeline, the options, the line)
    ("dp_tp", ["--ranks", 31], "fabricsim trace rescale: --ranks: 31 is not a multiple of the replica's tp × pp = 2 "
                               "ranks (tp 2 × pp 1 × dp 4)"),
    ("dp_tp", ["--ranks", 16, "--dp", 8], "fabricsim trace rescale: give the new size: --ranks N or --dp D (one of them)"),
    ("dp_tp", ["--dp", 1], "fabricsim trace rescale: --dp: 1 data-parallel replica: a rescaled trace needs at least 2"),
    ("dp_tp", ["--ranks", 16, "--tp", 3], "fabricsim trace rescale: --tp: tp × pp = 3 does not divide the trace's 8 ranks"),
    ("dp_tp", ["--ranks", 16, "--tp", 1], "communicator 'tp0' (ranks [0, 1]) spans data-parallel replicas without "
                                          "being a data-parallel group of tp 1 × pp 1 × dp 8"),
    ("pp", ["--ranks", 8], "rank 0 sends to or receives from rank 1, in another data-parallel replica (tp 1 × pp 1 × dp 4); "
                           "no other tp × pp layout"),
    ("pp", ["--ranks", 8, "--pp", 4], "tp 1 × pp 4 × dp 1: a single data-parallel replica has no data-parallel "
                                      "communication to grow"),
]


@pytest.mark.parametrize("kind,opts,said", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_rescales_are_one_line(tmp_path, capsys, kind, opts, said):
    if kind == "dp_tp":
        sy.write(tmp_path / "in" / "t", *sy.data_tensor_parallel(MODEL, 4, 2))
    else:
        sy.write(tmp_path / "in" / "t", sy.pipeline_parallel(sy.Model(layers=4, hidden=256, seq_len=128), 4, 2))
    rc, err = cli(capsys, tmp_path / "in" / "t", *opts, "--out", tmp_path / "out")
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert said in err, err
    assert not (tmp_path / "out").exists(), "nothing written"


@pytest.mark.shared
@pytest.mark.parametrize("example,said", [
    ("custom_ring_allreduce/8npus_1MB/custom_allreduce", "custom_allreduce: rank 0 sends to or receives from rank 1"),
    ("all_to_all/8npus_1MB/all_to_all", "all_to_all.0.et: node 0: ALL_TO_ALL over the data-parallel group is not "
                                        "rescaled: its experts per rank would stay, so the model would grow with dp"),
])
def test_astra_sim_examples_that_cannot_be_rescaled(tmp_path, capsys, example, said):
    rc, err = cli(capsys, EXAMPLES / example, "--ranks", 16, "--out", tmp_path / "out")
    assert rc == 2 and err.count("\n") == 1 and said in err, err


def test_out_must_not_be_the_trace(tmp_path, capsys):
    sy.write(tmp_path / "dp", sy.data_parallel(MODEL, 4))
    rc, err = cli(capsys, tmp_path / "dp", "--ranks", 8, "--out", tmp_path)
    assert rc == 2 and err.startswith("fabricsim trace rescale: --out: ") and "is the trace itself" in err
