"""fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics (public API)."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _pkg_version

from . import topology
from .engine import run, validate
from .errors import FabricsimError, ScenarioError
from .record import RunRecord
from .spec import Scenario, load_scenario, scenario_from_dict
from .workload import Workload

try:
    __version__ = _pkg_version("fabricsim")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.1.0"

__all__ = [
    "Scenario", "load_scenario", "scenario_from_dict", "run", "validate", "RunRecord",
    "FabricsimError", "ScenarioError", "topology", "Workload", "__version__",
]
