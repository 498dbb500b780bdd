"""Scoring a placement: the job's collective (or Chakra trace) on its nodes, with the background jobs that keep
running beside it, simulated by the flow engine (search) or the packet engine (confirmation)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..chakra.lower import lower
from ..collectives.patterns import ENGINE_PATTERNS, PATTERNS, pattern_name
from ..errors import ScenarioError
from ..stats import t975
from ..workload import Workload
from .fabric import Background, Fabric

MIB = 1 << 20


class _Stopped(Exception):
    """Raised in a worker thread's engine run to stop it when the main thread was interrupted."""


@dataclass(frozen=True)
class JobSpec:
    """What runs on the placed nodes: a collective (`pattern`, `msg_bytes` per message and interface, each node
    driving `interfaces` NICs, the logical message sent once per interface, NIC k to NIC k), or a Chakra trace
    (`trace`: its rank traces; a rank uses one NIC)."""

    pattern: str = "shift-all-reduce"
    msg_bytes: int = 10 * MIB
    interfaces: int = 1
    packet: int = 1024
    trace: Any = None

    def __post_init__(self) -> None:
        if self.trace is None:
            object.__setattr__(self, "pattern", pattern_name(self.pattern))
            if self.pattern not in PATTERNS:
                raise ScenarioError("fabricsim place", "--pattern", f"unknown pattern {self.pattern!r} (one of {', '.join(PATTERNS)})")
        if self.msg_bytes <= 0:
            raise ScenarioError("fabricsim place", "--msg-mb", f"must be > 0, got {self.msg_bytes / MIB:g}")
        if self.interfaces < 1:
            raise ScenarioError("fabricsim place", "--interfaces", f"must be >= 1, got {self.interfaces}")

    @property
    def label(self) -> str:
        if self.trace is not None:
            return f"Chakra trace of {len(self.trace)} ranks"
        return f"{self.pattern} of {self.msg_bytes / MIB:g} MiB" + (f" on {self.interfaces} NICs per node" if self.interfaces > 1 else "")


def add_collective(wl: Workload, fabric: Fabric, nodes: Sequence[Sequence[tuple[int, int]]], pattern: str,
                   msg_bytes: int, packet: int = 1024, after=None) -> int:
    """Append `pattern` over `nodes` (per node its (host index, NIC) list; interface k of every node forms one
    collective, as study 000 injects per interface) to `wl`. Returns a barrier reference completing with it."""
    kind, algorithm = ENGINE_PATTERNS[pattern]
    refs = []
    for k in range(len(nodes[0])):
        ranks = [fabric.endpoint(*node[k]) for node in nodes]
        refs.append(wl.collective(kind, ranks, msg_bytes, algorithm=algorithm, packet_size=packet, after=after))
    return refs[0] if len(refs) == 1 else wl.barrier(refs)


@dataclass
class Evaluation:
    """One placement's completion times (seconds) per seed at one fidelity, and the records' link loads."""

    times: np.ndarray
    fidelity: str
    link_bytes: dict[tuple[str, int], float] = field(default_factory=dict)
    hop_packets: dict[int, int] = field(default_factory=dict)

    @property
    def mean_ms(self) -> float:
        return float(self.times.mean() * 1e3)

    @property
    def ci95_ms(self) -> float:
        """Half-width of the 95% confidence interval of the mean (Student's t), ms; 0 for one seed."""
        n = len(self.times)
        if n < 2:
            return 0.0
        return float(t975(n - 1) * self.times.std(ddof=1) / math.sqrt(n) * 1e3)


class Scorer:
    """Evaluates placements of one job on one fabric beside fixed background jobs. Background jobs repeat their
    collective back to back for as long as the job runs (their repetitions double until the job finishes
    before their last one does). O(one engine run per seed) per evaluation; flow runs are cached by placement."""

    def __init__(self, fabric: Fabric, job: JobSpec, background: Sequence[Background] = (), workers: int = 2):
        self.fabric, self.job, self.background, self.workers = fabric, job, list(background), workers
        self._reps = {b.name: 2 for b in self.background}
        self._cache: dict[tuple, Evaluation] = {}
        self.evaluations = 0

    def workload(self, nodes: Sequence[Sequence[tuple[int, int]]], reps: dict[str, int] | None = None
                 ) -> tuple[Workload, int]:
        """The job on `nodes` plus the background; returns the workload and the job's message count m (its
        messages come first, [0, m))."""
        job = self.job
        if job.trace is not None:
            lowered = lower(job.trace, self.fabric.scenario, placement=[self.fabric.endpoint(*n[0]) for n in nodes],
                            packet_size=job.packet)
            wl = lowered.workload
        else:
            wl = Workload(self.fabric.scenario)
            add_collective(wl, self.fabric, nodes, job.pattern, job.msg_bytes, job.packet)
        m1 = wl.n_messages
        for b in self.background:
            prev = None
            for _ in range((reps or self._reps)[b.name]):
                prev = add_collective(wl, self.fabric, b.nodes, b.pattern, b.msg_bytes, job.packet,
                                      after=[prev] if prev is not None else None)
        return wl, m1

    def evaluate(self, nodes: Sequence[Sequence[tuple[int, int]]], seeds: Sequence[int], fidelity: str = "flow",
                 detail: bool = False) -> Evaluation:
        """Completion of the job on `nodes` (its last message delivered, or its last compute step) per seed;
        with `detail`, the mean bytes per directed link and the packets by switch hops too. Cached."""
        return self.evaluate_all([nodes], seeds, fidelity, detail)[0]

    def evaluate_all(self, nodes_list: Sequence[Sequence[Sequence[tuple[int, int]]]], seeds: Sequence[int],
                     fidelity: str = "flow", detail: bool = False) -> list[Evaluation]:
        """`evaluate` of several placements. Packet-engine runs go to one pool of `workers` threads, every
        (placement, seed) a task (the engine releases the GIL); flow runs, a few ms each, stay in this thread."""
        keys = [(tuple(tuple(n) for n in nodes), tuple(seeds), fidelity, detail) for nodes in nodes_list]
        todo = [(i, sd) for i, k in enumerate(keys) if k not in self._cache for sd in seeds]
        if fidelity == "packet" and len(todo) > 1 and self.workers > 1:
            runs = self._threaded(nodes_list, todo, fidelity)
        else:
            runs = [self._one(nodes_list[i], sd, fidelity) for i, sd in todo]
        self.evaluations += len(todo)
        by_placement: dict[int, list] = {}
        for (i, _), run in zip(todo, runs):
            by_placement.setdefault(i, []).append(run)
        for i, got in by_placement.items():
            links: dict = {}
            hops: dict = {}
            if detail:
                for _, rec in got:
                    self._accumulate(rec, links, hops, len(seeds))
            self._cache[keys[i]] = Evaluation(np.asarray([t for t, _ in got]) * 1e-12, fidelity, links, hops)
        return [self._cache[k] for k in keys]

    def _threaded(self, nodes_list, todo: list[tuple[int, int]], fidelity: str) -> list:
        """`_one` of every (placement, seed) in `todo` on a pool of `workers` threads. Signals reach only the main
        thread, so on Ctrl-C (or any exception) it sets `stop`, which each worker's engine run reads in its
        progress callback (about every 50 ms) and stops on: the interrupt propagates within ~0.1 s instead of
        after the runs in flight."""
        import threading
        from concurrent.futures import ThreadPoolExecutor

        stop = threading.Event()

        def check(*_progress) -> None:
            if stop.is_set():
                raise _Stopped("stopped: the placement search was interrupted")

        pool = ThreadPoolExecutor(self.workers)
        futures = []
        try:
            futures = [pool.submit(self._one, nodes_list[i], sd, fidelity, check) for i, sd in todo]
            return [f.result() for f in futures]
        except BaseException:
            stop.set()
            for f in futures:
                f.cancel()
            raise
        finally:
            pool.shutdown(wait=True)

    def _one(self, nodes, seed: int, fidelity: str, progress=None):
        """(completion in ps, record) of one run; the background's repetitions double until it outlasts the job.
        `progress` goes to the engine (see `_threaded`)."""
        while True:
            reps = dict(self._reps)
            wl, m1 = self.workload(nodes, reps)
            rec = self.fabric.prepared.run(wl, seed, fidelity, progress=progress)
            done = rec.columns["flows.complete_ps"][:m1]
            if not rec.complete or (done < 0).any():
                raise ScenarioError(self.fabric.name, "placement", f"the job did not complete ({rec.incomplete_reason()})")
            t = int(done.max()) if done.size else 0
            if self.job.trace is not None and len(rec.columns["compute.end_ps"]):
                t = max(t, int(rec.columns["compute.end_ps"].max()))
            if not self.background or int(rec.columns["flows.complete_ps"][m1:].max()) > t:
                return t, rec
            for b in self.background:
                self._reps[b.name] = max(self._reps[b.name], 2 * reps[b.name])

    def _accumulate(self, rec, links: dict, hops: dict, n: int) -> None:
        """Mean bytes per directed link (node, port) over seeds, and received packets by switch hops."""
        q = rec.columns
        for node, port, b in zip(q["queues.node"].tolist(), q["queues.port"].tolist(), q["queues.tx_bytes"].tolist()):
            if b:
                links[(node, port)] = links.get((node, port), 0.0) + b / n
        for h, c in rec.hops.items():
            hops[int(h)] = hops.get(int(h), 0) + int(c)
