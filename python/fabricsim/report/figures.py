"""The figure library: the studies' figure kinds drawn from result frames (never simulating). Each returns a Figure."""

from __future__ import annotations

from typing import Callable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402

from .stats import column_label  # noqa: E402

WIDTH_IN = 10.0
"""Figure width in inches: the report shows figures at its full content width (about 1,150 px), so every figure is
drawn this wide (1,500 px at 150 dpi) and its 10 pt text shows at about 16 px whatever its number of bars."""
PAPER_STYLE = dict(marker="D", s=46, color="black", edgecolor="white", linewidths=0.8, zorder=5)
"""How a published value is marked on our figures (a black diamond), everywhere the same."""

Labeler = Callable[[object], str] | str | None


def _fig(title: str, xlabel: str, ylabel: str, size=(WIDTH_IN, 4.2)):
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    return fig, ax


def legend(fig, ax, below: bool = False, **kw) -> None:
    """The axes' legend, our series first and markers (the paper's values) after them; inside the axes where it
    covers the least, or (`below`) in a row under the plot, where it covers nothing (for plots that fill their
    area)."""
    pairs = sorted(zip(*ax.get_legend_handles_labels()), key=lambda hl: isinstance(hl[0], PathCollection))
    handles, labels = [h for h, _ in pairs], [lb for _, lb in pairs]
    if below:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 3), fontsize="small", **kw)
    else:
        ax.legend(handles, labels, fontsize="small", **kw)


def group_name(label: Labeler, value) -> str:
    """A legend entry for group `value`: `label` is a format string ("{:g} MiB"), a function, or None (the value)."""
    if label is None:
        return str(value)
    return label(value) if callable(label) else label.format(value)


def plural(unit: str) -> Callable[[object], str]:
    """A labeler for counts: plural("interface")(1) = "1 interface", (4) = "4 interfaces"."""
    return lambda n: f"{n:g} {unit}" + ("" if float(n) == 1 else "s")


def clipped_err(means, halves) -> np.ndarray:
    """Error bars (2 × n, below and above) of ±`halves` around `means`, the lower arm cut at zero for non-negative
    means: a quantity that cannot be negative never shows a whisker below 0 (and a log axis never sees one)."""
    m = np.asarray(means, dtype=float)
    h = np.nan_to_num(np.asarray(halves, dtype=float))
    below = np.where(m >= 0, np.minimum(h, np.nan_to_num(m)), h)
    return np.vstack([below, h])


def mark_paper(ax, xs, values, label: str = "paper") -> None:
    """Published values as black diamonds at positions `xs` (None values skipped), with one legend entry."""
    pts = [(x, v) for x, v in zip(xs, values) if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if pts:
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=label, **PAPER_STYLE)


def grouped_bars(summary, x: str, metric: str, group: str | None = None, *, title: str = "", ylabel: str | None = None,
                 xlabel: str | None = None, paper: dict | None = None, paper_label: str = "paper", logy: bool = False,
                 group_label: Labeler = None, legend_title: str | None = None, bar_label: str | None = None,
                 legend_below: bool = False):
    """Bars of `<metric>_mean` per `x` (clustered by `group`) with 95% CI whiskers (`<metric>_ci95`), cut at zero.
    `paper` maps x (or (x, group)) to a published value drawn as a black diamond on the bar; `logy` draws the value
    axis on a log scale (for groups that differ by orders of magnitude); `group_label` names a group in the legend
    (a format string such as "{:g} MiB" or a function, e.g. plural("interface")), `legend_title` heads it;
    `bar_label` names the bars in the legend when there are no groups (e.g. "fabricsim"); `legend_below` puts the
    legend under the plot instead of inside it."""
    xs = list(dict.fromkeys(summary[x]))
    groups = list(dict.fromkeys(summary[group])) if group else [None]
    width = 0.8 / len(groups)
    fig, ax = _fig(title, xlabel or column_label(x), ylabel or column_label(metric))
    for gi, g in enumerate(groups):
        sub = summary if g is None else summary[summary[group] == g]
        means = [sub[sub[x] == v][f"{metric}_mean"].mean() for v in xs]
        halves = [sub[sub[x] == v][f"{metric}_ci95"].mean() if f"{metric}_ci95" in sub else np.nan for v in xs]
        pos = np.arange(len(xs)) + (gi - (len(groups) - 1) / 2) * width
        ax.bar(pos, means, width * 0.95, yerr=clipped_err(means, halves), capsize=3,
               label=bar_label if g is None else group_name(group_label, g))
        if paper:
            mark_paper(ax, pos, [paper.get((v, g) if g is not None else v) for v in xs],
                       label=paper_label if gi == 0 else "_nolegend_")
    rotate = len(xs) > 8
    ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs], rotation=30 if rotate else 0,
                  ha="right" if rotate else "center")
    ax.set_xlim(-0.6, len(xs) - 0.4)
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    if group or paper:
        legend(fig, ax, legend_below, title=legend_title)
    return fig


def distribution(frame, x: str, metric: str, *, kind: str = "box", title: str = "", ylabel: str | None = None,
                 xlabel: str | None = None, paper: dict | None = None, paper_label: str = "paper"):
    """Box or violin plots of `metric` for each value of `x` (one box per group of runs). `paper` maps an x value
    to a published value or a list of them, drawn as black diamonds on that box."""
    xs = list(dict.fromkeys(frame[x]))
    data = [frame[frame[x] == v][metric].dropna().to_numpy() for v in xs]
    fig, ax = _fig(title, xlabel or column_label(x), ylabel or column_label(metric))
    if kind == "violin":
        ax.violinplot(data, showmeans=True)
    elif kind == "box":
        ax.boxplot(data)
    else:
        raise ValueError(f"kind must be 'box' or 'violin', not '{kind}'")
    ax.set_xticks(range(1, len(xs) + 1), [str(v) for v in xs])
    if paper:
        pts = [(i + 1, v) for i, x_ in enumerate(xs) for v in np.atleast_1d(paper.get(x_, [])) if v is not None]
        mark_paper(ax, [p[0] for p in pts], [p[1] for p in pts], label=paper_label)
        legend(fig, ax)
    return fig


def text_color(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour `rgba` (relative luminance above 0.45: black)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def annotate_cells(ax, im, values, fmt: str = "{:.0f}", fontsize: float = 10) -> None:
    """Write each non-NaN cell's value on an imshow heatmap, in black or white as its colour needs."""
    for (i, j), v in np.ndenumerate(np.asarray(values, dtype=float)):
        if not np.isnan(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=fontsize,
                    color=text_color(im.cmap(im.norm(v))))


def heatmap(pivot, *, title: str = "", xlabel: str = "", ylabel: str = "", cbar: str = "", fmt: str = "{:.0f}"):
    """A heatmap of a pivot table (index = rows, columns = columns), each cell annotated."""
    fig, ax = _fig(title, xlabel, ylabel, size=(WIDTH_IN, 5.5))
    ax.grid(False)
    values = pivot.to_numpy(dtype=float)
    im = ax.imshow(values, aspect="auto", cmap="viridis", origin="lower")
    ax.set_xticks(range(len(pivot.columns)), [str(c) for c in pivot.columns])
    ax.set_yticks(range(len(pivot.index)), [str(i) for i in pivot.index])
    annotate_cells(ax, im, values, fmt)
    fig.colorbar(im, ax=ax, label=cbar)
    return fig


def timeseries(t: Sequence[float], series: dict[str, Sequence[float]], *, title: str = "", xlabel: str = "time (s)",
               ylabel: str = "", step: bool = True, hlines: dict[str, float] | None = None,
               styles: dict[str, dict] | None = None):
    """One line per named series over time (steps by default, as queue depths are); `styles` maps a series to
    line properties (e.g. dashed); `hlines` maps a label to a level drawn as a dotted horizontal line (e.g. a
    published peak). The legend goes under the plot: queue traces fill their area."""
    fig, ax = _fig(title, xlabel, ylabel, size=(WIDTH_IN, 3.8))
    for name, y in series.items():
        kw = dict(label=name, **(styles or {}).get(name, {}))
        (ax.step(t, y, where="post", **kw) if step else ax.plot(t, y, **kw))
    for name, level in (hlines or {}).items():
        ax.axhline(level, color="tab:red", linestyle=":", linewidth=1.5, label=name)
    if len(series) + len(hlines or {}) > 1:
        legend(fig, ax, below=True)
    return fig


def lines(summary, x: str, metric: str, group: str | None = None, *, title: str = "", ylabel: str | None = None,
          xlabel: str | None = None, ci: bool = True, paper: dict | None = None, paper_label: str = "paper",
          group_label: Labeler = None):
    """Lines with markers of `<metric>_mean` against `x`, one per `group`, with shaded 95% CIs (cut at zero for
    non-negative means). `paper` maps (x, group) (or x without groups) to a published value, drawn as a black
    diamond; `group_label` names a group in the legend as in grouped_bars."""
    fig, ax = _fig(title, xlabel or column_label(x), ylabel or column_label(metric))
    for g in (list(dict.fromkeys(summary[group])) if group else [None]):
        sub = (summary if g is None else summary[summary[group] == g]).sort_values(x)
        m = sub[f"{metric}_mean"].to_numpy(dtype=float)
        ax.plot(sub[x], m, marker="o", label=None if g is None else group_name(group_label, g))
        if ci and f"{metric}_ci95" in sub:
            below, above = clipped_err(m, sub[f"{metric}_ci95"].to_numpy(dtype=float))
            ax.fill_between(sub[x], m - below, m + above, alpha=0.2)
    if paper:
        keys = list(paper)
        mark_paper(ax, [k[0] if isinstance(k, tuple) else k for k in keys], [paper[k] for k in keys], label=paper_label)
    if group or paper:
        legend(fig, ax)
    return fig


def network_events(rec) -> list[tuple[float, str]]:
    """(t_s, label) of each network event a run record holds (its scenario's `[[events]]`), in time order: the
    label says what and where ("link_down leaf0-spine1", "ber 1e-07 leaf0-spine1", "link_rate 25 Gb/s
    leaf0-spine1"). Empty without events."""
    from ..units import format_rate

    out = []
    for e in rec.scalars.get("net_events") or ():
        if e["kind"] == "ber":
            what = f"ber {e['ber']:g}"
        elif e["kind"] == "link_rate":
            what = f"link_rate {format_rate(e['rate_bps'])}"
        else:
            what = e["kind"]
        out.append((e["t_ps"] / 1e12, f"{what} {', '.join(e['links'])}"))
    return out


EVENT_STYLE = dict(color="tab:red", linestyle="--", linewidth=1.2, zorder=4)
"""How a network event is marked on a time axis (a dashed red vertical line), everywhere the same."""


def mark_events(ax, events: Sequence[tuple[float, str]], scale: float = 1.0, label: bool = True) -> None:
    """A vertical line at each event's time (× `scale`: 1e6 for an axis in µs) and, with `label`, its label at the
    top of the axes."""
    for t, text in events:
        ax.axvline(t * scale, **EVENT_STYLE)
        if label:
            ax.annotate(text, (t * scale, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                        textcoords="offset points", ha="left", va="top", fontsize="small", color="tab:red",
                        rotation=0, clip_on=False)


def save(fig, path) -> str:
    """Save as PNG (150 dpi) and close; returns the path."""
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return str(path)
