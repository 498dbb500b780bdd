"""`fabricsim fors evaluate` on any fat-tree: the active servers default to what the topology has, the 141 Gb/s
calibration applies to the study's FT(2;20,18) only, and elsewhere the per-phase overhead is an input."""

import json

import pytest

from fabricsim.cli import main
from fabricsim.studies import fors as study
from fabricsim.topology.fattree import FatTree

# FT(2;8,4): M1 = 4 leaves of M0 = 8 servers, so P = M0·M1 = 32 servers and 8·4 = 32 leaf-spine links.
M0, M1, P = 8, 4, 32
MSG = 1 << 20  # the default 1 MiB per pair and phase
HOP_S = MSG * 8 / 200e9  # its transfer at the default 200 Gb/s: 41.94304 µs
SAF_S = 4096 * 8 / 200e9  # one 4 KiB packet's store-and-forward: 0.16384 µs


def _evaluate(capsys, *args):
    assert main(["fors", "evaluate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_active_defaults_to_every_server_of_the_fat_tree(capsys):
    out = _evaluate(capsys, "--m0", "8", "--m1", "4", "--random-failures", "3")
    assert out["active"] == P == 32
    assert out["overhead_us"] == study.DEFAULT_OVERHEAD_US == 0.0
    assert out["overhead_role"] == "input" and out["overhead_source"] == "input"


def test_zero_overhead_gives_the_conflict_free_closed_form(capsys):
    # Linear shift + Ftree on FT(2;8,4) without failures: 31 phases, each one 1 MiB transfer plus the last packet's
    # store-and-forward at the 3 hops after the first (every phase has an inter-leaf pair), no overhead:
    # T = 31 · (41.94304 + 3 · 0.16384) µs = 1315.47136 µs; per server 31 · 1 MiB · 8 / T = 197.683 Gb/s.
    out = _evaluate(capsys, "--m0", "8", "--m1", "4", "--scheme", "ftree")
    assert out["phases"] == P - 1 == 31 and out["max_flows_per_link"] == 1
    assert out["completion_s"] == pytest.approx(31 * (HOP_S + 3 * SAF_S), rel=1e-9)
    assert out["completion_s"] == pytest.approx(1315.47136e-6, rel=1e-9)
    assert out["throughput_per_server_gbps"] == pytest.approx(197.683, abs=1e-3)


def test_the_overhead_used_is_the_input_given(capsys):
    base = _evaluate(capsys, "--m0", "8", "--m1", "4", "--scheme", "ftree", "--overhead-us", "0")
    out = _evaluate(capsys, "--m0", "8", "--m1", "4", "--scheme", "ftree", "--overhead-us", "10")
    assert out["overhead_us"] == pytest.approx(10.0) and out["overhead_role"] == "input"
    # T(o) = T(0) + (phases − 1)·o: 30 gaps of 10 µs = 300 µs more.
    assert out["completion_s"] - base["completion_s"] == pytest.approx(30 * 10e-6, rel=1e-9)


def test_text_output_labels_the_overhead_as_an_input(capsys):
    assert main(["fors", "evaluate", "--m0", "8", "--m1", "4", "--overhead-us", "2.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fors on FT(2;8,4) (f = 0, m = 0): ") and "over 32 servers" in lines[0]
    assert lines[1] == ("  inputs: 32 active servers (all of FT(2;8,4)), 200 Gb/s links, 1 MiB per pair and phase; "
                        "overhead 2.50 us per phase (input: --overhead-us)")
    assert main(["fors", "evaluate", "--m0", "8", "--m1", "4"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(
        "overhead 0.00 us per phase (input: --overhead-us default, 0 off the study's network)")


def test_the_study_network_still_reproduces_its_calibration(capsys):
    # The default scenario is the study's FT(2;20,18) with 326 of its 360 servers: linear shift + Ftree there gives
    # the study's 141 Gb/s per server by construction (141 × 326 = 45.966 Tb/s), the overhead labelled calibrated.
    out = _evaluate(capsys, "--scheme", "ftree")
    assert out["active"] == 326
    assert out["throughput_per_server_gbps"] == pytest.approx(141.0, rel=1e-4)
    assert out["total_tbps"] == pytest.approx(45.966, rel=1e-4)
    assert out["overhead_role"] == "calibrated" and out["overhead_source"] == "calibrated to the study's 141 Gb/s"
    assert out["overhead_us"] == pytest.approx(study.calibrate(FatTree(20, 18)) * 1e6, rel=1e-12)
    assert out["overhead_us"] == pytest.approx(11.46, abs=0.01)
    assert main(["fors", "evaluate", "--scheme", "ftree"]) == 0
    assert "(calibrated to the study's 141 Gb/s: 0F, linear shift + Ftree, 326 servers, 200 Gb/s)" in capsys.readouterr().out


def test_the_calibration_is_held_fixed_when_the_active_servers_change(capsys):
    # 300 servers on the study's network: the overhead stays the 326-server fit (not refitted to 141 Gb/s), so the
    # throughput is a prediction: T = 359 · step + 358 · o with the step of the no-overhead run (the engine rounds o
    # to whole picoseconds, so within 1 ps per gap).
    o = study.calibrate(FatTree(20, 18))
    out = _evaluate(capsys, "--scheme", "ftree", "--active", "300")
    assert out["active"] == 300 and out["overhead_us"] == pytest.approx(o * 1e6, rel=1e-12)
    free = _evaluate(capsys, "--scheme", "ftree", "--active", "300", "--overhead-us", "0")
    assert out["completion_s"] == pytest.approx(free["completion_s"] + 358 * o, abs=358e-12)
    assert out["throughput_per_server_gbps"] == pytest.approx(299 * MSG * 8 / out["completion_s"] / 1e9, rel=1e-9)
    assert out["throughput_per_server_gbps"] != pytest.approx(141.0, rel=1e-3)


@pytest.mark.parametrize("args,line", [
    (["--m0", "8", "--m1", "4", "--active", "33"],
     "fabricsim fors evaluate: --active 33: FT(2;8,4) has 32 servers, so at most 32"),
    (["--active", "361"], "fabricsim fors evaluate: --active 361: FT(2;20,18) has 360 servers, so at most 360"),
    (["--m0", "8", "--m1", "4", "--random-failures", "33"],
     "fabricsim fors: --random-failures 33: FT(2;8,4) has 32 leaf-spine links"),
    (["--m0", "8", "--m1", "4", "--failed", "4:0"],
     "fabricsim fors: --failed: failed link (4, 0) is outside FT(2;8,4) (leaves 0..3, spines 0..7)"),
])
def test_bad_topology_input_is_one_line_and_exit_2(capsys, args, line):
    assert main(["fors", "evaluate", *args]) == 2
    err = capsys.readouterr().err
    assert err == line + "\n"


def test_api_defaults_follow_the_topology():
    ev = study.evaluate(FatTree(M0, M1), "fors")
    assert ev.active == P and ev.extra["overhead_s"] == 0.0 and ev.extra["overhead_role"] == "input"
    assert study.default_active(FatTree(20, 18).with_failed([(0, 0)])) == 326
    assert study.phase_overhead(FatTree(M0, M1), 3e-6) == (3e-6, "input")
    with pytest.raises(ValueError, match=r"measured on FT\(2;20,18\), not FT\(2;8,4\)"):
        study.calibrate(FatTree(M0, M1))
    row = study.sweep_task({"scenario": "0F", "scheme": "ftree", "m0": M0, "m1": M1}, seed=1)
    assert row["active"] == P and row["completion_s"] == pytest.approx(1315.47136e-6, rel=1e-9)
