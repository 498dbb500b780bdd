"""The README's generated regions agree with a fresh run of their generators (benchmarks/readme_numbers.py).

Only deterministic regions are checked (simulation results: the same code and seeds give the same text);
timing regions are rewritten by `python benchmarks/readme_numbers.py --write` and name their machine."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import readme_numbers as rn  # noqa: E402

DET = sorted(n for n, g in rn.GENERATORS.items() if g.deterministic)


def test_every_generator_has_its_region():
    assert sorted(rn.regions(rn.README.read_text())) == sorted(rn.GENERATORS)


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if rn.GENERATORS[n].seconds > 5 else [])
                                  for n in DET])
def test_region_matches_a_fresh_run(name):
    have = rn.regions(rn.README.read_text())[name]
    assert have == rn.GENERATORS[name].fn(), (
        f"README region '{name}' is stale: run `python benchmarks/readme_numbers.py --only {name} --write`")


def test_rewrite_replaces_only_the_named_region():
    text = "a\n<!-- generated: x -->\nold\n<!-- end: x -->\nb\n<!-- generated: y -->\nkeep\n<!-- end: y -->\n"
    assert rn.rewrite(text, {"x": "new"}) == text.replace("old", "new")
    assert rn.regions(text) == {"x": "old", "y": "keep"}
