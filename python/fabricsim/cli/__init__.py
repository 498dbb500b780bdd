"""The `fabricsim` command line: thin wrappers that parse arguments, call the public API and print.

User errors print one line on stderr and exit with code 2; `--json` prints exactly one JSON object on stdout.
Each command family lives in its own module, listed in COMMANDS and imported only when that command runs (or
is asked for its full help), so `fabricsim --version` and `fabricsim --help` import neither numpy nor pydantic.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__
from ._common import EXIT_USER_ERROR, run_guarded

__all__ = ["cli", "main", "EXIT_USER_ERROR", "COMMANDS"]

COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("run", "run", "Simulate SCENARIO.toml (packet engine, or --fidelity flow) and print a summary."),
    "validate": ("run", "validate",
                 "Check SCENARIO.toml completely (fields, names, reachability, paths) without simulating."),
    "examples": ("examples", "examples", "The example scenarios that ship with fabricsim: list them or copy them."),
    "incast": ("incast", "incast",
               "Synchronized bursts (or staggered TCP) into one bottleneck: the incast study (seed 001)."),
    "sweep": ("sweep", "sweep",
              "Run a sweep: every grid point x seed of SWEEP.toml, on local processes or a Dask cluster."),
    "reproduce": ("reproduce", "reproduce",
                  "Reproduce a study (or all) from the studies' folder: our numbers beside the paper's."),
    "report": ("reproduce", "report",
               "Write the HTML reproduction report from the studies' saved outputs (run `reproduce` first)."),
    "collective": ("collective", "collective",
                   "Run a collective on a built-in fabric or any fabric file over several seeds and report "
                   "completion time, throughput (aggregate and per interface, Gb/s) and packets by switch hops, as mean "
                   "and 95% CI."),
    "fors": ("fors", "fors", "Fault-adaptive all-to-all on two-level fat-trees FT(2;M0,M1) (the FORS study, seed 004)."),
    "ina": ("ina", "ina", "Parameter-server All-Reduce with in-network aggregation (study 002, ATRO)."),
    "design": ("cpo", "design", "Two-level leaf-spine network calculator (study 003, co-packaged optics), or with --gpus a rail-optimized GPU cluster calculator."),
    "locality": ("cpo", "locality",
                 "Job locality on two-level designs (study 003): a synthetic VM trace, best-fit packing, and the "
                 "simulated cost of spreading an all-to-all over several first-level switches (Fig."),
    "trace": ("trace", "trace",
              "Chakra execution traces (MLCommons ET, one PREFIX.{rank}.et file per rank, gzip or not)."),
    "place": ("place", "place",
              "Where should this job go? Rank placements of N nodes on a fabric by predicted completion time."),
    "cluster": ("cluster", "cluster",
                "Multi-job cluster simulator: Poisson job arrivals, placement policies, interference, slowdown."),
    "train": ("train", "train",
              "One training step (or --steps N) of a model on a fabric, Megatron-LM style: how long it takes, and why."),
    "nccl-tests": ("nccl", "nccl_tests",
                   "nccl-tests' table for an NCCL collective on a GPU cluster, from its fabric file: size, count, "
                   "type, redop, time (us), algbw and busbw (GB/s) and the algorithm and protocol NCCL would use."),
    "compare": ("compare", "compare",
                "Compare runs side by side: completion time, FCT percentiles, slowdown, PFC pauses, ECN marks, CNPs, "
                "the peak queue and, for UEC runs, trims, NACKs, timeouts and re-sent packets, one column per file."),
    "topology": ("topology", "topology",
                 "Describe the fabric of SCENARIO.toml: hosts, switches, links, diameter and bisection bandwidth."),
}
"""Command name -> (module under fabricsim.cli, attribute, short help). The short help is the command's own
(`get_short_help_str()` of the loaded command; tests/test_examples_cmd.py checks they agree), kept here so
`fabricsim --help` lists every command without importing any of them."""


class LazyGroup(click.Group):
    """A click Group whose commands (COMMANDS) are imported from their modules on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attr, _ = COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(f".{module}", __name__), attr), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `--help`, from the registry's short help (no command module is imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name)
            if cmd is not None and cmd.hidden:
                continue
            text = cmd.get_short_help_str(limit) if cmd is not None else _short_help(COMMANDS[name][2], limit)
            rows.append((name, text))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _short_help(text: str, limit: int) -> str:
    """The registry's one-line help cut to `limit` characters as click cuts a loaded command's (a stand-in
    command with that help: the same cut, without importing the command's module)."""
    return click.Command(None, help=text).get_short_help_str(limit)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="fabricsim", message="%(prog)s %(version)s")
def cli() -> None:
    """fabricsim: fast, faithful simulation of AI/HPC collective traffic on data-center fabrics.

    Scenarios are TOML files (`fabricsim examples copy DIR` copies the examples); quantities take units
    ("5ms", "100Gbps", "10MiB") or base-unit numbers (seconds, bit/s, bytes). Every command that simulates
    accepts --seed S and --seeds K (runs S..S+K-1) and --json (exactly one JSON object on stdout). One
    vocabulary throughout: --size a message size with a unit (10MiB, 4KiB, 1GB), --fabric FILE|NAME a fabric
    file or a built-in fabric, --out DIR a folder, --workers local processes.
    """


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping every user error to one line on stderr and exit code 2."""
    return run_guarded(cli, argv)
