"""The DCQCN fluid model of Zhu et al., "Congestion Control for Large-Scale RDMA Deployments" (SIGCOMM 2015),
section 5, equations (6)-(9), for N identical flows at one bottleneck: its fixed point and its transient.

Rates are packets per second; the byte counter is infinite (fabricsim's DCQCN, like HPCC's ns-3 fork, has
none), so only the timer drives increases. Symbols: tau = the rate-decrease (CNP) interval, tau' = the alpha
update interval, T = the rate-increase timer, F = the fast-recovery stages, R_AI = the additive step, g =
the EWMA gain; p(q) is RED-like between Kmin and Kmax with Pmax.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq


def _pow1m(p: float, x: float) -> float:
    """(1 - p)^x, stable for small p."""
    return math.exp(x * math.log1p(-p))


def _timer_rate(p: float, T: float, rc: float) -> float:
    """R_C p / ((1 - p)^(-T R_C) - 1): the rate of increase-timer expiries (each needs T without a cut)."""
    return rc * p / math.expm1(-T * rc * math.log1p(-p)) if p > 0 else rc / (T * rc)


def fixed_point(n: int, c_pps: float, tau: float, tau_p: float, T: float, F: int, r_ai_pps: float) -> float:
    """The marking probability p* at which N flows at R_C = C/N are in equilibrium (equations 6-8 at rest)."""
    rc = c_pps / n

    def residual(p: float) -> float:
        a = 1 - _pow1m(p, tau * rc)          # P(a cut in a tau window)
        alpha = 1 - _pow1m(p, tau_p * rc)    # alpha at rest (eq. 6)
        s = _timer_rate(p, T, rc) / rc       # p / ((1-p)^(-T R_C) - 1)
        # eq. 8 at rest gives R_T - R_C = alpha a / (tau s); eq. 7 at rest then reads:
        return (alpha * a * a / (tau * tau)) / s - r_ai_pps * rc * s * _pow1m(p, F * T * rc)

    grid = [10 ** (-9 + 8.5 * k / 400) for k in range(401)]
    vals = [residual(p) for p in grid]
    for k in range(400):
        if vals[k] == 0 or (vals[k] > 0) != (vals[k + 1] > 0):
            return brentq(residual, grid[k], grid[k + 1])
    raise ValueError("no fixed point in (1e-9, 0.3)")


def queue_of(p: float, kmin: float, kmax: float, pmax: float) -> float:
    """The queue (bytes) at which the marking probability is p (inverse of the RED profile)."""
    return kmin + p * (kmax - kmin) / pmax


def transient(n: int, c_pps: float, pkt_bytes: float, kmin: float, kmax: float, pmax: float, g: float,
              tau: float, tau_p: float, T: float, F: int, r_ai_pps: float, delay: float,
              horizon: float, dt: float = 1e-6) -> tuple[list[float], list[float], list[float]]:
    """Integrate equations (6)-(9) from the start of an incast (every flow at line rate, alpha = 1, empty
    queue) with feedback delay `delay` (s), Euler steps of dt: returns times (s), R_C (packets/s) and q (B)."""

    def p_of(q: float) -> float:
        if q <= kmin:
            return 0.0
        if q > kmax:
            return 1.0
        return (q - kmin) / (kmax - kmin) * pmax

    lag = max(1, round(delay / dt))
    alpha, rt, rc, q = 1.0, c_pps, c_pps, 0.0
    hist_rc = [rc] * (lag + 1)
    hist_p = [0.0] * (lag + 1)
    ts, rcs, qs = [], [], []
    steps = int(horizon / dt)
    for k in range(steps):
        rcd, pd = hist_rc[-lag - 1], hist_p[-lag - 1]
        a = 1 - _pow1m(pd, tau * rcd) if pd < 1 else 1.0
        ap = 1 - _pow1m(pd, tau_p * rcd) if pd < 1 else 1.0
        if 0 < pd < 1:
            s_t = _timer_rate(pd, T, rcd)
            inc_t = r_ai_pps * s_t * _pow1m(pd, F * T * rcd)
        elif pd == 0:
            s_t = 1.0 / T
            inc_t = r_ai_pps / T
        else:
            s_t, inc_t = 0.0, 0.0
        d_alpha = g / tau_p * (ap - alpha)
        d_rt = -(rt - rc) / tau * a + inc_t
        d_rc = -rc * alpha / (2 * tau) * a + (rt - rc) / 2 * s_t
        alpha += d_alpha * dt
        rt = min(rt + d_rt * dt, c_pps)
        rc = min(max(rc + d_rc * dt, 0.0), c_pps)
        q = max(q + (n * rc - c_pps) * pkt_bytes * dt, 0.0)
        hist_rc.append(rc)
        hist_p.append(p_of(q))
        if len(hist_rc) > lag + 2:
            hist_rc.pop(0)
            hist_p.pop(0)
        if k % 10 == 0:
            ts.append((k + 1) * dt)
            rcs.append(rc)
            qs.append(q)
    return ts, rcs, qs


def settling_time(ts: list[float], rcs: list[float], target: float, tol: float = 0.1) -> float:
    """The last time R_C is outside target ± tol·target (0 if never)."""
    last = 0.0
    for t, r in zip(ts, rcs):
        if abs(r - target) > tol * target:
            last = t
    return last
