"""Runs that cannot finish say so (issue 22): an undelivered workload gives one line naming why and exit 3,
and a reader that closes the pipe early is not an error."""

import json
import subprocess
import sys

import fabricsim

FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]

# The case: a 2-rack ring all-reduce on lossy switches whose 50 Gb/s uplinks overflow.
RING50 = """
[topology]
kind = "leaf_spine"
racks = 2
hosts_per_rack = 8
spines = 2
host_rate = "100Gbps"
fabric_rate = "50Gbps"

[[collectives]]
name = "ar"
kind = "all_reduce"
ranks = "all"
size = "16MiB"
"""


def test_ring_with_drops_and_no_retransmission_exits_3_naming_the_drops(tmp_path):
    p = tmp_path / "ring50.toml"
    p.write_text(RING50 + "\n[retransmit]\nmax_retries = 0\n")
    r = subprocess.run([*FABRICSIM, "run", str(p), "--json"], capture_output=True, text=True)
    assert r.returncode == 3
    rec = json.loads(r.stdout)
    assert rec["complete"] is False and rec["incomplete_messages"] > 0 and rec["halted"] is None
    gave_up = rec["retransmit"]["abandoned"]  # the others waited on them
    assert 0 < gave_up < rec["incomplete_messages"]
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"fabricsim: {p}: the workload did not complete: {rec['incomplete_messages']:,} message(s) "
                           "never delivered (messages[")
    assert (f"{rec['packets']['dropped']:,} packet(s) were dropped and {gave_up:,} message(s) gave up after "
            "[retransmit] max_retries timeouts") in line


def test_the_same_ring_with_retransmission_completes_and_counts_what_it_resent(tmp_path):
    """The default: every dropped packet is re-sent on a timeout, none given up, and the ring completes (exit 0)."""
    p = tmp_path / "ring50.toml"
    p.write_text(RING50)
    r = subprocess.run([*FABRICSIM, "run", str(p), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    dropped = rec["packets"]["dropped"]
    assert rec["complete"] and dropped > 0
    assert rec["retransmit"]["lost_packets"] == rec["retransmit"]["packets"] == dropped
    assert rec["retransmit"]["abandoned"] == 0 and rec["retransmit"]["timeouts"] > 0


def test_the_same_ring_on_lossless_switches_completes(tmp_path):
    """16 hosts, 16 MiB, ring all-reduce: every message is delivered once the switches cannot drop."""
    sc = fabricsim.scenario_from_dict(
        {**__import__("tomllib").loads(RING50.replace('fabric_rate = "50Gbps"',
                                                      'fabric_rate = "50Gbps"\nswitch_model = "input_buffered"'))})
    rec = fabricsim.run(sc)
    assert rec.complete and rec.incomplete_messages == 0 and rec.incomplete_reason() is None
    assert rec.packets["dropped"] == 0


def test_a_stop_before_the_end_is_named_as_the_reason():
    """One 1 MiB message over a 1 Gb/s link needs 8.4 ms; a 1 ms stop cuts it."""
    sc = fabricsim.scenario_from_dict({
        "stop": "1ms",
        "topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                     "links": [{"a": "a", "b": "b", "rate": "1Gbps"}]},
        "messages": [{"name": "m", "src": "a", "dst": "b", "size": "1MiB"}]})
    rec = fabricsim.run(sc)
    assert rec.incomplete_message_names() == ["m"]
    assert rec.incomplete_reason(1e-3) == ("the workload did not complete: 1 message(s) never delivered (m); "
                                           "the scenario's stop (0.001 s) came first")


def test_closing_the_pipe_early_is_quiet_and_exits_0():
    ex = __import__("pathlib").Path(__file__).parents[1] / "examples" / "leaf_spine_incast.toml"
    for extra in ([], ["--json"]):
        r = subprocess.run(f"{sys.executable} -m fabricsim.cli run {ex} {' '.join(extra)} | head -c 1; "
                           "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True, text=True)
        assert r.returncode == 0 and r.stderr == "", (extra, r.returncode, r.stderr)


def test_flow_fidelity_ignores_queue_sampling_with_one_warning_line():
    """The README's first example samples queues; at flow fidelity (no queues) it runs, with a warning."""
    ex = __import__("pathlib").Path(__file__).parents[1] / "examples" / "leaf_spine_incast.toml"
    r = subprocess.run([*FABRICSIM, "run", str(ex), "--fidelity", "flow", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"fabricsim: warning: {ex}: measure.queue_interval is ignored at flow fidelity (the flow model has no queues)"]
    assert json.loads(r.stdout)["fidelity"] == "flow"
