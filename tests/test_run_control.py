"""Long runs behave: Ctrl-C stops the engine (exit 130), --max-events / --max-wall stop it (exit 3), a progress
callable sees the run advance, and a scenario that could never end is rejected before it starts."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

import fabricsim
from fabricsim.errors import RunInterrupted, ScenarioError

FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]

# One 9 Gb/s CBR source for 20 s of simulated time: about 22 M packets, far longer than any test waits.
LONG = """
seed = 1
stop = "20s"
[topology]
kind = "dumbbell"
senders = 2
access_rate = "10Gbps"
access_delay = "1us"
bottleneck_rate = "10Gbps"
bottleneck_delay = "1us"
[[sources]]
name = "a"
kind = "cbr"
src = "sender0"
dst = "receiver"
rate = "9Gbps"
packet_size = 1000
"""


def scenario(text: str, tmp_path, name: str = "s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_unbounded_source_is_rejected_naming_it_and_the_fix(tmp_path):
    p = scenario(LONG.replace('stop = "20s"\n', ""), tmp_path)
    r = subprocess.run([*FABRICSIM, "validate", str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    line, = r.stderr.strip().splitlines()
    assert line == (f"{p}: sources[0].stop: source 'a' sends forever: it has no stop and no max_bytes, and the "
                    "scenario has no stop; set sources[0].stop or sources[0].max_bytes, or a top-level stop")


def test_unbounded_tcp_is_rejected_and_a_byte_limit_is_enough(tmp_path):
    base = LONG.split("[[sources]]")[0].replace('stop = "20s"\n', "")
    tcp = '[[tcp]]\nname = "bulk"\nsrc = "sender0"\ndst = "receiver"\n'
    with pytest.raises(ScenarioError, match=r"tcp\[0\]\.stop: TCP connection 'bulk' sends forever"):
        fabricsim.validate(fabricsim.load_scenario(scenario(base + tcp, tmp_path)))
    fabricsim.validate(fabricsim.load_scenario(scenario(base + tcp + "max_bytes = 10000\n", tmp_path, "b.toml")))


def test_max_events_stops_the_packet_engine_after_exactly_that_many_events(tmp_path):
    """The packet engine checks its limit before every event."""
    rec = fabricsim.run(fabricsim.load_scenario(scenario(LONG, tmp_path)), max_events=1000)
    assert rec.halted == "max_events" and rec.events == 1000 and not rec.complete
    p = rec.packets
    assert p["tx"] == p["rx"] + p["dropped"] + p["in_flight"]


def test_max_events_stops_the_flow_engine_at_the_next_instant():
    """The flow engine checks between instants. In examples/training_step.toml the first instant is 100 µs,
    where the four forward compute steps end together (four events); with max_events = 2 it stops there."""
    from pathlib import Path

    sc = fabricsim.load_scenario(Path(__file__).parents[1] / "examples" / "training_step.toml")
    rec = fabricsim.run(sc, fidelity="flow", max_events=2)
    assert rec.halted == "max_events" and rec.events == 4 and rec.end_time_s == pytest.approx(100e-6)
    assert not rec.complete and rec.completion_time_s is None


def test_a_whole_run_is_complete_and_not_halted(tmp_path):
    sc = fabricsim.load_scenario(scenario(LONG.replace('"20s"', '"10us"'), tmp_path))
    rec = fabricsim.run(sc, max_events=10**9, max_wall_s=600)
    assert rec.halted is None and rec.complete
    # 10 µs at 9 Gb/s of 1000-byte packets: the first leaves at 1000·8/9e9 s = 0.889 µs, then one every
    # 0.889 µs, so the sends at k · 0.889 µs for k = 1..11 fall within 10 µs (11 · 0.889 = 9.78 µs).
    assert rec.packets["tx"] == 11


def test_progress_sees_the_run_advance_and_its_end(tmp_path):
    """A ring of messages: progress reports messages delivered of all, ending with all of them."""
    sc = fabricsim.load_scenario(scenario(LONG.replace('"20s"', '"2ms"'), tmp_path))
    calls = []
    fabricsim.run(sc, progress=lambda *a: calls.append(a))
    assert calls, "the observer is polled at least once, at the end"
    now_ps, stop_ps, events, done, total, wall_s = calls[-1]
    assert stop_ps == 2 * 10**9 and now_ps <= stop_ps and events > 0 and (done, total) == (0, 0)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_an_exception_in_progress_stops_the_run_and_propagates(tmp_path):
    sc = fabricsim.load_scenario(scenario(LONG, tmp_path))

    def boom(*_):
        raise ValueError("from the progress callable")

    with pytest.raises(ValueError, match="from the progress callable"):
        fabricsim.run(sc, progress=boom)


def test_keyboard_interrupt_inside_the_engine_gives_the_partial_record(tmp_path):
    """What Ctrl-C does (the engine runs Python's signal handlers between event batches; a KeyboardInterrupt
    raised there stops the run): RunInterrupted carries the record so far, which balances."""
    sc = fabricsim.load_scenario(scenario(LONG, tmp_path))

    def interrupt(now_ps, *_):
        if now_ps > 0:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as e:
        fabricsim.run(sc, progress=interrupt)
    rec = e.value.record
    assert isinstance(e.value, KeyboardInterrupt) and rec.halted == "interrupted" and not rec.complete
    p = rec.packets
    assert 0 < p["tx"] == p["rx"] + p["dropped"] + p["in_flight"]
    assert 0 < rec.end_time_s < 20


def test_max_events_on_the_command_line_exits_3_with_one_line(tmp_path):
    p = scenario(LONG, tmp_path)
    r = subprocess.run([*FABRICSIM, "run", str(p), "--max-events", "5000", "--json"], capture_output=True, text=True)
    assert r.returncode == 3 and r.stdout == ""
    line, = r.stderr.strip().splitlines()
    assert re.fullmatch(r"fabricsim: stopped by --max-events 5,000 at simulated time [0-9.e-]+ s after 5,000 events; "
                        r"the run is incomplete \(--partial prints the record so far\)", line), line
    r = subprocess.run([*FABRICSIM, "run", str(p), "--max-events", "5000", "--json", "--partial"],
                       capture_output=True, text=True)
    rec = json.loads(r.stdout)
    assert r.returncode == 3 and rec["halted"] == "max_events" and rec["complete"] is False and rec["events"] == 5000


def test_sigint_two_seconds_into_a_long_run_exits_130_promptly(tmp_path):
    """The acceptance case: SIGINT 2 s into a run that would take tens of seconds ends the process with
    exit code 130 and one line; with --partial the record so far is printed as JSON."""
    p = scenario(LONG, tmp_path)
    proc = subprocess.Popen([*FABRICSIM, "run", str(p), "--json", "--partial"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    time.sleep(2.0)
    assert proc.poll() is None, "the run must still be going after 2 s"
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=30)
    waited = time.monotonic() - sent
    assert proc.returncode == 130
    line, = err.strip().splitlines()
    assert line.startswith("fabricsim: interrupted at simulated time ")
    rec = json.loads(out)
    assert rec["halted"] == "interrupted" and rec["complete"] is False
    # The engine polls every ~50 ms; the margin is for a loaded CI machine, far below the run's length.
    assert waited < 5.0, f"exit took {waited:.2f} s after SIGINT"
