"""How `fabricsim reproduce` and the HTML report show comparisons: totals, reference kinds, tolerances, counts, and
the figures' whiskers and legends (hand-made reports and studies, so nothing is simulated)."""

import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fabricsim.cli import main
from fabricsim.cli.reproduce import _print_comparisons
from fabricsim.report import figures
from fabricsim.report.html import render
from fabricsim.report.numbers import difference, number, signed, tolerance
from fabricsim.report.reproduce import (Comparison, StudyContext, StudyReport, load_reports, load_study,
                                        total_counts, totals_line, totals_lines)

ROOT = Path(__file__).parents[1]


def engine_like() -> StudyReport:
    """6 passes, 1 miss among 7 results; 1 calibrated value and 2 inputs (one of them off the paper's)."""
    rows = [Comparison(f"ok-{i}", f"quantity {i}", 10.0, 10.0) for i in range(6)]
    rows.append(Comparison("off", "a miss", 10.0, 13.0, rel_tol=0.1))
    unscored = [Comparison("fit", "overhead fitted to 141 Gb/s", 141.0, 141.0, "Gb/s", rel_tol=0.01, role="calibrated"),
                Comparison("in", "servers per group", 48.0, 48.0, role="input"),
                Comparison("in-off", "groups", 96.0, 64.0, role="input")]
    return StudyReport("engine_checks", "Engine checks", True, comparisons=rows, unscored=unscored, wall_s=1.5)


def only_results() -> StudyReport:
    return StudyReport("incast", "Incast", True, comparisons=[
        Comparison("S2-ns3-tx", "S2 TX packets vs ns-3 3.44", 849600.0, 849600.0, "packets", reference="ns-3"),
        Comparison("S2-loss", "S2 packet loss", 42.5, 44.0, "%", abs_tol=2.0),
        Comparison("S2-thr", "S2 throughput", 6.534, 6.6, "Mb/s", rel_tol=0.03)])


# 1. totals ---------------------------------------------------------------------------------------------------------
def test_totals_lines_per_study_and_overall():
    a, b = engine_like(), only_results()
    assert a.counts() == {"results": 7, "pass": 6, "miss": 1, "calibrated": 1, "input": 2}
    assert totals_line("engine_checks", a.counts()) == "engine_checks: 6 pass, 1 miss, 1 calibrated, 2 inputs"
    assert totals_line("incast", b.counts()) == "incast: 3 pass, 0 miss, 0 calibrated"
    assert totals_lines([b]) == ["incast: 3 pass, 0 miss, 0 calibrated"]  # one study: no overall line
    assert totals_lines([a, b]) == ["engine_checks: 6 pass, 1 miss, 1 calibrated, 2 inputs",
                              "incast: 3 pass, 0 miss, 0 calibrated",
                              "all 2 studies: 9 pass, 1 miss, 1 calibrated, 2 inputs"]
    assert total_counts([a, b])["results"] == 10


def test_calibrated_rows_say_calibrated_in_the_console_not_pass(capsys):
    _print_comparisons(engine_like())
    rows = {line.split("│")[1].strip(): line for line in capsys.readouterr().out.splitlines() if line.count("│") > 2}
    result = {k: v.split("│")[-3].strip() for k, v in rows.items()}  # the setting column is last
    assert result["fit"] == "calibrated" and result["in"] == "input" and result["in-off"] == "input (≠ paper)"
    assert result["ok-0"] == "pass" and result["off"] == "miss"


def test_reproduce_ends_with_the_totals(tmp_path, capsys):
    """Two made-up studies through the CLI: each study's table, then one totals line per study and one for all."""
    exp = tmp_path / "experiments"
    for name, rows in {
        "alpha": ['ctx.compare("a1", "x", 1.0, 1.0)', 'ctx.compare("a2", "y", 2.0, 2.5, rel=0.1)',
                  'ctx.compare("fit", "fitted", 141.0, 141.0, rel=0.01, role="calibrated")'],
        "beta": ['ctx.compare("b1", "closed form", 84.2, 84.2, "us", abs=1e-6, reference="closed form")'],
    }.items():
        (exp / name).mkdir(parents=True)
        body = "".join(f"    {r}\n" for r in ['ctx.setting("made up, 1 run")', *rows])
        (exp / name / "run.py").write_text(f'"""A made-up study."""\nTITLE = "{name.title()}"\n\n\n'
                                           f"def reproduce(ctx):\n{body}")
    assert main(["reproduce", "all", "--quick", "--experiments", str(exp), "--out", str(tmp_path / "out"),
                 "--quiet"]) == 0
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-3:] == ["alpha: 1 pass, 1 miss, 1 calibrated", "beta: 1 pass, 0 miss, 0 calibrated",
                        "all 2 studies: 2 pass, 1 miss, 1 calibrated"]
    assert main(["reproduce", "beta", "--experiments", str(exp), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == "beta: 1 pass, 0 miss, 0 calibrated"
    # the HTML report shows the same lines
    assert main(["report", "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "report.html").read_text()
    assert ("<pre class='totals'>alpha: 1 pass, 1 miss, 1 calibrated\nbeta: 1 pass, 0 miss, 0 calibrated\n"
            "all 2 studies: 2 pass, 1 miss, 1 calibrated</pre>") in page
    assert "class='unscored'>calibrated<" in page


def test_html_shows_the_totals_and_the_calibrated_label():
    page = render([engine_like(), only_results()], "test")
    assert "engine_checks: 6 pass, 1 miss, 1 calibrated, 2 inputs\nincast: 3 pass, 0 miss, 0 calibrated\n" \
           "all 2 studies: 9 pass, 1 miss, 1 calibrated, 2 inputs</pre>" in page
    section = page[page.index("<section id='study-engine_checks'>"):]
    assert "engine_checks: 6 pass, 1 miss, 1 calibrated, 2 inputs</span>" in section
    assert "<td class='unscored'>calibrated</td>" in section and "<td class='pass'>calibrated" not in section


# 2. reference kinds --------------------------------------------------------------------------------------------------
def test_reference_kind_defaults_to_paper_and_is_checked(tmp_path):
    assert Comparison("a", "q", 1.0, 1.0).reference == "paper"
    ctx = StudyContext(tmp_path / "s", quick=True, out=tmp_path / "out" / "s")
    assert ctx.compare("n", "vs ns-3", 3.0, 3.0, reference="ns-3").reference == "ns-3"
    with pytest.raises(ValueError, match="reference: must be one of paper, ns-3"):
        ctx.compare("x", "q", 1.0, 1.0, reference="Table IV")


def test_reference_column_names_the_kind(capsys):
    _print_comparisons(only_results())
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "┃" in line)
    assert re.search(r"┃\s+reference\s+┃", header) and "paper" not in header
    assert "849,600 (ns-3)" in out and "6.534 (paper)" in out
    page = render([only_results()], "test")
    assert "<th>reference</th>" in page and "<th>paper</th>" not in page
    assert "<td class='nw'>849,600<div class='kind'>ns-3</div></td>" in page


def test_old_report_json_without_the_new_fields_still_loads(tmp_path):
    old = {"study": "old", "title": "Old", "quick": True, "summary": "", "figures": [], "tables": [], "notes": [],
           "wall_s": 1.0,
           "comparisons": [{"id": "a", "quantity": "q", "paper": 1.0, "ours": 1.0, "unit": "", "rel_tol": None,
                            "abs_tol": None, "source": "", "note": "", "diff": 0.0, "passed": True,
                            "tolerance": "exact"}]}
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.json").write_text(json.dumps(old))
    (rep,) = load_reports(tmp_path)
    assert rep.comparisons[0].reference == "paper" and rep.comparisons[0].role == "result" and rep.unscored == []
    # and a new one round-trips its reference kind
    new = StudyReport.from_json(json.loads(json.dumps(only_results().to_json())))
    assert [c.reference for c in new.comparisons] == ["ns-3", "paper", "paper"]


def test_studies_mark_references_that_are_not_the_paper():
    """Engine checks compare with closed forms and hand calculations, incast with ns-3, orchestration's flow engine
    with the packet engine: their run.py say so."""
    text = {s: (ROOT / "experiments" / s / "run.py").read_text() for s in ("engine_checks", "incast", "orchestration",
                                                                           "ina")}
    assert text["engine_checks"].count('reference="closed form"') == 4
    assert text["engine_checks"].count('reference="hand calculation"') == 2
    assert text["incast"].count('reference="ns-3"') == 5 and 'source="ns-3 3.44 run")' not in text["incast"]
    assert 'reference="packet engine"' in text["orchestration"] and 'reference="optimizer"' in text["ina"]


# 3. tolerances -------------------------------------------------------------------------------------------------------
def test_tolerance_strings():
    assert tolerance(0.05, None) == "±5%"
    assert tolerance(0.15, None, "ms") == "±15%"  # 0.15 × 100 is 15.000000000000002
    assert tolerance(None, 5.0, "%") == "±5 pp"
    assert tolerance(0.1, 2.0, "%") == "±10% or ±2 pp"
    assert tolerance(None, 0.011, "M") == "±0.011 M"
    assert tolerance(None, 1, "packets") == "±1 packets"
    assert tolerance(None, None) == tolerance(0.0, None) == tolerance(None, 0, "packets") == "exact"
    assert Comparison("l", "loss", 42.5, 44.0, "%", abs_tol=2.0).tolerance == "±2 pp"


def test_no_tolerance_with_a_space_before_its_percent_sign():
    """Nowhere in the studies or the report code is a tolerance written "±5 %" or "± 5"."""
    spaced = re.compile(r"±\s*\d[\d.]*\s+%|±\s+\d")
    files = list((ROOT / "experiments").glob("*/run.py")) + list((ROOT / "python/fabricsim/report").glob("*.py"))
    assert {f.name for f in files} >= {"run.py", "numbers.py", "html.py"}
    found = [(f.relative_to(ROOT), m.group(0)) for f in files for m in spaced.finditer(f.read_text())]
    assert found == []


# 4. counts -----------------------------------------------------------------------------------------------------------
def test_numbers_counts_and_integers_with_separators():
    assert number(849600.0) == number(849600) == "849,600"
    assert number(849600.0, "packets") == "849,600"
    assert number(1249.6, "packets") == "1,250" and number(1249.6, "ms") == "1,250"
    assert number(12.5, "packets") == "12.5"  # a small mean count keeps its fraction
    assert number(0.25012) == "0.2501" and number(41.18) == "41.18" and number(123456.7) == "123,457"
    assert number(None) == number(float("nan")) == "–"
    assert signed(-12.0) == "-12" and signed(1024.0, "bytes") == "+1,024" and signed(0.0) == "+0"
    assert difference(-4.6, 1250.0, "packets") == "-4.6"
    assert difference(2e-13, 84.2) == "+0" and difference(1500.0, 849600.0, "packets", percent=True) == "+1,500 (+0.2%)"


def test_counts_in_the_console_and_html_tables(capsys, tmp_path):
    rep = StudyReport("c", "Counts", True, comparisons=[
        Comparison("tx", "TX packets", 849600.0, 851100.0, "packets", rel_tol=0.01)])
    _print_comparisons(rep)
    out = capsys.readouterr().out
    assert "849,600 (paper)" in out and "851,100" in out and "+1,500" in out and "e+05" not in out
    page = render([rep], "test")
    assert ">849,600<div" in page and "<td>851,100</td>" in page and "+1,500 (+0.2%)" in page
    ctx = StudyContext(tmp_path / "s", quick=True, out=tmp_path / "o" / "s")
    ctx.table("t", pd.DataFrame({"runs": [849600], "packets_mean": [849600.0], "share": [0.25012],
                                 "gap": [float("nan")], "name": ["x"]}))
    html = ctx.report.tables[0]["html"]
    assert html.count("<td>849,600</td>") == 2 and "<td>0.2501</td>" in html and "e+05" not in html


# 5. figures ----------------------------------------------------------------------------------------------------------
def test_whiskers_of_a_ci_that_crosses_zero_stop_at_zero():
    # a mean of 2 with a half-width of 5 would reach −3: its lower arm is cut to 2, the upper stays 5
    below, above = figures.clipped_err([2.0, 10.0, -1.0], [5.0, 1.0, 3.0])
    assert below.tolist() == [2.0, 1.0, 3.0] and above.tolist() == [5.0, 1.0, 3.0]  # a negative mean is left alone
    frame = pd.DataFrame({"x": ["a", "b"], "m_mean": [2.0, 10.0], "m_ci95": [5.0, 1.0]})
    ax = figures.grouped_bars(frame, "x", "m").axes[0]
    (bars,) = [c for c in ax.containers if hasattr(c, "lines")]
    lows = sorted(seg[0][1] for seg in bars.lines[2][0].get_segments())
    assert np.allclose(lows, [0.0, 9.0])
    band = figures.lines(frame.assign(x=[1, 2]), "x", "m").axes[0].collections[0]
    assert band.get_paths()[0].vertices[:, 1].min() >= 0.0


def test_legends_name_what_they_show():
    orch = load_study(ROOT / "experiments" / "orchestration")
    assert orch.per_node(1) == "1 interface per node" and orch.per_node(4) == "4 interfaces per node"
    frame = pd.DataFrame({"x": ["4n_1r", "4n_1r"], "interfaces": [1, 4], "m_mean": [1.0, 2.0], "m_ci95": [0.1, 0.1]})
    ax = figures.grouped_bars(frame, "x", "m", "interfaces", group_label=orch.per_node).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1 interface per node", "4 interfaces per node"]
    # without a group label a legend reads "1" and "4": every grouped figure of the studies names its groups,
    # unless its groups are already names (a "label" column)
    grouped = []
    for f in (ROOT / "experiments").glob("*/run.py"):
        for call in ast.walk(ast.parse(f.read_text())):
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") in ("grouped_bars", "lines"):
                kw = {k.arg: k.value for k in call.keywords}
                group = call.args[3] if len(call.args) > 3 else kw.get("group")
                if group is not None and getattr(group, "value", None) != "label":
                    grouped.append((f.parent.name, call.lineno, "group_label" in kw))
    assert len(grouped) >= 4 and all(named for *_, named in grouped), grouped
