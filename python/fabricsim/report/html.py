"""The HTML reproduction report: every study's comparisons (paper, ours, difference, pass/miss), tables, figures inline.

Only scored rows (role "result") count in the pass total; inputs and calibrated values are listed in the same
table, labelled "input" or "calibrated", and counted apart."""

from __future__ import annotations

import base64
import datetime as _dt
import html
from pathlib import Path

from .reproduce import StudyReport

CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:0.6em 0 1.2em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.pass{color:#0a7d22;font-weight:600}.miss{color:#b3261e;font-weight:600}
.unscored{color:#666;font-style:italic}
figure{display:inline-block;margin:0.5em;max-width:520px}figure img{max-width:100%}figcaption{font-size:0.85em;color:#555}
.summary{color:#444;white-space:pre-wrap}
"""


def _num(v) -> str:
    if v is None:
        return "–"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def render(reports: list[StudyReport], version: str) -> str:
    parts = [f"<!doctype html><meta charset='utf-8'><title>fabricsim reproduction report</title><style>{CSS}</style>",
             f"<h1>fabricsim reproduction report</h1><p>fabricsim {html.escape(version)}, generated "
             f"{_dt.datetime.now().isoformat(timespec='seconds')}.</p>"]
    total = sum(len(r.comparisons) for r in reports)
    passed = sum(c.passed for r in reports for c in r.comparisons)
    score = f"<p><b>{passed} of {total}</b> published numbers reproduced within the stated tolerance."
    roles = [c.role for r in reports for c in r.unscored]
    if roles:
        score += (f" Not counted, and labelled so in the tables: inputs (values we set from the paper): "
                  f"{roles.count('input')}; calibrated values (fitted to the paper's): {roles.count('calibrated')}.")
    parts.append(score + "</p>")
    for r in reports:
        parts.append(f"<h2>{html.escape(r.title)}</h2><p class='summary'>{html.escape(r.summary)}</p>")
        parts.append(f"<p>{'quick setting' if r.quick else 'full setting'}; ran in {r.wall_s:.1f} s.</p>")
        if r.comparisons or r.unscored:
            parts.append("<table><tr><th class='l'>id</th><th class='l'>quantity</th><th>paper</th><th>ours</th>"
                         "<th>difference</th><th>tolerance</th><th>result</th><th class='l'>note</th></tr>")
            for c in r.comparisons + r.unscored:
                cls = ("pass" if c.passed else "miss") if c.scored else "unscored"
                label = cls if c.scored else c.role + ("" if c.passed else " (≠ paper)")
                diff = "–" if c.diff is None else f"{c.diff:+.4g}" + (f" ({c.diff / c.paper * 100:+.1f}%)" if c.paper else "")
                parts.append(
                    f"<tr><td class='l'>{html.escape(c.id)}</td><td class='l'>{html.escape(c.quantity)} "
                    f"{('[' + html.escape(c.unit) + ']') if c.unit else ''}</td><td>{_num(c.paper)}</td><td>{_num(c.ours)}</td>"
                    f"<td>{diff}</td><td>{html.escape(c.tolerance)}</td><td class='{cls}'>{html.escape(label)}</td>"
                    f"<td class='l'>{html.escape(c.note)}</td></tr>")
            parts.append("</table>")
        for t in r.tables:
            parts.append(f"<h3>{html.escape(t['title'])}</h3>{t['html']}")
        for f in r.figures:
            p = Path(f["path"])
            if p.exists():
                data = base64.b64encode(p.read_bytes()).decode()
                parts.append(f"<figure><img src='data:image/png;base64,{data}'><figcaption>{html.escape(f['caption'])}"
                             "</figcaption></figure>")
        for n in r.notes:
            parts.append(f"<p class='summary'>{html.escape(n)}</p>")
    return "\n".join(parts)


def write_report(reports: list[StudyReport], path: str | Path, version: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render(reports, version), encoding="utf-8")
    return p
