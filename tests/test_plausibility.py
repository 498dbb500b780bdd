"""Plausibility warnings: a link rate below 1 Mb/s or a message/packet size below 1 byte is a FabricsimWarning that
names the field (its path in the file) and the value as written; plausible scenarios and traffic rates stay quiet."""

import warnings

import pytest

from fabricsim.errors import FabricsimWarning
from fabricsim.spec import scenario_from_dict


def leaf_spine(host_rate="100Gbps", fabric_rate="100Gbps", **msg):
    return {"topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 2, "spines": 1,
                         "host_rate": host_rate, "fabric_rate": fabric_rate},
            "messages": [{"name": "m", "src": "h0", "dst": "h2", "size": "1MiB", **msg}]}


def messages_of(doc) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scenario_from_dict(doc, "x.toml")
    return [str(w.message) for w in caught if issubclass(w.category, FabricsimWarning)]


def test_a_bare_number_rate_is_named_with_its_path_and_the_likely_unit():
    assert messages_of(leaf_spine(host_rate=100)) == [
        'x.toml: topology.host_rate = 100 means 100 bit/s, below the 1 Mb/s any fabric link has; did you mean '
        '"100Gbps"?']


def test_a_rate_with_a_unit_is_named_as_written_without_a_guess():
    # 500 kb/s = 500,000 bit/s: below the floor, but the unit was written, so no "did you mean".
    (msg,) = messages_of(leaf_spine(fabric_rate="500kbps"))
    assert msg == 'x.toml: topology.fabric_rate = "500kbps" means 500,000 bit/s, below the 1 Mb/s any fabric link has'


def test_the_floor_is_one_megabit():
    assert messages_of(leaf_spine(host_rate=1_000_000)) == []       # exactly 1 Mb/s: plausible
    (msg,) = messages_of(leaf_spine(host_rate="999.999kbps"))        # 999,999 bit/s
    assert "topology.host_rate" in msg and "999,999 bit/s" in msg


def test_custom_links_and_port_caps_are_located_by_index():
    doc = {"topology": {"kind": "custom",
                        "nodes": [{"name": "a", "kind": "host"}, {"name": "s", "kind": "switch"},
                                  {"name": "b", "kind": "host"}],
                        "links": [{"a": "a", "b": "s", "rate": "10Gbps"}, {"a": "s", "b": "b", "rate": 40}]},
           "ports": [{"node": "s", "peer": "b", "rate_cap": "0.5Mbps"}]}
    msgs = messages_of(doc)
    assert msgs == ['x.toml: topology.links[1].rate = 40 means 40 bit/s, below the 1 Mb/s any fabric link has; '
                    'did you mean "40Gbps"?',
                    'x.toml: ports[0].rate_cap = "0.5Mbps" means 500,000 bit/s, below the 1 Mb/s any fabric link has']


def test_sizes_below_one_byte():
    # 0.75 rounds to 1 byte (accepted) but was surely meant in a bigger unit.
    doc = leaf_spine()
    doc["messages"][0]["size"] = 0.75
    assert messages_of(doc) == ['x.toml: messages[0].size = 0.75 means 0.75 bytes (rounded to 1 byte), below 1 byte; '
                                'did you mean "0.75MiB"?']
    doc = leaf_spine(packet_size="0.9B")
    (msg,) = messages_of(doc)
    assert msg.startswith('x.toml: messages[0].packet_size = "0.9B" means 0.9 bytes')
    assert messages_of(leaf_spine(packet_size=1)) == [], "1 byte exactly is plausible (if odd)"


def test_many_implausible_rows_give_three_warnings_and_a_count():
    doc = leaf_spine()
    doc["messages"] = [{"name": f"m{i}", "src": "h0", "dst": "h2", "size": 0.8} for i in range(10)]
    msgs = messages_of(doc)
    assert [m.split(" = ")[0] for m in msgs[:3]] == [f"x.toml: messages[{i}].size" for i in range(3)]
    assert msgs[3] == "x.toml: 7 more implausible rate(s) or size(s) like these" and len(msgs) == 4


def test_plausible_scenarios_and_slow_traffic_sources_are_quiet():
    doc = leaf_spine()
    doc["sources"] = [{"kind": "cbr", "src": "h0", "dst": "h3", "rate": "64kbps", "stop": "1ms"}]  # a voice stream
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sc = scenario_from_dict(doc, "x.toml")
        sc.topology.network()  # the builder re-reads the checked rates quietly
        sc.model_copy(update={"seed": 3})


def test_a_scenario_built_in_python_warns_once_naming_the_path():
    """The engine's reader judges a scenario built in Python as it judges a file: on its first reading (here
    `check()`), once, with the full path; a model object alone (LinkDef) is only typed, and does not warn. The
    value is said as the typed model holds it (100 bit/s, dumped as "100bps"), so there is no unit to guess."""
    import warnings

    from fabricsim.spec import LinkDef, NodeDef, Scenario
    from fabricsim.topology.custom import CustomTopology

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        link = LinkDef(a="a", b="b", rate=100)
    sc = Scenario(topology=CustomTopology(kind="custom", nodes=[NodeDef(name="a", kind="host"), NodeDef(name="b", kind="host")],
                                          links=[link]))
    with pytest.warns(FabricsimWarning, match=r'^<scenario>: topology.links\[0\].rate = "100bps" means 100 bit/s, below the 1 Mb/s'):
        sc.check()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sc.header()["network"]["links"][0]["rate_bps"] == 100, "said once; the value is taken as written"


def test_cli_prints_one_warning_line_and_goes_on(tmp_path, capsys):
    from fabricsim.cli import main

    f = tmp_path / "slow.toml"
    f.write_text('[topology]\nkind = "leaf_spine"\nracks = 2\nhosts_per_rack = 1\nspines = 1\nhost_rate = 100\n'
                 'fabric_rate = "100Gbps"\n')
    assert main(["validate", str(f)]) == 0
    err = capsys.readouterr().err
    assert err == (f'fabricsim: warning: {f}: topology.host_rate = 100 means 100 bit/s, below the 1 Mb/s any fabric '
                   'link has; did you mean "100Gbps"?\n')
