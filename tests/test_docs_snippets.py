"""Every code block of the README and the user guide runs, from a temporary directory, as a newcomer would.

A document's blocks run in order in one fresh directory that holds the example scenarios (`fabricsim examples
copy examples`) and a `../shared` link to the project's shared data, so paths read as they do beside a
checkout. Shell blocks (```console, ```bash, ```sh) run under `bash -e`; Python blocks are saved as a script
and run with the venv's interpreter (so a missing `__main__` guard fails, as it would for a user); TOML blocks
must parse. A block is left out only by a marker on the line right above its fence:

- `<!-- snippet: skip: REASON -->` — not runnable here, with the reason (e.g. it sets up the checkout);
- `<!-- snippet: file NAME -->` — not run: its text is written to NAME for the blocks after it;
- `<!-- snippet: slow -->` — runs only in the slow test (more than a few seconds).
Blocks fenced ```text are program output, never run. A shell or Python block with no marker always runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SHARED = Path(os.environ.get("FABRICSIM_SHARED") or ROOT.parent / "shared")
DOCS = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if "reference" not in p.parts
                                     or p.name == "api.md")
SHELL = {"console", "bash", "sh", "shell"}
FENCE = re.compile(r"^```(\w*)\s*$")
MARK = re.compile(r"^<!-- snippet: (skip: (?P<why>.+?)|file (?P<file>\S+)|slow) -->$")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    text: str
    marker: str = ""  # "", "skip", "file", "slow"
    arg: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of a Markdown file with their markers. O(lines)."""
    lines = doc.read_text().split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        b = Block(doc, i + 1, m.group(1) or "", "\n".join(lines[i + 1:j]))
        mk = MARK.match(lines[i - 1].strip()) if i > 0 else None
        if mk:
            b.marker = "skip" if mk.group("why") else "file" if mk.group("file") else "slow"
            b.arg = mk.group("why") or mk.group("file") or ""
        out.append(b)
        i = j + 1
    return out


def test_every_block_is_classified():
    # A block must say what it is: a language the runner knows, or `text` (output), or a marker with a reason.
    bad = [f"{b.where}: fence without a language" for d in DOCS for b in blocks(d)
           if not b.lang and b.marker != "skip"]
    bad += [f"{b.where}: skip without a reason" for d in DOCS for b in blocks(d) if b.marker == "skip" and not b.arg.strip()]
    assert not bad, "\n".join(bad)


def workdir(tmp_path: Path) -> Path:
    """A fresh directory beside a `shared` link, holding the examples as a user copies them."""
    work = tmp_path / "work"
    work.mkdir()
    if SHARED.exists():
        (tmp_path / "shared").symlink_to(SHARED)
    r = subprocess.run([str(BIN / "fabricsim"), "examples", "copy", "examples"], cwd=work, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return work


def run_block(b: Block, work: Path, n: int) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg",
           "FABRICSIM_SHARED": str(SHARED)}
    if b.marker == "file":
        (work / b.arg).write_text(b.text + "\n")
        return
    if b.lang == "toml":
        tomllib.loads(b.text)
        return
    if b.lang in SHELL:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", b.text]
    elif b.lang == "python":
        script = work / f"snippet_{n}.py"
        script.write_text(b.text + "\n")
        cmd = [sys.executable, str(script)]
    else:
        return
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{b.where} failed (exit {r.returncode}):\n{b.text}\n--- stderr:\n{r.stderr[-3000:]}"


def runnable(doc: Path, slow: bool) -> list[Block]:
    return [b for b in blocks(doc) if b.marker != "skip" and b.lang != "text" and (slow or b.marker != "slow")]


FAST = [d for d in DOCS if runnable(d, False)]
SLOW = [d for d in DOCS if any(b.marker == "slow" for b in blocks(d))]


@pytest.mark.parametrize("doc", FAST, ids=[str(d.relative_to(ROOT)) for d in FAST])
def test_snippets_run(doc, tmp_path):
    work = workdir(tmp_path)
    for n, b in enumerate(runnable(doc, slow=False)):
        run_block(b, work, n)


@pytest.mark.slow
@pytest.mark.parametrize("doc", SLOW, ids=[str(d.relative_to(ROOT)) for d in SLOW])
def test_snippets_run_including_slow_ones(doc, tmp_path):
    work = workdir(tmp_path)
    for n, b in enumerate(runnable(doc, slow=True)):
        run_block(b, work, n)


def test_marker_parsing(tmp_path):
    # The runner itself: a skip needs its reason, a file block is written, fences are matched in order.
    doc = tmp_path / "d.md"
    doc.write_text("<!-- snippet: skip: needs a GPU -->\n```console\nnvidia-smi\n```\n\n"
                   "<!-- snippet: file a.toml -->\n```toml\nx = 1\n```\n```python\nprint(open('a.toml').read())\n```\n")
    bs = blocks(doc)
    assert [(b.marker, b.arg, b.lang, b.line) for b in bs] == [("skip", "needs a GPU", "console", 2),
                                                               ("file", "a.toml", "toml", 7), ("", "", "python", 10)]
    work = tmp_path / "w"
    work.mkdir()
    for n, b in enumerate(bs[1:]):
        run_block(b, work, n)
    assert (work / "a.toml").read_text() == "x = 1\n"
    shutil.rmtree(work)
