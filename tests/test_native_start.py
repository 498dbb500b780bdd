"""The native start: `fabricsim run FILE --json` and `fabricsim validate FILE` answered by the Rust front door
(`_core.fast_cli`) print exactly what the Python path prints, or hand the command to it.

Corpus: every scenario file shipped or used in tests: examples/, experiments/, benchmarks/, tests/bad_inputs/ and
tests/native_start/ (the scenario files the other tests write, collected by tests/make_native_start_corpus.py).
For each file the native front door either declines, or builds the wire header, the row-form wire spec and the
workload columns identical to Python's (`Scenario.header()`, `Scenario.to_wire()`, `Workload.columns()`; the first
two are the engine's reader too, given the typed scenario's dump, so they check that the dump says what the file
said), and
then `validate` and `run --json` give Python's exit code, stdout (the record, `wall_s` aside) and stderr. A file
Python rejects or warns about must be declined; a file Python accepts may be declined only if it is listed in
DECLINED with the reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricsim import _core
from fabricsim.cli import main as cli_main
from fabricsim.errors import FabricsimError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted({*ROOT.glob("examples/*.toml"), *ROOT.glob("experiments/**/*.toml"), *ROOT.glob("benchmarks/*.toml"),
                 *ROOT.glob("tests/bad_inputs/*.toml"), *ROOT.glob("tests/native_start/*.toml")})
IDS = [str(p.relative_to(ROOT)) for p in CORPUS]

DECLINED: dict[str, str] = {}
"""Scenario files Python accepts that the native front door hands to Python anyway, and why (a substring of its
reason). Every other file Python accepts without a warning must be taken natively."""

COLUMN_KEYS = ("src", "src_nic", "dst", "dst_nic", "size", "packet", "header", "start_ps", "delay_ps", "path",
               "n_barriers", "compute_host", "compute_ps", "streams_host", "streams_count", "pred_start", "pred",
               "path_start", "path_nodes", "names", "msg_name", "barrier_name", "compute_name")


def python_side(path: Path):
    """(wire parts as `native_scenario` gives them, or None if Python's load rejects the file or warns, the
    reason). Dependency cycles are the engine's check (the validate and run tests cover them)."""
    from fabricsim.spec import load_scenario

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            sc = load_scenario(path)
            header = json.loads(json.dumps(sc.header()))
            rows = json.loads(json.dumps(sc.to_wire())) if sc.row_form else None
            columns = None
            if sc.has_workload_rows or sc.streams:
                c = sc.workload().columns()
                columns = {k: c[k].tolist() if isinstance(c.get(k), np.ndarray) else c.get(k, []) for k in COLUMN_KEYS}
        except (FabricsimError, Warning) as e:
            return None, f"{type(e).__name__}: {e}"
    return {"header": header, "rows": rows, "columns": columns}, None


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_the_native_front_door_builds_what_python_builds_or_declines(path):
    rel = str(path.relative_to(ROOT))
    ok, text = _core.native_scenario(str(path))
    theirs, python_error = python_side(path)
    if not ok:
        assert theirs is None or rel in DECLINED, f"{rel}: declined ({text}) though Python takes it"
        if rel in DECLINED:
            assert DECLINED[rel] in text, text
        return
    assert rel not in DECLINED, f"{rel} is taken natively now: drop it from DECLINED"
    assert theirs is not None, f"{rel}: taken natively though Python says {python_error}"
    mine = json.loads(text)
    for part in ("header", "rows", "columns"):
        assert mine[part] == theirs[part], f"{rel}: {part} differs"


def python_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the click CLI in this process."""
    capsys.readouterr()
    code = cli_main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def without_wall(stdout: str) -> dict:
    rec = json.loads(stdout)
    assert isinstance(rec.pop("wall_s"), float)
    return rec


TAKEN = [p for p in CORPUS if _core.native_scenario(str(p))[0]]
LONG_RUNS = ("rail_allreduce", "test_max_events_stops_the_packet_engine")
"""Files whose runs take seconds (an 8-server rail all-reduce; a 20 s CBR run of 22 M packets): slow cases."""
FAST = [p for p in TAKEN if not any(k in p.name for k in LONG_RUNS)]
SLOW = [p for p in TAKEN if any(k in p.name for k in LONG_RUNS)]


@pytest.mark.parametrize("path", TAKEN, ids=[str(p.relative_to(ROOT)) for p in TAKEN])
def test_validate_natively_says_what_python_says(path, capsys):
    got = _core.fast_cli(["validate", str(path)])
    code, out, err = python_cli(["validate", str(path)], capsys)
    if got is None:
        assert code == 2, f"declined to validate {path.name}, which Python validates"
        return
    assert got == (code, out, err)


@pytest.mark.parametrize("seed,fidelity", [(None, None), (7, None), (None, "flow")])
@pytest.mark.parametrize("path", FAST, ids=[str(p.relative_to(ROOT)) for p in FAST])
def test_run_json_natively_prints_what_python_prints(path, seed, fidelity, capsys):
    argv = ["run", str(path), "--json"] + (["--seed", str(seed)] if seed is not None else []) + \
        (["--fidelity", fidelity] if fidelity else [])
    got = _core.fast_cli(argv)
    code, out, err = python_cli(argv, capsys)
    if got is None:  # only where Python reports a user error, or warns (queue sampling at flow fidelity)
        assert code == 2 or err.startswith("fabricsim: warning: "), f"{path.name} {argv}: declined, Python ran it"
        return
    assert got[0] == code and got[2] == err
    assert without_wall(got[1]) == without_wall(out)
    strip = lambda s: s.split('"wall_s": ')[0] + s.split('"wall_s": ')[1].split(",", 1)[1]  # noqa: E731
    assert strip(got[1]) == strip(out), "the same bytes, wall_s aside"


@pytest.mark.slow
@pytest.mark.parametrize("path", SLOW, ids=[str(p.relative_to(ROOT)) for p in SLOW])
def test_long_runs_natively_print_what_python_prints(path, capsys):
    got = _core.fast_cli(["run", str(path), "--json"])
    code, out, err = python_cli(["run", str(path), "--json"], capsys)
    assert got is not None and got[0] == code and got[2] == err
    assert without_wall(got[1]) == without_wall(out)


@pytest.mark.parametrize("argv", [
    ["run", "x.toml"], ["run", "x.toml", "--json", "--partial"], ["run", "x.toml", "--json", "--max-events", "5"],
    ["run", "x.toml", "--json", "--figure", "a.png"], ["run", "x.toml", "--json", "--seed", "-3"],
    ["run", "x.toml", "--json", "--seed", "1", "--seed", "2"], ["run", "x.toml", "--json", "--fidelity", "hybrid"],
    ["validate", "x.toml", "--json"], ["topology", "x.toml"], ["run", "--json"], ["--version"], [],
])
def test_other_command_lines_go_to_python(argv):
    assert _core.fast_cli(argv) is None


@pytest.mark.parametrize("fmt", ["json", "graphml"])
def test_graph_files_are_read_natively_as_python_reads_them(tmp_path, fmt):
    """The `graph` family: networkx files written from three built fabrics (`to_networkx`, then node-link JSON or
    GraphML; hosts, switches with latencies, NVLink weights, a policy) read by the native front door into the
    wire spec Python builds from the same file, relative to the scenario's folder."""
    import networkx as nx

    from fabricsim.topology import dragonfly, rail_optimized, to_networkx, torus

    (tmp_path / "fabrics").mkdir()
    for k, net in enumerate((rail_optimized(sus=2, servers_per_su=2, spines=1, gpus_per_server=2),
                             torus([3, 2], "1Gbps", delay="1us"), dragonfly(p=1, a=3, h=1, rate="10Gbps"))):
        f = tmp_path / "fabrics" / f"net{k}.{fmt}"
        if fmt == "json":
            f.write_text(json.dumps(nx.node_link_data(to_networkx(net))))
        else:
            nx.write_graphml(to_networkx(net), f)
        scen = tmp_path / f"s{k}.toml"
        scen.write_text(f'[topology]\nkind = "graph"\nfile = "fabrics/{f.name}"\nswitch_latency = "1us"\n')
        ok, text = _core.native_scenario(str(scen))
        theirs, python_error = python_side(scen)
        assert ok and theirs is not None, (text, python_error)
        assert json.loads(text)["header"] == theirs["header"]


def test_toml_1_1_goes_to_python(tmp_path):
    """TOML that only TOML 1.1 reads (Python's tomllib reads 1.0) is an error in both front doors, with tomllib's
    line, column and words."""
    one = (ROOT / "benchmarks" / "one_packet.toml").read_text()
    newer = tmp_path / "newer.toml"
    newer.write_text(one.replace('{ name = "b", kind = "host" }]', '{ name = "b", kind = "host", }]'))
    ok, why = _core.native_scenario(str(newer))
    theirs, python_error = python_side(newer)
    assert theirs is None, "tomllib rejects a trailing comma in an inline table"
    assert not ok and python_error == f"ScenarioError: {newer}: {why}", "the line, column and words are tomllib's"


def test_a_missing_file_and_a_bad_file_go_to_python(tmp_path):
    assert _core.fast_cli(["run", str(tmp_path / "nope.toml"), "--json"]) is None
    bad = tmp_path / "bad.toml"
    bad.write_text('[topology]\nkind = "leaf_spine"\nracks = 1\n')
    assert _core.fast_cli(["validate", str(bad)]) is None


def test_the_one_packet_run_by_hand():
    """benchmarks/one_packet.toml: one 1,024 B packet over two 100 Gb/s links of 1 µs through one switch.
    Serialisation 1024·8 / 100e9 = 81.92 ns per hop, so it arrives at 2·(81.92 ns + 1 µs) = 2.16384 µs."""
    code, out, err = _core.fast_cli(["run", str(ROOT / "benchmarks" / "one_packet.toml"), "--json"])
    rec = json.loads(out)
    assert (code, err) == (0, "") and out.endswith("}\n")
    assert rec["completion_time_s"] == pytest.approx(2.16384e-6, abs=1e-15)
    assert rec["packets"] == {"tx": 1, "rx": 1, "dropped": 0, "in_flight": 0} and rec["hops"] == {"1": 1}


def entry(*args: str, **kw) -> subprocess.Popen:
    """`fabricsim ARGS` through the console script's module, as the installed command runs it."""
    return subprocess.Popen([sys.executable, "-m", "fabricsim._entry", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


def test_the_native_start_imports_only_the_native_module():
    code = ("import sys; sys.argv = ['fabricsim', 'run', 'benchmarks/one_packet.toml', '--json']; "
            "from fabricsim._entry import main; rc = main(); "
            "heavy = sorted(m for m in ('click', 'rich', 'numpy', 'pydantic', 'typing', 'fabricsim.cli', 'fabricsim.spec') "
            "if m in sys.modules); print(rc, heavy, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.stderr.strip() == "0 []" and json.loads(r.stdout)["complete"] is True


def test_a_declined_command_runs_the_python_cli_with_its_messages(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[topology]\nkind = "leaf_spine"\nracks = 1\n')
    p = entry("validate", str(bad))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2 and out == "" and "hosts_per_rack: required field is missing" in err


def test_progress_starts_when_the_python_cli_starts_it():
    from fabricsim import _entry
    from fabricsim.cli._common import PROGRESS_AFTER_S

    assert _entry._PROGRESS_AFTER_S == PROGRESS_AFTER_S
    assert _entry._scenario_arg(["run", "--seed", "3", "a.toml", "--json"]) == "a.toml"


from test_run_control import LONG  # noqa: E402  (the 20 s CBR run the Python path's Ctrl-C test uses)


def test_ctrl_c_stops_a_native_run_within_a_second(tmp_path):
    p = tmp_path / "long.toml"
    p.write_text(LONG)
    assert _core.native_scenario(str(p))[0]
    proc = entry("run", str(p), "--json", env={**os.environ, "PYTHONUNBUFFERED": "1"})
    time.sleep(1.5)
    assert proc.poll() is None, "the run must still be going"
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=30)
    waited = time.monotonic() - sent
    assert proc.returncode == 130 and out == ""
    line, = err.strip().splitlines()
    assert line.startswith("fabricsim: interrupted at simulated time ") and line.endswith(
        " events (--partial prints the record so far)")
    assert waited < 1.0, f"exit took {waited:.2f} s after SIGINT"


# ---- property: a scenario with any one value changed is still built as Python builds it, or declined -------------

TRICKY = [0, 1, -1, 7, 128, 255, 256, 0.5, 1.5, 1e-7, 1e20, True, "", "x", "h0", "1", "0.5", "1.", ".5", "5e-1",
          "100Gbps", " 10 Gbps ", "10mb/s", "1Kbps", "10GBps", "1e3ns", "1\u00b5s", "1US", "1e9s", "10MiB", "10kib", "8Mb",
          "1 B", "0.75", "2.5B", "unlimited", "auto", "fifo", "round_robin", "per_packet", [], ["h0", "h1"], [1, 2],
          {"kind": "fifo"}]
"""Values a scenario file might hold where another belongs: unit forms, rounding edges, limits, wrong types."""


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"


def _toml(d: dict, prefix: str = "") -> str:
    """A parsed scenario written back as TOML (tables and arrays of tables as headers)."""
    tables = {k: v for k, v in d.items() if isinstance(v, dict) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))}
    out = "".join(f"{k} = {_toml_value(v)}\n" for k, v in d.items() if k not in tables)
    for k, v in tables.items():
        for item in [v] if isinstance(v, dict) else v:
            out += (f"[{prefix}{k}]\n" if isinstance(v, dict) else f"[[{prefix}{k}]]\n") + _toml(item, f"{prefix}{k}.")
    return out


def _leaves(d, at=()):
    """Paths to every value of a parsed document (keys and list indices)."""
    items = d.items() if isinstance(d, dict) else enumerate(d)
    for k, v in items:
        if isinstance(v, (dict, list)) and v:
            yield from _leaves(v, at + (k,))
        yield at + (k,)


def with_one_value_changed(base: Path, rnd, value, directory: Path) -> tuple[Path, tuple]:
    """`base` with one value (chosen by `rnd`) set to `value`, written to `directory`/s.toml; and that value's path."""
    import tomllib

    doc = tomllib.loads(base.read_text())
    path = rnd.choice(list(_leaves(doc)))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    f = directory / "s.toml"
    f.write_text(_toml(doc))
    return f, path


SMALL = [p for p in TAKEN if p.stat().st_size < 5000 and not any(k in p.name for k in LONG_RUNS)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SMALL), st.randoms(use_true_random=False), st.sampled_from(TRICKY))
def test_a_changed_value_is_built_as_python_builds_it_or_declined(tmp_path_factory, base, rnd, value):
    """... and a decline says what Python says: its field when it rejects the file, its warning when it warns
    (tests/test_front_door_errors.py)."""
    from test_front_door_errors import check_named_alike, verdict_of

    f, path = with_one_value_changed(base, rnd, value, tmp_path_factory.mktemp("mut"))
    ok, text = _core.native_scenario(str(f))
    theirs, python_error = python_side(f)
    if ok:
        assert theirs is not None, f"{base.name} with {path} = {value!r}: taken natively though Python says {python_error}"
        mine = json.loads(text)
        assert all(mine[k] == theirs[k] for k in ("header", "rows", "columns")), f"{base.name} with {path} = {value!r}"
    check_named_alike(f"{base.name} with {path} = {value!r}", *verdict_of(python_error, f), ok, text)
