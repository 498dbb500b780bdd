"""SimAI/AICB workload files (`fabricsim train --aicb`, `fabricsim.train.aicb_plan`): read as SimAI's Workload.cc
reads them, checked against the headers and SimAI's own totals (benchmarks/data/simai/*.json, SimAI cef83f9's
analytical runs of these files), and lowered onto ideal fabrics where the step is a closed form derived in each
test's docstring.

NCCL's latency (train.costs, from NVIDIA/nccl src/graph/tuning.cc): a ring collective of n ranks takes
8.4 µs + 3.4 µs per step inside a server and 9.6 µs per step between servers; an all-reduce takes 2·(n − 1) steps,
an all-gather, a reduce-scatter or an all-to-all n − 1. A rail-optimized server's NVLink carries 3,600 Gb/s =
450 GB/s per GPU and direction by default.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricsim.cli import main
from fabricsim.errors import UserError
from fabricsim.train import aicb_plan
from fabricsim.train.aicb import micro_batches, program, read_aicb

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "simai"
WORKLOADS = sorted((DATA / "workloads").glob("*.txt"))
NV = 450e9
HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: {ep} pp: {pp} vpp: 1 ga: {ga} " \
         "all_gpus: {gpus} checkpoints: 0 checkpoint_initiates: 0 pp_comm: {pp_comm}"


def _rail(tmp_path, servers: int, gpus: int, rate: str = "1000Tbps") -> str:
    """`servers` servers of `gpus` GPUs (NVLink 450 GB/s), no delay anywhere, network links at `rate`."""
    p = tmp_path / "rail.toml"
    p.write_text(f'[topology]\nkind = "rail_optimized"\nsus = 1\nservers_per_su = {servers}\ngpus_per_server = {gpus}\n'
                 f'spines = 1\nrate = "{rate}"\ndelay = 0\nnvlink_latency = 0\n')
    return str(p)


def _file(tmp_path, rows: list[str], name: str = "w.txt", **header) -> str:
    h = {"tp": 1, "ep": 1, "pp": 1, "ga": 1, "gpus": 8, "pp_comm": 0, **header}
    p = tmp_path / name
    p.write_text(HEADER.format(**h) + f"\n{len(rows)}\n" + "\n".join(rows) + "\n")
    return str(p)


def _row(name: str, fwd=(0, "NONE", 0), ig=(0, "NONE", 0), wg=(0, "NONE", 0)) -> str:
    return "\t".join(map(str, (name, -1, *fwd, *ig, *wg, 100)))


def _lat(steps_nvlink: int, steps_net: int = 0) -> float:
    return 8.4e-6 + steps_nvlink * 3.4e-6 + steps_net * 14e-6


# ---- reading ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.stem)
def test_every_stored_workload_reads_with_simai_s_header_and_total_compute(path):
    """Each file's header agrees with the JSON record of SimAI's run of it (TP, PP, EP, GA, vpp, pp_comm as SimAI
    printed them), and its rows' compute adds up to SimAI's `total comp` (whole µs, so within 1 µs)."""
    f = read_aicb(path)
    assert len(f.rows) == int(path.read_text().splitlines()[1])
    runs = [json.loads(p.read_text()) for p in DATA.glob("*.json")]
    runs = [r for r in runs if Path(r["workload_copy"]).name == path.name and r["backend"] == "analytical"]
    assert runs, f"no SimAI run of {path.name}"
    for r in runs:
        assert (f.tp, f.pp, f.ep, f.ga, f.vpp) == (r["tp"], r["pp"], r["ep"], r["ga"], r["vpp"])
        assert f.pp_comm == r.get("pp_comm_bytes", 0)
        assert f.compute_ns() * 1e-9 == pytest.approx(r["breakdown"]["total comp"], abs=1.5e-6)


def test_gpt13b_header_and_rows_read_by_hand():
    """gpt13b_tp8pp2dp16_aiob.txt line 1: `model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 20 ga: 32 all_gpus: 256 …
    pp_comm: 2621440.0` (std::stoi reads 2621440); line 2: 2637; line 3: grad_gather's weight-gradient ALLGATHER of
    1,921,925,120 bytes, which no suffix makes a DP collective. Six rows run once, then 32 micro-batches of 82 rows
    (embedding_layer, 20 layers × 4 rows, final_column), then cross_entropy1-3 and optimizer1-4."""
    f = read_aicb(DATA / "workloads" / "gpt13b_tp8pp2dp16_aiob.txt")
    assert (f.tp, f.ep, f.pp, f.vpp, f.ga, f.all_gpus, f.pp_comm, len(f.rows)) == (8, 1, 2, 20, 32, 256, 2621440, 2637)
    g = f.rows[0]
    assert (g.name, g.line, g.fwd, g.ig, g.wg.kind, g.wg.group, g.wg.size) == (
        "grad_gather", 3, None, None, "all_gather", "dp", 1921925120)
    assert micro_batches(f) == (6, 82, 7)
    assert f.rows[6].name == "embedding_layer" and f.rows[6 + 82].name == "embedding_layer"
    a = f.rows[7]
    assert (a.name, a.fwd_ns, a.fwd.kind, a.fwd.group, a.fwd.size, a.ig.kind, a.ig.size) == (
        "attention_column", 910000, "all_gather", "tp", 20971520, "reduce_scatter", 0)


def test_the_9216_gpu_moe_example_header_and_groups_read_by_hand():
    """SimAI's example/workload_analytical.txt writes `pp_comm 50331648` without a colon (SimAI reads both): TP 2,
    EP 16, PP 12, vpp 8, GA 24 on 9,216 GPUs, so DP = 9216 / (2 · 12) = 384 and the expert weights' group 24. Its
    `_EP` and `_DP_EP` suffixes name the groups; an unsuffixed ALLTOALL in the forward column is TP's."""
    f = read_aicb(DATA / "workloads" / "simai_example_9216_moe.txt")
    assert (f.tp, f.ep, f.pp, f.vpp, f.ga, f.all_gpus, f.pp_comm, len(f.rows)) == (2, 16, 12, 8, 24, 9216, 50331648, 1789)
    assert f.dp(9216) == 384
    assert micro_batches(f) == (6, 74, 7)
    by = {(r.fwd.text if r.fwd else None): r.fwd for r in f.rows}
    assert (by["ALLTOALL_EP"].kind, by["ALLTOALL_EP"].group, by["ALLTOALL_EP"].size) == ("all_to_all", "ep", 100663296)
    assert (by["ALLTOALL"].kind, by["ALLTOALL"].group) == ("all_to_all", "tp")
    assert (f.rows[5].wg.kind, f.rows[5].wg.group, f.rows[5].wg.size) == ("reduce_scatter", "dp_ep", 38654705664)


def test_simai_s_prefix_order_reads_allreduce_alltoall_as_an_all_reduce_of_no_group(tmp_path):
    """Workload.cc tests ALLREDUCE before ALLREDUCEALLTOALL, so the latter is an all-reduce whose suffix names no
    group (not simulated, with a warning); BROADCAST is no communication (a warning naming its line)."""
    f = read_aicb(_file(tmp_path, [_row("a", fwd=(5, "ALLREDUCEALLTOALL", 4096)), _row("b", fwd=(5, "BROADCAST", 8))]))
    assert (f.rows[0].fwd.kind, f.rows[0].fwd.group) == ("all_reduce", "none")
    assert f.rows[1].fwd is None
    assert any(":4: forward comm type 'BROADCAST'" in w for w in f.warnings)
    assert any(":3: forward comm type 'ALLREDUCEALLTOALL' has no group" in w for w in f.warnings)


@pytest.mark.parametrize("rows, where, words", [
    (["a\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0"], ":3: row 1 of 1: 11 fields, a row has 12", None),
    ([_row("a"), "b\t-1\t1.5\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t100"], ":4: row 2 of 2 ('b'): field 3, forward compute",
     "got '1.5'"),
    ([_row("a"), _row("b", ig=(-3, "NONE", 0))], ":4: row 2 of 2 ('b'): field 6, input-gradient compute", "got '-3'"),
    ([_row("a", wg=(1, "ALLGATHER", "1e9"))], ":3: row 1 of 1 ('a'): field 11, weight-gradient comm bytes", None),
])
def test_a_malformed_row_names_its_file_and_line(tmp_path, rows, where, words):
    p = _file(tmp_path, rows)
    with pytest.raises(UserError) as e:
        read_aicb(p)
    msg = str(e.value)
    assert msg.startswith(p + where) and "\n" not in msg
    assert words is None or words in msg


@pytest.mark.parametrize("text, words", [
    ("MICRO model_parallel_NPU_group: 8\n0\n", ":1: 'MICRO' is not the parallelism policy"),
    ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 all_gpus: 128\n0\n", ":1: ep: missing"),
    ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: eight ep: 1 pp: 1 vpp: 1 ga: 1\n0\n",
     ":1: model_parallel_NPU_group: expects a whole number after it, got 'eight'"),
    (HEADER.format(tp=1, ep=1, pp=1, ga=1, gpus=8, pp_comm=0) + "\nmany\n", ":2: expected the number of rows"),
    (HEADER.format(tp=1, ep=1, pp=1, ga=1, gpus=8, pp_comm=0) + "\n3\n" + _row("a") + "\n", ":2: the header announces 3 rows, but the file has 1"),
    (HEADER.format(tp=1, ep=1, pp=1, ga=1, gpus=8, pp_comm=0).replace("checkpoints: 0", "checkpoints: 1 4") + "\n0\n",
     ":1: checkpoints: 1: activation recomputation"),
])
def test_a_bad_header_names_its_line(tmp_path, text, words):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(UserError, match=None) as e:
        read_aicb(p)
    assert str(e.value).startswith(str(p) + words), str(e.value)


def test_the_cli_refuses_bad_input_with_one_line_and_exit_2(tmp_path, capsys):
    fab = _rail(tmp_path, 1, 8)
    bad = _file(tmp_path, [_row("a"), "b\t-1\t1\tNONE"], name="bad.txt")
    good = str(DATA / "workloads" / "simai_example_microallreduce_8.txt")
    for argv, words in (
            (["--aicb", bad], f"{bad}:4: row 2 of 2: 4 fields"),
            (["--aicb", good, "--tp", "4"], "--tp 4: the AICB file"),
            (["--aicb", good, "--model", "gpt3-13b"], "--model: not with --aicb"),
            (["--aicb", good, "--global-batch", "8"], "--global-batch: not with --aicb"),
            (["--aicb", good, "--gpus", "4"], "--gpus: 4 GPUs are not a multiple of TP × PP = 8 × 1"),
            (["--aicb", str(tmp_path / "none.txt")], "cannot read the AICB workload file"),
            ([], "give the job: --model NAME|FILE (or --aicb FILE)")):
        assert main(["train", "--fabric", fab, *argv]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# ---- simulated on ideal fabrics ----------------------------------------------------------------------------------

def test_simai_s_micro_all_reduce_example_is_compute_plus_nccl_s_closed_form(tmp_path, capsys):
    """SimAI's example/microAllReduce.txt on one server of 8 GPUs: two rows of 556,000 ns forward compute (and 1 ns
    of input- and weight-gradient compute each), each followed by a TP all-reduce of 16 MiB and 64 MiB. Closed form
    on NVLink as NCCL's model picks it: the ring's busbw is NVLink's planned 20/25 × 450 = 360 GB/s, its algbw
    360 · 8/14; 16 MiB goes LL128 (14 + 14 × 1.9 µs, × 0.92 bandwidth: 129.3 µs against Simple's 137.6), 64 MiB goes
    Simple (8.4 + 14 × 3.4 µs: 382.2 µs against LL128's 395.2). Step = compute + both; the CLI
    agrees (--json; --tp and --dp as the header and the GPUs say), and draws its figure and Perfetto trace."""
    fab = _rail(tmp_path, 1, 8)
    path = str(DATA / "workloads" / "simai_example_microallreduce_8.txt")
    r = aicb_plan(path, fabric=fab).run()
    compute = 2 * (556000 + 1 + 1) * 1e-9
    ring = 0.8 * NV * 8 / 14
    tp = (14 + 14 * 1.9) * 1e-6 + (16 << 20) / (0.92 * ring) + _lat(14) + (64 << 20) / ring
    b = r.summary["breakdown"]
    assert b["compute_s"] == pytest.approx(compute, rel=1e-9)
    assert b["exposed_s"]["tp"] == pytest.approx(tp, rel=1e-6)
    assert r.step_time_s == pytest.approx(compute + tp, rel=1e-6)
    assert r.summary["mfu"] is None and r.summary["job"]["tp"] == 8
    fig, trace = tmp_path / "f.png", tmp_path / "t.json"
    assert main(["train", "--aicb", path, "--fabric", fab, "--tp", "8", "--dp", "1", "--json", "--figure", str(fig),
                 "--perfetto", str(trace)]) == 0
    assert fig.stat().st_size > 0 and json.loads(trace.read_text())["traceEvents"]
    d = json.loads(capsys.readouterr().out)
    assert d["step_time_s"] == pytest.approx(compute + tp, rel=1e-6)
    assert d["traffic_bytes"]["tp"] == pytest.approx(8 * 2 * 7 / 8 * (80 << 20))


def test_tp2_pp2_dp2_pipeline_in_1f1b_with_the_sends_and_the_dp_reduce_scatter(tmp_path):
    """TP 2 × PP 2 × DP 2 on 4 servers of 2 GPUs (ranks t + 2·(d + 2·s): TP in a server, closed form; PP and DP
    across a 1 Pb/s fabric with no delay). Rows: one that runs once (a DP reduce-scatter of 64 MiB in its
    weight-gradient column), GA = 2 micro-batches of one layer (1 ms forward then a TP all-gather of 4 MiB; 2 ms
    input-gradient compute, a 4 MiB reduce-scatter, 1 ms weight-gradient compute), and a last row (a 4-byte TP
    all-reduce, which SimAI runs as 4,096 bytes). On NVLink, as NCCL's model picks it: a TP2 all-gather or
    reduce-scatter of 4 MiB runs Simple, 8.4 + 3.4 µs and S/2 at the ring's busbw 360 GB/s (17.6 µs against LL128's
    22.2 and LL's 22.1); the 4 KiB all-reduce runs LL, 6.6 + 2 × 0.6 µs and S at LL's cap 141 GB/s × 2/2. 1F1B with p = 2, m = 2: stage 1
    runs the last row between its last forward and its last backward, so the step is (m + p − 1)·(t_f + t_b) +
    t_last + three of the pipeline's 1 MiB sends (the sender waits for each: Megatron's blocking p2p) + the DP
    reduce-scatter that ends stage 0 (8.4 + 14 µs: 2 ranks on 2 servers; then 32 MiB per ring edge at 1 Pb/s).
    Stage 0 (the last to finish) runs the last row too, so of the step its TP collectives are 4 · t_c + t_last, and
    it waits (p − 1)·(t_f + t_b) and the sends."""
    rows = [_row("grad", wg=(0, "REDUCESCATTER", 64 << 20)), *[_row("layer", fwd=(1000000, "ALLGATHER", 4 << 20),
            ig=(2000000, "REDUCESCATTER", 4 << 20), wg=(1000000, "NONE", 0))] * 2, _row("opt", fwd=(0, "ALLREDUCE", 4))]
    f = _file(tmp_path, rows, tp=2, pp=2, ga=2, pp_comm=1 << 20)
    p = aicb_plan(f, fabric=_rail(tmp_path, 4, 2))
    assert [(q.micro_batch, q.backward) for q in program(p.aicb, 1)] == [
        (None, False), (0, False), (0, True), (1, False), (None, False), (None, True), (1, True), (None, True)]
    r = p.run()
    t_c = _lat(1) + (4 << 20) / 2 / (0.8 * NV)
    tf, tb = 1e-3 + t_c, 3e-3 + t_c
    t_last = 7.8e-6 + 4096 / 141e9
    t_rs = 8.4e-6 + 14e-6 + (32 << 20) * 8 / 1e15
    send = (1 << 20) * 8 / 1e15
    b = r.summary["breakdown"]
    assert r.step_time_s == pytest.approx(3 * (tf + tb) + t_last + 3 * send + t_rs, abs=1e-9)
    assert b["compute_s"] == pytest.approx(2 * 4e-3, rel=1e-9)
    assert b["exposed_s"]["tp"] == pytest.approx(4 * t_c + t_last, abs=1e-9)
    assert b["bubble_s"] + b["exposed_s"]["pp"] == pytest.approx(tf + tb + 3 * send, abs=1e-9)
    assert b["exposed_s"]["dp"] == pytest.approx(t_rs, abs=1e-9)
    total = b["compute_s"] + b["bubble_s"] + b["optimizer_s"] + sum(b["exposed_s"].values())
    assert total == pytest.approx(r.step_time_s, rel=1e-9)


def test_an_expert_all_to_all_across_two_servers_is_nccl_s_latency_and_half_a_buffer_per_nic(tmp_path):
    """EP 4 (TP 1) on 2 servers of 2 GPUs with 100 Gb/s NICs: an ALLTOALL_EP of S = 1 MiB per GPU sends S/4 to each
    other rank; to the remote GPU g both GPUs of a server send over rail g (NCCL's PXN), S/2 per NIC, so
    (S/2)·8 / 100 Gb/s; NCCL's latency 8.4 + 2 × 3.4 + 14 µs (3 steps, one between servers). The flow engine
    delivers a message one path latency after its last bit leaves: the store-and-forward of its last 4,096-byte
    packet at every hop after the first, the slowest path (PXN: GPU, its NIC, the NVSwitch, the rail's NIC, the
    rail, the remote NIC, the GPU) crossing two NVSwitch links (3.6 Tb/s), two 100 Gb/s links and the last NIC–GPU
    link (3.7 Tb/s). Forward and backward each run one (the input-gradient column's), with 1 ms of compute each."""
    rows = [_row("moe", fwd=(1000000, "ALLTOALL_EP", 1 << 20), ig=(1000000, "ALLTOALL_EP", 1 << 20))]
    r = aicb_plan(_file(tmp_path, rows, ep=4, gpus=4), fabric=_rail(tmp_path, 2, 2, "100Gbps")).run()
    last_packet = 4096 * 8 * (2 / 3600e9 + 2 / 100e9 + 1 / 3700e9)
    a2a = 8.4e-6 + 2 * 3.4e-6 + 14e-6 + (1 << 20) / 2 * 8 / 100e9 + last_packet
    assert r.summary["breakdown"]["exposed_s"]["ep"] == pytest.approx(2 * a2a, rel=1e-6)
    assert r.step_time_s == pytest.approx(2e-3 + 2 * a2a, rel=1e-6)


# ---- beside SimAI (benchmarks/vs_simai.py) ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gpt13b_tp8pp2dp16_aiob", "mixtral8x7b_tp2pp2ep8dp128_aiob"])
def test_beside_simai_the_hand_calculation_predicts_fabricsim_and_explains_the_difference(tmp_path, name):
    """On SimAI's fabric (benchmarks/vs_simai.py: NVLink 360 and NICs of 48.5 · 2^30 B/s, packet spraying) the hand
    calculation from the file alone (NCCL's closed forms, the busiest NIC's bytes, the 1F1B recurrence) predicts
    fabricsim's iteration within 0.1%; and without the pipeline, which the two tools read differently, fabricsim's
    iteration minus SimAI's stored one is the sum of the hand-calculated TP, EP and DP terms (compute is the same)."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_simai as vs

    rec = vs.records()[name]
    fab = tmp_path / "fabric.toml"
    fab.write_text(vs.fabric_doc(rec["gpus"], *vs.rates(rec)))
    f = read_aicb(DATA / rec["workload_copy"])
    r = aicb_plan(str(DATA / rec["workload_copy"]), fabric=str(fab)).run()
    h = vs.hand(f, rec["gpus"], *vs.rates(rec))
    assert r.step_time_s == pytest.approx(h["step"], rel=1e-3)
    b, sb = r.summary["breakdown"], rec["breakdown"]
    assert b["compute_s"] == pytest.approx(sb["total comp"], abs=1e-5)
    ours = r.step_time_s - b["bubble_s"] - b["exposed_s"]["pp"]
    theirs = rec["iteration_time_s"] - sb["bubble time"] - sb["Expose_PP_comm"]
    terms = (h["tp"] - sb["Expose TP comm"]) + (h["ep"] - sb["Expose_EP_comm"]) + (
        h["dp"] - sb["Expose DP comm"] - sb["Expose DP_EP comm"])
    assert ours - theirs == pytest.approx(terms, abs=1e-3 * theirs)
