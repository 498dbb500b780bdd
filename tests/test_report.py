"""Figures draw from frames without simulating; reproduce + report write comparisons and an HTML report."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from fabricsim.report import figures
from fabricsim.report.html import render
from fabricsim.report.reproduce import Comparison, StudyContext, StudyReport

ROOT = Path(__file__).parents[1]


def summary():
    return pd.DataFrame({"x": [1, 2, 3, 1, 2, 3], "g": ["a"] * 3 + ["b"] * 3, "m_mean": [1.0, 2, 3, 2, 3, 4],
                         "m_ci95": [0.1] * 6})


def test_grouped_bars_draw_one_bar_per_point_with_whiskers_and_paper_markers():
    fig = figures.grouped_bars(summary(), "x", "m", "g", paper={(1, "a"): 1.5})
    ax = fig.axes[0]
    assert len(ax.patches) == 6
    assert len(ax.collections) >= 1  # the paper marker


def test_other_figure_kinds(tmp_path):
    frame = pd.DataFrame({"x": ["p", "p", "q", "q"], "v": [1.0, 2.0, 3.0, 5.0]})
    for kind in ("box", "violin"):
        figures.save(figures.distribution(frame, "x", "v", kind=kind), tmp_path / f"{kind}.png")
    pivot = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], index=[256, 512], columns=[1024, 2048])
    figures.save(figures.heatmap(pivot, cbar="%"), tmp_path / "heat.png")
    figures.save(figures.timeseries([0, 1, 2], {"q": [0, 5, 1]}), tmp_path / "ts.png")
    fig = figures.lines(summary(), "x", "m", "g")
    assert len(fig.axes[0].lines) == 2
    figures.save(fig, tmp_path / "lines.png")
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("box.png", "violin.png", "heat.png", "ts.png", "lines.png"))


def test_comparison_tolerances():
    assert Comparison("a", "q", 100.0, 101.5, rel_tol=0.02).passed
    assert not Comparison("a", "q", 100.0, 103.0, rel_tol=0.02).passed
    assert Comparison("a", "q", 0.4, 0.405, abs_tol=0.01).passed
    assert Comparison("a", "q", 6.0, 6.0).passed and not Comparison("a", "q", 6.0, 7.0).passed
    assert not Comparison("a", "q", 6.0, None, rel_tol=1).passed


def test_inputs_and_calibrated_values_are_shown_but_not_scored(tmp_path):
    """Two results (one pass, one miss) score 1 of 2; an input and a calibrated row are kept apart, survive the
    JSON round trip with their role, and appear in the HTML labelled as such, outside the count."""
    ctx = StudyContext(tmp_path / "study", quick=True, out=tmp_path / "out" / "study")
    ctx.compare("r-pass", "a computed number", 10.0, 10.0)
    ctx.compare("r-miss", "another computed number", 10.0, 12.0, rel=0.1)
    ctx.compare("in", "a preset taken from the paper", 48.0, 48.0, role="input")
    ctx.compare("fit", "a fitted value", 141.0, 141.02, rel=0.01, role="calibrated")
    ctx.compare("in-off", "a preset that differs from the paper", 96.0, 64.0, role="input")
    rep = ctx.report
    assert [c.id for c in rep.comparisons] == ["r-pass", "r-miss"]
    assert [c.id for c in rep.unscored] == ["in", "fit", "in-off"]
    d = json.loads(json.dumps(rep.to_json()))
    assert [c["passed"] for c in d["comparisons"]] == [True, False]
    assert [(c["role"], c["matches"]) for c in d["unscored"]] == [("input", True), ("calibrated", True), ("input", False)]
    assert all("passed" not in c for c in d["unscored"])
    back = StudyReport.from_json(d)
    assert [c.role for c in back.unscored] == ["input", "calibrated", "input"] and len(back.comparisons) == 2
    page = render([back], "test")
    assert "<b>1 of 2</b>" in page
    assert "inputs (values we set from the paper): 2; calibrated values (fitted to the paper's): 1." in page
    assert page.count("class='unscored'>input<") == 1 and page.count("class='unscored'>calibrated<") == 1
    assert "class='unscored'>input (≠ paper)<" in page
    with pytest.raises(ValueError, match="role"):
        ctx.compare("x", "q", 1.0, 1.0, role="fit")


def test_reproduce_and_report_through_the_cli(tmp_path, capsys, monkeypatch):
    """A study from --experiments runs into ./fabricsim-outputs/<study>/ (never into the study's folder); `report`
    reads the same folder and writes fabricsim-outputs/report.html, saying where."""
    from fabricsim.cli import main

    exp = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments" / "engine_checks", exp / "engine_checks",
                    ignore=shutil.ignore_patterns("outputs", "__pycache__"))
    before = sorted(p.name for p in (exp / "engine_checks").iterdir())
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["reproduce", "engine_checks", "--quick", "--experiments", str(exp), "--workers", "2", "--quiet"]) == 0
    *_, wrote, totals = capsys.readouterr().out.rstrip().splitlines()
    assert wrote == "wrote fabricsim-outputs/engine_checks/: report.json and 1 figure"
    assert sorted(p.name for p in (exp / "engine_checks").iterdir() if p.name != "__pycache__") == before
    rep = json.loads((work / "fabricsim-outputs" / "engine_checks" / "report.json").read_text())
    assert totals == f"engine_checks: {len(rep['comparisons'])} pass, 0 miss, 0 calibrated"
    assert rep["comparisons"] and all(c["passed"] for c in rep["comparisons"]), \
        [c for c in rep["comparisons"] if not c["passed"]]
    assert all(Path(f["path"]).parent == work / "fabricsim-outputs" / "engine_checks" for f in rep["figures"])
    assert main(["report"]) == 0
    out = capsys.readouterr().out.strip()
    n = len(rep["comparisons"])
    assert out == f"wrote fabricsim-outputs/report.html (1 study, {n}/{n} numbers within tolerance)"
    html = (work / "fabricsim-outputs" / "report.html").read_text()
    assert "Engine checks" in html and "data:image/png;base64," in html and "class='pass'" in html
    # --out names the outputs folder for both commands; --html puts the page elsewhere.
    assert main(["report", "--out", "fabricsim-outputs", "--html", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").read_text().count("Engine checks") >= 1
    assert main(["reproduce", "nope", "--experiments", str(exp)]) == 2


def test_studies_ship_with_the_package_and_report_without_outputs_is_one_line(tmp_path, capsys, monkeypatch):
    from fabricsim.cli import main
    from fabricsim.report.reproduce import discover, experiments_dir

    studies = discover(experiments_dir())
    assert {"engine_checks", "incast", "ina", "orchestration", "fors", "cpo"} <= set(studies)
    assert all(d.resolve() == (ROOT / "experiments" / name).resolve() for name, d in studies.items())
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fabricsim: unknown study 'nope' (known: cpo, engine_checks, ")
    assert main(["report"]) == 2
    assert capsys.readouterr().err.strip() == ("fabricsim: no study outputs in fabricsim-outputs; "
                                               "run 'fabricsim reproduce all --quick' first")
    (tmp_path / "o" / "x").mkdir(parents=True)
    (tmp_path / "o" / "x" / "report.json").write_text('{"study": "x"}')
    assert main(["report", "--out", "o"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "report.json: not a study report of this fabricsim version" in err[0]
    assert not (tmp_path / "fabricsim-outputs").exists()
