"""The answer to "how long does a step take, and why": the step time decomposed, MFU, traffic and the busiest links.

Decomposition. The reported GPU is the first GPU of the TP group that finishes last (the critical one). Its
timeline from the step's start to its end is cut into disjoint parts, each instant counted once, in this order:
- `compute_s`: a compute step of the model runs;
- `optimizer_s`: the optimizer runs;
- `exposed_s[dim]`: no compute runs, but a collective of that dimension the GPU takes part in is in flight (a
  closed-form step, or a flow it sends or receives); when several are, the first of tp, cp, ep, pp, dp counts;
- `bubble_s`: nothing of this GPU runs or is in flight: it waits for another stage (the pipeline bubble).
So step_time_s = compute_s + optimizer_s + Σ exposed_s + bubble_s exactly, for the first step (and for the mean
of N steps with `steps`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..record import FLOW_KINDS
from .costs import PS
from .lower import DIMS, STEP_KINDS, Lowered

MISSING = np.iinfo(np.uint64).max


def _union(starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int]]:
    """Disjoint, sorted intervals covering [starts[i], ends[i]) for every i."""
    if len(starts) == 0:
        return []
    o = np.argsort(starts, kind="stable")
    s, e = starts[o], ends[o]
    # Running max of ends; a new interval starts where a start exceeds every earlier end.
    run = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > run[:-1]
    idx = np.flatnonzero(new)
    out_s = s[idx]
    out_e = np.append(run[idx[1:] - 1], run[-1])
    return list(zip(out_s.tolist(), out_e.tolist()))


def _length(iv: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in iv)


def _minus(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """a minus b (both disjoint and sorted)."""
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def _clip(iv: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(s, lo), min(e, hi)) for s, e in iv if e > lo and s < hi]


def _end_ps(refs: list[int], c_end: np.ndarray, m_end: np.ndarray) -> int:
    t = 0
    for r in refs:
        kind, i = r >> 30, r & ((1 << 30) - 1)
        t = max(t, int(c_end[i]) if kind == 3 else int(m_end[i]) if kind == 0 else 0)
    return t


def breakdown(lw: Lowered, rec) -> dict[str, Any]:
    """The answer's numbers (see the module docstring) from the lowering and the run's record."""
    job = lw.job
    par = job.par
    cols = rec.columns
    c_start, c_end = cols["compute.start_ps"].astype(np.int64), cols["compute.end_ps"].astype(np.int64)
    msg = cols["flows.kind"] == FLOW_KINDS.index("message")  # messages, in workload order
    m_start = cols["flows.start_ps"][msg].astype(np.int64) - lw.flow_delay  # from its launch: NCCL's latency first
    m_end = cols["flows.complete_ps"][msg].astype(np.int64)
    n_units = par.units
    # Step boundaries: a training step ends when every unit has ended it.
    bounds = [0]
    unit_end = np.zeros((len(lw.unit_end_steps), n_units), dtype=np.int64)
    for k, per_unit in enumerate(lw.unit_end_steps):
        for u, refs in enumerate(per_unit):
            unit_end[k, u] = _end_ps(refs, c_end, m_end)
        bounds.append(int(unit_end[k].max()))
    total = bounds[-1] - bounds[0]
    crit = int(np.argmax(unit_end[-1]))
    # The critical unit's intervals by kind.
    mine = lw.step_unit == crit
    kinds = lw.step_kind[mine]
    cs, ce = c_start[mine], c_end[mine]
    iv = {k: _union(cs[kinds == i], ce[kinds == i]) for i, k in enumerate(STEP_KINDS)}
    touch = (lw.flow_src_unit == crit) | (lw.flow_dst_unit == crit)
    for i, d in enumerate(DIMS):
        sel = touch & (lw.flow_dim == i)
        flows = _union(m_start[sel], m_end[sel])
        iv[d] = _union(np.array([s for s, _ in iv.get(d, [])] + [s for s, _ in flows], dtype=np.int64),
                       np.array([e for _, e in iv.get(d, [])] + [e for _, e in flows], dtype=np.int64))
    lo, hi = bounds[0], bounds[-1]
    covered = _clip(iv["compute"], lo, hi)
    compute_ps = _length(covered)
    opt = _minus(_clip(iv["optimizer"], lo, hi), covered)
    covered = _union(np.array([s for s, _ in covered + opt], dtype=np.int64), np.array([e for _, e in covered + opt], dtype=np.int64))
    exposed = {}
    for d in DIMS:
        part = _minus(_clip(iv[d], lo, hi), covered)
        exposed[d] = _length(part) * 1e-12
        covered = _union(np.array([s for s, _ in covered + part], dtype=np.int64),
                         np.array([e for _, e in covered + part], dtype=np.int64))
    bubble_ps = (hi - lo) - _length(covered)
    steps = len(lw.unit_end_steps)
    step_s = total * 1e-12 / steps
    flops = job.model.step_flops(job.global_batch, job.seq_len)
    mfu = flops / (step_s * par.world * job.device.peak_flops) if step_s > 0 else 0.0
    traffic = dict.fromkeys(DIMS, 0.0)
    for i, d in enumerate(DIMS):
        traffic[d] = float(lw.flow_bytes[lw.flow_dim == i].sum()) + lw.closed_bytes.get(d, 0.0)
    s = 1.0 / steps
    return {
        "step_time_s": step_s,
        "steps": steps,
        "breakdown": {
            "compute_s": compute_ps * 1e-12 * s,
            "exposed_s": {d: exposed[d] * s for d in DIMS},
            "bubble_s": bubble_ps * 1e-12 * s,
            "optimizer_s": _length(opt) * 1e-12 * s,
        },
        "critical_gpu": lw.fabric.hosts[par.rank(0, *_unit_coord(par, crit))],
        "mfu": mfu,
        "model_flops_per_step": flops,
        "traffic_bytes": {d: traffic[d] * s for d in DIMS},
    }


def _unit_coord(par, u: int) -> tuple[int, int, int, int]:
    c, r = u % par.cp, u // par.cp
    e, r = r % par.ep, r // par.ep
    d, s = r % par.dp, r // par.dp
    return c, e, d, s


def busiest_links(rec, network, step_s: float, top: int = 10) -> list[dict[str, Any]]:
    """The `top` egress ports by utilization over the run (bytes·8 / (rate · run time)), then by bytes sent, each
    with its queue's peak (bytes, packets; None at flow fidelity), PFC pauses and drops from `RunRecord.links()`."""
    if step_s <= 0:
        return []
    rate = {}
    for ln in network.links:
        rate[(ln.a, ln.b)] = rate[(ln.b, ln.a)] = ln.rate
    names = rec.scalars.get("queue_names") or []
    tx = rec.columns.get("queues.tx_bytes")
    if tx is None or not len(tx):
        return []
    run_s = rec.end_time_s if rec.end_time_s else step_s
    util = np.zeros(len(tx), dtype=np.float64)
    rates = np.zeros(len(tx), dtype=np.float64)
    for i in np.flatnonzero(tx).tolist():
        a, _, b = names[i].partition("->")
        r = rate.get((a, b.split("#")[0]))
        if r:
            rates[i] = r
            util[i] = int(tx[i]) * 8 / (r * run_s)
    order = np.lexsort((-tx.astype(np.float64), -util))[:top]
    # The record's link rows (RunRecord.links: peak queue, PFC pauses, drops) joined by name.
    more = {x["name"]: x for x in rec.links()}
    keep = ("peak_bytes", "peak_packets", "pfc_pauses", "drops")
    return [{"link": names[i], "bytes": int(tx[i]), "rate_bps": int(rates[i]) or None,
             "utilization": float(util[i]) if rates[i] else None,
             **{k: more.get(names[i], {}).get(k) for k in keep}} for i in order.tolist() if tx[i]]


__all__ = ["breakdown", "busiest_links", "PS"]
