"""The HTML reproduction report: a summary per study, the misses first, then each study's figures, notes, comparisons
(reference, ours, difference, pass/miss) and its tables, collapsed.

Only scored rows (role "result") count in the pass total; inputs and calibrated values are listed in the same
tables, labelled "input" or "calibrated", and counted apart, in the same totals lines as `fabricsim reproduce`
prints. The reference column names what each reference number is (the paper's, ns-3's, a closed form, …).
Studies appear in seed order (the number in "Study 000", "study 001", … of their title or summary); studies
without one (the engine checks) come last."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import os
import re
import shutil
from pathlib import Path
from urllib.parse import quote

from . import numbers
from .reproduce import Comparison, StudyReport, total_counts, totals_line, totals_lines
from .stats import column_label

QUICK_BANNER = "Quick setting: fewer seeds and points; graded against the paper anyway."

CSS = """
:root{--pass:#0a7d22;--miss:#b3261e;--muted:#5f6368;--line:#d7dbe0;--bg2:#f5f7f9}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;line-height:1.45;max-width:1240px;margin:0 auto;
 padding:1.5em 2em 4em;color:#1f2328;overflow-wrap:break-word}
h1{margin:0 0 .2em}h2{margin:2.2em 0 .3em;padding-top:.6em;border-top:3px solid #1f2328}
h3{margin:1.6em 0 .4em}a{color:#0b57d0}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:var(--bg2);padding:0 .25em;
 border-radius:3px;overflow-wrap:anywhere}
.meta,.muted{color:var(--muted)}
.banner{background:#fff4ce;border:1px solid #e0b300;border-left:6px solid #e0b300;padding:.6em 1em;margin:1em 0;
 font-weight:600}
.banner span{font-weight:400}
.score{font-size:1.15em}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1.2em}
.scroll.tall{max-height:75vh;overflow-y:auto}
table{border-collapse:collapse;font-size:.9em}table.comparisons{width:100%}td.d{white-space:nowrap}
td,th{border:1px solid var(--line);padding:4px 8px;text-align:right;vertical-align:top}
th{background:var(--bg2);position:sticky;top:0;z-index:1}
td.l,th.l{text-align:left}td.note{text-align:left;min-width:14em}td.src{text-align:left;min-width:9em;max-width:16em}
td.q{text-align:left;min-width:14em;max-width:30em}.id,.kind{font-size:.8em;color:var(--muted)}
td.nw{white-space:nowrap}
.pass{color:var(--pass);font-weight:600}.miss{color:var(--miss);font-weight:600}
.unscored{color:var(--muted);font-style:italic}
tr.missrow td{background:#fdf1f0}
.bar{display:inline-block;width:120px;height:.75em;background:var(--miss);vertical-align:middle;border-radius:2px;
 overflow:hidden}.bar i{display:block;height:100%;background:var(--pass)}
table.summary td:first-child{text-align:left}table.summary tr.total td{font-weight:600;background:var(--bg2)}
nav.toc{background:var(--bg2);border:1px solid var(--line);padding:.6em 1.2em;margin:1.2em 0}
nav.toc ol{margin:.3em 0;padding-left:1.4em}nav.toc li{margin:.15em 0}nav.toc .sub{font-size:.88em;color:var(--muted)}
.tag{display:inline-block;font-size:.8em;padding:0 .5em;border-radius:1em;background:var(--bg2);
 border:1px solid var(--line);margin-right:.3em}.tag.quick{background:#fff4ce;border-color:#e0b300}
.tag.miss{background:#fdf1f0;border-color:#f1b8b3}.tag.pass{background:#eaf6ec;border-color:#a8d5b1}
figure{margin:1.2em 0;width:100%}figure img{width:100%;height:auto;border:1px solid var(--line)}
figcaption{font-size:.92em;color:var(--muted);margin-top:.3em}
details{margin:.6em 0;border:1px solid var(--line);border-radius:4px;padding:.3em .8em}
details>summary{cursor:pointer;font-weight:600}details>summary .more{font-weight:400}details[open]>summary{margin-bottom:.4em}
pre.totals{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:var(--bg2);
 border:1px solid var(--line);padding:.5em 1em;margin:.4em 0 1em;white-space:pre-wrap}
.prose p{margin:.5em 0}.top{font-size:.8em;font-weight:400;margin-left:.6em}
"""


ERROR_SENTINEL = """<pre id='js-errors' hidden></pre><script>
window.fabricsimErrors = [];
window.addEventListener('error', e => { window.fabricsimErrors.push(String(e.message || e));
  const p = document.getElementById('js-errors'); p.hidden = false; p.textContent = window.fabricsimErrors.join('\\n'); });
</script>"""
"""First thing in a page's body: every script error the page raises is written into the DOM (#js-errors), where a
headless browser's --dump-dom shows it (the browser tests assert it stays empty)."""


# --- Markdown ---------------------------------------------------------------------------------------------------
_INLINE = re.compile(r"`([^`\n]+)`|\*\*(.+?)\*\*|\[([^\]\n]+)\]\(([^)\s]+)\)")
_SAFE_URL = re.compile(r"^(https?://|#|mailto:|[^:]*$)", re.IGNORECASE)


def md_inline(text: str) -> str:
    """Inline Markdown to HTML: `code`, **bold** and [links](url); everything else escaped. Only http(s), mailto,
    anchors and relative links become links (a `javascript:` URL stays text). Single `*` and `_` are left alone:
    the studies' prose is full of identifiers like packets_*_raw that emphasis would mangle."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos:m.start()], quote=False))
        code, bold, label, url = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code, quote=False)}</code>")
        elif bold is not None:
            out.append(f"<strong>{md_inline(bold)}</strong>")
        elif _SAFE_URL.match(url):
            out.append(f"<a href=\"{html.escape(url)}\">{md_inline(label)}</a>")
        else:
            out.append(html.escape(m.group(0), quote=False))
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def md_block(text: str) -> str:
    """Block Markdown to HTML: paragraphs split on blank lines (hard-wrapped lines joined), a block whose every line
    starts with "- " becomes a list; inline markup as md_inline."""
    parts = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.strip() for ln in block.strip().splitlines()]
        if not lines:
            continue
        if all(ln.startswith("- ") for ln in lines):
            parts.append("<ul>" + "".join(f"<li>{md_inline(ln[2:])}</li>" for ln in lines) + "</ul>")
        else:
            parts.append(f"<p>{md_inline(' '.join(lines))}</p>")
    return "".join(parts)


# --- ordering and counts ------------------------------------------------------------------------------------------
_SEED = re.compile(r"\bstudy (\d+)", re.IGNORECASE)


def seed_number(r: StudyReport) -> int | None:
    """The study's seed number: the first "Study NNN" in its title, else in its summary; None if neither has one."""
    for text in (r.title, r.summary):
        m = _SEED.search(text or "")
        if m:
            return int(m.group(1))
    return None


def seed_order(reports: list[StudyReport]) -> list[StudyReport]:
    """Reports by seed number; those without one last, in their given order."""
    return sorted(reports, key=lambda r: (seed_number(r) is None, seed_number(r) or 0))


def counts(r: StudyReport) -> dict[str, int]:
    """Per study: scored results, passes, misses, and the unscored calibrated and input rows."""
    return r.counts()


def anchor(r: StudyReport) -> str:
    return "study-" + re.sub(r"[^A-Za-z0-9_-]+", "-", r.study)


# --- pieces -------------------------------------------------------------------------------------------------------
def _num(v, unit: str = "") -> str:
    """A number for a table cell (numbers.number): integers and counts in full with thousands separators, others to
    4 significant digits."""
    if isinstance(v, (int, float)) or v is None:
        return numbers.number(v, unit)
    return html.escape(str(v))


def _diff(c: Comparison) -> str:
    return numbers.difference(c.diff, c.paper, c.unit, percent=True)


def _scroll(inner: str, tall: bool = False) -> str:
    """A table wrapped so that a wide one scrolls sideways (and a long one, if `tall`, downwards) in its box."""
    return f"<div class='scroll{' tall' if tall else ''}'>{inner}</div>"


def _result_cell(c: Comparison) -> str:
    cls = ("pass" if c.passed else "miss") if c.scored else "unscored"
    return f"<td class='{cls}'>{html.escape(c.label)}</td>"


def _setting(c: Comparison) -> str:
    """The setting our number came from (fidelity, seeds, grid), in small print under it."""
    setting = getattr(c, "setting", "")
    return f"<div class='kind setting'>{html.escape(setting)}</div>" if setting else ""


def settings_list(r: StudyReport) -> str:
    """The settings the study's scored numbers came from, each with how many numbers it produced."""
    items = [f"<li>{html.escape(s or 'not stated')} <span class='muted'>({n} "
             f"number{'' if n == 1 else 's'})</span></li>" for s, n in r.settings().items()]
    return f"<ul class='settings'>{''.join(items)}</ul>" if items else ""


def comparison_table(rows: list[Comparison]) -> str:
    """The reference number (and what it is: paper, ns-3, closed form, …, in small print under it) beside ours (and
    the setting it came from: fidelity, seeds, grid, in small print under it), one row per comparison (its id in
    small print under the quantity); misses shaded."""
    head = ("<tr><th class='l'>quantity</th><th>reference</th><th>ours</th><th>difference</th><th>tolerance</th>"
            "<th>result</th><th class='l'>source</th><th class='l'>note</th></tr>")
    body = []
    for c in rows:
        unit = f" [{html.escape(c.unit)}]" if c.unit else ""
        miss = c.scored and not c.passed
        body.append(f"<tr{' class=missrow' if miss else ''}><td class='q'>{md_inline(c.quantity)}{unit}"
                    f"<div class='id'>{html.escape(c.id)}</div></td>"
                    f"<td class='nw'>{_num(c.paper, c.unit)}<div class='kind'>{html.escape(c.reference)}</div></td>"
                    f"<td>{_num(c.ours, c.unit)}{_setting(c)}</td><td class='d'>{_diff(c)}</td>"
                    f"<td>{html.escape(c.tolerance)}</td>{_result_cell(c)}<td class='src'>{md_inline(c.source)}</td>"
                    f"<td class='note'>{md_inline(c.note)}</td></tr>")
    return _scroll(f"<table class='comparisons'>{head}{''.join(body)}</table>")


_TH = re.compile(r"<th(\s[^>]*)?>(.*?)</th>", re.DOTALL)
_TD = re.compile(r"<td>(.*?)</td>", re.DOTALL)
_NUMBER = re.compile(r"^[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?$|^(inf|-inf|–|—)$")


def humanize_table(table_html: str) -> str:
    """A pandas to_html table with human column names (stats.column_label) in its header row(s), the raw name kept
    as the header's tooltip, and text cells aligned left (numbers stay right-aligned)."""
    head_end = table_html.find("</thead>")
    if head_end < 0:
        return table_html

    def label(m: re.Match) -> str:
        raw = html.unescape(m.group(2).strip())
        return f"<th{m.group(1) or ''} title=\"{html.escape(raw)}\">{html.escape(column_label(raw))}</th>"

    def cell(m: re.Match) -> str:
        text = m.group(1).strip()
        if text in ("NaN", "nan", "None", "<NA>", numbers.MISSING):
            return "<td class='muted'>–</td>"
        return m.group(0) if _NUMBER.match(text) else f"<td class='l'>{m.group(1)}</td>"

    return _TH.sub(label, table_html[:head_end]) + _TD.sub(cell, table_html[head_end:])


def _table_shape(table_html: str) -> tuple[int, int]:
    body = table_html[table_html.find("<tbody"):] if "<tbody" in table_html else table_html
    rows = body.count("<tr")
    head = table_html[:table_html.find("</thead>")] if "</thead>" in table_html else ""
    return rows, len(re.findall(r"<th[\s>]", head))


_SENTENCE_END = re.compile(r"(?<!\bFig)(?<!\bFigs)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)(?<!\bal)(?<!\bEq)(?<!\bNo)"
                           r"\.\s+(?=[^\d\s])")


def first_sentence(text: str) -> tuple[str, str]:
    """(first sentence with its full stop, the rest): a table title's headline and its explanation. A full stop
    ends a sentence unless an abbreviation (Fig., e.g., vs., …) or a number ("Fig. 3") says otherwise."""
    m = _SENTENCE_END.search(text)
    return (text, "") if m is None else (text[:m.start() + 1], text[m.end():])


def figure_html(f: dict[str, str], href: str | None) -> str:
    """A figure at the page's full width, the PNG embedded (the report is one self-contained file) and linked to
    its file so that a click opens it at full size."""
    p = Path(f["path"])
    if not p.exists():
        return f"<p class='muted'>Figure missing: {html.escape(str(p))} ({md_inline(f['caption'])})</p>"
    data = base64.b64encode(p.read_bytes()).decode()
    img = f"<img src='data:image/png;base64,{data}' alt='{html.escape(f['caption'])}' loading='lazy'>"
    link = href or p.resolve().as_uri()
    return (f"<figure><a href='{html.escape(link)}' title='open at full size'>{img}</a>"
            f"<figcaption>{md_inline(f['caption'])} <a href='{html.escape(link)}'>Full size</a></figcaption></figure>")


def summary_table(reports: list[StudyReport]) -> str:
    head = ("<tr><th class='l'>study</th><th>results</th><th>pass</th><th>miss</th><th class='l'>pass rate</th>"
            "<th>calibrated</th><th>inputs</th><th class='l'>setting</th><th>run time</th></tr>")
    rows, tot = [], total_counts(reports)
    for r in reports:
        k = counts(r)
        rows.append(f"<tr><td><a href='#{anchor(r)}'>{md_inline(r.title)}</a></td><td>{k['results']}</td>"
                    f"<td class='pass'>{k['pass']}</td><td class='{'miss' if k['miss'] else ''}'>{k['miss']}</td>"
                    f"<td class='l nw'>{_bar(k['pass'], k['results'])}</td><td>{k['calibrated']}</td><td>{k['input']}</td>"
                    f"<td class='l'>{'quick' if r.quick else 'full'}</td><td>{r.wall_s:.1f} s</td></tr>")
    rows.append(f"<tr class='total'><td>all {len(reports)} studies</td><td>{tot['results']}</td><td>{tot['pass']}</td>"
                f"<td>{tot['miss']}</td><td class='l nw'>{_bar(tot['pass'], tot['results'])}</td>"
                f"<td>{tot['calibrated']}</td><td>{tot['input']}</td><td></td>"
                f"<td>{sum(r.wall_s for r in reports):.0f} s</td></tr>")
    return _scroll(f"<table class='summary'>{head}{''.join(rows)}</table>")


def _bar(passed: int, total: int) -> str:
    if not total:
        return "<span class='muted'>no scored results</span>"
    pct = 100 * passed / total
    return f"<span class='bar' title='{pct:.0f}% pass'><i style='width:{pct:.1f}%'></i></span> {pct:.0f}%"


def toc(reports: list[StudyReport], any_miss: bool) -> str:
    items = ["<li><a href='#summary'>Summary</a></li>"]
    if any_miss:
        items.append("<li><a href='#misses'>Misses, with their notes</a></li>")
    for r in reports:
        a, k = anchor(r), counts(r)
        subs = [f"<a href='#{a}-figures'>figures ({len(r.figures)})</a>" if r.figures else "",
                f"<a href='#{a}-notes'>notes</a>" if r.notes else "",
                f"<a href='#{a}-comparisons'>comparisons ({k['results'] + len(r.unscored)})</a>"
                if r.comparisons or r.unscored else "",
                f"<a href='#{a}-tables'>tables ({len(r.tables)})</a>" if r.tables else ""]
        score = f"{k['pass']}/{k['results']} pass" + (f", {k['miss']} miss" if k["miss"] else "")
        items.append(f"<li><a href='#{a}'>{md_inline(r.title)}</a> <span class='sub'>— {score}; "
                     f"{' · '.join(s for s in subs if s)}</span></li>")
    return f"<nav class='toc' id='contents'><b>Contents</b><ol>{''.join(items)}</ol></nav>"


def misses_section(reports: list[StudyReport]) -> str:
    parts = []
    for r in reports:
        miss = [c for c in r.comparisons if not c.passed]
        if miss:
            quick = " <span class='tag quick'>quick setting</span>" if r.quick else ""
            notes = f" <a class='top' href='#{anchor(r)}-notes'>the study's notes ↓</a>" if r.notes else ""
            parts.append(f"<h3><a href='#{anchor(r)}'>{md_inline(r.title)}</a> — {len(miss)} of "
                         f"{len(r.comparisons)} missed{quick}{notes}</h3>{comparison_table(miss)}")
    total = sum(counts(r)["miss"] for r in reports)
    return (f"<section id='misses'><h2>Misses ({total})</h2><p class='muted'>Every published number we did not "
            "reproduce within its tolerance, with its note; the study's notes further down explain more.</p>"
            + "".join(parts) + "</section>")


def study_section(r: StudyReport, hrefs: dict[str, str]) -> str:
    a, k = anchor(r), counts(r)
    # the totals line `fabricsim reproduce` prints; calibrated values and inputs are not scored
    tags = [f"<span class='tag {'miss' if k['miss'] else 'pass'}' title='calibrated values and inputs are not scored'>"
            f"{html.escape(totals_line(r.study, k))}</span>"]
    tags.append("<span class='tag quick'>quick setting</span>" if r.quick else "<span class='tag'>full setting</span>")
    tags.append(f"<span class='tag'>ran in {r.wall_s:.1f} s</span>")
    parts = [f"<section id='{a}'><h2>{md_inline(r.title)}<a class='top' href='#contents'>↑ contents</a></h2>",
             f"<p>{''.join(tags)}</p><div class='prose'>{md_block(r.summary)}</div>"]
    if r.comparisons:
        parts.append(f"<h3 id='{a}-settings'>Settings</h3><p class='muted'>The fidelity, seeds and grid each scored "
                     f"number came from ({'quick' if r.quick else 'full'} setting); each comparison names its own "
                     f"under our number.</p>{settings_list(r)}")
    if r.figures:
        parts.append(f"<h3 id='{a}-figures'>Figures</h3>")
        parts += [figure_html(f, hrefs.get(f["path"])) for f in r.figures]
    if r.notes:
        parts.append(f"<h3 id='{a}-notes'>Notes</h3><div class='prose'>"
                     + "".join(md_block(n) for n in r.notes) + "</div>")
    rows = r.comparisons + r.unscored
    if rows:
        ordered = sorted(r.comparisons, key=lambda c: c.passed) + r.unscored  # misses first, then passes, then inputs
        parts.append(f"<h3 id='{a}-comparisons'>Comparisons</h3><details><summary>All {len(rows)} rows: "
                     f"{k['pass']} pass, {k['miss']} miss, {len(r.unscored)} not scored (misses first)</summary>"
                     f"{comparison_table(ordered)}</details>")
    if r.tables:
        parts.append(f"<h3 id='{a}-tables'>Tables</h3>")
        for t in r.tables:
            n_rows, n_cols = _table_shape(t["html"])
            head, rest = first_sentence(t["title"])
            more = f" <span class='more'>{md_inline(rest)}</span>" if rest else ""
            parts.append(f"<details><summary>{md_inline(head)} <span class='muted'>({n_rows} rows "
                         f"× {n_cols} columns)</span>{more}</summary>"
                         f"{_scroll(humanize_table(t['html']), tall=n_rows > 25)}</details>")
    return "".join(parts) + "</section>"


def render(reports: list[StudyReport], version: str, hrefs: dict[str, str] | None = None) -> str:
    """The report page. `hrefs` maps a figure's path to the link that opens it at full size (write_report fills
    it with paths relative to the page); without it figures link to their file:// URI."""
    reports = seed_order(reports)
    hrefs = hrefs or {}
    total = sum(len(r.comparisons) for r in reports)
    passed = sum(c.passed for r in reports for c in r.comparisons)
    parts = [f"<!doctype html><html lang='en'><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width,initial-scale=1'>"
             f"<title>fabricsim reproduction report</title><style>{CSS}</style><body>{ERROR_SENTINEL}",
             f"<h1>fabricsim reproduction report</h1><p class='meta'>fabricsim {html.escape(version)}, "
             f"generated {_dt.datetime.now().isoformat(timespec='seconds')}; {len(reports)} studies.</p>"]
    quick = [r for r in reports if r.quick]
    if quick:
        which = "every study" if len(quick) == len(reports) else "these studies: " + ", ".join(
            html.escape(r.study) for r in quick)
        parts.append(f"<div class='banner'>{QUICK_BANNER} <span>(Run with --quick: {which}. Numbers that need the "
                     "full seeds or durations may miss for that reason alone.)</span></div>")
    score = (f"<p class='score' id='headline'><b>{passed} of {total}</b> reference numbers (the papers', or ns-3's, closed forms, …: "
             "each table's reference column says which) reproduced within the stated tolerance")
    score += f"; <span class='miss'>{total - passed} missed</span>." if total > passed else "."
    roles = [c.role for r in reports for c in r.unscored]
    if roles:
        score += (f" Not counted, and labelled so in the tables: inputs (values we set from the paper): "
                  f"{roles.count('input')}; calibrated values (fitted to the paper's): {roles.count('calibrated')}.")
    parts.append(score + "</p><pre class='totals'>" + html.escape("\n".join(totals_lines(reports))) + "</pre>")
    parts.append(f"<section id='summary'><h2>Summary</h2>{summary_table(reports)}</section>")
    parts.append(toc(reports, total > passed))
    if total > passed:
        parts.append(misses_section(reports))
    parts += [study_section(r, hrefs) for r in reports]
    return "\n".join(parts) + "</body></html>"


def place_figures(reports: list[StudyReport], page: Path) -> dict[str, str]:
    """Links from the page at `page` to every figure: a figure in the page's folder (or below it) is linked where it
    is; any other is copied to `<page stem>_figures/<study>/` beside the page, so the links survive moving the page
    and that folder together. Returns {figure path: relative URL}."""
    root = page.parent.resolve()
    out = {}
    for r in reports:
        for f in r.figures:
            src = Path(f["path"])
            if not src.exists():
                continue
            target = src.resolve()
            if not target.is_relative_to(root):
                target = root / f"{page.stem}_figures" / r.study / src.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, target)
            out[f["path"]] = quote(Path(os.path.relpath(target, root)).as_posix())
    return out


def write_report(reports: list[StudyReport], path: str | Path, version: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render(reports, version, place_figures(reports, p)), encoding="utf-8")
    return p
