"""`fabricsim train`: model arithmetic against published figures, pipeline schedules, and closed forms of a step on
ideal fabrics (each derived in its test), the answer's invariants, and bad input.

The "wide" test model has a tiny hidden size (256) and a huge MLP (2^20): its compute is milliseconds per layer
while its activations are 1 MiB, so on a 1 Pb/s fabric with no delay a pipeline transfer takes 8 ns and the step
is the closed form of compute and collectives within nanoseconds.
"""

from __future__ import annotations

import json

import pytest

from fabricsim.cli import main
from fabricsim.train import PRESETS, plan, train
from fabricsim.train.models import ModelSpec
from fabricsim.train.schedule import interleaved, one_f_one_b

PS = 1e-12
PEAK, HBM, EFF = 989e12, 3.35e12, 0.5  # H100 datasheet (fabricsim.devices), the default efficiency
WIDE = ModelSpec("wide", layers=8, hidden=256, ffn=1 << 20, heads=8, kv_heads=8, vocab=1, seq_len=2048)


def _ideal(tmp_path, hosts: int) -> str:
    """A one-switch fabric of `hosts` GPUs at 1 Pb/s with no delay anywhere."""
    p = tmp_path / "ideal.toml"
    p.write_text(f'[topology]\nkind = "leaf_spine"\nracks = 1\nhosts_per_rack = {hosts}\nspines = 1\n'
                 'host_rate = "1000Tbps"\nfabric_rate = "1000Tbps"\nhost_delay = 0\nfabric_delay = 0\n')
    return str(p)


def _rail(tmp_path, servers: int, gpus: int, rate: str = "1000Tbps") -> str:
    p = tmp_path / "rail.toml"
    p.write_text(f'[topology]\nkind = "rail_optimized"\nsus = 1\nservers_per_su = {servers}\ngpus_per_server = {gpus}\n'
                 f'spines = 1\nrate = "{rate}"\ndelay = 0\nnvlink_latency = 0\n')
    return str(p)


def _layer_fwd_s(m: ModelSpec, tokens: int, tp: int = 1) -> float:
    """One layer's forward on one GPU: FLOPs per token = 2 × (attention 4·h² + SwiGLU MLP 3·h·f) + scores 4·s·h,
    over `tokens` tokens, split tp ways, at 50% of 989 TFLOP/s."""
    h, f, s = m.hidden, m.ffn, m.seq_len
    return tokens * (2 * (4 * h * h + 3 * h * f) + 4 * s * h) / tp / (PEAK * EFF)


def _opt_s(params: float) -> float:
    """Adam: 28 bytes of memory traffic per parameter at 50% of 3.35 TB/s."""
    return params * 28 / (HBM * EFF)


# ---- models ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, published", [
    ("llama2-7b", 6_738_415_616),     # Hugging Face meta-llama/Llama-2-7b-hf: 6,738,415,616 parameters
    ("llama2-70b", 68_976_648_192),   # meta-llama/Llama-2-70b-hf: 68,976,648,192
    ("llama3-8b", 8_030_261_248),     # meta-llama/Meta-Llama-3-8B: 8,030,261,248
    ("llama3-70b", 70_553_706_496),   # meta-llama/Meta-Llama-3-70B: 70,553,706,496
    ("mixtral-8x7b", 46_702_792_704),  # mistralai/Mixtral-8x7B-v0.1: 46,702,792,704
])
def test_preset_parameter_counts_match_the_released_checkpoints(name, published):
    """The presets' counts neglect only the norms' weights (2·h per layer + h): within 0.01% of the checkpoints."""
    assert PRESETS[name].params == pytest.approx(published, rel=1e-4)


def test_deepseek_v3_like_has_671b_parameters_and_37b_active():
    """DeepSeek-V3's report (arXiv:2412.19437): 671B total, 37B activated per token; standard attention in place of
    MLA adds about 1.1B (61 layers × 18M) and the vocabulary head 0.9B, so within 1% and 6%."""
    m = PRESETS["deepseek-v3"]
    assert m.params == pytest.approx(671e9, rel=0.01)
    assert m.active_params == pytest.approx(37e9, rel=0.06)


def test_gpt3_step_flops_are_narayanans_formula():
    """Narayanan et al. (SC'21, eq. 3 without recomputation): 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per step."""
    m = PRESETS["gpt3-175b"]
    B, s, l, h, V = 1536, 2048, 96, 12288, 50257
    assert m.step_flops(B, s) == pytest.approx(72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)), rel=1e-12)


# ---- schedules ---------------------------------------------------------------------------------------------------

def test_1f1b_warms_up_p_minus_s_minus_1_forwards_then_alternates():
    order = one_f_one_b(4, 6, 1)
    assert [(p.micro_batch, p.backward) for p in order] == [
        (0, False), (1, False), (2, False), (0, True), (3, False), (1, True), (4, False), (2, True), (5, False),
        (3, True), (4, True), (5, True)]


def test_interleaved_runs_every_pass_once_in_megatron_order():
    """p = 2, m = 4, V = 2, stage 0: warm-up (p − 0 − 1)·2 + (V − 1)·p = 4 forwards: micro-batches 0, 1 of chunk 0,
    then 0, 1 of chunk 1; the first backward is micro-batch 0 of the last chunk."""
    order = interleaved(2, 4, 2, 0)
    assert [(p.micro_batch, p.chunk, p.backward) for p in order[:5]] == [
        (0, 0, False), (1, 0, False), (0, 1, False), (1, 1, False), (2, 0, False)]
    assert order[5] == (0, 1, True)
    assert sorted(order) == sorted({(mb, c, b) for mb in range(4) for c in range(2) for b in (False, True)})


# ---- closed forms on ideal fabrics -------------------------------------------------------------------------------

def test_pipeline_alone_has_the_1f1b_bubble(tmp_path):
    """PP = 4, m = 8 micro-batches, one layer pair per stage. Every pass of a stage takes t_f (forward) or
    t_b = 2·t_f; the first stage finishes its last backward after (m + p − 1)·(t_f + t_b) and idles
    (p − 1)·(t_f + t_b) of it: the bubble fraction (p − 1)/(m + p − 1) = 3/11. Then its optimizer."""
    p, m = 4, 8
    r = train(WIDE, fabric=_ideal(tmp_path, 4), pp=p, global_batch=m)
    tf = 2 * _layer_fwd_s(WIDE, 2048)
    tb = 2 * tf
    params = 2 * (4 * 256 * 256 + 3 * 256 * (1 << 20)) + 256  # two layers and the 1 × 256 embedding
    b = r.summary["breakdown"]
    assert b["bubble_s"] == pytest.approx((p - 1) * (tf + tb), abs=1e-6)
    assert b["compute_s"] == pytest.approx(m * (tf + tb), rel=1e-9)
    assert b["optimizer_s"] == pytest.approx(_opt_s(params), rel=1e-6)
    assert r.step_time_s == pytest.approx((m + p - 1) * (tf + tb) + _opt_s(params), abs=1e-6)
    assert b["bubble_s"] / (r.step_time_s - b["optimizer_s"]) == pytest.approx((p - 1) / (m + p - 1), rel=1e-5)


def test_interleaved_pipeline_shrinks_the_bubble_v_times(tmp_path):
    """V = 2 chunks of one layer per stage, p = 4, m = 8: a chunk's pass takes t_f/2 or t_b/2; the bubble is
    (p − 1)·(t_f + t_b)/V (Narayanan et al. 2021, §2.2.2) and the step m·(t_f + t_b) + that + the optimizer."""
    p, m, v = 4, 8, 2
    r = train(WIDE, fabric=_ideal(tmp_path, 4), pp=p, global_batch=m, schedule="interleaved", vpp=v)
    tf = 2 * _layer_fwd_s(WIDE, 2048)
    tb = 2 * tf
    assert r.summary["breakdown"]["bubble_s"] == pytest.approx((p - 1) * (tf + tb) / v, abs=1e-6)
    assert r.summary["breakdown"]["compute_s"] == pytest.approx(m * (tf + tb), rel=1e-9)


def test_data_parallel_alone_exposes_the_last_buckets_all_reduce(tmp_path):
    """DP = 4 on one 100 Gb/s switch, one micro-batch, one gradient bucket (bucket_params ≥ the parameters): the
    ring all-reduce starts when the backward ends; each rank sends 2·(n − 1)/n · P · 4 bytes to its neighbour over
    its own link, after NCCL's ring latency 8.4 µs + 2·(n − 1) × 14 µs (Simple protocol; one GPU per server: every
    step crosses the network), plus two 1 µs links. Step = t_f + t_b + that + the optimizer."""
    p = tmp_path / "ls.toml"
    p.write_text('[topology]\nkind = "leaf_spine"\nracks = 1\nhosts_per_rack = 4\nspines = 1\nhost_rate = "100Gbps"\n'
                 'fabric_rate = "100Gbps"\nhost_delay = "1us"\nfabric_delay = "1us"\n')
    r = train(WIDE, fabric=str(p), dp=4, bucket_params=10**12)
    tf = 8 * _layer_fwd_s(WIDE, 2048)
    params = 8 * (4 * 256 * 256 + 3 * 256 * (1 << 20)) + 2 * 256
    t_ar = 8.4e-6 + 6 * 14e-6 + 2 * 3 / 4 * params * 4 * 8 / 100e9 + 2e-6
    assert r.summary["breakdown"]["exposed_s"]["dp"] == pytest.approx(t_ar, abs=1e-6)
    assert r.step_time_s == pytest.approx(tf + 2 * tf + t_ar + _opt_s(params), abs=1e-6)


def _nccl_ll_us(n: int, nbytes: int) -> float:
    """NCCL's time for an all-gather or reduce-scatter of `nbytes` on n GPUs of one server, where its model picks
    the LL protocol for a 1 MiB buffer (tuning.cc at 5067397c): latency 6.6 µs + (n − 1) × 0.6 µs; bandwidth LL's
    cap, llMaxBw 141 GB/s of busbw on one Hopper node, as algbw 141 · n/(n − 1) (LL128: 14 + 1.9·(n − 1) µs at
    0.92 × NVLink's planned 360 GB/s × n/(n − 1), and Simple: 8.4 + 3.4·(n − 1) µs at the full 360 · n/(n − 1), are
    slower at this size for n = 2 and 8: 17.5 and 13.3 µs, 30.1 and 34.7 µs)."""
    return 6.6 + (n - 1) * 0.6 + nbytes / (141e9 * n / (n - 1)) * 1e6


def test_nccl_picks_ll_for_1mib_inside_a_server():
    from fabricsim.nccl.fabric import NcclFabric
    from fabricsim.train.costs import closed_form_ps

    node = NcclFabric("h100", 1, 8, 8, 400e9, 3600e9, False, 8, 0.0)
    for n in (2, 8):
        for kind in ("all_gather", "reduce_scatter"):
            assert closed_form_ps(kind, n, 1 << 20, node) * PS * 1e6 == pytest.approx(_nccl_ll_us(n, 1 << 20), rel=1e-6)


def test_tensor_parallel_alone_adds_its_collectives_to_every_pass(tmp_path):
    """TP = 8 inside one server, 2 micro-batches. Per layer and direction, sequence parallelism runs 2 all-gathers
    and 2 reduce-scatters of S = 2048 · 256 · 2 bytes = 1 MiB, each as NCCL runs it (`_nccl_ll_us`). The layer's
    compute is split 8 ways. Step = m · 8 layers · (t_f + t_b + 2·t_tp) + the optimizer on 1/8 of the
    parameters."""
    m = 2
    r = train(WIDE, fabric=_rail(tmp_path, 1, 8), tp=8, global_batch=m)
    tf = _layer_fwd_s(WIDE, 2048, tp=8)
    t_tp = 4 * _nccl_ll_us(8, 1 << 20) * 1e-6
    params = (8 * (4 * 256 * 256 + 3 * 256 * (1 << 20)) + 2 * 256) // 8
    b = r.summary["breakdown"]
    assert b["exposed_s"]["tp"] == pytest.approx(m * 8 * 2 * t_tp, rel=1e-6)
    assert r.step_time_s == pytest.approx(m * 8 * (3 * tf + 2 * t_tp) + _opt_s(params), rel=1e-6)


def test_tp2_pp2_dp2_step(tmp_path):
    """TP 2 × PP 2 × DP 2 on 4 servers of 2 GPUs (ranks t + 2·(d + 2·s): a TP pair per server, so TP is closed form
    on NVLink; PP and DP cross a 1 Pb/s fabric). With m = 4 micro-batches per pipeline (global batch 8):
    a pass is t_f + t_tp or t_b + t_tp, the pipeline (m + p − 1)·(t_f + t_b + 2·t_tp); then the one-bucket ring
    all-reduce of 2 ranks on 2 servers, 8.4 + 2 × 14 µs of latency and 2·(2 − 1)/2 · P · 4 bytes at 1 Pb/s, then
    the optimizer. Four layers, two per stage; P = a GPU's half of its stage's parameters."""
    model = ModelSpec("wide4", layers=4, hidden=256, ffn=1 << 20, heads=8, kv_heads=8, vocab=1, seq_len=2048)
    r = train(model, fabric=_rail(tmp_path, 4, 2), tp=2, pp=2, dp=2, global_batch=8, bucket_params=10**12)
    tf = 2 * _layer_fwd_s(model, 2048, tp=2)
    t_tp = 2 * 4 * _nccl_ll_us(2, 1 << 20) * 1e-6
    params = (2 * (4 * 256 * 256 + 3 * 256 * (1 << 20)) + 256) // 2
    t_ar = 8.4e-6 + 2 * 14e-6 + params * 4 * 8 / 1e15
    expect = (4 + 2 - 1) * (3 * tf + 2 * t_tp) + t_ar + _opt_s(params)
    assert r.step_time_s == pytest.approx(expect, abs=2e-6)
    b = r.summary["breakdown"]
    assert b["bubble_s"] == pytest.approx((2 - 1) * (3 * tf + 2 * t_tp), abs=2e-6)


def test_the_decomposition_adds_up_to_the_step(tmp_path):
    r = train(WIDE, fabric=_rail(tmp_path, 4, 2, rate="100Gbps"), tp=2, pp=2, dp=2, global_batch=8, zero=1)
    b = r.summary["breakdown"]
    total = b["compute_s"] + b["bubble_s"] + b["optimizer_s"] + sum(b["exposed_s"].values())
    assert total == pytest.approx(r.step_time_s, rel=1e-9)
    assert 0 < r.summary["mfu"] < 0.5


# ---- the command ----------------------------------------------------------------------------------------------

def test_cli_json_has_the_answer(tmp_path, capsys):
    assert main(["train", "--model", "gpt3-1.3b", "--tp", "8", "--pp", "2", "--fabric",
                 _rail(tmp_path, 2, 8, "400Gbps"), "--global-batch", "8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["breakdown"]) == {"compute_s", "exposed_s", "bubble_s", "optimizer_s"}
    assert set(d["breakdown"]["exposed_s"]) == {"tp", "pp", "dp", "ep", "cp"}
    assert set(d["traffic_bytes"]) == {"tp", "pp", "dp", "ep", "cp"}
    assert d["links"] and {"link", "bytes", "utilization", "rate_bps"} <= set(d["links"][0])
    assert d["step_time_s"] > 0 and 0 < d["mfu"] < 1


@pytest.mark.parametrize("args, words", [
    (["--tp", "8", "--pp", "4"], "= 32, but the job has 16 GPUs"),
    (["--pp", "16"], "the model's 24 layers are not divisible by pp × V = 16 × 1"),
    (["--tp", "3", "--gpus", "3"], "the model's 16 attention heads are not divisible by tp = 3"),
    (["--model", "gpt5", "--tp", "16"], "--model: unknown model 'gpt5'"),
    (["--tp", "16", "--ep", "1", "--device", "tpu"], "Invalid value for '--device'"),
    (["--tp", "8", "--dp", "2", "--ep", "1", "--global-batch", "3"], "--global-batch: 3 is not divisible"),
    (["--tp", "4", "--dp", "2", "--ep", "2"], "--ep: gpt3-1.3b has no experts"),
    (["--tp", "8", "--pp", "2", "--schedule", "interleaved:1"], "not a schedule"),
])
def test_bad_jobs_get_one_line_and_exit_2(tmp_path, capsys, args, words):
    argv = ["train", "--model", "gpt3-1.3b", "--fabric", _rail(tmp_path, 2, 8, "400Gbps")]
    if "--model" in args:
        argv = argv[:1] + argv[3:]
    assert main(argv + args) == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3


def test_a_model_file_names_its_bad_key(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text("layers = 4\nhidden = 512\nffn = 2048\nheads = 7\nvocab = 100\n")
    with pytest.raises(Exception, match="hidden: 512 is not divisible by heads"):
        plan(str(f), fabric=_ideal(tmp_path, 2), dp=2)


def test_measured_layer_times_replace_the_roofline(tmp_path):
    """Two stages of four layers each, 4 micro-batches: a pass takes 4 × 1 ms forward or 4 × 2.5 ms backward, the
    optimizer 3 ms (all from the file); the step is (m + p − 1) · (4 + 10) ms + 3 ms = 73 ms."""
    f = tmp_path / "times.toml"
    f.write_text("forward_us = 1000\nbackward_us = 2500\noptimizer_us = 3000\n")
    r = train(WIDE, fabric=_ideal(tmp_path, 2), pp=2, global_batch=4, layer_times=str(f))
    assert r.step_time_s == pytest.approx((4 + 2 - 1) * 14e-3 + 3e-3, abs=1e-6)
    assert r.summary["job"]["compute"] == f"measured: {f}"


def test_a_layer_times_file_names_its_bad_key(tmp_path, capsys):
    f = tmp_path / "times.toml"
    f.write_text("forward_us = 1000\nbackwards_us = 2\n")
    assert main(["train", "--model", "gpt3-1.3b", "--fabric", _ideal(tmp_path, 2), "--dp", "2", "--layer-times",
                 str(f)]) == 2
    assert f"{f}: backwards_us: unknown key" in capsys.readouterr().err
