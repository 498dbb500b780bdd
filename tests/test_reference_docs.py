"""The committed generated pages are fresh: docs/reference/{scenario,cli,api}.md equal a fresh render from the code,
and each study's page, docs/studies/STUDY.md, equals its copy experiments/STUDY/README.md. They are committed so
their links work in a clone; `python docs/gen_reference.py --write` regenerates all of them."""

import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import gen_reference  # noqa: E402

FIX = f"run `{gen_reference.REGENERATE}`"
fresh_pages = cache(gen_reference.reference_pages)


@pytest.mark.parametrize("name", ["scenario.md", "cli.md", "api.md"])
def test_reference_page_equals_a_fresh_render(name):
    path = ROOT / "docs" / "reference" / name
    fresh = fresh_pages()[path]
    assert path.is_file(), f"docs/reference/{name} is missing: {FIX}"
    assert path.read_text() == fresh, f"docs/reference/{name} is stale: {FIX}"


def test_every_study_has_one_page_and_its_copy_is_identical():
    studies = sorted(p.parent.name for p in (ROOT / "experiments").glob("*/run.py"))
    pages = sorted(p.stem for p in (ROOT / "docs" / "studies").glob("*.md") if p.stem != "index")
    assert pages == studies, "every experiments/STUDY/ needs docs/studies/STUDY.md, and no page without a study"
    pairs = gen_reference.study_copies()
    assert [copy.parent.name for _, copy in pairs] == studies
    stale = [str(copy.relative_to(ROOT)) for page, copy in pairs
             if not copy.is_file() or copy.read_text() != page.read_text()]
    assert not stale, f"{', '.join(stale)} differ from docs/studies/: {FIX} (edit docs/studies/STUDY.md, not the copy)"


def test_the_api_page_covers_every_public_name():
    import fabricsim

    text = (ROOT / "docs" / "reference" / "api.md").read_text()
    missing = [n for n in fabricsim.__all__ if n != "__version__" and f"### `fabricsim.{n}`" not in text]
    assert not missing
    assert " at 0x" not in text  # no default whose repr names a memory address (it would differ on every run)


def test_check_mode_names_a_stale_file_and_the_command(tmp_path, monkeypatch, capsys):
    page = tmp_path / "studies" / "x.md"
    page.parent.mkdir()
    page.write_text("# x\n")
    copy = tmp_path / "x" / "README.md"
    monkeypatch.setattr(gen_reference, "committed", lambda: {copy: page.read_text()})
    monkeypatch.setattr(gen_reference, "ROOT", tmp_path)
    assert gen_reference.main([]) == 1
    assert capsys.readouterr().out.splitlines() == ["x/README.md is missing", f"run `{gen_reference.REGENERATE}`"]
    assert gen_reference.main(["--write"]) == 0 and copy.read_text() == "# x\n"
    assert gen_reference.main([]) == 0
