"""Generate the scenario-file reference (docs/reference/scenario.md) from the spec models, so it cannot drift.

Every section is one model (the scenario, its tables and arrays of tables, every topology family); every row
is one field: its TOML key, its type in the user's terms (duration, rate, size, count, one of …), its default
and its meaning. Meanings are the fields' attribute docstrings in python/fabricsim/spec/ and
python/fabricsim/topology/ (read with `ast`, so importing the models stays cheap). `undocumented()` lists the
fields without one; a test keeps that list empty.

`render_cli()` is the command-line reference (docs/reference/cli.md): every command's own `--help`.

Usage: python docs/gen_reference.py [OUT.md]   (default: docs/reference/scenario.md; cli.md beside it)
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
import typing
from pathlib import Path

from pydantic import BaseModel

from fabricsim.spec.scenario import Scenario
from fabricsim.topology.registry import FAMILIES
from fabricsim.units import format_duration, format_rate, format_size

UNIT_TYPES = {
    "parse_duration_ps": "duration (`\"5ms\"`, `\"500ns\"`, or seconds)",
    "parse_rate_bps": "rate (`\"100Gbps\"`, or bit/s)",
    "parse_size_bytes": "size (`\"64KiB\"`, `\"1MB\"`, or bytes)",
}


def attribute_docs(cls: type) -> dict[str, str]:
    """Field name → the docstring written right under it in the class body (PEP 257 attribute docstrings)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for a, b in zip(body, body[1:]):
            if (isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr)
                    and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)):
                docs[a.target.id] = " ".join(inspect.cleandoc(b.value.value).split())
    return docs


def field_type(f) -> str:
    """A field's type in the user's terms (pydantic keeps a top-level Annotated's metadata on the field)."""
    return type_name(typing.Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation)


def type_name(t) -> str:
    """A type in the user's terms."""
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Annotated:
        for meta in t.__metadata__:
            fn = getattr(getattr(meta, "func", None), "__name__", "")
            if fn in UNIT_TYPES:
                return UNIT_TYPES[fn]
        base = type_name(args[0])
        if any(getattr(m, "min_length", None) for m in t.__metadata__) or any(
                getattr(m, "pattern", None) for m in getattr(t, "__metadata__", ())):
            return "name"
        strict_positive = [m for m in t.__metadata__ if type(m).__name__ in ("Gt", "Ge")]
        if base == "integer" and strict_positive:
            return "count > 0" if type(strict_positive[0]).__name__ == "Gt" else "count ≥ 0"
        return base
    if origin is typing.Literal:
        return " \\| ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in args if a is not type(None)]
        if len(parts) == 1:
            return type_name(parts[0])
        if all(isinstance(a, type) and issubclass(a, BaseModel) for a in parts):
            return "table, one of: " + ", ".join(f"`{tag(a)}`" for a in parts)
        return " or ".join(type_name(a) for a in parts)
    if origin is list:
        inner = args[0] if args else typing.Any
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return f"array of tables ({inner.__name__})"
        return f"list of {type_name(inner)}"
    if origin is dict:
        return f"table of {type_name(args[0])} → {type_name(args[1])}"
    if origin is tuple:
        return "pair of " + ", ".join(type_name(a) for a in args)
    if t is bool:
        return "true \\| false"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if t is str:
        return "string"
    if isinstance(t, type) and issubclass(t, BaseModel):
        return f"table ({t.__name__})"
    return str(t).replace("typing.", "")


def tag(model: type) -> str:
    """A tagged model's `kind` (a model without one: its name)."""
    f = model.model_fields.get("kind")
    return typing.get_args(f.annotation)[0] if f else model.__name__


def default_text(f) -> str:
    """A field's default as the user would write it (durations, rates and sizes with their unit)."""
    if f.is_required():
        return "required"
    d = f.get_default(call_default_factory=True)
    if d is None:
        return "unset"
    if isinstance(d, BaseModel):
        return "defaults below"
    if d in ([], {}):
        return "empty"
    kind = field_type(f)
    if isinstance(d, int) and not isinstance(d, bool):
        for word, fmt in (("duration", format_duration), ("rate", format_rate), ("size", format_size)):
            if kind.startswith(word):
                return f"`{fmt(d)}`" if d else "`0`"
    return f"`{d!r}`".replace("'", '"')


def nested_models(t) -> list[type]:
    """The models a field's type refers to (list elements, optional tables), in order."""
    out: list[type] = []
    if isinstance(t, type) and issubclass(t, BaseModel):
        return [t]
    for a in typing.get_args(t):
        if not isinstance(a, (str, int, float)):
            out += nested_models(a)
    return out


def sections() -> list[tuple[str, type]]:
    """(TOML location, model) for the scenario, every table it reaches, then every topology family and its
    tables. A tagged table's location names its `kind`."""
    seen: set[type] = set()
    out: list[tuple[str, type]] = []

    def walk(title: str, path: str, model: type) -> None:
        if model in seen:
            return
        seen.add(model)
        out.append((title, model))
        for key, f in model.model_fields.items():
            models = [m for m in nested_models(f.annotation) if m not in FAMILIES]
            array = typing.get_origin(f.annotation) is list
            sub = f"{path}.{key}" if path else key
            for m in models:
                t = f"[[{sub}]]" if array else f"[{sub}]"
                if len(models) > 1 and "kind" in m.model_fields:
                    t += f' kind = "{tag(m)}"'
                walk(t, sub, m)

    walk("top level", "", Scenario)
    for fam in FAMILIES:
        walk(f'[topology] kind = "{tag(fam)}"', "topology", fam)
    return out


def undocumented() -> list[str]:
    """`Model.field` for every field without an attribute docstring (the `kind` tag of a family excepted)."""
    missing = []
    for _, model in sections():
        docs = attribute_docs(model)
        missing += [f"{model.__name__}.{k}" for k in model.model_fields if k not in docs and k != "kind"]
    return missing


def render() -> str:
    lines = ["# Scenario file reference", "",
             "Generated from the spec models by `docs/gen_reference.py` (run by `make docs`); do not edit. A scenario",
             "is a TOML file. Every quantity takes a unit (`\"5ms\"`, `\"100Gbps\"`, `\"10MiB\"`) or a plain number in",
             "the base unit (seconds, bit/s, bytes). Unknown keys are errors, named with their path.", ""]
    for where, model in sections():
        docs = attribute_docs(model)
        lines += [f"## {where}", ""]
        if model.__doc__:
            lines += [" ".join(inspect.cleandoc(model.__doc__).split()), ""]
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for key, f in model.model_fields.items():
            meaning = docs.get(key, "the family's tag" if key == "kind" else "")
            lines.append(f"| `{key}` | {field_type(f)} | {default_text(f)} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


def render_cli() -> str:
    """Every command's `--help`, in command order, groups with their subcommands."""
    import click

    from fabricsim.cli import cli

    lines = ["# Command-line reference", "",
             "Generated from the commands' own `--help` by `docs/gen_reference.py` (run by `make docs`); do not edit.",
             "Exit codes: 0 done, 1 some runs of a sweep failed (one line; the rest are stored), 2 bad input (one line "
             "naming the file and field), 3 incomplete run, 130 interrupted.",
             ""]

    def walk(cmd: click.Command, path: list[str], parent: click.Context | None) -> None:
        settings = {"max_content_width": 100, "terminal_width": 100, **(cmd.context_settings if parent is None else {})}
        ctx = click.Context(cmd, info_name=path[-1], parent=parent, **settings)  # the parent adds its own path
        lines.extend([f"## `{' '.join(path)}`", "", "```text", cmd.get_help(ctx), "```", ""])
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not getattr(sub, "hidden", False):
                    walk(sub, path + [name], ctx)

    walk(cli, ["fabricsim"], None)
    return "\n".join(lines)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "reference" / "scenario.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render())
    print(f"wrote {out} ({len(sections())} sections)")
    cli_out = out.with_name("cli.md")
    cli_out.write_text(render_cli())
    print(f"wrote {cli_out}")


if __name__ == "__main__":
    main()
