"""What toolselect won't walk: values nested deeper than a bound, and YAML whose aliases expand into
more values than a file of its size could hold. Checked without recursion, where the data comes in
(a model's answer, a config, a golden file, a tools file), so nothing after it can blow the stack
or the memory."""

from __future__ import annotations

from typing import Any

import yaml

MAX_ARGS_DEPTH = 64  # a tool's arguments nested deeper are no tool's arguments
MAX_FILE_DEPTH = 100  # a config, golden or tools file nested deeper
MAX_VALUES = 200_000  # a YAML file's values, each alias counted as often as it is used


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether lists and objects nest deeper than `limit` in `value`."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        inner = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if inner is None:
            continue
        if depth > limit:
            return True
        todo.extend((x, depth + 1) for x in inner)
    return False


def yaml_too_big(node: yaml.Node | None) -> str | None:
    """Why a composed YAML document is refused (its aliases expand past MAX_VALUES, or it nests past
    MAX_FILE_DEPTH), or None. Every alias is walked where it is used, so a few hundred bytes of
    nested aliases (a "billion laughs") are found after MAX_VALUES steps, not after a billion."""
    if node is None:
        return None
    seen = 0
    todo: list[tuple[yaml.Node, int]] = [(node, 1)]
    while todo:
        item, depth = todo.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"its aliases (*name) expand into more than {MAX_VALUES:,} values"
        if depth > MAX_FILE_DEPTH:
            return f"it nests deeper than {MAX_FILE_DEPTH} levels"
        if isinstance(item, yaml.MappingNode):
            todo.extend((part, depth + 1) for pair in item.value for part in pair)
        elif isinstance(item, yaml.SequenceNode):
            todo.extend((part, depth + 1) for part in item.value)
    return None
