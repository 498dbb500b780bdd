"""The exceptions of the public API; a ScenarioError prints as one line naming the file, the field and the reason."""

from __future__ import annotations


class FabricsimError(Exception):
    """Base class of every fabricsim error."""


class ScenarioError(FabricsimError, ValueError):
    """A scenario (file or object) is malformed or impossible."""

    def __init__(self, source: str, field: str, reason: str):
        self.source = source
        self.field = field
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.reason}"


class ArgumentError(FabricsimError, ValueError, TypeError):
    """A Python API call got an argument it cannot use: `param` names it, `reason` says what is wrong. Both a
    ValueError and a TypeError, so code that caught the built-in exceptions still does."""

    def __init__(self, param: str, reason: str):
        self.param = param
        self.field = param
        self.reason = reason
        super().__init__(f"{param}: {reason}")


class UserError(FabricsimError):
    """A user's error to report as one line (exit code 2 on the command line); raised by the applications (train,
    place, ...) for both their commands and their Python functions, so a FabricsimError."""


class SpecError(FabricsimError, ValueError):
    """The engine rejected a spec: `field` is the dotted path (`messages[12345].dst`), `reason` what is wrong.

    Raised by the native module; the public API re-raises it as a ScenarioError that names the file."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


class ConservationError(FabricsimError, RuntimeError):
    """Packet accounting did not balance at the end of a run (an engine bug, never a user error)."""


class SimulationError(FabricsimError, RuntimeError):
    """The engine failed, including a caught internal panic."""


class FabricsimWarning(UserWarning):
    """Something in a scenario is ignored or implausible (e.g. queue sampling at flow fidelity, a 100 bit/s
    link); the run goes on. The command line prints it as one `fabricsim: warning:` line."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a run inside the engine. `record` is the RunRecord so far (`halted ==
    "interrupted"`; packets still queued count as in flight). A KeyboardInterrupt, so scripts stop as usual."""

    def __init__(self, record):
        self.record = record
        super().__init__(f"interrupted at simulated time {record.end_time_s:.6g} s after {record.events:,} events")
