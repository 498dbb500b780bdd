"""The native front door's rejections say what Python's say (issue 31, "One schema": the Rust reader is to be the
one validator, so its errors must name the user's key as Python's front door names it).

`_core.native_scenario(path)` declines a file in one of three ways: "field: reason" (the file is invalid, the field
as Python names it), "warning: field = value means ..." (Python warns about the value; the text is Python's
warning) or "unsupported: why" (the file may be valid, but this port does not read it). Over the corpus (every
scenario file shipped or used in tests, as tests/test_native_start.py collects it), for every file Python rejects:
the native front door declines it as invalid naming Python's field, or with Python's warning, or as unsupported
only where UNSUPPORTED says why. For tests/bad_inputs/ the whole text is Python's, except where WORDED_DIFFERENTLY
gives the native text and why it is the better one. tests/test_native_start.py's property test (one value of a
small scenario changed) asks the same of every file it makes (`check_named_alike`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_native_start import CORPUS, IDS, ROOT, python_side

from fabricsim import _core

UNSUPPORTED: dict[str, str] = {}
"""Files Python rejects that the native front door calls unsupported, by the start of their name, and a substring
of its reason (none: every corpus file Python rejects is an invalid or a warning natively too)."""

WORDED_DIFFERENTLY: dict[str, str] = {
    # pydantic: "List should have at least 1 item after validation, not 0".
    "empty_nodes.toml": "topology.nodes: a custom topology needs at least one node",
    # The line and column are tomllib's; the words are the `toml` crate's (tomllib: "Expected ']' at the end of a
    # table declaration"), which also says what it expected.
    "syntax_error.toml": "line 2: TOML syntax error: unclosed table, expected `]` (column 10)",
    # pydantic: "Input should be 'per_flow', ... or 'adaptive'": the native text also names the value given.
    "unknown_ecmp_mode.toml": "routing.ecmp: must be 'per_flow', 'per_message', 'per_packet', 'flowlet' or 'adaptive', "
                              "not 'random'",
    "unknown_fidelity.toml": "fidelity: must be 'packet', 'flow' or 'hybrid', not 'fluid'",
}
"""Files of tests/bad_inputs/ whose native reason is worded otherwise than Python's (same field): the native text,
and (above) Python's and why the native one is the better."""


def verdict_of(error: str | None, path: Path) -> tuple[str | None, str]:
    """("error" or "warning", Python's text without the file) from `python_side`'s error for the file at `path`
    (None: Python takes it; then (None, ""))."""
    if error is None:
        return None, ""
    kind, _, text = error.partition(": ")
    return ("warning" if kind.endswith("Warning") else "error"), text.removeprefix(f"{path}: ")


def python_verdict(path: Path) -> tuple[str | None, str]:
    """`verdict_of` Python's load (header and workload columns included) of the file."""
    return verdict_of(python_side(path)[1], path)


def field(text: str) -> str:
    """The field an error names: its text before the first ": " ("line 2", "cannot read" for a whole-file error)."""
    return text.split(": ")[0]


def check_named_alike(name: str, verdict: str | None, python_text: str, ok: bool, native: str) -> None:
    """A file Python rejects is declined naming Python's field, with Python's warning, or as unsupported; a file
    Python takes is taken, or declined as unsupported (never called invalid)."""
    if verdict is None:
        assert ok or native.startswith("unsupported: "), f"{name}: Python takes it, the native front door says {native}"
        return
    assert not ok, f"{name}: taken natively though Python says {python_text}"
    if native.startswith("unsupported: "):
        return
    if verdict == "warning":
        assert native == f"warning: {python_text}", f"{name}: Python warns {python_text!r}, native {native!r}"
    else:
        assert field(native) == field(python_text), f"{name}: Python says {python_text!r}, native {native!r}"


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_a_file_python_rejects_is_declined_naming_pythons_field(path):
    rel = str(path.relative_to(ROOT))
    verdict, text = python_verdict(path)
    ok, native = _core.native_scenario(str(path))
    if verdict is not None and native.startswith("unsupported: "):
        allowed = [why for start, why in UNSUPPORTED.items() if path.name.startswith(start)]
        assert allowed and allowed[0] in native, f"{rel}: unsupported ({native}) but not listed in UNSUPPORTED"
    check_named_alike(rel, verdict, text, ok, native)
    if path.parent.name == "bad_inputs" and verdict is not None:
        assert native == WORDED_DIFFERENTLY.get(path.name, text), f"{rel}: Python says {text!r}"


def test_the_lists_name_files_that_exist():
    names = {p.name for p in CORPUS}
    for start in UNSUPPORTED:
        assert any(n.startswith(start) for n in names), start
    for name in WORDED_DIFFERENTLY:
        assert (ROOT / "tests" / "bad_inputs" / name).exists(), name


@pytest.mark.parametrize("text, native", [
    # A top-level key is its own field (not `scenario.seed`), once (not `messages: messages[0].size`).
    ("seed = -1\n", "seed: Input should be greater than or equal to 0"),
    # tomllib reads TOML 1.0: a trailing comma in an inline table is a syntax error where tomllib stops.
    ('x = 1\ny = { a = 1, }\n', "line 2: TOML syntax error: Invalid initial character for a key part (column 14)"),
    ('[topology]\nkind = "fat_tree3"\nk = 5\nrate = "1Gbps"\n',
     "topology.k: must be even (a k-ary fat-tree switch has k/2 ports down and k/2 up), got 5"),
    ('[topology]\nkind = "torus"\ndims = [4]\nrate = "1Gbps"\n', "topology.dims: a torus has 2 or 3 dimensions, got 1 ([4])"),
    ('[topology]\nkind = "dragonfly"\np = 1\na = 2\nh = 1\ng = 9\nrate = "1Gbps"\n',
     "topology.g: must be from 2 to a·h + 1 = 3 (each group has a·h = 2 global ports, one per other group at the most), got 9"),
    ('[topology]\nkind = "dumbbell"\nbottleneck_rate = "100"\n',
     'warning: topology.bottleneck_rate = "100" means 100 bit/s, below the 1 Mb/s any fabric link has; did you mean "100Gbps"?'),
    ('[topology]\nkind = "dumbbell"\n[queue.qdisc]\nkind = "codel"\ntarget = 0\n',
     "queue.qdisc.codel.target: Input should be greater than 0"),
    # A fabric too large to simulate is one line, estimated from the parameters before anything is built.
    ('[topology]\nkind = "leaf_spine"\nracks = 2\nhosts_per_rack = 2\nspines = 9223372036854775807\nhost_rate = "1Gbps"\n'
     'fabric_rate = "1Gbps"\n',
     "topology: more than 18 quintillion nodes and links (about 1.7e10 GiB before any traffic); fabricsim simulates at most "
     "20,000,000"),
    # 1000 × 1000 × 1000 routers, one host each: 2·10^9 nodes (routers + hosts), 10^9 host links + 3·10^9 ring
    # links; 6·10^9 × 3,000 B (budget.rs's calibrated ELEMENT_BYTES) = 16,764 GiB.
    ('[topology]\nkind = "torus"\ndims = [1000, 1000, 1000]\nrate = "1Gbps"\n',
     "topology: 6,000,000,000 nodes and links (about 16,764 GiB before any traffic); fabricsim simulates at most "
     "20,000,000"),
])
def test_by_hand(tmp_path, text, native):
    f = tmp_path / "s.toml"
    f.write_text(text)
    assert _core.native_scenario(str(f)) == (False, native)
    verdict, python_text = python_verdict(f)
    check_named_alike("by hand", verdict, python_text, False, native)
