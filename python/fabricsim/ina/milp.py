"""The aggregation-routing MILP shared by ATRO (topology free) and ARO (topology fixed), solved with HiGHS or CP-SAT.

The study's model (§III-B) is quadratic only because the rate r multiplies the flow counts y. With one link
capacity b everywhere, r = b / τ where τ is the largest number of reduction flows any link carries (both
directions counted, constraint (14)), so maximizing r is minimizing the integer τ: a MILP. Two exact ways are
offered: `objective="min-load"` minimizes τ directly; `"levels"` proves τ = 1, 2, … infeasible in turn with
the stronger capacity rows y_uv ≤ T·d_uv until one is feasible (the first feasible level is optimal). The
study's quantized sending rates (QSR, rates b·k/N) are `rate_levels=N`.

Variables (per switch s, ordered switch pair (u, v)): w_s workers attached to s (workers are interchangeable,
so their attachment is a count, not 90 binaries per switch); p_s the PS on s; d_uv a link u–v oriented u→v
(layers forbid flows both ways on one link, so the study's y_uv + y_vu ≤ τ becomes y_uv ≤ τ·d_uv); y_uv reduction
flows u→v; q_s flows from s into the PS; o_a the one output flow of aggregator a; l_s the layer of s.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Lin:
    """A linear model as columns and rows; every coefficient and bound integral (CP-SAT takes it as is)."""

    lb: list[float] = field(default_factory=list)
    ub: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    rows: list[tuple[float, float, list[int], list[float]]] = field(default_factory=list)

    def var(self, lb: float, ub: float, integer: bool = True, cost: float = 0.0) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        self.integer.append(integer)
        self.cost.append(cost)
        return len(self.lb) - 1

    def row(self, lo: float, hi: float, terms: dict[int, float] | list[tuple[int, float]]) -> None:
        items = list(terms.items()) if isinstance(terms, dict) else list(terms)
        merged: dict[int, float] = {}
        for i, c in items:
            merged[i] = merged.get(i, 0.0) + c
        idx = [i for i, c in merged.items() if c != 0]
        self.rows.append((lo, hi, idx, [merged[i] for i in idx]))


@dataclass
class Solved:
    status: str  # "optimal", "feasible", "infeasible", "unknown"
    values: np.ndarray | None
    objective: float | None
    bound: float | None
    seconds: float


def solve(lin: Lin, solver: str, time_limit_s: float, maximize: bool = False) -> Solved:
    """Solve `lin` (minimize its cost, or maximize) with "highs" or "cpsat"; one thread and a fixed seed."""
    t0 = time.perf_counter()
    inf = math.inf
    if solver == "highs":
        import highspy

        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("time_limit", float(max(time_limit_s, 0.01)))
        h.setOptionValue("random_seed", 0)
        h.setOptionValue("threads", 1)
        h.setOptionValue("mip_rel_gap", 0.0)
        n = len(lin.lb)
        kinf = highspy.kHighsInf
        h.addVars(n, np.array([kinf * -1 if v == -inf else v for v in lin.lb]),
                  np.array([kinf if v == inf else v for v in lin.ub]))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(lin.cost, dtype=float))
        ints = np.array([i for i, b in enumerate(lin.integer) if b], dtype=np.int32)
        if len(ints):
            h.changeColsIntegrality(len(ints), ints, np.full(len(ints), highspy.HighsVarType.kInteger))
        for lo, hi, idx, val in lin.rows:
            h.addRow(-kinf if lo == -inf else lo, kinf if hi == inf else hi, len(idx),
                     np.array(idx, dtype=np.int32), np.array(val, dtype=float))
        if maximize:
            h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.run()
        st = h.getModelStatus()
        info = h.getInfo()
        has = info.primal_solution_status == 2
        vals = np.array(h.getSolution().col_value) if has else None
        if st == highspy.HighsModelStatus.kOptimal:
            status = "optimal"
        elif st == highspy.HighsModelStatus.kInfeasible:
            status = "infeasible"
        else:
            status = "feasible" if has else "unknown"
        obj = info.objective_function_value if has else None
        bound = info.mip_dual_bound if status != "infeasible" else None
        if status == "optimal":
            bound = obj
        return Solved(status, vals, obj, bound, time.perf_counter() - t0)
    if solver == "cpsat":
        from ortools.sat.python import cp_model

        m = cp_model.CpModel()
        xs = []
        for lo, hi, integer in zip(lin.lb, lin.ub, lin.integer):
            if not integer:
                raise ValueError("CP-SAT needs integer variables")
            xs.append(m.new_int_var(int(lo), int(hi), ""))
        for lo, hi, idx, val in lin.rows:
            expr = sum(int(c) * xs[i] for i, c in zip(idx, val))
            if lo == hi:
                m.add(expr == int(lo))
            else:
                if lo != -inf:
                    m.add(expr >= int(math.ceil(lo)))
                if hi != inf:
                    m.add(expr <= int(math.floor(hi)))
        obj = sum(int(c) * xs[i] for i, c in enumerate(lin.cost) if c)
        if not isinstance(obj, int):
            (m.maximize if maximize else m.minimize)(obj)
        cp = cp_model.CpSolver()
        cp.parameters.num_workers = 1
        cp.parameters.random_seed = 0
        cp.parameters.max_time_in_seconds = float(max(time_limit_s, 0.01))
        st = cp.solve(m)
        secs = time.perf_counter() - t0
        if st == cp_model.INFEASIBLE:
            return Solved("infeasible", None, None, None, secs)
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Solved("unknown", None, None, None, secs)
        vals = np.array([cp.value(x) for x in xs], dtype=float)
        return Solved("optimal" if st == cp_model.OPTIMAL else "feasible", vals, cp.objective_value,
                      cp.best_objective_bound, secs)
    raise ValueError(f"solver must be 'highs' or 'cpsat', not '{solver}'")


@dataclass
class Problem:
    """One aggregation-routing problem over `aggregator.__len__()` switches.

    `pairs`: the switch pairs (u < v) that may be linked (all pairs for a reconfigurable fabric, the fixed links
    otherwise). `ports`: per-switch port count η, enforced only when `workers_at` is None (the optimizer places
    workers and links); `workers_at`/`ps_at`: a fixed placement (workers per switch, the PS's switch).
    Every link has the same capacity; worker and PS links carry one and q flows."""

    aggregator: list[bool]
    workers: int
    layers: int
    pairs: list[tuple[int, int]]
    ports: list[int] | None = None
    workers_at: list[int] | None = None
    ps_at: int | None = None


@dataclass
class Routing:
    """A solved problem: flows y[(u, v)] on oriented switch links, q into the PS from `ps_at`, the placement."""

    max_load: int
    workers_at: list[int]
    ps_at: int
    flows: dict[tuple[int, int], int]
    links: list[tuple[int, int]]
    to_ps: int
    layer: list[int]


class _Vars:
    def __init__(self, lin: Lin, pb: Problem, cap: int | None, quantized: list[int] | None):
        S = len(pb.aggregator)
        n, L = pb.workers, pb.layers
        M = n
        self.S = S
        fixed = pb.workers_at is not None
        self.w = [lin.var(pb.workers_at[s], pb.workers_at[s]) if fixed else lin.var(0, pb.ports[s]) for s in range(S)]
        self.p = [lin.var(int(pb.ps_at == s), int(pb.ps_at == s)) if pb.ps_at is not None else lin.var(0, 1)
                  for s in range(S)]
        self.tau = None
        self.z = None
        if quantized is not None:
            self.z = [lin.var(0, 1, cost=k) for k in range(1, len(quantized) + 1)]
            lin.row(1, 1, {z: 1 for z in self.z})
        elif cap is None:
            self.tau = lin.var(1, M, cost=1)
        ymax = M if cap is None else cap
        self.d, self.y = {}, {}
        for u, v in pb.pairs:
            for a, b in ((u, v), (v, u)):
                self.d[a, b] = lin.var(0, 1)
                self.y[a, b] = lin.var(0, ymax)
            lin.row(-math.inf, 1, {self.d[u, v]: 1, self.d[v, u]: 1})
        self.q = [lin.var(0, ymax) for _ in range(S)]
        self.o = {s: lin.var(0, 1) for s in range(S) if pb.aggregator[s]}
        self.l = [lin.var(1, L) for _ in range(S)]
        lin.row(n, n, {x: 1 for x in self.w})
        lin.row(1, 1, {x: 1 for x in self.p})
        for (u, v), y in self.y.items():
            if cap is not None:
                lin.row(-math.inf, 0, {y: 1, self.d[u, v]: -cap})
            else:
                lin.row(-math.inf, 0, {y: 1, self.d[u, v]: -M})
                if self.tau is not None:
                    lin.row(-math.inf, 0, {y: 1, self.tau: -1})
                else:
                    lin.row(-math.inf, 0, {y: 1, **{z: -(len(quantized) and quantized[k]) for k, z in enumerate(self.z)}})
            # layers: a used link u→v needs l_u ≥ l_v + 1 (constraint (20)); L ≥ l_v − l_u + 1 always holds otherwise
            lin.row(-math.inf, L - 1, {self.l[v]: 1, self.l[u]: -1, self.d[u, v]: L})
        for s in range(S):
            lin.row(-math.inf, 0, {self.q[s]: 1, self.p[s]: -M})
            if self.tau is not None:
                lin.row(-math.inf, 0, {self.q[s]: 1, self.tau: -1})
            elif self.z is not None:
                lin.row(-math.inf, 0, {self.q[s]: 1, **{z: -quantized[k] for k, z in enumerate(self.z)}})
            # the PS's switch sends to the PS, so it is on layer 1 (constraint (19))
            lin.row(-math.inf, L, {self.l[s]: 1, self.p[s]: L - 1})
            out = [(self.y[s, v], 1) for (a, v) in self.y if a == s] + [(self.q[s], 1)]
            inn = [(self.y[u, s], 1) for (u, b) in self.y if b == s] + [(self.w[s], 1)]
            if pb.aggregator[s]:
                o = self.o[s]
                lin.row(0, 0, out + [(o, -1)])
                lin.row(0, math.inf, inn + [(o, -1)])
                lin.row(-math.inf, 0, inn + [(o, -M)])
            else:
                lin.row(0, 0, inn + [(x, -c) for x, c in out])
            if not fixed:
                deg = [(self.d[s, v], 1) for (a, v) in self.d if a == s] + [(self.d[u, s], 1) for (u, b) in self.d if b == s]
                lin.row(-math.inf, pb.ports[s], deg + [(self.w[s], 1), (self.p[s], 1)])

    def routing(self, vals: np.ndarray, max_load: int) -> Routing:
        r = lambda i: int(round(vals[i]))  # noqa: E731
        flows = {k: r(i) for k, i in self.y.items() if r(i) > 0}
        ps = next(s for s in range(self.S) if r(self.p[s]))
        return Routing(max_load=max_load, workers_at=[r(i) for i in self.w], ps_at=ps, flows=flows,
                       links=sorted({(min(k), max(k)) for k in flows}), to_ps=r(self.q[ps]),
                       layer=[r(i) for i in self.l])


@dataclass
class Result:
    routing: Routing | None
    optimal: bool
    max_load: int | None
    lower_bound: int
    seconds: float
    levels_tried: list[tuple[int, str]]
    rate_fraction: float | None = None
    """r / b: 1 / max_load, or the chosen quantized rate over b."""


def solve_problem(pb: Problem, objective: str = "levels", solver: str = "highs", time_limit_s: float = 60.0,
                  rate_levels: int | None = None) -> Result:
    """Solve `pb` exactly (see the module text). Returns the best routing found, whether it is proven optimal,
    and the proven lower bound on the largest link load (the rate is at most b / lower_bound)."""
    t0 = time.perf_counter()
    if rate_levels is not None:
        # QSR: rate b·k/N allows floor(N/k) flows per link; maximize k.
        quant = [rate_levels // k for k in range(1, rate_levels + 1)]
        lin = Lin()
        v = _Vars(lin, pb, None, quant)
        sol = solve(lin, "highs", time_limit_s, maximize=True)
        if sol.values is None:
            return Result(None, False, None, 1, time.perf_counter() - t0, [], None)
        k = 1 + int(np.argmax([sol.values[z] for z in v.z]))
        rt = v.routing(sol.values, max(quant[k - 1], 1))
        load = max([*rt.flows.values(), rt.to_ps, 1])
        bound_k = int(math.floor(sol.bound + 1e-9)) if sol.bound is not None else k
        return Result(rt, sol.status == "optimal", load, max(1, rate_levels // max(bound_k, 1)),
                      time.perf_counter() - t0, [], k / rate_levels)
    if objective == "min-load":
        lin = Lin()
        v = _Vars(lin, pb, None, None)
        sol = solve(lin, solver, time_limit_s)
        if sol.values is None:
            return Result(None, False, None, 1, time.perf_counter() - t0, [], None)
        T = int(round(sol.values[v.tau]))
        lb = max(1, int(math.ceil((sol.bound or 1) - 1e-6)))
        return Result(v.routing(sol.values, T), sol.status == "optimal", T, T if sol.status == "optimal" else lb,
                      time.perf_counter() - t0, [], 1.0 / T)
    if objective != "levels":
        raise ValueError(f"objective must be 'levels' or 'min-load', not '{objective}'")
    tried: list[tuple[int, str]] = []
    lb = 1
    T = 1
    while T <= pb.workers:
        left = time_limit_s - (time.perf_counter() - t0)
        if left <= 0:
            break
        lin = Lin()
        v = _Vars(lin, pb, T, None)
        sol = solve(lin, solver, left)
        tried.append((T, sol.status))
        if sol.status == "infeasible":
            lb = T + 1
            T += 1
            continue
        if sol.values is None:
            break
        rt = v.routing(sol.values, T)
        return Result(rt, lb == T, T, lb, time.perf_counter() - t0, tried, 1.0 / T)
    return Result(None, False, None, lb, time.perf_counter() - t0, tried, None)
