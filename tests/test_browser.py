"""The HTML pages in a real browser (issue 33, deliverable 7): headless Chromium renders the reproduction report
(from a small outputs folder of synthetic studies, no reproduction) and the `compare` page; neither raises a
script error or writes to the console, and the headline count in the rendered DOM is the one in the data (the
studies' report.json; the compared run records). `make test` installs Chromium where it can (the Makefile's
`browser` step); without it these tests skip, saying so."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabricsim.cli import main

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome", "chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium or Chrome binary on PATH (make browser, or "
                                                        "apt-get install chromium)")
ROOT = Path(__file__).resolve().parents[1]
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)")
"""A console message (console.log/error, an uncaught exception) in Chromium's --enable-logging=stderr output."""


def render(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """(the DOM after load, the console lines the page wrote), from headless Chromium with a fresh profile."""
    out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                          "--virtual-time-budget=5000", "--dump-dom", page.resolve().as_uri()],
                         check=False, capture_output=True, text=True, timeout=120)
    console = [m.group(1) for m in map(CONSOLE.search, out.stderr.splitlines()) if m and page.name in m.group(1)]
    assert "</html>" in out.stdout, out.stderr[-2000:]
    return out.stdout, console


def no_errors(dom: str, console: list[str]) -> None:
    """The page's error sentinel (report.html.ERROR_SENTINEL) is empty and still hidden, and nothing was logged."""
    m = re.search(r"<pre id=\"js-errors\"( hidden=\"\")?>(.*?)</pre>", dom, re.DOTALL)
    assert m, "the error sentinel is missing from the page"
    assert m.group(1) and m.group(2) == "", f"script errors: {html.unescape(m.group(2))}"
    assert console == [], console


def test_the_sentinel_and_the_console_see_an_error(tmp_path):
    """The same checks on a page that throws: both must catch it (or the other tests prove nothing)."""
    from fabricsim.report.html import ERROR_SENTINEL

    page = tmp_path / "broken.html"
    page.write_text(f"<!doctype html><html><body>{ERROR_SENTINEL}<script>no_such_function();</script></body></html>")
    dom, console = render(page, tmp_path)
    assert "no_such_function is not defined" in dom
    assert any("no_such_function is not defined" in c for c in console), console
    with pytest.raises(AssertionError):
        no_errors(dom, console)


def test_the_report_renders_and_its_headline_is_report_json(tmp_path):
    from fabricsim.report import figures
    from fabricsim.report.reproduce import Comparison, StudyReport

    out = tmp_path / "outputs"
    fig = figures.heatmap(__import__("pandas").DataFrame([[1.0, 2.0], [3.0, 4.0]]), title="a figure")
    studies = {
        "orchestration": StudyReport("orchestration", "Study 000: packing", True, summary="two results",
                                     comparisons=[Comparison("a", "a", 1.0, 1.05, rel_tol=0.1),
                                                  Comparison("b", "b", 1.0, 2.0, rel_tol=0.1)]),
        "incast": StudyReport("incast", "Study 001: incast", True, summary="three results",
                              comparisons=[Comparison(c, c, 10.0, 10.0, abs_tol=0.5) for c in "xyz"],
                              unscored=[Comparison("i", "i", 1.0, 1.0, role="input")]),
    }
    for name, rep in studies.items():
        (out / name).mkdir(parents=True)
        rep.figures.append({"path": figures.save(fig, out / name / "f.png") if name == "incast" else
                            str(out / "incast" / "f.png"), "caption": "a figure"})
        (out / name / "report.json").write_text(json.dumps(rep.to_json()))
    assert main(["report", "--out", str(out)]) == 0
    # the headline from report.json alone: scored rows within tolerance, of all scored rows (here 1 + 3 of 2 + 3)
    loaded = [StudyReport.from_json(json.loads(p.read_text())) for p in sorted(out.glob("*/report.json"))]
    passed = sum(c.passed for r in loaded for c in r.comparisons)
    total = sum(len(r.comparisons) for r in loaded)
    assert (passed, total) == (4, 5)
    dom, console = render(out / "report.html", tmp_path)
    no_errors(dom, console)
    m = re.search(r"<p class=\"score\" id=\"headline\"><b>(\d+) of (\d+)</b>", dom)
    assert m and (int(m.group(1)), int(m.group(2))) == (passed, total), dom[:3000]
    assert dom.count("<img ") == 2, "both studies' figure is embedded"


def test_the_compare_page_renders_and_counts_the_runs(tmp_path, capsys):
    runs = {"a": ["--seeds", "2"], "b": []}
    for name, extra in runs.items():
        p = tmp_path / f"{name}.json"
        p.write_text(subprocess.run([sys.executable, "-m", "fabricsim.cli", "run",
                                     str(ROOT / "examples" / "leaf_spine_incast.toml"), *extra, "--json", "-q"],
                                    capture_output=True, text=True, check=True).stdout)
    page = tmp_path / "compare.html"
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--html", str(page)]) == 0
    capsys.readouterr()
    dom, console = render(page, tmp_path)
    no_errors(dom, console)
    n_runs = sum(len(json.loads((tmp_path / f"{n}.json").read_text()).get("runs", [None])) for n in runs)
    assert n_runs == 3
    assert f'<b id="n-runs">{n_runs}</b>' in dom
    assert f'<span id="n-runs-rendered">{n_runs}</span>' in dom, "the page's script ran and counted the runs"
    # a header row and the 15 quantities of compare.rows (runs, completion, messages, 3 FCT, 3 slowdown, pauses,
    # paused time, ECN marks, CNPs, peak queue, drops)
    assert dom.count("<tr>") == 1 + 15 and "<img " in dom
