"""Characters XML 1.0 cannot hold, replaced once where text enters, so every writer shows the same thing.

XML (and so PowerPoint, and HTML parsed as XML) forbids C0 control characters other than
tab, newline and carriage return, the non-characters U+FFFE and U+FFFF, and lone
surrogates. A deck's source gets each replaced by U+FFFD (the replacement character)
before it is parsed; writers that build XML still escape what other inputs (YAML escapes,
results.md) bring in.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by U+FFFD."""
    return INVALID.sub(REPLACEMENT, text) if INVALID.search(text) else text


def nesting(value: object) -> int:
    """How deep lists and mappings nest in ``value`` (a scalar is 0), counted without recursion."""
    deepest = 0
    todo: list[tuple[object, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in (*item.keys(), *item.values()))
        elif isinstance(item, list | tuple | set):
            todo.extend((v, depth + 1) for v in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def xml_safe_data(value: object) -> object:
    """``value`` (YAML data nested at most a few levels) with :func:`xml_safe` applied to every string in it."""
    if isinstance(value, str):
        return xml_safe(value)
    if isinstance(value, dict):
        return {xml_safe_data(k): xml_safe_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [xml_safe_data(v) for v in value]
    return value
