"""The fit behind constants.CALIBRATED: the one constant fitted to measurements, fitted on the three runs of
constants.CALIBRATION_RUNS only."""

from __future__ import annotations

import math

from . import constants as K
from .model import nccl_tests


def calibration_error(nic_efficiency: float) -> float:
    """Sum over the calibration runs of log(predicted / measured peak busbw) squared, at `nic_efficiency`."""
    total = 0.0
    for r in K.CALIBRATION_RUNS:
        res = nccl_tests(r["fabric"], "all_reduce", minbytes=r["minbytes"], maxbytes=r["maxbytes"], algo=r["algo"],
                         nic_efficiency=nic_efficiency)
        total += math.log(res.peak_busbw_GBps / r["busbw_GBps"]) ** 2
    return total


def fit_nic_efficiency(lo: float = 0.5, hi: float = 1.0, tol: float = 1e-5) -> float:
    """The NIC efficiency that minimizes `calibration_error` (golden-section search on [lo, hi])."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = calibration_error(c), calibration_error(d)
    while b - a > tol:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = calibration_error(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = calibration_error(d)
    return (a + b) / 2
