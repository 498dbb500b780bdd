"""What a sweep run does: `execute(task)` resolves the task function, runs it and classifies the outcome.

A task function takes (payload dict, seed) and returns a flat dict of metrics. "simulate" runs the packet
engine and returns `standard_metrics`; any "module:function" importable on the workers may be used.

A `complete` key of the returned dict is the run's outcome, not a metric: with `complete: False` (the run's
workload did not complete, e.g. a message never delivered) the run is stored as "incomplete", with its other
metrics and the reason its `incomplete_reason` key gives. A dict without `complete` (or with `complete: True`)
is an ok run, all its keys metrics.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Mapping
from typing import Any, Callable

from ..errors import ScenarioError
from .spec import RunTask


ROCE_METRICS = ("pfc_pauses", "pfc_paused_s", "ecn_marks", "cnps", "peak_queue_bytes", "peak_queue_packets")
"""What a RoCE run ([pfc], [ecn] or transport = "rdma") adds to `standard_metrics`: PAUSE frames sent, paused time
summed over ports (s), ECN marks, CNPs, and the deepest egress queue's peak (bytes, packets; the largest over all
queues, each its own maximum)."""


def roce_metrics(rec) -> dict[str, Any]:
    """The RoCE metrics (ROCE_METRICS) of a RoCE run; {} for any other run, so other sweeps keep their columns."""
    if not rec.has_roce:
        return {}
    c = rec.columns
    return {"pfc_pauses": rec.pfc_pauses, "pfc_paused_s": rec.pfc_paused_s, "ecn_marks": rec.ecn_marks,
            "cnps": rec.cnps, "peak_queue_bytes": int(c["queues.peak_bytes"].max(initial=0)),
            "peak_queue_packets": int(c["queues.peak_packets"].max(initial=0))}


UEC_METRICS = ("uec_trims", "uec_nacks", "uec_timeouts", "uec_retransmits", "uec_ecn_echoes", "uec_fct_p99_s")
"""What a UEC run (transport = "uec") adds to `standard_metrics`: packets trimmed, NACKs, retransmission timeouts,
packets re-sent, ACKs echoing an ECN mark (`RunRecord.uec`), and the 99th percentile (nearest rank) of its
connections' completion times to their last ACK (`RunRecord.uec_fct_s`, seconds)."""


def uec_metrics(rec) -> dict[str, Any]:
    """The UEC metrics (UEC_METRICS) of a UEC run; {} for any other run, so other sweeps keep their columns."""
    import numpy as np

    u = rec.uec
    if not u:
        return {}
    fct = np.sort(rec.uec_fct_s()[~np.isnan(rec.uec_fct_s())])
    p99 = float(fct[max(int(np.ceil(0.99 * len(fct))) - 1, 0)]) if len(fct) else None
    return {"uec_trims": u["trims"], "uec_nacks": u["nacks"], "uec_timeouts": u["timeouts"],
            "uec_retransmits": u["retransmits"], "uec_ecn_echoes": u["ecn_echoes"], "uec_fct_p99_s": p99}


def standard_metrics(rec) -> dict[str, Any]:
    """Run-level metrics every simulation yields (SI units), a RoCE run's `roce_metrics` and a UEC run's
    `uec_metrics`."""
    from ..record import MISSING

    pk = rec.packets
    fl = rec.columns
    rx_bytes = int(fl["flows.rx_bytes"].sum())
    firsts, lasts = fl["flows.first_tx_ps"], fl["flows.last_rx_ps"]
    firsts, lasts = firsts[firsts != MISSING], lasts[lasts != MISSING]
    span_s = (int(lasts.max()) - int(firsts.min())) * 1e-12 if len(firsts) and len(lasts) else 0.0
    delay_sum = int(fl["flows.delay_sum_ps"].sum()) * 1e-12
    return {
        "completion_time_s": rec.completion_time_s,
        "end_time_s": rec.end_time_s,
        "tx_packets": pk["tx"],
        "rx_packets": pk["rx"],
        "dropped_packets": pk["dropped"],
        "in_flight_packets": pk["in_flight"],
        "loss_pct": 100.0 * pk["dropped"] / pk["tx"] if pk["tx"] else 0.0,
        "throughput_bps": rx_bytes * 8 / span_s if span_s > 0 else 0.0,
        "mean_delay_s": delay_sum / pk["rx"] if pk["rx"] else None,
        "max_delay_s": int(fl["flows.max_delay_ps"].max(initial=0)) * 1e-12,
        "events": rec.events,
        "engine_wall_s": rec.wall_s,
        **roce_metrics(rec),
        **uec_metrics(rec),
    }


def simulate(payload: dict[str, Any], seed: int, source: str = "<sweep>") -> dict[str, Any]:
    """The default task: validate the scenario, run the packet engine, return `standard_metrics` plus the
    outcome (`complete`, and `incomplete_reason` when it did not complete: the record's own sentence)."""
    from ..engine import run
    from ..spec import scenario_from_dict

    sc = scenario_from_dict(payload, source)
    rec = run(sc, seed=seed)
    out = standard_metrics(rec)
    reason = rec.incomplete_reason(None if sc.stop is None else sc.stop * 1e-12)
    out["complete"] = reason is None
    if reason is not None:
        out["incomplete_reason"] = reason
    return out


_FILE_MODULES: dict[str, Any] = {}


def resolve(name: str) -> Callable[..., dict[str, Any]]:
    """'simulate', 'package.module:function', or '/path/to/file.py:function' (a study's own tasks; the
    file must be readable by every worker, as on one machine or a cluster with a shared file system)."""
    if name == "simulate":
        return simulate
    mod, sep, fn = name.rpartition(":")
    if not sep or not mod:
        raise ValueError(f"task '{name}' is neither 'simulate' nor 'module:function'")
    if mod.endswith(".py"):
        if mod not in _FILE_MODULES:
            spec = importlib.util.spec_from_file_location(f"fabricsim_task_{abs(hash(mod))}", mod)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            _FILE_MODULES[mod] = module
        return getattr(_FILE_MODULES[mod], fn)
    return getattr(importlib.import_module(mod), fn)


INCOMPLETE_REASON = "the task reported complete = false (no incomplete_reason given)"
"""The reason stored for an incomplete run whose task gave none."""


def execute(task: RunTask) -> dict[str, Any]:
    """Run one task. Returns {"status": "ok", "metrics", "wall_s"}; {"status": "incomplete", "metrics",
    "error" (the reason), "wall_s"} when the task's dict says `complete: False` (a deterministic outcome,
    stored and never retried); or {"status": "invalid", "error"} for a spec the user must fix (never retried).
    Any other exception propagates, and the executor retries."""
    t0 = time.perf_counter()
    if "__invalid__" in task.payload:
        return {"status": "invalid", "error": f"{task.source}: {task.payload['__invalid__']}"}
    fn = resolve(task.task)
    try:
        metrics = fn(task.payload, task.seed, task.source) if fn is simulate else fn(task.payload, task.seed)
    except ScenarioError as e:
        return {"status": "invalid", "error": str(e)}
    wall_s = time.perf_counter() - t0
    if not isinstance(metrics, Mapping):
        raise TypeError(f"task '{task.task}' returned {type(metrics).__name__}, not a dict of metrics")
    metrics = dict(metrics)
    complete = metrics.pop("complete", None)
    if complete is not None and not complete:  # False, or numpy's False
        reason = metrics.pop("incomplete_reason", None)
        one_line = " ".join(str(reason).split()) if reason else INCOMPLETE_REASON
        return {"status": "incomplete", "metrics": metrics, "error": one_line, "wall_s": wall_s}
    return {"status": "ok", "metrics": metrics, "wall_s": wall_s}
