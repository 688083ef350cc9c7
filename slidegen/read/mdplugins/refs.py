"""Result references, ``{{ key }}`` and ``{{ key | filter | ... }}``, as an inline rule.

The rule pushes one ``result_ref`` token per ``{{``. Its ``content`` is the reference as
written and its ``meta`` holds ``offset`` (position of ``{{`` in the inline source),
``key`` and ``filters``, or ``key = None`` when the reference is malformed. The rule never
raises: the Deck builder knows the source file and turns a malformed reference into an
error at its exact line and column.

``\\{{`` stays literal text (the ``escape`` rule eats the ``\\{``); inline code, math,
autolinks and raw HTML are consumed by their own rules before this one sees a ``{``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

#: A result key (``ch01.val_loss.final``), or a quoted literal (``"2,000"``) the binder prints as is.
KEY_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_.\-]*|"[^"\n]*"')
FILTER_RE = re.compile(r"[A-Za-z_]\w*(\(.*\))?", re.DOTALL)


def refs_plugin(md: MarkdownIt) -> None:
    """Register the ``result_ref`` inline rule (before ``escape``)."""
    md.inline.ruler.before("escape", "result_ref", _ref_rule)


def parse_ref(inner: str) -> tuple[str, tuple[str, ...]] | None:
    """``" ch01.x | fmt('.3g') | pm "`` -> ``("ch01.x", ("fmt('.3g')", "pm"))``; None if malformed."""
    parts = [part.strip() for part in split_pipes(inner)]
    key, filters = parts[0], parts[1:]
    if not KEY_RE.fullmatch(key) or not all(FILTER_RE.fullmatch(f) for f in filters):
        return None
    return key, tuple(filters)


def split_pipes(text: str) -> list[str]:
    """Split at ``|`` (or ``\\|``, as written in tables) outside quotes and parentheses."""
    parts: list[str] = []
    buf: list[str] = []
    quote, depth, i = "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif depth == 0 and (ch == "|" or text.startswith("\\|", i)):
            parts.append("".join(buf))
            buf = []
            i += 2 if ch == "\\" else 1
            continue
        buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def ref_spans(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every closed ``{{ ... }}`` on one line (end after the ``}}``)."""
    spans: list[tuple[int, int]] = []
    start = line.find("{{")
    while start >= 0:
        end = line.find("}}", start + 2)
        if end < 0:
            break
        spans.append((start, end + 2))
        start = line.find("{{", end + 2)
    return spans


@dataclass(frozen=True)
class RawRef:
    """A reference found in raw text (math, alt text, a caption, a frontmatter value, the notes)."""

    start: int
    """Offset of ``{{`` (of the backslash, when ``escaped``)."""
    end: int
    """Offset after ``}}``."""
    raw: str
    """The reference as written, from ``{{`` (or ``\\{{``) to ``}}``."""
    parsed: tuple[str, tuple[str, ...]] | None
    """``(key, filters)``; None when malformed."""
    escaped: bool = False
    """Written ``\\{{ ... }}``: braces meant literally."""


def raw_refs(text: str, mode: str = "plain") -> list[RawRef]:
    """The references in raw ``text``, in order.

    ``mode`` is ``plain`` (titles, captions, alt text, frontmatter: ``\\{{ x }}`` is
    returned as ``escaped``, to print the braces), ``math`` (``\\{{`` is TeX's ``\\{`` and
    TeX's own braces such as ``x^{{2}}`` are no reference: skipped) or ``markdown`` (the
    notes as written: ``\\{{`` skipped).
    """
    found: list[RawRef] = []
    spans, base = [], 0
    for line in text.split("\n"):  # a reference never spans lines
        spans += [(base + start, base + end) for start, end in ref_spans(line)]
        base += len(line) + 1
    for start, end in spans:
        raw, inner = text[start:end], text[start + 2 : end - 2]
        escaped = start > 0 and text[start - 1] == "\\"
        if escaped:
            if mode == "plain":
                found.append(RawRef(start - 1, end, "\\" + raw, None, escaped=True))
            continue
        if mode == "math" and ("{" in inner or not re.search(r'[."|]', inner)):
            continue
        found.append(RawRef(start, end, raw, parse_ref(inner)))
    return found


def escape_ref_pipes(line: str) -> str:
    """Escape the filter pipes inside ``{{ }}`` so a GFM table row does not split there."""
    out, last = [], 0
    for start, end in ref_spans(line):
        ref = line[start:end]
        out.append(line[last:start])
        out.append(re.sub(r"(?<!\\)\|", r"\\|", ref))
        last = end
    out.append(line[last:])
    return "".join(out)


def _ref_rule(state: StateInline, silent: bool) -> bool:
    """Consume ``{{ ... }}`` (or a lone ``{{`` when unclosed) and push a ``result_ref`` token."""
    src, pos = state.src, state.pos
    if not src.startswith("{{", pos):
        return False
    line_end = src.find("\n", pos)
    limit = state.posMax if line_end < 0 else min(line_end, state.posMax)
    close = src.find("}}", pos + 2, limit)
    if close < 0:
        raw, parsed, state.pos = src[pos:limit].rstrip(), None, pos + 2
    else:
        raw, parsed, state.pos = src[pos : close + 2], parse_ref(src[pos + 2 : close]), close + 2
    if not silent:
        token = state.push("result_ref", "", 0)
        token.content = raw
        key, filters = parsed if parsed else (None, ())
        token.meta = {"offset": pos, "key": key, "filters": filters}
    return True
