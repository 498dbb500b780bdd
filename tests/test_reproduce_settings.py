"""Every scored number of a reproduction names its setting (fidelity, seeds, grid) in report.json, the HTML page and
the CLI table; a study that leaves one unnamed is refused in one line; `reproduce all` runs studies at once with the
same reports as one after another."""

import json
import shutil
from pathlib import Path

import pytest

from fabricsim.report.html import render
from fabricsim.report.reproduce import (StudyContext, StudyReport, StudySettingMissing, discover, experiments_dir,
                                        reproduce, reproduce_many, weight)

ROOT = Path(__file__).parents[1]

STUDY = '''"""A study with two scored numbers (2 + 2 = 4 and 10 / 4 = 2.5, by hand) and an input."""
TITLE = "Toy study {name}"
{weight}


def reproduce(ctx):
    with ctx.setting("closed form, 1 run"):
        ctx.compare("sum", "2 + 2", 4.0, 2 + 2)
    ctx.setting("packet, 3 seeds, 2 placements")
    ctx.compare("ratio", "10 / 4", 2.5, 10 / 4, rel=0.01)
    ctx.compare("in", "a preset", 48.0, 48.0, role="input")
'''


def toy(root: Path, name: str, weight_line: str = "", body: str | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "run.py").write_text(body if body is not None else STUDY.format(name=name, weight=weight_line))
    return d


def test_settings_scope_and_override(tmp_path):
    """`with ctx.setting(...)` restores the previous setting; a plain call sets it for what follows; `setting=`
    overrides it for one row."""
    ctx = StudyContext(tmp_path / "s", quick=True, out=tmp_path / "out")
    ctx.setting("A")
    with ctx.setting("B"):
        ctx.compare("b", "q", 1.0, 1.0)
    ctx.compare("a", "q", 1.0, 1.0)
    ctx.compare("c", "q", 1.0, 1.0, setting="C")
    assert [(c.id, c.setting) for c in ctx.report.comparisons] == [("b", "B"), ("a", "A"), ("c", "C")]
    assert ctx.report.settings() == {"B": 1, "A": 1, "C": 1}


def test_report_json_html_and_roundtrip_name_every_setting(tmp_path):
    """The toy study's 2 scored numbers carry their settings into report.json (per row, and the study's list with
    counts: 1 each), back through StudyReport.from_json, and into the HTML page (under our number, and the study's
    Settings list); the input row, recorded under the second setting, shows it too but is not counted."""
    d = toy(tmp_path / "exp", "toy")
    rep = reproduce(d, quick=True, quiet=True, out=tmp_path / "out")
    data = json.loads((tmp_path / "out" / "toy" / "report.json").read_text())
    assert [(c["id"], c["setting"]) for c in data["comparisons"]] == [("sum", "closed form, 1 run"),
                                                                      ("ratio", "packet, 3 seeds, 2 placements")]
    assert data["settings"] == [{"setting": "closed form, 1 run", "results": 1},
                                {"setting": "packet, 3 seeds, 2 placements", "results": 1}]
    back = StudyReport.from_json(data)
    assert [c.setting for c in back.comparisons] == [c.setting for c in rep.comparisons]
    page = render([back], "test")
    assert page.count("<div class='kind setting'>closed form, 1 run</div>") == 1
    assert page.count("<div class='kind setting'>packet, 3 seeds, 2 placements</div>") == 2  # ratio, and the input
    assert "<ul class='settings'><li>closed form, 1 run <span class='muted'>(1 number)</span></li>" in page


def test_a_scored_number_without_a_setting_is_refused_in_one_line(tmp_path, capsys):
    """Through the CLI: exit 2, one line naming the study's run.py and the unnamed rows."""
    from fabricsim.cli import main

    body = '''TITLE = "no setting"


def reproduce(ctx):
    ctx.compare("x", "q", 1.0, 1.0)
    ctx.compare("y", "q", 1.0, 1.0, role="input")
'''
    d = toy(tmp_path / "exp", "bare", body=body)
    with pytest.raises(StudySettingMissing, match="1 scored comparison"):
        reproduce(d, quick=True, quiet=True, out=tmp_path / "o1")
    assert main(["reproduce", "bare", "--quick", "--experiments", str(tmp_path / "exp"), "--out",
                 str(tmp_path / "o2"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fabricsim: {d / 'run.py'}: 1 scored comparison(s) name no setting (fidelity, seeds, grid; "
                   "ctx.setting(...) or setting=): x"]


def test_studies_at_once_give_the_same_reports_in_study_order(tmp_path):
    """Three toy studies, the last with WEIGHT = 5 (started first): on 2 processes they come back in the given
    order, each report equal (wall time aside) to the one run alone."""
    exp = tmp_path / "exp"
    dirs = [toy(exp, "a"), toy(exp, "b", "WEIGHT = 0.5"), toy(exp, "c", "WEIGHT = 5")]
    assert [weight(d) for d in dirs] == [1.0, 0.5, 5.0]
    together = list(reproduce_many(dirs, True, quiet=True, out=tmp_path / "o2", jobs=2))
    alone = list(reproduce_many(dirs, True, quiet=True, out=tmp_path / "o1", jobs=1))
    assert [r.study for r in together] == ["a", "b", "c"]

    def same(r):
        return {k: v for k, v in r.to_json().items() if k != "wall_s"}

    assert [same(r) for r in together] == [same(r) for r in alone]
    # A study that fails on a worker process fails the whole run with its own error.
    bare = toy(exp, "d", body='TITLE = "d"\n\n\ndef reproduce(ctx):\n    ctx.compare("x", "q", 1.0, 1.0)\n')
    with pytest.raises(StudySettingMissing, match="run.py: 1 scored comparison"):
        list(reproduce_many([dirs[0], bare], True, quiet=True, out=tmp_path / "o3", jobs=2))


def test_the_engine_checks_study_names_the_setting_of_every_scored_number(tmp_path, capsys, monkeypatch):
    """A shipped study through the CLI: every scored row of report.json has a setting, and the CLI table shows it."""
    from fabricsim.cli import main

    exp = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments" / "engine_checks", exp / "engine_checks",
                    ignore=shutil.ignore_patterns("outputs", "__pycache__"))
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "engine_checks", "--quick", "--experiments", str(exp), "--workers", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    rep = json.loads((tmp_path / "fabricsim-outputs" / "engine_checks" / "report.json").read_text())
    assert rep["comparisons"] and all(c["setting"] for c in rep["comparisons"])
    assert sum(s["results"] for s in rep["settings"]) == len(rep["comparisons"])
    assert "packet, 5 seeds, 10,000 one-packet messages over 8 spines" in {s["setting"] for s in rep["settings"]}
    assert "setting" in out


@pytest.mark.slow
def test_every_shipped_study_names_the_setting_of_every_scored_number(tmp_path):
    """Every shipped study on the quick setting (minutes): no scored number without its setting."""
    studies = discover(experiments_dir())
    for rep in reproduce_many(list(studies.values()), True, quiet=True, out=tmp_path):
        assert rep.comparisons and all(c.setting.strip() for c in rep.comparisons), rep.study
