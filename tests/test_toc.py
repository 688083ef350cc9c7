"""Slidev's ``<Toc />`` is the deck's agenda: its section slides (or, without any, its titled slides), each
linking to its slide when it has an id, in HTML and PowerPoint alike."""

from __future__ import annotations

from pathlib import Path

from slidegen.deck import nodes as d
from slidegen.read.parse import parse_text
from slidegen.write.html import render_deck

SECTIONS = """\
---
title: A talk
---

# A talk

---

# Agenda

<Toc />

---
layout: section
id: loop
---

# The loop

---

# Inside the loop

---
layout: section
level: 2
---

# A subsection

---
layout: section
hideInToc: true
---

# Not listed

---
layout: section
---

# The end game
"""


def toc_items(deck: d.Deck, slide: int) -> list[tuple[str, str | None, int]]:
    """``(text, link, depth)`` of each entry of the list standing for ``<Toc />`` on ``slide`` (1-based)."""
    (listed,) = [b for b in deck.slides[slide - 1].blocks if isinstance(b, d.BulletList)]
    out: list[tuple[str, str | None, int]] = []

    def walk(items: tuple[d.ListItem, ...], depth: int) -> None:
        for item in items:
            para = item.blocks[0]
            assert isinstance(para, d.Paragraph)
            link = para.children[0] if isinstance(para.children[0], d.Link) else None
            out.append(
                (d.plain_text(para.children if link is None else link.children), link.url if link else None, depth)
            )
            for inner in item.blocks[1:]:
                assert isinstance(inner, d.BulletList)
                walk(inner.items, depth + 1)

    walk(listed.items, 0)
    return out


def test_toc_lists_the_section_slides_with_their_links_and_levels(tmp_path: Path) -> None:
    deck = parse_text(SECTIONS, tmp_path / "01-t.md")
    assert toc_items(deck, 2) == [("The loop", "#loop", 0), ("A subsection", None, 1), ("The end game", None, 0)]
    assert not any(isinstance(b, d.RawHtml) for b in deck.slides[1].blocks)


def test_without_sections_toc_lists_every_titled_slide_between_cover_and_end(tmp_path: Path) -> None:
    text = (
        "---\ntitle: T\n---\n\n# T\n\n---\n\n<Toc/>\n\n---\n\n# One\n\n---\n\n# Two\n\n---\nlayout: end\n---\n\n# Bye\n"
    )
    deck = parse_text(text, tmp_path / "01-t.md")
    assert [t for t, _, _ in toc_items(deck, 2)] == ["One", "Two"]


def test_the_agenda_links_to_its_slide_in_the_page(tmp_path: Path) -> None:
    page = render_deck(parse_text(SECTIONS, tmp_path / "01-t.md"), {})
    assert '<a href="#/loop">The loop</a>' in page and "<Toc" not in page
