"""ASTRA-sim's network configurations as fabrics: the `multi_dim` family counted by hand, ASTRA-sim's own configs
read (`--fabric Ring_8npus.yml`), a ring all-gather on it against a hand calculation and ASTRA-sim's finish time,
and one-line errors naming the configuration's key."""

from __future__ import annotations

import json

import pytest

import fabricsim
from fabricsim.cli import main
from fabricsim.spec import read_document
from fabricsim.topology import multi_dim

from conftest import CHAKRA_TRACES

CONFIGS = CHAKRA_TRACES / "astra-sim-configs"
EXAMPLES = CHAKRA_TRACES / "astra-sim-examples"
GBPS = 8 * 2**30
"""Bits per second in one of ASTRA-sim's "GB/s" (bw_GBps_to_Bpns: 1 GB = 2^30 B)."""


def test_ring_fully_connected_switch_counted_by_hand():
    # ASTRA-sim's input/Ring_FullyConnected_Switch.yml: 2 × 8 × 4 = 64 NPUs.
    net = multi_dim([{"shape": "ring", "npus": 2, "rate": f"{200 * GBPS}bps", "delay": "50ns"},
                     {"shape": "fully_connected", "npus": 8, "rate": f"{100 * GBPS}bps", "delay": "500ns"},
                     {"shape": "switch", "npus": 4, "rate": f"{50 * GBPS}bps", "delay": "2us"}])
    hosts = [n.name for n in net.nodes if n.kind == "host"]
    assert hosts == [f"npu{i}" for i in range(64)]
    # 64 routers, and 64 / 4 = 16 switches of dimension 2.
    assert len(net.nodes) == 64 + 64 + 16
    assert sum(n.name.startswith("d2.sw") for n in net.nodes) == 16
    # 64 host links; rings of 2: one link each, 32; 8 fully connected groups of 8: 28 pairs each; 64 to switches.
    assert len(net.links) == 64 + 32 + 8 * 28 + 64 == 384
    # An NPU's own link carries all of its links: 1 × 200 + 7 × 100 + 1 × 50 GB/s.
    assert net.links[0].rate == 950 * GBPS and net.links[0].delay == 0
    assert net.policy.kind == "dimension_order" and net.policy.shapes == ["ring", "fully_connected", "switch"]
    assert [len(s) for s in net.policy.switches] == [0, 0, 16]


@pytest.mark.shared
def test_astra_sims_configs_are_fabrics(capsys):
    ring = fabricsim.scenario_from_dict(read_document(CONFIGS / "Ring_8npus.yml"), "Ring_8npus.yml")
    net = ring.topology.network()
    # 8 hosts and 8 routers; 8 host links and a ring of 8 at 50 GB/s = 50 · 2^33 bit/s, 500 ns.
    assert (len(net.nodes), len(net.links)) == (16, 16)
    assert (net.links[8].a, net.links[8].b, net.links[8].rate, net.links[8].delay) == ("npu0.r", "npu1.r", 429_496_729_600, 500_000)
    assert ring.queue.limit_packets == "unlimited", "ASTRA-sim's links queue without bound"
    # HGX: one switch of 8 NPUs at 400 GB/s, 936.25 ns.
    hgx = fabricsim.scenario_from_dict(read_document(CONFIGS / "HGX-H100-validated.yml"), "hgx").topology.network()
    assert (len(hgx.nodes), len(hgx.links)) == (17, 16)
    assert {(ln.rate, ln.delay) for ln in hgx.links[8:]} == {(3_435_973_836_800, 936_250)}
    assert main(["topology", str(CONFIGS / "Ring_4npus.yml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["kind"], out["hosts"], out["links"]) == ("multi_dim", 4, 8)


@pytest.mark.shared
def test_ring_all_gather_against_hand_and_astra_sim(capsys):
    # ASTRA-sim's 8-NPU all-gather (1 MiB per rank, its block reading), 4 chunks one at a time, on Ring_8npus.yml.
    # Each chunk is 7 ring steps of a 256 KiB block, 256 packets of 1 KiB: a step serializes them on its ring link
    # (8192 bit at 50 · 2^33 bit/s: 19,073.49 ps, 19,074 in whole ps) plus one packet on each NPU link at twice
    # that (9,537 ps), and one hop of 500 ns. 4 × 7 = 28 steps.
    want_ps = 28 * (256 * 19_074 + 2 * 9_537 + 500_000)
    assert main(["trace", "run", str(EXAMPLES / "all_gather" / "8npus_1MB" / "all_gather"),
                 "--fabric", str(CONFIGS / "Ring_8npus.yml"), "--chunks", "4", "--chunks-in-flight", "1",
                 "--all-gather-size", "block", "--json"]) == 0
    got_s = json.loads(capsys.readouterr().out)["completion_time_s"]
    assert round(got_s * 1e12) == want_ps == 151_256_504
    peer = json.loads((CHAKRA_TRACES / "astra-sim-results.json").read_text())
    astra_ns = next(r["finish_ns"] for r in peer if (r["workload"], r["npus"], r["config"], r["backend"])
                    == ("all_gather", 8, "Ring_4chunks", "congestion_aware"))
    assert astra_ns == 151_016
    assert got_s * 1e9 / astra_ns - 1 == pytest.approx(0.0016, abs=0.0005), "ASTRA-sim's own run, within 0.2%"


def test_json_config_reads_as_the_yaml_one(tmp_path):
    y, j = tmp_path / "hgx.yml", tmp_path / "hgx.json"
    y.write_text("topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]  # GB/s\nlatency: [ 936.25 ]  # ns\n")
    j.write_text(json.dumps({"topology": ["Switch"], "npus_count": [8], "bandwidth": [400.0], "latency": [936.25]}))
    assert read_document(j) == read_document(y) == {
        "topology": {"kind": "multi_dim", "dims": [{"shape": "switch", "npus": 8, "rate": 400 * GBPS, "delay": "936250ps"}]},
        "queue": {"limit_packets": "unlimited"}}


BAD = [
    ("topology: [ Ring, Torus ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n",
     "topology[1]: 'Torus' is not one of ASTRA-sim's building blocks Ring, FullyConnected, Switch"),
    ("topology: [ Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
     "npus_count: 2 entries, but topology lists 1 dimension"),
    ("topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
     "npus_count[0]: must be a whole number of NPUs larger than 1, not 1"),
    ("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 0 ]\nlatency: [ 500 ]\n",
     "bandwidth[0]: must be a number of GB/s larger than 0, not 0"),
    ("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ -5 ]\n",
     "latency[0]: must be a number of ns, 0 or more, not -5"),
    ("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n", "latency: required key is missing"),
    ("topology: [ Ring ]\nnpus_count: 4\nbandwidth: [ 50 ]\nlatency: [ 5 ]\n",
     "npus_count: must be a list with one entry per dimension, e.g. [ 8 ], not 4"),
    ("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 5 ]\nlinks_count: [ 2 ]\n",
     "links_count: unknown key (ASTRA-sim's network keys: topology, npus_count, bandwidth, latency)"),
    ("topology: [ Ring\nnpus_count: [ 4 ]\n", "line 2: YAML syntax error: "),
    ("", "the file is empty: an ASTRA-sim network configuration lists topology, npus_count, bandwidth and latency"),
    # 10^6 × 10^6 = 10^12 NPUs: hosts, routers, host links (3 × 10^12) and two rings of 10^12 links: 5 × 10^12, past
    # the multi_dim reader's limit, said of the file.
    ("topology: [ Ring, Ring ]\nnpus_count: [ 1000000, 1000000 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n",
     "5,000,000,000,000 nodes and links"),
]


@pytest.mark.parametrize("text,said", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_configs_are_one_line_naming_file_and_key(tmp_path, capsys, text, said):
    p = tmp_path / "net.yml"
    p.write_text(text)
    assert main(["topology", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{p}: ") and said in err, err


def test_system_configuration_given_as_fabric(tmp_path, capsys):
    p = tmp_path / "Ring_4chunks.json"
    p.write_text(json.dumps({"scheduling-policy": "LIFO", "endpoint-delay": 10, "preferred-dataset-splits": 4}))
    assert main(["collective", "--fabric", str(p), "--nodes", "npu0,npu1", "--pattern", "shift-all-reduce"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "this is an ASTRA-sim system configuration, not a network" in err and str(p) in err
