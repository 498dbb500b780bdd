"""examples/uec_alltoall.toml (an MoE all-to-all over UEC on a 2:1 leaf-spine) and its comparison with RoCE DCQCN and
HPCC on the same fabric (benchmarks/uec_vs_roce.py, shown in docs/guide/ultra-ethernet.md).

The all-to-all's lower bound, by hand. 32 hosts h0..h31 in 4 racks of 8, one leaf per rack, 4 spines, every link
100 Gb/s: a leaf has 8 x 100 = 800 Gb/s down and 4 x 100 = 400 Gb/s up (2:1). Every host sends one message of
S = 1 MiB = 1,048,576 B to each of the 31 others.

- Wire bytes of one message. UEC: MSS = 4,150 - 64 = 4,086 B, so ceil(1,048,576 / 4,086) = 257 packets (256 full
  ones carry 1,046,016 B, the last 2,560 B), each with a 64 B header: W = 1,048,576 + 257 x 64 = 1,065,024 B.
  RoCE at a 4 KiB MTU: 1,048,576 / 4,096 = 256 packets of 48 B headers: W = 1,048,576 + 256 x 48 = 1,060,864 B.
- Spine layer. Each host sends 24 of its 31 messages to the 24 hosts of the other 3 racks, so each leaf sends
  8 x 24 = 192 messages up its 4 uplinks (and, by symmetry, receives 192 through the spines' 4 links down to it).
  No schedule finishes before T_spine = 192 x W x 8 / 400 Gb/s: 192 x 1,065,024 x 8 = 1,635,876,864 b, 4.08969216 ms
  for UEC; 192 x 1,060,864 x 8 = 1,629,487,104 b, 4.07371776 ms for RoCE.
- NIC. Each host sends 31 messages through its 100 Gb/s NIC: T_nic = 31 x W x 8 / 100 Gb/s = 264,125,952 b,
  2.64125952 ms for UEC (2.63094272 ms for RoCE).
- The bound is the larger, T_spine (the 2:1 core binds); a run's completion (the last message's last byte at its
  receiver) is at least that, and a transport that uses the fabric at all well finishes within 3x of it.
"""

import json
import sys
import tomllib

import pytest

from benchmarks_path import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import uec_vs_roce as uv  # noqa: E402

UEC_WIRE, ROCE_WIRE = 1_065_024, 1_060_864
UEC_BOUND_S, ROCE_BOUND_S = 4.08969216e-3, 4.07371776e-3
UEC_NIC_S = 2.64125952e-3


@pytest.fixture(scope="module")
def runs():
    """Every variant of the comparison, run once (about 6 s on one core)."""
    return uv.run_all()


def test_the_example_is_what_its_comments_say():
    sc = uv.variants()["uec"]
    t = sc.topology
    assert (t.racks, t.hosts_per_rack, t.spines, t.host_rate, t.fabric_rate) == (4, 8, 4, 100e9, 100e9)
    assert t.hosts_per_rack * t.host_rate == 2 * t.spines * t.fabric_rate  # 2:1 oversubscribed
    assert sc.transport == "uec" and (sc.uec.cc, sc.uec.spray, sc.uec.entropies, sc.uec.trimming) == (
        "nscc", "mixed", 64, True)
    c = sc.collectives[0]
    assert (c.kind, c.algorithm, c.ranks, c.size) == ("all_to_all", "direct", "all", 1 << 20)
    # MoE dispatch per pair: 1024 tokens x top-8 x hidden 4096 x 1 B (FP8) / 32 ranks.
    assert c.size == 1024 * 8 * 4096 * 1 // 32
    # One BDP of queue: 4 x (1 us + 4,150 B at 100 Gb/s) + 4 x (1 us + 64 B at 100 Gb/s) = 9.34848 us -> 116,856 B
    # -> 29 whole packets of 4,150 B.
    rtt_s = 4 * (1e-6 + 4150 * 8 / 100e9) + 4 * (1e-6 + 64 * 8 / 100e9)
    assert sc.queue.limit_bytes == -(-int(rtt_s * 100e9 / 8) // 4150) * 4150 == 120_350


def test_the_roce_variants_keep_the_fabric_and_the_workload():
    v = uv.variants()
    base = v["uec"]
    for name in ("dcqcn", "hpcc"):
        sc = v[name]
        assert sc.transport == "rdma" and sc.rdma.cc == name and sc.pfc is not None
        assert sc.topology.switch_model == "shared_buffer"
        assert sc.topology.model_dump(exclude={"switch_model"}) == base.topology.model_dump(exclude={"switch_model"})
        assert [c.model_dump(exclude={"packet_size", "header"}) for c in sc.collectives] == [
            c.model_dump(exclude={"packet_size", "header"}) for c in base.collectives]
        assert sc.seed == base.seed
    assert (v["dcqcn"].ecn is not None, v["hpcc"].ecn is None) == (True, True)
    assert v["uec_ecmp"].uec.spray == "ecmp"


def test_lower_bound_by_hand():
    v = uv.variants()
    assert (uv.wire_bytes(v["uec"]), uv.wire_bytes(v["dcqcn"])) == (UEC_WIRE, ROCE_WIRE)
    assert uv.lower_bound_s(v["uec"]) == pytest.approx(UEC_BOUND_S, rel=1e-12)
    assert uv.lower_bound_s(v["dcqcn"]) == pytest.approx(ROCE_BOUND_S, rel=1e-12)
    assert UEC_NIC_S < UEC_BOUND_S  # the spine layer binds, not the NICs


def test_the_example_runs_from_the_command_line_and_completes(capsys):
    from fabricsim.cli import main

    assert main(["run", str(uv.EXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["complete"] and out["incomplete_messages"] == 0
    data = [f for f in out["flows"] if f["kind"] == "message"]
    assert len(data) == 32 * 31
    # A connection that re-sent nothing put exactly W on the wire, and its receiver got all of it.
    clean = [f for f in data if f["retransmits"] == 0]
    assert clean and all(f["tx_bytes"] == f["rx_bytes"] == UEC_WIRE for f in clean)
    assert all(f["tx_bytes"] > UEC_WIRE for f in data if f["retransmits"])
    assert all(f["acked_s"] >= f["complete_s"] for f in data)  # the ACK comes back after the last byte arrived
    assert UEC_BOUND_S <= out["completion_time_s"] <= 3 * UEC_BOUND_S
    u = out["uec"]
    assert u["trims"] == u["trimmed_received"] >= u["nacks"] > 0


def test_every_transport_completes_between_the_bound_and_three_times_it(runs):
    for name, r in runs.items():
        assert r.complete, name
        bound = ROCE_BOUND_S if name in ("dcqcn", "hpcc") else UEC_BOUND_S
        assert r.lower_bound_s == pytest.approx(bound, rel=1e-12), name
        assert bound <= r.completion_s <= 3 * bound, (name, r.completion_s)
        assert len(r.fct_s) == 32 * 31 and r.fct_s[-1] <= r.completion_s
        # No link carries more than its rate for the run's length: the busiest 100 Gb/s uplink's bytes bound it too.
        assert r.uplink_max_bytes * 8 / 100e9 <= r.completion_s, name
        assert r.uplink_skew >= 1.0, name


def test_trimming_bounds_the_queues_and_loses_nothing(runs):
    limit = tomllib.loads(uv.EXAMPLE.read_text())["queue"]["limit_bytes"]
    assert limit == "120350B"
    for name in ("uec", "uec_ecmp", "uec_ack1", "uec_rto"):
        r = runs[name]
        # A full queue trims the arriving packet: no data queue grows past its 120,350 B, nothing is dropped, and
        # every trimmed header reaches its receiver, which NACKs it (or ACKs it, when it already has the packet:
        # a header trimmed from a retransmission that the timeout sent needlessly).
        assert max(r.peak_bytes.values()) <= 120_350, name
        assert r.dropped == 0 and r.uec["trims"] == r.uec["trimmed_received"] >= r.uec["nacks"] > 0, name
        assert r.uec["retransmits"] >= r.uec["nacks"], name
    for name in ("dcqcn", "hpcc"):
        assert runs[name].dropped == 0 and runs[name].uec is None  # lossless: PFC, no loss to recover


def test_the_guide_shows_these_runs(runs):
    import readme_numbers as rn

    page = ROOT / "docs" / "guide" / "ultra-ethernet.md"
    assert rn.GENERATORS["uec-vs-roce"].path == page
    assert rn.regions(page.read_text())["uec-vs-roce"] == uv.render(runs), (
        "docs/guide/ultra-ethernet.md is stale: run `python benchmarks/readme_numbers.py --only uec-vs-roce --write`")
    assert (ROOT / "docs" / "img" / "uec_vs_roce.png").is_file()
