"""The figure library: the studies' figure kinds drawn from result frames (never simulating). Each returns a Figure."""

from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _fig(title: str, xlabel: str, ylabel: str, size=(6.4, 4.0)):
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    return fig, ax


def grouped_bars(summary, x: str, metric: str, group: str | None = None, *, title: str = "", ylabel: str | None = None,
                 paper: dict | None = None, paper_label: str = "paper", logy: bool = False):
    """Bars of `<metric>_mean` per `x` (clustered by `group`) with 95% CI whiskers (`<metric>_ci95`).
    `paper` maps x (or (x, group)) to a published value drawn as a black marker beside the bar; `logy`
    draws the value axis on a log scale (for groups that differ by orders of magnitude)."""
    xs = list(dict.fromkeys(summary[x]))
    groups = list(dict.fromkeys(summary[group])) if group else [None]
    width = 0.8 / len(groups)
    fig, ax = _fig(title, x, ylabel or metric, size=(max(6.4, 0.6 * len(xs) * len(groups)), 4.0))
    for gi, g in enumerate(groups):
        sub = summary if g is None else summary[summary[group] == g]
        means = [sub[sub[x] == v][f"{metric}_mean"].mean() for v in xs]
        errs = [np.nan_to_num(sub[sub[x] == v][f"{metric}_ci95"].mean()) for v in xs]
        pos = np.arange(len(xs)) + (gi - (len(groups) - 1) / 2) * width
        ax.bar(pos, means, width * 0.95, yerr=errs, capsize=3, label=None if g is None else str(g))
        if paper:
            pv = [paper.get((v, g) if g is not None else v) for v in xs]
            ax.scatter([p for p, v in zip(pos, pv) if v is not None], [v for v in pv if v is not None],
                       marker="D", color="black", zorder=3, label=paper_label if gi == 0 else None)
    ax.set_xticks(np.arange(len(xs)), [str(v) for v in xs], rotation=30 if len(xs) > 6 else 0, ha="right" if len(xs) > 6 else "center")
    if logy:
        ax.set_yscale("log")
    if group or paper:
        ax.legend(fontsize="small")
    return fig


def distribution(frame, x: str, metric: str, *, kind: str = "box", title: str = "", ylabel: str | None = None):
    """Box or violin plots of `metric` for each value of `x` (one box per group of runs)."""
    xs = list(dict.fromkeys(frame[x]))
    data = [frame[frame[x] == v][metric].dropna().to_numpy() for v in xs]
    fig, ax = _fig(title, x, ylabel or metric)
    if kind == "violin":
        ax.violinplot(data, showmeans=True)
    elif kind == "box":
        ax.boxplot(data)
    else:
        raise ValueError(f"kind must be 'box' or 'violin', not '{kind}'")
    ax.set_xticks(range(1, len(xs) + 1), [str(v) for v in xs])
    return fig


def heatmap(pivot, *, title: str = "", xlabel: str = "", ylabel: str = "", cbar: str = "", fmt: str = "{:.0f}"):
    """A heatmap of a pivot table (index = rows, columns = columns), each cell annotated."""
    fig, ax = _fig(title, xlabel, ylabel)
    ax.grid(False)
    im = ax.imshow(pivot.to_numpy(dtype=float), aspect="auto", cmap="viridis", origin="lower")
    ax.set_xticks(range(len(pivot.columns)), [str(c) for c in pivot.columns])
    ax.set_yticks(range(len(pivot.index)), [str(i) for i in pivot.index])
    for (i, j), v in np.ndenumerate(pivot.to_numpy(dtype=float)):
        if not np.isnan(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", color="white", fontsize="small")
    fig.colorbar(im, ax=ax, label=cbar)
    return fig


def timeseries(t: Sequence[float], series: dict[str, Sequence[float]], *, title: str = "", xlabel: str = "time (s)",
               ylabel: str = "", step: bool = True):
    """One line per named series over time (steps by default, as queue depths are)."""
    fig, ax = _fig(title, xlabel, ylabel, size=(8.0, 3.6))
    for name, y in series.items():
        (ax.step(t, y, where="post", label=name) if step else ax.plot(t, y, label=name))
    if len(series) > 1:
        ax.legend(fontsize="small")
    return fig


def lines(summary, x: str, metric: str, group: str | None = None, *, title: str = "", ylabel: str | None = None,
          ci: bool = True):
    """Lines with markers of `<metric>_mean` against `x`, one per `group`, with shaded 95% CIs."""
    fig, ax = _fig(title, x, ylabel or metric)
    for g in (list(dict.fromkeys(summary[group])) if group else [None]):
        sub = (summary if g is None else summary[summary[group] == g]).sort_values(x)
        m = sub[f"{metric}_mean"].to_numpy(dtype=float)
        ax.plot(sub[x], m, marker="o", label=None if g is None else str(g))
        if ci and f"{metric}_ci95" in sub:
            h = np.nan_to_num(sub[f"{metric}_ci95"].to_numpy(dtype=float))
            ax.fill_between(sub[x], m - h, m + h, alpha=0.2)
    if group:
        ax.legend(fontsize="small")
    return fig


def save(fig, path) -> str:
    """Save as PNG (150 dpi) and close; returns the path."""
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return str(path)
