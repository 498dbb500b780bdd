"""Type stubs of the private native module fabricsim._core (built from crates/fabricsim-py)."""

def run(spec_json: str, fidelity: str = "packet") -> str:
    """Simulate a wire RunSpec (JSON) with the packet ("packet") or flow-level ("flow") engine; returns the
    RunRecord as JSON. Releases the GIL."""

def validate(spec_json: str, fidelity: str = "packet") -> None:
    """Validate a wire RunSpec (fields, topology, reachability, paths, what the fidelity models) without simulating."""

def maxmin(capacity: list[float], uses: list[list[tuple[int, float]]], caps: list[float | None]) -> list[float]:
    """Max-min fair rates of flows over resources (the flow engine's solver)."""

def version() -> str:
    """Version of the native engine."""

class SpecError(ValueError):
    """The spec is malformed or impossible; str(e) is 'field: reason'."""

class ConservationError(RuntimeError):
    """Packet accounting did not balance at the end of a run."""

class SimulationError(RuntimeError):
    """The engine failed (including a caught internal panic)."""
