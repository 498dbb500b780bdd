"""The engine through the public API and the CLI: closed forms, hop counts, determinism, threads, JSON output."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import fabricsim
from fabricsim import scenario_from_dict

ROOT = Path(__file__).parents[1]


def two_hosts(**extra):
    d = {
        "topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                     "links": [{"a": "a", "b": "b", "rate": "1Gbps", "delay": "1us"}]},
        "messages": [{"name": "m", "src": "a", "dst": "b", "size": 10_000, "packet_size": 1000, "header": 40}],
    }
    d.update(extra)
    return scenario_from_dict(d)


def test_one_message_over_one_link_closed_form():
    # 10 x 1040 B at 1 Gb/s = 83.2 us, + 1 us propagation.
    r = fabricsim.run(two_hosts())
    assert r.scalars["completion_ps"] == 84_200_000
    assert abs(r.completion_time_s - 84.2e-6) < 1e-15
    f = r.flows()[0]
    assert (f["tx_packets"], f["rx_packets"], f["rx_bytes"]) == (10, 10, 10_400)
    # A message is pulled by its NIC one packet at a time, so a packet's send time (FlowMonitor's tx
    # timestamp) is when its serialisation starts: every delay is 8.32 us + 1 us.
    assert abs(f["mean_delay_s"] - 9.32e-6) < 1e-15
    assert abs(f["max_delay_s"] - 9.32e-6) < 1e-15


def leaf_spine(ecmp="per_flow", seed=1):
    return scenario_from_dict({
        "seed": seed,
        "topology": {"kind": "leaf_spine", "racks": 2, "hosts_per_rack": 2, "spines": 4, "host_rate": "10Gbps",
                     "fabric_rate": "10Gbps", "fabric_delay": "1us"},
        "routing": {"ecmp": ecmp},
        "queue": {"limit_packets": "unlimited"},
        "messages": [{"name": "same_leaf", "src": "h0", "dst": "h1", "size": "100KiB"},
                     {"name": "cross", "src": "h2", "dst": "h0", "size": "1MiB"}],
    })


def test_hop_counts_same_leaf_and_cross_rack():
    r = fabricsim.run(leaf_spine())
    assert r.hops == {1: 100, 3: 1024}


def test_same_seed_identical_and_different_seed_differs():
    a = fabricsim.run(leaf_spine("per_packet", seed=5)).digests()
    b = fabricsim.run(leaf_spine("per_packet", seed=5)).digests()
    c = fabricsim.run(leaf_spine("per_packet", seed=6)).digests()
    assert a == b
    assert a["queues.tx_packets"] != c["queues.tx_packets"]


def test_concurrent_runs_in_threads_match_sequential():
    scenarios = [leaf_spine("per_packet", seed=s) for s in (1, 2, 3, 4)]
    sequential = [fabricsim.run(s).digests() for s in scenarios]
    results = [None] * 4

    def work(i):
        results[i] = fabricsim.run(scenarios[i]).digests()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seq, par in zip(sequential, results):
        assert seq == par


def test_cli_json_is_one_object_with_the_documented_keys():
    p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "run", str(ROOT / "examples" / "leaf_spine_incast.toml"),
                        "--json", "--seed", "3"], capture_output=True, text=True, check=True)
    rec = json.loads(p.stdout)  # exactly one object: json.loads rejects trailing data
    for key in ("completion_time_s", "flows", "packets", "hops", "events", "wall_s", "seed"):
        assert key in rec
    assert rec["seed"] == 3
    pk = rec["packets"]
    assert pk["tx"] == pk["rx"] + pk["dropped"] + pk["in_flight"]
    for f in rec["flows"]:
        for key in ("src", "dst", "tx_packets", "rx_packets", "lost_packets", "tx_bytes", "rx_bytes",
                    "throughput_bps", "mean_delay_s", "max_delay_s"):
            assert key in f
    assert set(rec["hops"]) <= {"1", "3"}


def test_cli_human_summary_and_version():
    p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "run", str(ROOT / "examples" / "dumbbell_onoff.toml")],
                       capture_output=True, text=True, check=True)
    assert "burst0" in p.stdout and "leaf->spine" in p.stdout
    v = subprocess.run([sys.executable, "-m", "fabricsim.cli", "--version"], capture_output=True, text=True, check=True)
    assert v.stdout.strip() == f"fabricsim {fabricsim.__version__}"


def test_queue_samples_through_the_api():
    sc = two_hosts(measure={"queue_interval": "10us", "queues": ["a->b"]})
    r = fabricsim.run(sc)
    # Samples at 10..80 us while packets remain; the NIC pulls one packet at a time, so its queue is empty.
    assert r.values("samples.t_ps") == [k * 10_000_000 for k in range(1, 10)]
    assert set(r.values("samples.packets")) == {0}
