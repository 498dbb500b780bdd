"""Figures draw from frames without simulating; reproduce + report write comparisons and an HTML report."""

import json
import shutil
from pathlib import Path

import pandas as pd

from fabricsim.report import figures
from fabricsim.report.reproduce import Comparison

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


def test_reproduce_and_report_through_the_cli(tmp_path, capsys):
    from fabricsim.cli import main

    exp = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments" / "engine_checks", exp / "engine_checks",
                    ignore=shutil.ignore_patterns("outputs"))
    assert main(["reproduce", "engine_checks", "--quick", "--experiments", str(exp), "--workers", "2", "--quiet"]) == 0
    rep = json.loads((exp / "engine_checks" / "outputs" / "report.json").read_text())
    assert rep["comparisons"] and all(c["passed"] for c in rep["comparisons"]), \
        [c for c in rep["comparisons"] if not c["passed"]]
    out = tmp_path / "report.html"
    assert main(["report", "--experiments", str(exp), "--out", str(out)]) == 0
    html = out.read_text()
    assert "Engine checks" in html and "data:image/png;base64," in html and "class='pass'" in html
    assert main(["reproduce", "nope", "--experiments", str(exp)]) == 2
