"""One CLI vocabulary (issue 31): every `fabricsim` command, walked through fabricsim.cli.COMMANDS and its groups,
names the same things the same way.

- a message size is `--size` with a unit, read as a scenario file reads it (no visible `--msg-*` option);
- `--out` is always a folder (metavar DIR);
- a fabric is `--fabric FILE|NAME` (no visible `--scenario` or `--topology` option);
- every command that simulates has `--seed S` and `--seeds K` (runs S..S+K-1);
- `--workers` counts processes;
- `--json` prints exactly one JSON object on stdout, and on a user error nothing on stdout and one line on stderr;
- every renamed option is a hidden alias that still works, the same as the new one, with exactly one warning line,
  and that refuses to be given with the new one (one line, exit 2).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import click
import pytest
from fabricsim.cli import COMMANDS, main
from fabricsim.cli._common import FabricParam, SizeParam, deprecated_aliases

from conftest import TWO_HOSTS
from conftest import SWEEP_TWO_HOSTS as SWEEP

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# ---- the commands --------------------------------------------------------------------------------------------


def _leaves(path: str, cmd: click.Command):
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _leaves(f"{path} {name}", cmd.commands[name])
    else:
        yield path, cmd


def all_commands() -> dict[str, click.Command]:
    """Every leaf command by its path ("fors evaluate"), each module imported as `fabricsim CMD` would."""
    out = {}
    for name, (module, attr, _) in COMMANDS.items():
        cmd = getattr(importlib.import_module(f"fabricsim.cli.{module}"), attr)
        out.update(_leaves(name, cmd))
    return out


CMDS = all_commands()


def visible(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


def option(cmd: click.Command, flag: str) -> click.Option | None:
    return next((p for p in visible(cmd) if flag in p.opts), None)


SIMULATING = {
    # Commands that run the engine (or a randomized optimizer, ina) and so take --seed S --seeds K.
    "run", "incast", "collective", "fors evaluate", "ina", "locality simulate", "trace run", "place", "cluster",
    "sweep",
    # Not here, on purpose: validate, topology, design, examples, report (no simulation); reproduce (each study's
    # seeds are its own, --quick picks fewer); fors schedule/route/verify/export-opensm (--seed draws random
    # failures, nothing is simulated); locality trace/pack (a synthetic trace, --seed draws it); trace info/synth.
}
SIZED = {"collective", "place", "cluster", "fors evaluate", "locality simulate", "design"}
"""Commands that take a message size. Not here: nccl-tests, which takes a range of sizes with nccl-tests' own
-b/--minbytes, -e/--maxbytes (its K, M, G are powers of 1024, as in nccl-tests)."""
FABRIC_FILE = {"collective", "place", "cluster", "trace run", "nccl-tests", "train", "compare"}
"""Commands whose --fabric takes a fabric file (or a built-in name)."""
FABRIC_NAME = {"ina"}
"""Commands whose --fabric picks one of their built-in fabrics only."""


def test_the_walk_finds_every_command():
    assert {"run", "fors evaluate", "locality simulate", "trace synth", "examples copy"} <= set(CMDS)
    assert SIMULATING | SIZED | FABRIC_FILE | FABRIC_NAME <= set(CMDS)


@pytest.mark.parametrize("path", sorted(CMDS))
def test_no_visible_msg_option_and_sizes_are_size(path):
    cmd = CMDS[path]
    assert not [o for p in visible(cmd) for o in p.opts if o.startswith("--msg")]
    sized = [p for p in visible(cmd) if isinstance(p.type, SizeParam)]
    assert [p.opts for p in sized] == ([["--size"]] if path in SIZED else [])
    for p in sized:
        assert p.metavar == "SIZE" and "a bare number is bytes" in p.help and "MiB" in p.help


@pytest.mark.parametrize("path", sorted(CMDS))
def test_every_out_is_a_folder(path):
    out = option(CMDS[path], "--out")
    if out is not None:
        assert out.metavar == "DIR", f"{path} --out is {out.metavar}"


@pytest.mark.parametrize("path", sorted(CMDS))
def test_simulating_commands_take_seed_and_seeds(path):
    cmd = CMDS[path]
    seed, seeds = option(cmd, "--seed"), option(cmd, "--seeds")
    if path in SIMULATING:
        assert seed is not None and seeds is not None, path
        assert isinstance(seeds.type, click.types.IntParamType) and seeds.metavar == "K"
        assert "S..S+K-1" in seeds.help or "S..S+K-1" in (seed.help or ""), path
    else:
        assert seeds is None, f"{path} has --seeds: add it to SIMULATING (with --seed) or drop it"


@pytest.mark.parametrize("path", sorted(CMDS))
def test_a_fabric_is_named_by_fabric(path):
    cmd = CMDS[path]
    assert not [o for p in visible(cmd) for o in p.opts if o in ("--scenario", "--topology")], path
    fabric = option(cmd, "--fabric")
    if path in FABRIC_FILE:
        assert isinstance(fabric.type, FabricParam) and fabric.metavar == "FILE|NAME"
    elif path in FABRIC_NAME:
        assert isinstance(fabric.type, click.Choice) and fabric.metavar == "NAME"
    else:
        assert fabric is None, f"{path} has --fabric: list it in FABRIC_FILE or FABRIC_NAME"


@pytest.mark.parametrize("path", sorted(CMDS))
def test_workers_are_processes(path):
    workers = option(CMDS[path], "--workers")
    if workers is not None:
        assert "processes" in workers.help and isinstance(workers.type, click.IntRange), path


@pytest.mark.parametrize("path", sorted(CMDS))
def test_every_hidden_option_is_a_deprecated_alias(path):
    cmd = CMDS[path]
    hidden = {o for p in cmd.params if isinstance(p, click.Option) and p.hidden for o in p.opts}
    assert hidden == {a.old for a in deprecated_aliases(cmd)}


def test_fabric_param_reads_names_and_files(tmp_path):
    p = FabricParam(("vela",))
    assert p.convert("vela", None, None).name == "vela"
    assert p.convert("x.toml", None, None).path == "x.toml"  # missing: the loader names it
    assert p.convert("dir/vela", None, None).path == "dir/vela"
    f = tmp_path / "fabric"
    f.write_text("")
    assert p.convert(str(f), None, None).path == str(f)
    with pytest.raises(click.BadParameter, match="neither a built-in fabric"):
        p.convert("nope", None, None)


def test_size_param_is_the_scenario_files_parser():
    from fabricsim.units import parse_size_bytes

    s = SizeParam()
    for text in ("10MiB", "10MB", "4KiB", "1GB", "1GiB", "256", "0.5MiB", "64 kB"):
        assert s.convert(text, None, None) == parse_size_bytes(text)
    assert s.convert("10MiB", None, None) == 10 * 2**20 and s.convert("10MB", None, None) == 10**7
    assert s.convert("256", None, None) == 256  # a bare number is bytes
    for bad in ("0", "1Mb", "ten", "-1KiB", "0.1B"):
        with pytest.raises(click.BadParameter):
            s.convert(bad, None, None)


# ---- --json: exactly one object -----------------------------------------------------------------------------



@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("vocabulary")
    (d / "two.toml").write_text(TWO_HOSTS)
    (d / "sweep.toml").write_text(SWEEP)
    assert main(["trace", "synth", "dp", "--ranks", "2", "--layers", "1", "--hidden", "64", "--seq-len", "16",
                 "--out", str(d / "step")]) == 0
    import fabricsim
    from fabricsim.spec import load_scenario

    (d / "rec.json").write_text(fabricsim.run(load_scenario(str(d / "two.toml"))).to_json())  # for compare
    return d


LS16 = str(EXAMPLES / "leaf_spine_16.toml")
INCAST = str(EXAMPLES / "leaf_spine_incast.toml")
QUICK_CLUSTER = ["--fabric", "vela", "--jobs", "6", "--sizes", "uniform:2:4", "--iterations", "3", "--size", "1MiB",
                 "--policy", "pack", "-q"]

JSON_CALLS = {
    # command: (a cheap invocation that works, one that is a user error); {d} is the fixture folder.
    "run": ([INCAST], ["{d}/missing.toml"]),
    "incast": (["--duration-s", "1.5", "--senders", "2"], ["--senders", "0"]),
    "sweep": (["{d}/sweep.toml", "--workers", "0", "--store", "{d}/store", "--quiet"], ["{d}/missing.toml"]),
    "collective": (["--fabric", "{d}/two.toml", "--nodes", "1,2", "--size", "4KiB", "--seeds", "1", "--workers", "0"],
                   ["--fabric", "{d}/two.toml", "--nodes", "1,99"]),
    "fors evaluate": (["--m0", "4", "--m1", "3"], ["--m0", "4", "--m1", "3", "--active", "100"]),
    "ina": (["--scheme", "spar", "--fabric", "fat-tree", "--seeds", "1"], ["--scheme", "atro", "--fabric", "leaf-spine"]),
    "design": (["baseline"], ["no-such-design"]),
    "locality pack": ([], ["--trace", "{d}/missing.csv"]),
    "locality simulate": (["--size", "64B"], ["--size", "0"]),
    "trace info": (["{d}/step"], ["{d}/missing"]),
    "trace run": (["{d}/step", "--fabric", LS16, "--fidelity", "flow"], ["{d}/step", "--fabric", "{d}/missing.toml"]),
    "place": (["--nodes", "2", "--no-confirm", "--evals", "5"], ["--nodes", "25", "--per-server", "1"]),
    "cluster": (QUICK_CLUSTER, ["--policy", "best", "-q"]),
    "topology": ([LS16], ["{d}/missing.toml"]),
    "compare": (["{d}/rec.json", "{d}/rec.json", "--fabric", "{d}/two.toml"], ["{d}/two.toml"]),
    "train": (["--model", "gpt3-1.3b", "--fabric", LS16, "--dp", "16", "--seq-len", "256"],
              ["--model", "gpt3-1.3b", "--fabric", LS16, "--dp", "15"]),
    "nccl-tests": (["--fabric", "h100_ib_2x8", "-b", "1M", "-e", "1M"], ["--fabric", "h100_ib_2x8", "-b", "0"]),
}


def test_every_json_command_is_exercised():
    assert {path for path, cmd in CMDS.items() if option(cmd, "--json")} == set(JSON_CALLS)


def _call(capsys, path: str, args: list[str], d: Path) -> tuple[int, str, str]:
    code = main([*path.split(), *[a.replace("{d}", str(d)) for a in args], "--json"])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("path", sorted(JSON_CALLS))
def test_json_is_exactly_one_object(capsys, files, path):
    good, bad = JSON_CALLS[path]
    code, out, err = _call(capsys, path, good, files)
    assert code == 0, err
    assert out.count("\n") == 1 and out.endswith("\n")
    assert isinstance(json.loads(out), dict)
    code, out, err = _call(capsys, path, bad, files)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)


SEEDED = {
    # Commands whose --seeds K turns one run into K: (args, the per-run list's key).
    "run": ([INCAST], "runs"),
    "trace run": (["{d}/step", "--fabric", LS16, "--fidelity", "flow"], "runs"),
    "incast": (["--duration-s", "1.5", "--senders", "2"], "runs"),
    "fors evaluate": (["--m0", "4", "--m1", "3", "--random-failures", "2"], "runs"),
    "locality simulate": (["--size", "64B"], "runs"),
}


def _strip(x):
    """A JSON value without wall-clock timings (they differ between two runs of the same thing)."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in ("wall_s", "solve_time_s", "engine_wall_s", "engine_s")}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


@pytest.mark.parametrize("path", sorted(SEEDED))
def test_seeds_k_runs_seeds_s_to_s_plus_k_minus_1(capsys, files, path):
    args, key = SEEDED[path]
    code, out, err = _call(capsys, path, [*args, "--seed", "3", "--seeds", "2"], files)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["seeds"] == [3, 4] and [r["seed"] for r in doc[key]] == [3, 4]
    # Each run is the one run of its seed alone (the default output: one run, no "runs").
    for i, s in enumerate((3, 4)):
        code, out, _ = _call(capsys, path, [*args, "--seed", str(s)], files)
        one = _strip(json.loads(out))
        assert "runs" not in one
        run = _strip(doc[key][i])
        assert {k: v for k, v in run.items() if k in one} == {k: v for k, v in one.items() if k in run}
        assert len(set(run) & set(one)) >= 3
    stat = next(v for v in doc.values() if isinstance(v, dict) and {"mean", "ci95", "n"} <= set(v))
    assert stat["n"] <= 2


def test_run_seeds_text_is_a_line_per_seed_and_the_mean(capsys):
    assert main(["run", INCAST, "--seeds", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0].strip() for ln in lines[1:4]] == ["seed 1", "seed 2", "seed 3"]
    assert lines[4].startswith("completion over seeds 1..3: ") and "mean ± 95% CI of 3 complete runs" in lines[4]
    assert main(["run", INCAST, "--seeds", "2", "--figure", "x.png"]) == 2


@pytest.mark.parametrize("extra, seeds", [([], ["7", "8"]), (["--seeds", "3"], ["7", "8", "9"])])
def test_sweep_seed_shifts_the_seeds(capsys, tmp_path, files, extra, seeds):
    import csv

    code, out, err = _call(capsys, "sweep", [str(files / "sweep.toml"), "--workers", "0", "--store", str(tmp_path),
                                             "--seed", "7", *extra, "--export", str(tmp_path / "runs.csv")], files)
    assert code == 0, err
    assert json.loads(out)["total"] == len(seeds)  # the file's 2 seeds (or --seeds K) from 7
    with open(tmp_path / "runs.csv") as f:
        assert sorted(r["seed"] for r in csv.DictReader(f)) == seeds


# ---- deprecated aliases: the old flag works as the new one, with one warning line --------------------------

ALIASES = [
    # (command, new arguments, old arguments, the warning line after "fabricsim COMMAND: ")
    ("collective", ["--size", "64KiB"], ["--msg-mib", "0.0625"], "--msg-mib is deprecated; use --size 0.0625MiB"),
    ("collective", ["--size", "64KiB"], ["--msg-mb", "0.0625"], "--msg-mb is deprecated; use --size 0.0625MiB"),
    ("collective", ["--fabric", "{d}/two.toml"], ["--scenario", "{d}/two.toml"],
     "--scenario is deprecated; use --fabric {d}/two.toml"),
    ("collective", ["--fabric", "vela"], ["--topology", "vela"], "--topology is deprecated; use --fabric vela"),
    ("place", ["--size", "1MiB"], ["--msg-mb", "1"], "--msg-mb is deprecated; use --size 1MiB"),
    ("place", ["--fabric", LS16], ["--scenario", LS16], f"--scenario is deprecated; use --fabric {LS16}"),
    ("cluster", ["--size", "512KiB"], ["--msg-mb", "0.5"], "--msg-mb is deprecated; use --size 0.5MiB"),
    ("cluster", ["--fabric", LS16], ["--scenario", LS16], f"--scenario is deprecated; use --fabric {LS16}"),
    ("fors evaluate", ["--size", "64KiB"], ["--msg-kib", "64"], "--msg-kib is deprecated; use --size 64KiB"),
    ("locality simulate", ["--size", "128"], ["--msg-bytes", "128"], "--msg-bytes is deprecated; use --size 128B"),
    ("trace run", ["--fabric", LS16], ["--scenario", LS16], f"--scenario is deprecated; use --fabric {LS16}"),
    ("ina", ["--ina-workers", "89"], ["--workers", "89"],
     "--workers is deprecated here (everywhere else it counts processes); use --ina-workers 89"),
    ("ina", ["--fabric", "fat-tree"], ["--topology", "fat-tree"], "--topology is deprecated; use --fabric fat-tree"),
] + [(f"fors {sub}", ["--failure-case", "1F_SW0"], ["--scenario", "1F_SW0"],
      "--scenario is deprecated; use --failure-case 1F_SW0")
     for sub in ("schedule", "route", "verify", "evaluate", "export-opensm")]

BASE = {
    # The rest of each command's arguments: small and quick, printing one JSON object on stdout.
    "collective": ["--nodes", "1,2", "--seeds", "1", "--workers", "0", "--json"],
    "place": ["--nodes", "2", "--no-confirm", "--evals", "5", "--json"],
    "cluster": ["--jobs", "4", "--sizes", "2", "--iterations", "2", "--policy", "pack", "-q", "--json"],
    "fors evaluate": ["--m0", "4", "--m1", "3", "--json"],
    "fors schedule": ["--m0", "4", "--m1", "3"],
    "fors route": ["--m0", "4", "--m1", "3"],
    "fors verify": ["--m0", "4", "--m1", "3", "--schedule", "{d}/sched.json"],
    "fors export-opensm": ["--m0", "4", "--m1", "3", "--out", "{d}/osm"],
    "locality simulate": ["--json"],
    "trace run": ["{d}/step", "--fidelity", "flow", "--json"],
    "ina": ["--scheme", "spar", "--seeds", "2", "--json"],
}
"""The rest of each command's arguments (small and quick)."""


def test_every_alias_is_tested():
    have = {(path, a.old) for path, cmd in CMDS.items() for a in deprecated_aliases(cmd)}
    # trace synth --prefix (two new options in one) has its own test below.
    assert have == {(c, old[0]) for c, _, old, _ in ALIASES} | {("trace synth", "--prefix")}


def _untimed(text: str) -> str:
    """Text without wall-clock times ("routed 12 phases in 0.03 s")."""
    import re

    return re.sub(r"\d+\.\d+ s\b", "T s", text)


def _run(capsys, path: str, args: list[str], d: Path) -> tuple[int, str, str]:
    code = main([*path.split(), *[a.replace("{d}", str(d)) for a in args]])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture(scope="module")
def fors_files(files):
    assert main(["fors", "schedule", "--m0", "4", "--m1", "3", "--failure-case", "1F_SW0", "--out",
                 str(files / "sched.json")]) == 0  # the old-style file, for `fors verify --schedule`
    return files


@pytest.mark.parametrize("path, new, old, line", ALIASES, ids=[f"{a[0]} {a[2][0]}" for a in ALIASES])
def test_deprecated_alias_works_as_the_new_option_with_one_warning(capsys, fors_files, path, new, old, line):
    d = fors_files
    base = BASE[path]
    code, out_new, err_new = _run(capsys, path, [*new, *base], d)
    assert code == 0, err_new
    code, out_old, err_old = _run(capsys, path, [*old, *base], d)
    assert code == 0, err_old
    warning = f"fabricsim {path}: {line.replace('{d}', str(d))}"
    # Exactly one line more on stderr than the new option prints, and the same result.
    assert _untimed(err_old).splitlines() == [warning, *_untimed(err_new).splitlines()]
    if out_new.startswith("{"):
        assert _strip(json.loads(out_old)) == _strip(json.loads(out_new))
    else:
        assert out_old == out_new
    # Both the old and the new option: a user error, one line, nothing on stdout.
    code, out, err = _run(capsys, path, [*new, *old, *base], d)
    assert code == 2 and out == "" and err.count("\n") == 1 and old[0] in err and "not both" in err, err


def test_two_old_names_of_one_option_are_one_line_exit_2(capsys):
    assert main(["collective", "--nodes", "1,2", "--msg-mb", "1", "--msg-mib", "1"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "--size" in cap.err


def test_trace_synth_prefix_is_out_and_name(capsys, tmp_path):
    args = ["trace", "synth", "tp", "--ranks", "2", "--layers", "1", "--hidden", "64", "--seq-len", "16"]
    assert main([*args, "--out", str(tmp_path / "new"), "--name", "x"]) == 0
    wrote = capsys.readouterr().err
    assert wrote.startswith("wrote 2 ranks, ") and wrote.endswith(f": {tmp_path}/new/x.{{0..1}}.et\n")
    assert main([*args, "--prefix", str(tmp_path / "old" / "x")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"fabricsim trace synth: --prefix is deprecated; use --out {tmp_path}/old --name x",
                   wrote.strip().replace("/new/", "/old/")]
    for r in (0, 1):
        assert (tmp_path / "old" / f"x.{r}.et").read_bytes() == (tmp_path / "new" / f"x.{r}.et").read_bytes()
    assert main([*args, "--prefix", str(tmp_path / "x"), "--out", str(tmp_path)]) == 2
    assert main([*args]) == 2 and "--out DIR" in capsys.readouterr().err


@pytest.mark.parametrize("argv, name, legacy", [
    (["fors", "schedule", "--m0", "4", "--m1", "3"], "schedule.json", "a.json"),
    (["fors", "route", "--m0", "4", "--m1", "3"], "routes.json", "b.json"),
    (["locality", "trace", "--seed", "3"], "trace.csv", "apps.csv"),
])
def test_out_is_a_folder_and_an_old_file_still_works(capsys, tmp_path, argv, name, legacy):
    assert main([*argv, "--out", str(tmp_path / "dir")]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "dir" / name).is_file() and str(tmp_path / "dir" / name) in err
    assert main([*argv, "--out", str(tmp_path / legacy)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"fabricsim {' '.join(argv[:2])}: --out {legacy} (a file) is deprecated; use --out DIR (writes "
                      f"DIR/{name})")
    assert err[-1].startswith("wrote ") and err[-1].endswith(f" to {tmp_path / legacy}")
    assert sum("deprecated" in line for line in err) == 1
    assert (tmp_path / legacy).read_text() == (tmp_path / "dir" / name).read_text()
    (tmp_path / "file").write_text("")
    assert main([*argv, "--out", str(tmp_path / "file")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_a_trace_folder_stands_for_its_one_trace(capsys, files):
    # `trace synth --out DIR` writes DIR/trace.{rank}.et; DIR then names that trace wherever a PREFIX is taken.
    assert main(["trace", "info", str(files / "step"), "--json"]) == 0
    by_folder = capsys.readouterr().out
    assert main(["trace", "info", str(files / "step" / "trace"), "--json"]) == 0
    assert capsys.readouterr().out == by_folder
    two = files / "two_traces"
    for name in ("a", "b"):
        assert main(["trace", "synth", "dp", "--ranks", "2", "--layers", "1", "--hidden", "64", "--seq-len", "16",
                     "--out", str(two), "--name", name]) == 0
    capsys.readouterr()
    assert main(["trace", "info", str(two), "--json"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and "several traces (a, b)" in cap.err
