"""Runs side by side (`fabricsim compare`): completion time, flow completion times (FCT) and their CDF, slowdown,
PFC pauses, ECN marks, CNPs and queue depth, from the JSON records `fabricsim run --json` writes (one run) or
`fabricsim run --seeds K --json` writes (K runs, pooled), and from sweep stores (a store folder or its
results.sqlite: one column per sweep point, its seeds pooled; a store keeps run-level metrics, not flows, so
its columns have no FCT or slowdown).

Definitions (every number in the table, the figure and `--json`):

- A message's FCT is its `complete_s - start_s` (from the moment its workload released it to its last byte's
  arrival); messages that never completed are counted apart (`completed` of `messages`). Percentiles are
  nearest-rank: p-th percentile = the ⌈p·n/100⌉-th smallest FCT, a value some message really took.
- A message's ideal FCT is what it would take alone on an idle fabric: its bytes on the wire (`tx_bytes`, headers
  included) at the path's bottleneck rate, plus the path's base latency: ideal = tx_bytes·8 / bottleneck rate +
  Σ link propagation delays + Σ switch latencies, on the fewest-hops path between its hosts (parallel links
  counted at their fastest). The base latency is one way (half the base RTT) because an FCT here ends when the
  last byte arrives, with no acknowledgement to wait for. Its slowdown is FCT / ideal FCT (≥ 1: the ideal
  leaves out even the per-hop store-and-forward of one packet). It needs the fabric (`fabric=`): a run
  record names its flows' hosts but not the links' rates.
- Completion time: the mean and the half-width of its 95% CI (Student t) over the file's runs that completed;
  pauses, marks, CNPs and paused time: mean over the file's runs; peak queue: the deepest egress queue of any of
  its runs (bytes, its name).
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FabricsimError

IDEAL_FCT = ("tx_bytes·8 / bottleneck rate + one-way base latency (Σ link delays + Σ switch latencies) on the "
             "fewest-hops path")
"""The ideal FCT in one line (the table's footnote, the --json `ideal_fct`)."""
PERCENTILES = (50, 99)
MAX_COLUMNS = 12
"""The table, the figure and the page show the first this many files or sweep points; `--json` has them all."""
ROCE_KEYS = ("pfc_pauses", "pfc_paused_s", "ecn_marks", "cnps")
UEC_KEYS = ("trims", "nacks", "timeouts", "retransmits")
"""A UEC run's counters the table shows (`RunRecord.uec`; a sweep stores them as `uec_<key>`)."""


class CompareError(FabricsimError, ValueError):
    """An input `fabricsim compare` cannot read: a missing or unreadable file, not JSON, not a run record. The
    message is one line naming the file."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


@dataclass
class Compared:
    """One input file: its label, path and run records (one, or one per seed)."""

    label: str
    path: str
    records: list[dict[str, Any]]
    fct_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    slowdown: np.ndarray | None = None
    stored: list[tuple[int, str, dict[str, Any]]] | None = None
    """A sweep point's stored runs instead of records: (seed, status, metrics) each."""


def _is_record(d: Any) -> bool:
    return isinstance(d, dict) and isinstance(d.get("flows"), list) and "completion_time_s" in d \
        and isinstance(d.get("packets"), dict) and isinstance(d.get("queues"), list)


def read_runs(path: str | Path) -> list[dict[str, Any]]:
    """The run records in a JSON file: `run --json`'s one record, or the `runs` of `run --seeds K --json`.
    CompareError naming the file otherwise."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CompareError(p, "no such file") from None
    except IsADirectoryError:
        raise CompareError(p, "is a folder, not a run record (the JSON of fabricsim run --json)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CompareError(p, f"cannot read it: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise CompareError(p, f"not JSON ({e}); give the output of fabricsim run --json") from None
    if _is_record(doc):
        return [doc]
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list) and doc["runs"] and all(map(_is_record, doc["runs"])):
        return doc["runs"]
    raise CompareError(p, "not a run record: expected the JSON of fabricsim run --json (flows, packets, queues, "
                          "completion_time_s) or of run --seeds K --json (its runs)")


def labels_for(paths: list[str]) -> list[str]:
    """Short labels: the file names without .json, made unique with their folder when two share a name."""
    stems = [Path(p).stem for p in paths]
    return [s if stems.count(s) == 1 else f"{Path(p).parent.name}/{s}" for s, p in zip(stems, paths)]


def is_store(path: str | Path) -> bool:
    """Whether `path` is a sweep store: a folder holding results.sqlite, or an SQLite database file."""
    p = Path(path)
    if p.is_dir():
        return (p / "results.sqlite").is_file()
    try:
        with open(p, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def store_points(path: str | Path) -> list[Compared]:
    """One Compared per point of every sweep in the store at `path` (store order), its measured runs (ok and
    incomplete) pooled; CompareError naming the store if it is not one or holds no measured run."""
    from ..sweep.store import MEASURED, Store, StoreError

    try:
        with Store(path) as st:
            got = st.db.execute("SELECT sweep, point_key, params, seed, status, metrics FROM runs WHERE status IN "
                                f"({','.join('?' * len(MEASURED))}) ORDER BY rowid", MEASURED).fetchall()
    except StoreError as e:
        raise CompareError(path, e.reason) from None
    if not got:
        raise CompareError(path, "a sweep store without a measured run (ok or incomplete)")
    points: dict[tuple[str, str], Compared] = {}
    for sweep, key, params, seed, status, metrics in got:
        if (sweep, key) not in points:
            label = ", ".join(f"{k} = {v}" for k, v in json.loads(params).items())
            points[(sweep, key)] = Compared(f"{sweep}[{label}]" if label else sweep, str(path), [], stored=[])
        points[(sweep, key)].stored.append((seed, status, json.loads(metrics) if metrics else {}))
    return list(points.values())


# ---- FCT and the ideal FCT ---------------------------------------------------------------------------------------

def _messages(rec: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in rec["flows"] if f.get("kind", "message") == "message"]


def fcts(rec: dict[str, Any]) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """The FCTs (s) of a record's completed messages, and those messages (same order)."""
    done = [f for f in _messages(rec) if f.get("complete_s") is not None and f.get("start_s") is not None]
    return np.array([f["complete_s"] - f["start_s"] for f in done], dtype=float), done


class IdealFct:
    """Ideal FCTs on a network (a `spec.network.Network`): per host pair, the fewest-hops path's bottleneck rate
    and one-way base latency (module docstring), cached."""

    def __init__(self, network):
        from ..topology.nx import to_networkx

        self.g = to_networkx(network)
        self._paths: dict[str, dict[str, list[str]]] = {}
        self._pair: dict[tuple[str, str], tuple[float, float]] = {}

    def path(self, src: str, dst: str) -> tuple[float, float]:
        """(bottleneck rate in bit/s, one-way base latency in s) from src to dst."""
        key = (src, dst)
        if key not in self._pair:
            import networkx as nx

            if src not in self._paths:
                self._paths[src] = nx.single_source_shortest_path(self.g, src)
            hops = self._paths[src].get(dst)
            if hops is None:
                raise CompareError("--fabric", f"no path from {src} to {dst}: is it the fabric the runs used?")
            rate, delay_ps = math.inf, 0
            for a, b in zip(hops, hops[1:]):
                links = self.g.get_edge_data(a, b).values()
                rate = min(rate, max(e["rate_bps"] for e in links))
                delay_ps += min(e["delay_ps"] for e in links)
            delay_ps += sum(self.g.nodes[n].get("latency_ps") or 0 for n in hops[1:-1])
            self._pair[key] = (float(rate), delay_ps * 1e-12)
        return self._pair[key]

    def ideal(self, flow: dict[str, Any]) -> float:
        """The ideal FCT (s) of one message (a record's flow row)."""
        for end in ("src", "dst"):
            if flow[end] not in self.g:
                raise CompareError("--fabric", f"has no node {flow[end]!r} (a host of message {flow['name']!r}): "
                                              "give the fabric the runs used")
        rate, base = self.path(flow["src"], flow["dst"])
        return flow["tx_bytes"] * 8 / rate + base


def network_of(fabric: str):
    """The Network of a fabric: a built-in fabric's name, or a scenario or fabric file (its traffic ignored)."""
    from ..collectives.fabrics import FABRIC_KEY, read_fabric
    from ..spec import scenario_from_dict

    fab = read_fabric(fabric)
    doc = {k: v for k, v in fab.doc.items() if k != FABRIC_KEY}
    return scenario_from_dict(doc, fab.name or str(fabric)).topology.network()


# ---- the comparison ----------------------------------------------------------------------------------------------

def nearest_rank(x: np.ndarray, p: float) -> float | None:
    """The p-th percentile, nearest rank: the ⌈p·n/100⌉-th smallest value (None without values)."""
    if not len(x):
        return None
    k = max(1, math.ceil(p * len(x) / 100))
    return float(np.sort(x)[k - 1])


def _dist(x: np.ndarray | None) -> dict[str, float | None] | None:
    if x is None:
        return None
    out = {f"p{p}": nearest_rank(x, p) for p in PERCENTILES}
    out.update({"max": float(x.max()) if len(x) else None, "mean": float(x.mean()) if len(x) else None})
    return out


def load(paths: list[str], fabric: str | None = None) -> list[Compared]:
    """Read every file (CompareError on the first bad one) and compute its FCTs (and slowdowns, with `fabric`)."""
    runs: list[Compared] = []
    for label, p in zip(labels_for([str(p) for p in paths]), paths):
        runs += store_points(p) if is_store(p) else [Compared(label, str(p), read_runs(p))]
    ideal = IdealFct(network_of(fabric)) if fabric is not None else None
    for r in runs:
        if r.stored is not None:
            continue
        parts = [fcts(rec) for rec in r.records]
        r.fct_s = np.concatenate([x for x, _ in parts]) if parts else np.zeros(0)
        if ideal is not None:
            r.slowdown = r.fct_s / np.array([ideal.ideal(f) for _, done in parts for f in done], dtype=float)
    return runs


def _summarize_point(r: Compared) -> dict[str, Any]:
    """A sweep point's numbers, from its stored metrics (no flows: no FCT, slowdown or message counts)."""
    from ..sweep.stats import ci95

    ms = [m for _, _, m in r.stored]
    mean, _, half, n = ci95(m.get("completion_time_s") for _, st, m in r.stored if st == "ok")
    roce = [m for m in ms if "pfc_pauses" in m]
    peaks = [(m["peak_queue_bytes"], m["peak_queue_packets"]) for m in roce]
    out: dict[str, Any] = {
        "label": r.label, "file": r.path, "runs": len(ms), "seeds": [seed for seed, _, _ in r.stored],
        "complete_runs": sum(st == "ok" for _, st, _ in r.stored),
        "completion_time_s": {"mean": mean if n else None, "ci95": half if n >= 2 else None, "n": n},
        "messages": None, "completed": None, "fct_s": None, "slowdown": None,
        "dropped_packets": float(np.mean([m.get("dropped_packets", 0) for m in ms])),
        "peak_queue_bytes": max(peaks)[0] if peaks else None, "peak_queue_packets": max(peaks)[1] if peaks else None,
        "peak_queue": None, "roce": bool(roce),
    }
    for k in ROCE_KEYS:
        out[k] = float(np.mean([m[k] for m in roce])) if roce else None
    uec = [m for m in ms if f"uec_{UEC_KEYS[0]}" in m]
    out["uec"] = {k: float(np.mean([m[f"uec_{k}"] for m in uec])) for k in UEC_KEYS} if uec else None
    return out


def summarize(r: Compared) -> dict[str, Any]:
    """One file's (or sweep point's) numbers (the module docstring defines each)."""
    from ..sweep.stats import ci95

    if r.stored is not None:
        return _summarize_point(r)
    recs = r.records
    mean, _, half, n = ci95(rec["completion_time_s"] for rec in recs if rec.get("complete", True))
    queues = [(q["peak_bytes"], q["peak_packets"], q["name"]) for rec in recs for q in rec["queues"]]
    peak = max(queues, default=(0, 0, None))
    roce = [rec for rec in recs if "pfc_pauses" in rec]
    out: dict[str, Any] = {
        "label": r.label, "file": r.path, "runs": len(recs), "seeds": [rec.get("seed") for rec in recs],
        "complete_runs": sum(bool(rec.get("complete", True)) for rec in recs),
        "completion_time_s": {"mean": mean if n else None, "ci95": half if n >= 2 else None, "n": n},
        "messages": sum(len(_messages(rec)) for rec in recs), "completed": len(r.fct_s),
        "fct_s": _dist(r.fct_s), "slowdown": _dist(r.slowdown),
        "dropped_packets": float(np.mean([rec["packets"]["dropped"] for rec in recs])),
        "peak_queue_bytes": int(peak[0]), "peak_queue_packets": int(peak[1]), "peak_queue": peak[2],
        "roce": bool(roce),
    }
    for k in ROCE_KEYS:
        out[k] = float(np.mean([rec[k] for rec in roce])) if roce else None
    uec = [rec["uec"] for rec in recs if rec.get("uec")]
    out["uec"] = {k: float(np.mean([u[k] for u in uec])) for k in UEC_KEYS} if uec else None
    return out


def compare(paths: list[str], fabric: str | None = None) -> tuple[list[Compared], list[dict[str, Any]]]:
    """The runs read from `paths` and their summaries (the --json `runs`)."""
    runs = load(paths, fabric)
    return runs, [summarize(r) for r in runs]


# ---- text ------------------------------------------------------------------------------------------------------

def _t(seconds: float | None) -> str:
    from ..units import format_duration

    return "–" if seconds is None else format_duration(seconds * 1e12)


def _n(v: float | None, fmt: str = ",.0f") -> str:
    return "–" if v is None else format(v, fmt)


def rows(summaries: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """The side-by-side table: (quantity, one cell per file)."""
    from ..units import format_size

    def ct(s):
        c = s["completion_time_s"]
        return "–" if c["mean"] is None else _t(c["mean"]) + ("" if c["ci95"] is None else f" ± {_t(c['ci95'])}")

    def dist(key, p, fmt):
        return [fmt(s[key][p]) if s[key] is not None else "–" for s in summaries]

    out = [("runs (seeds)", [f"{s['runs']} ({', '.join(map(str, s['seeds']))})" for s in summaries]),
           ("completion time (mean, 95% CI)", [ct(s) for s in summaries]),
           ("messages completed", ["–" if s["messages"] is None else f"{s['completed']:,} of {s['messages']:,}"
                                   for s in summaries])]
    for p in ("p50", "p99", "max"):
        out.append((f"FCT {p}", dist("fct_s", p, _t)))
    for p in ("p50", "p99", "max"):
        out.append((f"slowdown {p}", dist("slowdown", p, lambda v: _n(v, ".3f"))))
    out += [("PFC pauses", [_n(s["pfc_pauses"]) for s in summaries]),
            ("PFC paused time (all ports)", [_t(s["pfc_paused_s"]) for s in summaries]),
            ("ECN marks", [_n(s["ecn_marks"]) for s in summaries]),
            ("CNPs", [_n(s["cnps"]) for s in summaries]),
            ("peak queue", ["–" if s["peak_queue_bytes"] is None else
                            f"{format_size(s['peak_queue_bytes'])} ({s['peak_queue_packets']:,} pkts"
                            + (f", {s['peak_queue']})" if s["peak_queue"] else ")") for s in summaries]),
            ("dropped packets", [_n(s["dropped_packets"]) for s in summaries])]
    if any(s.get("uec") for s in summaries):
        names = {"trims": "UEC packets trimmed", "nacks": "UEC NACKs", "timeouts": "UEC timeouts",
                 "retransmits": "UEC packets re-sent"}
        out += [(names[k], [_n(s["uec"][k]) if s.get("uec") else "–" for s in summaries]) for k in UEC_KEYS]
    return out


# ---- the figure --------------------------------------------------------------------------------------------------

def _cdf(ax, x: np.ndarray, label: str) -> None:
    if len(x):
        xs = np.sort(x)
        ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", label=label)


def figure(runs: list[Compared], summaries: list[dict[str, Any]], title: str = ""):
    """Six panels: completion time (mean, 95% CI), FCT CDF, slowdown CDF, PFC pauses, ECN marks and CNPs, and
    the peak queue. Returns the matplotlib Figure."""
    from .figures import WIDTH_IN, clipped_err, plt

    fig, axs = plt.subplots(2, 3, figsize=(WIDTH_IN * 1.4, 7.5), layout="constrained")
    labels = [s["label"] for s in summaries]
    x = np.arange(len(labels))
    colors = [f"C{i}" for i in range(len(labels))]

    ax = axs[0, 0]
    means = [s["completion_time_s"]["mean"] or 0.0 for s in summaries]
    halves = [s["completion_time_s"]["ci95"] or 0.0 for s in summaries]
    ax.bar(x, np.array(means) * 1e3, yerr=clipped_err(np.array(means) * 1e3, np.array(halves) * 1e3), color=colors,
           capsize=4)
    ax.set(title="completion time (mean, 95% CI)", ylabel="ms", xticks=x, xticklabels=labels)

    ax = axs[0, 1]
    for r in runs:
        _cdf(ax, r.fct_s * 1e3, r.label)
    ax.set(title="FCT CDF", xlabel="flow completion time (ms)", ylabel="fraction of messages", ylim=(0, 1.02))
    ax.legend(fontsize="small")

    ax = axs[0, 2]
    if any(r.slowdown is not None for r in runs):
        for r in runs:
            _cdf(ax, r.slowdown if r.slowdown is not None else np.zeros(0), r.label)
        ax.set_xscale("log")
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "give --fabric for the slowdown\n(the links' rates and delays)", ha="center",
                va="center", transform=ax.transAxes, color="0.4")
    ax.set(title="slowdown CDF (FCT / ideal FCT)", xlabel="slowdown", ylabel="fraction of messages", ylim=(0, 1.02))

    ax = axs[1, 0]
    pauses = [s["pfc_pauses"] or 0 for s in summaries]
    ax.bar(x, pauses, color=colors)
    ax.set(title="PFC pauses (mean per run)", ylabel="PAUSE frames", xticks=x, xticklabels=labels)
    ax.set_ylim(bottom=0, top=None if max(pauses, default=0) > 0 else 1)
    if not max(pauses, default=0):
        ax.text(0.5, 0.5, "no PFC pause in any run", ha="center", va="center", transform=ax.transAxes, color="0.4")

    ax = axs[1, 1]
    w = 0.4
    ax.bar(x - w / 2, [s["ecn_marks"] or 0 for s in summaries], w, label="ECN marks", color="C0")
    ax.bar(x + w / 2, [s["cnps"] or 0 for s in summaries], w, label="CNPs", color="C1")
    ax.set(title="ECN marks and CNPs (mean per run)", ylabel="packets", xticks=x, xticklabels=labels)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")

    ax = axs[1, 2]
    ax.bar(x, [(s["peak_queue_bytes"] or 0) / 1e3 for s in summaries], color=colors)
    ax.set(title="peak queue depth (deepest egress queue)", ylabel="KB", xticks=x, xticklabels=labels)
    for a in axs.flat:
        a.grid(axis="y", alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


# ---- the page ----------------------------------------------------------------------------------------------------

def page(summaries: list[dict[str, Any]], table_rows: list[tuple[str, list[str]]], png: bytes | None,
         version: str, more: str = "") -> str:
    """The self-contained HTML page: headline, the table, the figure (embedded PNG) and the definitions. A script
    fills #n-runs-rendered from the embedded data once the page has loaded (the browser test reads it)."""
    from .html import CSS, ERROR_SENTINEL, _scroll

    n_msgs = sum(s["messages"] or 0 for s in summaries)
    data = json.dumps({"files": len(summaries), "runs": sum(s["runs"] for s in summaries), "messages": n_msgs})
    head = "".join(f"<th>{html.escape(s['label'])}</th>" for s in summaries)
    body = "".join(f"<tr><td class='l'>{html.escape(q)}</td>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
                   + "</tr>" for q, cells in table_rows)
    table = _scroll(f"<table class='summary' id='compare-table'><tr><th class='l'>quantity</th>{head}</tr>{body}</table>")
    img = ("" if png is None else "<figure><img alt='the runs side by side' src='data:image/png;base64,"
           + base64.b64encode(png).decode() + "'></figure>")
    files = "".join(f"<li><b>{html.escape(s['label'])}</b>: <code>{html.escape(s['file'])}</code></li>" for s in summaries)
    return (f"<!doctype html><html lang='en'><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>fabricsim compare</title><style>{CSS}</style><body>{ERROR_SENTINEL}"
            f"<h1>fabricsim compare</h1><p class='meta'>fabricsim {html.escape(version)}</p>"
            f"<p class='score' id='headline'><b id='n-files'>{len(summaries)}</b> files, "
            f"<b id='n-runs'>{sum(s['runs'] for s in summaries)}</b> runs, {n_msgs:,} messages compared "
            f"(rendered: <span id='n-runs-rendered'>…</span> runs)</p>"
            f"<ul>{files}</ul>{table}" + (f"<p class='muted'>{html.escape(more)}</p>" if more else "") +
            f"<p class='muted'>Slowdown = FCT / ideal FCT, ideal = {html.escape(IDEAL_FCT)}. Percentiles are "
            "nearest-rank. Completion: the mean and the half-width of its 95% CI (Student t) over the runs that "
            "completed.</p>"
            f"{img}<script type='application/json' id='compare-data'>{html.escape(data, quote=False)}</script>"
            "<script>window.addEventListener('load', () => { const d = JSON.parse("
            "document.getElementById('compare-data').textContent);"
            "document.getElementById('n-runs-rendered').textContent = String(d.runs); });</script>"
            "</body></html>")
