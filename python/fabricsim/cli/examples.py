"""`fabricsim examples list|copy DIR`: the example scenarios that ship inside the package.

The examples live in fabricsim/_data/examples: in a checkout a link to examples/, in an installed wheel a
copy of it, so both commands work from any folder. A scenario's description is the first sentence of the
comment block that opens its file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import click

from ..errors import UserError

_SENTENCE_END = re.compile(r"\.(\s|$)")


def examples_dir() -> Path:
    """The example scenarios that ship with the package."""
    from ..examples import folder

    return folder()


def example_files() -> list[Path]:
    """Every example file, relative to examples_dir(), sorted (caches and hidden files left out)."""
    root = examples_dir()
    if not root.is_dir():
        raise UserError(f"fabricsim: the examples are missing from this installation (no folder {root})")
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file()
                  and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts))


def description(path: Path) -> str:
    """The first sentence of the comment block a file opens with ("" if it opens with none)."""
    words = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("#"):
                break
            words.append(line.lstrip("#").strip())
    text = " ".join(w for w in words if w)
    m = _SENTENCE_END.search(text)
    return text if m is None else text[:m.start() + 1]


@click.group("examples")
def examples() -> None:
    """The example scenarios that ship with fabricsim: list them or copy them.

    `fabricsim examples copy ex` writes them to ./ex; then `fabricsim run ex/leaf_spine_incast.toml`.
    """


@examples.command("list")
def list_examples() -> None:
    """List the example scenarios, each with its one-line description."""
    files = example_files()
    width = max((len(str(p)) for p in files), default=0)
    for p in files:
        click.echo(f"{str(p):<{width}}  {description(examples_dir() / p)}".rstrip())
    click.echo(f"{len(files)} examples; copy them with: fabricsim examples copy DIR")


@examples.command("copy")
@click.argument("dest", metavar="DIR")
@click.option("--force", is_flag=True, help="Overwrite files that already exist in DIR.")
def copy_examples(dest: str, force: bool) -> None:
    """Copy every example scenario into DIR (created if needed) and list what was written.

    Refuses, writing nothing, when one of the files already exists in DIR, unless --force.
    """
    files = example_files()
    out = Path(dest)
    if out.exists() and not out.is_dir():
        raise UserError(f"fabricsim: examples copy: {dest} exists and is not a folder")
    existing = [out / p for p in files if (out / p).exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise UserError(f"fabricsim: examples copy: {existing[0]} already exists{more}; nothing copied "
                        "(--force overwrites)")
    root = examples_dir()
    try:
        for p in files:
            (out / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / p, out / p)
    except OSError as e:
        raise UserError(f"fabricsim: examples copy: {e.filename or dest}: {e.strerror or e}") from None
    for p in files:
        click.echo(f"wrote {out / p}")
    scenarios = sorted((p for p in files if p.suffix == ".toml"), key=lambda p: p.name != "leaf_spine_incast.toml")
    if scenarios:
        click.echo(f"{len(files)} files in {dest}; run one with: fabricsim run {out / scenarios[0]}")
