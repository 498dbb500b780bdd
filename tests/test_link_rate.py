"""Degraded links during a run (`[[events]] kind = "link_rate"`) from a scenario file, through `fabricsim run --json`:
the hand-computed completions of the message and RDMA transports and of the flow engine, a TCP transfer bounded by
the degraded rate, the record's event list and links table, the figure's label, and bad input as one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# h0 -(10 Gb/s, 1 us)- sw -(10 Gb/s, 1 us)- h1, one message of 100 packets of 1,000 B (no header): T = 800 ns per
# packet. h0's link halves to 5 Gb/s at 32.4 us = 40.5 T, in the middle of packet 40 ([40 T, 41 T)); the
# derivation is in crates/fabricsim-des/tests/link_rate.rs: packet 40 ends at the old rate (41 T), packets 41..=99
# follow at 2 T each (the last ends at 159 T), and the last lands one 10 Gb/s serialisation and two link delays
# later: 160 T + 2 us = 130 us. Fault-free: 101 T + 2 us = 82.8 us.
LINE = """
[topology]
kind = "custom"
nodes = [{name = "h0", kind = "host"}, {name = "sw", kind = "switch"}, {name = "h1", kind = "host"}]
links = [{a = "h0", b = "sw", rate = "10Gbps", delay = "1us"}, {a = "sw", b = "h1", rate = "10Gbps", delay = "1us"}]

[[messages]]
name = "m"
src = "h0"
dst = "h1"
size = 100000
packet_size = 1000
header = 0
"""

HALVED = """
[[events]]
at = "32.4us"
kind = "link_rate"
link = ["h0", "sw"]
rate = "5Gbps"
"""

T_S = 800e-9


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabricsim.cli", *args], cwd=cwd, capture_output=True, text=True)


def run_json(tmp_path: Path, text: str, *args: str) -> dict:
    (tmp_path / "rate.toml").write_text(text)
    r = cli("run", "rate.toml", "--json", *args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_halved_nic_link_completes_at_the_hand_computed_time(tmp_path):
    assert run_json(tmp_path, LINE)["completion_time_s"] == pytest.approx(101 * T_S + 2e-6, abs=1e-15)
    d = run_json(tmp_path, LINE + HALVED)
    assert d["completion_time_s"] == pytest.approx(160 * T_S + 2e-6, abs=1e-15)
    assert d["network_events"] == [{"t_s": 3.24e-05, "kind": "link_rate", "links": ["h0-sw"], "rate_bps": 5_000_000_000}]
    # The links table keeps the topology's line rate (utilization's denominator) and says which links a
    # link_rate event changed, with the rate in force at the end (both directions of h0-sw).
    links = {row["name"]: row for row in d["links"]}
    assert {n: (row["rate_bps"], row.get("rate_end_bps")) for n, row in links.items()} == {
        "h0->sw": (10_000_000_000, 5_000_000_000), "sw->h0": (10_000_000_000, 5_000_000_000),
        "sw->h1": (10_000_000_000, None), "h1->sw": (10_000_000_000, None)}


def test_the_flow_engine_and_hybrid_take_the_event(tmp_path):
    # Flow: 324,000 of the 800,000 bits sent at 10 Gb/s by 40.5 T, the other 476,000 at 5 Gb/s (119 T), then the
    # tail d + (d + T): 160.5 T + 2 us (crates/fabricsim-flow/tests/link_rate.rs).
    d = run_json(tmp_path, LINE + HALVED, "--fidelity", "flow")
    assert d["completion_time_s"] == pytest.approx(160.5 * T_S + 2e-6, abs=1e-15)
    assert d["network_events"][0]["kind"] == "link_rate"
    # Hybrid: 100 packets are too few to jump; it is the packet engine's exact figure.
    d = run_json(tmp_path, LINE + HALVED, "--fidelity", "hybrid")
    assert d["completion_time_s"] == pytest.approx(160 * T_S + 2e-6, abs=1e-15)


def test_rdma_completes_later_by_the_hand_computed_amount(tmp_path):
    # One queue pair without congestion control sends at line rate as the message transport does (its ACKs take
    # the reverse direction, which never carries data): 82.8 us fault-free, 130 us with the halving, 47.2 us
    # = 59 packets × T (each of packets 41..=99 takes 2 T instead of T) later.
    rdma = 'transport = "rdma"\n' + LINE + '\n[rdma]\ncc = "none"\n'
    base = run_json(tmp_path, rdma)["completion_time_s"]
    d = run_json(tmp_path, rdma + HALVED)
    assert base == pytest.approx(101 * T_S + 2e-6, abs=1e-15)
    assert d["completion_time_s"] - base == pytest.approx(59 * T_S, abs=1e-15)
    assert d["network_events"][0]["rate_bps"] == 5_000_000_000


def test_tcp_over_a_degraded_bottleneck_is_bounded_by_the_new_rate(tmp_path):
    # 2 MB of TCP (Cubic, 536 B segments) over 1 Gb/s links; sw-h1 drops to 250 Mb/s at 1 ms. Before 1 ms that
    # link delivered at most 1 Gb/s × 1 ms = 125,000 B; every other byte h1 received crossed it at 250 Mb/s, so
    # the last arrives no earlier than 1 ms + (rx_bytes − 125,000) × 8 / 250 Mb/s. Cubic keeps the degraded link
    # busy: within 2% of that bound (fault-free it finishes in 17.7 ms).
    text = """
stop = "300ms"
[topology]
kind = "custom"
nodes = [{name = "h0", kind = "host"}, {name = "sw", kind = "switch"}, {name = "h1", kind = "host"}]
links = [{a = "h0", b = "sw", rate = "1Gbps", delay = "10us"}, {a = "sw", b = "h1", rate = "1Gbps", delay = "10us"}]

[[tcp]]
name = "t"
src = "h0"
dst = "h1"
max_bytes = 2000000

[[events]]
at = "1ms"
kind = "link_rate"
link = ["sw", "h1"]
rate = "250Mbps"
"""
    d = run_json(tmp_path, text)
    f = d["flows"][0]
    assert f["rx_bytes"] >= 2_000_000 and f["complete_s"] is not None
    bound = 1e-3 + (f["rx_bytes"] - 125_000) * 8 / 250e6
    assert bound <= f["last_rx_s"] <= 1.02 * bound
    assert d["network_events"] == [{"t_s": 0.001, "kind": "link_rate", "links": ["sw-h1"], "rate_bps": 250_000_000}]


def test_the_figure_and_the_summary_label_the_event(tmp_path):
    from fabricsim.report.figures import network_events

    import fabricsim

    (tmp_path / "rate.toml").write_text(LINE + HALVED + '\n[measure]\nthroughput_interval = "10us"\n')
    rec = fabricsim.run(fabricsim.load_scenario(tmp_path / "rate.toml"))
    assert network_events(rec) == [(3.24e-05, "link_rate 5 Gb/s h0-sw")]
    r = cli("run", "rate.toml", "--figure", "rate.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "network event at 32.4 us: link_rate 5 Gb/s h0-sw" in r.stdout + r.stderr
    assert (tmp_path / "rate.png").stat().st_size > 0


@pytest.mark.parametrize("change, line", [
    ('rate = "5Gbps"', 'events[0].rate: a link_rate event sets the link\'s new rate: rate = "25Gbps"'),
    ('rate = "0Gbps"', "events[0].rate: Input should be greater than 0"),
    ('rate = "fast"', "events[0].rate: unknown rate unit 'fast' in 'fast' (use one of: b/s, bps, gb/s, gbps, kb/s, "
                      "kbps, mb/s, mbps, tb/s, tbps)"),
])
def test_a_bad_rate_is_one_line_naming_the_field_exit_2(tmp_path, change, line):
    text = LINE + HALVED.replace('rate = "5Gbps"', "" if change == 'rate = "5Gbps"' else change)
    (tmp_path / "rate.toml").write_text(text)
    r = cli("run", "rate.toml", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"rate.toml: {line}"


def test_a_rate_on_another_kind_is_one_line_exit_2(tmp_path):
    (tmp_path / "rate.toml").write_text(LINE + HALVED.replace('kind = "link_rate"', 'kind = "link_down"'))
    r = cli("run", "rate.toml", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == "rate.toml: events[0].rate: only a link_rate event sets a rate, not a link_down"


def test_flow_fidelity_still_refuses_a_link_down_in_one_line(tmp_path):
    down = '\n[[events]]\nat = "1us"\nkind = "link_down"\nlink = ["sw", "h1"]\n'
    (tmp_path / "rate.toml").write_text(LINE + HALVED + down)
    r = cli("run", "rate.toml", "--fidelity", "flow", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1
    assert "events[1]" in r.stderr and "not modelled at flow fidelity" in r.stderr


def test_a_scenario_built_in_python_takes_the_event(tmp_path):
    # sw -> h1 drops to 2.5 Gb/s (3.2 us per packet) at 10 us. Packet k reaches sw at (k + 1) T + 1 us and leaves at
    # once while the port keeps up: packet 10 starts at 9.8 us, before the event, and ends at the old rate at
    # 10.6 us, when packet 11 arrives; packets 11..=99 (89) follow back to back at 3.2 us, the last ending at
    # 10.6 + 89 × 3.2 = 295.4 us and landing 1 us later: 296.4 us.
    import fabricsim
    from fabricsim.errors import ScenarioError
    from fabricsim.spec import NetEventDef

    (tmp_path / "rate.toml").write_text(LINE)
    sc = fabricsim.load_scenario(tmp_path / "rate.toml")
    ev = NetEventDef(at="10us", kind="link_rate", link=["sw", "h1"], rate="2.5Gbps")
    rec = fabricsim.run(sc.model_copy(update={"events": [ev]}))
    assert rec.completion_time_s == pytest.approx(296.4e-6, abs=1e-15)
    assert rec.scalars["net_events"] == [{"t_ps": 10_000_000, "kind": "link_rate", "links": ["sw-h1"], "ber": 0.0,
                                          "rate_bps": 2_500_000_000}]
    with pytest.raises(ScenarioError, match=r"events\[0\]\.rate: a link_rate event sets the link's new rate"):
        fabricsim.run(sc.model_copy(update={"events": [NetEventDef(at="10us", kind="link_rate", link=["sw", "h1"])]}))
