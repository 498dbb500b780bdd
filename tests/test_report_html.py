"""The HTML report's structure from hand-built StudyReports: summary counts, seed order, misses first, collapsed
tables, human column names, Markdown, the quick banner, figure links; and the figure helpers it relies on."""

from html.parser import HTMLParser

import numpy as np
import pandas as pd

from fabricsim.report import figures
from fabricsim.report.html import (QUICK_BANNER, _num, first_sentence, humanize_table, md_block, md_inline, render,
                                   seed_number, write_report)
from fabricsim.report.reproduce import Comparison, StudyReport
from fabricsim.report.stats import column_label


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, with the class of each table."""

    def __init__(self):
        super().__init__()
        self.tables, self.classes, self.row, self.cell = [], [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
            self.classes.append(dict(attrs).get("class", ""))
        elif tag == "tr":
            self.row = []
            self.tables[-1].append(self.row)
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.row.append(" ".join(self.cell.split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += " " + data


def tables(page: str, cls: str) -> list[list[list[str]]]:
    p = Tables()
    p.feed(page)
    return [t for t, c in zip(p.tables, p.classes) if c == cls]


def rep(study, title, results=(), unscored=(), quick=False, summary="", **kw) -> StudyReport:
    return StudyReport(study=study, title=title, quick=quick, summary=summary, comparisons=list(results),
                       unscored=list(unscored), **kw)


def hand_built() -> list[StudyReport]:
    """Given in folder order (alphabetical), not seed order."""
    a = rep("alpha", "Study 001: alpha", [
        Comparison("a-ok", "first", 10.0, 10.0),
        Comparison("a-ok2", "second", 10.0, 10.5, rel_tol=0.1),
        Comparison("a-miss", "third", 10.0, 13.0, rel_tol=0.1, note="off by **30%**, see `notes`"),
    ], [Comparison("a-in", "preset", 48.0, 48.0, role="input"),
        Comparison("a-fit", "fitted", 141.0, 141.0, role="calibrated")], quick=True, wall_s=2.0)
    b = rep("beta", "Beta: no number in the title", [Comparison("b-ok", "x", 1.0, 1.0)],
            summary="A study (study 003) whose number is in its summary.", wall_s=1.0)
    checks = rep("checks", "Engine checks", [Comparison("c1", "y", 2.0, 2.0), Comparison("c2", "z", 3.0, 3.0)])
    c = rep("gamma", "Study 000: gamma", [Comparison("g-ok", "w", 5.0, 5.0)])
    return [a, b, checks, c]


def test_summary_counts_from_a_hand_built_report():
    page = render(hand_built(), "test")
    (summary,) = tables(page, "summary")
    header, *rows = summary
    assert header == ["study", "results", "pass", "miss", "pass rate", "calibrated", "inputs", "setting", "run time"]
    got = {r[0]: r[1:4] + r[5:8] for r in rows}
    # alpha: 3 results, 2 within tolerance (10.5 is 5% off, under 10%), 13.0 is 30% off; 1 calibrated, 1 input.
    assert got["Study 001: alpha"] == ["3", "2", "1", "1", "1", "quick"]
    assert got["Beta: no number in the title"] == ["1", "1", "0", "0", "0", "full"]
    assert got["Engine checks"] == ["2", "2", "0", "0", "0", "full"]
    # totals: 3 + 1 + 2 + 1 = 7 results, 2 + 1 + 2 + 1 = 6 passes, 1 miss; 1 calibrated, 1 input, 3 s of runs.
    assert got["all 4 studies"] == ["7", "6", "1", "1", "1", ""]
    assert rows[-1][-1] == "3 s"
    assert "<b>6 of 7</b>" in page
    # pass rate: 2 of 3 is 67%, 6 of 7 is 86%
    assert rows[[r[0] for r in rows].index("Study 001: alpha")][4] == "67%" and rows[-1][4] == "86%"


def test_studies_in_seed_order_engine_checks_last():
    reports = hand_built()
    assert [seed_number(r) for r in reports] == [1, 3, None, 0]
    page = render(reports, "test")
    pos = [page.index(f"<section id='study-{s}'>") for s in ("gamma", "alpha", "beta", "checks")]
    assert pos == sorted(pos)
    (summary,) = tables(page, "summary")
    assert [r[0] for r in summary[1:-1]] == ["Study 000: gamma", "Study 001: alpha", "Beta: no number in the title",
                                             "Engine checks"]
    toc = page[page.index("<nav class='toc'"):page.index("</nav>")]
    assert toc.index("#study-gamma") < toc.index("#study-alpha") < toc.index("#study-beta") < toc.index("#study-checks")


def test_misses_first_with_their_rendered_notes():
    page = render(hand_built(), "test")
    misses = page[page.index("<section id='misses'>"):page.index("</section>", page.index("<section id='misses'>"))]
    assert page.index("<section id='misses'>") < page.index("<section id='study-")
    assert "Misses (1)" in misses and "a-miss" in misses and "a-ok" not in misses
    assert "off by <strong>30%</strong>, see <code>notes</code>" in misses
    # comparison tables: the Misses section's (alpha's one miss), then one per study in seed order: gamma, alpha, …
    comps = tables(page, "comparisons")
    assert len(comps) == 5 and [r[0].split()[-1] for r in comps[0][1:]] == ["a-miss"]
    # in alpha's own table the miss comes first, before the two passes, then the unscored rows
    assert [r[0].split()[-1] for r in comps[2][1:]] == ["a-miss", "a-ok", "a-ok2", "a-in", "a-fit"]


def test_no_misses_section_when_everything_passes():
    page = render([rep("s", "Study 002: all good", [Comparison("x", "q", 1.0, 1.0)])], "test")
    assert "id='misses'" not in page and "<b>1 of 1</b>" in page


def test_tables_collapsed_after_the_figures_with_human_column_names(tmp_path):
    frame = pd.DataFrame({"placement": ["4n_1r", "6n_1r"], "completion_time_ms_mean": [5.036, 8.392],
                          "packets_3hop_m": [0.25, float("nan")]})
    png = figures.save(figures.timeseries([0, 1], {"q": [0, 1]}), tmp_path / "q.png")
    r = rep("s", "Study 002: tables", [Comparison("x", "q", 1.0, 1.0)],
            tables=[{"title": "Raw runs. Every seed.", "html": frame.to_html(index=False)}],
            figures=[{"path": png, "caption": "a `queue`"}])
    page = render([r], "test")
    section = page[page.index("<section id='study-s'>"):]
    assert section.index("<figure>") < section.index("id='study-s-tables'")
    tbl = section[section.index("id='study-s-tables'"):]
    assert tbl.count("<details>") == 1 and "(2 rows × 3 columns)" in tbl
    assert "<summary>Raw runs." in tbl and "<span class='more'>Every seed.</span>" in tbl
    (raw,) = tables(page, "dataframe")
    assert raw[0] == ["placement", "completion time (ms), mean", "packets 3-hop (millions)"]
    assert raw[2] == ["6n_1r", "8.392", "–"]  # NaN shown as a dash
    assert "title=\"completion_time_ms_mean\"" in tbl  # the raw name stays as the tooltip
    assert "<td class='l'>4n_1r</td>" in tbl and "<td>5.036</td>" in tbl
    # the comparisons are collapsed too; the figure is not
    assert "<details><summary>All 1 rows: 1 pass, 0 miss, 0 not scored" in section
    assert "a <code>queue</code>" in section


def test_table_titles_split_after_their_first_sentence():
    assert first_sentence("Fig. 3: throughput (Gb/s). flow_ms = the flow engine.") == (
        "Fig. 3: throughput (Gb/s).", "flow_ms = the flow engine.")
    assert first_sentence("Fig 8: All-Gather, 10 MiB, e.g. 4 racks vs. 2") == (
        "Fig 8: All-Gather, 10 MiB, e.g. 4 racks vs. 2", "")


def test_humanize_table_leaves_the_body_alone():
    t = humanize_table("<table><thead><tr><th>msg_bytes</th><th>S1 paper</th></tr></thead>"
                       "<tbody><tr><td>256</td><td>~100</td></tr></tbody></table>")
    assert ">message size (B)</th>" in t and ">S1 paper</th>" in t
    assert "<td>256</td>" in t and "<td class='l'>~100</td>" in t


def test_column_labels():
    assert column_label("completion_time_ms_mean") == "completion time (ms), mean"
    assert column_label("completion_time_ms_ci95") == "completion time (ms), 95% CI (±)"
    assert column_label("throughput_per_interface_gbps_mean") == "throughput per interface (Gb/s), mean"
    assert column_label("packets_1hop_m_raw") == "packets 1-hop (millions), raw"
    assert column_label("increase_pct") == "increase (%)"
    assert column_label("stack_us") == "stack (µs)"
    assert column_label("gbps") == "Gb/s"
    for unchanged in ("n", "m", "P_f", "S1 paper", "scenario"):
        assert column_label(unchanged) == unchanged


def test_quick_banner_only_for_quick_runs():
    full = rep("s", "Study 002: full", [Comparison("x", "q", 1.0, 1.0)])
    quick = rep("t", "Study 003: quick", [Comparison("y", "q", 1.0, 1.0)], quick=True)
    assert QUICK_BANNER not in render([full], "test")
    page = render([full, quick], "test")
    assert QUICK_BANNER in page and "these studies: t." in page
    assert page.index(QUICK_BANNER) < page.index("<section id='summary'>")
    assert "every study." in render([quick], "test")


def test_markdown_is_rendered_and_safe():
    assert md_inline("`a<b>` **bold `c`** [site](https://e.org/x?a=1&b=2) <i>") == (
        "<code>a&lt;b&gt;</code> <strong>bold <code>c</code></strong> "
        "<a href=\"https://e.org/x?a=1&amp;b=2\">site</a> &lt;i&gt;")
    assert md_inline("[x](javascript:alert(1))") == "[x](javascript:alert(1))"
    # single * and _ are not emphasis: identifiers keep their characters
    assert md_inline("packets_*_raw and packets_*_adjusted, 2*3") == "packets_*_raw and packets_*_adjusted, 2*3"
    assert md_block("one\nparagraph\n\n- a\n- b\n\nnext") == "<p>one paragraph</p><ul><li>a</li><li>b</li></ul><p>next</p>"


def test_numbers_in_cells():
    assert _num(12288.0) == "12,288" and _num(41.18) == "41.18" and _num(123456.7) == "123,457"
    assert _num(0.0005204) == "0.0005204" and _num(None) == "–" and _num(float("nan")) == "–"


def test_figures_link_to_a_copy_beside_the_page(tmp_path):
    """A figure outside the page's folder is copied to <stem>_figures/<study>/ and linked relatively; one inside it
    is linked where it is."""
    (tmp_path / "study").mkdir()
    outside = figures.save(figures.timeseries([0, 1], {"q": [0, 1]}), tmp_path / "study" / "q.png")
    page_dir = tmp_path / "site"
    (page_dir / "figs").mkdir(parents=True)
    inside = figures.save(figures.timeseries([0, 1], {"q": [1, 0]}), page_dir / "figs" / "in.png")
    r = rep("s", "Study 002: figs", figures=[{"path": outside, "caption": "out"}, {"path": inside, "caption": "in"}])
    html_text = write_report([r], page_dir / "report.html", "test").read_text()
    copy = page_dir / "report_figures" / "s" / "q.png"
    assert copy.read_bytes() == (tmp_path / "study" / "q.png").read_bytes()
    assert "<a href='report_figures/s/q.png'" in html_text and "<a href='figs/in.png'" in html_text
    assert html_text.count("data:image/png;base64,") == 2  # still one self-contained page


def test_error_bars_cut_at_zero_and_legends_name_groups():
    # means 1 and 5 with half-widths 3 and 2: the first whisker would reach −2, so its lower arm is cut to 1.
    below, above = figures.clipped_err([1.0, 5.0], [3.0, 2.0])
    assert below.tolist() == [1.0, 2.0] and above.tolist() == [3.0, 2.0]
    frame = pd.DataFrame({"x": ["a", "a"], "g": [1, 4], "m_mean": [1.0, 2.0], "m_ci95": [3.0, 0.5]})
    fig = figures.grouped_bars(frame, "x", "m", "g", group_label=figures.plural("interface"), paper={("a", 1): 1.5})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["1 interface", "4 interfaces", "paper"]
    lows = [seg[0][1] for c in ax.containers if hasattr(c, "lines") for seg in c.lines[2][0].get_segments()]
    assert np.allclose(sorted(lows), [0.0, 1.5])  # 1 − 3 cut to 0; 2 − 0.5 = 1.5
    assert ax.get_xlabel() == "x" and ax.get_ylabel() == "m"
    lines = figures.lines(pd.DataFrame({"x": [1, 2], "m_mean": [1.0, 2.0]}), "x", "m", paper={1: 1.2, 2: 2.4})
    (marks,) = [c for c in lines.axes[0].collections if c.get_label() == "paper"]
    assert marks.get_offsets().tolist() == [[1.0, 1.2], [2.0, 2.4]]
