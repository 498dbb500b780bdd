"""fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics (public API)."""

from . import _core, topology
from .engine import run, validate
from .errors import FabricsimError, ScenarioError
from .record import RunRecord
from .spec import Scenario, load_scenario, scenario_from_dict
from .workload import Workload

__version__ = _core.version()
"""The package version: maturin takes it from the Rust workspace, so it is the native module's."""

__all__ = [
    "Scenario", "load_scenario", "scenario_from_dict", "run", "validate", "RunRecord",
    "FabricsimError", "ScenarioError", "topology", "Workload", "__version__",
]
