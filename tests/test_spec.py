"""Scenario -> wire spec conversion, checked field by field by hand."""

import pytest

import fabricsim

from fabricsim import Scenario, ScenarioError, load_scenario, scenario_from_dict

EXAMPLES = __import__("pathlib").Path(__file__).parents[1] / "examples"


def base(**extra):
    d = {
        "topology": {
            "kind": "custom",
            "nodes": [{"name": "a", "kind": "host"}, {"name": "s", "kind": "switch", "latency": "1us"},
                      {"name": "b", "kind": "host"}],
            "links": [{"a": "a", "b": "s", "rate": "10Gbps", "delay": "2us"}, {"a": "s", "b": "b", "rate": 1e9},
                      {"a": "a", "b": "s", "rate": "10Gbps"}],
        },
        "messages": [{"name": "m0", "src": "a", "dst": "b", "size": "1KiB", "src_nic": 1},
                     {"name": "m1", "src": "b", "dst": "a", "size": 3000, "after": ["m0"], "delay": "1us"}],
    }
    d.update(extra)
    return d


def test_wire_conversion_by_hand():
    sc = scenario_from_dict(base(
        ports=[{"node": "s", "peer": "a", "queue": {"limit_bytes": "150kB", "limit_packets": "unlimited"}, "rate_cap": "5Gbps"}],
        measure={"queue_interval": "10us", "queues": ["s->b", "s->a#1"]},
    ))
    w = sc.to_wire()
    assert [n["name"] for n in w["network"]["nodes"]] == ["a", "s", "b"]
    assert w["network"]["nodes"][1]["latency_ps"] == 1_000_000
    l0 = w["network"]["links"][0]
    assert (l0["a"], l0["b"], l0["rate_bps"], l0["delay_ps"]) == (0, 1, 10**10, 2_000_000)
    # The port override applies to s's ends of both a-s links (b_end, since s is each link's b).
    for li in (0, 2):
        assert w["network"]["links"][li]["b_end"] == {
            "queue": {"limit_packets": None, "limit_bytes": 150_000, "qdisc": None}, "rate_cap_bps": 5 * 10**9}
    assert w["network"]["links"][1]["a_end"] == {}
    m0, m1 = w["messages"]
    assert (m0["src"], m0["src_nic"], m0["dst"], m0["size_bytes"], m0["packet_bytes"]) == (0, 1, 2, 1024, 1024)
    assert (m1["deps"], m1["delay_ps"]) == ([0], 1_000_000)
    # s's ports in link order: 0 -> a (link 0), 1 -> b (link 1), 2 -> a (link 2).
    assert w["measure"] == {"queue_sample_ps": 10_000_000, "sample_ports": [[1, 1], [1, 2]]}
    assert w["network"]["default_queue"] == {"limit_packets": 100, "limit_bytes": None, "qdisc": None}


def test_defaults_and_seed_override():
    sc = scenario_from_dict(base())
    assert sc.seed == 1 and sc.routing.ecmp == "per_flow" and sc.fidelity == "packet"
    assert sc.with_seed(9).to_wire()["seed"] == 9


def test_errors_name_the_field():
    bad = base()
    bad["messages"][1]["after"] = ["zz"]
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(bad, source="x.toml")
    assert str(e.value) == "x.toml: messages[1].after[0]: unknown message 'zz'"
    assert (e.value.field, e.value.source) == ("messages[1].after[0]", "x.toml")


def test_builder_topologies_convert_units():
    sc = load_scenario(EXAMPLES / "dumbbell_onoff.toml")
    links = sc.to_wire()["network"]["links"]
    bottleneck = links[8]
    assert (bottleneck["rate_bps"], bottleneck["delay_ps"]) == (100_000_000, 5_000_000_000)
    assert bottleneck["a_end"]["queue"]["qdisc"] == {"kind": "fifo", "limit_packets": 100, "limit_bytes": None}
    assert links[0]["delay_ps"] == 2_000_000_000


def test_python_built_scenario_matches_toml():
    from fabricsim.topology import dumbbell

    net = dumbbell(senders=2)
    sc = Scenario(topology={"kind": "custom", "nodes": net.nodes, "links": net.links},
                  messages=[{"name": "x", "src": "sender0", "dst": "receiver", "size": "10KiB"}])
    assert sc.to_wire()["messages"][0]["dst"] == 4


@pytest.mark.parametrize("patch, field", [
    ({"seed": True}, "seed"), ({"seed": "3"}, "seed"), ({"seed": 1.0}, "seed"),
    ({"queue": {"limit_packets": True}}, "queue.limit_packets"),
])
def test_counts_are_strict_integers(patch, field):
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(base(**patch))
    assert e.value.field == field and "valid integer" in e.value.reason


def test_nic_index_must_be_an_integer():
    bad = base()
    bad["messages"][0]["src_nic"] = "1"
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(bad)
    assert e.value.field == "messages[0].src_nic"


def test_parallel_link_number_must_be_an_integer():
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(base(measure={"queues": ["s->a#one"]}))
    assert e.value.field == "measure.queues[0]" and "integer" in e.value.reason


def test_flow_names_are_unique():
    src = {"name": "m0", "kind": "cbr", "src": "a", "dst": "b", "rate": "1Mbps"}
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(base(sources=[src]))
    assert e.value.field == "messages[0].name"
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(base(sources=[dict(src, name="u"), dict(src, name="u")]))
    assert e.value.field == "sources[1].name"


def test_syntax_errors_name_the_line(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('seed = 1\n[topology]\nkind = = "custom"\n')
    with pytest.raises(ScenarioError) as e:
        load_scenario(p)
    assert str(e.value).startswith(f"{p}: line 3: TOML syntax error")
    j = tmp_path / "bad.json"
    j.write_text('{\n  "seed": ,\n}')
    with pytest.raises(ScenarioError) as e:
        load_scenario(j)
    assert str(e.value).startswith(f"{j}: line 2: JSON syntax error")


def test_a_dumped_scenario_validates_back_to_itself():
    sc = load_scenario(EXAMPLES / "dumbbell_onoff.toml")
    again = scenario_from_dict(sc.model_dump())
    assert again.to_wire() == sc.to_wire()


SHIPPED = sorted(p for p in [*EXAMPLES.glob("*.toml"), *(EXAMPLES.parent / "experiments").rglob("*.toml")]
                 if "topology" in __import__("tomllib").loads(p.read_text()))
"""Every shipped scenario file (a sweep file has no [topology] of its own: its base has)."""


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
@pytest.mark.parametrize("mode", ["python", "json"])
def test_every_shipped_scenario_dumps_and_reads_back(path, mode):
    """Issue 33: `scenario_from_dict(sc.model_dump())` failed for every scenario with an [ecn] table; every shipped
    scenario reads back from its dump (Python objects, or JSON text) into the same wire spec."""
    import json

    sc = load_scenario(path)
    dumped = sc.model_dump(mode=mode)
    again = scenario_from_dict(json.loads(json.dumps(dumped)) if mode == "json" else dumped, str(path))
    assert again.to_wire() == sc.to_wire()


def test_barriers_resolve_names_and_reject_cycles():
    from fabricsim import scenario_from_dict
    from fabricsim.errors import ScenarioError

    topo = {"kind": "dumbbell", "senders": 2}
    msgs = [{"name": "a", "src": "sender0", "dst": "receiver", "size": 1000},
            {"name": "b", "src": "sender1", "dst": "receiver", "size": 1000, "after": ["sync"]}]
    wire = scenario_from_dict({"topology": topo, "messages": msgs,
                               "barriers": [{"name": "sync", "after": ["a"]}]}).to_wire()
    assert wire["barriers"] == [{"name": "sync", "deps": [0], "barriers": []}]
    assert wire["messages"][1]["barriers"] == [0] and wire["messages"][1]["deps"] == []
    with pytest.raises(ScenarioError, match=r"barriers\[0\].after\[0\]: unknown message or barrier 'zz'"):
        scenario_from_dict({"topology": topo, "messages": msgs, "barriers": [{"name": "sync", "after": ["zz"]}]})
    # Cycles need the whole DAG: the engine finds them (one validator), naming the rows.
    cyclic = scenario_from_dict({"topology": topo, "messages": msgs, "barriers": [{"name": "sync", "after": ["b"]}]})
    with pytest.raises(ScenarioError, match=r"messages\[1\]\.after: dependency cycle: b -> sync -> b"):
        fabricsim.validate(cyclic)
    with pytest.raises(ScenarioError, match="already names"):
        scenario_from_dict({"topology": topo, "messages": msgs, "barriers": [{"name": "a"}, {"name": "sync"}]})
