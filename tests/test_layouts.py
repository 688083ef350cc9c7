"""The one table of layouts (slidegen/deck/layouts.py), what each writer maps it to, and writers that cannot
drop a node."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from slidegen.deck import nodes as d
from slidegen.deck.layouts import DEFAULT, LAYOUTS, Layout, layout
from slidegen.errors import SlidegenError
from slidegen.read.parse import parse_text
from slidegen.write import html
from slidegen.write import markdown as markdown_out
from slidegen.write.markdown.marp import marp_class
from slidegen.write.pptx import content
from slidegen.write.pptx import layout as pptx_layout
from slidegen.write.pptx.content import Context, Sizes
from slidegen.write.pptx.model import TextBox

# --------------------------------------------------------------------------- the table


def test_the_table_holds_every_layout_with_its_facts():
    facts = {name: (spec.slots, spec.image, spec.tone, spec.centered, spec.align) for name, spec in LAYOUTS.items()}
    assert facts == {
        "cover": ((), None, "light", True, "left"),  # flush left beside its accent bar (one master, issue 31)
        "default": ((), None, "light", False, "left"),
        "center": ((), None, "light", True, "center"),
        "section": ((), None, "dark", True, "left"),
        "two-cols": (("right",), None, "light", False, "left"),
        "image-left": ((), "left", "light", False, "left"),
        "image-right": ((), "right", "light", False, "left"),
        "fact": ((), None, "dark", True, "center"),
        "statement": ((), None, "dark", True, "center"),
        "quote": ((), None, "light", True, "left"),
        "end": ((), None, "dark", True, "center"),
        "full": ((), None, "light", False, "left"),
        "image": ((), "full", "light", False, "left"),
        "iframe": ((), None, "light", False, "left"),
        "iframe-left": ((), None, "light", False, "left"),
        "iframe-right": ((), None, "light", False, "left"),
        "intro": ((), None, "light", True, "left"),
        "none": ((), None, "light", False, "left"),
        "two-cols-header": (("left", "right"), None, "light", False, "left"),
        "references": ((), None, "light", False, "left"),
    }
    assert len(LAYOUTS) == 20  # Slidev's 19 built-in layouts, all of them, and the references slide
    more = {
        name: (spec.frame, spec.header, spec.bottom, spec.padded, spec.slot_names)
        for name, spec in LAYOUTS.items()
        if (spec.frame, spec.header, spec.bottom, spec.padded) != (None, False, None, True)
    }
    assert more == {
        "full": (None, False, None, False, ()),
        "iframe": ("full", False, None, True, ()),
        "iframe-left": ("left", False, None, True, ()),
        "iframe-right": ("right", False, None, True, ()),
        "none": (None, False, None, False, ()),
        "two-cols-header": (None, True, "bottom", True, ("left", "right", "bottom")),
    }
    assert all(name == spec.name for name, spec in LAYOUTS.items())
    assert d.LAYOUTS is LAYOUTS  # the document model's layouts are the table
    assert layout("image-left") is LAYOUTS["image-left"]
    assert layout("no-such-layout") is DEFAULT is LAYOUTS["default"]


def test_the_writers_map_the_table_as_they_did_before_it():
    # the sets html.py (DARK_LAYOUTS) and markdown_out.py (MARP_LEAD, MARP_DARK) used to spell out
    dark = {"section", "fact", "statement", "end"}
    assert {name for name, spec in LAYOUTS.items() if "tone-dark" in html.layout_classes(name, spec)} == dark
    assert {name for name, spec in LAYOUTS.items() if marp_class(spec)} == dark | {"center"}
    # cover and section stand flush left (one master with PowerPoint, issue 31): no longer Marp's centred lead
    assert {name for name, spec in LAYOUTS.items() if marp_class(spec) == "lead invert"} == dark - {"section"}
    assert marp_class(LAYOUTS["section"]) == "invert"
    assert marp_class(LAYOUTS["quote"]) is None and marp_class(LAYOUTS["default"]) is None


def test_pptx_kinds_are_the_table_with_powerpoint_looks():
    # the KINDS table of pptx/layout.py before the layouts had one table:
    # (template, title pt, centered, dark, align, title bold, title italic, body scale)
    before = {
        "cover": ("Title Slide", 48, True, False, "left", True, False, 1.1),
        "default": ("Title Only", 36, False, False, "left", True, False, 1.0),
        "center": ("Title Only", 36, True, False, "center", True, False, 1.0),
        "section": ("Title Only", 46, True, True, "left", True, False, 1.1),
        "two-cols": ("Title Only", 36, False, False, "left", True, False, 1.0),
        "image-left": ("Title Only", 36, False, False, "left", True, False, 1.0),
        "image-right": ("Title Only", 36, False, False, "left", True, False, 1.0),
        "fact": ("Title Only", 72, True, True, "center", True, False, 1.1),
        "statement": ("Title Only", 48, True, True, "center", True, False, 1.1),
        "quote": ("Title Only", 36, True, False, "left", False, True, 1.45),
        "end": ("Title Only", 48, True, True, "center", True, False, 1.1),
        "references": ("Title Only", 36, False, False, "left", True, False, 0.8),
    }
    plain = ("Title Only", 36, False, False, "left", True, False, 1.0)
    before |= {
        "full": plain,
        "image": plain,
        "iframe": plain,
        "iframe-left": plain,
        "iframe-right": plain,
        "none": plain,
        "two-cols-header": plain,
        "intro": ("Title Only", 36, True, False, "left", True, False, 1.0),
    }
    now = {
        name: (
            k.look.template,
            k.look.title_pt,
            k.layout.centered,
            k.layout.dark,
            k.layout.align,
            k.look.title_bold,
            k.look.title_italic,
            k.look.body_scale,
        )
        for name, k in pptx_layout.KINDS.items()
    }
    assert now == before
    assert all(kind.layout is LAYOUTS[name] for name, kind in pptx_layout.KINDS.items())


# --------------------------------------------------------------------------- a layout added once


@pytest.fixture
def aside(monkeypatch: pytest.MonkeyPatch) -> Layout:
    """A layout that exists only in the table: a dark, centred slide with a left picture and a ``::note::`` slot."""
    spec = Layout("aside", slots=("note",), image="left", tone="dark", centered=True, align="center")
    monkeypatch.setitem(LAYOUTS, "aside", spec)
    monkeypatch.setitem(pptx_layout.KINDS, "aside", pptx_layout.Kind(spec))
    return spec


def test_a_layout_added_to_the_table_is_validated_by_the_parser(aside: Layout):
    def error(text: str) -> str:
        with pytest.raises(SlidegenError) as caught:
            parse_text(text, Path("deck.md"))
        return str(caught.value.diagnostic)

    slide = parse_text(
        "# A\n\n---\nlayout: aside\nimage: img/x.png\n---\n\n# B\n\nbody\n\n::note::\n\naside\n", Path("deck.md")
    ).slides[1]
    assert (slide.layout, list(slide.slots)) == ("aside", ["note"])
    assert error("# A\n\n---\nlayout: aside\n---\n\n# B\n") == (
        "deck.md:4:9: error: layout 'aside' needs an image: key naming the picture "
        "(a path relative to the deck, or fig:NAME)"
    )
    assert error("# A\n\n---\nlayout: two-cols\n---\n\n# B\n\n::note::\n\nx\n").startswith(
        "deck.md:9:1: error: unknown slot '::note::' for layout 'two-cols' "
        "(two-cols takes ::right::; two-cols-header takes ::left::, ::right::, ::bottom::; "
        "aside takes ::note::)"
    )
    assert "two-cols-header, references, aside)" in error("---\nlayout: nope\n---\n# A\n")


def test_a_layout_added_to_the_table_reaches_every_writer(aside: Layout, tmp_path: Path):
    text = "# A\n\n---\nlayout: aside\nimage: pic.png\n---\n\n# B\n\nbody\n\n::note::\n\nnoted\n"
    deck = parse_text(text, tmp_path / "01-a.md")

    page = html.render_deck(deck, {"pic.png": "media/pic.png"})
    assert (
        '<section class="layout-aside tone-dark centered text-center image-side-left" data-background-color="#1f2933">'
    ) in page
    assert '<div class="side-image">\n<img src="media/pic.png" alt="">' in page
    assert '<div class="col col-note">\n<p>noted</p>\n</div>' in page

    marp = markdown_out.writer(deck, {"pic.png": "media/pic.png"}, "marp", d.DeckIndex()).slide_text(deck.slides[1])
    assert marp.startswith("---\n\n<!-- _class: lead invert -->\n\n![bg left contain](media/pic.png)")
    slidev = markdown_out.writer(deck, {}, "md", d.DeckIndex()).slide_text(deck.slides[1])
    assert slidev.endswith("# B\n\nbody\n\n::note::\n\nnoted")

    model, _ = pptx_layout.build(deck, {})
    slide = model.slides[1]
    assert slide.background is not None and slide.layout == "aside"
    assert any(s.name == "Missing image" for s in slide.shapes)  # no picture size given: the placeholder
    texts = [p.text for s in slide.shapes if isinstance(s, TextBox) for p in s.paras]
    assert "body" in texts and "noted" in texts  # the named slot is not dropped


# --------------------------------------------------------------------------- exhaustive writers


@dataclass(frozen=True)
class Mystery:
    """A node kind no writer knows (as a new kind in deck.py would be, until every writer handles it)."""

    line: int = 3


def _deck(*blocks: object, notes: tuple[object, ...] = ()) -> d.Deck:
    slide = d.Slide(1, 1, "default", {}, "T", "", tuple(blocks), notes_blocks=notes)  # type: ignore[arg-type]
    return d.Deck(Path("decks/01-x.md"), "X", {}, (slide,))


UNKNOWN_BLOCK = _deck(d.Paragraph((d.Text("before"),)), Mystery())
UNKNOWN_INLINE = _deck(d.Paragraph((d.Text("before "), Mystery())))  # type: ignore[arg-type]
UNKNOWN_IN_A_LIST = _deck(d.BulletList((d.ListItem((Mystery(),)),)))  # type: ignore[arg-type]
UNKNOWN_IN_NOTES = _deck(d.Paragraph((d.Text("body"),)), notes=(Mystery(),))
DECKS = [UNKNOWN_BLOCK, UNKNOWN_INLINE, UNKNOWN_IN_A_LIST, UNKNOWN_IN_NOTES]
IDS = ["block", "inline", "in-a-list", "in-notes"]


@pytest.mark.parametrize("deck", DECKS, ids=IDS)
def test_html_fails_loudly_on_an_unknown_node(deck: d.Deck):
    with pytest.raises(AssertionError, match="Mystery"):
        html.render_deck(deck, {})


@pytest.mark.parametrize("flavor", markdown_out.FLAVORS)
@pytest.mark.parametrize("deck", DECKS, ids=IDS)
def test_markdown_fails_loudly_on_an_unknown_node(deck: d.Deck, flavor: str):
    with pytest.raises(AssertionError, match="Mystery"):
        markdown_out.writer(deck, {}, flavor, d.DeckIndex()).deck_text()


@pytest.mark.parametrize("deck", DECKS, ids=IDS)
def test_pptx_fails_loudly_on_an_unknown_node(deck: d.Deck):
    with pytest.raises(AssertionError, match="Mystery"):
        pptx_layout.build(deck, {})


def test_pptx_content_and_layout_dispatch_are_exhaustive():
    ctx = Context(UNKNOWN_BLOCK, Sizes.at(1.0))
    with pytest.raises(AssertionError, match="Mystery"):
        content.flatten((Mystery(),), ctx)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="Mystery"):
        content.runs((Mystery(),), ctx, 1)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="Mystery"):
        content.notes_lines((Mystery(),))  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="Mystery"):
        pptx_layout._fixed_height(Mystery(), 100, ctx)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- links through the deck index


def test_markdown_links_to_other_decks_come_from_the_deck_index():
    link = d.Paragraph(
        (
            d.Link((d.Text("far"),), "02-other.md#far"),
            d.Text(" "),
            d.Link((d.Text("here"),), "#here"),
            d.Text(" "),
            d.Link((d.Text("gone"),), "03-x.md#gone"),
        )
    )
    slide = d.Slide(1, 1, "default", {}, "T", "", (link,), id="here")
    deck = d.Deck(Path("decks/01-a.md"), "A", {}, (slide,))
    other = d.DeckEntry(
        Path("decks/02-other.md"), "Other", {}, (d.SlideEntry(1, None, "Other", 1), d.SlideEntry(2, "far", "Far", 9))
    )
    index = d.DeckIndex((other,))
    marp = markdown_out.writer(deck, {}, "marp", index).blocks(slide.blocks)
    assert marp == "[far](02-other.html#2) [here](#1) [gone](03-x.html)"
    slidev = markdown_out.writer(deck, {}, "md", index).blocks(slide.blocks)
    assert slidev == "[far](02-other.md#far) [here](/1) [gone](03-x.md#gone)"


def test_markdown_rejects_an_unknown_flavour():
    with pytest.raises(ValueError, match="unknown Markdown flavour 'docx'; choose from md, marp"):
        markdown_out.writer(UNKNOWN_BLOCK, {}, "docx", d.DeckIndex())
