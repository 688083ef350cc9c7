"""Slidev's block directives as markdown-it block rules.

- ``click_plugin``: ``<v-click>`` / ``<v-clicks>`` / ``<v-after>`` / ``<v-click-hide>`` (with their
  attributes, ``<v-click at="+2" hide>``) alone on a line, up to the matching closing tag alone on a
  line, becomes ``v_click_open`` (``meta["each"]``, ``meta["name"]``, ``meta["attrs"]``), the inner
  Markdown's tokens, ``v_click_close``. Blank lines around the inner Markdown are optional.
  An opening tag without its closing tag is left to ``html_block`` (the Deck builder
  reports it as unclosed).
- ``slot_plugin``: ``::name::`` alone on a line becomes a ``slot`` token (``meta["name"]``).

Both can interrupt a paragraph, so no blank line is needed before them.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock

CLICK_TAG_RE = re.compile(r"<(/?)(v-click-hide|v-clicks?|v-after)(\s[^<>]*)?>")
SLOT_RE = re.compile(r"::([A-Za-z0-9_-]+)::")
_INTERRUPTS: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}


def click_plugin(md: MarkdownIt) -> None:
    """Register the ``v_click`` block rule."""
    md.block.ruler.before("html_block", "v_click", _click_rule, _INTERRUPTS)


def slot_plugin(md: MarkdownIt) -> None:
    """Register the ``slot`` block rule."""
    md.block.ruler.before("html_block", "slot", _slot_rule, _INTERRUPTS)


def _line(state: StateBlock, line: int) -> str:
    """The text of ``line`` inside the current container, stripped."""
    return state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]].strip()


def _closing_line(state: StateBlock, start: int, end: int, name: str) -> int | None:
    """The line of the ``</name>`` matching the ``<name>`` on ``start``, counting nesting."""
    depth = 1
    for line in range(start + 1, end):
        if state.sCount[line] < state.blkIndent and not state.isEmpty(line):
            return None  # the enclosing list item or quote ended first
        match = CLICK_TAG_RE.fullmatch(_line(state, line))
        if match and match.group(2) == name:
            depth += -1 if match.group(1) else 1
            if depth == 0:
                return line
    return None


def _click_rule(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
    if state.is_code_block(startLine):
        return False
    match = CLICK_TAG_RE.fullmatch(_line(state, startLine))
    if not match or match.group(1):
        return False
    name = match.group(2)
    close = _closing_line(state, startLine, endLine, name)
    if close is None:
        return False
    if silent:
        return True

    old_parent, old_max = state.parentType, state.lineMax
    state.parentType, state.lineMax = "v_click", close
    token = state.push("v_click_open", "div", 1)
    token.map = [startLine, close + 1]
    token.meta = {"each": name == "v-clicks", "name": name, "attrs": match.group(3) or ""}
    token.block = True
    state.md.block.tokenize(state, startLine + 1, close)
    token = state.push("v_click_close", "div", -1)
    token.block = True
    state.parentType, state.lineMax = old_parent, old_max
    state.line = close + 1
    return True


def _slot_rule(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
    if state.is_code_block(startLine):
        return False
    match = SLOT_RE.fullmatch(_line(state, startLine))
    if not match:
        return False
    if silent:
        return True
    token = state.push("slot", "", 0)
    token.map = [startLine, startLine + 1]
    token.meta = {"name": match.group(1)}
    token.content = match.group(0)
    state.line = startLine + 1
    return True
