"""The bad-input corpus: every malformed or impossible scenario gives one clear line naming file and field, exit 2."""

import subprocess
import sys
from pathlib import Path

import pytest

from fabricsim.cli import main

CORPUS = sorted((Path(__file__).parent / "bad_inputs").glob("*.toml"))


def expected(path: Path) -> str:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("# expect: "), f"{path.name} must start with '# expect: <substring>'"
    return first[len("# expect: "):]


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bad_input_gives_one_line_and_exit_2(path, capsys):
    code = main(["run", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2, f"exit code {code}, stderr: {err!r}"
    assert out == "", "nothing may reach stdout on a user error"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, f"want exactly one line, got: {err!r}"
    line = lines[0]
    assert str(path) in line, f"the line must name the file: {line!r}"
    assert expected(path) in line, f"want {expected(path)!r} in {line!r}"
    assert "Traceback" not in line and "panicked" not in line


@pytest.mark.parametrize("args", [["run", "does_not_exist.toml"], ["run"], ["run", "x.toml", "--seed", "-3"], ["frobnicate"]])
def test_cli_usage_errors_are_one_line_exit_2(args, capsys):
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().split("\n")) == 1, err


def test_entry_point_in_a_subprocess():
    """Through the real interpreter: no traceback, exit 2, one line."""
    path = Path(__file__).parent / "bad_inputs" / "cyclic_dag.toml"
    p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "run", str(path), "--json"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and "dependency cycle" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bad_input_through_the_interpreter(path):
    """Every corpus file through `python -m fabricsim.cli run FILE --json`: exit 2, one line, no traceback."""
    p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "run", str(path), "--json"], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.endswith("\n"), p.stderr
    assert str(path) in p.stderr and expected(path) in p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr


def _reference_keys() -> set[str]:
    """Every key of the scenario-file reference (docs/gen_reference.py renders it from the spec models)."""
    import re

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
    import gen_reference

    return set(re.findall(r"`([a-z_][a-z0-9_]*)`", gen_reference.render()))


FIELD = __import__("re").compile(r"^[a-z_]+(\[\d+\])?(\.[a-z_]+(\[\d+\])?)*$")


def test_errors_name_the_users_own_keys(capsys):
    """Issue 22: every key in the field an error names is in the user's file or in the scenario reference, so
    no engine-internal name (`queue_sample_ps`, `input_buffer_bytes`, `network.nodes`) reaches the user."""
    known = _reference_keys()
    checked = 0
    for path in CORPUS:
        main(["validate", str(path)])
        line = capsys.readouterr().err.strip()
        field = line[len(str(path)) + 2:].split(": ", 1)[0]
        if not FIELD.match(field):
            continue  # not a field: a syntax error's line, an unreadable file, a generated topology's node
        checked += 1
        text = path.read_text(errors="replace")
        for key in __import__("re").findall(r"[a-z_]+", field):
            assert key in text or key in known, f"{path.name}: '{key}' of '{field}' is neither in the file nor documented"
    assert checked >= 40
