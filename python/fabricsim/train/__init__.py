"""Training steps of large models on a fabric: `fabricsim.train(...)` and `fabricsim train`.

"How long does one step of my training job take on my fabric, and why?" A job (`TrainJob`: a model preset or
file, TP × CP × EP × DP × PP, batch, device, schedule, ZeRO stage) is lowered (`lower`) to compute steps, flows
and barriers, simulated by the engine at the fidelity asked for, and read back (`report`) into the step time,
its decomposition (compute, exposed communication per dimension, pipeline bubble, optimizer), MFU, the traffic
of each dimension and the busiest links. A SimAI/AICB workload file (`aicb_plan`, `fabricsim train --aicb`) is
read as SimAI reads it and lowered the same way (`aicb`).
"""

from __future__ import annotations

import os
import time
from dataclasses import astuple, dataclass
from typing import Any

from ..devices import DEVICES, device
from ..errors import UserError
from .job import SCHEDULES, LayerTimes, Parallel, TrainJob, read_layer_times
from .lower import DIMS, FabricView, Lowered, lower
from .models import PRESETS, ModelSpec, model, read_model, with_seq_len
from .report import breakdown, busiest_links

GBPS = 1e9


@dataclass
class TrainResult:
    """A simulated training job: `summary` (the answer: see `report.breakdown`), the run's `record` and the
    `lowered` workload (what every step and flow is)."""

    summary: dict[str, Any]
    record: Any
    lowered: Lowered

    @property
    def step_time_s(self) -> float:
        return self.summary["step_time_s"]


def fabric_view(fab, scenario) -> FabricView:
    """The GPUs of a fabric and its NVLink domains: a rail-optimized fabric's servers are NVLink domains of
    `gpus_per_server` GPUs at `nvlink_rate` per GPU and direction (with NVSwitch reduction if its [fabric] table
    says `nvls = true`); on any other fabric every host is a GPU alone (its collectives cross the fabric)."""
    from ..collectives.run import host_nics
    from ..units import parse_rate_bps

    hosts = list(host_nics(scenario))
    topo = fab.doc.get("topology") or {}
    if topo.get("kind") == "rail_optimized":
        from ..nccl import nccl_fabric

        return FabricView(hosts, int(topo.get("gpus_per_server", 8)),
                          parse_rate_bps(topo.get("nvlink_rate", "3600Gbps")) / 8, nccl_fabric(fab))
    return FabricView(hosts, 1, 0.0)


@dataclass
class TrainPlan:
    """A checked job on a fabric, lowered and ready to run (`plan`); `run` simulates it."""

    job: TrainJob
    fabric: Any
    scenario: Any
    view: FabricView
    lowered: Lowered
    lower_s: float
    top_links: int = 10
    assumed_switch_model: str | None = None
    """The switch model assumed because the fabric gives none (lossless "input_buffered"), else None."""

    def run(self, fidelity: str = "flow", *, max_events: int | None = None, max_wall_s: float | None = None,
            progress=None) -> TrainResult:
        """Simulate the plan at `fidelity` (flow, hybrid or packet) and read the answer back."""
        from ..engine import run

        t0 = time.perf_counter()
        rec = run(self.scenario, workload=self.lowered.workload, fidelity=fidelity, max_events=max_events,
                  max_wall_s=max_wall_s, progress=progress)
        t1 = time.perf_counter()
        return self.result(rec, t1 - t0)

    def result(self, rec, simulate_s: float = 0.0) -> TrainResult:
        job, m = self.job, self.job.model
        summary = breakdown(self.lowered, rec) if rec.complete else {"step_time_s": None}
        steps = job.steps
        summary["links"] = busiest_links(rec, self.scenario.topology.network(),
                                         (summary["step_time_s"] or 0) * steps, self.top_links)
        p = job.par
        summary["job"] = {
            "model": m.name, "params": m.params, "active_params": m.active_params, "gpus": p.world, "tp": p.tp,
            "pp": p.pp, "dp": p.dp, "ep": p.ep, "cp": p.cp, "vpp": job.chunks, "schedule": job.schedule,
            "zero": job.zero, "micro_batch": job.micro_batch, "global_batch": job.global_batch,
            "micro_batches": job.micro_batches, "seq_len": m.seq_len, "device": job.device.name,
            "efficiency": job.efficiency, "compute": "measured: " + job.layer_times.source if job.layer_times
            else "roofline", "sequence_parallel": job.sequence_parallel and p.tp > 1,
            "fidelity": rec.fidelity, "fabric": self.fabric.name, "steps": steps,
            "switch_model": self.scenario.topology.switch_model,
            "switch_model_assumed": self.assumed_switch_model is not None,
        }
        summary["run"] = {"lower_s": self.lower_s, "simulate_s": simulate_s, "engine_s": rec.wall_s,
                          "flows": int(self.lowered.flow_dim.size), "compute_steps": int(self.lowered.step_unit.size),
                          "complete": rec.complete}
        return TrainResult(summary, rec, self.lowered)


def _scenario(fab, seed: int):
    """The fabric's scenario with `seed`, and the switch model assumed when the fabric gives none (else None):
    training traffic runs on lossless fabrics (InfiniBand credits, RoCE's PFC), so a fabric that says nothing gets
    credit-based lossless switches and packet and hybrid runs lose no packet."""
    from ..spec import scenario_from_dict

    doc = dict(fab.doc)
    assumed = None
    topo = dict(doc.get("topology") or {})
    if "switch_model" not in topo:
        topo["switch_model"] = assumed = "input_buffered"
        doc["topology"] = topo
    return scenario_from_dict({**doc, "seed": seed}, fab.name), assumed


def plan(model_name: str | ModelSpec, *, fabric: str, tp: int = 1, pp: int = 1, dp: int = 1, ep: int = 1,
         cp: int = 1, micro_batch: int = 1, global_batch: int | None = None, seq_len: int | None = None,
         schedule: str = "1f1b", vpp: int = 1, zero: int = 0, device_name: str = "h100", efficiency: float = 0.5,
         sequence_parallel: bool = True, steps: int = 1, gpus: int | None = None, bucket_params: int | None = None,
         seed: int = 1, top_links: int = 10, layer_times: str | LayerTimes | None = None) -> TrainPlan:
    """Check the job (UserError naming the option on the first problem) and lower it onto `fabric` (a built-in
    fabric's name or a fabric file). `global_batch` defaults to micro_batch × dp × ep × pp (pp micro-batches per
    pipeline); `gpus` to every GPU of the fabric; `layer_times` (a TOML file or `LayerTimes`) replaces the roofline
    with measured per-layer times. A misused argument raises `fabricsim.errors.ArgumentError` naming it."""
    from .. import checks
    from ..collectives.fabrics import read_fabric

    seq_len = checks.integer(seq_len, "seq_len", low=1, high=2**31, none=True)
    gpus = checks.integer(gpus, "gpus", low=1, high=2**31, none=True)
    micro_batch = checks.integer(micro_batch, "micro_batch", low=1, high=2**31)
    global_batch = checks.integer(global_batch, "global_batch", low=1, high=2**40, none=True)
    tp, pp, dp, ep, cp, vpp = astuple(Parallel(tp, pp, dp, ep, cp, vpp))  # checked, numpy ints as ints
    seed, top_links = checks.integer(seed, "seed", low=0), checks.integer(top_links, "top_links", low=0)
    checks.text(device_name, "device_name")
    if not isinstance(fabric, os.PathLike):
        checks.text(fabric, "fabric")
    m = model_name if isinstance(model_name, ModelSpec) else model(model_name)
    m = with_seq_len(m, seq_len)
    try:
        dev = device(device_name)
    except ValueError as e:
        raise UserError(f"--device: {e}") from None
    fab = read_fabric(fabric)
    sc, assumed = _scenario(fab, seed)
    view = fabric_view(fab, sc)
    n = gpus if gpus is not None else len(view.hosts)
    if not 1 <= n <= len(view.hosts):
        raise UserError(f"--gpus: {n} GPUs, but {fab.name} has {len(view.hosts)}")
    par = Parallel(tp, pp, dp, ep, cp, vpp)
    gb = global_batch if global_batch is not None else micro_batch * dp * ep * pp
    lt = read_layer_times(layer_times) if isinstance(layer_times, str) else layer_times
    job = TrainJob(m, par, micro_batch, gb, dev, efficiency, schedule, zero, sequence_parallel,
                   bucket_params=bucket_params, steps=steps, layer_times=lt)
    job.check(n)
    t0 = time.perf_counter()
    lw = lower(job, view, sc)
    return TrainPlan(job, fab, sc, view, lw, time.perf_counter() - t0, top_links, assumed)


@dataclass
class AicbPlan(TrainPlan):
    """A SimAI/AICB workload file on a fabric, lowered and ready to run (`aicb_plan`); `run` simulates it. Its
    answer's `job` describes the file (TP, PP, EP, dp = the expert weights' data-parallel replicas as `fabricsim
    train` counts them, simai_dp = SimAI's DP = dp × ep, GA, vpp, pp_comm) and its `mfu` is None: the file gives
    compute times, not a model's FLOPs."""

    aicb: Any = None

    def result(self, rec, simulate_s: float = 0.0) -> TrainResult:
        res = super().result(rec, simulate_s)
        f, p, s = self.aicb, self.job.par, res.summary
        if "mfu" in s:
            s["mfu"] = None
            s["model_flops_per_step"] = None
        switch = {k: s["job"][k] for k in ("switch_model", "switch_model_assumed")}
        s["job"] = {
            "model": f.name, "aicb": f.path, "gpus": p.world, "tp": p.tp, "pp": p.pp, "dp": p.dp, "ep": p.ep, "cp": 1,
            "simai_dp": p.dp * p.ep, "ga": f.ga, "vpp": f.vpp, "pp_comm_bytes": f.pp_comm, "rows": len(f.rows),
            "schedule": "1f1b" if p.pp > 1 else "none", "micro_batches": f.ga, "compute_s": f.compute_ns() * 1e-9,
            "fidelity": rec.fidelity, "fabric": self.fabric.name, "steps": self.job.steps, **switch,
        }
        return res


def aicb_plan(path: str, *, fabric: str, gpus: int | None = None, steps: int = 1, seed: int = 1,
              top_links: int = 10) -> AicbPlan:
    """Read a SimAI/AICB workload file as SimAI reads it (`aicb.read_aicb`; UserError naming the file and line) and
    lower it onto `fabric` (a built-in fabric's name or a fabric file) on `gpus` GPUs (default: every GPU of the
    fabric; SimAI's DP = gpus / (TP · PP)). The file's notes (what SimAI reads silently) are issued as
    FabricsimWarnings."""
    from ..collectives.fabrics import read_fabric
    from .aicb import aicb_job, check_gpus, lower_aicb, read_aicb, warn

    f = read_aicb(path)
    warn(f)
    fab = read_fabric(fabric)
    sc, assumed = _scenario(fab, seed)
    view = fabric_view(fab, sc)
    n = gpus if gpus is not None else len(view.hosts)
    check_gpus(f, n, len(view.hosts))
    if f.all_gpus and f.all_gpus != n:
        import warnings

        from ..errors import FabricsimWarning

        warnings.warn(f"{f.path}:1: all_gpus: {f.all_gpus}, but the job has {n} GPUs (--gpus, default: the fabric's): "
                      f"DP = {n} / ({f.tp} × {f.pp}) = {f.dp(n)} (SimAI too takes the GPUs from its -g)",
                      FabricsimWarning, stacklevel=2)
    if steps < 1:
        raise UserError(f"--steps: must be ≥ 1, got {steps}")
    t0 = time.perf_counter()
    lw = lower_aicb(f, view, sc, n, steps)
    return AicbPlan(aicb_job(f, n, steps), fab, sc, view, lw, time.perf_counter() - t0, top_links, assumed, aicb=f)


def train(model_name: str | ModelSpec, *, fabric: str, fidelity: str = "flow", **kw: Any) -> TrainResult:
    """Simulate a training job (`plan`'s arguments) at `fidelity` and return the answer (`TrainResult.summary`:
    step_time_s, breakdown, mfu, traffic_bytes, links, job, run)."""
    return plan(model_name, fabric=fabric, **kw).run(fidelity)


__all__ = ["train", "plan", "aicb_plan", "AicbPlan", "LayerTimes", "read_layer_times", "TrainPlan", "TrainResult",
           "TrainJob", "Parallel", "ModelSpec", "PRESETS", "DEVICES", "SCHEDULES", "DIMS",
           "model", "read_model", "lower", "breakdown", "fabric_view"]
