"""The `fabricsim` console script: `run FILE [--seed N] [--fidelity packet|flow] [--quiet] --json` and `validate FILE` start natively; everything else goes to the click CLI.

The native path (`_core.fast_cli`, the Rust front door in fabricsim-core's `scenario` module) imports nothing but
`fabricsim._core`. It answers only when it is sure to print exactly what the Python path prints; for any other
command, flag or scenario (an unknown key, RoCE, a graph file, any error or warning) it returns None and the
click CLI (`fabricsim.cli.main`) takes the command from the start, so every message stays the Python path's.
"""

import sys

_PROGRESS_AFTER_S = 2.0
"""= `fabricsim.cli._common.PROGRESS_AFTER_S` (tests/test_native_start.py checks): a run shows its progress bar
on a terminal once it has taken this long."""


class _LazyProgress:
    """The progress callable of a native run: nothing until the run has taken `_PROGRESS_AFTER_S` on a terminal,
    then the CLI's own bar (`RunProgress`, imported with rich only then)."""

    def __init__(self, label):
        self.label = label
        self.bar = None

    progress_bytes = True
    """The engine also hands this callable the messages' bytes (`bytes_done`, `bytes_total` keywords)."""

    def __call__(self, now_ps, stop_ps, events, msgs_done, msgs_total, wall_s, bytes_done=None, bytes_total=None):
        if self.bar is None:
            if wall_s < _PROGRESS_AFTER_S or not sys.stderr.isatty():
                return
            from .cli._common import RunProgress

            self.bar = RunProgress(self.label)
        self.bar(now_ps, stop_ps, events, msgs_done, msgs_total, wall_s, bytes_done, bytes_total)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _scenario_arg(argv):
    """The SCENARIO argument of a `run`/`validate` argv the native path accepted (its one positional)."""
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
        elif a in ("--seed", "--fidelity"):
            skip = True
        elif not a.startswith("-"):
            return a
    return ""


def _native(argv):
    """(exit code, stdout, stderr) of the native path, or None to hand the command to the click CLI."""
    from . import _core

    bar = _LazyProgress(f"simulating {_scenario_arg(argv)}")
    try:
        return _core.fast_cli(argv, bar)
    finally:
        bar.close()


def main() -> int:
    """Entry point of the `fabricsim` command."""
    argv = sys.argv[1:]
    if argv[:1] == ["run"] or argv[:1] == ["validate"]:
        try:
            got = _native(argv)
        except KeyboardInterrupt:
            sys.stderr.write("fabricsim: interrupted\n")
            return 130
        if got is not None:
            code, out, err = got
            try:
                sys.stdout.write(out)
                sys.stdout.flush()
            except BrokenPipeError:  # the reader went away (`| head`): not an error, as the click CLI says
                import os

                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 0
            if err:
                sys.stderr.write(err)
            return code
    from .cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
