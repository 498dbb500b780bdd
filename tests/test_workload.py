"""The bulk workload path: numpy columns, compute steps overlapping communication (hand-computed in both
engines), columnar records, and bad columns reported by row."""

import numpy as np
import pytest

import fabricsim
from fabricsim import ScenarioError, Workload

US = 1_000_000  # ps


def star(hosts=2):
    """h0..h{n-1} on one switch s, 8 Gb/s links (1 byte per ns), no delay or switch latency."""
    return fabricsim.scenario_from_dict({
        "topology": {"kind": "custom", "nodes": [{"name": f"h{i}", "kind": "host"} for i in range(hosts)]
                     + [{"name": "s", "kind": "switch"}],
                     "links": [{"a": f"h{i}", "b": "s", "rate": "8Gbps"} for i in range(hosts)]},
    })


def overlap_workload(sc, streams=1):
    """c0 (10 us) then c1 (15 us) on h0; m0 h0->h1 (10 x 1000 B) after c0; c2 (5 us) on h1 after m0."""
    wl = Workload(sc)
    c0, c1 = wl.compute(["h0", "h0"], [10 * US, 15 * US])
    (m0,) = wl.messages("h0", "h1", 10_000, packet_size=1000, after=[[c0]])
    wl.compute("h1", 5 * US, after=[[m0]])
    if streams > 1:
        wl.streams("h0", streams)
    return wl


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_compute_and_communication_overlap_by_hand(fidelity):
    # One stream: c0 [0, 10), c1 [10, 25). m0 starts at 10 us: 10 packets of 1 us each leave h0 by 20 us and
    # the last crosses the switch's output in 1 us more (store and forward): delivered at 21 us. c2 [21, 26).
    # h0: compute 25 us, comm [10, 21] = 11 us, all under c1 -> 0 exposed. h1: comm 11 us, compute 5 us,
    # exposed 11 us. Completion = max(21, 25, 26) = 26 us.
    sc = star()
    rec = fabricsim.run(sc, workload=overlap_workload(sc), fidelity=fidelity)
    assert rec.scalars["completion_ps"] == 26 * US
    assert rec.message_completion_s().tolist() == [pytest.approx(21e-6)]
    busy = {h["host"]: h for h in rec.host_busy()}
    assert busy["h0"]["compute_s"] == pytest.approx(25e-6) and busy["h0"]["exposed_comm_s"] == pytest.approx(0)
    assert busy["h1"]["comm_s"] == pytest.approx(11e-6) and busy["h1"]["exposed_comm_s"] == pytest.approx(11e-6)
    cf = rec.frame("compute")
    assert cf["start_ps"].tolist() == [0, 10 * US, 21 * US] and cf["end_ps"].tolist() == [10 * US, 25 * US, 26 * US]


def test_two_streams_run_compute_concurrently():
    # Two streams on h0: c0 [0, 10) and c1 [0, 15) together; h0 computes 15 us; m0 [10, 21] overlaps compute
    # on [10, 15), so 6 us of h0's communication is exposed. c2 still ends at 26 us.
    sc = star()
    rec = fabricsim.run(sc, workload=overlap_workload(sc, streams=2))
    busy = {h["host"]: h for h in rec.host_busy()}
    assert busy["h0"]["compute_s"] == pytest.approx(15e-6)
    assert busy["h0"]["exposed_comm_s"] == pytest.approx(6e-6)
    assert rec.scalars["completion_ps"] == 26 * US


def test_bulk_messages_frame_and_parquet(tmp_path):
    # 4 hosts, every host sends 1000 B (one packet) to the next: 1 us to the switch, 1 us to the host.
    sc = star(4)
    wl = Workload(sc)
    src = np.arange(4)
    wl.messages(src, (src + 1) % 4, np.full(4, 1000), packet_size=1000)
    rec = fabricsim.run(sc, workload=wl)
    df = rec.frame()
    assert list(df["src"]) == ["h0", "h1", "h2", "h3"] and list(df["dst"]) == ["h1", "h2", "h3", "h0"]
    assert df["complete_ps"].tolist() == [2 * US] * 4
    rec.to_parquet(tmp_path / "flows.parquet")
    import pandas as pd

    assert pd.read_parquet(tmp_path / "flows.parquet")["rx_bytes"].tolist() == [1000] * 4


def test_sent_dependencies_chain_a_nic():
    # m1 waits for m0 to be fully sent (10 us at 1 B/ns), not delivered (11 us): m1 starts at 10 us, its 10
    # packets leave by 20 us and arrive at 21 us.
    sc = star()
    wl = Workload(sc)
    (m0,) = wl.messages("h0", "h1", 10_000, packet_size=1000)
    wl.messages("h0", "h1", 10_000, packet_size=1000, after_sent=[[m0]])
    rec = fabricsim.run(sc, workload=wl)
    assert (rec.message_completion_s() * 1e6).round(6).tolist() == [11.0, 21.0]


def test_unknown_node_names_its_row():
    sc = star()
    wl = Workload(sc)
    dst = np.array(["h1"] * 20000, dtype=object)
    dst[12345] = "h999"
    with pytest.raises(ScenarioError, match=r"messages\[12345\]\.dst: unknown node 'h999'"):
        wl.messages("h0", dst, 100)
    assert wl.n_messages == 0, "a rejected append leaves the workload unchanged"


def test_bad_columns_name_the_field():
    sc = star()
    wl = Workload(sc)
    with pytest.raises(ScenarioError, match=r"messages\.dst: has 1 rows; expected 2"):
        wl.messages(["h0", "h0"], ["h1"], [10, 20])
    with pytest.raises(ScenarioError, match=r"messages\[1\]\.size: must be >= 0, got -5"):
        wl.messages("h0", "h1", [10, -5])
    with pytest.raises(ScenarioError, match=r"messages\.size: expected integers, got dtype float64"):
        wl.messages("h0", "h1", [10.5])
    with pytest.raises(ScenarioError, match=r"node index 7 out of range"):
        wl.messages(0, 7, 10)


def test_engine_rejects_impossible_rows_and_cycles():
    sc = star()
    wl = Workload(sc)
    wl.messages("h0", "h1", [10, 0])
    with pytest.raises(ScenarioError, match=r"messages\[1\]\.size: must be > 0"):
        fabricsim.run(sc, workload=wl)
    wl = Workload(sc)
    wl.messages("h0", "h1", [10, 10], after=np.array([1, 0]))
    with pytest.raises(ScenarioError, match=r"messages\[0\]\.after: dependency cycle: messages\[0\] -> messages\[1\] -> messages\[0\]"):
        fabricsim.run(sc, workload=wl)
    wl = Workload(sc)
    wl.messages("h0", "h0", 10)
    with pytest.raises(ScenarioError, match=r"messages\[0\]\.dst_nic: source and destination are the same NIC"):
        fabricsim.validate(sc, workload=wl)


def test_engine_errors_are_typed_with_field_and_reason():
    from fabricsim import _core
    from fabricsim.errors import FabricsimError, SpecError

    with pytest.raises(SpecError) as e:
        _core.run('{"seed": 1, "network": {"nodes": [], "links": []}}', None, "packet")
    assert isinstance(e.value, FabricsimError)
    assert (e.value.field, e.value.reason) == ("network.nodes", "no nodes")


@pytest.mark.parametrize("example", ["dumbbell_onoff.toml", "leaf_spine_incast.toml"])
def test_native_json_rows_equal_the_python_rows(example):
    import json
    from pathlib import Path

    sc = fabricsim.load_scenario(Path(__file__).parent.parent / "examples" / example)
    rec = fabricsim.run(sc)
    assert json.loads(rec.to_json()) == json.loads(json.dumps(rec.to_json_dict()))


@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_training_step_scenario_by_hand(fidelity):
    # examples/training_step.toml: forward 100 us then backward 200 us on every host; the ring all-reduce of
    # 4 MB on 4 ranks at 1 B/ns starts when every backward is done (300 us) and takes 2(n−1)/n · S/B + 6 × 1 us
    # = 6.006 ms (see test_collectives_rust.py); the 50 us optimizer step follows: 6.356 ms in all. Each host
    # computes 350 us and communicates 6.006 ms, none of it under compute.
    from pathlib import Path

    sc = fabricsim.load_scenario(Path(__file__).parent.parent / "examples" / "training_step.toml")
    rec = fabricsim.run(sc, fidelity=fidelity)
    assert rec.scalars["completion_ps"] == 6_356_000 * 1000
    for h in rec.host_busy():
        assert h["compute_s"] == pytest.approx(350e-6)
        assert h["comm_s"] == pytest.approx(6.006e-3) and h["exposed_comm_s"] == pytest.approx(6.006e-3)


def test_scenario_workload_errors_name_the_row(tmp_path, capsys):
    from fabricsim.cli import main

    base = (tmp_path / "ok.toml")
    base.write_text('[topology]\nkind = "custom"\nnodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"},'
                    ' {name = "s", kind = "switch"}]\nlinks = [{a = "a", b = "s", rate = "1Gbps"}, {a = "b", b = "s", rate = "1Gbps"}]\n')
    cases = {
        '[[compute]]\nname = "c"\nhost = "s"\nduration = "1us"\n': "compute[0].host: 's' is a switch",
        '[[compute]]\nname = "c"\nhost = "a"\nduration = "1us"\nafter = ["nope"]\n': "compute[0].after[0]: unknown message, barrier, compute step or collective 'nope'",
        '[[collectives]]\nkind = "all_reduce"\nranks = ["a", "zz"]\nsize = 100\n': "unknown node 'zz'",
        '[[collectives]]\nkind = "broadcast"\nalgorithm = "shift"\nranks = "all"\nsize = 100\n': "collectives[0]",
        '[[compute]]\nname = "c"\nhost = "a"\nduration = "1us"\nafter = ["d"]\n[[compute]]\nname = "d"\nhost = "b"\nduration = "1us"\nafter = ["c"]\n': "dependency cycle: c -> d -> c",
    }
    for i, (extra, want) in enumerate(cases.items()):
        f = tmp_path / f"bad{i}.toml"
        f.write_text(base.read_text() + extra)
        for cmd in (["run", str(f), "--json"], ["validate", str(f)]):
            assert main(cmd) == 2, want
            out, err = capsys.readouterr()
            assert out == "" and err.count("\n") == 1 and str(f) in err and want in err, err
