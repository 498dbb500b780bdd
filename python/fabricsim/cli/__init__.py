"""The `fabricsim` command line: thin wrappers that parse arguments, call the public API and print.

User errors print one line on stderr and exit with code 2; `--json` prints exactly one JSON object on stdout.
Each command family lives in its own module and is registered here explicitly; importing a module registers
nothing.
"""

from __future__ import annotations

import click

from .. import __version__
from ._common import EXIT_USER_ERROR, run_guarded
from .collective import collective
from .cpo import design, locality
from .fors import fors
from .ina import ina
from .incast import incast
from .reproduce import report, reproduce
from .run import run, validate
from .sweep import sweep
from .trace import trace

__all__ = ["cli", "main", "EXIT_USER_ERROR"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="fabricsim", message="%(prog)s %(version)s")
def cli() -> None:
    """fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics.

    Scenarios are TOML files (see examples/); quantities take units ("5ms", "100Gbps", "10MiB") or
    base-unit numbers (seconds, bit/s, bytes). Every command that simulates accepts --seed and --json.
    """


for _command in (run, validate, incast, sweep, reproduce, report, collective, fors, ina, design, locality, trace):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping every user error to one line on stderr and exit code 2."""
    return run_guarded(cli, argv)
