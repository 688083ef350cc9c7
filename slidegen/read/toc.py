"""Slidev's ``<Toc />``: the deck's table of contents, made when the deck is read.

A block holding only ``<Toc />`` becomes a bullet list of the deck's section slides (``layout:
section``), or, in a deck without them, of every titled slide between its cover and its end. A
slide with ``hideInToc: true`` or hidden is left out; ``level`` indents a slide's entry below
the one before it. An entry links to its slide when the slide has an ``id``; the writers then
make it a jump in HTML and PowerPoint alike. Slidev's ``minDepth``/``maxDepth``/``columns``
attributes are not read: every entry is listed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from slidegen.deck import nodes as d

_TOC_RE = re.compile(r"\s*<Toc\b[^<>]*?/?>\s*(?:</Toc\s*>\s*)?", re.IGNORECASE)
_SKIPPED = ("cover", "end")


def is_toc(block: d.Block) -> bool:
    """Whether ``block`` is a ``<Toc />`` (alone in its HTML block)."""
    return isinstance(block, d.RawHtml) and bool(_TOC_RE.fullmatch(block.html))


def expand(deck: d.Deck) -> d.Deck:
    """``deck`` with every ``<Toc />`` block replaced by its list of entries."""
    if not any(is_toc(b) for s in deck.slides for b in d.walk_blocks(d.slide_blocks(s))):
        return deck
    listed = entries(deck)
    slides = tuple(
        replace(
            s,
            blocks=_replace(s.blocks, listed),
            slots={name: _replace(group, listed) for name, group in s.slots.items()},
        )
        for s in deck.slides
    )
    return replace(deck, slides=slides)


def entries(deck: d.Deck) -> tuple[d.Slide, ...]:
    """The slides a table of contents lists, in order."""
    shown = [s for s in deck.slides if s.title and not _hidden(s)]
    sections = [s for s in shown if s.layout == "section"]
    return tuple(sections or [s for s in shown if s.layout not in _SKIPPED])


def _hidden(slide: d.Slide) -> bool:
    front = slide.frontmatter
    return front.get("hideInToc") is True or front.get("hide") is True or front.get("disabled") is True


def _replace(blocks: tuple[d.Block, ...], listed: tuple[d.Slide, ...]) -> tuple[d.Block, ...]:
    return tuple(_toc_list(b, listed) if is_toc(b) else b for b in blocks)


def _toc_list(block: d.Block, listed: tuple[d.Slide, ...]) -> d.Block:
    """The bullet list standing for the ``<Toc />`` ``block`` (nested by each slide's ``level``)."""
    line = getattr(block, "line", 0)
    items = []
    for slide in listed:
        text: tuple[d.Inline, ...] = slide.title_inlines or (d.Text(slide.title),)
        if slide.id:
            text = (d.Link(text, f"#{slide.id}"),)
        level = slide.frontmatter.get("level")
        depth = level - 1 if isinstance(level, int) and not isinstance(level, bool) and level > 1 else 0
        items.append((depth, d.ListItem((d.Paragraph(text, line),), line)))
    return _nest(items, 0, line)[0]


def _nest(items: list[tuple[int, d.ListItem]], depth: int, line: int) -> tuple[d.BulletList, int]:
    """A list of the items at ``depth`` from the start of ``items``, deeper ones nested in the item before."""
    out: list[d.ListItem] = []
    k = 0
    while k < len(items):
        level, item = items[k]
        if level < depth:
            break
        if level > depth and out:
            inner, used = _nest(items[k:], depth + 1, line)
            out[-1] = replace(out[-1], blocks=(*out[-1].blocks, inner))
            k += used
            continue
        out.append(item)
        k += 1
    return d.BulletList(tuple(out), line), k
