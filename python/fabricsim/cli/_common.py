"""What every `fabricsim` command shares: the user-error contract, the --fidelity option, spinners and the guarded entry.

Contract: a user error prints one line on stderr and exits with code 2 (`EXIT_USER_ERROR`); an engine or
internal failure prints one line and exits with 1; `--json` prints exactly one JSON object on stdout; no
command ever prints a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, TypeVar

import click

from ..errors import FabricsimError, UserError

EXIT_USER_ERROR = 2

T = TypeVar("T")

FIDELITY = click.option("--fidelity", type=click.Choice(["packet", "flow"]), default=None,
                        help="Engine: packet (discrete events: queues, loss, TCP) or flow (max-min fair fluid flows on "
                             "the same routes: much faster, lossless, no queues). Default: the scenario's (packet).")
"""The --fidelity option of every command that simulates a scenario (None = the scenario's own)."""


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


def run_guarded(root: click.Group, argv: list[str] | None) -> int:
    """Run `root` on argv and return the exit code, mapping every user error to one line on stderr and code 2."""
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
        return 130
    except Exception as e:  # an engine or internal failure: one line, exit 1, never a traceback
        from .. import _core

        kind = "engine error" if isinstance(e, (_core.SimulationError, _core.ConservationError)) else "internal error"
        click.echo(f"fabricsim: {kind}: {type(e).__name__}: {e}".replace("\n", " "), err=True)
        return 1
    return 0
