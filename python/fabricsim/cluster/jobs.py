"""The job stream of a cluster run: size and iteration distributions parsed from their option strings, Poisson
arrivals, and the arrival rate that gives an offered load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ScenarioError

SOURCE = "cluster"
"""The source every cluster input error names; its field is the ClusterConfig field (`fabricsim cluster` says the
option instead)."""

SIZE_FORMS = "cpo, N, choice:A,B,..., or uniform:LO:HI"
ITERATION_FORMS = "N, choice:A,B,..., uniform:LO:HI or exp:MEAN"

STREAM_SIZES, STREAM_ITERATIONS, STREAM_ARRIVALS, STREAM_POLICY = 1, 2, 3, 4
"""Independent random streams of one seed (`numpy.random.default_rng([seed, stream])`): the same seed gives
every policy the same jobs at the same times (common random numbers), whatever the policy draws."""


@dataclass(frozen=True)
class Dist:
    """A distribution of positive integers parsed from an option string: `kind` is const, choice, uniform, exp
    or cpo; `values` its numbers (const: [N]; choice: the values; uniform: [LO, HI]; exp: [MEAN]; cpo: [])."""

    text: str
    kind: str
    values: tuple[float, ...]
    cap: int | None = None
    floor: int = 1

    def draw(self, rng: np.random.Generator, n: int, seed: int = 1) -> np.ndarray:
        """n draws (int64), clipped to [floor, cap]. O(n) (cpo: O(n) trace draws)."""
        if self.kind == "const":
            out = np.full(n, int(self.values[0]), dtype=np.int64)
        elif self.kind == "choice":
            out = rng.choice(np.asarray(self.values, dtype=np.int64), size=n)
        elif self.kind == "uniform":
            out = rng.integers(int(self.values[0]), int(self.values[1]) + 1, size=n)
        elif self.kind == "exp":
            out = np.maximum(1, np.rint(rng.exponential(self.values[0], size=n))).astype(np.int64)
        else:
            from ..cpo.locality import synthetic_trace

            # The trace stops at fill x capacity VMs; with room for n of its largest applications it stops after
            # at least n independent draws, of which the first n are taken (the last, truncated one is not).
            out = np.asarray(synthetic_trace(seed, capacity_vms=(n + 1) * 256, fill=1.0)[:n], dtype=np.int64)
        out = np.maximum(out.astype(np.int64), self.floor)
        return np.minimum(out, self.cap) if self.cap is not None else out

    def mean_hint(self) -> float:
        """The distribution's mean before clipping (cpo: NaN; its mean depends on the trace)."""
        if self.kind == "const":
            return float(self.values[0])
        if self.kind == "choice":
            return float(np.mean(self.values))
        if self.kind == "uniform":
            return (self.values[0] + self.values[1]) / 2
        if self.kind == "exp":
            return float(self.values[0])
        return float("nan")


def parse_dist(text: str, field: str, forms: str, *, allow_cpo: bool = False, allow_exp: bool = False,
               minimum: int = 1, cap: int | None = None) -> Dist:
    """Parse `text` into a Dist; ScenarioError naming `field` and the forms it takes. Every value must be an
    integer >= `minimum` (exp: a mean > 0) and, with `cap`, <= cap."""
    s = str(text).strip().lower()

    def bad(reason: str) -> ScenarioError:
        return ScenarioError(SOURCE, field, f"{reason} (give {forms})")

    def ints(parts: Sequence[str]) -> tuple[int, ...]:
        out = []
        for p in parts:
            try:
                v = int(p.strip())
            except ValueError:
                raise bad(f"{p.strip()!r} in {text!r} is not an integer") from None
            if v < minimum:
                raise bad(f"{v} in {text!r} is below {minimum}")
            if cap is not None and v > cap:
                raise ScenarioError(SOURCE, field, f"{v} nodes in {text!r}: the fabric holds {cap}")
            out.append(v)
        return tuple(out)

    if s == "cpo":
        if not allow_cpo:
            raise bad(f"{text!r} is not a form of {field}")
        return Dist(text, "cpo", (), cap, minimum)
    kind, sep, rest = s.partition(":")
    if not sep:
        return Dist(text, "const", ints([s]), cap, minimum)
    if kind == "choice":
        vals = ints([p for p in rest.split(",")])
        if not vals:
            raise bad(f"{text!r} lists no values")
        return Dist(text, "choice", vals, cap, minimum)
    if kind == "uniform":
        parts = rest.split(":")
        if len(parts) != 2:
            raise bad(f"{text!r} needs two bounds")
        lo, hi = ints(parts)
        if lo > hi:
            raise bad(f"{text!r} has its low bound above its high bound")
        return Dist(text, "uniform", (lo, hi), cap, minimum)
    if kind == "exp" and allow_exp:
        try:
            mean = float(rest)
        except ValueError:
            raise bad(f"{rest!r} in {text!r} is not a number") from None
        if not mean > 0 or not np.isfinite(mean):
            raise bad(f"the mean in {text!r} must be > 0")
        return Dist(text, "exp", (mean,), cap, minimum)
    raise bad(f"{text!r} is not a form of {field}")


@dataclass
class Job:
    """One job of the stream: it arrives at `arrival` (s; the simulator's clock takes it to the nearest picosecond),
    needs `nodes` nodes and runs its collective `iterations` times back to back. `hosts` fixes its placement (host
    index per rank) instead of the policy."""

    id: int
    arrival: float
    nodes: int
    iterations: int
    hosts: tuple[int, ...] | None = None


def draw_jobs(n: int, sizes: Dist, iterations: Dist, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The stream's sizes and iteration counts for `seed` (streams STREAM_SIZES and STREAM_ITERATIONS)."""
    if n < 1:
        raise ScenarioError(SOURCE, "jobs", f"must be >= 1, got {n}")
    s = sizes.draw(np.random.default_rng([seed, STREAM_SIZES]), n, seed)
    it = iterations.draw(np.random.default_rng([seed, STREAM_ITERATIONS]), n, seed)
    return s, it


def arrivals(n: int, rate: float, seed: int) -> np.ndarray:
    """Poisson arrival times (s) at `rate` jobs/s, the first at its first exponential gap (stream STREAM_ARRIVALS)."""
    if not rate > 0 or not np.isfinite(rate):
        raise ScenarioError(SOURCE, "arrival_rate", f"must be a positive number of jobs/s, got {rate!r}")
    return np.cumsum(np.random.default_rng([seed, STREAM_ARRIVALS]).exponential(1.0 / rate, size=n))


def rate_for_load(load: float, sizes: np.ndarray, iterations: np.ndarray, servers_needed: Callable[[int], int],
                  t_ref: Callable[[int], float], servers: int) -> float:
    """The arrival rate (jobs/s) that offers `load` of the cluster: load = rate x W / servers, where W is the mean
    over the drawn jobs of (servers the job holds) x (its iterations x t_ref(nodes)), t_ref(n) being one
    iteration of n nodes alone on the packed placement of an empty fabric (the fewest racks, in server order).
    So at load 1 the jobs' server-seconds arrive exactly as fast as the cluster has them, if nothing slowed."""
    if not load > 0 or not np.isfinite(load):
        raise ScenarioError(SOURCE, "load", f"must be a positive fraction of the cluster, got {load!r}")
    work = np.asarray([servers_needed(int(n)) * int(k) * t_ref(int(n)) for n, k in zip(sizes, iterations)])
    return load * servers / float(work.mean())
