"""The multi-job cluster simulator: Poisson job arrivals, a FIFO queue, placement by policy, and jobs that slow
each other on shared links, simulated event by event at job granularity.

Model. A job of n nodes runs its collective `iterations` times back to back. When it starts, its solo profile
(one iteration alone on its placement, flow engine, cached by shape: `solo.SoloCache`) gives t_solo and the
bytes it puts on each shared resource. Between events (arrivals, departures) every running job progresses at
y_j / t_solo_j iterations per second, y_j <= 1 being its speed beside the jobs it shares resources with
(`interference.Interference`: processor sharing at its most loaded shared resource, or max-min fair fluid
sharing); speeds change only at events and only in the components an event touches. A job
ends when its iterations are done. Jobs wait in one FIFO queue: the head starts as soon as enough servers are
free and the jobs behind it wait too (head-of-line blocking), so no job is overtaken.
Outputs per job: wait = start - arrival, JCT = finish - arrival, slowdown = (finish - start) /
(iterations x t_solo) (1 when nothing it shares is busy). Over time: utilization = busy servers / servers, and
fragmentation = the share of the free servers that sit in racks with a busy server (0: all free capacity is in
whole racks; 1: none is).

Time. The event loop keeps time in whole picoseconds (Python ints; the engine's unit) and its departures in a
heapq keyed by (time_ps, version, job id), so events order exactly and the same inputs give the same run. A
job's arrival (seconds, a float: drawn from the Poisson stream or given) is rounded to the nearest picosecond
once, as the loop takes it in; a finish time predicted from a job's speed is rounded to the nearest picosecond
when it is scheduled (int(round(x)): halves to even; never before the current time). So a job alone ends exactly
iterations x t_solo after its start (t_solo is a whole number of picoseconds from the engine). At one
picosecond, departures come before arrivals, and arrivals go in job-id order; departures go by version (how
many times the job's finish was rescheduled: the one it was last scheduled with) and then job id, the order of
the float clock this replaced, which the published policy comparison was run with. Outputs stay in seconds:
floats, each the float nearest ps / 1e12 (`to_s`).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ScenarioError
from ..advisor.fabric import Fabric, named_fabric, scenario_fabric
from ..collectives.fabrics import default_fabric
from .interference import SHARING, Interference
from .jobs import (ITERATION_FORMS, SIZE_FORMS, SOURCE, STREAM_POLICY, Job, arrivals, draw_jobs, parse_dist,
                   rate_for_load)
from .policies import POLICIES, ClusterState, choose
from .solo import SoloCache

MIB = 1 << 20
PS_PER_S = 10**12


def to_ps(seconds: float) -> int:
    """`seconds` as the nearest whole number of picoseconds (a Python int; halves to even)."""
    return int(round(seconds * 1e12))


def to_s(ps: int) -> float:
    """`ps` picoseconds in seconds: the float nearest ps / 1e12 (so to_ps(to_s(ps)) == ps below ~2,000 s)."""
    return ps / PS_PER_S


@dataclass
class ClusterConfig:
    """One cluster run. `fabric` names a built-in fabric (`collectives.fabrics`; None: the default one) or a
    fabric file, unless `scenario` gives a fabric file. Exactly one of `load` (offered load, see `jobs.rate_for_load`) and `arrival_rate` (jobs/s) sets the
    arrivals. `sizes`: cpo (study 003's synthetic trace, capped at the fabric's node slots), N, choice:A,B,... or
    uniform:LO:HI (at least 2: a collective needs two nodes; the trace's 1-VM applications become 2-node jobs);
    `iterations`: N, choice:..., uniform:LO:HI or exp:MEAN (rounded, at least 1)."""

    policy: str = "pack"
    fabric: str | None = None
    scenario: str | None = None
    jobs: int = 100
    sizes: str = "cpo"
    iterations: str = "100"
    pattern: str = "ring-all-reduce"
    msg_mb: float = 10.0
    interfaces: int = 1
    per_server: int | None = None
    """Nodes of a job per server at most; None: 1, or on a GPU fabric (`rail_optimized`, a node is a GPU) every GPU
    of the server (gpus_per_server // interfaces), so a job fills whole servers (`resolved`)."""
    packet: int = 1024
    load: float | None = 0.7
    arrival_rate: float | None = None
    sharing: str = "ps"
    seed: int = 1
    fidelity: str = "flow"
    """The engine behind the solo profiles: flow (the default: one fast run per placement shape), or hybrid or
    packet to confirm a flow result with buffers modelled (the flow engine models none and is pessimistic by up
    to 28% on contended collectives at 4 MiB buffers; issue 30)."""

    def __post_init__(self) -> None:
        from ..checks import fields
        from ..collectives.patterns import pattern_name

        fields(self, nonneg=("seed",))  # types here; ranges in `check`, which knows the fabric and the options' names
        self.pattern = pattern_name(self.pattern)  # a deprecated name (all-reduce) warns and gets its new one

    def resolved(self, fabric: Fabric) -> "ClusterConfig":
        """This config with its defaults that depend on the fabric filled in: `per_server` (see the field)."""
        from dataclasses import replace

        if self.per_server is not None:
            return self
        gpus = fabric.gpus is not None and isinstance(self.interfaces, int) and self.interfaces >= 1
        return replace(self, per_server=max(1, int(fabric.nics.min()) // self.interfaces) if gpus else 1)

    def check(self, fabric: Fabric) -> None:
        """Raise ScenarioError naming the option for anything impossible on `fabric`."""
        from ..collectives.patterns import PATTERNS

        if self.per_server is None:
            self.resolved(fabric).check(fabric)
            return

        if self.policy not in POLICIES:
            raise ScenarioError(SOURCE, "policy", f"unknown policy {self.policy!r} (one of {', '.join(POLICIES)}, or all)")
        if self.pattern not in PATTERNS:
            raise ScenarioError(SOURCE, "pattern", f"unknown pattern {self.pattern!r} (one of {', '.join(PATTERNS)})")
        if not (isinstance(self.msg_mb, (int, float)) and self.msg_mb > 0 and math.isfinite(self.msg_mb)):
            raise ScenarioError(SOURCE, "msg_mb", f"must be a positive number of MiB, got {self.msg_mb!r}")
        if self.jobs < 1:
            raise ScenarioError(SOURCE, "jobs", f"must be >= 1, got {self.jobs}")
        if self.interfaces < 1 or self.interfaces > int(fabric.nics.min()):
            raise ScenarioError(SOURCE, "interfaces", f"must be 1..{int(fabric.nics.min())} (NICs per server "
                                f"on {fabric.name}), got {self.interfaces}")
        top = int(fabric.nics.min()) // self.interfaces
        if self.per_server < 1 or self.per_server > top:
            raise ScenarioError(SOURCE, "per_server", f"must be 1..{top} ({int(fabric.nics.min())} NICs per "
                                f"server / {self.interfaces} per node), got {self.per_server}")
        if self.packet < 64:
            raise ScenarioError(SOURCE, "packet", f"must be >= 64, got {self.packet}")
        if (self.load is None) == (self.arrival_rate is None):
            raise ScenarioError(SOURCE, "load", "give exactly one of load (offered load) and arrival_rate (jobs/s)")
        if self.load is not None and not (self.load > 0 and math.isfinite(self.load)):
            raise ScenarioError(SOURCE, "load", f"must be a positive fraction of the cluster, got {self.load!r}")
        if self.arrival_rate is not None and not (self.arrival_rate > 0 and math.isfinite(self.arrival_rate)):
            raise ScenarioError(SOURCE, "arrival_rate", f"must be a positive number of jobs/s, got {self.arrival_rate!r}")
        if self.sharing not in SHARING:
            raise ScenarioError(SOURCE, "sharing", f"unknown sharing model {self.sharing!r} (one of {', '.join(SHARING)})")
        if self.seed < 0:
            raise ScenarioError(SOURCE, "seed", f"must be >= 0, got {self.seed}")
        if self.fidelity not in ("flow", "hybrid", "packet"):
            raise ScenarioError(SOURCE, "fidelity", f"must be flow, hybrid or packet, got {self.fidelity!r}")
        self.distributions(fabric)

    def distributions(self, fabric: Fabric):
        """The parsed (sizes, iterations) distributions; ScenarioError naming the field if malformed."""
        sizes = parse_dist(self.sizes, "sizes", SIZE_FORMS, allow_cpo=True, minimum=2, cap=self.capacity(fabric))
        its = parse_dist(self.iterations, "iterations", ITERATION_FORMS, allow_exp=True, minimum=1)
        return sizes, its

    @property
    def msg_bytes(self) -> int:
        return int(round(self.msg_mb * MIB))

    def capacity(self, fabric: Fabric) -> int:
        """Nodes the whole fabric can hold: servers x per_server."""
        return fabric.n * self.resolved(fabric).per_server


def load_fabric(config: ClusterConfig) -> Fabric:
    """The fabric `config` names (a built-in one, or its scenario file); ScenarioError naming the option."""
    if config.scenario:
        return scenario_fabric(config.scenario)
    return named_fabric(config.fabric or default_fabric())


@dataclass
class ClusterResult:
    """A cluster run: `jobs` (one row per job, in arrival order), `timeline` (the state after each event time:
    t_s, busy servers, utilization, fragmentation, running and queued jobs), and run counters."""

    config: ClusterConfig
    fabric: str
    servers: int
    jobs: Any
    timeline: Any
    arrival_rate: float
    wall_s: float
    solo_runs: int
    solo_hits: int
    engine_s: float
    solves: int
    counters: dict[str, Any] = field(default_factory=dict)

    def time_mean(self, column: str) -> float:
        """The time-weighted mean of a timeline column over [0, the last departure]."""
        tl = self.timeline
        t = tl["t_s"].to_numpy()
        v = tl[column].to_numpy()
        if len(t) < 2 or t[-1] <= 0:
            return float(v[-1]) if len(v) else 0.0
        dt = np.diff(np.concatenate([[0.0], t]))
        prev = np.concatenate([[0.0], v[:-1]])
        return float((prev * dt).sum() / t[-1])

    def metrics(self) -> dict[str, Any]:
        """Flat scalar metrics (seconds, fractions): the sweep task's row."""
        j = self.jobs
        jct, sd, wait = j["jct_s"].to_numpy(), j["slowdown"].to_numpy(), j["wait_s"].to_numpy()
        return {"jobs": int(len(j)), "mean_jct_s": float(jct.mean()), "p50_jct_s": float(np.percentile(jct, 50)),
                "p95_jct_s": float(np.percentile(jct, 95)), "p99_jct_s": float(np.percentile(jct, 99)),
                "mean_slowdown": float(sd.mean()), "p95_slowdown": float(np.percentile(sd, 95)),
                "max_slowdown": float(sd.max()), "slowed_jobs": int((sd > 1 + 1e-9).sum()),
                "mean_wait_s": float(wait.mean()), "mean_racks": float(j["racks"].mean()),
                "utilization": self.time_mean("utilization"), "fragmentation": self.time_mean("fragmentation"),
                "makespan_s": float(j["finish_s"].max()), "arrival_rate": self.arrival_rate,
                "solo_runs": self.solo_runs, "solo_hits": self.solo_hits, "engine_s": round(self.engine_s, 4),
                "wall_s": round(self.wall_s, 4)}


class _Running:
    """A running job: `left` iterations still to run as of time `mark` (ps), at speed `y`; `start` and `mark` are
    int picoseconds, `t_solo` the solo iteration in seconds and `t_ps` in picoseconds (a whole number, as a float)."""

    __slots__ = ("job", "start", "t_solo", "t_ps", "left", "mark", "y", "version", "hosts", "label", "racks")

    def __init__(self, job: Job, start: int, t_solo: float, hosts, label: str, racks: int):
        self.job, self.start, self.t_solo, self.hosts, self.label, self.racks = job, start, t_solo, hosts, label, racks
        self.t_ps = float(to_ps(t_solo))
        self.left = float(job.iterations)
        self.mark = start
        self.y = 1.0
        self.version = 0

    def finish(self) -> int:
        """The predicted finish (ps) at the current speed, rounded to the nearest picosecond, not before `mark`."""
        return self.mark + max(0, int(round(self.left * self.t_ps / self.y)))


def run_jobs(solo: SoloCache, jobs: Sequence[Job], policy: str, *, per_server: int = 1, seed: int = 1,
             sharing: str = "ps", progress: Callable[[int, int], None] | None = None) -> tuple[list[dict], list[tuple], dict]:
    """The event loop over `jobs` (sorted by arrival), in integer picoseconds (see the module). Returns the per-job
    rows (job-id order; times in seconds), the timeline rows (t in seconds, busy, fragmentation, running, queued)
    and counters. O(events × (policy + affected component solve))."""
    fab = solo.fabric
    busy = np.zeros(fab.n, dtype=bool)
    racks_busy = np.zeros(len(fab.racks), dtype=np.int64)
    rack_size = np.asarray([len(r) for r in fab.racks])
    inter = Interference(solo.resources.capacity, sharing)
    running: dict[int, _Running] = {}
    heap: list[tuple[int, int, int]] = []  # (finish ps, version, job id); stale versions are skipped
    now = [0]  # ps

    def remaining(jid: int) -> float:
        """Seconds of solo work job `jid` has left now."""
        r = running[jid]
        return (r.left - (now[0] - r.mark) * r.y / r.t_ps) * r.t_solo

    state = ClusterState(solo, busy, per_server, inter, np.random.default_rng([seed, STREAM_POLICY]), remaining)
    rows: dict[int, dict] = {}
    timeline: list[tuple] = [(0, 0, 0.0, 0, 0)]
    queue: list[Job] = []
    arrival = {j.id: to_ps(j.arrival) for j in jobs}  # the one rounding of each arrival
    order = sorted(jobs, key=lambda j: (arrival[j.id], j.id))
    nxt = 0
    done = 0

    def speeds(changed: dict[int, float], t: int) -> None:
        for jid, y in changed.items():
            r = running[jid]
            if r.y == y and r.mark == t:
                continue
            r.left -= (t - r.mark) * r.y / r.t_ps
            r.mark = t
            r.y = y
            r.version += 1
            heapq.heappush(heap, (r.finish(), r.version, jid))

    def fragmentation() -> float:
        free = rack_size - racks_busy
        total = int(free.sum())
        return float(free[(racks_busy > 0)].sum() / total) if total else 0.0

    def start_queued(t: int) -> None:
        while queue and state.fits(queue[0].nodes):
            job = queue.pop(0)
            now[0] = t
            if job.hosts is not None:
                hosts, label = tuple(job.hosts), "given"
                if busy[list(hosts)].any():
                    raise ScenarioError(SOURCE, "hosts", f"job {job.id}'s servers are busy")
            else:
                hosts, label = choose(policy, state, job.nodes, job.iterations)
            prof = solo.profile(hosts)
            used = sorted(set(hosts))
            busy[used] = True
            np.add.at(racks_busy, fab.rack[used], 1)
            run = _Running(job, t, prof.t_solo, hosts, label, len(set(fab.rack[used].tolist())))
            running[job.id] = run
            heapq.heappush(heap, (run.finish(), 0, job.id))
            speeds(inter.add(job.id, prof.res, prof.rates), t)

    while nxt < len(order) or running or queue:
        t_arr = arrival[order[nxt].id] if nxt < len(order) else None
        while heap and (heap[0][2] not in running or heap[0][1] != running[heap[0][2]].version):
            heapq.heappop(heap)
        t_dep = heap[0][0] if heap else None
        if t_dep is None and t_arr is None:
            raise ScenarioError(SOURCE, "sizes", f"job {queue[0].id} needs {queue[0].nodes} nodes; the fabric holds "
                                f"{int(state.free_slots().sum())}")
        if t_dep is not None and (t_arr is None or t_dep <= t_arr):
            t = t_dep
            _, _, jid = heapq.heappop(heap)
            r = running.pop(jid)
            used = sorted(set(r.hosts))
            busy[used] = False
            np.subtract.at(racks_busy, fab.rack[used], 1)
            now[0] = t
            changed = inter.remove(jid)
            speeds(changed, t)
            j = r.job
            a = arrival[j.id]
            rows[j.id] = {"job": j.id, "arrival_s": to_s(a), "start_s": to_s(r.start), "finish_s": to_s(t),
                          "nodes": j.nodes, "iterations": j.iterations, "t_solo_s": r.t_solo,
                          "wait_s": to_s(r.start - a), "jct_s": to_s(t - a),
                          "slowdown": (t - r.start) / (j.iterations * r.t_ps), "racks": r.racks,
                          "servers": " ".join(str(fab.ids[h]) for h in r.hosts), "placement": r.label}
            done += 1
            if progress is not None:
                progress(done, len(order))
        else:
            t = t_arr
            queue.append(order[nxt])
            nxt += 1
        start_queued(t)
        nb = int(busy.sum())
        entry = (t, nb, fragmentation(), len(running), len(queue))
        if timeline[-1][0] == t:
            timeline[-1] = entry
        else:
            timeline.append(entry)
    counters = {"solves": inter.solves}
    timeline_s = [(to_s(t), *rest) for t, *rest in timeline]
    return [rows[j.id] for j in sorted(jobs, key=lambda j: j.id)], timeline_s, counters


def make_jobs(config: ClusterConfig, solo: SoloCache) -> tuple[list[Job], float]:
    """The job stream of `config` (sizes, iterations, Poisson arrivals) and its arrival rate (jobs/s)."""
    fab = solo.fabric
    sizes, its = config.distributions(fab)
    n, k = draw_jobs(config.jobs, sizes, its, config.seed)
    if config.arrival_rate is not None:
        rate = float(config.arrival_rate)
    else:
        ps = config.per_server
        rate = rate_for_load(config.load, n, k, lambda m: -(-m // ps), lambda m: packed_t_solo(solo, m, ps), fab.n)
    t = arrivals(config.jobs, rate, config.seed)
    return [Job(i, float(t[i]), int(n[i]), int(k[i])) for i in range(config.jobs)], rate


def packed_t_solo(solo: SoloCache, n: int, per_server: int = 1) -> float:
    """One iteration of n nodes alone on the first servers of an empty fabric (per_server nodes each)."""
    hosts = [h for h in range(-(-n // per_server)) for _ in range(per_server)][:n]
    return solo.profile(hosts).t_solo


def simulate(config: ClusterConfig, *, fabric: Fabric | None = None, solo: SoloCache | None = None,
             jobs: Sequence[Job] | None = None, progress: Callable[[int, int], None] | None = None) -> ClusterResult:
    """Run one cluster simulation. Pass `fabric` and `solo` (a SoloCache of the same fabric and job spec) to reuse
    them across runs; `jobs` replaces the drawn stream (with hosts fixed per job, the policy is not consulted)."""
    import pandas as pd

    t0 = time.perf_counter()
    fabric = fabric or load_fabric(config)
    config = config.resolved(fabric)
    config.check(fabric)
    if solo is None:
        solo = SoloCache(fabric, config.pattern, config.msg_bytes, config.interfaces, config.packet,
                         fidelity=config.fidelity)
    elif (solo.fabric is not fabric or solo.pattern != config.pattern or solo.msg_bytes != config.msg_bytes
          or solo.interfaces != config.interfaces or solo.packet != config.packet or solo.fidelity != config.fidelity):
        raise ValueError("solo: a SoloCache of another fabric or job spec")
    runs0, hits0, eng0 = solo.runs, solo.hits, solo.engine_s
    if jobs is None:
        jobs, rate = make_jobs(config, solo)
    else:
        jobs = list(jobs)
        rate = float("nan")
    top = config.capacity(fabric)
    for j in jobs:
        if j.nodes > top:
            raise ScenarioError(SOURCE, "sizes", f"a job of {j.nodes} nodes does not fit {fabric.name} "
                                f"({fabric.n} servers x {config.per_server} per server)")
    rows, tl, counters = run_jobs(solo, jobs, config.policy, per_server=config.per_server, seed=config.seed,
                                  sharing=config.sharing, progress=progress)
    jobs_df = pd.DataFrame(rows)
    jobs_df.insert(0, "policy", config.policy)
    jobs_df.insert(1, "seed", config.seed)
    tl_df = pd.DataFrame(tl, columns=["t_s", "busy", "fragmentation", "running", "queued"])
    tl_df.insert(2, "utilization", tl_df["busy"] / fabric.n)
    return ClusterResult(config, fabric.name, fabric.n, jobs_df, tl_df, rate, time.perf_counter() - t0,
                         solo.runs - runs0, solo.hits - hits0, solo.engine_s - eng0, counters["solves"], counters)


PAYLOAD_KEYS = {f for f in ClusterConfig.__dataclass_fields__ if f not in ("seed",)} | {"msg_mib"}


def config_from_payload(payload: dict, seed: int) -> ClusterConfig:
    """A ClusterConfig from a sweep payload (ClusterConfig's fields; `msg_mib` is accepted for `msg_mb`)."""
    unknown = sorted(set(payload) - PAYLOAD_KEYS)
    if unknown:
        raise ScenarioError(SOURCE, unknown[0], f"unknown key (keys: {', '.join(sorted(PAYLOAD_KEYS))})")
    kw = {k: v for k, v in payload.items() if k != "msg_mib"}
    if kw.get("fidelity", "") is None:
        kw.pop("fidelity")
    if "msg_mib" in payload:
        kw["msg_mb"] = payload["msg_mib"]
    if "arrival_rate" in kw and "load" not in kw:
        kw["load"] = None
    try:
        return ClusterConfig(**kw, seed=int(seed))
    except TypeError as e:
        raise ScenarioError(SOURCE, "", str(e)) from None


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task (`task = "fabricsim.cluster.sim:sweep_task"`): one cluster run of the payload's ClusterConfig
    fields at `seed`; returns `ClusterResult.metrics()` (flat scalars)."""
    cfg = config_from_payload(payload, seed)
    return simulate(cfg).metrics()
