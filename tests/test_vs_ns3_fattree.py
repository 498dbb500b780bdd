"""The fat-tree race against ns-3 (benchmarks/vs_ns3_fattree.py): its permutation and scenario without ns-3, and k = 4 in both simulators (slow, needs ns-3)."""

import importlib.util
import json
import subprocess
import sys
import tomllib

import pytest

from benchmarks_path import ROOT

spec = importlib.util.spec_from_file_location("vs_ns3_fattree", ROOT / "benchmarks" / "vs_ns3_fattree.py")
race = importlib.util.module_from_spec(spec)
spec.loader.exec_module(race)


@pytest.mark.parametrize("n", [2, 3, 16, 128, 1024])
def test_permutation_is_a_seeded_derangement(n):
    p = race.permutation(n, 7)
    assert sorted(p) == list(range(n))  # every host receives exactly once
    assert all(p[i] != i for i in range(n))  # nobody sends to itself
    assert race.permutation(n, 7) == p  # seeded
    if n >= 16:
        assert race.permutation(n, 8) != p


def test_permutation_needs_two_hosts():
    with pytest.raises(ValueError, match="at least 2"):
        race.permutation(1, 1)


def test_k4_scenario_counts():
    doc = tomllib.loads(race.scenario_toml(4, 1))
    assert doc["topology"] == {"kind": "fat_tree3", "k": 4, "rate": "100Gbps", "delay": "1us"}
    assert doc["routing"] == {"ecmp": "per_packet"}
    assert doc["queue"] == {"limit_packets": race.QUEUE_PACKETS}
    msgs = doc["messages"]
    assert len(msgs) == 16
    assert all(m["size"] == 1 << 20 and m["packet_size"] == 1024 and m["header"] == 8 + 20 + 2 for m in msgs)
    hosts, switches, links = race.fabric(4)
    assert (len(hosts), len(switches), len(links)) == (16, 20, 48)
    assert sorted(m["src"] for m in msgs) == sorted(hosts)
    assert sorted(m["dst"] for m in msgs) == sorted(hosts)
    assert all(m["src"] != m["dst"] for m in msgs)
    # 1 MiB is exactly 1,024 packets of 84.32 ns each at 100 Gb/s, in both simulators
    assert (race.PACKETS, race.SER_PS) == (1024, 84_320)


def test_k4_scenario_loads_and_validates():
    import fabricsim

    sc = fabricsim.scenario_from_dict(tomllib.loads(race.scenario_toml(4, 1)))
    assert fabricsim.validate(sc) == 16


@pytest.mark.slow
def test_k4_agrees_with_ns3():
    pytest.importorskip("ns", reason="ns-3 3.44 (PyPI ns3) is not installed; `make validate` installs it")
    # a child process: the race sets ns-3's time resolution to picoseconds for its whole process
    script = ROOT / "benchmarks" / "vs_ns3_fattree.py"
    out = subprocess.run([sys.executable, str(script), "--k", "4", "--json", "--repeat", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)
    assert r["hosts"] == 16 and not r["ns3_partial"]
    for side in ("ns3", "fabricsim"):
        assert r[side]["rx_packets"] == 16 * 1024 and r[side]["drops"] == 0, side
    assert abs(r["throughput_rel_diff"]) <= 0.05, r
    assert abs(r["delay_rel_diff"]) <= 0.10, r
    assert r["ns3_events"] > 0 and r["fabricsim_events"] > 0
