"""Lossless (input-buffered, credit-based) fabrics through the public API: no drops, no deadlock."""

import fabricsim
from fabricsim import scenario_from_dict


def vela(**extra):
    d = {
        "topology": {"kind": "leaf_spine", "racks": 4, "leaves_per_rack": 2, "hosts_per_rack": 6, "nics_per_host": 4,
                     "spines": 4, "parallel_links": 2, "host_rate": "100Gbps", "fabric_rate": "100Gbps",
                     "host_delay": "100ns", "fabric_delay": "100ns", "switch_latency": "1.5us",
                     "switch_model": "input_buffered", "input_buffer": "128KiB"},
        "routing": {"ecmp": "per_message"},
    }
    d.update(extra)
    return d


def test_all_to_all_on_a_lossless_vela_like_fabric_completes_without_loss():
    hosts = [0, 1, 6, 7, 12, 13, 18, 19]  # two per rack
    msgs = [{"name": f"m{a}_{b}", "src": f"h{a}", "dst": f"h{b}", "size": "256KiB", "src_nic": (a + b) % 4,
             "dst_nic": (a * b) % 4} for a in hosts for b in hosts if a != b]
    rec = fabricsim.run(scenario_from_dict(vela(messages=msgs)))
    assert rec.packets["dropped"] == 0
    assert rec.completion_time_s is not None, "every message completed: no deadlock"
    # 56 messages of 256 KiB (1 KiB payload packets): every packet delivered exactly once.
    assert rec.packets["rx"] == 56 * 256 == rec.packets["tx"]
    # Same-leaf traffic crosses 1 switch, cross-leaf 3.
    assert set(rec.hops) <= {1, 3}


def test_lossless_incast_is_fair_where_a_lossy_fifo_drops():
    base = {"topology": {"kind": "custom", "nodes": [
                {"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}, {"name": "r", "kind": "host"},
                {"name": "s", "kind": "switch", "model": "input_buffered", "input_buffer": "16KiB"}],
            "links": [{"a": "a", "b": "s", "rate": "10Gbps"}, {"a": "b", "b": "s", "rate": "10Gbps"},
                      {"a": "s", "b": "r", "rate": "1Gbps"}]},
            "messages": [{"name": "x", "src": "a", "dst": "r", "size": "1MB"}, {"name": "y", "src": "b", "dst": "r", "size": "1MB"}]}
    rec = fabricsim.run(scenario_from_dict(base))
    assert rec.packets["dropped"] == 0
    done = [f["complete_s"] for f in rec.flows()]
    # 2 MB through 1 Gb/s (1024 B payload per packet, no header): 16 ms; round robin finishes both together.
    assert abs(done[0] - done[1]) < 20e-6 and 0.016 <= max(done) < 0.0162, done
    base["topology"]["nodes"][3] = {"name": "s", "kind": "switch"}
    lossy = fabricsim.run(scenario_from_dict(base))
    assert lossy.packets["dropped"] > 0, "the same burst overflows a 100-packet DropTail queue"
