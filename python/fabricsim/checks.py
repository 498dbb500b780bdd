"""Argument checks of the public Python API, in one place: each returns the value as a plain Python object or
raises `fabricsim.errors.ArgumentError` naming the parameter, and accepts numpy scalars as Python numbers.

A bool is never a number here (`True` is not a count of 1), a float is never an integer (no silent rounding),
and NaN or infinity is never a quantity. O(1) per scalar; `plain` is O(size of the container).
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any, Iterable

from .errors import ArgumentError

U64_MAX = 2**64 - 1
"""The largest count the engine takes (u64)."""


def _what(value: object) -> str:
    """A short description of a wrong value: its type and, if short, its repr."""
    r = repr(value)
    return f"{type(value).__name__} {r}" if len(r) <= 40 else type(value).__name__


def _is_int(value: object) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def integer(value: object, name: str, *, low: int | None = None, high: int | None = U64_MAX,
            none: bool = False) -> Any:
    """`value` as a Python int in [low, high] (None when `none` allows it); numpy integers are ints."""
    if value is None and none:
        return None
    if not _is_int(value):
        raise ArgumentError(name, f"expected an integer, got {_what(value)}")
    v = int(value)  # type: ignore[call-overload]
    if low is not None and v < low:
        raise ArgumentError(name, f"must be at least {low}, got {v}")
    if high is not None and v > high:
        raise ArgumentError(name, f"must be at most {high}, got {v}")
    return v


def number(value: object, name: str, *, low: float | None = None, high: float | None = None, above: bool = False,
           none: bool = False) -> Any:
    """`value` as a finite Python float in [low, high] (above `low` when `above`; None when `none` allows it);
    ints and numpy numbers are accepted."""
    if value is None and none:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ArgumentError(name, f"expected a number, got {_what(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise ArgumentError(name, f"must be a finite number, got {value}") from None
    if not math.isfinite(v):
        raise ArgumentError(name, f"must be a finite number, got {v}")
    if low is not None and (v <= low if above else v < low):
        raise ArgumentError(name, f"must be {'above' if above else 'at least'} {low:g}, got {v:g}")
    if high is not None and v > high:
        raise ArgumentError(name, f"must be at most {high:g}, got {v:g}")
    return v


def text(value: object, name: str, *, choices: Iterable[str] | None = None, none: bool = False) -> Any:
    """`value` as a str (one of `choices` if given; None when `none` allows it)."""
    if value is None and none:
        return None
    if not isinstance(value, str):
        raise ArgumentError(name, f"expected a string, got {_what(value)}")
    if choices is not None:
        options = list(choices)
        if value not in options:
            raise ArgumentError(name, f"must be one of {', '.join(repr(c) for c in options)}, got {value!r}")
    return value


def path(value: object, name: str) -> Path:
    """`value` (a str or os.PathLike, not empty) as a Path."""
    if isinstance(value, (bytes, str, os.PathLike)) and not isinstance(value, bool):
        p = os.fsdecode(value) if isinstance(value, bytes) else os.fspath(value)
        if isinstance(p, str) and p:
            return Path(p)
    raise ArgumentError(name, f"expected a file path (str or pathlib.Path), got {_what(value)}")


def flag(value: object, name: str) -> bool:
    """`value` as a bool (numpy bools included); 0/1 and strings are refused."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise ArgumentError(name, f"expected True or False, got {_what(value)}")


def function(value: object, name: str, *, none: bool = False) -> Any:
    """`value` if callable (None when `none` allows it)."""
    if value is None and none:
        return None
    if not callable(value):
        raise ArgumentError(name, f"expected a function, got {_what(value)}")
    return value


def instance(value: object, cls: type, name: str, expected: str, *, none: bool = False) -> Any:
    """`value` if an instance of `cls` (None when `none` allows it); `expected` says what to pass."""
    if value is None and none:
        return None
    if not isinstance(value, cls):
        raise ArgumentError(name, f"expected {expected}, got {_what(value)}")
    return value


def plain(value: Any) -> Any:
    """`value` with every numpy scalar replaced by the Python number it holds and every numpy array by a list,
    through dicts, lists and tuples, so it serialises as JSON and passes strict model fields."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if type(value) is tuple:
        return tuple(plain(v) for v in value)
    mod = type(value).__module__
    if mod == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


_SIMPLE = {"int": integer, "float": number, "str": text, "bool": flag}
"""The checks of a dataclass field by its annotation's base type."""


def fields(obj: Any, *, positive: Iterable[str] = (), nonneg: Iterable[str] = ()) -> None:
    """Check (and normalise, numpy scalars to Python numbers) every field of dataclass instance `obj` whose
    annotation is `int`, `float`, `str` or `bool`, optionally `| None`: the type, finiteness, and for the fields
    named in `positive` > 0 (ints >= 1), in `nonneg` >= 0. Call it from `__post_init__` (frozen dataclasses too).
    O(fields)."""
    import dataclasses

    positive, nonneg = set(positive), set(nonneg)
    for f in dataclasses.fields(obj):
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        parts = [p.strip() for p in ann.split("|")]
        optional = "None" in parts
        base = [p for p in parts if p != "None"]
        if len(base) != 1 or base[0] not in _SIMPLE:
            continue
        kind, value = base[0], getattr(obj, f.name)
        if kind == "int":
            low = 1 if f.name in positive else 0 if f.name in nonneg else None
            v = integer(value, f.name, low=low, none=optional)
        elif kind == "float":
            low = 0.0 if f.name in positive or f.name in nonneg else None
            v = number(value, f.name, low=low, above=f.name in positive, none=optional)
        elif kind == "str":
            v = text(value, f.name, none=optional)
        else:
            v = None if value is None and optional else flag(value, f.name)
        object.__setattr__(obj, f.name, v)
