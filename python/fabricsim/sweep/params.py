"""Parameter paths into scenario dicts: `a.b[2].c`, with `[*]` meaning every element of a list."""

from __future__ import annotations

import copy
import re
from typing import Any

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+|\*)\]")


def parse_path(path: str) -> list[str | int]:
    """`messages[*].size` -> ['messages', '*', 'size'] (indices as ints). Raises ValueError if malformed."""
    parts: list[str | int] = []
    pos = 0
    for m in _TOKEN.finditer(path):
        gap = path[pos:m.start()]
        if gap not in ("", "."):
            raise ValueError(f"malformed parameter path '{path}'")
        pos = m.end()
        if m.group(1) is not None:
            parts.append(m.group(1))
        else:
            parts.append("*" if m.group(2) == "*" else int(m.group(2)))
    if not parts or pos != len(path):
        raise ValueError(f"malformed parameter path '{path}'")
    return parts


def _set(node: Any, parts: list[str | int], value: Any, path: str) -> None:
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(node, list):
            raise ValueError(f"'{path}': [*] applies to a list")
        if rest:
            for item in node:
                _set(item, rest, value, path)
        else:
            node[:] = [copy.deepcopy(value) for _ in node]
        return
    if isinstance(head, int):
        if not isinstance(node, list) or head >= len(node):
            raise ValueError(f"'{path}': index {head} out of range")
        if rest:
            _set(node[head], rest, value, path)
        else:
            node[head] = copy.deepcopy(value)
        return
    if not isinstance(node, dict):
        raise ValueError(f"'{path}': '{head}' is not inside a table")
    if rest:
        if head not in node:
            node[head] = [] if rest[0] == "*" or isinstance(rest[0], int) else {}
        _set(node[head], rest, value, path)
    else:
        node[head] = copy.deepcopy(value)


def apply_params(base: dict, params: dict[str, Any]) -> dict:
    """A deep copy of `base` with every `path: value` of `params` set (missing tables are created)."""
    out = copy.deepcopy(base)
    for path, value in params.items():
        _set(out, parse_path(path), value, path)
    return out
