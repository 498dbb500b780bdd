"""Failures with a cost (issue 33): the message transport re-sends lost packets on a retransmission timeout, so a spine
link failing during a lossless all-reduce ends with a completion time and exit 0, and a lossy queue's drops are
re-sent as many times as the hand calculation says. The reason a run stays incomplete is right for each transport."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import fabricsim

FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]
T_PS = 81_920  # one 1,024 B packet (the collective's packet size, no header) at 100 Gb/s
RTO_PS = 100_000_000  # the default retransmission timeout, 100 us

# A ring all-reduce of 8 MiB over 8 hosts in 2 racks of a lossless (input-buffered) leaf-spine at 100 Gb/s:
# 14 steps of 1 MiB = 1,024 packets per message.
ALL_REDUCE = """
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 4
spines = 2
host_rate = "100Gbps"
fabric_rate = "100Gbps"
switch_model = "input_buffered"

[routing]
ecmp = "per_message"
detection_delay = "20us"

[[collectives]]
name = "ar"
kind = "all_reduce"
ranks = "all"
size = "8MiB"
"""

# The spine link fails 1,110 us into the run: inside the ring's last step (about 1,092 to 1,176 us), on the link
# of one of its two cross-rack messages whichever spine it hashed to (spine1 here).
FAILURE = """
[[events]]
at = "1110us"
kind = "link_down"
link = ["leaf0", "spine1"]
"""


def cli_json(path: Path) -> tuple[int, dict, str]:
    r = subprocess.run([*FABRICSIM, "run", str(path), "--json"], capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout), r.stderr


def test_a_spine_link_failing_during_a_lossless_all_reduce_costs_the_timeout_and_the_resent_packets(tmp_path):
    """Acceptance: exit 0, a completion time, and its cost by hand.

    Fault-free: a message of step s starts when the step s − 1 message into its sender arrives, so the run ends
    with the chain of 14 consecutive ring messages that crosses the racks most often (4 of its 14 hops, since the
    ring crosses twice in 8). An intra-rack message takes (1,024 + 1) T (its packets, then one store-and-forward
    hop at the leaf) and a cross-rack one 2 T more (spine and far leaf): T_free = (14 · 1,025 + 4 · 2) T =
    14,358 T = 1,176.20736 us.

    With the failure: the cross-rack message on leaf0–spine1 loses the k packets that reach the dead link before
    the tables move 20 us later (k = 20 us / T = 244.1, so 244 to 246 with the one on the wire). Its NIC keeps
    sending at line rate (the lost packets' credit comes back), so its last packet still starts at
    T_last = T_free − T − (the path after the NIC); the timer fires at T_last + RTO, the k packets leave back to
    back over spine0 (same hop count, nothing else on the NIC in the last step) and the last arrives at
    T_last + RTO + k T + (the path): T_fail = T_free + RTO + (k − 1) T, to the picosecond.
    """
    free = tmp_path / "free.toml"
    free.write_text(ALL_REDUCE)
    fail = tmp_path / "fail.toml"
    fail.write_text(ALL_REDUCE + FAILURE)
    rc, rec_free, _ = cli_json(free)
    assert rc == 0 and rec_free["complete"]
    assert round(rec_free["completion_time_s"] * 1e12) == 14_358 * T_PS
    rc, rec, err = cli_json(fail)
    assert rc == 0, err
    assert rec["complete"] and rec["incomplete_messages"] == 0
    lost = [f for f in rec["flows"] if f["lost_packets"]]
    assert len(lost) == 1 and (lost[0]["src"], lost[0]["dst"]) == ("h3", "h4")
    k = lost[0]["lost_packets"]
    assert 244 <= k <= 246
    assert rec["retransmit"] == {"lost_packets": k, "timeouts": 1, "packets": k, "bytes": k * 1024, "abandoned": 0}
    assert rec["packets"]["dropped"] == k
    assert round(rec["completion_time_s"] * 1e12) == 14_358 * T_PS + RTO_PS + (k - 1) * T_PS


def test_a_shorter_timeout_costs_less_by_the_difference(tmp_path):
    """The same failure with `rto = "20us"`: T_free + 20 us + (k − 1) T, the same k (the losses precede the timer)."""
    fail = tmp_path / "fail.toml"
    fail.write_text(ALL_REDUCE + FAILURE + '\n[retransmit]\nrto = "20us"\n')
    rc, rec, _ = cli_json(fail)
    k = rec["retransmit"]["packets"]
    assert rc == 0 and round(rec["completion_time_s"] * 1e12) == 14_358 * T_PS + 20_000_000 + (k - 1) * T_PS


# experiments/engine_checks/droptail_base.toml with retransmission: a -(2 Gb/s)- s -(0.9 Gb/s)- b, one 20-packet
# message of 1,000 B packets into a DropTail queue of B packets at s.
DROPTAIL = Path(__file__).resolve().parents[1] / "experiments" / "engine_checks" / "droptail_base.toml"


def droptail(limit: int) -> fabricsim.RunRecord:
    doc = tomllib.loads(DROPTAIL.read_text())
    doc.pop("retransmit")
    doc["queue"]["limit_packets"] = limit
    return fabricsim.run(fabricsim.scenario_from_dict(doc))


def test_a_lossy_queue_resends_its_drops_at_one_timeout():
    """B = 5. Packets arrive at s every 4 us (1,000 B at 2 Gb/s) and leave every 80/9 us (0.9 Gb/s): by the last
    arrival (80 us) 9 have entered service and 5 wait, so 20 − 9 − 5 = 6 are dropped (the engine check's closed
    form). The last packet started at a at 76 us, so the timer fires at 176 us; the 6 re-sent packets reach s from
    180 us on, every 4 us, into the drained queue (at most 3 wait: no drop), and leave back to back, each in
    8,000 bits / 0.9 Gb/s = 8,888,889 ps (to the picosecond): the last reaches b at 180 us + 6 · 8,888,889 ps."""
    rec = droptail(5)
    assert rec.retransmit == {"lost_packets": 6, "timeouts": 1, "packets": 6, "bytes": 6000, "abandoned": 0}
    assert rec.complete and round(rec.completion_time_s * 1e12) == 180_000_000 + 6 * 8_888_889


def test_resent_packets_that_overflow_again_take_a_second_timeout():
    """B = 2: 20 − 9 − 2 = 9 drops. The 9 re-sent packets are a burst of their own: by its last arrival (32 us
    after its first) 4 have entered service (at 0, 8.9, 17.8, 26.7 us) and 2 wait, so 9 − 4 − 2 = 3 are dropped
    again; the second timeout re-sends those 3, which fit. 12 packets re-sent in 2 timeouts, 12 lost in all."""
    rec = droptail(2)
    assert rec.retransmit == {"lost_packets": 12, "timeouts": 2, "packets": 12, "bytes": 12_000, "abandoned": 0}
    assert rec.complete and rec.packets["dropped"] == 12


def test_a_message_that_gives_up_names_retransmission_in_one_line_exit_3(tmp_path):
    # The droptail sweep's base (retransmission off): one line naming the abandoned message and how to go on.
    r = subprocess.run([*FABRICSIM, "run", str(DROPTAIL), "--json"], capture_output=True, text=True)
    assert r.returncode == 3
    assert json.loads(r.stdout)["retransmit"]["abandoned"] == 1
    line, = r.stderr.strip().splitlines()
    assert line.endswith("the workload did not complete: 1 message(s) never delivered (m); 6 packet(s) were dropped "
                         "and 1 message(s) gave up after [retransmit] max_retries timeouts without progress (a host "
                         "cut off by a failure, or a path that kept losing; max_retries = 0 turns retransmission "
                         "off): bring the link back (link_up), add paths, or raise retransmit.max_retries")
    assert "use lossless switches" not in line


def test_retransmit_is_the_message_transports_and_its_keys_are_checked(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text(ALL_REDUCE.replace("[topology]", 'transport = "rdma"\n\n[topology]')
                 .replace('switch_model = "input_buffered"', 'switch_model = "shared_buffer"')
                 + "\n[pfc]\n\n[retransmit]\nrto = \"50us\"\n")
    r = subprocess.run([*FABRICSIM, "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == (
        f"{p}: retransmit: is the message transport's; the RDMA transport recovers a loss by its NACK and go-back-N, the UEC transport by its NACK and [uec] rto")
    p.write_text(ALL_REDUCE + '\n[retransmit]\nrto = "10ps"\n')
    r = subprocess.run([*FABRICSIM, "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == f"{p}: retransmit.rto: must be 1 ns to 1 s, not 10 ps"
    p.write_text(ALL_REDUCE + '\n[retransmit]\nmax_retry = 3\n')
    r = subprocess.run([*FABRICSIM, "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "retransmit" in r.stderr and "max_retry" in r.stderr and len(r.stderr.splitlines()) == 1


def test_the_run_figure_marks_the_failure_at_its_time_from_the_record(tmp_path):
    """The failure's time and link come from the record (`net_events`), not from the scenario: the figure marks
    1,110 us with the label "link_down leaf0-spine1", and its throughput panel is the record's 10 us throughput
    bins, whose payload adds up to what the ring delivered: 8 hosts × 14 steps × 1 MiB (each byte once: a lost
    packet never arrived, its re-sent copy did)."""
    from fabricsim.report.figures import network_events
    from fabricsim.report.roce import run_axes

    sc = fabricsim.scenario_from_dict(tomllib.loads(ALL_REDUCE + FAILURE + '\n[measure]\nthroughput_interval = "10us"\n'))
    rec = fabricsim.run(sc)
    assert rec.scalars["net_events"] == [{"t_ps": 1_110_000_000, "kind": "link_down", "links": ["leaf0-spine1"],
                                          "ber": 0.0}]
    assert network_events(rec) == [(1.11e-3, "link_down leaf0-spine1")]
    assert rec.to_json_dict()["network_events"] == [{"t_s": 1.11e-3, "kind": "link_down", "links": ["leaf0-spine1"]}]
    fig = run_axes(rec, title="fail")
    try:
        ax, = fig.axes  # a message-transport run: the throughput panel alone
        marks = [ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert marks == [1110.0]
        assert [t.get_text() for t in ax.texts] == ["link_down leaf0-spine1"]
        step, = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
        gbps = step.get_ydata()[:-1]  # the last step repeats the last bin to close the plot
        assert round(float(gbps.sum()) * 1e9 / 8 * 10e-6) == 8 * 14 * 2**20
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def test_run_figure_cli_draws_a_failure_and_the_links_without_throughput_bins(tmp_path):
    p = tmp_path / "fail.toml"
    p.write_text(ALL_REDUCE + FAILURE + '\n[measure]\nthroughput_interval = "10us"\n')
    png = tmp_path / "fail.png"
    r = subprocess.run([*FABRICSIM, "run", str(p), "--figure", str(png)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 0 and f"wrote {png}" in r.stderr
    assert "network event at 1.11 ms: link_down leaf0-spine1" in r.stdout
    assert "retransmission: " in r.stdout and " re-sent " in r.stdout
    p.write_text(ALL_REDUCE + FAILURE)
    r = subprocess.run([*FABRICSIM, "run", str(p), "--figure", str(png)], capture_output=True, text=True)
    # Without throughput bins a non-RoCE run's --figure is the links figure (as --links-figure)
    assert r.returncode == 0 and r.stderr.strip() == f"wrote the link utilization figure to {png}"
