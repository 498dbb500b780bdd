"""Generate the scenario-file reference (docs/reference/scenario.md) from the spec models, so it cannot drift.

Every section is one model (the scenario, its tables and arrays of tables, every topology family); every row
is one field: its TOML key, its type in the user's terms (duration, rate, size, count, one of …), its default
and its meaning. Meanings are the fields' attribute docstrings in python/fabricsim/spec/ and
python/fabricsim/topology/ (read with `ast`, so importing the models stays cheap). `undocumented()` lists the
fields without one; a test keeps that list empty.

`render_cli()` is the command-line reference (docs/reference/cli.md): every command's own `--help`.
`render_api()` is the Python API reference (docs/reference/api.md): the signature and docstring of every public
name of the package and of the modules users import (read with `inspect`).

These pages are committed, so their links work in a clone; so is each study's page, docs/studies/STUDY.md, copied
to experiments/STUDY/README.md (`study_copies()`). tests/test_reference_docs.py fails when any of them differs from
a fresh render.

Usage:
    python docs/gen_reference.py            # name the committed pages that differ from a fresh render (exit 1 if any)
    python docs/gen_reference.py --write    # write them
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REGENERATE = "python docs/gen_reference.py --write"
"""The one command that regenerates every page this module owns."""

UNIT_TYPES = {
    "parse_duration_ps": "duration (`\"5ms\"`, `\"500ns\"`, or seconds)",
    "parse_rate_bps": "rate (`\"100Gbps\"`, or bit/s)",
    "parse_size_bytes": "size (`\"64KiB\"`, `\"1MB\"`, or bytes)",
}


def attribute_docs(cls: type) -> dict[str, str]:
    """Field name → the docstring written right under it in the class body (PEP 257 attribute docstrings), or
    the field's description for a model generated from the engine's declaration (`fabricsim.spec.roce`)."""
    docs: dict[str, str] = {k: " ".join(f.description.split()) for k, f in getattr(cls, "model_fields", {}).items()
                            if f.description}
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
        said = [m.text for m in t.__metadata__ if type(m).__name__ == "Requires"]
        if said:
            return said[0]
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
    if f.is_required() or (f.json_schema_extra or {}).get("required"):
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
             f"Generated from the spec models by `{REGENERATE}`; do not edit. A scenario",
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
             f"Generated from the commands' own `--help` by `{REGENERATE}`; do not edit.",
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

    # Load every command first: the root's command list reads a loaded command's own short help and the registry's
    # otherwise, and the two cut a long line differently, so the page would depend on what this process ran before.
    root = click.Context(cli, info_name="fabricsim")
    for name in cli.list_commands(root):
        cli.get_command(root, name)
    walk(cli, ["fabricsim"], None)
    return "\n".join(lines)


API_MODULES = [
    ("fabricsim", "The package: scenarios, runs, records, workloads and the placement advisor."),
    ("fabricsim.errors", None),
    ("fabricsim.topology", None),
    ("fabricsim.chakra", None),
    ("fabricsim.sweep", None),
    ("fabricsim.cluster", None),
]
"""The modules the API reference covers, in order, each with an introduction (None: its docstring's first paragraph)."""


class _Raw:
    """An annotation or default shown as written (inspect would quote a string annotation)."""

    def __init__(self, text: str) -> None:
        self.text = text.strip("'\"")  # a forward reference written as a string inside a string annotation

    def __repr__(self) -> str:
        return self.text


def _shown(value: object) -> object:
    """A default as the reader should see it; an object whose repr names a memory address becomes `...`."""
    text = repr(value)
    return _Raw("...") if " at 0x" in text or " object at " in text else value


def signature(obj: object, name: str) -> str | None:
    """`name(params) -> return` with annotations as written in the source, private parameters left out; None when
    `obj` has no signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = [p.replace(annotation=_Raw(p.annotation) if isinstance(p.annotation, str) else p.annotation,
                        default=p.default if p.default is inspect.Parameter.empty else _shown(p.default))
              for p in sig.parameters.values() if not p.name.startswith("_") and p.name not in ("self", "cls")]
    ret = sig.return_annotation
    sig = sig.replace(parameters=params, return_annotation=_Raw(ret) if isinstance(ret, str) else ret)
    return f"{name}{sig}".replace("typing.", "")


def _doc(obj: object) -> str:
    """An object's own docstring, cleaned ("" when it has none or inherits a builtin's)."""
    doc = obj.__doc__ if isinstance(obj, (type, types.ModuleType)) else inspect.getdoc(obj)
    if not isinstance(doc, str) or (isinstance(obj, type) and doc == getattr(obj.__base__, "__doc__", None)):
        return ""
    return inspect.cleandoc(doc)


def _one_line(doc: str) -> str:
    return " ".join(doc.split())


def _members(cls: type) -> list[str]:
    """One bullet per public method, property or class attribute defined in `cls` itself, in source order."""
    out = []
    is_model = issubclass(cls, BaseModel)
    for key, value in vars(cls).items():
        if key.startswith("_") or (is_model and key.startswith("model_")):
            continue
        func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        if isinstance(value, property):
            text = f"`{key}` (property)"
            doc = _doc(value.fget) if value.fget else ""
        elif inspect.isfunction(func):
            text = f"`{signature(func, key)}`"
            doc = _doc(func)
        else:
            continue
        out.append(f"- {text}" + (f": {_one_line(doc)}" if doc else ""))
    return out


def _fields(model: type) -> list[str]:
    """One bullet per field of a pydantic model: key, type and default."""
    docs = attribute_docs(model)
    return [f"- `{key}`: {field_type(f)}, {default_text(f)}" + (f". {docs[key]}" if key in docs else "")
            for key, f in model.model_fields.items()]


def _public(module: types.ModuleType) -> list[str]:
    """A module's public names: its `__all__`, else the classes and functions defined in it."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and (inspect.isclass(v) or inspect.isfunction(v)) and getattr(v, "__module__", "") == module.__name__]
    return [n for n in names if n != "__version__"]


def render_api() -> str:
    """The Python API reference: every public name of API_MODULES with its signature and docstring."""
    import importlib

    lines = ["# Python API reference", "",
             f"Generated from the docstrings by `{REGENERATE}`; do not edit. Everything below is importable",
             "as written: `fabricsim.run`, `from fabricsim.chakra import load`. Units are in the names (`_s`, `_ps`,",
             "`_bps`, `_bytes`); a scenario's keys are in the [scenario file reference](scenario.md).", ""]
    for modname, intro in API_MODULES:
        module = importlib.import_module(modname)
        lines += [f"## `{modname}`", "", intro or _doc(module).split("\n\n")[0].replace("\n", " "), ""]
        if modname == "fabricsim":
            lines += ["`fabricsim.__version__` is the package version.", ""]
        for name in _public(module):
            obj = getattr(module, name)
            qual = f"{modname}.{name}"
            if isinstance(obj, types.ModuleType):
                lines += [f"### `{qual}`", "", f"The module `{obj.__name__}`"
                          + (" (below)." if obj.__name__ in dict(API_MODULES) else "."), ""]
                continue
            if typing.get_origin(obj) is not None:
                lines += [f"### `{qual}`", "", "A type alias.", ""]
                continue
            if not (inspect.isclass(obj) or callable(obj)):
                lines += [f"### `{qual}`", "", f"A constant: {type(obj).__name__}.", ""]
                continue
            lines += [f"### `{qual}`", ""]
            if inspect.isclass(obj):
                if issubclass(obj, BaseException):
                    bases = ", ".join(b.__name__ for b in obj.__bases__)
                    lines += [f"An exception (a subclass of {bases}).", ""]
                elif issubclass(obj, BaseModel):
                    lines += ["A pydantic model.", ""]
                else:
                    sig = signature(obj, name)
                    if sig:
                        lines += ["```text", sig, "```", ""]
            else:
                sig = signature(obj, name)
                if sig:
                    lines += ["```text", sig, "```", ""]
            doc = _doc(obj)
            if doc:
                lines += [doc, ""]
            if inspect.isclass(obj) and issubclass(obj, BaseModel):
                if obj.__name__ == "Scenario":
                    lines += ["Its fields are the scenario file's keys: see the [scenario file reference](scenario.md).", ""]
                else:
                    lines += ["Fields:", "", *_fields(obj), ""]
            if inspect.isclass(obj):
                members = _members(obj)
                if members:
                    lines += ["Members:", "", *members, ""]
                if obj.__name__ == "RunRecord":
                    lines += _record_tables()
    return "\n".join(lines)


RECORD_WHEN = {"": "every run", "hybrid": "hybrid runs", "roce": "RoCE and UEC runs", "uec": "UEC runs"}
"""The `when` of a record field, in words (a field's `when` the schema does not list is shown as it is)."""


def _record_tables() -> list[str]:
    """The record's tables and columns, one Markdown table per table, from `fabricsim.record.SCHEMA` (the
    engine's declaration): each column's name in `RunRecord.columns`, type, unit, the runs that have it and its
    meaning."""
    from fabricsim.record import SCHEMA, TABLES

    out = ["The record's tables and columns (`fabricsim.record.SCHEMA`, declared once in the engine): "
           "`RunRecord.columns[\"TABLE.COLUMN\"]` for a stored column, `frame(TABLE)` and `to_arrow(TABLE)` for "
           "every table. Times are picoseconds (uint64), a missing time `fabricsim.record.MISSING`; *derived* "
           "columns are computed from the stored ones.", ""]
    for table in TABLES:
        out += [f"`{table}`:", "", "| column | type | unit | in | meaning |", "| --- | --- | --- | --- | --- |"]
        for f in SCHEMA:
            if f.table != table:
                continue
            kind = f.dtype + (", labels: " + f.labels if f.labels else "") + (", derived" if f.source == "derived"
                                                                              else "")
            meaning = f.description.replace("|", "\\|") + (" (may be missing)" if f.missing else "")
            out.append(f"| `{f.name}` | {kind} | {f.unit or '-'} | {RECORD_WHEN.get(f.when, f.when)} | {meaning} |")
        out.append("")
    return out


def study_copies() -> list[tuple[Path, Path]]:
    """(docs/studies/STUDY.md, experiments/STUDY/README.md) for every study page whose study exists: the copy must
    stay identical to the page."""
    return [(page, ROOT / "experiments" / page.stem / "README.md") for page in sorted((HERE / "studies").glob("*.md"))
            if (ROOT / "experiments" / page.stem / "run.py").is_file()]


def reference_pages() -> dict[Path, str]:
    """docs/reference/{scenario,cli,api}.md → their fresh text."""
    return {HERE / "reference" / "scenario.md": render(), HERE / "reference" / "cli.md": render_cli(),
            HERE / "reference" / "api.md": render_api()}


def committed() -> dict[Path, str]:
    """Every file this module owns → its fresh text: the reference pages and the studies' copies."""
    out = reference_pages()
    out.update({copy: page.read_text() for page, copy in study_copies()})
    return out


def stale() -> list[Path]:
    """The owned files that are missing or differ from a fresh render."""
    return [path for path, text in committed().items() if not path.is_file() or path.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the pages that differ from a fresh render")
    args = ap.parse_args(argv)
    if args.write:
        for path, text in committed().items():
            if not path.is_file() or path.read_text() != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"wrote {path.relative_to(ROOT)}")
        return 0
    old = stale()
    for path in old:
        print(f"{path.relative_to(ROOT)} {'differs from a fresh render' if path.is_file() else 'is missing'}")
    if old:
        print(f"run `{REGENERATE}`")
    return 1 if old else 0


if __name__ == "__main__":
    sys.exit(main())
