"""fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics (public API).

Importing the package is cheap (the native module and the exceptions only); every other public name is
loaded from its module on first access (PEP 562), so `fabricsim --version` does not pay for pydantic or numpy.
"""

from __future__ import annotations

from . import _core
from .errors import FabricsimError, ScenarioError

TYPE_CHECKING = False
"""typing.TYPE_CHECKING without importing typing (about 5 ms of a native `fabricsim run`'s start)."""
if TYPE_CHECKING:
    from . import examples, topology
    from .engine import run, validate
    from .record import RunRecord
    from .spec import Scenario, load_scenario, scenario_from_dict
    from .workload import Workload
    from .advisor.api import place
    from .nccl import nccl_tests

__version__ = _core.version()
"""The package version: maturin takes it from the Rust workspace, so it is the native module's."""

_LAZY: dict[str, tuple[str, str | None]] = {
    "Scenario": (".spec", "Scenario"),
    "load_scenario": (".spec", "load_scenario"),
    "scenario_from_dict": (".spec", "scenario_from_dict"),
    "run": (".engine", "run"),
    "validate": (".engine", "validate"),
    "RunRecord": (".record", "RunRecord"),
    "topology": (".topology", None),
    "examples": (".examples", None),
    "Workload": (".workload", "Workload"),
    "place": (".advisor.api", "place"),
    "nccl_tests": (".nccl", "nccl_tests"),
}
"""Public name -> (module, attribute; None for the module itself), imported on first access."""

__all__ = [
    "Scenario", "load_scenario", "scenario_from_dict", "run", "validate", "RunRecord",
    "FabricsimError", "ScenarioError", "topology", "examples", "Workload", "place", "nccl_tests", "__version__",
]


def __getattr__(name: str) -> object:
    """Import a lazily exported public name on first access and cache it in the package namespace."""
    import importlib

    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'fabricsim' has no attribute {name!r}") from None
    mod = importlib.import_module(module, __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
