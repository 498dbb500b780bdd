"""The HTML report rendered by headless Chromium fits the window's width: wide tables scroll in their own box, long
words wrap, figures shrink to the page (synthetic StudyReports, so no study has to run)."""

import re
import shutil
import subprocess

import pandas as pd
import pytest

from fabricsim.report import figures
from fabricsim.report.html import write_report
from fabricsim.report.reproduce import Comparison, StudyReport

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome", "chrome")) if p), None)
MEASURE = """<script>window.addEventListener('load', () => {
  const m = document.createElement('pre'); m.id = 'measured';
  m.textContent = 'scrollWidth=' + document.documentElement.scrollWidth + ' innerWidth=' + window.innerWidth
    + ' height=' + document.documentElement.scrollHeight;
  document.body.appendChild(m); });</script>"""
"""Appended to a copy of the page: records the page's width against the window's once everything is laid out."""

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium or Chrome binary on PATH (make browser, or "
                                                        "apt-get install chromium)")


def measure(page, tmp_path, width: int) -> dict[str, int]:
    """Chromium's scrollWidth, innerWidth and page height for `page` in a window `width` px wide."""
    probe = tmp_path / f"probe_{width}.html"
    probe.write_text(page.read_text(encoding="utf-8") + MEASURE, encoding="utf-8")
    out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},900",
                          "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                          "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         check=False, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"scrollWidth=(\d+) innerWidth=(\d+) height=(\d+)", out)
    assert m, out[-2000:]
    return dict(zip(("scrollWidth", "innerWidth", "height"), map(int, m.groups())))


def synthetic(tmp_path) -> list[StudyReport]:
    """Everything that used to overflow: a 40-column table of long names, a 3,000 px figure, unbroken ids and notes."""
    wide = pd.DataFrame({f"very_long_column_name_number_{i}_gbps_mean": [1.0 + i, 2.0 * i] for i in range(40)})
    big = figures.heatmap(pd.DataFrame([[1.0, 2.0], [3.0, 4.0]]), title="big")
    big.set_size_inches(20, 6)
    png = figures.save(big, tmp_path / "big.png")
    long = "x" * 400
    rows = [Comparison(f"id-{long}", f"quantity {long}", 1.0, 2.0, "ms", rel_tol=0.1, source=long, note=f"`{long}`"),
            Comparison("ok", "fine", 1.0, 1.0)]
    return [StudyReport("wide", "Study 000: wide things", True, summary=f"summary {long}", comparisons=rows,
                        figures=[{"path": png, "caption": long}],
                        tables=[{"title": f"a wide table {long}", "html": wide.to_html(index=False)}],
                        notes=[f"a note with a link [{long}](https://example.org/{long})"]),
            StudyReport("checks", "Engine checks", False, comparisons=[Comparison("c", "c", 1.0, 1.0)])]


def test_report_fits_the_window_width(tmp_path):
    page = write_report(synthetic(tmp_path), tmp_path / "report.html", "test")
    # details open, so the wide table and the comparisons are laid out too (the closed page shows a subset of it)
    opened = tmp_path / "opened.html"
    opened.write_text(page.read_text(encoding="utf-8").replace("<details>", "<details open>"), encoding="utf-8")
    for width in (1400, 800):
        m = measure(opened, tmp_path, width)
        assert m["scrollWidth"] <= m["innerWidth"], (opened.name, width, m)


def test_the_measurement_sees_an_overflow(tmp_path):
    """The same probe on a page whose 40-column table is not wrapped: it must report the overflow."""
    wide = pd.DataFrame({f"very_long_column_name_number_{i}": [1.0] for i in range(40)})
    page = tmp_path / "bare.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><body>{wide.to_html(index=False)}</body>", encoding="utf-8")
    m = measure(page, tmp_path, 800)
    assert m["scrollWidth"] > m["innerWidth"], m
