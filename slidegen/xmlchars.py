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


def shape(value: object) -> tuple[int, int] | None:
    """How deep lists and mappings nest in ``value`` and how many values it holds once YAML aliases
    are expanded (a scalar: ``(0, 1)``); None when it holds itself. Counted without recursion, each
    shared list or mapping once."""
    memo: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()
    stack: list[tuple[object, bool]] = [(value, False)]
    while stack:
        item, done = stack.pop()
        if not isinstance(item, dict | list):
            continue
        kids = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        if done:
            sizes = [memo.get(id(k), (0, 1)) if isinstance(k, dict | list) else (0, 1) for k in kids]
            memo[id(item)] = (1 + max((d for d, _ in sizes), default=0), 1 + sum(n for _, n in sizes))
            open_.discard(id(item))
            continue
        if id(item) in memo:
            continue
        open_.add(id(item))
        stack.append((item, True))
        for kid in kids:
            if isinstance(kid, dict | list):
                if id(kid) in open_:
                    return None
                if id(kid) not in memo:
                    stack.append((kid, False))
    return memo.get(id(value), (0, 1))


def xml_safe_data(value: object) -> object:
    """``value`` (YAML data nested at most a few levels) with :func:`xml_safe` applied to every string in it."""
    if isinstance(value, str):
        return xml_safe(value)
    if isinstance(value, dict):
        return {xml_safe_data(k): xml_safe_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [xml_safe_data(v) for v in value]
    return value
