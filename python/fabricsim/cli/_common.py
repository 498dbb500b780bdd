"""What every `fabricsim` command shares: the user-error contract, the --fidelity option, spinners and the guarded entry.

Contract: a user error prints one line on stderr and exits with code 2 (`EXIT_USER_ERROR`); an engine or
internal failure prints one line and exits with 1; a run stopped by a limit (`--max-events`, `--max-wall`)
exits with 3 (`EXIT_INCOMPLETE`) and one by Ctrl-C with 130 (`EXIT_INTERRUPTED`), each with one line;
`--json` prints exactly one JSON object on stdout; no command ever prints a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, TypeVar

import click

from ..errors import FabricsimError, UserError

EXIT_USER_ERROR = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130

PROGRESS_AFTER_S = 2.0
"""A run shows its progress bar once it has taken this long (wall seconds)."""

T = TypeVar("T")

FIDELITY = click.option("--fidelity", type=click.Choice(["packet", "flow", "hybrid"]), default=None,
                        help="Engine: packet (discrete events: queues, loss, TCP), flow (max-min fair fluid flows on "
                             "the same routes: much faster, lossless, no queues) or hybrid (the packet engine jumping "
                             "over steady states; the record's fast_forward says what it skipped). Default: the "
                             "scenario's (packet).")
"""The --fidelity option of every command that simulates a scenario (None = the scenario's own)."""


def run_control(fn: Callable) -> Callable:
    """The options of every command that runs one long simulation: --max-events, --max-wall, --partial, --quiet."""
    for opt in reversed([
        click.option("--max-events", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Stop after N events (exit 3; the record so far with --partial)."),
        click.option("--max-wall", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
                     help="Stop after this much wall-clock time in the engine (exit 3; the record so far with --partial)."),
        click.option("--partial", is_flag=True,
                     help="When a run is stopped (Ctrl-C, --max-events, --max-wall), print the record so far."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar (shown on a terminal for runs over 2 s)."),
    ]):
        fn = opt(fn)
    return fn


class RunProgress:
    """The engine's `progress` callable: a rich bar on stderr, shown once a run has taken PROGRESS_AFTER_S on a
    terminal. It measures simulated time against the scenario's stop, else delivered messages against all of
    them, else counts events."""

    def __init__(self, label: str, enabled: bool = True):
        self.label = label
        self.enabled = enabled and sys.stderr.isatty()
        self.bar = None
        self.task = None

    def __call__(self, now_ps: int, stop_ps: int | None, events: int, msgs_done: int, msgs_total: int,
                 wall_s: float) -> None:
        if not self.enabled or (self.bar is None and wall_s < PROGRESS_AFTER_S):
            return
        if stop_ps:
            done, total, what = now_ps, stop_ps, "simulated time"
        elif msgs_total:
            done, total, what = msgs_done, msgs_total, f"{msgs_done:,}/{msgs_total:,} messages"
        else:
            done, total, what = None, None, "events"
        if self.bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[what]}"),
                                TextColumn("{task.fields[events]} events"), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True, auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total, what=what, events=f"{events:,}")
        self.bar.update(self.task, completed=done, total=total, what=what, events=f"{events:,}")
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def simulate(run: Callable[..., Any], label: str, *, max_events: int | None, max_wall: float | None,
             partial: bool, quiet: bool, show: Callable[[Any], None]) -> Any:
    """Call `run(max_events=, max_wall_s=, progress=)` with a progress bar and return the record. A run that
    Ctrl-C or a limit stopped prints one line on stderr (and, with `partial`, the record so far through `show`)
    and exits with 130 (Ctrl-C) or 3 (a limit)."""
    from ..errors import RunInterrupted

    bar = RunProgress(label, enabled=not quiet)
    try:
        rec = run(max_events=max_events, max_wall_s=max_wall, progress=bar)
    except RunInterrupted as e:
        bar.close()
        if partial:
            show(e.record)
        click.echo(f"fabricsim: {e}{'' if partial else ' (--partial prints the record so far)'}", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    bar.close()
    if rec.halted is not None:
        limit = f"--max-events {max_events:,}" if rec.halted == "max_events" else f"--max-wall {max_wall:g} s"
        if partial:
            show(rec)
        click.echo(f"fabricsim: stopped by {limit} at simulated time {rec.end_time_s:.6g} s after {rec.events:,} "
                   f"events; the run is incomplete{'' if partial else ' (--partial prints the record so far)'}",
                   err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)
    return rec


def echo_json(obj: Any) -> None:
    """Print `obj` as exactly one JSON document on one line of stdout (what every --json promises)."""
    click.echo(json.dumps(obj))


def load_checked(path: str):
    """Load SCENARIO.toml and check it completely (fields, names, reachability, paths); raises ScenarioError."""
    from ..engine import validate
    from ..spec import load_scenario

    sc = load_scenario(path)
    validate(sc)
    return sc


def check_figure_path(command: str, figure: str | None) -> None:
    """Before any work: `figure` (a --figure value) must have an image suffix matplotlib writes and an existing
    folder; raises UserError naming `command` ("fabricsim topology") otherwise."""
    if figure is None:
        return
    from pathlib import Path

    from ..topology.draw import supported_formats

    if Path(figure).suffix.lstrip(".").lower() not in supported_formats():
        raise UserError(f"{command}: --figure: '{figure}' has no image suffix matplotlib writes "
                        f"(use one of: {', '.join(supported_formats())})")
    if not Path(figure).resolve().parent.is_dir():
        raise UserError(f"{command}: --figure: cannot write '{figure}': its folder does not exist")


def with_spinner(fn: Callable[[], T], label: str, quiet: bool) -> T:
    """Run fn() with a transient spinner on stderr when it is a terminal."""
    if quiet or not sys.stderr.isatty():
        return fn()
    from rich.console import Console

    with Console(stderr=True).status(label):
        return fn()


def stdout_console(width: int):
    """A rich Console on stdout: the terminal's width on a terminal, else `width` columns (stable piped output)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=width)


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (`fabricsim run x.toml | head`): not an error. Point stdout at /dev/null
    so the interpreter's final flush cannot fail again, and exit 0."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def _stdout_is_devnull() -> bool:
    import os

    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return (out.st_rdev, out.st_ino) == (null.st_rdev, null.st_ino)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr: `fabricsim: warning: ...` (no file and line of our source)."""
    click.echo(f"fabricsim: warning: {message}".replace("\n", " "), err=True)


EXTRA_OF_MODULE = {"matplotlib": "figures", "pandas": "records", "pyarrow": "records", "scipy": "studies",
                   "ortools": "studies", "highspy": "studies", "dask": "dask", "distributed": "dask"}
"""A heavy dependency a base install leaves out -> the extra that brings it (pyproject.toml's
optional-dependencies)."""

EXTRA_OF_COMMAND = {"cluster": "cluster", "reproduce": "studies", "report": "studies", "ina": "studies",
                    "fors": "studies", "design": "studies", "locality": "studies"}
"""Commands whose extra is named for them: it carries all they need, so one install is enough."""


def missing_extra(e: ModuleNotFoundError, argv: list[str] | None) -> str | None:
    """The one line for a command that needs an extra that is not installed (None: not such an import)."""
    top = (e.name or "").partition(".")[0]
    if top not in EXTRA_OF_MODULE:
        return None
    args = list(sys.argv[1:] if argv is None else argv)
    cmd = next((a for a in args if not a.startswith("-")), "")
    extra = EXTRA_OF_COMMAND.get(cmd, EXTRA_OF_MODULE[top])
    what = f"fabricsim {cmd}" if cmd else "fabricsim"
    return f"{what}: needs {top}, which a base install leaves out: pip install 'fabricsim[{extra}]'"


def run_guarded(root: click.Group, argv: list[str] | None) -> int:
    """Run `root` on argv and return the exit code, mapping every user error to one line on stderr and code 2."""
    import warnings

    warnings.showwarning = _show_warning
    try:
        rc = root.main(args=argv, prog_name="fabricsim", standalone_mode=False)
        if isinstance(rc, int) and rc:
            return rc  # a command's click Exit(code), returned (not raised) outside standalone mode
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        click.echo("fabricsim: aborted", err=True)
        return 130
    except click.ClickException as e:
        click.echo(f"fabricsim: {e.format_message()}", err=True)
        return EXIT_USER_ERROR
    except (FabricsimError, UserError) as e:
        click.echo(str(e).replace("\n", " "), err=True)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        click.echo("fabricsim: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except SystemExit as e:
        if e.code == 1 and _stdout_is_devnull():
            return 0  # rich met a broken pipe: it pointed stdout at /dev/null and raised SystemExit(1)
        raise
    except Exception as e:  # an engine or internal failure: one line, exit 1, never a traceback
        line = missing_extra(e, argv) if isinstance(e, ModuleNotFoundError) else None
        if line is not None:  # a command that needs an extra a base install leaves out: a user's fix
            click.echo(line, err=True)
            return EXIT_USER_ERROR
        from .. import _core

        kind = "engine error" if isinstance(e, (_core.SimulationError, _core.ConservationError)) else "internal error"
        click.echo(f"fabricsim: {kind}: {type(e).__name__}: {e}".replace("\n", " "), err=True)
        return 1
    return 0
