"""slidegen.read.parse: Slidev-style Markdown -> Deck."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from slidegen.deck.nodes import (
    BulletList,
    Click,
    Code,
    CodeBlock,
    Emph,
    Figure,
    Heading,
    HtmlRegion,
    HtmlSpan,
    Image,
    LineBreak,
    Link,
    ListItem,
    Math,
    MathBlock,
    OrderedList,
    Paragraph,
    Quote,
    Ref,
    Rule,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
    walk_blocks,
)
from slidegen.errors import SlidegenError
from slidegen.read.mdplugins import markdown
from slidegen.read.parse import deck_to_json, parse_deck, parse_text

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "decks" / "sample.md"


def parse(text: str, name: str = "deck.md"):
    return parse_text(textwrap.dedent(text), Path(name))


def error(text: str) -> str:
    """The diagnostic (``deck.md:L:C: error: ...``) that parsing ``text`` raises."""
    with pytest.raises(SlidegenError) as info:
        parse(text)
    return str(info.value)


def blocks(text: str):
    """The blocks of the only slide of ``text`` (a page of Markdown)."""
    deck = parse(text)
    assert len(deck.slides) == 1
    return deck.slides[0].blocks


def para(text: str):
    """The inlines of the one paragraph that ``text`` is."""
    (block,) = blocks(text)
    assert isinstance(block, Paragraph)
    return block.children


# --------------------------------------------------------------------------- rules 1-2: splitting


def test_split_fixture_separators_fences_comments_and_both_frontmatter_styles():
    deck = parse_deck(FIXTURES / "parse" / "split.md")
    got = [(s.index, s.line, s.layout, s.frontmatter, s.title, s.id) for s in deck.slides]
    assert got == [
        (1, 4, "cover", {"title": "Split rules"}, "Split rules", None),
        (2, 24, "default", {}, "Two", None),
        (3, 27, "default", {}, "", None),  # ---- : no frontmatter, so "layout: center" is text
        (4, 34, "section", {"layout": "section", "id": "three"}, "Three", "three"),
        (5, 42, "end", {"layout": "end"}, "Four", None),  # ```yaml frontmatter
    ]
    first = deck.slides[0]
    assert first.content == textwrap.dedent("""\
        # One

        ```md
        ---
        not: a separator
        ---
        ```

        ~~~
        ---
        ~~~

        <!--
        ---
        -->

        After the comment.""")
    assert [type(b).__name__ for b in first.blocks] == ["Heading", "CodeBlock", "CodeBlock", "Paragraph"]
    assert first.blocks[1] == CodeBlock("---\nnot: a separator\n---", "md", (), 7)
    assert first.blocks[2] == CodeBlock("---", "", (), 13)
    assert deck.slides[2].content == "layout: center\n\ntext"
    assert deck.slides[2].blocks == (Paragraph((Text("layout: center"),), 27), Paragraph((Text("text"),), 29))
    assert deck.slides[4].content == "# Four"
    assert deck.headmatter == {"title": "Split rules"}
    assert deck.title == "Split rules"


def test_four_dashes_never_open_frontmatter():
    deck = parse("""\
        # A

        ----
        layout: center
        id: x

        Body
        """)
    second = deck.slides[1]
    assert (second.layout, second.frontmatter, second.id, second.line) == ("default", {}, None, 4)
    assert second.content == "layout: center\nid: x\n\nBody"


def test_dash_line_after_content_is_a_separator_and_blank_line_means_no_frontmatter():
    deck = parse("# A\n---\n\n# B\n---\n# C\n")
    assert [(s.title, s.line, s.frontmatter) for s in deck.slides] == [
        ("A", 1, {}),
        ("B", 3, {}),
        ("C", 6, {}),  # no closing --- after "# C": content
    ]


def test_separator_inside_multiline_comment_and_tilde_fence_is_content():
    deck = parse("""\
        # A

        <!-- a comment
        ---
        still the comment -->

        ~~~~md
        ---
        ```
        ---
        ~~~~

        End
        """)
    assert len(deck.slides) == 1
    assert deck.slides[0].blocks[1] == CodeBlock("---\n```\n---", "md", (), 7)


def test_comment_marker_in_inline_code_opens_no_comment():
    deck = parse("Write `<!--` to open a comment.\n\n---\n\n# Two\n")
    assert [s.title for s in deck.slides] == ["", "Two"]


def test_headmatter_and_deck_title_fallbacks():
    deck = parse("""\
        ---
        title: The deck
        author: Ada
        chapter: 3
        summary: Things.
        date: 2024-05-01
        ---

        # Cover heading
        """)
    assert deck.headmatter == {
        "title": "The deck",
        "author": "Ada",
        "chapter": 3,
        "summary": "Things.",
        "date": "2024-05-01",
    }  # dates stay text
    assert deck.slides[0].frontmatter == deck.headmatter
    assert deck.title == "The deck"
    assert deck.slides[0].line == 8
    assert parse("# From the heading\n\n---\n\n# B\n").title == "From the heading"
    assert parse("no heading\n", name="decks/07-norms.md").title == "07-norms"


def test_leading_blank_lines_before_headmatter_and_empty_slides():
    deck = parse("\n\n---\ntitle: T\n---\n# A\n\n---\n\n---\n# C\n")
    assert [(s.index, s.title, s.content) for s in deck.slides] == [
        (1, "T", "# A"),
        (2, "", ""),
        (3, "C", "# C"),
    ]
    assert deck.headmatter == {"title": "T"}


def test_windows_newlines_and_bom():
    deck = parse_text("\ufeff---\r\nlayout: center\r\n---\r\n# A\r\n---\r\n\r\n# B\r\n", Path("deck.md"))
    assert [(s.layout, s.title, s.line) for s in deck.slides] == [("center", "A", 4), ("default", "B", 6)]


def test_parse_deck_reads_files_and_reports_unreadable_ones(tmp_path):
    path = tmp_path / "01-x.md"
    path.write_text("# Hello\n", encoding="utf-8")
    deck = parse_deck(path)
    assert (deck.path, deck.slug, deck.title) == (path, "01-x", "Hello")
    with pytest.raises(SlidegenError, match="cannot read the deck"):
        parse_deck(tmp_path / "missing.md")
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# A\n\n\xff\n")
    with pytest.raises(SlidegenError, match=r"bad\.md:3:1: error: the deck is not UTF-8"):
        parse_deck(bad)


# --------------------------------------------------------------------------- rule 3: layouts, frontmatter errors


def test_layout_defaults():
    deck = parse("# A\n\n---\n\n# B\n\n---\nlayout: fact\n---\n\n# C\n")
    assert [s.layout for s in deck.slides] == ["cover", "default", "fact"]


def test_unknown_layout_is_an_error_at_its_line():
    assert error("""\
        # A

        ---
        id: b
        layout: foo
        ---
        """) == (
        "deck.md:5:9: error: unknown layout 'foo' (known: cover, default, center, section, "
        "two-cols, image-left, image-right, fact, statement, quote, end, full, image, iframe, "
        "iframe-left, iframe-right, intro, none, two-cols-header, references)"
    )


def test_malformed_yaml_maps_to_file_lines():
    assert error("""\
        # A

        ---
        layout: center
        title: [unclosed
        id: x
        ---
        """) == (
        "deck.md:6:3: error: malformed YAML in frontmatter: did not find expected ',' or ']'; "
        "if these lines are slide content, leave a blank line after the --- separator"
    )
    assert error("# A\n\n---\n\n```yaml\nlayout: center\n  bad: indent\n```\n") == (
        "deck.md:7:6: error: malformed YAML in frontmatter: mapping values are not allowed in this context"
    )


def test_unquoted_reference_in_frontmatter_gets_a_hint():
    assert error("---\ntitle: {{ ch01.x }}\n---\n") == (
        "deck.md:2:9: error: malformed YAML in frontmatter: found unhashable key; "
        'quote values that hold references, e.g. title: "Loss {{ ch01.key }}"'
    )
    deck = parse('---\ntitle: "Loss {{ ch01.x | pm }}"\n---\n')
    assert deck.title == "Loss {{ ch01.x | pm }}"  # frontmatter keeps references raw


def test_frontmatter_must_be_a_mapping():
    assert error("# A\n\n---\n# B\nsome text\n---\n") == (
        "deck.md:4:1: error: frontmatter must be a YAML mapping of key: value lines, not a string; "
        "if these lines are slide content, leave a blank line after the --- separator"
    )
    assert error("---\n- a\n- b\n---\n").startswith("deck.md:2:1: error: frontmatter must be a YAML mapping")
    assert error("# A\n\n---\n# B\n---\n") == (
        "deck.md:4:1: error: frontmatter holds no keys, only comments; "
        "if these lines are slide content, leave a blank line after the --- separator"
    )


# --------------------------------------------------------------------------- rule 4: notes


def test_notes_fixture():
    deck = parse_deck(FIXTURES / "parse" / "notes.md")
    first, second, third, fourth = deck.slides
    assert first.notes == "Say **this** slowly: {{ ch01.val_loss.final | pm }}.\n\n- and this"
    assert first.notes_line == 7
    assert first.notes_blocks == (
        Paragraph(
            (
                Text("Say "),
                Strong((Text("this"),)),
                Text(" slowly: "),
                Ref("ch01.val_loss.final", ("pm",), 8, 22),
                Text("."),
            ),
            8,
        ),
        BulletList((ListItem((Paragraph((Text("and this"),), 10),), 10),), 10),
    )
    # the earlier comment stays in the content and renders nowhere
    assert first.content == (
        "# Notes only from the last comment\n\n<!-- an early comment stays in the content -->\n\nText."
    )
    assert first.blocks == (Heading(1, (Text("Notes only from the last comment"),), 1), Paragraph((Text("Text."),), 5))
    assert (second.notes, second.notes_blocks, second.notes_line) == (None, (), 0)
    assert "<!-- not notes -->" in second.content
    assert (third.notes, third.notes_line, third.content) == (
        "short note",
        25,
        "# An inline comment can end a slide\n\nText.",
    )
    assert third.blocks[1] == Paragraph((Text("Text."),), 25)
    assert (fourth.notes, fourth.content) == (None, "# Empty comment")


def test_notes_on_one_line_after_a_list_and_in_slots():
    deck = parse("""\
        ---
        layout: two-cols
        ---

        - a
        - b
        ::right::
        Right
        <!-- Right column note -->
        """)
    slide = deck.slides[0]
    assert slide.notes == "Right column note"
    assert slide.notes_line == 9
    assert slide.slots == {"right": (Paragraph((Text("Right"),), 8),)}


# --------------------------------------------------------------------------- rule 5: titles, ids, content, lines


def test_title_from_first_heading_or_frontmatter():
    deck = parse("""\
        Intro text

        ## The *real* title

        # Later heading

        ---
        title: From frontmatter
        ---

        # Heading
        """)
    first, second = deck.slides
    assert (first.title, first.title_heading) == ("The real title", 1)
    assert first.title_inlines == (Text("The "), Emph((Text("real"),)), Text(" title"))
    assert (second.title, second.title_heading, second.title_inlines) == ("From frontmatter", None, ())


def test_frontmatter_title_equal_to_the_heading_still_marks_the_heading():
    deck = parse("---\ntitle: Same\n---\n\n# Same\n")
    assert (deck.slides[0].title, deck.slides[0].title_heading) == ("Same", 0)


def test_ids_must_be_slugs_and_unique():
    deck = parse("---\nid: loss-curve\n---\n\n---\nid: 42\n---\n")
    assert [s.id for s in deck.slides] == ["loss-curve", "42"]
    assert deck.slide_by_id("loss-curve") is deck.slides[0]
    assert error("---\nlayout: center\nid: Loss Curve\n---\n") == (
        "deck.md:3:5: error: slide id 'Loss Curve' is not a slug: use lowercase letters, digits "
        "and '-', starting with a letter or digit (e.g. loss-curve)"
    )
    assert error("---\nid: a\n---\n\n# A\n\n---\nid: a\n---\n") == (
        "deck.md:8:5: error: duplicate slide id 'a': slide 1 (line 4) has it already; ids must be unique in a deck"
    )


def test_content_strips_frontmatter_notes_and_blank_edges():
    deck = parse("---\nlayout: center\n---\n\n\n  indented first line\n\nlast   \n\n<!-- n -->\n\n\n")
    assert deck.slides[0].content == "  indented first line\n\nlast   "


def test_every_block_gets_its_file_line():
    deck = parse("""\
        ---
        layout: center
        ---

        # H

        text
        continued

        - item
          > quote

        ***
        """)
    found = [(type(b).__name__, b.line) for b in walk_blocks(deck.slides[0].blocks)]
    assert found == [
        ("Heading", 5),
        ("Paragraph", 7),
        ("BulletList", 10),  # ListItems are not walked
        ("Paragraph", 10),
        ("Quote", 11),
        ("Paragraph", 11),
        ("Rule", 13),
    ]


# --------------------------------------------------------------------------- rule 6: slots, image layouts


def test_two_cols_right_slot():
    slide = parse("---\nlayout: two-cols\n---\n\n# Left\n\nleft text\n::right::\n\nright text\n").slides[0]
    assert slide.blocks == (Heading(1, (Text("Left"),), 5), Paragraph((Text("left text"),), 7))
    assert slide.slots == {"right": (Paragraph((Text("right text"),), 10),)}


TAKES = "two-cols takes ::right::; two-cols-header takes ::left::, ::right::, ::bottom::"


def test_slot_errors():
    assert error("# A\n\n::right::\n\nB\n") == (
        f"deck.md:3:1: error: unknown slot '::right::' for layout 'cover' ({TAKES})"
    )
    assert error("# A\n\n---\n\n::right::\n") == (
        f"deck.md:5:1: error: unknown slot '::right::' for layout 'default' ({TAKES})"
    )
    assert error("---\nlayout: two-cols\n---\n::left2::\n") == (
        f"deck.md:4:1: error: unknown slot '::left2::' for layout 'two-cols' ({TAKES})"
    )
    assert error("---\nlayout: two-cols\n---\n::right::\n\n::right::\n") == (
        "deck.md:6:1: error: slot '::right::' appears twice on this slide; keep one"
    )
    assert error("---\nlayout: two-cols\n---\n> a\n> ::right::\n") == (
        "deck.md:5:3: error: slot '::right::' must stand alone at the top level of the slide, "
        "not inside a list, quote or <v-click>"
    )


def test_slot_marker_in_code_is_content():
    slide = parse("```\n::right::\n```\n").slides[0]
    assert slide.blocks == (CodeBlock("::right::", "", (), 1),)


def test_image_layouts_need_an_image():
    slide = parse("---\nlayout: image-left\nimage: fig:ch01.loss\n---\n# A\n").slides[0]
    assert (slide.layout, slide.frontmatter["image"]) == ("image-left", "fig:ch01.loss")
    assert error("# A\n\n---\nlayout: image-right\n---\n\n# B\n") == (
        "deck.md:4:9: error: layout 'image-right' needs an image: key naming the picture "
        "(a path relative to the deck, or fig:NAME)"
    )


# --------------------------------------------------------------------------- rule 7: clicks


def test_v_click_on_own_lines_with_and_without_blank_lines():
    got = blocks("""\
        <v-click>

        First *reveal*

        </v-click>
        <v-click>
        - a
        - b
        </v-click>
        """)
    assert got == (
        Click((Paragraph((Text("First "), Emph((Text("reveal"),))), 3),), False, 1),
        Click(
            (BulletList((ListItem((Paragraph((Text("a"),), 7),), 7), ListItem((Paragraph((Text("b"),), 8),), 8)), 7),),
            False,
            6,
        ),
    )


def test_v_click_inline_wraps_one_paragraph():
    assert blocks("<v-click>Some **text**</v-click>\n\n<v-click>![Alt](a.png)</v-click>\n") == (
        Click((Paragraph((Text("Some "), Strong((Text("text"),))), 1),), False, 1),
        Click((Figure("Alt", "a.png", "", 3),), False, 3),
    )


def test_v_clicks_and_click_counts():
    deck = parse("""\
        <v-clicks>

        - one
        - two
          - nested does not count
        - three

        </v-clicks>

        <v-click>

        A

        </v-click>

        ```py {1|2|3}
        a
        b
        c
        ```

        ```py {1,3}
        a
        b
        c
        ```
        """)
    slide = deck.slides[0]
    click = slide.blocks[0]
    assert isinstance(click, Click) and click.each
    assert [type(b) for b in click.blocks] == [BulletList]
    assert slide.clicks == 3 + 1 + 2 + 0


def test_nested_v_click_and_clicks_in_slots():
    slide = parse("""\
        ---
        layout: two-cols
        ---

        <v-click>
        <v-click>
        Inner
        </v-click>
        </v-click>

        ::right::

        <v-click>Right</v-click>
        """).slides[0]
    assert slide.blocks == (Click((Click((Paragraph((Text("Inner"),), 7),), False, 6),), False, 5),)
    assert slide.slots["right"] == (Click((Paragraph((Text("Right"),), 13),), False, 13),)
    assert slide.clicks == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "# A\n\n<v-click>\n\ntext\n",
            "3:1: error: unclosed <v-click> opened here; close it with </v-click> alone on a line",
        ),
        (
            "# A\n\n<v-clicks>\n- a\n",
            "3:1: error: unclosed <v-clicks> opened here; close it with </v-clicks> alone on a line",
        ),
        (
            "# A\n\ntext\n<v-click>\nmore\n",
            "4:1: error: unclosed <v-click> opened here; close it with </v-click> alone on a line",
        ),
        (
            "# A\n\n</v-click>\n",
            "3:1: error: '</v-click>' closes nothing; remove it, or open it with <v-click> alone on a line",
        ),
        (
            "# A\n\nsome <v-click>text</v-click> more\n",
            "3:6: error: <v-click> must wrap whole blocks: "
            "put <v-click> and </v-click> on lines of their own, or around a whole paragraph",
        ),
        # `at` is Slidev's and now read (issue 13); an attribute Slidev's <v-click> does not take stays an error
        (
            '<v-click foo="2">\n\nx\n\n</v-click>\n',
            "1:1: error: <v-click>: unsupported attribute 'foo' (it takes at, fade, hide)",
        ),
    ],
)
def test_v_click_errors(text, message):
    assert error(text) == "deck.md:" + message


# --------------------------------------------------------------------------- rule 8: code


@pytest.mark.parametrize(
    ("info", "lang", "steps"),
    [
        ("py {2-3|5}", "py", ((2, 3), (5,))),
        ("py {all|2}", "py", ((), (2,))),
        ("py {*|2}", "py", ((), (2,))),
        ("py {2,4}", "py", ((2, 4),)),
        ("ts {1-3,5|all}", "ts", ((1, 2, 3, 5), ())),
        ("{4}", "", ((4,),)),
        ("py", "py", ()),
        ("", "", ()),
    ],
)
def test_code_fence_steps(info, lang, steps):
    (block,) = blocks(f"```{info}\n1\n2\n3\n4\n5\n```\n")
    assert block == CodeBlock("1\n2\n3\n4\n5", lang, steps, 1)


@pytest.mark.parametrize(
    ("info", "message"),
    [
        ("py {2-x}", "bad highlight range '{2-x}': '2-x' is not a line number or range"),
        ("py {3-2}", "bad highlight range '{3-2}': '3-2' is not an increasing range of lines from 1"),
        ("py {0}", "bad highlight range '{0}': '0' is not an increasing range of lines from 1"),
        ("py {1||2}", "bad highlight range '{1||2}': '' is not a line number or range"),
        ("py {9}", "bad highlight range '{9}': line 9 is past the end of the 3-line code block"),
        ("py {1|2", "bad highlight range '{1|2}': it has no closing }"),
    ],
)
def test_bad_highlight_ranges(info, message):
    assert error(f"# A\n\n```{info}\na\nb\nc\n```\n") == (
        f"deck.md:3:7: error: {message}; write line numbers and ranges like {{2-3|5}}, {{all|2}} or {{1,4}}"
    )


def test_unclosed_code_fence():
    assert error("# A\n\n```py\ncode\n---\n# not a slide\n") == (
        "deck.md:3:1: error: unclosed code fence opened here; close it with ```"
    )
    assert error("# A\n\n  ~~~~\ncode\n~~~\n") == (
        "deck.md:3:3: error: unclosed code fence opened here; close it with ~~~~"
    )


def test_unclosed_comment():
    assert error("# A\n\n<!-- a note\n---\n# B\n") == (
        "deck.md:3:1: error: unclosed HTML comment opened here; close it with -->"
    )


def test_indented_code_block():
    assert blocks("text\n\n    code here\n") == (Paragraph((Text("text"),), 1), CodeBlock("code here", "", (), 3))


# --------------------------------------------------------------------------- rules 9-10: math, tables, images


def test_math():
    assert para("Loss $\\ln 64$ and $a_{i}$, but $5 and $10 stay text.") == (
        Text("Loss "),
        Math("\\ln 64"),
        Text(" and "),
        Math("a_{i}"),
        Text(", but $5 and $10 stay text."),
    )
    assert blocks("$$\nE = mc^2 + {{ ch01.x | pm }}\n$$\n") == (MathBlock("E = mc^2 + {{ ch01.x | pm }}", 1),)


def test_table():
    assert blocks("""\
        | a | b | c | d |
        |:--|--:|:-:|---|
        | *x* | 2 | `3` | |
        """) == (
        Table(
            header=((Text("a"),), (Text("b"),), (Text("c"),), (Text("d"),)),
            rows=(((Emph((Text("x"),)),), (Text("2"),), (Code("3"),), ()),),
            aligns=("left", "right", "center", ""),
            line=1,
        ),
    )


def test_reference_with_a_filter_in_a_table_header_keeps_the_table():
    got = blocks("""\
        | one {{ ch09.seq | int }}-token | b |
        |---|---|
        | {{ ch01.x | pm }} | 2 |
        """)
    assert got == (
        Table(
            header=((Text("one "), Ref("ch09.seq", ("int",), 1, 7), Text("-token")), (Text("b"),)),
            rows=(((Ref("ch01.x", ("pm",), 3, 3),), (Text("2"),)),),
            aligns=("", ""),
            line=1,
        ),
    )


def test_figures_and_inline_images():
    got = blocks("""\
        ![Loss *curve*](fig:ch01.loss "Validation loss")

        See ![icon](img/i.png) here.
        """)
    assert got == (
        Figure("Loss curve", "fig:ch01.loss", "Validation loss", 1),
        Paragraph((Text("See "), Image("icon", "img/i.png"), Text(" here.")), 3),
    )


# --------------------------------------------------------------------------- rule 11: result references


def test_refs_fixture_positions():
    deck = parse_deck(FIXTURES / "parse" / "refs.md")
    slide = deck.slides[0]
    refs = [(n.key, n.filters, n.line, n.col) for n in _all_inlines(slide.blocks) if isinstance(n, Ref)]
    assert refs == [
        ("ch01.val_loss.final", (), 1, 8),
        ("ch01.val_loss.init", (), 3, 12),
        ("ch01.val_loss.final", ("pm",), 3, 40),
        ("ch01.steps", ("int",), 4, 6),  # link text
        ("ch01.a-b_c.d", (), 6, 8),
        ("ch02.x", ('fmt(".3g")', "pm"), 7, 13),
        ("ch03.q", (), 9, 10),
        ("ch01.val_loss.final", ("pm",), 13, 11),  # table cell, unescaped filter pipe
        ("ch01.x", ("pct",), 14, 13),  # table cell, escaped pipe
        ("ch01.y", (), 14, 37),
    ]
    literal = slide.blocks[5]
    assert literal == Paragraph(
        (
            Text("Literal {{ ch01.no }}, code "),
            Code("{{ ch01.no }}"),
            Text(", math "),
            Math("x = {{ ch01.m }}"),
            Text("."),
        ),
        16,
    )
    assert slide.blocks[6] == CodeBlock("{{ ch01.no }}", "text", (), 18)
    assert slide.notes_blocks == (Paragraph((Text("notes "), Ref("ch04.n", ("sci",), 22, 12)), 22),)
    assert slide.title == "Loss {{ ch01.val_loss.final }}"


def test_references_in_raw_text_and_positions_of_text_links_and_images():
    slide = parse_deck(FIXTURES / "parse" / "refs.md").slides[0]
    literal = slide.blocks[5]
    assert [(n.line, n.col) for n in literal.children if isinstance(n, Text)] == [(16, 1), (16, 45), (16, 70)]
    (math,) = [n for n in literal.children if isinstance(n, Math)]
    assert [(r.key, r.line, r.col, r.span, r.raw) for r in math.refs] == [("ch01.m", 16, 57, (4, 16), "{{ ch01.m }}")]
    assert math.tex[4:16] == "{{ ch01.m }}"
    assert [(r.key, r.filters, r.line, r.col, r.span) for r in slide.notes_refs] == [
        ("ch04.n", ("sci",), 22, 12, (6, 24))
    ]
    (link,) = [n for n in slide.blocks[1].children if isinstance(n, Link)]
    assert link.target_at == (4, 36)


def test_references_in_frontmatter_strings_are_located_in_the_yaml():
    text = (
        '---\nid: a\ntitle: "Loss {{ ch01.x }} and \\\\{{ no }}"\nalt: >\n  first line\n'
        "  and {{ ch01.y | pm }}\n---\n\n![A](fig:ch01.loss)\n"
    )
    slide = parse(text).slides[0]
    assert slide.frontmatter["alt"] == "first line and {{ ch01.y | pm }}"
    assert slide.frontmatter_at == {"id": (2, 5), "title": (3, 8), "alt": (4, 6)}
    refs = {k: [(r.key, r.line, r.col, r.span) for r in v] for k, v in slide.frontmatter_refs.items()}
    assert refs == {
        "title": [("ch01.x", 3, 14, (5, 17)), ('"{{ no }}"', 3, 32, (22, 31))],  # an escape: a literal
        "alt": [("ch01.y", 6, 7, (15, 32))],
    }
    assert slide.blocks[0].target_at == (9, 6)


def test_ref_in_heading_with_frontmatter_offset_and_nested_quote():
    deck = parse("# A\n\n---\nlayout: center\n---\n\n## Now {{ ch01.a }}\n\n> > deep {{ ch01.b|pm }}\n")
    heading, quote = deck.slides[1].blocks
    assert heading == Heading(2, (Text("Now "), Ref("ch01.a", (), 7, 8)), 7)
    assert list(_all_inlines((quote,)))[-1] == Ref("ch01.b", ("pm",), 9, 10)


@pytest.mark.parametrize(
    ("text", "where", "shown"),
    [
        ("The {{ }} here", "1:5", "{{ }}"),
        ("- item {{ 3x }} here", "1:8", "{{ 3x }}"),
        ("> quoted {{ key", "1:10", "{{ key"),
        ("a {{ ch01.x | }}", "1:3", "{{ ch01.x | }}"),
        ("a {{ ch01.x | 3 }}", "1:3", "{{ ch01.x | 3 }}"),
        ("a {{ ch01 x }}", "1:3", "{{ ch01 x }}"),
        ("text\n\n| a |\n|---|\n| x {{ ch01.x | pm |", "5:5", "{{ ch01.x"),  # the | splits the cell
        ("<!-- notes {{ ! }} -->", "1:12", "{{ ! }}"),
    ],
)
def test_malformed_refs(text, where, shown):
    assert error("# A\n\n---\n\n" + text + "\n") == (
        f"deck.md:{int(where.split(':')[0]) + 4}:{where.split(':')[1]}: error: malformed result "
        f"reference '{shown}': write {{{{ chNN.key }}}} or {{{{ chNN.key | filter }}}}"
    )


def test_ref_filters_are_kept_as_written():
    (ref,) = [n for n in para("{{ ch01.x|fmt('a|b') | pm|nope }}") if isinstance(n, Ref)]
    assert (ref.key, ref.filters) == ("ch01.x", ("fmt('a|b')", "pm", "nope"))


def test_quoted_literal_is_a_reference_for_the_binder():
    assert para('{{ "2,000" }} steps') == (Ref('"2,000"', (), 1, 1), Text(" steps"))


def test_escaped_braces_and_image_alt_keep_references_as_text():
    assert para("\\{{ ch01.x }} and ![Loss {{ ch01.l }}](a.png)") == (
        Text("{{ ch01.x }} and "),
        Image("Loss {{ ch01.l }}", "a.png"),
    )


# --------------------------------------------------------------------------- rule 12: inlines and other blocks


def test_links_keep_urls_as_written():
    assert para('[a](02-data.md#windows) [b](#perplexity) [c](https://x.org/ü?q=1 "T")') == (
        Link((Text("a"),), "02-data.md#windows"),
        Text(" "),
        Link((Text("b"),), "#perplexity"),
        Text(" "),
        Link((Text("c"),), "https://x.org/ü?q=1", "T"),
    )


def test_inline_nodes():
    assert para("*e* **s** ~~k~~ `c`\nsoft  \nhard\\\nback<br>br <br/> <span>raw</span> <!-- c --> end") == (
        Emph((Text("e"),)),
        Text(" "),
        Strong((Text("s"),)),
        Text(" "),
        Strike((Text("k"),)),
        Text(" "),
        Code("c"),
        SoftBreak(),
        Text("soft"),
        LineBreak(),
        Text("hard"),
        LineBreak(),
        Text("back"),
        LineBreak(),
        Text("br "),
        LineBreak(),
        Text(" "),
        HtmlSpan("span", "", (Text("raw"),)),
        Text("  end"),
    )


def test_quote_rules_ordered_lists_and_raw_html_blocks():
    got = blocks("""\
        > quoted

        ***

        ___

        3. three
        4. four

        <div class="x">
        kept as text
        </div>

        <!-- dropped -->

        <br>
        """)
    assert got == (
        Quote((Paragraph((Text("quoted"),), 1),), 1),
        Rule(3),
        Rule(5),
        OrderedList(
            (ListItem((Paragraph((Text("three"),), 7),), 7), ListItem((Paragraph((Text("four"),), 8),), 8)), 3, 7
        ),
        HtmlRegion('<div class="x">\nkept as text\n</div>', 10),  # as written (Slidev); a picture in PowerPoint
    )


# --------------------------------------------------------------------------- rule 13: speed


def test_markdown_instance_is_built_once():
    assert markdown() is markdown()


# --------------------------------------------------------------------------- deck_to_json and the sample deck


def test_deck_to_json_on_the_sample_deck():
    data = deck_to_json(parse_deck(SAMPLE))
    assert json.loads(json.dumps(data)) == data
    assert set(data) == {"title", "headmatter", "slides"}
    assert data["title"] == "Training a tiny decoder"
    assert data["headmatter"] == {
        "title": "Training a tiny decoder",
        "author": "Ada Example",
        "chapter": 1,
        "summary": "How a 5,376-parameter model learns to spell Hamlet, one step at a time.",
        "theme": "slidegen",
    }
    assert data["slides"][1] == {
        "index": 2,
        "line": 21,
        "layout": "section",
        "frontmatter": {"layout": "section", "id": "setup"},
        "title": "Part 1: the set-up",
        "notes": "Pause here: ask who has trained a model before.",
        "content": "# Part 1: the set-up",
        "clicks": 0,
        "id": "setup",
    }
    assert data["slides"][5] == {
        "index": 6,
        "line": 80,
        "layout": "default",
        "frontmatter": {},
        "title": "One training step",
        "notes": "Three clicks: forward, backward, update.",
        "content": "# One training step\n\n```py {1-2|4|5-6}\nlogits = model(x)\n"
        "loss = cross_entropy(logits, y)\n\nloss.backward()\nopt.step()\nopt.zero_grad()\n```",
        "clicks": 2,
        "id": None,
    }
    summary = [(s["index"], s["layout"], s["id"], s["clicks"]) for s in data["slides"]]
    assert summary == [
        (1, "cover", None, 0),
        (2, "section", "setup", 0),
        (3, "default", "data", 0),
        (4, "two-cols", "model", 0),
        (5, "image-right", "loss", 0),
        (6, "default", None, 2),
        (7, "default", None, 0),
        (8, "default", "watch", 4),
        (9, "fact", None, 0),
        (10, "statement", None, 0),
        (11, "quote", None, 0),
        (12, "center", None, 0),
        (13, "end", None, 0),
    ]


def test_sample_deck_uses_every_feature():
    deck = parse_deck(SAMPLE)
    assert all(slide.notes for slide in deck.slides)
    assert {"cover", "section", "two-cols", "image-right", "fact", "statement", "quote", "center", "end"} <= {
        slide.layout for slide in deck.slides
    }
    assert (SAMPLE.parent / deck.slide_by_id("loss").frontmatter["image"]).is_file()
    assert deck.slide_by_id("model").slots["right"]
    kinds = {type(b) for slide in deck.slides for b in walk_blocks(slide.blocks)}
    assert {Table, CodeBlock, MathBlock, Click, Quote, Figure, Rule} <= kinds
    inlines = {type(n) for slide in deck.slides for n in _all_inlines(slide.blocks)}
    assert {Math, Link, Strike, LineBreak, Code, Emph} <= inlines
    links = {n.url for slide in deck.slides for n in _all_inlines(slide.blocks) if isinstance(n, Link)}
    assert {"#loss", "#setup"} <= links
    assert all(deck.slide_by_id(url[1:]) for url in links if url.startswith("#"))
    assert not any(isinstance(n, Ref) for slide in deck.slides for n in _all_inlines(slide.blocks))
    assert "{{" not in SAMPLE.read_text(encoding="utf-8") and "fig:" not in SAMPLE.read_text(encoding="utf-8")


def _all_inlines(blocks_):
    """Every inline under ``blocks_``: paragraphs, headings, table cells, nested blocks."""
    from slidegen.deck.nodes import block_inlines, walk_inlines

    for block in walk_blocks(blocks_):
        yield from walk_inlines(block_inlines(block))
