"""The Python API checks its inputs (issue 22, item 4): collective endpoints and sizes, and scenario copies
with updates, which are validated as a file is."""

from __future__ import annotations

import pytest

import fabricsim
from fabricsim.collectives import all_to_all, ring_all_reduce
from fabricsim.errors import ScenarioError
from fabricsim.spec import MessageDef, scenario_from_dict

# Two hosts on one switch, 10 Gb/s links of 1 us and a 500 ns switch: a 1024-byte packet serializes in 819.2 ns.
FABRIC = {"topology": {"kind": "custom",
                       "nodes": [{"name": "h0", "kind": "host"}, {"name": "h1", "kind": "host"},
                                 {"name": "s0", "kind": "switch", "latency": "500ns"}],
                       "links": [{"a": "h0", "b": "s0", "rate": "10Gbps", "delay": "1us"},
                                 {"a": "h1", "b": "s0", "rate": "10Gbps", "delay": "1us"}]}}


def message_ps(size: int) -> int:
    """Store-and-forward (docs/guide/packet-engine.md, "Model semantics"): (P + k − 1)·ser + k·delay + (k − 1)·latency, k = 2 hops."""
    return (size // 1024 + 1) * 819_200 + 2 * 1_000_000 + 500_000


def test_plain_names_mean_nic_0_and_sizes_take_units():
    msgs = ring_all_reduce(["h0", "h1"], "64KiB")
    # 2(N − 1) = 2 steps of 65536 / 2 bytes, each node to its neighbour, NIC 0 at both ends.
    assert [(m["src"], m["src_nic"], m["dst"], m["dst_nic"], m["size"]) for m in msgs] == [
        ("h0", 0, "h1", 0, 32768), ("h1", 0, "h0", 0, 32768), ("h0", 0, "h1", 0, 32768), ("h1", 0, "h0", 0, 32768)]
    assert msgs == ring_all_reduce([("h0", 0), ("h1", 0)], 65536)


@pytest.mark.parametrize("call, match", [
    (lambda: ring_all_reduce(["h0", "h1"], 0), r"^size: must be at least 1 byte, got 0$"),
    (lambda: ring_all_reduce(["h0", "h1"], "10Mb"), r"^size: "),
    (lambda: all_to_all(["h0", "h1"], 100, packet=-1), r"^packet: "),
    (lambda: all_to_all(["h0", "h1"], [100]), r"^size: "),
    (lambda: all_to_all([("h0", "0"), ("h1", 0)], 100), r"^nodes\[0\]: expected a host name or a \(host, nic\)"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_model_copy_with_messages_is_validated_and_runs():
    sc = scenario_from_dict(FABRIC, "two.toml")
    ring = sc.model_copy(update={"messages": ring_all_reduce(["h0", "h1"], 65536)})
    assert [m.size for m in ring.messages] == [32768] * 4 and ring.source == "two.toml"
    # Two ring steps one after the other, each a 32 KiB message alone on its links.
    assert fabricsim.run(ring).scalars["completion_ps"] == 2 * message_ps(32768)
    assert sc.messages == []  # the original is untouched
    # Units as in a file ("1ms" for stop), model objects as they are; kept keys keep their values.
    one = ring.model_copy(update={"messages": [MessageDef(name="m", src="h0", dst="h1", size=65536)], "stop": "1ms"})
    assert one.stop == 10**9 and one.topology == sc.topology and len(one.messages) == 1
    assert fabricsim.run(one).scalars["completion_ps"] == message_ps(65536)
    assert one.model_copy(update={"seed": 5}).stop == 10**9  # a kept duration is not re-read as seconds


@pytest.mark.parametrize("update, field", [
    ({"messages": [{"name": "m", "src": "h9", "dst": "h1", "size": 10}]}, "messages[0].src"),
    ({"messages": [{"name": "m", "src": "h0", "dst": "h1", "size": -1}]}, "messages[0].size"),
    ({"messages": [{"name": "m", "src": "h0", "dst": "h1", "size": 10, "after": ["x"]}]}, "messages[0].after[0]"),
    ({"mesages": []}, "mesages"),
    ({"seed": -1}, "seed"),
])
def test_model_copy_errors_name_the_field(update, field):
    sc = scenario_from_dict(FABRIC, "two.toml")
    with pytest.raises(ScenarioError) as e:
        sc.model_copy(update=update)
    assert str(e.value).startswith(f"two.toml: {field}: ")


def test_with_seed_checks_the_seed():
    sc = scenario_from_dict(FABRIC, "two.toml")
    assert sc.with_seed(9).seed == 9 and sc.with_seed(9).source == "two.toml"
    with pytest.raises(ScenarioError, match="seed: expected an integer >= 0"):
        sc.with_seed(-1)
