"""Hybrid fidelity from the front door: the CLI and `fabricsim.run` accept it, the record says what was skipped, a
bad knob is one line naming the key, and a contended lossless collective (a Table IV row) completes within 0.1% of
packet fidelity (the jump never takes a message's last packets; tests/hybrid.rs has the closed forms)."""

from __future__ import annotations

import json
import subprocess
import sys

import fabricsim
from fabricsim.studies.orchestration import collective_scenario, preset_groups

FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]

# One 20 MB message alone over a 100 Gb/s switch: N = 20,000 packets of 1,000 + 48 B leave back to back, so at
# packet fidelity the last arrives at (N + 1) * 83.84 ns + 2 us = 1,678.88384 us; the steady middle is jumped.
ONE = """
seed = 1
[topology]
kind = "custom"
nodes = [{ name = "sw", kind = "switch" }, { name = "a", kind = "host" }, { name = "b", kind = "host" }]
links = [{ a = "a", b = "sw", rate = "100Gbps", delay = "1us" }, { a = "b", b = "sw", rate = "100Gbps", delay = "1us" }]
[[messages]]
name = "m"
src = "a"
dst = "b"
size = "20MB"
packet_size = 1000
header = 48
"""


def test_the_cli_runs_hybrid_and_the_record_says_what_it_skipped(tmp_path):
    p = tmp_path / "one.toml"
    p.write_text(ONE)
    out = subprocess.run([*FABRICSIM, "run", str(p), "--fidelity", "hybrid", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert rec["fidelity"] == "hybrid"
    ff = rec["fast_forward"]
    assert ff["jumps"] >= 1 and ff["skipped_packets"] > 10_000 and "extrapolated" in ff["extrapolated"]
    exact = 20_001 * 83.84e-9 + 2e-6
    assert abs(rec["completion_time_s"] - exact) <= 83.84e-9


def test_a_bad_hybrid_knob_is_one_line_naming_it(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(ONE + '\n[hybrid]\ntolerance = 2\n')
    out = subprocess.run([*FABRICSIM, "run", str(p), "--fidelity", "hybrid"], capture_output=True, text=True)
    assert out.returncode == 2
    line, = out.stderr.strip().splitlines()
    assert "hybrid.tolerance" in line and str(p) in line, line


def test_a_contended_lossless_collective_stays_within_a_tenth_of_a_percent():
    sc = collective_scenario(preset_groups("6n_2r"), ["shift-all-reduce"], 10.0, interfaces=1, packet=1024, seed=1,
                             barrier=False, order=None)
    p, h = fabricsim.run(sc, fidelity="packet"), fabricsim.run(sc, fidelity="hybrid")
    assert h.complete and h.fast_forward["jumps"] >= 1
    assert abs(h.completion_time_s / p.completion_time_s - 1) <= 1e-3
    assert h.packets["tx"] == h.packets["rx"] == p.packets["tx"], "every packet sent once, skipped ones counted"
