"""Raw HTML on slides, as Slidev passes it through: parsed, in HTML, in Markdown and in PowerPoint.

The fixture is tests/fixtures/decks/slidev_html.md.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.deck import nodes as d
from slidegen.deck import rawhtml
from slidegen.read.parse import parse_deck, parse_text
from slidegen.write import html
from slidegen.write import markdown as markdown_out
from slidegen.write.pptx import write_deck

FIXTURE = Path(__file__).parent / "fixtures" / "decks" / "slidev_html.md"


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


def test_inline_tags_pair_into_spans_and_blocks_follow_commonmark(deck: d.Deck):
    spans = [n for n in d.walk_inlines(deck.slides[0].blocks[1].children) if isinstance(n, d.HtmlSpan)]
    assert [(s.tag, s.attrs, d.plain_text(s.children)) for s in spans] == [
        ("b", "", "bold"),
        ("i", "", "italic"),
        ("u", "", "underlined"),
        ("s", "", "struck"),
        ("sub", "", "2"),
        ("sup", "", "2"),
        ("kbd", "", "Ctrl"),
        ("kbd", "", "C"),
        ("span", ' style="color: #d62728"', "red text"),
    ]
    kinds = [type(b).__name__ for b in deck.slides[1].blocks]
    # a blank line ends an HTML block: the Markdown between <div> and </div> is Markdown
    # the lone wrapper tags hold Markdown PowerPoint draws; the whole <div> is a region it shows as a picture
    assert kinds == ["Heading", "RawHtml", "Paragraph", "RawHtml", "HtmlRegion", "RawHtml"]
    assert deck.slides[1].blocks[4] == d.HtmlRegion(
        '<div class="boxed">No Markdown **here**: the block runs to the blank line</div>', 20
    )


def test_unpaired_tags_stay_text_and_void_tags_pass_through():
    para = parse_text('a <div> b </i> <img src="x.png"> <b>c\n', Path("d.md")).slides[0].blocks[0]
    assert para.children == (  # type: ignore[union-attr]
        d.Text("a <div> b </i> "),
        d.RawInline('<img src="x.png">'),
        d.Text(" <b>c"),
    )


def test_html_passes_the_authors_html_through_and_scopes_style(deck: d.Deck):
    page = html.render_deck(deck, {})
    assert (
        "Inline: <b>bold</b>, <i>italic</i>, <u>underlined</u>, <s>struck</s>, H<sub>2</sub>O, "
        'x<sup>2</sup>,\n<kbd>Ctrl</kbd>+<kbd>C</kbd> and <span style="color: #d62728">red text</span>.'
        "<br>"
    ) in page
    assert (
        '<div class="grid">\n<p><strong>Markdown</strong> inside an HTML block, after a blank line</p>\n</div>'
    ) in page
    assert '<div class="boxed">No Markdown **here**: the block runs to the blank line</div>' in page
    assert (
        "<style>.reveal .slide-style-2 {\nh1 { color: #2ca02c; }\n.grid { border-left: 6px solid #2ca02c; "
        "padding-left: 12px; }\n}</style>"
    ) in page
    assert '<section class="layout-default slide-style-2"' in page
    assert page.count("slide-style-") == 2  # one slide styled, by its own class


def test_text_is_still_escaped_around_raw_html():
    deck = parse_text("# A\n\n<b>x</b> 1 < 2 & `<i>`\n", Path("d.md"))
    page = html.render_deck(deck, {})
    assert "<p><b>x</b> 1 &lt; 2 &amp; <code>&lt;i&gt;</code></p>" in page


def test_markdown_writers_keep_html_as_written(deck: d.Deck):
    text = markdown_out.writer(deck, {}, "md", d.DeckIndex()).deck_text()
    assert "H<sub>2</sub>O" in text and '<span style="color: #d62728">red text</span>' in text
    assert "<style>\nh1 { color: #2ca02c; }" in text


def test_css_colours_for_powerpoint():
    assert rawhtml.css_color(' style="color: #d62728"') == "#d62728"
    assert rawhtml.css_color(" style='font-weight: bold; color:#f00'") == "#ff0000"
    assert rawhtml.css_color(' style="color: red;"') == "#ff0000"
    assert rawhtml.css_color(' style="background-color: red"') is None
    assert rawhtml.css_color(' class="x"') is None


def test_pptx_maps_inline_tags_to_runs_and_warns_on_blocks(deck: d.Deck, tmp_path: Path):
    target = tmp_path / "html.pptx"
    warnings = write_deck(deck, target, {})
    assert [(w.line, w.message) for w in warnings] == [
        (
            20,
            "HTML block '<div class=\"boxed\">No Markdown **here**:...' is "
            "left out of PowerPoint, which cannot draw it natively (the HTML output shows it)",
        )
    ]
    assert all(w.path.endswith("slidev_html.md") for w in warnings)
    prs = Presentation(io.BytesIO(target.read_bytes()))
    body = next(sh for sh in prs.slides[0].shapes if sh.has_text_frame and "Inline" in sh.text_frame.text)
    found = {}
    baselines = []
    for run in (r for p in body.text_frame.paragraphs for r in p.runs):
        rpr = run._r.find("{http://schemas.openxmlformats.org/drawingml/2006/main}rPr")
        found[run.text] = (
            run.font.bold,
            run.font.italic,
            run.font.underline,
            rpr.get("strike"),
            rpr.get("baseline"),
            run.font.name,
            str(run.font.color.rgb) if run.font.color and run.font.color.type else None,
        )
        baselines.append((run.text, rpr.get("baseline")))
    assert found["bold"][0] is True and found["italic"][1] is True and found["underlined"][2] is True
    assert found["struck"][3] == "sngStrike"
    assert [b for t, b in baselines if t == "2"] == ["-25000", "30000"]  # H<sub>2</sub>O, x<sup>2</sup>
    assert found["Ctrl"][5] == found["C"][5] != found["bold"][5]  # <kbd>: the code font
    assert found["red text"][6] == "D62728"
    assert "red text.\x0bAfter a break." in body.text_frame.text  # <br>: a line break in the paragraph
    marks = ("Title rule", "Footer rule", "Accent bar")  # the master's shapes, without text
    styled = [sh.text_frame.text for sh in prs.slides[1].shapes if sh.has_text_frame and sh.name not in marks]
    assert "Markdown inside an HTML block, after a blank line" in styled
    assert not any(
        "<" in text for s in prs.slides for sh in s.shapes if sh.has_text_frame for text in [sh.text_frame.text]
    ), "no HTML printed as text"
    assert styled == ["A styled slide", "Markdown inside an HTML block, after a blank line", "Raw HTML", "2"]
