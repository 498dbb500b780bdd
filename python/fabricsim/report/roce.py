"""Figures of one run (`run --figure`): delivered throughput over time with the network events marked, and for RoCE
runs the bottleneck queue, each QP's rate and the PFC pause timeline."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..units import format_duration  # noqa: E402
from .figures import WIDTH_IN, mark_events, network_events  # noqa: E402

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


def _throughput_panel(ax, rec) -> None:
    """Payload delivered per throughput bin, in Gb/s, as steps; the title says what the retransmissions cost."""
    ax.set_ylabel("delivered (Gb/s)")
    tp = rec.throughput()
    if not len(tp):
        ax.text(0.5, 0.5, "no throughput bins (set [measure] throughput_interval)", ha="center", va="center",
                transform=ax.transAxes)
        return
    t = tp["t_s"].to_numpy() * US
    bin_us = float(t[1] - t[0]) if len(t) > 1 else rec.scalars["bin_ps"] * 1e-12 * US
    g = tp["gbps"].to_numpy()
    ax.step(np.append(t, t[-1] + bin_us), np.append(g, g[-1]), where="post", lw=1.2, color="tab:green")
    rt = rec.retransmit
    cost = (f"; {rt['packets']:,} packets re-sent after {rt['timeouts']:,} timeouts"
            + (f", {rt['abandoned']:,} messages gave up" if rt["abandoned"] else "")) if rt else ""
    ax.set_title(f"delivered throughput (payload per {format_duration(bin_us * 1e6)}){cost}", fontsize="medium",
                 loc="left")


def run_axes(rec, title: str = ""):
    """The figure of one run, not saved: delivered throughput over time (when the run has throughput bins) and,
    for a RoCE run, its bottleneck queue, queue-pair rates and pause timeline below, time in µs shared by all;
    every network event of the record is a dashed vertical line (labelled on the top panel), the completion a
    dotted one. O(bins + samples + rate changes + PFC frames)."""
    roce = rec.has_roce
    tput = rec.scalars.get("bin_ps") is not None
    n_paused = len({p for p, _, _ in pause_intervals(rec)}) if roce else 0
    pause_height = min(3.0, 0.2 * n_paused) if n_paused > 3 else 0.6
    panels = (["throughput"] if tput or not roce else []) + (["queue", "rate", "pause"] if roce else [])
    ratios = [pause_height if p == "pause" else 1 for p in panels]
    height = (8 + 0.15 * max(n_paused - 6, 0) if roce else 0) + (2.8 if panels[0] == "throughput" else 0)
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH_IN, max(height, 3.6)), sharex=True, squeeze=False,
                             layout="constrained", height_ratios=ratios)
    axes = axes[:, 0]
    draw = {"throughput": _throughput_panel, "queue": _queue_panel, "rate": _rate_panel, "pause": _pause_panel}
    events = network_events(rec)
    for k, (ax, name) in enumerate(zip(axes, panels)):
        draw[name](ax, rec)
        ax.grid(alpha=0.3)
        mark_events(ax, events, scale=US, label=k == 0)
        if rec.completion_time_s is not None:
            ax.axvline(rec.completion_time_s * US, color="black", linestyle=":", linewidth=1.0)
    axes[-1].set_xlabel("time (µs)")
    axes[-1].set_xlim(0, rec.end_time_s * US)
    if rec.deadlock:
        title = f"{title}   DEADLOCK: {rec.deadlock}" if title else f"deadlock: {rec.deadlock}"
    if title:
        fig.suptitle(title)
    return fig


def run_figure(rec, path: str | Path, title: str = "") -> None:
    """Draw `run_axes` to `path` (its suffix is the format)."""
    fig = run_axes(rec, title)
    try:
        fig.savefig(path, dpi=150)
    finally:
        plt.close(fig)


def roce_figure(rec, path: str | Path, title: str = "") -> None:
    """A RoCE run's figure (`run_figure`: its queue, rate and pause panels, under its throughput when it has
    throughput bins)."""
    run_figure(rec, path, title)
