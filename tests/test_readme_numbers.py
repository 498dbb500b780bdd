"""The docs' generated regions agree with a fresh run of their generators (benchmarks/readme_numbers.py).

Each region lives in the page its generator names (README.md or a page under docs/), and nowhere else; a study's
page is also experiments/STUDY/README.md (tests/test_reference_docs.py keeps the copy identical). Only deterministic
regions are checked against a fresh run (simulation results: the same code and seeds give the same text); timing
regions are rewritten by `python benchmarks/readme_numbers.py --write` and must name their date and machine.
Outside the regions the README and the docs quote no timing: every duration left there is a setting, an input or a
published number, listed in ALLOWED (the generated reference pages and the pages in HAND_MEASURED excepted)."""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import readme_numbers as rn  # noqa: E402

DET = sorted(n for n, g in rn.GENERATORS.items() if g.deterministic)
TIMING = sorted(n for n, g in rn.GENERATORS.items() if not g.deterministic)
DURATION = re.compile(r"\d[\d.,]*(?:[–-]\d[\d.,]*)? ?(?:ms|s|min|minutes|hours?)\b|\bevents/s\b|\btakes about\b")
ROOT = Path(__file__).resolve().parents[1]
CHECKED = sorted([ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "reference" not in p.parts)])
"""The pages whose prose may quote no measured timing."""
HAND_MEASURED: set[Path] = set()
"""Pages that still quote timings measured by hand, in tables written before the regions (to be generated)."""
ALLOWED = [
    "RTO with a 1 s minimum",                  # ns-3's default, a setting
    "ns-3's 1 s by default",                   # the same default, a setting
    "completes in 1.38 ms instead of 0.76 ms",  # simulated times of a deterministic run, not wall times
    "takes 2.625 ms instead of 0.759 ms (flow fidelity: 2.625 ms and 0.755 ms)",  # simulated times, a degraded link
    "in the 168.95 ms step",                   # a simulated step time, not a wall time
    "about\n  every 50 ms of wall time",       # the engine's poll interval, a setting
    "takes more than 2 s shows a progress",    # when the progress bar appears, a setting
    '"5ms"', "(2ms)", "(5ms)", "(1s)", "(200ms)",  # units and defaults of the scenario reference
    "runs 60 s scenarios", "the same 60 s scenarios", "stop 1 s before the end", "staggered by 0.5 s",  # inputs
    "Venus's 8.89 ms",                         # the paper's number
    "infeasible in 120 s",                     # a solver time limit given to CP-SAT
    "| `watchdog` | duration | 1 ms |",         # a RoCE default (docs/roce.md), a setting
]


def _outside_regions(text: str) -> str:
    """`text` without its generated regions and fenced code blocks."""
    text = re.sub(r"<!-- generated: ([\w-]+) -->\n.*?\n<!-- end: \1 -->", "", text, flags=re.S)
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def test_every_generator_has_its_region_in_its_page_and_nowhere_else():
    for page in rn.pages():
        assert sorted(rn.regions(page.read_text())) == sorted(n for n, g in rn.GENERATORS.items() if g.path == page), page
    stray = [f"{p.relative_to(ROOT)}: {n}" for p in CHECKED if p not in rn.pages() for n in rn.regions(p.read_text())]
    assert not stray, "regions outside the page their generator names (Generator.page)"
    assert sorted(rn.current()) == sorted(rn.GENERATORS)


NEEDS_SHARED = {"astra"}
"""Regions generated from ASTRA-sim's traces in the project's shared/ folder."""


@pytest.mark.parametrize("name", [pytest.param(n, marks=([pytest.mark.slow] if rn.GENERATORS[n].seconds > 5 else [])
                                               + ([pytest.mark.shared] if n in NEEDS_SHARED else []))
                                  for n in DET])
def test_region_matches_a_fresh_run(name):
    have = rn.regions(rn.GENERATORS[name].path.read_text())[name]
    assert have == rn.GENERATORS[name].fn(), (
        f"{rn.GENERATORS[name].page}: region '{name}' is stale: run "
        f"`python benchmarks/readme_numbers.py --only {name} --write`")


@pytest.mark.parametrize("name", TIMING)
def test_timing_regions_name_their_date_and_machine(name):
    body = rn.regions(rn.GENERATORS[name].path.read_text())[name]
    last = body.splitlines()[-1]
    assert re.fullmatch(r"<sub>Measured \d{4}-\d\d-\d\d on \d+ cores \(.+\), Python [\d.]+; 1-minute load average "
                        r"[\d.]+ just after, the measurement's own processes included\.</sub>", last), last


def test_no_timing_is_typed_outside_the_regions():
    texts = {p: _outside_regions(p.read_text()) for p in CHECKED if p not in HAND_MEASURED}
    for allowed in ALLOWED:
        assert any(allowed in t for t in texts.values()), f"ALLOWED lists '{allowed}', which no page has: drop it"
    typed = []
    for page, text in texts.items():
        for allowed in ALLOWED:
            text = text.replace(allowed, "")
        typed += [f"{page.relative_to(ROOT)}: " + text[max(0, m.start() - 40):m.end() + 10].replace("\n", " ")
                  for m in DURATION.finditer(text)]
    assert typed == [], "durations typed outside a generated region (generate them, or list a setting in ALLOWED)"


def test_write_rewrites_a_study_page_and_its_copy(tmp_path, monkeypatch):
    page, copy = tmp_path / "docs" / "studies" / "s.md", tmp_path / "experiments" / "s" / "README.md"
    for f in (page, copy):
        f.parent.mkdir(parents=True)
    page.write_text("a\n<!-- generated: x -->\nold\n<!-- end: x -->\n")
    monkeypatch.setattr(rn, "ROOT", tmp_path)
    monkeypatch.setattr(rn, "GENERATORS", {"x": rn.Generator(lambda: "new", True, 0, "docs/studies/s.md")})
    monkeypatch.setattr(rn, "copies", lambda p: [copy] if p == page else [])
    assert rn.current() == {"x": "old"}
    assert rn.write({"x": "new"}) == [page, copy]
    assert page.read_text() == copy.read_text() == "a\n<!-- generated: x -->\nnew\n<!-- end: x -->\n"


def test_a_study_page_is_copied_to_its_experiments_folder():
    page = ROOT / "docs" / "studies" / "incast.md"
    assert rn.copies(page) == [ROOT / "experiments" / "incast" / "README.md"]
    assert rn.copies(ROOT / "docs" / "performance.md") == []


def test_rewrite_replaces_only_the_named_region():
    text = "a\n<!-- generated: x -->\nold\n<!-- end: x -->\nb\n<!-- generated: y -->\nkeep\n<!-- end: y -->\n"
    assert rn.rewrite(text, {"x": "new"}) == text.replace("old", "new")
    assert rn.regions(text) == {"x": "old", "y": "keep"}


def test_stamp_names_today_the_machine_and_the_load():
    import datetime

    line = rn.stamp()
    assert datetime.date.today().isoformat() in line and rn.machine() in line and "load average" in line


def test_process_gives_a_child_its_own_peak_memory_and_one_line_on_failure():
    ballast = bytearray(300 << 20)  # Linux carries a parent's peak RSS into a direct child: the launcher avoids it
    ballast[::4096] = b"x" * len(ballast[::4096])
    wall, small, out = rn.process([sys.executable, "-c", "print('ok')"])
    assert out == "ok\n" and wall > 0 and small < 100  # MiB
    assert rn.process([sys.executable, "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096])"])[1] >= 200
    with pytest.raises(RuntimeError, match=r"exited 3: boom$"):
        rn.process([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])


def test_an_unknown_region_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        rn.main(["--only", "nope"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and err.startswith("readme_numbers.py: --only: unknown region nope")
