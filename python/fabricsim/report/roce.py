"""RoCE figures of one run: the bottleneck queue, each QP's rate and the PFC pause timeline (`run --figure`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..units import format_duration  # noqa: E402
from .figures import WIDTH_IN  # noqa: E402

US = 1e6
"""Seconds → µs, the figures' time unit."""
MAX_LEGEND = 10
"""The rate panel names its QPs when there are at most this many."""
MAX_PORT_LABELS = 40
"""The pause panel names its rows (ports) when there are at most this many."""


def pause_intervals(rec) -> list[tuple[str, float, float]]:
    """(port, start_s, end_s) of every paused interval, from the PFC log: a PAUSE opens one at a port that was not
    paused, the next RESUME closes it; one still open at the end closes at the record's end. In log order."""
    ev = rec.pfc_events()
    open_at: dict[str, float] = {}
    out: list[tuple[str, float, float]] = []
    for t, port, pause in zip(ev["t_s"].tolist(), ev["port"].tolist(), ev["pause"].tolist()):
        if pause:
            open_at.setdefault(port, t)
        elif port in open_at:
            out.append((port, open_at.pop(port), t))
    out += [(port, t, rec.end_time_s) for port, t in open_at.items()]
    return out


def bottleneck_port(rec) -> int | None:
    """The sampled port (a `queues` row) with the highest peak bytes, or None without queue samples."""
    sampled = np.unique(rec.columns.get("samples.port", np.zeros(0, dtype=np.uint32)))
    if not len(sampled):
        return None
    peaks = rec.columns["queues.peak_bytes"][sampled]
    return int(sampled[int(np.argmax(peaks))])


def _queue_panel(ax, rec) -> None:
    ax.set_ylabel("queue (KB)")
    port = bottleneck_port(rec)
    if port is None:
        ax.text(0.5, 0.5, "no queue samples (set [measure] queue_interval)", ha="center", va="center",
                transform=ax.transAxes)
        return
    pick = rec.columns["samples.port"] == port
    t = rec.columns["samples.t_ps"][pick] * 1e-12 * US
    ax.plot(t, rec.columns["samples.bytes"][pick] / 1e3, lw=1.2, color="tab:blue")
    ax.set_title(f"bottleneck queue: {rec.scalars['queue_names'][port]} (the sampled port with the highest peak)",
                 fontsize="medium", loc="left")


def _rate_panel(ax, rec) -> None:
    ax.set_ylabel("rate (Gb/s)")
    rates = rec.rates()
    if not len(rates):
        ax.text(0.5, 0.5, "no RDMA queue pairs (transport = \"rdma\" logs their rates)", ha="center", va="center",
                transform=ax.transAxes)
        return
    done = rec.columns["flows.complete_ps"]
    row_of = dict(zip(rates["flow"].tolist(), rec.columns["rates.flow"].tolist()))
    groups = rates.groupby("flow", observed=True, sort=False)
    for name, g in groups:
        t, r = g["t_s"].to_numpy() * US, g["rate_gbps"].to_numpy()
        end = done[row_of[name]]
        t_end = rec.end_time_s if end == np.iinfo(np.uint64).max else end * 1e-12
        ax.step(np.append(t, t_end * US), np.append(r, r[-1]), where="post", lw=1.0, label=str(name))
    ax.set_title(f"rate of each queue pair ({groups.ngroups}), until its message completes", fontsize="medium",
                 loc="left")
    if groups.ngroups <= MAX_LEGEND:
        ax.legend(fontsize="small", ncols=min(groups.ngroups, 5), loc="upper right")


def _pause_panel(ax, rec) -> None:
    spans = pause_intervals(rec)
    if not spans:
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no PFC pause", ha="center", va="center", transform=ax.transAxes)
        return
    first: dict[str, float] = {}
    for p, a, _ in spans:
        first[p] = min(a, first.get(p, a))
    ports = sorted(first, key=first.__getitem__)  # in the order they were first paused
    for row, port in enumerate(ports):
        bars = [(a * US, (b - a) * US) for p, a, b in spans if p == port]
        ax.broken_barh(bars, (row - 0.4, 0.8), color="tab:red")
    if len(ports) <= MAX_PORT_LABELS:
        ax.set_yticks(range(len(ports)), ports, fontsize="small")
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(ports)} ports, first paused at the top")
    ax.set_ylim(-0.6, len(ports) - 0.4)
    ax.invert_yaxis()
    ax.set_title(f"paused ports ({len(ports)}): {rec.pfc_pauses:,} PAUSE frames, "
                 f"{format_duration(rec.pfc_paused_s * 1e12)} paused in all", fontsize="medium", loc="left")


def roce_figure(rec, path: str | Path, title: str = "") -> None:
    """Draw a RoCE run's three panels to `path` (its suffix is the format): the bottleneck queue over time (the
    sampled switch port with the highest peak), each queue pair's rate (a step per rate change) and the pause
    timeline (a row per port that was ever paused, a bar per paused interval). Time in µs, shared by the three.
    O(samples + rate changes + PFC frames)."""
    n_paused = len({p for p, _, _ in pause_intervals(rec)})
    pause_height = min(3.0, 0.2 * n_paused) if n_paused > 3 else 0.6
    fig, axes = plt.subplots(3, 1, figsize=(WIDTH_IN, 8 + 0.15 * max(n_paused - 6, 0)), sharex=True,
                             layout="constrained", height_ratios=[1, 1, pause_height])
    _queue_panel(axes[0], rec)
    _rate_panel(axes[1], rec)
    _pause_panel(axes[2], rec)
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[2].set_xlabel("time (µs)")
    axes[2].set_xlim(0, rec.end_time_s * US)
    if rec.deadlock:
        title = f"{title}   DEADLOCK: {rec.deadlock}" if title else f"deadlock: {rec.deadlock}"
    if title:
        fig.suptitle(title)
    try:
        fig.savefig(path, dpi=150)
    finally:
        plt.close(fig)
