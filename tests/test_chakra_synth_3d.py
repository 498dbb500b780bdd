"""`fabricsim trace synth 3d` (fabricsim.train.chakra): a training job's TP × CP × EP × DP × PP layout as Chakra traces.

Node counts, sizes and communicators are counted by hand for small layouts; the trace runs with `trace run`; on an
ideal fabric a pipeline-only job's trace takes the 1F1B (and interleaved) closed form, which `fabricsim.train`
gives for the same job; bad input is one line and exit 2.

The "small" model: 4 layers of h = 256, a GELU MLP of 1,024, 8 heads, vocabulary 1,000, s = 512. Per layer
4·h² = 262,144 attention and 2·h·1,024 = 524,288 MLP parameters; the embedding and the output layer 256,000 each.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fabricsim.chakra import load
from fabricsim.chakra import synth as sy
from fabricsim.chakra.trace import COLL, COMP, RECV, SEND
from fabricsim.cli import main
from fabricsim.train import train
from fabricsim.train.chakra import make_job, synthesize
from fabricsim.train.costs import chunk_cost, optimizer_ps
from fabricsim.train.models import ModelSpec

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelSpec("small", layers=4, hidden=256, ffn=1024, heads=8, kv_heads=8, vocab=1000, seq_len=512, swiglu=False)
MOE = ModelSpec("moe", layers=4, hidden=256, ffn=1024, heads=8, kv_heads=2, vocab=1000, seq_len=512, experts=4,
                top_k=2, expert_ffn=512, dense_layers=1)
WIDE = ModelSpec("wide", layers=8, hidden=256, ffn=1 << 20, heads=8, kv_heads=8, vocab=1, seq_len=2048)
"""As tests/test_train.py's: milliseconds of compute per layer, 1 MiB of activations (8 ns at 1 Pb/s)."""


def counts(cols) -> dict[str, int]:
    c = Counter(cols["node_type"].tolist())
    return {"COMP": c[COMP], "COLL": c[COLL], "SEND": c[SEND], "RECV": c[RECV]}


def sizes(cols) -> dict[str, set[int]]:
    """Node name -> the comm_size values of the communication nodes of that name."""
    out: dict[str, set[int]] = {}
    comm = np.isin(cols["node_type"], (COLL, SEND, RECV))
    for i in np.flatnonzero(comm).tolist():
        out.setdefault(cols["names"][cols["name"][i]], set()).add(int(cols["comm_size"][i]))
    return out


def pgs(cols) -> set[str]:
    pg = cols["pg_name"][cols["pg_name"] != np.iinfo(np.uint32).max]
    return {cols["names"][i] for i in np.unique(pg).tolist()}


# ---- node counts, sizes and communicators by hand ----------------------------------------------------------------

def test_tp2_pp2_dp2_counts_sizes_and_groups_by_hand():
    """TP2 × PP2 × DP2, global batch 8: m = 8 / (1 · dp 2) = 4 micro-batches per pipeline, 2 layers per stage, so
    every rank runs 8 passes (4 forward, 4 backward). Per rank:
    - COMP: an attention and an MLP node per layer and pass, 2 · 2 · 8 = 32, and the optimizer: 33;
    - COLL: with sequence parallelism 2 all-gathers and 2 reduce-scatters per layer and pass, 4 · 2 · 8 = 64, and
      one gradient bucket (the stage's 2 · 786,432 / 2 + 128,000 = 914,432 parameters per GPU are under 40M): 65;
    - SEND / RECV: stage 0 sends 4 activations and receives 4 gradients, stage 1 the reverse: 4 each.
    Sizes: TP S = b·s·h·2 = 512 · 256 · 2 = 262,144 B; pipeline S / tp = 131,072 B; the bucket 914,432 × 4 B
    (FP32 gradients) = 3,657,728 B. Ranks r = t + 2·(d + 2·s): TP groups {0,1} {2,3} {4,5} {6,7}, DP groups
    (same t, s) {0,2} {1,3} {4,6} {5,7}, pipelines (same t, d) {0,4} {1,5} {2,6} {3,7}."""
    job = make_job(SMALL, tp=2, pp=2, dp=2, global_batch=8)
    assert job.micro_batches == 4
    t = synthesize(job)
    assert t.comm_groups == {"tp0": [0, 1], "tp1": [2, 3], "tp2": [4, 5], "tp3": [6, 7],
                             "dp0": [0, 2], "dp1": [1, 3], "dp2": [4, 6], "dp3": [5, 7],
                             "pp0": [0, 4], "pp1": [1, 5], "pp2": [2, 6], "pp3": [3, 7]}
    for r in range(8):
        cols = t.traces[r]
        assert counts(cols) == {"COMP": 33, "COLL": 65, "SEND": 4, "RECV": 4}, r
        assert pgs(cols) == {f"tp{r // 2}", f"dp{r % 2 + 2 * (r // 4)}"}
        p2p = {"send_activation", "recv_gradient"} if r < 4 else {"send_gradient", "recv_activation"}
        assert sizes(cols) == {"tp_all_gather": {262144}, "tp_reduce_scatter": {262144},
                               "dp_grad_all_reduce": {3657728}} | dict.fromkeys(p2p, {131072})
        # Point-to-point peers: the same (t, d) on the other stage.
        is_p2p = np.isin(cols["node_type"], (SEND, RECV))
        peer = np.where(cols["node_type"] == SEND, cols["comm_dst"], cols["comm_src"])[is_p2p]
        assert set(peer.tolist()) == {r + 4 if r < 4 else r - 4}
    assert t.nodes == 8 * (33 + 65 + 4 + 4)


def test_no_sequence_parallelism_and_zero_1_by_hand():
    """Without sequence parallelism TP is 2 all-reduces per layer and pass (2 · 2 · 8 = 32) of S = 262,144 B; with
    ZeRO 1 the bucket is a reduce-scatter of the same 3,657,728 B and the updated parameters are all-gathered
    after the optimizer, 914,432 × 2 B = 1,828,864 B: 34 collectives."""
    t = synthesize(make_job(SMALL, tp=2, pp=2, dp=2, global_batch=8, zero=1, sequence_parallel=False))
    cols = t.traces[5]
    assert counts(cols) == {"COMP": 33, "COLL": 34, "SEND": 4, "RECV": 4}
    assert sizes(cols) == {"tp_all_reduce": {262144}, "dp_grad_reduce_scatter": {3657728},
                           "dp_param_all_gather": {1828864}, "send_gradient": {131072}, "recv_activation": {131072}}


def test_moe_with_ep_and_cp_by_hand():
    """MoE (layer 0 dense, layers 1-3 with 4 experts, top-2), CP2 × EP2 × PP2, global batch 8: m = 8 / (dp 1 ·
    ep 2) = 4. Ranks r = c + 2·(e + 2·s). Per rank, 8 passes of 2 layers:
    - COMP: 33 as before (attention and MLP / experts per layer and pass, the optimizer);
    - EP: dispatch and combine all-to-alls around each MoE layer, forward and backward: stage 0 has one MoE layer
      (2 · 8 = 16), stage 1 two (32); each of (T / tp)·top_k·h·2 = 256 · 2 · 256 · 2 = 262,144 B (T = s / cp = 256);
    - CP: per layer a key/value all-gather forward, an all-gather and a reduce-scatter backward: 2 · (4 · 1 + 4 · 2)
      = 24, each of 2·b·s·kv_heads·head_dim·2 / tp = 2 · 512 · 2 · 32 · 2 = 131,072 B;
    - DP: one dense bucket over dp × ep × cp = 4 ranks (dp{k}), one expert bucket over dp × cp = 2 (edp{k}).
    Stage 0: 16 + 24 + 2 = 42 collectives; stage 1: 32 + 24 + 2 = 58. Pipeline messages T·h·2 = 131,072 B."""
    t = synthesize(make_job(MOE, cp=2, ep=2, pp=2, global_batch=8))
    assert t.comm_groups == {"cp0": [0, 1], "cp1": [2, 3], "cp2": [4, 5], "cp3": [6, 7],
                             "ep0": [0, 2], "ep1": [1, 3], "ep2": [4, 6], "ep3": [5, 7],
                             "dp0": [0, 1, 2, 3], "dp1": [4, 5, 6, 7],
                             "edp0": [0, 1], "edp1": [2, 3], "edp2": [4, 5], "edp3": [6, 7],
                             "pp0": [0, 4], "pp1": [1, 5], "pp2": [2, 6], "pp3": [3, 7]}
    for r in range(8):
        cols = t.traces[r]
        assert counts(cols) == {"COMP": 33, "COLL": 42 if r < 4 else 58, "SEND": 4, "RECV": 4}, r
        sz = sizes(cols)
        for name in ("ep_dispatch_all_to_all", "ep_combine_all_to_all", "ep_combine_grad_all_to_all",
                     "ep_dispatch_grad_all_to_all"):
            assert sz[name] == {262144}
        assert sz["cp_all_gather"] == sz["cp_reduce_scatter"] == {131072}
    # Rank 5 = (c 1, e 0, s 1).
    assert pgs(t.traces[5]) == {"cp2", "ep3", "dp1", "edp2"}


def test_the_traces_flops_are_the_models_step_flops():
    """Every COMP node but the optimizer summed over the ranks: 3 × the forward FLOPs of the global batch
    (`ModelSpec.step_flops`), whatever the layout."""
    for model, kw in ((SMALL, dict(tp=2, pp=2, dp=2, global_batch=8)),
                      (MOE, dict(cp=2, ep=2, pp=2, global_batch=8)),
                      (SMALL, dict(tp=2, pp=2, global_batch=8, schedule="interleaved", vpp=2))):
        job = make_job(model, **kw)
        t = synthesize(job)
        total = 0
        for cols in t.traces:
            comp = (cols["node_type"] == COMP) & (cols["name"] != cols["names"].index("optimizer"))
            total += int(cols["num_ops"][comp].sum())
        assert total == pytest.approx(model.step_flops(job.global_batch, model.seq_len), rel=1e-9)


def test_interleaved_sends_across_the_wrap():
    """PP2, V = 2 chunks: virtual stages 0 and 2 on stage 0, 1 and 3 on stage 1. Stage 0 sends forward from both
    chunks and backward from chunk 1 (virtual stage 2 → 1): 3 · 4 = 12 sends; it receives forward into virtual stage 2
    (from 1) and backward into both chunks: 12. Tags 2·(j·V + sender's chunk) + direction are unique per pair."""
    t = synthesize(make_job(SMALL, pp=2, global_batch=4, schedule="interleaved", vpp=2))
    for cols in t.traces:
        c = counts(cols)
        assert c["SEND"] == c["RECV"] == 12
        for ty in (SEND, RECV):
            sel = cols["node_type"] == ty
            keys = list(zip(cols["comm_src"][sel].tolist(), cols["comm_dst"][sel].tolist(), cols["comm_tag"][sel].tolist()))
            assert len(set(keys)) == len(keys)


# ---- the trace runs; closed forms on an ideal fabric -------------------------------------------------------------

def _ideal(tmp_path, hosts: int) -> str:
    """One switch, `hosts` hosts at 1 Pb/s, no delay anywhere (tests/test_train.py's)."""
    p = tmp_path / "ideal.toml"
    p.write_text(f'[topology]\nkind = "leaf_spine"\nracks = 1\nhosts_per_rack = {hosts}\nspines = 1\n'
                 'host_rate = "1000Tbps"\nfabric_rate = "1000Tbps"\nhost_delay = 0\nfabric_delay = 0\n')
    return str(p)


def _run(capsys, trace: Path, fabric: str) -> dict:
    capsys.readouterr()
    assert main(["trace", "run", str(trace), "--fabric", fabric, "--fidelity", "flow", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("args", [
    ["--tp", "2", "--pp", "2", "--dp", "2", "--global-batch", "8"],
    ["--tp", "2", "--pp", "2", "--dp", "2", "--global-batch", "8", "--zero", "1", "--schedule", "interleaved:2"],
    ["--cp", "2", "--ep", "2", "--pp", "2", "--dp", "2", "--global-batch", "16", "--moe"],
])
def test_the_trace_runs_on_a_small_fabric(tmp_path, capsys, args):
    model = tmp_path / "m.toml"
    moe = "--moe" in args
    model.write_text("layers = 4\nhidden = 256\nffn = 1024\nheads = 8\nvocab = 1000\nseq_len = 512\n"
                     + ("kv_heads = 2\nexperts = 4\ntop_k = 2\nexpert_ffn = 512\ndense_layers = 1\n" if moe else
                        "swiglu = false\n"))
    args = [a for a in args if a != "--moe"]
    assert main(["trace", "synth", "3d", "--model", str(model), *args, "--out", str(tmp_path / "s")]) == 0
    assert "comm_groups.json" in capsys.readouterr().err
    out = _run(capsys, tmp_path / "s", str(ROOT / "examples" / "leaf_spine_16.toml"))
    assert out["complete"] and out["completion_time_s"] > 0
    n = 16 if moe else 8
    assert len(out["ranks"]) == n and all(r["finish_s"] > 0 for r in out["ranks"])


def _pass_us(cols, backward: bool, passes: int) -> int:
    """One pass's compute (µs) read back: the rank's forward (or backward) COMP nodes over its `passes` passes of
    that direction, which all take the same time."""
    name = [cols["names"].index(f"{k}_{'backward' if backward else 'forward'}") for k in ("attention", "mlp")]
    total = int(cols["duration_micros"][np.isin(cols["name"], name) & (cols["node_type"] == COMP)].sum())
    assert total % passes == 0
    return total // passes


def test_pipeline_trace_takes_the_1f1b_closed_form_as_train_does(tmp_path, capsys):
    """TP 1, PP p = 4, DP 1, m = 8 micro-batches of WIDE (2 layers per stage) on a 1 Pb/s fabric without delay:
    the first stage finishes its last backward after (m + p − 1)·(t_f + t_b) and then runs its optimizer. In the
    trace t_f, t_b and the optimizer are whole microseconds (each pass's nodes add up to its time rounded to 1 µs);
    in `fabricsim.train` they are the same `costs` in picoseconds: the two step times differ by exactly that
    rounding, (m + p − 1)·(Δf + Δb) + Δopt, plus transfers of 8 ns."""
    p, m = 4, 8
    job = make_job(WIDE, pp=p, global_batch=m)
    t = synthesize(job)
    sy.write(tmp_path / "w" / "trace", t.traces, t.comm_groups)
    fabric = _ideal(tmp_path, p)
    sim = _run(capsys, tmp_path / "w", fabric)["completion_time_s"]
    tr = load(tmp_path / "w")
    tf, tb = _pass_us(tr[0].cols, False, m), _pass_us(tr[0].cols, True, m)
    assert all((_pass_us(x.cols, False, m), _pass_us(x.cols, True, m)) == (tf, tb) for x in tr)
    opt = tr[0].cols["duration_micros"][tr[0].cols["name"] == tr[0].names.index("optimizer")]
    closed = ((m + p - 1) * (tf + tb) + int(opt[0])) * 1e-6
    assert sim == pytest.approx(closed, abs=1e-6)
    # fabricsim.train: the same job, the same costs in picoseconds.
    step = train(WIDE, fabric=fabric, pp=p, global_batch=m).step_time_s
    c = chunk_cost(job, 0)
    params = c.params + c.expert_params
    exact = ((m + p - 1) * (c.forward_ps + c.backward_ps) + optimizer_ps(job, params)) * 1e-12
    assert step == pytest.approx(exact, abs=1e-6)
    rounding = ((m + p - 1) * (c.forward_ps + c.backward_ps - (tf + tb) * 1e6)
                + optimizer_ps(job, params) - int(opt[0]) * 1e6) * 1e-12
    assert abs(rounding) <= ((m + p - 1) + 0.5) * 1e-6
    assert step - sim == pytest.approx(rounding, abs=1e-6)


def test_interleaved_trace_takes_its_closed_form(tmp_path, capsys):
    """V = 2 chunks of one layer per stage, p = 4, m = 8: a chunk's passes take t_f/2 and t_b/2 (here their
    rounded microseconds f and b); the step is m·V·(f + b) + (p − 1)·(f + b) + the optimizer (Narayanan et al.
    2021, §2.2.2: the bubble shrinks V times), as `fabricsim.train` gives it up to the rounding."""
    p, m, v = 4, 8, 2
    job = make_job(WIDE, pp=p, global_batch=m, schedule="interleaved", vpp=v)
    t = synthesize(job)
    sy.write(tmp_path / "i" / "trace", t.traces, t.comm_groups)
    fabric = _ideal(tmp_path, p)
    sim = _run(capsys, tmp_path / "i", fabric)["completion_time_s"]
    cols = load(tmp_path / "i")[0].cols
    f, b = _pass_us(cols, False, m * v), _pass_us(cols, True, m * v)
    opt = int(cols["duration_micros"][cols["name"] == cols["names"].index("optimizer")][0])
    assert sim == pytest.approx((m * v * (f + b) + (p - 1) * (f + b) + opt) * 1e-6, abs=1e-6)
    step = train(WIDE, fabric=fabric, pp=p, global_batch=m, schedule="interleaved", vpp=v).step_time_s
    assert step == pytest.approx(sim, abs=(m * v + p) * 1e-6)


# ---- bad input ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["--model", "gpt3-13b", "--pp", "3"], "--pp: the model's 40 layers are not divisible by pp × V = 3 × 1 = 3"),
    (["--model", "gpt3-13b", "--pp", "4", "--schedule", "interleaved:3", "--global-batch", "8"],
     "not divisible by pp × V = 4 × 3 = 12"),
    (["--model", "gpt3-13b", "--tp", "8", "--pp", "4", "--dp", "2", "--ranks", "32"],
     "--tp × --pp × --dp × --ep × --cp = 8 × 4 × 2 × 1 × 1 = 64, but --ranks is 32"),
    (["--model", "gpt5"], "--model: unknown model 'gpt5'"),
    (["--tp", "2"], "give the model: --model NAME|FILE"),
    (["--model", "gpt3-13b", "--layers", "4"], "--layers is for dp, tp, pp, ep and dp-tp"),
    (["--model", "gpt3-13b", "--ep", "2"], "--ep: gpt3-13b has no experts"),
    (["--model", "gpt3-13b", "--zero", "2"], "Invalid value for '--zero'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, words):
    assert main(["trace", "synth", "3d", *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_layer_kinds_refuse_3d_options_and_keep_working(tmp_path, capsys):
    assert main(["trace", "synth", "dp", "--model", "gpt3-13b", "--out", str(tmp_path / "o")]) == 2
    assert "--model is for 3d" in capsys.readouterr().err
    assert main(["trace", "synth", "dp-tp", "--ranks", "8", "--layers", "2", "--hidden", "64", "--seq-len", "32",
                 "--out", str(tmp_path / "d")]) == 0
    assert json.loads((tmp_path / "d" / "trace.comm_groups.json").read_text())["tp0"] == [0, 1]
