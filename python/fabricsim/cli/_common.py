"""What every `fabricsim` command shares: the user-error contract, the --fidelity option, spinners and the guarded entry.

Contract: a user error prints one line on stderr and exits with code 2 (`EXIT_USER_ERROR`); an engine or
internal failure prints one line and exits with 1; a run stopped by a limit (`--max-events`, `--max-wall`)
exits with 3 (`EXIT_INCOMPLETE`) and one by Ctrl-C with 130 (`EXIT_INTERRUPTED`), each with one line;
`--json` prints exactly one JSON object on stdout; no command ever prints a traceback.

One vocabulary across commands (tests/test_cli_vocabulary.py checks it): a message size is `--size` with a unit
(`SIZE`), a fabric is `--fabric FILE|NAME` (`FabricParam`), `--out DIR` is a folder (`out_file` for the commands
that write one file into it), `--seed S --seeds K` are the runs S..S+K-1 (`seed_stats`, `seed_text`), `--workers`
counts processes. A renamed option stays one release as a hidden alias (`deprecated_option`) that warns once.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable, NamedTuple, TypeVar

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


MEMORY_LIMIT_HELP = ("Memory budget, such as 8GiB or 500MB: a scenario whose fabric, messages, throughput bins or "
                     "queue samples are estimated to need more is refused before anything is built (exit 2). "
                     "Default: $FABRICSIM_MEMORY_LIMIT, else the machine's available memory.")


def _memory_limit(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """--memory-limit: checked here, then in force for the rest of the process (FABRICSIM_MEMORY_LIMIT, which the
    engine reads and sweep workers inherit)."""
    if value is None:
        return
    import os

    from .. import _core
    from ..errors import SpecError

    try:
        _core.parse_memory_limit(value)
    except SpecError as e:
        raise click.BadParameter(e.reason, ctx=ctx, param=param) from None
    os.environ["FABRICSIM_MEMORY_LIMIT"] = value.strip()


SEED = click.IntRange(min=0, max=2**63 - 1)
"""The type of every --seed: a scenario holds its seed as a TOML integer, signed 64-bit."""


MEMORY_LIMIT = click.option("--memory-limit", metavar="SIZE", default=None, expose_value=False,
                            callback=_memory_limit, help=MEMORY_LIMIT_HELP)
"""The --memory-limit option of every command that builds a scenario (`fabricsim_core::budget`)."""


def run_control(fn: Callable) -> Callable:
    """The options of every command that runs one long simulation: --max-events, --max-wall, --partial, --quiet,
    --memory-limit."""
    for opt in reversed([
        click.option("--max-events", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Stop after N events (exit 3; the record so far with --partial)."),
        click.option("--max-wall", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
                     help="Stop after this much wall-clock time in the engine (exit 3; the record so far with --partial)."),
        click.option("--partial", is_flag=True,
                     help="When a run is stopped (Ctrl-C, --max-events, --max-wall), print the record so far."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar (shown on a terminal for runs over 2 s)."),
        MEMORY_LIMIT,
    ]):
        fn = opt(fn)
    return fn


def progress_measure(now_ps: int, stop_ps: int | None, msgs_done: int, msgs_total: int, bytes_done: int | None,
                     bytes_total: int | None) -> tuple[int | None, int | None, str]:
    """(done, total, text) of a progress bar: simulated time against the scenario's stop; else the messages'
    payload bytes delivered against all of them (a collective's messages all finish near its end, so a count of
    messages would sit at 0 for most of the run), with the messages done; else nothing (events only)."""
    from ..units import format_size

    if stop_ps:
        return now_ps, stop_ps, "simulated time"
    if msgs_total and bytes_total:
        b = min(bytes_done or 0, bytes_total)
        return b, bytes_total, (f"{format_size(b)}/{format_size(bytes_total)} delivered, "
                                f"{msgs_done:,}/{msgs_total:,} messages")
    if msgs_total:
        return msgs_done, msgs_total, f"{msgs_done:,}/{msgs_total:,} messages"
    return None, None, "events"


class RunProgress:
    """The engine's `progress` callable: a rich bar on stderr, shown once a run has taken PROGRESS_AFTER_S on a
    terminal. It measures simulated time against the scenario's stop, else the messages' delivered bytes against
    all of them (`progress_measure`), else counts events."""

    def __init__(self, label: str, enabled: bool = True):
        self.label = label
        self.enabled = enabled and sys.stderr.isatty()
        self.bar = None
        self.task = None

    progress_bytes = True
    """The engine also hands this callable the messages' bytes (`bytes_done`, `bytes_total` keywords)."""

    def __call__(self, now_ps: int, stop_ps: int | None, events: int, msgs_done: int, msgs_total: int,
                 wall_s: float, bytes_done: int | None = None, bytes_total: int | None = None) -> None:
        if not self.enabled or (self.bar is None and wall_s < PROGRESS_AFTER_S):
            return
        done, total, what = progress_measure(now_ps, stop_ps, msgs_done, msgs_total, bytes_done, bytes_total)
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


class SeedsProgress(RunProgress):
    """One progress bar across the seeds of a `--seeds K` run: labelled "LABEL, seed S (i/K)", shown once the
    seeds so far have taken PROGRESS_AFTER_S (not each run alone), each run's own progress inside it."""

    def __init__(self, label: str, enabled: bool = True):
        super().__init__(label, enabled)
        self.base = label
        self.t0: float | None = None
        self.before_s = 0.0

    def seed(self, seed: int, i: int, k: int) -> None:
        """Seed `seed`, the i-th of k, starts now."""
        import time

        self.label = f"{self.base}, seed {seed} ({i}/{k})"
        now = time.perf_counter()
        self.t0 = now if self.t0 is None else self.t0
        self.before_s = now - self.t0
        if self.bar is not None:
            self.bar.update(self.task, description=self.label)
            self.bar.refresh()

    def __call__(self, now_ps: int, stop_ps: int | None, events: int, msgs_done: int, msgs_total: int,
                 wall_s: float, bytes_done: int | None = None, bytes_total: int | None = None) -> None:
        super().__call__(now_ps, stop_ps, events, msgs_done, msgs_total, self.before_s + wall_s, bytes_done,
                         bytes_total)


def simulate(run: Callable[..., Any], label: str, *, max_events: int | None, max_wall: float | None,
             partial: bool, quiet: bool, show: Callable[[Any], None], note: str = "",
             bar: RunProgress | None = None) -> Any:
    """Call `run(max_events=, max_wall_s=, progress=)` with a progress bar and return the record. A run that
    Ctrl-C or a limit stopped prints one line on stderr (`note` added to it; and, with `partial`, the record so
    far through `show`) and exits with 130 (Ctrl-C) or 3 (a limit). `bar`: a progress bar the caller owns (and
    closes), else one of its own."""
    from ..errors import RunInterrupted

    own = bar is None
    bar = RunProgress(label, enabled=not quiet) if bar is None else bar
    try:
        rec = run(max_events=max_events, max_wall_s=max_wall, progress=bar)
    except RunInterrupted as e:
        bar.close()
        if partial:
            show(e.record)
        click.echo(f"fabricsim: {e}{note}{'' if partial else ' (--partial prints the record so far)'}", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    if own or rec.halted is not None:
        bar.close()
    if rec.halted is not None:
        limit = f"--max-events {max_events:,}" if rec.halted == "max_events" else f"--max-wall {max_wall:g} s"
        if partial:
            show(rec)
        click.echo(f"fabricsim: stopped by {limit} at simulated time {rec.end_time_s:.6g} s after {rec.events:,} "
                   f"events{note}; the run is incomplete{'' if partial else ' (--partial prints the record so far)'}",
                   err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)
    return rec


def simulate_seeds(run_one: Callable[..., Any], seeds: list[int], label: str, *, max_events: int | None,
                   max_wall: float | None, partial: bool, quiet: bool, show: Callable[[list], None]) -> list:
    """`simulate` once per seed: `run_one(seed, max_events=, max_wall_s=, progress=)` for each of `seeds`, the
    records in order, under one progress bar across the seeds (SeedsProgress: "LABEL, seed S (i/K)"). A run
    stopped by Ctrl-C or a limit keeps the finished seeds' results: `show(records)` prints them (with --partial,
    the stopped run's record so far too), then it exits as `simulate` does."""
    if seeds and seeds[-1] > SEED.max:
        raise UserError(f"fabricsim: --seed {seeds[0]} --seeds {len(seeds)}: the last seed, {seeds[-1]}, is more than a "
                        f"scenario's seed can be ({SEED.max})")
    recs: list = []
    bar = SeedsProgress(label, enabled=not quiet)
    try:
        for i, s in enumerate(seeds, 1):
            kept = f" in seed {s} ({i} of {len(seeds)})" + (
                f"; the {len(recs)} finished seed{'s are' if len(recs) > 1 else ' is'} shown" if recs else "")
            bar.seed(s, i, len(seeds))
            try:
                recs.append(simulate(lambda s=s, **kw: run_one(s, **kw), bar.label, max_events=max_events,
                                     max_wall=max_wall, partial=partial, quiet=quiet,
                                     show=lambda r: show(recs + [r]), note=kept, bar=bar))
            except click.exceptions.Exit:
                if recs and not partial:
                    show(recs)
                raise
    finally:
        bar.close()
    return recs


def incomplete_runs(command: str, recs: list, stop_s: float | None) -> None:
    """After a multi-seed run: if some records did not complete, one line on stderr (how many, the first one's
    seed and reason) and exit 3."""
    bad = [(r.seed, r.incomplete_reason(stop_s)) for r in recs]
    bad = [(s, why) for s, why in bad if why is not None]
    if bad:
        click.echo(f"{command}: {len(bad)} of {len(recs)} runs did not complete; seed {bad[0][0]}: {bad[0][1]}",
                   err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


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
    """Run `root` on argv and return the exit code, mapping every user error to one line on stderr and code 2.
    FABRICSIM_MEMORY_LIMIT, which --memory-limit sets for the command, is restored afterwards, so a command run
    in-process (tests, notebooks) leaves no budget behind for the next."""
    import os

    before = os.environ.get("FABRICSIM_MEMORY_LIMIT")
    try:
        return _run_guarded(root, argv)
    finally:
        if before is None:
            os.environ.pop("FABRICSIM_MEMORY_LIMIT", None)
        else:
            os.environ["FABRICSIM_MEMORY_LIMIT"] = before


def _run_guarded(root: click.Group, argv: list[str] | None) -> int:
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


# ---- the shared vocabulary ---------------------------------------------------------------------------------

SIZE_HELP = ("with a unit: 10MiB, 4KiB, 1GiB (binary: 2^20, 2^10, 2^30 bytes) or 10MB, 1GB (decimal: 10^6, 10^9 "
             "bytes), as in a scenario file; a bare number is bytes")
"""How --help describes a `--size` value (the units of fabricsim.units.parse_size_bytes)."""


class SizeParam(click.ParamType):
    """A message size: a number of bytes or a number with a byte unit, read by the scenario files' own parser
    (fabricsim.units.parse_size_bytes: kB/MB/GB are powers of 10, KiB/MiB/GiB powers of 2, a bit unit such as Mb is
    refused), converted to an int of bytes, at least 1."""

    name = "size"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            from ..units import parse_size_bytes  # imported here: `fabricsim --help` imports no pydantic

            try:
                n = parse_size_bytes(str(value))
            except ValueError as e:
                self.fail(str(e), param, ctx)
        if n < 1:
            self.fail(f"'{value}' is {n} bytes; a message has at least 1 byte", param, ctx)
        return n


SIZE = SizeParam()


class FiniteFloat(click.FloatRange):
    """A FloatRange that also refuses nan and ±inf (click's range checks pass nan, and inf overflows later)."""

    def convert(self, value, param, ctx) -> float:
        import math

        v = super().convert(value, param, ctx)
        if not math.isfinite(v):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return v


def size_option(default: str, what: str, more: str = "") -> Callable:
    """The `--size` option: `what` (e.g. "Message size S per interface"), its units, `more`, and the default as
    written (e.g. "10MiB"); the value is an int of bytes."""
    return click.option("--size", "size", type=SIZE, default=default, show_default=True, metavar="SIZE",
                        help=f"{what}, {SIZE_HELP}.{' ' + more if more else ''}")


def mib_text(n_bytes: int) -> str:
    """A byte count as the `--size` value that gives it in MiB: 10485760 -> "10MiB", 65536 -> "0.0625MiB"."""
    return f"{n_bytes / (1 << 20):.15g}MiB"


class Fabric(NamedTuple):
    """A `--fabric` value: a built-in fabric's `name`, or the `path` of a fabric (or scenario) file."""

    text: str
    name: str | None = None
    path: str | None = None


class FabricParam(click.ParamType):
    """`--fabric FILE|NAME`: one of `names` (the built-in fabrics the command knows), or a fabric file: a value
    ending in .toml, .yml or .yaml (an ASTRA-sim network configuration), holding a path separator or naming an
    existing file. Anything else is a usage error listing the names."""

    name = "fabric"

    def __init__(self, names: tuple[str, ...] = ()):
        self.names = tuple(names)

    def convert(self, value, param, ctx) -> Fabric:
        if isinstance(value, Fabric):
            return value
        text = str(value)
        if text.endswith((".toml", ".yml", ".yaml")) or "/" in text or "\\" in text:
            return Fabric(text, path=text)
        if text in self.names:
            return Fabric(text, name=text)
        if Path(text).is_file():
            return Fabric(text, path=text)
        known = f"neither a built-in fabric ({', '.join(self.names)}) nor" if self.names else "not"
        self.fail(f"'{text}' is {known} a fabric file (FABRIC.toml, or ASTRA-sim's network .yml)", param, ctx)


def fabric_help(names: dict[str, str], what: str = "") -> str:
    """--help of `--fabric FILE|NAME`: the built-in names with one line each, then what a file gives."""
    built = "; ".join(f"{k} = {v}" for k, v in names.items())
    head = f"A built-in fabric ({built}) or a" if names else "A"
    return (f"{head} fabric file: any scenario TOML, its [topology], [routing], [queue] used, its [fabric] table "
            f"(server numbering, named placements) read and its traffic tables ignored, or an ASTRA-sim network "
            f"configuration (.yml: Ring, FullyConnected, Switch per dimension) read as a multi_dim fabric (a value "
            f"ending in .toml or .yml, or naming an existing file).{' ' + what if what else ''}")


def fabric_option(names: dict[str, str], default: str | None = None, what: str = "") -> Callable:
    """The `--fabric FILE|NAME` option over the built-in fabrics `names` (name -> one line for --help)."""
    return click.option("--fabric", "fabric", type=FabricParam(tuple(names)), default=default,
                        show_default=default is not None, metavar="FILE|NAME", help=fabric_help(names, what))


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave parameter `name` (on the command line or in the environment), or an alias set it."""
    from click.core import ParameterSource

    if name in ctx.meta.get("fabricsim.aliased", ()):
        return True
    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _flag(ctx: click.Context, name: str) -> str:
    """The option string of parameter `name` (its longest, e.g. --size)."""
    for p in ctx.command.params:
        if p.name == name:
            return max(p.opts, key=len)
    return name


class _Alias(NamedTuple):
    old: str
    dest: str
    sets: Callable[[Any], dict[str, Any]]
    use: Callable[[Any], str]
    why: str


def deprecated_option(old: str, sets: Callable[[Any], dict[str, Any]], use: Callable[[Any], str], *,
                      why: str = "", **option: Any) -> Callable:
    """A renamed option kept one release: a hidden option `old` (click keywords `option`, e.g. its old type) that,
    when given, prints ONE line on stderr, `fabricsim CMD: OLD is deprecated[ why]; use NEW VALUE` (`use(value)`,
    e.g. "--size 10MiB"), and sets the command's parameters to `sets(value)` (e.g. {"size": 10485760}), so the
    command runs exactly as with the new option. Giving it with an option that sets one of those parameters (the
    new one, or another old alias of it) is a user error, one line and exit 2, with nothing else printed.
    Decorate the command's function, below @click.command; several aliases share one wrapper, which checks them
    all before it warns."""

    def decorate(fn: Callable) -> Callable:
        aliases = getattr(fn, "__fabricsim_aliases__", None)
        if aliases is None:
            aliases = []
            inner = fn

            @functools.wraps(inner)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                ctx = click.get_current_context()
                by: dict[str, str] = {}
                lines = []
                for a in reversed(aliases):  # in the order the decorators are written
                    value = kwargs.pop(a.dest)
                    if value is None:
                        continue
                    new = a.sets(value)
                    for name in new:
                        if name in by:
                            raise UserError(f"{ctx.command_path}: give {_flag(ctx, name)} once, not both {by[name]} "
                                            f"and {a.old} (old names of it)")
                        if _given(ctx, name):
                            raise UserError(f"{ctx.command_path}: give {_flag(ctx, name)} or its old name {a.old}, "
                                            "not both")
                        by[name] = a.old
                    kwargs.update(new)
                    lines.append(f"{ctx.command_path}: {a.old} is deprecated{' ' + a.why if a.why else ''}; "
                                 f"use {a.use(value)}")
                ctx.meta.setdefault("fabricsim.aliased", set()).update(by)
                for line in lines:
                    click.echo(line, err=True)
                return inner(*args, **kwargs)

            wrapper.__fabricsim_aliases__ = aliases  # type: ignore[attr-defined]
            fn = wrapper
        dest = "deprecated_" + old.lstrip("-").replace("-", "_")
        aliases.append(_Alias(old, dest, sets, use, why))
        return click.option(old, dest, hidden=True, default=None, **option)(fn)

    return decorate


def deprecated_aliases(command: click.Command) -> list[_Alias]:
    """The deprecated aliases of a command (`deprecated_option`), for tests and help."""
    return list(getattr(command.callback, "__fabricsim_aliases__", ()))


def _renamed(ctx: click.Context | None, param: click.Parameter | None, value: Any, renamed: dict[str, str],
             why: str) -> Any:
    """`value`, or its new name if `renamed` has it as an old one (then ONE line on stderr, as `deprecated_option`
    words it: `fabricsim CMD: --OPTION OLD is deprecated[ why]; use --OPTION NEW`)."""
    if not isinstance(value, str) or value not in renamed:
        return value
    flag = max(param.opts, key=len) if param is not None else ""
    path = ctx.command_path if ctx is not None else "fabricsim"
    click.echo(f"{path}: {flag} {value} is deprecated{' ' + why if why else ''}; use {flag} {renamed[value]}", err=True)
    return renamed[value]


class RenamedChoice(click.Choice):
    """A click.Choice of the current `choices` that also takes, for one release, the old values of `renamed`
    (old -> new): such a value prints one deprecation line on stderr and becomes its new one. --help lists only
    the current values."""

    def __init__(self, choices: Any, renamed: dict[str, str], why: str = ""):
        super().__init__(list(choices))
        self.renamed, self.why = dict(renamed), why

    def convert(self, value, param, ctx):
        return super().convert(_renamed(ctx, param, value, self.renamed, self.why), param, ctx)


def renamed_value(renamed: dict[str, str], why: str = "") -> Callable:
    """A click callback for a free-text option whose old values `renamed` (old -> new) stay one release: an old
    value prints one deprecation line on stderr and becomes its new one (`RenamedChoice` for a click.Choice)."""
    return lambda ctx, param, value: _renamed(ctx, param, value, renamed, why)


PATTERN_RENAMED_WHY = "(study 000's shift algorithm; a scenario's all_reduce is a ring)"
"""Why --pattern all-reduce was renamed shift-all-reduce (collectives.run.RENAMED_PATTERNS)."""


def out_file(command: str, out: str | None, fixed: str, legacy: tuple[str, ...]) -> Path | None:
    """Where a command that writes one file puts it for `--out DIR`: DIR/`fixed` (DIR created). For one release an
    old-style `--out FILE` (a value ending in one of `legacy`, e.g. ".json") is still that file, with one line on
    stderr saying so. None without --out."""
    if out is None:
        return None
    p = Path(out)
    if p.suffix.lower() in legacy and not p.is_dir():
        click.echo(f"{command}: --out {p.name} (a file) is deprecated; use --out DIR (writes DIR/{fixed})", err=True)
        return p
    if p.exists() and not p.is_dir():
        raise UserError(f"{command}: --out: {out} exists and is not a folder")
    p.mkdir(parents=True, exist_ok=True)
    return p / fixed


OUT_HELP = "Folder to write into (created if needed)"


def seeds_option(help: str, default: int | None = None) -> Callable:
    """`--seeds K`: K runs, seeds S..S+K-1 (S = --seed)."""
    return click.option("--seeds", "seeds", type=click.IntRange(min=1), default=default, metavar="K",
                        show_default=default is not None, help=help)


def seed_stats(values: list) -> dict:
    """{"mean", "ci95", "n"} of the runs' values (None ignored): the mean and the half-width of its 95% confidence
    interval (Student t; None for one value)."""
    import math

    from ..report.stats import ci95

    mean, _, half, n = ci95(v for v in values if v is not None)
    return {"mean": mean if n else None, "ci95": None if n < 2 or math.isnan(half) else half, "n": n}


def seed_text(seeds: list[int]) -> str:
    """The seeds as a range when consecutive ("seeds 1..5"), else listed ("seeds 1, 4, 9")."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]}..{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


def pm_text(stat: dict, fmt: str = ".4g", unit: str = "") -> str:
    """A seed_stats dict as "mean ± ci unit" ("n/a" without a value)."""
    if stat["mean"] is None:
        return "n/a"
    ci = "" if stat["ci95"] is None else f" ± {format(stat['ci95'], fmt.replace('+', ''))}"
    return f"{format(stat['mean'], fmt)}{ci}{' ' + unit if unit else ''}"


def resolve_trace(prefix: str) -> str:
    """A Chakra trace argument: PREFIX of PREFIX.{rank}.et, or a folder (`trace synth --out DIR`) holding one trace
    set, NAME.{rank}.et, which it then stands for (fabricsim.chakra.trace.trace_prefix). A folder holding several
    is a user error naming them."""
    from ..chakra.trace import trace_prefix

    return str(trace_prefix(prefix))
