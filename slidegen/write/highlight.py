"""Pygments tokens for a code block, with a time limit: a lexer that loops gives plain text and a warning.

A deck may name any of Pygments' lexers, and a few of them loop or crawl on some input. Every
writer takes its tokens from :func:`tokens`, which stops a lexer after :data:`TIME_LIMIT`
seconds (checked between tokens) or when it raises, and then gives the code as one plain text
token; :func:`problems` names those blocks as located warnings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.token import Token, _TokenType
from pygments.util import ClassNotFound

from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic, display_path

#: Seconds a lexer may take for one code block before the block is shown as plain text.
TIME_LIMIT = 2.0

Tokens = tuple[tuple[_TokenType, str], ...]


@lru_cache(maxsize=64)
def lexer(lang: str) -> Lexer:
    """The lexer for ``lang`` (plain text when there is none by that name); newlines kept as written."""
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=True) if lang else TextLexer()
    except ClassNotFound:
        return TextLexer()


@lru_cache(maxsize=256)
def highlighted(code: str, lang: str) -> tuple[Tokens, bool]:
    """``code``'s tokens and whether the lexer finished (False: the code as one plain token)."""
    try:
        return tuple(_timed(lexer(lang).get_tokens(code), time.monotonic() + TIME_LIMIT)), True
    except Exception:  # noqa: BLE001 (past the time limit, or a lexer's bug: neither may stop the build)
        text = code if code.endswith("\n") else code + "\n"
        return ((Token.Text, text),), False


def tokens(code: str, lang: str) -> Tokens:
    """``code`` as Pygments tokens, ending in a newline; plain text when the lexer fails or runs too long."""
    return highlighted(code, lang)[0]


def _timed(stream: Iterator[tuple[Any, str]], deadline: float) -> Iterator[tuple[_TokenType, str]]:
    for count, (token, value) in enumerate(stream):
        if count % 64 == 0 and time.monotonic() > deadline:
            raise TimeoutError
        yield token, value


def problems(deck: d.Deck) -> list[Diagnostic]:
    """A warning for each code block of ``deck`` whose lexer failed or ran past the time limit."""
    out = []
    for slide in deck.slides:
        for block in d.walk_blocks(d.slide_blocks(slide)):
            if isinstance(block, d.CodeBlock) and block.lang and not highlighted(block.code, block.lang)[1]:
                out.append(
                    Diagnostic(
                        display_path(deck.slide_path(slide)),
                        block.line,
                        1,
                        f"the '{block.lang}' highlighter failed or took over {TIME_LIMIT:g} s "
                        "on this block; it is shown as plain text",
                        "warning",
                    )
                )
    return out
