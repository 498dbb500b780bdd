"""Pictures of a training step: the decomposition, the critical GPU's timeline and the busiest links (`figure`), and
a Chrome trace for ui.perfetto.dev aggregated per pass and per collective (`perfetto`), so a 1,024-GPU step opens
in a browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..record import FLOW_KINDS
from .lower import DIMS, STEP_KINDS

COLORS = {"compute": "#4c72b0", "optimizer": "#8172b2", "tp": "#dd8452", "cp": "#937860", "ep": "#c44e52",
          "pp": "#55a868", "dp": "#da8bc3", "bubble": "#cccccc"}


def _times(res) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cols = res.record.columns
    msg = cols["flows.kind"] == FLOW_KINDS.index("message")
    return (cols["compute.start_ps"].astype(np.int64), cols["compute.end_ps"].astype(np.int64),
            cols["flows.start_ps"][msg].astype(np.int64) - res.lowered.flow_delay, cols["flows.complete_ps"][msg].astype(np.int64))


def _unit_of_gpu(res, gpu: str) -> int:
    par = res.lowered.job.par
    return res.lowered.fabric.hosts.index(gpu) // par.tp


def figure(res, path: str | Path) -> Path:
    """Write the three-panel figure to `path` (PNG, SVG or PDF by its suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = res.summary
    b = s["breakdown"]
    lw = res.lowered
    fig, axes = plt.subplots(3, 1, figsize=(11, 8.5), gridspec_kw={"height_ratios": [1, 2.2, 2]})
    # 1. Decomposition of the step.
    ax = axes[0]
    parts = [("compute", b["compute_s"])] + [(d, b["exposed_s"][d]) for d in DIMS] + [
        ("bubble", b["bubble_s"]), ("optimizer", b["optimizer_s"])]
    left = 0.0
    for name, x in parts:
        if x <= 0:
            continue
        label = name if name in ("compute", "bubble", "optimizer") else f"exposed {name.upper()}"
        ax.barh([0], [x * 1e3], left=[left], color=COLORS[name], label=f"{label} {x * 1e3:.1f} ms")
        left += x * 1e3
    ax.set_yticks([])
    ax.set_xlabel("ms")
    j = s["job"]
    ax.set_title(f"{j['model']} on {j['gpus']} GPUs, TP{j['tp']}×PP{j['pp']}×DP{j['dp']}"
                 f"{'×EP' + str(j['ep']) if j['ep'] > 1 else ''}{'×CP' + str(j['cp']) if j['cp'] > 1 else ''}: "
                 f"step {s['step_time_s'] * 1e3:.1f} ms" + ("" if s["mfu"] is None else f", MFU {s['mfu'] * 100:.1f}%"))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=4, fontsize=8, frameon=False)
    # 2. The critical GPU's timeline: its compute steps and the collectives it is in.
    ax = axes[1]
    cs, ce, ms, me = _times(res)
    crit = _unit_of_gpu(res, s["critical_gpu"])
    lanes = ["compute", "optimizer"] + list(DIMS)
    mine = lw.step_unit == crit
    for k, name in enumerate(STEP_KINDS):
        sel = mine & (lw.step_kind == k)
        lane = lanes.index(name) if name in lanes else lanes.index("compute")
        ax.broken_barh(list(zip(cs[sel] * 1e-9, (ce[sel] - cs[sel]) * 1e-9)), (lane - 0.4, 0.8),
                       color=COLORS[name])
    touch = (lw.flow_src_unit == crit) | (lw.flow_dst_unit == crit)
    for i, d in enumerate(DIMS):
        sel = touch & (lw.flow_dim == i)
        if sel.any():
            ax.broken_barh(list(zip(ms[sel] * 1e-9, (me[sel] - ms[sel]) * 1e-9)), (lanes.index(d) - 0.4, 0.8),
                           color=COLORS[d], alpha=0.5)
    ax.set_yticks(range(len(lanes)), [x if x in ("compute", "optimizer") else x.upper() for x in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(f"critical GPU {s['critical_gpu']}: compute and the collectives it takes part in", fontsize=10)
    # 3. Busiest links.
    ax = axes[2]
    links = [ln for ln in s["links"] if ln["utilization"] is not None][:10]
    if links:
        ax.barh(range(len(links)), [ln["utilization"] * 100 for ln in links], color="#4c72b0")
        ax.set_yticks(range(len(links)), [ln["link"] for ln in links], fontsize=7)
        ax.invert_yaxis()
    ax.set_xlabel("utilization over the run (%)")
    ax.set_title("busiest links", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def perfetto(res, path: str | Path) -> dict[str, Any]:
    """Write a Chrome-trace JSON: a process per pipeline stage, a thread per TP group for its compute steps and
    one for the collectives it takes part in (one event per collective instance: from its first flow's start to
    its last flow's end). Returns {"events": n}."""
    lw = res.lowered
    par = lw.job.par
    cs, ce, ms, me = _times(res)
    events: list[dict[str, Any]] = []

    def stage(u: int) -> int:
        return u // (par.cp * par.ep * par.dp)

    for u in range(par.units):
        gpu = lw.fabric.hosts[u * par.tp]
        events.append({"name": "process_name", "ph": "M", "pid": stage(u), "args": {"name": f"stage {stage(u)}"}})
        events.append({"name": "thread_name", "ph": "M", "pid": stage(u), "tid": 2 * u,
                       "args": {"name": f"TP group {u} ({gpu}) compute"}})
        events.append({"name": "thread_name", "ph": "M", "pid": stage(u), "tid": 2 * u + 1,
                       "args": {"name": f"TP group {u} collectives"}})
    for i in range(len(lw.step_unit)):
        u = int(lw.step_unit[i])
        if ce[i] <= cs[i]:
            continue
        events.append({"name": STEP_KINDS[lw.step_kind[i]], "ph": "X", "pid": stage(u), "tid": 2 * u,
                       "ts": cs[i] / 1e6, "dur": (ce[i] - cs[i]) / 1e6})
    if len(lw.flow_coll):
        # One event per (collective instance, unit): the span of its flows that the unit sends or receives.
        coll = np.concatenate([lw.flow_coll, lw.flow_coll])
        unit = np.concatenate([lw.flow_src_unit, lw.flow_dst_unit])
        st, en = np.concatenate([ms, ms]), np.concatenate([me, me])
        dim = np.concatenate([lw.flow_dim, lw.flow_dim])
        key = coll * (par.units + 1) + unit
        order = np.argsort(key, kind="stable")
        key, st, en, dim, unit, coll = key[order], st[order], en[order], dim[order], unit[order], coll[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        starts = np.minimum.reduceat(st, first)
        ends = np.maximum.reduceat(en, first)
        for k, f in enumerate(first.tolist()):
            u = int(unit[f])
            events.append({"name": DIMS[dim[f]].upper(), "ph": "X", "pid": stage(u), "tid": 2 * u + 1,
                           "ts": starts[k] / 1e6, "dur": max(0, ends[k] - starts[k]) / 1e6,
                           "args": {"collective": int(coll[f])}})
    Path(path).write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))
    return {"events": len(events)}
