"""Failures during a run from a scenario file: the hand-computed link-down loss and its retransmission, and bad events as
one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fabricsim

# h0 - leaf0 = {s0, s1} = leaf1 - h2 at 1 Gb/s, no delays; the s1 side weighs 2 per link, so the message takes s0
# until leaf0-s0 dies at 10.5 T (T = 8 us, one 1,000 B packet); the tables catch up 20 T later. The derivation is
# in crates/fabricsim-des/tests/failures.rs: packets 9..=29 are lost (21), 79 arrive by 103 T. The message
# transport re-sends the 21 on its timeout (the default 100 us = 12.5 T) after the last packet's start at 99 T:
# the j-th re-sent packet starts at (111.5 + j) T and arrives over s1 at (115.5 + j) T, the last (j = 20) at 135.5 T.
SCENARIO = """
[topology]
kind = "custom"
nodes = [{name = "h0", kind = "host"}, {name = "h2", kind = "host"}, {name = "leaf0", kind = "switch"},
         {name = "leaf1", kind = "switch"}, {name = "s0", kind = "switch"}, {name = "s1", kind = "switch"}]
links = [{a = "h0", b = "leaf0", rate = "1Gbps"}, {a = "leaf0", b = "s0", rate = "1Gbps"},
         {a = "s0", b = "leaf1", rate = "1Gbps"}, {a = "leaf0", b = "s1", rate = "1Gbps", weight = 2},
         {a = "s1", b = "leaf1", rate = "1Gbps", weight = 2}, {a = "leaf1", b = "h2", rate = "1Gbps"}]

[routing]
detection_delay = "160us"

[[messages]]
name = "m"
src = "h0"
dst = "h2"
size = 100000
packet_size = 1000
header = 0

[[events]]
at = "84us"
kind = "link_down"
link = ["leaf0", "s0"]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "fail.toml"
    p.write_text(text)
    return p


def test_a_link_down_mid_message_loses_what_the_hand_calculation_says(tmp_path):
    rec = fabricsim.run(fabricsim.load_scenario(write(tmp_path, SCENARIO)))
    f = rec.frame().iloc[0]
    assert (f["lost_packets"], f["rx_packets"], f["tx_packets"]) == (21, 100, 121)
    assert f["complete_ps"] == f["last_rx_ps"] == 135.5 * 8_000_000
    assert rec.complete and rec.retransmit == {"lost_packets": 21, "timeouts": 1, "packets": 21, "bytes": 21_000,
                                               "abandoned": 0}


def test_without_retransmission_the_message_is_never_delivered(tmp_path):
    text = SCENARIO + "\n[retransmit]\nmax_retries = 0\n"
    rec = fabricsim.run(fabricsim.load_scenario(write(tmp_path, text)))
    f = rec.frame().iloc[0]
    assert (f["lost_packets"], f["rx_packets"]) == (21, 79)
    assert f["last_rx_ps"] == 103 * 8_000_000
    assert not rec.complete and rec.incomplete_messages == 1 and rec.retransmit["abandoned"] == 1


def test_a_switch_down_takes_every_link_of_the_switch(tmp_path):
    # s0 down at 84 us = 10.5 T is leaf0-s0 and s0-leaf1 down. Besides packets 9..=29 of the link-down case, packet 8
    # is lost too: it left leaf0 at 10 T and is on s0-leaf1 until 11 T. 22 in all.
    text = SCENARIO.replace('kind = "link_down"\nlink = ["leaf0", "s0"]', 'kind = "switch_down"\nnode = "s0"')
    rec = fabricsim.run(fabricsim.load_scenario(write(tmp_path, text)))
    assert rec.frame().iloc[0]["lost_packets"] == 22


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabricsim.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_an_event_on_a_link_that_does_not_exist_is_one_line_exit_2(tmp_path):
    write(tmp_path, SCENARIO.replace('link = ["leaf0", "s0"]', 'link = ["leaf0", "leaf1"]'))
    r = cli("run", "fail.toml", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == "fail.toml: events[0].link: there is no link between 'leaf0' and 'leaf1'"


def test_an_unknown_node_and_a_bad_ber_name_their_field(tmp_path):
    write(tmp_path, SCENARIO.replace('link = ["leaf0", "s0"]', 'link = ["leaf0", "s9"]'))
    assert cli("run", "fail.toml", cwd=tmp_path).stderr.strip() == "fail.toml: events[0].link[1]: unknown node 's9'"
    write(tmp_path, SCENARIO.replace('kind = "link_down"', 'kind = "ber"\nber = 1.5'))
    r = cli("run", "fail.toml", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "fail.toml: events[0].ber: 1.5 is not a bit error rate in [0, 1)"


def test_flow_fidelity_refuses_events_in_one_line(tmp_path):
    write(tmp_path, SCENARIO)
    r = cli("run", "fail.toml", "--fidelity", "flow", cwd=tmp_path)
    assert r.returncode == 2
    assert "events[0]" in r.stderr and "not modelled at flow fidelity" in r.stderr and len(r.stderr.splitlines()) == 1


def test_throughput_over_time_shows_the_outage(tmp_path):
    # Bins of T = 8 us. Packet k arrives at (k+4) T on either path (four links of T each from its first bit), so
    # bins 4..=12 (packets 0..=8) and 34..=103 (packets 30..=99) carry one 1,000 B packet each (1 Gb/s), and the
    # 21 bins 13..=33 of the lost packets carry nothing: the receiver sees a 168 us outage. The 21 re-sent packets
    # arrive at (115.5 + j) T (above): one in each of bins 115..=135.
    text = SCENARIO.replace("[[events]]", '[measure]\nthroughput_interval = "8us"\n\n[[events]]')
    rec = fabricsim.run(fabricsim.load_scenario(write(tmp_path, text)))
    tp = rec.throughput()
    assert len(tp) == 136 and tp["t_s"].iloc[1] == 8e-6
    carried = [k for k, g in enumerate(tp["gbps"]) if g > 0]
    assert carried == list(range(4, 13)) + list(range(34, 104)) + list(range(115, 136))
    assert set(tp["gbps"].iloc[carried].round(9)) == {1.0}
    assert rec.to_json_dict()["throughput"]["bin_s"] == 8e-6
