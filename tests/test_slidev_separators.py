"""Slide separators as Slidev's parser reads them (packages/parser/src/core.ts): a line starting with ``---``."""

from __future__ import annotations

import textwrap
from pathlib import Path

from slidegen.read.parse import parse_text


def parse(text: str):
    return parse_text(textwrap.dedent(text), Path("deck.md"))


def test_a_separator_may_carry_trailing_text_or_a_comment():
    deck = parse("""\
        # A

        --- part two

        # B

        ---<!-- a comment -->

        # C

        ------ many dashes and words

        # D
        """)
    assert [(s.title, s.line, s.frontmatter) for s in deck.slides] == [
        ("A", 1, {}),
        ("B", 4, {}),
        ("C", 8, {}),
        ("D", 12, {}),
    ]
    assert "part two" not in deck.slides[0].content + deck.slides[1].content


def test_a_separator_with_trailing_text_opens_frontmatter_as_three_dashes_do():
    deck = parse("""\
        # A

        --- # the second slide
        layout: center
        ---

        # B

        ----
        layout: not frontmatter
        ---

        # C
        """)
    assert [(s.title, s.layout) for s in deck.slides] == [
        ("A", "cover"),
        ("B", "center"),
        ("", "default"),
        ("C", "default"),
    ]
    assert deck.slides[2].content == "layout: not frontmatter"


def test_a_dash_run_inside_a_paragraph_line_is_not_a_separator():
    deck = parse("# A\n\ntext -- and --- more\n  ---indented\n")
    assert len(deck.slides) == 1
