"""Slidev's snippet import as a markdown-it block rule.

A line ``<<< @/model/reference.py#attention python {2|4-5}`` becomes one ``snippet`` token
whose ``meta`` holds the path as written (``@/`` is the project root, anything else is
relative to the deck's folder), the region name (or ``""``), the language (or ``""``) and
the braces that follow (``{2|4-5}``, highlight steps as on a fence). The Deck builder
(:mod:`slidegen.read.convert`) reads the file; this rule only recognises the line.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock

#: ``<<< PATH[#REGION] [LANG] [{...}...]``, as Slidev's snippet transform reads it.
SNIPPET_RE = re.compile(
    r"<<<[ \t]*(?P<path>[^\s#{]+)(?:#(?P<region>[^\s{]+))?"
    r"(?:[ \t]+(?P<lang>[^\s{]+))?[ \t]*(?P<braces>\{.*)?"
)
_INTERRUPTS: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}


def snippet_plugin(md: MarkdownIt) -> None:
    """Register the ``snippet`` block rule."""
    md.block.ruler.before("fence", "snippet", _snippet_rule, _INTERRUPTS)


def _snippet_rule(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:
    if state.is_code_block(startLine):
        return False
    text = state.src[state.bMarks[startLine] + state.tShift[startLine] : state.eMarks[startLine]].rstrip()
    match = SNIPPET_RE.fullmatch(text)
    if not match:
        return False
    if silent:
        return True
    token = state.push("snippet", "code", 0)
    token.map = [startLine, startLine + 1]
    token.block = True
    token.content = text
    token.meta = {
        "path": match.group("path"),
        "region": match.group("region") or "",
        "lang": match.group("lang") or "",
        "braces": match.group("braces") or "",
    }
    state.line = startLine + 1
    return True
