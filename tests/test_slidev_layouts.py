"""Slidev's 19 built-in layouts, their slots and frontmatter: parsed, in HTML, Markdown and PowerPoint.

The fixture is tests/fixtures/decks/slidev_layouts.md.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.deck import nodes as d
from slidegen.deck.layouts import LAYOUTS
from slidegen.read.frontmatter import key_warnings
from slidegen.read.parse import parse_deck
from slidegen.write import html
from slidegen.write import markdown as markdown_out
from slidegen.write.pptx import write_deck

FIXTURE = Path(__file__).parent / "fixtures" / "decks" / "slidev_layouts.md"
IMAGE = FIXTURE.parent / "img" / "loss.png"


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


def test_the_fixture_uses_every_layout_once(deck: d.Deck):
    slidev = set(LAYOUTS) - {"references"}  # slidegen's own layout, for the references slide
    assert sorted(s.layout for s in deck.slides) == sorted(slidev)
    assert len(slidev) == 19


def test_slots_of_two_cols_and_two_cols_header(deck: d.Deck):
    cols = next(s for s in deck.slides if s.layout == "two-cols")
    # ::default:: switches back to the default slot (the left column)
    assert [d.plain_text(b.children) for b in cols.blocks if isinstance(b, d.Paragraph)] == [
        "Left text",
        "More left text",
    ]
    assert list(cols.slots) == ["right"]
    header = next(s for s in deck.slides if s.layout == "two-cols-header")
    assert list(header.slots) == ["left", "right", "bottom"]
    assert [d.plain_text(header.slots[n][0].children) for n in header.slots] == [  # type: ignore[union-attr]
        "Left column",
        "Right column",
        "Bottom row",
    ]


def test_html_maps_every_layout(deck: d.Deck):
    page = html.render_deck(deck, {"img/loss.png": "media/loss.png"})
    assert '<section class="layout-center centered text-center text-center"' in page
    assert '<section class="layout-image image-side-full"' in page
    assert '<img src="media/loss.png" alt="" style="object-fit: contain">' in page  # backgroundSize
    assert '<section class="layout-full unpadded"' in page and '<section class="layout-none unpadded"' in page
    assert '<section class="layout-iframe-left frame-side-left"' in page
    assert (
        '<iframe src="https://sli.dev/guide" title="https://sli.dev/guide" loading="lazy" '
        'referrerpolicy="no-referrer"></iframe>'
    ) in page
    assert '<section class="layout-intro centered"' in page
    assert (
        '<div class="col-header">\n<h1>Header across</h1>\n</div>\n<div class="col col-left">\n'
        '<p>Left column</p>\n</div>\n<div class="col col-right">\n<p>Right column</p>\n</div>\n'
        '<div class="col-bottom">\n<p>Bottom row</p>\n</div>'
    ) in page


def test_check_warns_that_iframe_pages_need_the_network(deck: d.Deck):
    assert [str(w) for w in key_warnings("decks/x.md", deck)] == [
        f"decks/x.md:{line}:1: warning: {name} slide shows the web page {url}, which needs the network; "
        "PowerPoint and PDF show its address"
        for name, url, line in (
            ("iframe", "https://sli.dev", 59),
            ("iframe-left", "https://sli.dev/guide", 66),
            ("iframe-right", "https://sli.dev/builtin/layouts", 75),
        )
    ]


def test_an_iframe_url_that_is_not_http_is_left_out():
    assert html.frame_url("javascript:alert(1)") is None
    assert html.frame_url("https://sli.dev") == "https://sli.dev"
    assert html.frontmatter_classes('a b" onclick=x') == "a"
    assert html.frontmatter_classes(["text-center", "<x>"]) == "text-center"


def test_markdown_writers_keep_the_slots(deck: d.Deck):
    slidev = markdown_out.writer(deck, {}, "md", d.DeckIndex()).deck_text()
    assert "::left::\n\nLeft column\n\n::right::\n\nRight column\n\n::bottom::\n\nBottom row" in slidev
    marp = markdown_out.writer(deck, {}, "marp", d.DeckIndex()).deck_text()
    assert "![bg cover](img/loss.png)" in marp
    assert "Web page: <https://sli.dev/guide>" in marp


def test_pptx_maps_every_layout(deck: d.Deck, tmp_path: Path):
    target = tmp_path / "layouts.pptx"
    warnings = write_deck(deck, target, {"img/loss.png": IMAGE})
    messages = [w.message for w in warnings]
    assert [m for m in messages if "web page" in m] == [
        f"{name} slide shows the web page {url}, which needs the network; PowerPoint shows its address"
        for name, url in (
            ("iframe", "https://sli.dev"),
            ("iframe-left", "https://sli.dev/guide"),
            ("iframe-right", "https://sli.dev/builtin/layouts"),
        )
    ]
    prs = Presentation(io.BytesIO(target.read_bytes()))
    slides = list(prs.slides)
    assert len(slides) == 19
    texts = [[sh.text_frame.text for sh in s.shapes if sh.has_text_frame] for s in slides]
    by_layout = {s.layout: texts[i] for i, s in enumerate(deck.slides)}
    assert "Web page (opens with the network):\nhttps://sli.dev/guide" in by_layout["iframe-left"]
    link = next(
        r
        for sh in slides[8].shapes
        if sh.has_text_frame
        for p in sh.text_frame.paragraphs
        for r in p.runs
        if r.text == "https://sli.dev/guide"
    )
    assert link.hyperlink.address == "https://sli.dev/guide"
    # two-cols-header: the header above, the two columns side by side, the bottom row under them
    shapes = {sh.text_frame.text: sh for sh in slides[17].shapes if sh.has_text_frame}
    left, right, bottom = shapes["Left column"], shapes["Right column"], shapes["Bottom row"]
    assert left.top == right.top and left.left < right.left
    assert bottom.top > left.top + left.height and bottom.width > left.width * 2
    # image: the picture covers the whole slide, behind the title
    pictures = [sh for sh in slides[4].shapes if sh.shape_type == 13]
    assert len(pictures) == 1 and pictures[0].height == prs.slide_height
    assert slides[4].shapes[0].shape_id == pictures[0].shape_id
