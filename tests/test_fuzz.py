"""A seeded mutation fuzzer over every shipped scenario and fabric file (issue 33, deliverable 9): each mutated
scenario goes through `fabricsim validate`, bounded `fabricsim run`s and `fabricsim topology`, each fabric file
through `fabricsim collective` and `fabricsim nccl-tests` (in-process, `fabricsim.cli.main`, in a worker process
with an address-space limit so that a crash cannot take pytest down). Every case must end in exit 0 (or 3 for a
run that stopped or did not complete) or exit 2 with exactly one line on stderr naming the file (or, for a
command's option, the option); never a traceback, an "internal error", a Rust panic or an abort (134). The
mutations are in fuzz_cases.py.

The CI subset draws a few mutations per file, the size hazards (`fuzz_cases.HAZARDS`, `fuzz_cases.SLOW_RATE`:
mutations whose cost the memory guard decides, `fabricsim_core::budget`) among them; the slow tests draw many
more, the size hazards in their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fabricsim
from fuzz_cases import FABRICS, ROOT, SCENARIOS, commands, mutations

FAST_PER_FILE = 20
"""Mutations per shipped file in CI (11 scenarios × 20 × 4 commands and 6 fabric files × 20 × 2, the size
size hazards among them)."""

SLOW_PER_FILE = 300
"""Mutations per shipped file in the slow test."""

BOUNDS = ("--json", "--max-events", "20000", "--max-wall", "1")
"""The bounds of a run's command line, left out of a case's id."""

FORBIDDEN = ("Traceback", "internal error", "panicked", "RUST_BACKTRACE", "memory allocation of", ": JSON: ")
"""Never on stderr; ": JSON: " is the engine's reader failing on the document Python handed it (a NaN or an
infinity it cannot carry), which names no key."""


def cases(folder: Path, per_file: int, hazards: bool | None) -> list[dict]:
    """The mutated files, written to `folder`, and their command lines: one case per (mutation, command).
    `hazards`: False leaves the size hazards out, True takes them only, None takes every mutation."""
    out = []
    for src in SCENARIOS + FABRICS:
        text = src.read_text(encoding="utf-8")
        muts = [m for m in mutations(text, src.name, per_file) if hazards is None or m.hazard == hazards]
        for i, m in enumerate(muts):
            path = folder / f"{src.stem}.{i}{src.suffix}"
            path.write_bytes(m.data)
            for argv in commands(str(path), fabric=src in FABRICS):
                shown = " ".join(a for a in argv if a != str(path) and a not in BOUNDS)
                out.append({"id": f"{src.relative_to(ROOT)} #{i} [{m.kind}] {shown}", "argv": argv,
                            "path": str(path)})
    return out


def run_cases(folder: Path, todo: list[dict], timeout_s: float) -> dict[str, tuple[object, str]]:
    """Run `todo` in worker processes (a fresh worker after one dies, going on from the next case): the exit code
    (or "crash ...") and the stderr of every case, by id."""
    env = {**os.environ, "PYTHONPATH": str(Path(fabricsim.__file__).resolve().parents[1]), "RUST_BACKTRACE": "0"}
    worker = Path(__file__).with_name("fuzz_cases.py")
    done: dict[str, tuple[object, str]] = {}
    while todo:
        spec = folder / "cases.json"
        spec.write_text(json.dumps(todo))
        try:
            p = subprocess.run([sys.executable, str(worker), str(spec)], capture_output=True, text=True, env=env,
                               timeout=timeout_s)
            out, err, code = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, err, code = (e.stdout or b"").decode(), (e.stderr or b"").decode(), "timeout"
        started = None
        for line in out.splitlines():
            rec = json.loads(line)
            if "start" in rec:
                started = rec["start"]
            else:
                done[rec["id"]] = (rec["rc"], rec["stderr"])
                started = None
        if started is not None:
            done[started] = (f"crash: worker exit {code}", err[-2000:])
        elif len(done) < len(todo) and code != 0:
            pytest.fail(f"the fuzz worker failed before its first case (exit {code}): {err[-2000:]}")
        todo = [c for c in todo if c["id"] not in done]
    return done


def problem(case: dict, rc: object, stderr: str) -> str | None:
    """What is wrong with a case's outcome, or None."""
    if any(w in stderr for w in FORBIDDEN):
        return f"exit {rc}, stderr: {stderr.strip()[:300]}"
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith("fabricsim: warning:")]
    if rc == 2:
        if len(lines) != 1:
            return f"exit 2 with {len(lines)} lines: {stderr.strip()[:300]}"
        if Path(case["path"]).name not in lines[0] and not (case["argv"][0] != "validate" and " --" in lines[0]):
            return f"exit 2 naming neither the file nor an option: {lines[0][:300]}"
        return None
    allowed = (0,) if case["argv"][0] in ("validate", "topology", "nccl-tests") else (0, 3)
    return None if rc in allowed else f"exit {rc}: {stderr.strip()[:300]}"


def check(results: dict[str, tuple[object, str]], todo: list[dict]) -> list[str]:
    return [f"{c['id']}: {why}" for c in todo if (why := problem(c, *results[c["id"]])) is not None]


def test_mutations_are_seeded_and_varied():
    """The same file draws the same mutations on every run, and a draw covers the kinds the issue lists."""
    text = (ROOT / "examples" / "roce_incast.toml").read_text()
    a, b = mutations(text, "roce_incast.toml", 200), mutations(text, "roce_incast.toml", 200)
    assert [m.data for m in a] == [m.data for m in b]
    kinds = {m.kind.split(" ")[0] for m in a}
    assert {"swap", "delete", "unknown", "duplicate", "truncate", "binary", "utf-16", "empty", "uec"} <= kinds
    # issue 34: the UEC transport switched on, with [uec] keys in and out of range
    assert any("[uec] " in m.kind for m in a)
    assert any(m.kind.endswith("= nan") for m in a) and any(m.kind.endswith("= 18446744073709551616") for m in a)
    assert len(SCENARIOS) >= 10


def test_fuzz_ci_subset(tmp_path):
    """A few mutations of every shipped scenario, size hazards included: every one a clean run or one line."""
    todo = cases(tmp_path, FAST_PER_FILE, hazards=None)
    results = run_cases(tmp_path, todo, timeout_s=300)
    bad = check(results, todo)
    assert not bad, f"{len(bad)} of {len(todo)} cases:\n" + "\n".join(bad)


@pytest.mark.slow  # 15 times the CI subset's mutations: one to two minutes
def test_fuzz_everything_but_the_size_hazards(tmp_path):
    todo = cases(tmp_path, SLOW_PER_FILE, hazards=False)
    results = run_cases(tmp_path, todo, timeout_s=1800)
    bad = check(results, todo)
    assert not bad, f"{len(bad)} of {len(todo)} cases:\n" + "\n".join(bad)


@pytest.mark.slow  # every size hazard of SLOW_PER_FILE mutations a file: the memory guard refuses them in one line
def test_fuzz_size_hazards(tmp_path):
    todo = cases(tmp_path, SLOW_PER_FILE, hazards=True)
    results = run_cases(tmp_path, todo, timeout_s=1800)
    bad = check(results, todo)
    assert not bad, f"{len(bad)} of {len(todo)} cases:\n" + "\n".join(bad)
