"""The figure of a UEC run (`run --figure` with transport = "uec"): each connection's window (or credit) over time,
the FCT CDF, the load of the fabric's upward switch ports (per path), and the transport's counters.

Everything is computed with numpy over whole columns: the window log (`windows.*`) is resampled on a common time
grid by one `searchsorted` over all connections at once, so the figure costs O(log rows · grid · connections) and
no Python loop runs over the log's rows.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..errors import ArgumentError  # noqa: E402
from ..record import MISSING, PS  # noqa: E402
from ..units import format_duration  # noqa: E402
from .figures import WIDTH_IN, mark_events, network_events  # noqa: E402

US = 1e6
"""Seconds → µs, the figure's time unit."""
MAX_DRAWN = 16
"""The window panel draws at most this many connections (chosen evenly over the message order)."""
GRID = 600
"""Points of the common time grid on which the median window is taken."""
COUNTERS = (("trims", "trimmed"), ("nacks", "NACKs"), ("retransmits", "re-sent"), ("timeouts", "timeouts"),
            ("ecn_echoes", "ECN echoes"))
"""The counters of `RunRecord.uec` the counter panel shows, with their bar labels."""


def drawn_connections(n: int, most: int = MAX_DRAWN) -> np.ndarray:
    """Indices of the connections the window panel draws: all of them up to `most`, else `most` spread evenly
    over 0..n-1 (the first and the last included)."""
    if n <= most:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, most).round().astype(np.int64))


def window_grid(rec, t_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, W): `rows` the flow rows of the UEC connections (message order) and W[i, j] connection i's window
    (bytes) at time t_s[j]: the last logged value at or before it, NaN before its first row and once it finished
    (its last byte acknowledged, else its delivery). One `searchsorted` over every connection's log at once."""
    rows = rec.uec_connections()
    c = rec.columns
    t, flow, b = c["windows.t_ps"], c["windows.flow"], c["windows.bytes"]
    out = np.full((len(rows), len(t_s)), np.nan)
    if not len(rows) or not len(t):
        return rows, out
    code = np.searchsorted(rows, flow)  # the connection index of each log row (flows are connections' rows)
    order = np.lexsort((t, code))
    span = np.uint64(int(max(int(t.max()), int((t_s.max() if len(t_s) else 0) / PS)) + 1))
    key = code[order].astype(np.uint64) * span + t[order]
    grid_ps = np.minimum((t_s / PS).astype(np.uint64), span - np.uint64(1))
    q = (np.arange(len(rows), dtype=np.uint64)[:, None] * span + grid_ps[None, :]).ravel()
    pos = np.searchsorted(key, q, side="right") - 1
    ok = (pos >= 0) & (code[order][np.maximum(pos, 0)] == np.repeat(np.arange(len(rows)), len(t_s)))
    vals = np.where(ok, b[order][np.maximum(pos, 0)].astype(np.float64), np.nan).reshape(len(rows), len(t_s))
    end = c["flows.acked_ps"][rows]
    end = np.where(end == MISSING, c["flows.complete_ps"][rows], end)
    end_s = np.where(end == MISSING, np.inf, end.astype(np.float64) * PS)
    vals[t_s[None, :] > end_s[:, None]] = np.nan
    return rows, vals


def _window_panel(ax, rec, cc: str | None) -> None:
    what = {"nscc": "congestion window (NSCC)", "rccc": "credit (RCCC)", "none": "window (no CC: the maximum)"}.get(
        cc or "", "window (NSCC) or credit (RCCC)")
    ax.set_ylabel("window (KB)" if cc != "rccc" else "credit (KB)")
    rows = rec.uec_connections()
    if not len(rows) or not len(rec.columns["windows.t_ps"]):
        ax.text(0.5, 0.5, "no window log", ha="center", va="center", transform=ax.transAxes)
        return
    end_s = rec.end_time_s
    grid = np.linspace(0.0, end_s, GRID)
    rows, w = window_grid(rec, grid)
    pick = drawn_connections(len(rows))
    c = rec.columns
    t, flow, b = c["windows.t_ps"], c["windows.flow"], c["windows.bytes"]
    code = np.searchsorted(rows, flow)
    acked = c["flows.acked_ps"]
    names = rec._flow_labels(rows[pick])
    cmap = plt.get_cmap("viridis")
    for k, (i, name) in enumerate(zip(pick.tolist(), names)):
        sel = code == i
        ti, bi = t[sel].astype(np.float64) * PS * US, b[sel] / 1e3
        if not len(ti):
            continue
        stop = acked[rows[i]]
        t_stop = end_s * US if stop == MISSING else stop * PS * US
        ax.step(np.append(ti, t_stop), np.append(bi, bi[-1]), where="post", lw=0.8, alpha=0.75,
                color=cmap(k / max(len(pick) - 1, 1)), label=name if len(pick) <= 8 else None)
    live = ~np.isnan(w)
    any_live = live.any(axis=0)
    med = np.full(len(grid), np.nan)
    if any_live.any():
        med[any_live] = np.nanmedian(w[:, any_live], axis=0)
    ax.plot(grid * US, med / 1e3, color="black", lw=2.6, label=f"median over the connections in flight ({len(rows)})")
    drawn = f"all {len(rows)} drawn" if len(pick) == len(rows) else f"{len(pick)} of {len(rows)} drawn (evenly chosen)"
    ax.set_title(f"{what} of each connection until its last ACK: {drawn}, median over all in black",
                 fontsize="medium", loc="left")
    ax.set_xlabel("time (µs)")
    ax.set_xlim(0, end_s * US)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="best", ncols=2)


def _fct_panel(ax, rec) -> None:
    fct = rec.uec_fct_s()
    done = np.sort(fct[~np.isnan(fct)]) * US
    ax.set_xlabel("FCT: sender's last ACK − start (µs)")
    ax.set_ylabel("fraction of connections")
    if not len(done):
        ax.text(0.5, 0.5, "no connection finished", ha="center", va="center", transform=ax.transAxes)
        return
    y = np.arange(1, len(done) + 1) / len(fct)
    ax.step(np.concatenate(([done[0]], done)), np.concatenate(([0.0], y)), where="post", color="tab:blue", lw=1.5)
    mean = float(done.mean())
    p99 = float(done[max(1, int(np.ceil(0.99 * len(done)))) - 1])
    ax.axvline(mean, color="tab:orange", ls="--", lw=1, label=f"mean {format_duration(mean * 1e6)}")
    ax.axvline(p99, color="tab:red", ls=":", lw=1.2, label=f"p99 {format_duration(p99 * 1e6)} (nearest rank)")
    unfinished = len(fct) - len(done)
    ax.set_title(f"FCT CDF of {len(fct):,} connections" + (f" ({unfinished:,} never finished)" if unfinished else ""),
                 fontsize="medium", loc="left")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small", loc="lower right")


def _graph_layers(rec, network) -> tuple[np.ndarray, np.ndarray]:
    """(node layer per node, peer node per port) of the record's fabric: layer 0 for hosts, else the fewest links
    to a host (`topology.nx.layers` of `network` when given; else a BFS over the record's ports from the hosts,
    taken to be the flows' endpoints and every node with one port)."""
    names = list(rec.scalars["node_names"])
    index = {n: i for i, n in enumerate(names)}
    qn = np.asarray(rec.scalars["queue_names"], dtype=str)
    peer_name = np.char.partition(qn, "->")[:, 2]
    peer_name = np.char.partition(peer_name, "#")[:, 0]
    peer = np.fromiter((index.get(p, -1) for p in peer_name.tolist()), dtype=np.int64, count=len(qn))
    node = rec.columns["queues.node"].astype(np.int64)
    if network is not None:
        from ..topology.nx import layers

        lay = layers(network)
        return np.array([lay.get(n, -1) for n in names], dtype=np.int64), peer
    layer = np.full(len(names), -1, dtype=np.int64)
    ports = np.bincount(node, minlength=len(names))
    hosts = np.union1d(rec.columns["flows.src"], rec.columns["flows.dst"]).astype(np.int64)
    layer[hosts] = 0
    layer[ports == 1] = 0
    ok = peer >= 0
    u, v = node[ok], peer[ok]
    d = 0
    while True:
        nxt = v[(layer[u] == d) & (layer[v] < 0)]
        if not len(nxt):
            break
        d += 1
        layer[nxt] = d
    return layer, peer


def upward_ports(rec, network=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ports, from_layer, to_layer): the fabric's upward switch ports (a switch's port whose peer is a switch
    further from the hosts: leaf→spine, edge→aggregation→core) as `queues` rows, with the layers of both ends."""
    layer, peer = _graph_layers(rec, network)
    node = rec.columns["queues.node"].astype(np.int64)
    lu = layer[node]
    lv = np.where(peer >= 0, layer[np.maximum(peer, 0)], -1)
    up = np.flatnonzero((lu >= 1) & (lv > lu))
    return up, lu[up], lv[up]


def imbalance(b: np.ndarray) -> float:
    """max / mean of the bytes `b` (1.0 = perfectly even; NaN for nothing carried)."""
    return float(b.max() / b.mean()) if len(b) and b.mean() > 0 else float("nan")


def _load_panel(ax, rec, network) -> None:
    ax.set_ylabel("bytes carried (MB)")
    up, lu, lv = upward_ports(rec, network)
    if not len(up):
        ax.text(0.5, 0.5, "no switch-to-switch ports (a single switch)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_xticks([])
        return
    sent = rec.columns["queues.tx_bytes"][up]
    names = rec.scalars["queue_names"]
    x0 = 0
    tiers = sorted(set(zip(lu.tolist(), lv.tolist())))
    for k, (a, b) in enumerate(tiers):
        sel = np.flatnonzero((lu == a) & (lv == b))
        carried = sel[sent[sel] > 0]
        vals = np.sort(sent[carried])[::-1].astype(np.float64)
        example = names[int(up[sel[0]])]
        ratio = imbalance(vals)
        label = (f"layer {a}→{b} (e.g. {example}): {len(carried):,} of {len(sel):,} ports carried traffic, "
                 f"max/mean {ratio:.2f}" if len(carried) else f"layer {a}→{b} (e.g. {example}): no traffic")
        ax.bar(np.arange(x0, x0 + len(vals)), vals / 1e6, width=1.0, color=f"C{k}", label=label, linewidth=0)
        if len(vals):
            ax.hlines(vals.mean() / 1e6, x0 - 0.5, x0 + len(vals) - 0.5, colors="black", linestyles="--", lw=1)
        x0 += len(vals) + max(2, len(vals) // 20)
    ax.set_title("per-path load: bytes each upward switch port sent (data and control), busiest first per layer, "
                 "dashed: mean", fontsize="medium", loc="left")
    ax.set_xlabel("upward switch ports that carried traffic, sorted")
    ax.set_xticks([])
    ax.set_xlim(-1, max(x0, 1))
    ax.legend(fontsize="small", loc="upper right")


def _counter_panel(ax, rec) -> None:
    u = rec.uec
    vals = [int(u.get(k, 0)) for k, _ in COUNTERS]
    bars = ax.bar([lab for _, lab in COUNTERS], vals, color=["C3", "C1", "C0", "C4", "C2"])
    ax.bar_label(bars, labels=[f"{v:,}" for v in vals], fontsize="small", padding=2)
    ax.set_ylabel("count (packets, events)")
    ax.set_ylim(0, max(max(vals), 1) * 1.15)
    ax.set_title(f"transport counters ({u.get('data_packets', 0):,} data packets sent)", fontsize="medium",
                 loc="left")
    ax.tick_params(axis="x", labelsize="small")


def uec_axes(rec, title: str = "", network=None, cc: str | None = None):
    """The figure of a UEC run, not saved: (a) each connection's window (`cc` = "rccc": credit) over time, at
    most 16 drawn and the median over all; (b) the FCT CDF (sender's last ACK − start); (c) the bytes each upward
    switch port carried, sorted per layer, with its max/mean imbalance (layers from `network`, the scenario's
    `topology.network()`, when given, else from the record); (d) trims, NACKs, re-sent packets, timeouts and ECN
    echoes. Network events are dashed lines on (a)."""
    if not rec.has_uec:
        raise ArgumentError("rec", "the record has no UEC section (a run with transport = \"uec\" at packet "
                                   "fidelity has one)")
    fig, axd = plt.subplot_mosaic([["window", "window"], ["fct", "counters"], ["load", "load"]],
                                  figsize=(WIDTH_IN, 12.5), layout="constrained",
                                  height_ratios=[1.15, 1.0, 1.0])
    _window_panel(axd["window"], rec, cc)
    mark_events(axd["window"], network_events(rec), scale=US)
    _fct_panel(axd["fct"], rec)
    _counter_panel(axd["counters"], rec)
    _load_panel(axd["load"], rec, network)
    for ax in axd.values():
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


def uec_figure(rec, path: str | Path, title: str = "", network=None, cc: str | None = None) -> None:
    """Draw `uec_axes` to `path` (its suffix is the format)."""
    fig = uec_axes(rec, title, network, cc)
    try:
        fig.savefig(path, dpi=150)
    finally:
        plt.close(fig)
