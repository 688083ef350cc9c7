"""Citations, Pandoc's syntax, as inline rules.

- ``cite_bracket``: ``[@key]``, ``[@key, §2.1]``, ``[see @a; @b, p. 3]``: a bracket whose
  every ``;``-separated part is an optional prefix, ``@key`` and an optional ``, locator``.
  A bracket followed by ``(`` or ``[`` is a link, and anything else stays text.
- ``cite_intext``: ``@key`` not preceded by a letter or digit (so ``me@example.org`` stays
  text): ``@kaplan2020 shows`` cites in the running text.

Neither applies inside a link's text.

Each pushes one ``cite`` token whose ``meta`` holds ``offset`` (of the ``[`` or ``@`` in the
inline source), ``in_text`` and ``items``: ``(key, locator, prefix, offset of its @)``.
Keys are Pandoc's: a letter, digit or ``_``, then letters, digits and ``:.#$%&-+?<>~/``,
ending in a letter, digit or ``_`` (so a full stop after ``@key.`` ends the sentence).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

KEY = r"[A-Za-z0-9_](?:[\w:.#$%&+?<>~/-]*\w)?"
KEY_RE = re.compile(KEY)
_PART_RE = re.compile(rf"\s*(?P<prefix>[^@;]*?)\s*(?<![\w@])@(?P<key>{KEY})(?:\s*,\s*(?P<locator>[^;]*?))?\s*")

Item = tuple[str, str, str, int]


def cites_plugin(md: MarkdownIt) -> None:
    """Register the ``cite_bracket`` and ``cite_intext`` inline rules (before ``link``)."""
    md.inline.ruler.before("link", "cite_bracket", _bracket_rule)
    md.inline.ruler.before("link", "cite_intext", _intext_rule)


def parse_bracket(inner: str, base: int = 0) -> list[Item] | None:
    """The items of a bracket's inside (``@a, §2; @b``), offsets from ``base``; None when it is no citation."""
    items: list[Item] = []
    start = 0
    for part in inner.split(";"):
        match = _PART_RE.fullmatch(part)
        if not match or "[" in part or "]" in part:
            return None
        at = base + start + match.start("key") - 1
        items.append((match["key"], match["locator"] or "", match["prefix"] or "", at))
        start += len(part) + 1
    return items


def find_cites(text: str) -> list[tuple[int, int, list[Item]]]:
    """``(start, end, items)`` of every bracketed citation in raw ``text`` (a caption); offsets in ``text``."""
    found = []
    for match in re.finditer(r"\[([^\[\]\n]*@[^\[\]\n]*)\]", text):
        if text[match.end() : match.end() + 1] in ("(", "["):
            continue
        items = parse_bracket(match.group(1), match.start(1))
        if items:
            found.append((match.start(), match.end(), items))
    return found


def _bracket_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] != "[" or "@" not in src[pos : state.posMax] or state.linkLevel:
        return False
    end = src.find("]", pos + 1, state.posMax)
    if end < 0 or "[" in src[pos + 1 : end] or src[end + 1 : end + 2] in ("(", "["):
        return False
    items = parse_bracket(src[pos + 1 : end], pos + 1)
    if not items:
        return False
    if not silent:
        token = state.push("cite", "", 0)
        token.content = src[pos : end + 1]
        token.meta = {"offset": pos, "in_text": False, "items": items}
    state.pos = end + 1
    return True


def _intext_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src[pos] != "@" or state.linkLevel or (pos > 0 and (src[pos - 1].isalnum() or src[pos - 1] in "_@")):
        return False
    match = KEY_RE.match(src, pos + 1, state.posMax)
    if not match:
        return False
    if not silent:
        token = state.push("cite", "", 0)
        token.content = src[pos : match.end()]
        token.meta = {"offset": pos, "in_text": True, "items": [(match.group(), "", "", pos)]}
    state.pos = match.end()
    return True
