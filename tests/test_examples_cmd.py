"""`fabricsim examples list|copy DIR`, and the lazy command registry: what `--help` lists is each command's own help."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import click
import pytest

from fabricsim.cli import COMMANDS, cli, main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.name for p in (ROOT / "examples").glob("*.toml"))


def test_list_shows_every_example_with_its_description(capsys):
    assert main(["examples", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split(None, 1)[1] for line in out[:-1]}
    assert sorted(rows) == SHIPPED and len(SHIPPED) >= 4
    # The description is the first sentence of the file's opening comment, joined across its lines.
    assert rows["leaf_spine_incast.toml"] == ("A small incast on a leaf-spine: three hosts send 1 MiB each to h0 while "
                                              "a CBR flow crosses the fabric.")
    assert rows["leaf_spine_16.toml"].endswith("lossless (input-buffered) switches.")
    assert out[-1] == f"{len(SHIPPED)} examples; copy them with: fabricsim examples copy DIR"


def test_copy_writes_every_example_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["examples", "copy", "ex"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == SHIPPED
    for name in SHIPPED:
        assert (tmp_path / "ex" / name).read_bytes() == (ROOT / "examples" / name).read_bytes()
        assert f"wrote {Path('ex') / name}" in out
    assert out[-1] == f"{len(SHIPPED)} files in ex; run one with: fabricsim run {Path('ex') / 'leaf_spine_incast.toml'}"


def test_copied_examples_validate(tmp_path, capsys):
    assert main(["examples", "copy", str(tmp_path / "ex")]) == 0
    capsys.readouterr()
    from fabricsim.sweep.spec import load_sweep

    for name in SHIPPED:
        path = tmp_path / "ex" / name
        if "\ntask = " in path.read_text():  # a sweep file (fabricsim sweep), not a scenario
            spec, base = load_sweep(path)
            assert spec.grid and base
            continue
        assert main(["validate", str(path)]) == 0, capsys.readouterr().err
        assert capsys.readouterr().out.strip() == f"{path}: ok"


def test_copy_refuses_to_overwrite_unless_forced(tmp_path, capsys):
    dest = tmp_path / "ex"
    dest.mkdir()
    mine = dest / "leaf_spine_incast.toml"
    mine.write_text("# my own edits\n")
    assert main(["examples", "copy", str(dest)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (f"fabricsim: examples copy: {mine} already exists; nothing copied "
                                    "(--force overwrites)")
    assert mine.read_text() == "# my own edits\n" and sorted(p.name for p in dest.iterdir()) == [mine.name]
    assert main(["examples", "copy", str(dest), "--force"]) == 0
    assert mine.read_bytes() == (ROOT / "examples" / mine.name).read_bytes()
    assert sorted(p.name for p in dest.iterdir()) == SHIPPED


def test_copy_into_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    assert main(["examples", "copy", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"fabricsim: examples copy: {f} exists and is not a folder"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_registry_short_help_is_the_commands_own(name):
    """`fabricsim --help` prints COMMANDS' short help without importing the commands; it must be theirs."""
    module, attr, short = COMMANDS[name]
    cmd = getattr(importlib.import_module(f"fabricsim.cli.{module}"), attr)
    assert isinstance(cmd, click.Command) and cmd.name == name
    assert cmd.get_short_help_str(limit=10_000) == short
    # And cut to any width the way click cuts the loaded command's (so `fabricsim --help` reads the same whether
    # or not a command was loaded, and as docs/reference/cli.md, rendered with every command loaded).
    from fabricsim.cli import _short_help

    assert [_short_help(short, w) for w in range(20, 121)] == [cmd.get_short_help_str(w) for w in range(20, 121)]


def test_top_level_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(COMMANDS) == set(cli.list_commands(click.Context(cli)))


def imported_after(code: str) -> set[str]:
    """The top-level packages a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split("\n")[-2].split())


def test_version_and_help_import_neither_numpy_nor_pydantic():
    for argv in (["--version"], ["--help"], ["examples", "list"]):
        mods = imported_after(f"from fabricsim.cli import main\nmain({argv!r})")
        assert not {"numpy", "pydantic", "rich", "pandas"} & mods, argv


def test_loading_a_small_scenario_imports_no_numpy():
    """A hand-written scenario (message rows, no compute or collectives) is checked in its row form at load."""
    mods = imported_after("import fabricsim\nsc = fabricsim.load_scenario('examples/leaf_spine_incast.toml')\n"
                          "assert sc.row_form and sc.messages")
    assert "pydantic" in mods and "numpy" not in mods
