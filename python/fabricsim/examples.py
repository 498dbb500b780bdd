"""The example scenarios that ship inside the package, by name: `fabricsim.examples.path("roce_incast.toml")` works
from a checkout and from an installed wheel alike (`fabricsim examples list|copy` on the command line)."""

from __future__ import annotations

from pathlib import Path

from .errors import ArgumentError

__all__ = ["folder", "names", "path"]


def folder() -> Path:
    """The folder of the packaged examples (fabricsim/_data/examples)."""
    return Path(__file__).resolve().parent / "_data" / "examples"


def names() -> list[str]:
    """The example scenario files, e.g. ["cluster_policies.toml", ..., "training_step.toml"]. O(files)."""
    root = folder()
    return sorted(p.name for p in root.glob("*.toml")) if root.is_dir() else []


def path(name: str) -> Path:
    """The packaged example `name` (with or without ".toml"), e.g. `fabricsim.load_scenario(path("roce_incast"))`;
    an ArgumentError lists the examples when there is no such file."""
    if not isinstance(name, str) or not name:
        raise ArgumentError("name", f"expected an example's file name, got {type(name).__name__} {name!r}")
    known = names()
    file = name if name.endswith(".toml") else f"{name}.toml"
    if file not in known:
        raise ArgumentError("name", f"no example {name!r} (known: {', '.join(known) or 'none installed'})")
    return folder() / file
