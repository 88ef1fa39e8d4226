# SPDX-License-Identifier: MIT
"""A small YAML writer for LAVA jobs and test definitions (pure).

The plugin does not depend on PyYAML; what LAVA reads here is plain mappings, lists,
strings, numbers and booleans, so block style with JSON-quoted strings (a double-quoted
YAML scalar is a JSON string) is enough and reads back exactly with any YAML parser.
A comment can be put above a mapping key: LAVA ignores it, a person editing the job
sees which values are placeholders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./@+-]*$")
# Words YAML 1.1 would read as something other than a string.
_SPECIAL = frozenset(
    word
    for lower in ("y", "n", "yes", "no", "true", "false", "on", "off", "null")
    for word in (lower, lower.capitalize(), lower.upper())
) | {"~"}


def to_yaml(data: Any, comments: Mapping[str, str] | None = None) -> str:
    """YAML text of `data`; `comments` maps a dotted key path (`actions.0.deploy.images`)
    to a comment written above that key."""
    lines: list[str] = []
    _emit(data, 0, lines, "", dict(comments or {}))
    return "\n".join(lines) + "\n"


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _PLAIN.match(text) and text not in _SPECIAL:
        return text
    return json.dumps(text)


def _emit(data: Any, indent: int, lines: list[str], path: str, comments: dict[str, str]) -> None:
    pad = " " * indent
    if isinstance(data, Mapping):
        for key, value in data.items():
            here = f"{path}.{key}" if path else str(key)
            if here in comments:
                lines += [f"{pad}# {line}" for line in comments[here].splitlines()]
            if _is_block(value):
                lines.append(f"{pad}{scalar(key)}:")
                _emit(value, indent + 2, lines, here, comments)
            else:
                lines.append(f"{pad}{scalar(key)}: {_inline(value)}")
    elif isinstance(data, Sequence) and not isinstance(data, str):
        for index, item in enumerate(data):
            here = f"{path}.{index}"
            if _is_block(item):
                sub: list[str] = []
                _emit(item, indent + 2, sub, here, comments)
                # the first line of the item goes after the dash
                first = next(i for i, line in enumerate(sub) if not line.lstrip().startswith("#"))
                lines += sub[:first]
                lines.append(f"{pad}- {sub[first][indent + 2 :]}")
                lines += sub[first + 1 :]
            else:
                lines.append(f"{pad}- {_inline(item)}")
    else:
        lines.append(f"{pad}{scalar(data)}")


def _is_block(value: Any) -> bool:
    if isinstance(value, Mapping):
        return bool(value)
    return isinstance(value, Sequence) and not isinstance(value, str) and bool(value)


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[]"
    return scalar(value)
