"""NCCL as nccl-tests measures it on a GPU cluster: `nccl_tests(fabric, collective)` gives nccl-tests' table (time,
algbw, busbw by size) from a rail-optimized fabric's description. docs/guide/nccl.md describes the model."""

from .constants import CALIBRATED, CALIBRATION_RUNS
from .fabric import NcclFabric, nccl_fabric
from .model import COLLECTIVES, NcclTestsResult, busbw_factor, nccl_tests

__all__ = ["nccl_tests", "NcclTestsResult", "NcclFabric", "nccl_fabric", "busbw_factor", "COLLECTIVES", "CALIBRATED",
           "CALIBRATION_RUNS"]
