"""`fabricsim cluster`: one JSON object with --json, the per-policy summary, files and figures, one-line errors
(exit 2) for bad input, and the example sweep file through `fabricsim sweep`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricsim.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--fabric", "vela", "--jobs", "12", "--sizes", "uniform:2:6", "--iterations", "5", "--pattern", "shift-all-reduce",
         "--size", "1MiB", "--load", "0.9", "-q"]


def test_short_help_is_the_registrys():
    from fabricsim.cli.cluster import cluster

    assert cluster.get_short_help_str(limit=10_000) == COMMANDS["cluster"][2] == (
        "Multi-job cluster simulator: Poisson job arrivals, placement policies, interference, slowdown.")


def test_json_is_one_object_with_every_policy_and_run(capsys):
    assert main(["cluster", *QUICK, "--seeds", "2", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    doc = json.loads(out)
    assert doc["fabric"] == "vela" and doc["servers"] == 24 and doc["seeds"] == [1, 2]
    assert list(doc["policies"]) == ["pack", "spread", "random", "first-fit", "advisor"]
    assert len(doc["runs"]) == 10 and all(r["jobs"] == 12 for r in doc["runs"])
    pack = doc["policies"]["pack"]
    assert pack["runs"] == 2 and pack["mean_slowdown"]["mean"] >= 1.0 and pack["mean_slowdown"]["ci95"] is not None
    # The same seed gives every policy the same jobs at the same times: the arrival rate is the policy's too.
    assert {r["arrival_rate"] for r in doc["runs"] if r["seed"] == 1} == {doc["arrival_rate"]["1"]}


def test_policies_chosen_repeat_or_all(capsys):
    assert main(["cluster", *QUICK, "--policy", "pack", "--policy", "advisor", "--policy", "pack", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["policies"]) == ["pack", "advisor"]


def test_text_summary_and_files(tmp_path, capsys):
    fig = tmp_path / "policies.png"
    out = tmp_path / "out"
    assert main(["cluster", *QUICK, "--policy", "pack", "--policy", "spread", "--out", str(out),
                 "--figure", str(fig)]) == 0
    cap = capsys.readouterr()
    assert "pack" in cap.out and "spread" in cap.out and "mean slowdown" in cap.out
    for name in ("jobs.parquet", "jobs.csv", "timeline.csv", "runs.csv", "jct_cdf.png", "slowdown.png",
                 "timeline.png", "policies.png"):
        assert (out / name).stat().st_size > 0, name
    assert fig.read_bytes()[:4] == b"\x89PNG"
    import pandas as pd

    jobs = pd.read_parquet(out / "jobs.parquet")
    assert len(jobs) == 24 and set(jobs["policy"]) == {"pack", "spread"}
    assert (jobs["jct_s"] >= jobs["finish_s"] - jobs["start_s"] - 1e-12).all()


def test_plain_progress_lines_without_a_terminal(capsys):
    args = [a for a in QUICK if a != "-q"]
    assert main(["cluster", *args, "--policy", "first-fit", "--json"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("fabricsim cluster: first-fit seed 1: 12 jobs, mean slowdown")


def test_a_scenario_file_fabric(capsys):
    assert main(["cluster", "--fabric", str(ROOT / "examples" / "training_step.toml"), "--jobs", "6", "--sizes",
                 "uniform:2:4", "--iterations", "3", "--size", "256KiB", "--policy", "random", "-q", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["servers"] == 4 and doc["policies"]["random"]["mean_slowdown"]["mean"] == 1.0  # one switch


@pytest.mark.parametrize("args, option, words", [
    (["--policy", "best"], "--policy", "unknown policy 'best'"),
    (["--fabric", "nope"], "--fabric", "'nope' is neither a built-in fabric (vela, a100_roce_2x8, cpo_baseline, h100_ib_2x8, p4de_efa_2x8, p5_efa_2x8) nor a fabric file"),
    (["--sizes", "choice:4,30"], "--sizes", "the fabric holds 24"),
    (["--sizes", "zipf:2"], "--sizes", "not a form of sizes"),
    (["--sizes", "uniform:8:2"], "--sizes", "low bound above"),
    (["--sizes", "1"], "--sizes", "below 2"),
    (["--iterations", "0"], "--iterations", "below 1"),
    (["--arrival-rate", "-1", "--load", "0.5"], "--arrival-rate", "not both"),
    (["--load", "-0.5"], "--load", "positive fraction"),
    (["--load", "0"], "--load", "positive fraction"),
    (["--size", "0"], "--size", "at least 1 byte"),
    (["--msg-mb", "0"], "--size", "positive number of MiB"),  # the old option: one warning line, then this
    (["--jobs", "0"], "--jobs", "must be >= 1"),
    (["--interfaces", "5"], "--interfaces", "must be 1..4"),
    (["--interfaces", "2", "--per-server", "3"], "--per-server", "must be 1..2"),
    (["--pattern", "broadcast"], "--pattern", "unknown pattern"),
    (["--sharing", "fair"], "--sharing", "unknown sharing model"),
    (["--seeds", "0"], "--seeds", "must be >= 1"),
    (["--figure", "out.txt"], "--figure", "no image suffix"),
    (["--fabric", "vela", "--scenario", "x.toml"], "--scenario", "not both"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, option, words):
    base = ["--jobs", "4", "--sizes", "2", "--iterations", "2", "-q"]
    assert main(["cluster", *base, *args]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    lines = cap.err.strip().splitlines()
    if "--msg-mb" in args:  # a deprecated option says so first
        assert lines.pop(0) == "fabricsim cluster: --msg-mb is deprecated; use --size 0MiB"
    assert len(lines) == 1 and "Traceback" not in cap.err
    assert option in lines[0] and words in lines[0], lines[0]


def test_arrival_rate_negative_alone(capsys):
    assert main(["cluster", "--jobs", "4", "--sizes", "2", "--arrival-rate", "-2", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "fabricsim cluster: --arrival-rate: must be a positive number of jobs/s, got -2.0"


def test_missing_scenario_file_names_it(capsys):
    assert main(["cluster", "--fabric", "/nonexistent/fabric.toml", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "/nonexistent/fabric.toml" in err


def test_example_sweep_runs_every_policy(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["sweep", str(ROOT / "examples" / "cluster_policies.toml"), "--seeds", "1", "--workers", "0",
                 "--store", str(store), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] == 5 and doc["invalid"] == 0 and doc["failed"] == 0


def test_ctrl_c_stops_cleanly(monkeypatch, capsys):
    import fabricsim.cluster.sim as sim

    real = sim.simulate
    calls = []

    def interrupted(cfg, **kw):
        calls.append(cfg.policy)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(cfg, **kw)

    monkeypatch.setattr(sim, "simulate", interrupted)
    assert main(["cluster", *QUICK, "--policy", "pack", "--policy", "spread", "--seeds", "2", "--json"]) == 130
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.strip() == "fabricsim cluster: interrupted after 1 of 4 runs"
