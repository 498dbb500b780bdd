"""RoCEv2 through the Python API: the [pfc] [ecn] [rdma] keys and their wire form, the engine's presets as the
defaults, and the record's RoCE views (pauses, marks, CNPs, rates, the PFC log) against hand calculations."""

from __future__ import annotations

import typing

import pytest

import fabricsim
from fabricsim import scenario_from_dict
from fabricsim.errors import ScenarioError
from fabricsim.report.roce import pause_intervals
from fabricsim.spec.generated import schema
from fabricsim.spec.roce import EcnPreset, PfcDef, RdmaCc, RdmaDef, RdmaPreset, presets

GBPS = 10**9
US = 10**6  # ps
SER_PS = 1048 * 8 * 1000 // 100  # one 1000 B + 48 B packet at 100 Gb/s: 83,840 ps


def star(senders: str, size: int = 1_000_000, **extra) -> dict:
    """Hosts `senders` each send `size` B (1000 B packets + 48 B header) to host r through one shared-buffer
    switch; every link 100 Gb/s with 1 µs delay."""
    nodes = [{"name": "sw", "kind": "switch", "model": "shared_buffer"}] + \
            [{"name": h, "kind": "host"} for h in senders + "r"]
    d = {"transport": "rdma", "pfc": {},
         "topology": {"kind": "custom", "nodes": nodes,
                      "links": [{"a": h, "b": "sw", "rate": "100Gbps", "delay": "1us"} for h in senders + "r"]},
         "messages": [{"name": h, "src": h, "dst": "r", "size": size, "packet_size": 1000, "header": 48}
                      for h in senders]}
    d.update(extra)
    return d


def wire(**extra) -> dict:
    return scenario_from_dict(star("a", **extra)).to_wire()


# ---- keys and defaults -------------------------------------------------------------------------------------------


def test_defaults_are_the_engines_presets():
    p = presets()
    w = wire(ecn={})
    assert w["pfc"] == p["pfc"]
    assert w["ecn"] == p["ecn"]["hpcc"]
    # transport = "rdma" without [rdma]: DCQCN with the "hpcc" preset.
    assert w["rdma"] == p["rdma"]["hpcc"]["dcqcn"]
    assert "rdma" not in scenario_from_dict({k: v for k, v in star("a").items() if k != "transport"}).to_wire()


@pytest.mark.parametrize("preset", typing.get_args(RdmaPreset))
@pytest.mark.parametrize("cc", typing.get_args(RdmaCc))
def test_every_rdma_preset_and_cc_is_the_engines(preset, cc):
    ecn = {} if cc == "dcqcn" else None
    assert wire(ecn=ecn, rdma=RdmaDef(cc=cc, preset=preset))["rdma"] == presets()["rdma"][preset][cc]


def test_preset_names_are_the_engines():
    assert set(typing.get_args(EcnPreset)) == set(presets()["ecn"])
    assert set(typing.get_args(RdmaPreset)) == set(presets()["rdma"])
    assert all(set(typing.get_args(RdmaCc)) == set(by_cc) for by_cc in presets()["rdma"].values())
    for name in typing.get_args(EcnPreset):
        assert wire(ecn={"preset": name})["ecn"] == presets()["ecn"][name]


def test_the_models_are_the_engines_declaration():
    """The models hold the keys the engine declares, in order, with its meanings and the PFC preset as defaults
    (no rules of their own: a value is kept as given and judged by the engine's reader)."""
    for model, table in ((PfcDef, "pfc"), (RdmaDef, "rdma")):
        assert list(model.model_fields) == [k["key"] for k in schema()[table]["keys"]]
        assert [f.description for f in model.model_fields.values()] == [k["doc"] for k in schema()[table]["keys"]]
    assert PfcDef().buffer == presets()["pfc"]["buffer_bytes"] == 32 * 2**20
    assert PfcDef(buffer="nonsense").buffer == "nonsense"


def test_pfc_overrides_land_on_the_wire_in_wire_units():
    w = wire(pfc={"enabled": False, "buffer": "16MiB", "reserve": "2KiB", "alpha": 0.5, "headroom": "50KB",
                  "resume_offset": 1000, "frame": 84, "watchdog": "10us"})["pfc"]
    assert w == {"enabled": False, "buffer_bytes": 16 * 2**20, "reserve_bytes": 2048, "alpha": 0.5,
                 "headroom_bytes": 50_000, "resume_offset_bytes": 1000, "frame_bytes": 84, "watchdog_ps": 10 * US}
    assert wire(pfc={"headroom": "auto"})["pfc"]["headroom_bytes"] is None


def test_rdma_overrides_land_on_the_wire_in_wire_units():
    user = {"cc": "hpcc", "preset": "simai", "ack_size": "64B", "ack_high_priority": False, "nack_interval": "100us",
            "window": False, "var_window": False, "base_rtt": "8us", "min_rate": "1Gbps", "g": 0.0625,
            "alpha_interval": "55us", "decrease_interval": "50us", "rp_timer": "300us", "fast_recovery": 5,
            "rate_ai": "20Mbps", "rate_hai": "200Mbps", "clamp_target": True, "eta": 0.9, "max_stage": 5,
            "hpcc_rate_ai": "40Mbps", "fast_react": False, "rate_on_first_cnp": 0.5}
    w = wire(ecn={}, rdma=user)["rdma"]
    assert w == {"cc": "hpcc", "ack_bytes": 64, "ack_high_priority": False, "nack_interval_ps": 100 * US,
                 "window": False, "var_window": False, "base_rtt_ps": 8 * US, "min_rate_bps": GBPS, "g": 0.0625,
                 "alpha_resume_interval_ps": 55 * US, "rate_decrease_interval_ps": 50 * US, "rp_timer_ps": 300 * US,
                 "fast_recovery_times": 5, "rate_ai_bps": 20 * 10**6, "rate_hai_bps": 200 * 10**6,
                 "clamp_target_rate": True, "eta": 0.9, "max_stage": 5, "hpcc_rate_ai_bps": 40 * 10**6,
                 "fast_react": False, "rate_on_first_cnp": 0.5}
    assert wire(rdma={"base_rtt": "auto"})["rdma"]["base_rtt_ps"] is None


def test_ecn_overrides_at_every_rate_and_own_table():
    hpcc = presets()["ecn"]["hpcc"]["thresholds"]
    w = wire(ecn={"kmin": "100KB", "pmax": 1})["ecn"]["thresholds"]
    assert [t["rate_bps"] for t in w] == [t["rate_bps"] for t in hpcc]
    assert all(t["kmin_bytes"] == 100_000 and t["pmax"] == 1 for t in w)
    assert [t["kmax_bytes"] for t in w] == [t["kmax_bytes"] for t in hpcc]
    own = wire(ecn={"rate": [{"rate": "100Gbps", "kmin": "5KB", "kmax": "200KB", "pmax": 0.01}]})["ecn"]
    assert own == {"thresholds": [{"rate_bps": 100 * GBPS, "kmin_bytes": 5000, "kmax_bytes": 200_000, "pmax": 0.01}]}


def test_switch_model_shared_buffer_in_every_family():
    sc = scenario_from_dict({"transport": "rdma", "pfc": {}, "rdma": {"cc": "none"},
                             "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 2, "spines": 1,
                                          "host_rate": "100Gbps", "fabric_rate": "100Gbps",
                                          "switch_model": "shared_buffer"}})
    models = {n["kind"]: set() for n in sc.to_wire()["network"]["nodes"]}
    for n in sc.to_wire()["network"]["nodes"]:
        models[n["kind"]].add(n["model"])
    assert models == {"host": {"output_queued"}, "switch": {"shared_buffer"}}


@pytest.mark.parametrize("extra, field, words", [
    ({"pfc": {"alpha": -0.5}}, "pfc.alpha", "-0.5 is not a dynamic-threshold factor"),
    ({"ecn": {"kmin": "2MB"}}, "ecn.kmin", "Kmin 2000000 B is above Kmax 400000 B"),
    ({"ecn": {"kmax": "2kB"}}, "ecn.kmax", "Kmin 100000 B is above Kmax 2000 B"),
    ({"ecn": {"rate": [{"rate": "100Gbps", "kmin": "5kB", "kmax": "1kB", "pmax": 0.1}]}}, "ecn.rate[0].kmin", "Kmin"),
    ({"ecn": {"rate": []}}, "ecn.rate", "at least one entry"),
    ({"ecn": {"rate": [], "kmin": 5}}, "ecn.kmin", "not both"),
    ({}, "rdma.cc", "dcqcn reacts to ECN marks, but the scenario has no [ecn] section"),
    ({"ecn": {}, "rdma": {"g": 2.0}}, "rdma.g", "not an EWMA gain"),
    ({"ecn": {}, "rdma": {"ack_size": 0}}, "rdma.ack_size", ""),
    ({"ecn": {}, "rdma": {"cc": "bbr"}}, "rdma.cc", "'none', 'dcqcn' or 'hpcc'"),
    ({"pfc": {"buffer": "-1MB"}}, "pfc.buffer", "negative"),
    ({"pfc": {"alpha": True}}, "pfc.alpha", ""),
    ({"transport": "message", "rdma": {}}, "rdma", 'needs transport = "rdma"'),
    ({"fidelity": "flow"}, "transport", 'runs only in the packet engine; use fidelity = "packet"'),
])
def test_bad_values_name_the_users_key(extra, field, words):
    with pytest.raises(ScenarioError) as e:
        fabricsim.run(scenario_from_dict(star("a", **extra), "x.toml"))
    assert (e.value.source, e.value.field) == ("x.toml", field)
    assert words in e.value.reason


def test_flow_fidelity_refuses_rdma_pfc_and_ecn():
    with pytest.raises(ScenarioError) as e:
        fabricsim.run(scenario_from_dict(star("a", ecn={})), fidelity="flow")
    assert e.value.field == "transport"
    no_rdma = {k: v for k, v in star("a").items() if k != "transport"}
    for key in ("pfc", "ecn"):
        d = {**no_rdma, key: {}}
        if key == "ecn":
            d["topology"]["nodes"][0]["model"] = "output_queued"
            del d["pfc"]
        with pytest.raises(ScenarioError) as e:
            fabricsim.run(scenario_from_dict(d), fidelity="flow")
        assert e.value.field == key and "not modelled at flow fidelity" in e.value.reason


def test_shared_buffer_without_pfc_names_the_switch_model():
    d = star("a")
    del d["pfc"], d["transport"]
    with pytest.raises(ScenarioError) as e:
        fabricsim.run(scenario_from_dict(d))
    assert e.value.field == "topology.nodes[0].model" and "no [pfc] section" in e.value.reason
    fam = {"topology": {"kind": "leaf_spine", "racks": 1, "hosts_per_rack": 2, "spines": 1, "host_rate": "100Gbps",
                        "fabric_rate": "100Gbps", "switch_model": "shared_buffer"}}
    with pytest.raises(ScenarioError) as e:
        fabricsim.run(scenario_from_dict(fam))
    assert e.value.field == "topology.switch_model"


# ---- the record against hand calculations -------------------------------------------------------------------------


def test_one_to_one_message_has_one_ack_per_packet_and_runs_at_line_rate():
    """100 packets of 1000 B + 48 B through one switch, cc none: N ACKs of 60 B (the preset's ack size), wire
    bytes = payload + N × header, and completion = N serialisations + 2 link delays + the last packet's second
    serialisation (store and forward): 100 × 83.84 ns + 2 µs + 83.84 ns = 10,467.84 ns."""
    n = 100
    rec = fabricsim.run(scenario_from_dict(star("a", size=n * 1000, rdma={"cc": "none"})))
    df = rec.frame().set_index("name")
    assert list(df["kind"]) == ["message", "rdma-ack"]
    assert df.loc["a", "tx_bytes"] == df.loc["a", "rx_bytes"] == n * 1000 + n * 48
    ack_bytes = presets()["rdma"]["hpcc"]["none"]["ack_bytes"]
    assert df.loc["a/ack", "rx_packets"] == n and df.loc["a/ack", "rx_bytes"] == n * ack_bytes
    assert rec.scalars["completion_ps"] == n * SER_PS + 2 * US + SER_PS == 10_467_840
    # The first ACK leaves r when the first packet arrives: one serialisation + 1 µs, twice.
    assert df.loc["a/ack", "first_tx_ps"] == 2 * (SER_PS + US)
    # Line rate, never changed (cc none): one row in the rate log.
    assert rec.rates().to_dict("list") == {"t_s": [0.0], "flow": ["a"], "rate_gbps": [100.0]}
    # One packet at a time: no queue, no mark, no pause; the switch's ingress from a held one packet at most.
    assert (rec.pfc_pauses, rec.pfc_paused_s, rec.ecn_marks, rec.cnps, rec.deadlock) == (0, 0.0, 0, 0, None)
    ports = rec.roce_ports()
    assert ports.to_dict("list") == {"port": ["sw->a"], "node": ["sw"], "pause_tx": [0], "pause_rx": [0],
                                     "paused_s": [0.0], "ecn_marks": [0], "peak_ingress_bytes": [1048]}
    assert len(rec.pfc_events()) == 0


def test_ecn_marks_every_packet_that_leaves_a_queue_behind():
    """ECN with Kmin = Kmax = 0 and Pmax 1 marks a packet iff it leaves a non-empty data queue behind (marking at
    dequeue). Alone, a's packets never queue: 0 marks. Two senders into r: pair k of packets arrives at t0 + k·s
    (s = one serialisation) and sw->r starts packet j at t0 + j·s; at one picosecond a transmitter decides before
    packets land (`Ev::tie_key`), so packet j leaves behind the 2j packets of pairs 0..j-1 less the j + 1 started:
    j − 1 while pairs arrive (packet 0 leaves nothing: it starts as it lands, its twin lands after; packet 1 leaves
    nothing: pair 1 lands just after it starts), then the backlog drains to the last, which leaves nothing. So
    2,000 − 3 = 1,997 marks, all at sw->r; each marked packet's ACK carries a CNP back (cnps = marks)."""
    ecn = {"kmin": 0, "kmax": 0, "pmax": 1.0}
    alone = fabricsim.run(scenario_from_dict(star("a", ecn=ecn, rdma={"cc": "none"})))
    assert alone.ecn_marks == 0
    two = fabricsim.run(scenario_from_dict(star("ab", ecn=ecn, pfc={"buffer": "1MB"}, rdma={"cc": "none"})))
    assert two.ecn_marks == 1997 and two.cnps == two.ecn_marks
    assert two.roce_ports()[["port", "ecn_marks"]].query("ecn_marks > 0").values.tolist() == [["sw->r", two.ecn_marks]]


def test_rate_on_first_cnp_cuts_the_rate_at_the_first_cnp():
    """HPCC's fork at a QP's first CNP (rdma-hw.cc `cnp_received_mlx`): target ← rate ← RateOnFirstCnp × rate, then
    the α and decrease timers start. Two senders into r at 100 Gb/s, every queued packet marked: until its first
    CNP a QP runs exactly as without the key. With f = 0.5 its first rate change is at that CNP, to exactly 50
    Gb/s; with the default f = 1 the first change is the first decrease check, which comes decrease_interval
    (4 µs) + 1 ns after the CNP, so the two first changes are at least 4.001 µs apart."""
    ecn = {"kmin": 0, "kmax": 0, "pmax": 1.0}

    def first_changes(**rdma):
        rec = fabricsim.run(scenario_from_dict(star("ab", ecn=ecn, pfc={"buffer": "1MB"}, rdma={"cc": "dcqcn", **rdma})))
        r = rec.rates()
        return {f: g.iloc[1] for f, g in r.groupby("flow") if len(g) > 1}

    cut, plain = first_changes(rate_on_first_cnp=0.5), first_changes()
    assert set(cut) == set(plain) == {"a", "b"}
    for f in ("a", "b"):
        assert cut[f]["rate_gbps"] == 50.0
        assert plain[f]["t_s"] - cut[f]["t_s"] >= 4.001e-6 - 1e-15
    with pytest.raises(ScenarioError, match=r"rdma\.rate_on_first_cnp: 0 is not a fraction of the rate in \(0, 1\]"):
        fabricsim.run(scenario_from_dict(star("a", ecn=ecn, rdma={"rate_on_first_cnp": 0})))


def test_pfc_keeps_a_two_to_one_bottleneck_busy_and_pauses_when_the_threshold_says():
    """Two senders, 1,000 packets each, no congestion control, a 1 MB shared buffer (3 ports).

    Pool = 1,000,000 − 3 × 37,500 (headroom 3 × 100 Gb/s × 1 µs / 8) − 3 × 4,096 (reserve) = 875,212 B. A port
    pauses when its shared use x ≥ α (pool − shared used) with α = 1/8; with the other port holding the same or
    one packet less, that is the first holding of 88 packets (88 × 1048 − 4096 = 88,128 ≥ 87,500; 87 packets:
    87,080 < 87,500). Packet k of each sender arrives at t1 + k × 83.84 ns (t1 = 83.84 ns + 1 µs) while the
    egress takes one packet every 83.84 ns, alternating, so a port first holds 88 packets at arrival k = 173..175
    (the egress may or may not have taken its packet of that instant). The PAUSE then takes effect upstream a
    64 B frame (5.12 ns, after at most one 60 B ACK on the wire, 4.8 ns) and 1 µs later.

    Resumed data arrives about 2.2 µs after the resume, while the ~85 packets left per port take 14 µs to
    drain, so sw->r never idles: completion = 2,000 serialisations + 2 µs + one more serialisation. With a
    200 KB buffer (pool 75,212 B: pause at about 11 packets, drained in under 2 µs) it idles: slower."""
    rec = fabricsim.run(scenario_from_dict(star("ab", pfc={"buffer": "1MB"}, rdma={"cc": "none"})))
    assert rec.packets["dropped"] == 0 and rec.complete
    busy = 2000 * SER_PS + 2 * US + SER_PS
    assert rec.scalars["completion_ps"] == busy
    ev = rec.pfc_events()
    first = ev[ev["pause"]].groupby("port")["t_s"].min()
    assert sorted(first.index) == ["a->sw", "b->sw"]
    t1 = SER_PS + US
    lo, hi = t1 + 173 * SER_PS + 5120 + US, t1 + 175 * SER_PS + 4800 + 5120 + US
    assert all(lo * 1e-12 <= t <= hi * 1e-12 for t in first), (first, lo, hi)
    # Counters agree with the log: PAUSEs sent by the switch's ingress = received upstream = PAUSE events, and
    # each port's paused time is the sum of its intervals.
    ports = rec.roce_ports().set_index("port")
    assert rec.pfc_pauses == ports["pause_tx"].sum() == ports["pause_rx"].sum() == int(ev["pause"].sum()) > 0
    assert ports.loc["sw->a", "pause_tx"] == ports.loc["a->sw", "pause_rx"]
    for port, paused_s in ports["paused_s"].items():
        assert paused_s == pytest.approx(sum(b - a for p, a, b in pause_intervals(rec) if p == port), abs=1e-15)
    assert rec.pfc_paused_s == pytest.approx(ports["paused_s"].sum())
    small = fabricsim.run(scenario_from_dict(star("ab", pfc={"buffer": "200KB"}, rdma={"cc": "none"})))
    assert small.complete and small.scalars["completion_ps"] > busy


def ring(watchdog: str = "1ms") -> dict:
    """Three shared-buffer switches in a ring A-B-C, one host each; each host sends 10 MB to the host two
    switches away clockwise along an explicit clockwise path, so link A->B carries hA's and hC's messages, B->C
    hB's and hA's, C->A hC's and hB's: every buffer waits on the next one clockwise. No congestion control and a
    200 KB buffer: each inter-switch port is offered 200 Gb/s, pauses its upstream, and the pauses close the
    cycle."""
    sw = ["A", "B", "C"]
    nodes = [{"name": s, "kind": "switch", "model": "shared_buffer"} for s in sw] + \
            [{"name": f"h{s}", "kind": "host"} for s in sw]
    links = [{"a": f"h{s}", "b": s, "rate": "100Gbps", "delay": "1us"} for s in sw] + \
            [{"a": sw[i], "b": sw[(i + 1) % 3], "rate": "100Gbps", "delay": "1us"} for i in range(3)]
    msgs = [{"name": f"m{s}", "src": f"h{s}", "dst": f"h{sw[(i + 2) % 3]}", "size": "10MB", "packet_size": 1000,
             "header": 48, "path": [f"h{s}", s, sw[(i + 1) % 3], sw[(i + 2) % 3], f"h{sw[(i + 2) % 3]}"]}
            for i, s in enumerate(sw)]
    return {"transport": "rdma", "pfc": {"buffer": "200KB", "watchdog": watchdog}, "rdma": {"cc": "none"},
            "topology": {"kind": "custom", "nodes": nodes, "links": links}, "messages": msgs}


def test_a_cyclic_buffer_dependency_deadlocks_and_the_record_names_the_cycle():
    rec = fabricsim.run(scenario_from_dict(ring()))
    cycle = rec.deadlock.split(" -> ")
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["A->B", "B->C", "C->A"]
    # Each port waits on the next clockwise one: X->Y is followed by Y->Z.
    assert all(a.split("->")[1] == b.split("->")[0] for a, b in zip(cycle, cycle[1:]))
    assert not rec.complete and rec.incomplete_messages == 3
    assert rec.incomplete_reason() == (f"deadlock: a cycle of paused ports: {rec.deadlock}; 3 message(s) never "
                                       "delivered (mA, mB, mC)")
    # No loss: what was sent is delivered or still held (lossless), and the partial counters are kept.
    p = rec.packets
    assert p["dropped"] == 0 and p["tx"] == p["rx"] + p["in_flight"] and p["in_flight"] > 0
    assert 0 < p["rx"] < 3 * 10_000
    assert rec.pfc_pauses > 0 and rec.pfc_paused_s > 0
    # PAUSEs never resumed: each paused port stays paused to the end (a pause lasts until its resume).
    assert not rec.pfc_events()["pause"].eq(False).any()
    assert {p for p, _, _ in pause_intervals(rec)} >= set(cycle)


def test_non_roce_records_have_empty_roce_views():
    rec = fabricsim.run(scenario_from_dict({
        "topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                     "links": [{"a": "a", "b": "b", "rate": "1Gbps"}]},
        "messages": [{"name": "m", "src": "a", "dst": "b", "size": "10KB"}]}))
    assert not rec.has_roce
    assert (rec.pfc_pauses, rec.pfc_paused_s, rec.ecn_marks, rec.cnps, rec.deadlock) == (0, 0.0, 0, 0, None)
    assert rec.roce_ports().empty and rec.rates().empty and rec.pfc_events().empty
    d = rec.to_json_dict(flows=False)
    assert "pfc_pauses" not in d and "cnps" not in d and d["deadlock"] is None


@pytest.mark.parametrize("name", ["roce_incast.toml", "roce_allreduce.toml"])
def test_a_dump_reads_back_as_the_same_scenario(name):
    """A generated table dumps the keys it was given, as given, so a dump (Python or JSON mode) reads back into
    the same wire header (before, an [ecn] table dumped its default preset beside its empty own-rate list, which
    the reader refuses as both at once)."""
    import json
    from pathlib import Path

    from fabricsim.spec import load_scenario

    sc = load_scenario(Path(__file__).resolve().parents[1] / "examples" / name)
    assert scenario_from_dict(sc.model_dump()).header() == sc.header()
    assert scenario_from_dict(json.loads(json.dumps(sc.model_dump(mode="json")))).header() == sc.header()
    assert PfcDef(buffer="1MB").model_dump() == {"buffer": "1MB"}


def test_the_hpcc_ecn_preset_has_a_400g_row():
    """Issue 33: HPCC's run.py:96-98 writes a second ECN row at 4 × bw (bw = 100 Gb/s): Kmin 100·(4·100)/25 =
    1600 KB, Kmax 400·(4·100)/25 = 6400 KB, Pmax 0.2 (KB = 1000 B). The 25/50/100G rows are config.txt's."""
    rows = {t["rate_bps"]: (t["kmin_bytes"], t["kmax_bytes"], t["pmax"]) for t in presets()["ecn"]["hpcc"]["thresholds"]}
    assert rows == {25 * GBPS: (100_000, 400_000, 0.2), 50 * GBPS: (200_000, 800_000, 0.2),
                    100 * GBPS: (400_000, 1_600_000, 0.2), 400 * GBPS: (1_600_000, 6_400_000, 0.2)}
