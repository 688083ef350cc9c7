"""Footnotes (``[^1]``) at the bottom of their slide, in every output.

The fixture is tests/fixtures/decks/slidev_footnotes.md.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.deck import nodes as d
from slidegen.read.parse import parse_deck
from slidegen.write import html
from slidegen.write import markdown as markdown_out
from slidegen.write.pptx import write_deck

FIXTURE = Path(__file__).parent / "fixtures" / "decks" / "slidev_footnotes.md"


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


def test_footnotes_are_numbered_per_slide_and_kept_out_of_the_body(deck: d.Deck):
    first = deck.slides[0]
    refs = [n for b in first.blocks for n in d.walk_inlines(d.block_inlines(b)) if isinstance(n, d.FootnoteRef)]
    assert refs == [d.FootnoteRef(1, "1"), d.FootnoteRef(2, "src")]
    assert [
        (n.number, n.label, d.plain_text(n.blocks[0].children), n.line)  # type: ignore[union-attr]
        for n in first.footnotes
    ] == [(1, "1", "The first source.", 9), (2, "src", "Another source, numbered second.", 10)]
    assert len(first.blocks) == 2  # heading and paragraph: the definitions are not body text
    cols = deck.slides[1]
    assert [n.number for n in cols.footnotes] == [1]  # numbering starts again on each slide
    assert "[^a]" not in d.plain_text(cols.slots["right"][0].children)  # type: ignore[union-attr]
    assert deck.slides[2].footnotes == ()


def test_html_shows_footnotes_at_the_bottom_of_their_slide(deck: d.Deck):
    page = html.render_deck(deck, {})
    assert (
        'A claim<sup class="footnote-ref" data-footnote="1">1</sup> and a second one'
        '<sup class="footnote-ref" data-footnote="2">2</sup>.'
    ) in page
    assert (
        '<div class="slide-footnotes">\n<ol class="footnotes">\n<li value="1">The first <em>source</em>.</li>\n'
        '<li value="2">Another source, numbered second.</li>\n</ol>\n</div>'
    ) in page
    assert page.count('class="slide-footnotes"') == 2
    assert "[^" not in page


def test_markdown_writers_write_footnotes(deck: d.Deck):
    text = markdown_out.writer(deck, {}, "md", d.DeckIndex()).deck_text()
    assert "A claim[^1] and a second one[^src]." in text
    assert "[^1]: The first *source*.\n[^src]: Another source, numbered second." in text
    marp = markdown_out.writer(deck, {}, "marp", d.DeckIndex()).deck_text()
    assert "A claim<sup>1</sup>" in marp and "<small><sup>1</sup> The first *source*.</small>" in marp


def test_pptx_shows_footnotes_in_a_box_above_the_footer(deck: d.Deck, tmp_path: Path):
    target = tmp_path / "notes.pptx"
    assert write_deck(deck, target, {}) == []
    prs = Presentation(io.BytesIO(target.read_bytes()))
    shapes = {sh.name: sh for sh in prs.slides[0].shapes}
    box = shapes["Footnotes"]
    assert box.text_frame.text == "1 The first source.\n2 Another source, numbered second."
    number = box.text_frame.paragraphs[0].runs[0]
    assert number.text == "1 " and number._r[0].get("baseline") == "30000"
    body = next(sh for sh in prs.slides[0].shapes if sh.has_text_frame and "claim" in sh.text_frame.text)
    assert body.text_frame.text == "A claim1 and a second one2."
    assert body.top + body.height <= box.top
    assert box.top + box.height <= shapes["Footer"].top
    assert "Footnotes" in {sh.name for sh in prs.slides[1].shapes}
    assert "Footnotes" not in {sh.name for sh in prs.slides[2].shapes}
