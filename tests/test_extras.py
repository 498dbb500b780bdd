"""A base install (pyproject's `dependencies` only) runs `run`, `validate`, `trace`, `topology`, `collective`,
`place` and `examples`; a command that needs an extra says which one in one line, with exit code 2.

Each command runs in a subprocess whose import system refuses the heavy packages, as a base install lacks them
(`make check-install` also installs the base wheel into a fresh venv: tests/test_install.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "pandas", "pyarrow", "matplotlib", "ortools", "highspy", "dask", "distributed")

RUNNER = f"""
import importlib.abc, sys
class Base(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Base())
from fabricsim.cli import main
rc = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {HEAVY!r})
assert not loaded, loaded
sys.exit(rc)
"""


def base(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_runner_refuses_heavy_imports():
    r = subprocess.run([sys.executable, "-c", RUNNER.replace("from fabricsim.cli import main", "import pandas")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "No module named 'pandas'" in r.stderr


def test_base_commands_run_without_extras(tmp_path):
    ex = "examples/leaf_spine_incast.toml"
    r = base("run", ex, "--json")
    assert r.returncode == 0, r.stderr
    # 4 senders x 1 MB through one 1 Gb/s bottleneck: everything delivered, nothing lost in this example.
    rec = json.loads(r.stdout)
    assert rec["packets"]["tx"] == rec["packets"]["rx"] > 0
    assert base("validate", ex).returncode == 0
    r = base("topology", "examples/leaf_spine_16.toml", "--json")
    assert r.returncode == 0, r.stderr
    topo = json.loads(r.stdout)
    # 4 racks x 4 hosts under 4 leaves and 2 spines: host to host across racks is 4 links, within a rack 2.
    assert topo["hosts"] == 16 and topo["diameter_hops"] == 4
    r = base("collective", "--pattern", "ring-all-reduce", "--nodes", "1,2,7,8", "--size", "1MiB", "--seeds", "2",
             "--fidelity", "flow", "--json")
    assert r.returncode == 0, r.stderr
    # A ring all-reduce of 1 MiB over 4 NICs of 100 Gb/s: 2·(N−1)/N·S·8 / 100 Gb/s = 62.9 µs at least.
    assert json.loads(r.stdout)["completion_time_ms"]["mean"] > 2 * 3 / 4 * (1 << 20) * 8 / 100e9 * 1e3
    trace = tmp_path / "t"
    assert base("trace", "synth", "dp", "--out", str(trace), "--ranks", "2", "--layers", "2").returncode == 0
    r = base("trace", "info", str(trace), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ranks"] == 2, r.stderr
    assert base("examples", "list").returncode == 0
    r = base("place", "--nodes", "4", "--per-server", "1", "--evals", "10", "--seeds", "1", "--json")
    assert r.returncode == 0, r.stderr
    # Four nodes in one rack of the Vela-like fabric: the all-reduce runs at the NIC bound, 2·(N−1)·10 MiB·8 / 100 Gb/s
    # = 5.033 ms, plus a few microseconds of pipeline latency (as tests/test_place_cli.py).
    assert 5.033 < json.loads(r.stdout)["placements"][0]["completion_ms"] < 5.04


@pytest.mark.parametrize("args,extra", [
    (["cluster", "--jobs", "2", "--json"], "cluster"),
    (["run", "examples/leaf_spine_incast.toml", "--figure", "{tmp}/x.png"], "figures"),
    (["ina", "--json"], "studies"),
])
def test_a_command_that_needs_an_extra_names_it_in_one_line(tmp_path, args, extra):
    r = base(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(f"pip install 'fabricsim[{extra}]'"), r.stderr
