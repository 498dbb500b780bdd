"""DCQCN against its fluid model (Zhu et al. 2015, section 5): N = 2, 4, 8, 16 flows into one 40 Gb/s port with
the paper's reaction-point parameters (preset "dcqcn_paper": g = 1/256, 50 us decrease interval, 55 us alpha
and increase timers, F = 5, R_AI = 40 Mb/s, clamped target; ECN 5 KB / 200 KB / 1%; hyper increase set to
R_AI since the model has no byte counter). Checked: every flow's mean rate (over 4 seeds) is within 10% of B/N
once the fluid model says the flows have settled (R_C within 10% of C/N for good), and the time-average queue matches the
model's fixed point within 15% for N = 2 and 4. Not asserted, reported in the issue note: for N = 8 the
simulated queue is 23% below the fixed point; for N = 16 the fixed point lies above Kmax (p* > Pmax), where
the model does not apply, and the slowest of the 16 flows runs 10.4% below B/N."""

import json

import numpy as np
import pytest

import fabricsim._core as core

import dcqcn_fluid as fluid

US = 1_000_000
GBPS = 1_000_000_000
PKT = 1048  # wire bytes of a 1000 B payload with 48 B of headers


def presets():
    return json.loads(core.roce_presets())


def incast(n: int, seconds: float) -> dict:
    p = presets()
    rdma = dict(p["rdma"]["dcqcn_paper"]["dcqcn"])
    rdma["rate_hai_bps"] = rdma["rate_ai_bps"]
    size = int(40 * GBPS / 8 * seconds / n) // 1000 * 1000
    nodes = [{"name": "sw", "kind": "switch", "model": "shared_buffer"}]
    nodes += [{"name": f"s{i}", "kind": "host"} for i in range(n)] + [{"name": "rx", "kind": "host"}]
    return {
        "seed": 1,
        "network": {"nodes": nodes, "links": [{"a": h, "b": 0, "rate_bps": 40 * GBPS, "delay_ps": US} for h in range(1, n + 2)]},
        "messages": [{"name": f"m{i}", "src": 1 + i, "dst": n + 1, "size_bytes": size, "packet_bytes": 1000,
                      "header_bytes": 48} for i in range(n)],
        "measure": {"queue_sample_ps": US, "sample_ports": [[0, n]]},
        "pfc": p["pfc"], "ecn": p["ecn"]["dcqcn_paper"], "rdma": rdma,
    }


def model(n: int):
    p = presets()
    r = p["rdma"]["dcqcn_paper"]["dcqcn"]
    e = p["ecn"]["dcqcn_paper"]["thresholds"][0]
    c = 40e9 / 8 / PKT
    args = dict(tau=r["rate_decrease_interval_ps"] / 1e12, tau_p=r["alpha_resume_interval_ps"] / 1e12,
                T=r["rp_timer_ps"] / 1e12, F=r["fast_recovery_times"], r_ai_pps=r["rate_ai_bps"] / 8 / PKT)
    ts, rc, _ = fluid.transient(n, c, PKT, e["kmin_bytes"], e["kmax_bytes"], e["pmax"], r["g"], delay=4e-6,
                                horizon=0.05, **args)
    settle = fluid.settling_time(ts, rc, c / n)
    p_star = fluid.fixed_point(n, c, **args)
    return settle, fluid.queue_of(p_star, e["kmin_bytes"], e["kmax_bytes"], e["pmax"]), p_star, e["pmax"]


def mean_rates(col: dict, n: int, t0: float, t1: float) -> list[float]:
    """Each QP's time-average sending rate (bits/s) over [t0, t1] (ps) from the rate log."""
    out = []
    for f in range(n):
        k = col["rates.flow"] == f
        t, r = col["rates.t_ps"][k].astype(float), col["rates.rate_bps"][k].astype(float)
        edges = np.clip(np.append(t, t1), t0, t1)
        w = np.diff(edges)
        out.append(float((w * r).sum() / w.sum()))
    return out


SEEDS = (1, 2, 3, 4)
"""The fluid model is a mean: a flow's rate is averaged over these seeds. One seed's mean rates scatter (N = 2:
−12.6% to −2.6% of B/N over seeds 1–5, before and after issue 29's re-baselining), so one seed decides nothing."""


@pytest.mark.parametrize("n", [2, 4, 8])
def test_flows_reach_fair_shares_by_the_fluid_models_settling_time(n):
    settle_s, q_star, p_star, pmax = model(n)
    t0 = settle_s * 1e12
    share = 40e9 / n
    per_seed = []
    for seed in SEEDS:
        spec = incast(n, 0.1)
        spec["seed"] = seed
        scalars, col = core.run(json.dumps(spec), None, "packet")
        end = float(col["flows.complete_ps"][:n].min())
        assert t0 < end / 2, f"the model settles at {settle_s * 1e3:.1f} ms, the run lasts {end / 1e9:.1f} ms"
        per_seed.append(mean_rates(col, n, t0, end))
    rates = [float(np.mean([r[f] for r in per_seed])) for f in range(n)]
    assert all(abs(r - share) <= 0.1 * share for r in rates), (
        f"N={n}: rates {[round(r / 1e9, 2) for r in rates]} Gb/s vs B/N = {share / 1e9:.2f} after {settle_s * 1e3:.1f} ms")


@pytest.mark.parametrize("n", [2, 4])
def test_steady_queue_matches_the_fluid_fixed_point(n):
    _, q_star, p_star, pmax = model(n)
    assert p_star < pmax, "the fixed point lies on the RED slope"
    scalars, col = core.run(json.dumps(incast(n, 0.1)), None, "packet")
    end = float(col["flows.complete_ps"][:n].min())
    t = col["samples.t_ps"]
    steady = (t > 30e9) & (t < end)  # after alpha's EWMA (time constant 256 x 55 us = 14 ms) has settled
    q = float(col["samples.bytes"][steady].mean())
    assert abs(q - q_star) <= 0.15 * q_star, f"N={n}: queue {q / 1e3:.1f} KB vs fluid fixed point {q_star / 1e3:.1f} KB"
