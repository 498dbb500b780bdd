"""The flow-level engine: selection, closed forms through the API, agreement with the packet engine on the same
scenarios (identical routes per seed), and the max-min property of its solver on random networks."""

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricsim
from fabricsim import scenario_from_dict
from fabricsim.collectives import all_to_all, split_barriers
from fabricsim.errors import ScenarioError
from fabricsim.flow import maxmin_rates
from fabricsim.studies.orchestration import collective_scenario, preset_groups


def _both(sc, seeds):
    """Mean completion (s) over seeds in the packet and the flow engine."""
    p = [fabricsim.run(sc, seed=s).completion_time_s for s in seeds]
    f = [fabricsim.run(sc, seed=s, fidelity="flow").completion_time_s for s in seeds]
    return statistics.mean(p), statistics.mean(f)


def test_fidelity_is_selectable_and_recorded():
    sc = collective_scenario(preset_groups("4n_1r"), ["shift-all-reduce"], 1.0)
    assert fabricsim.run(sc).fidelity == "packet"
    assert fabricsim.run(sc, fidelity="flow").fidelity == "flow"
    assert fabricsim.run(sc.model_copy(update={"fidelity": "flow"})).fidelity == "flow"
    with pytest.raises(ScenarioError, match="fidelity"):
        fabricsim.run(sc, fidelity="fluid")


def test_contention_free_collectives_agree_to_the_picosecond_scale():
    # 4n_1r / 6n_1r All-Reduce: every message alone on its links; both engines give the NIC bound
    # 2(N−1) x 10 MiB x 8 / 100 Gb/s plus the same pipeline latency.
    for preset, want_ms in (("4n_1r", 5.033), ("6n_1r", 8.389)):
        sc = collective_scenario(preset_groups(preset), ["shift-all-reduce"], 10.0)
        p, f = _both(sc, [1])
        assert f == pytest.approx(p, rel=1e-6), preset
        assert want_ms < f * 1e3 < want_ms + 0.01


@pytest.mark.parametrize("preset", ["4n_2r", "6n_4r", "4n_3r_6n_3r"])
def test_orchestration_placements_agree_within_5_percent(preset):
    # Per-message ECMP is a hash of (seed, message), so both engines route every seed identically; the mean
    # over 10 seeds then differs only by the dynamics (packet round-robin vs fluid max-min). Shallow (128 KiB)
    # input buffers: a NIC then hands a message over at its fair share, as a fluid flow does. With the Vela-like
    # default of 4 MiB the packet engine's NIC hands messages over faster than their fair share and contended
    # rows finish up to ~30% sooner than the fluid model (docs/guide/flow-engine.md).
    g = preset_groups(preset)
    p, f = _both(collective_scenario(g, ["shift-all-reduce"] * len(g), 10.0, input_buffer="128KiB"), range(1, 11))
    assert f == pytest.approx(p, rel=0.05)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["4n_3r", "6n_2r", "6n_3r", "8n_2r", "8n_3r", "8n_4r", "12n_2r", "12n_3r", "12n_4r",
                                    "4n_2r_6n_2r", "4n_4r_6n_4r", "6n_1r_8n_2r", "6n_2r_8n_2r", "6n_3r_8n_3r", "6n_4r_8n_4r"])
def test_orchestration_placements_agree_within_5_percent_slow(preset):
    test_orchestration_placements_agree_within_5_percent(preset)


def _lossless(topology: dict) -> dict:
    return {**topology, "switch_model": "input_buffered", "switch_latency": "500ns"}


def test_phased_all_to_all_on_a_fat_tree_agrees():
    # FT(2;8,16): 128 hosts, 127 phases separated by barriers, 64 KiB messages, lossless switches, per-flow ECMP.
    nodes = [(f"h{i}", 0) for i in range(128)]
    msgs, bars = split_barriers(all_to_all(nodes, 64 * 1024, barrier=True))
    sc = scenario_from_dict({"topology": _lossless({"kind": "fat_tree", "m0": 8, "m1": 16, "rate": "100Gbps"}),
                             "messages": msgs, "barriers": bars})
    rec = fabricsim.run(sc)
    assert rec.packets["dropped"] == 0
    f = fabricsim.run(sc, fidelity="flow")
    assert f.completion_time_s == pytest.approx(rec.completion_time_s, rel=0.05)
    # No phase can beat its NIC bound: 127 x 64 KiB at 100 Gb/s = 0.666 ms.
    assert f.completion_time_s > 127 * 64 * 1024 * 8 / 100e9


def test_permutation_on_an_oversubscribed_leaf_spine_agrees():
    # 4 racks x 12 hosts at 100G under 4 x 100G uplinks per leaf (3:1); a random cross-rack permutation of 1 MiB.
    rnd = random.Random(7)
    hosts = list(range(48))
    while True:
        perm = hosts[:]
        rnd.shuffle(perm)
        if all(p // 12 != i // 12 for i, p in enumerate(perm)):
            break
    topo = _lossless({"kind": "leaf_spine", "racks": 4, "hosts_per_rack": 12, "spines": 4, "host_rate": "100Gbps",
                      "fabric_rate": "100Gbps"})
    msgs = [{"name": f"m{i}", "src": f"h{i}", "dst": f"h{p}", "size": "1MiB"} for i, p in enumerate(perm)]
    sc = scenario_from_dict({"topology": topo, "routing": {"ecmp": "per_message"}, "messages": msgs})
    p, f = _both(sc, range(1, 6))
    assert f == pytest.approx(p, rel=0.05)
    # 12 senders per leaf over 4 uplinks: at best 3 share each, so 1 MiB takes ≥ 3 x 83.9 us.
    assert f > 3 * 2**20 * 8 / 100e9


def test_flow_fidelity_rejects_what_it_cannot_model():
    sc = scenario_from_dict({"fidelity": "flow", "topology": {"kind": "dumbbell", "senders": 1},
                             "tcp": [{"src": "sender0", "dst": "receiver", "max_bytes": 1000}]})
    with pytest.raises(ScenarioError, match=r"tcp\[0\].*flow fidelity"):
        fabricsim.run(sc)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_maxmin_is_feasible_and_fair_on_random_networks(data):
    n_res = data.draw(st.integers(1, 8))
    cap = data.draw(st.lists(st.floats(0.5, 100.0), min_size=n_res, max_size=n_res))
    n_flows = data.draw(st.integers(1, 12))
    uses, caps = [], []
    for _ in range(n_flows):
        res = data.draw(st.lists(st.integers(0, n_res - 1), min_size=1, max_size=n_res, unique=True))
        uses.append([(r, data.draw(st.sampled_from([1.0, 0.5, 0.25]))) for r in res])
        caps.append(data.draw(st.one_of(st.none(), st.floats(0.1, 50.0))))
    rate = maxmin_rates(cap, uses, caps)
    load = [0.0] * n_res
    for f, u in enumerate(uses):
        assert rate[f] > 0
        for r, w in u:
            load[r] += w * rate[f]
    tol = 1e-9 * max(cap)
    assert all(load[r] <= cap[r] + tol for r in range(n_res)), "feasible"
    for f, u in enumerate(uses):
        # Max-min: f is at its own cap, or some saturated resource of f carries no flow faster than f (so f
        # cannot grow without taking from a flow with a smaller or equal rate).
        at_cap = caps[f] is not None and rate[f] >= caps[f] - 1e-9
        bottleneck = any(load[r] >= cap[r] - tol and all(rate[g] <= rate[f] + 1e-9 for g, ug in enumerate(uses)
                                                        if any(x == r for x, _ in ug)) for r, _ in u)
        assert at_cap or bottleneck, f"flow {f} could grow: rate {rate[f]}"


def test_a_flow_refusal_names_the_users_key(tmp_path):
    """Issue 33: the flow engine's refusal of throughput bins named the engine's `measure.throughput_bin_ps`; it
    names the key the user wrote, `throughput_interval` in [measure], through the API and the command line."""
    from fabricsim.cli import main

    p = tmp_path / "bins.toml"
    p.write_text('[topology]\nkind = "dumbbell"\nsenders = 1\n[measure]\nthroughput_interval = "10us"\n'
                 '[[messages]]\nname = "m"\nsrc = "sender0"\ndst = "receiver"\nsize = "1MB"\n')
    sc = fabricsim.load_scenario(p)
    with pytest.raises(ScenarioError) as e:
        fabricsim.run(sc, fidelity="flow")
    assert str(e.value).startswith(f"{p}: measure.throughput_interval: throughput over time")
    assert "_bin_ps" not in str(e.value)
    assert main(["run", str(p), "--fidelity", "flow"]) == 2
