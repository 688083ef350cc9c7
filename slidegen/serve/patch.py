"""Which slides of a rebuilt page changed, so the open page can patch them in place instead of reloading.

A deck page (``templates/deck.html.j2``) is a head, one top-level ``<section>`` per slide inside
``<div class="slides">``, and a tail (the scripts). :func:`slide_patch` compares the page before
and after a rebuild: when the head, the tail, the number of slides and every slide's opening tag
(id, classes, background, transition, style) are the same, the patch is the new inner HTML of each
slide that differs, cut from the writer's own bytes (never rendered again anywhere else). Anything
else (a slide added or removed, the headmatter, the deck's style block, a new component script, a
changed slide holding a ``<script>`` of its own) is ``None``: the page reloads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SLIDES_START = '<div class="slides">\n'
_SECTION_TAG = re.compile(r"<(/?)section\b[^>]*>", re.IGNORECASE)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)


@dataclass(frozen=True)
class Slide:
    """One top-level ``<section>``: its opening tag and what is between it and its ``</section>``."""

    tag: str
    inner: str


@dataclass(frozen=True)
class Page:
    """A deck page cut into what comes before the slides, the slides, and what comes after them."""

    head: str
    slides: tuple[Slide, ...]
    tail: str


@dataclass(frozen=True)
class Patch:
    """The slides of a page to replace: ``(0-based index, new inner HTML)``, and how many slides it has."""

    total: int
    slides: tuple[tuple[int, str], ...]


def split_page(text: str) -> Page | None:
    """``text`` cut into head, slides and tail; ``None`` when it is not a deck page (an error page)."""
    start = text.find(_SLIDES_START)
    if start < 0:
        return None
    at = start + len(_SLIDES_START)
    slides: list[Slide] = []
    depth = 0
    opened = (0, 0)  # where the current top-level section's tag starts and ends
    for match in _SECTION_TAG.finditer(text, at):
        closing = bool(match[1])
        if not closing:
            if depth == 0:
                if text[at : match.start()].strip():
                    return None  # something between two slides: not a page this module knows
                opened = (match.start(), match.end())
            depth += 1
            continue
        depth -= 1
        if depth < 0:
            return None
        if depth == 0:
            slides.append(Slide(text[opened[0] : opened[1]], text[opened[1] : match.start()]))
            at = match.end()
    if depth != 0 or not slides:
        return None
    rest = text[at:]
    if not rest.lstrip().startswith("</div>"):
        return None
    return Page(text[:start], tuple(slides), rest)


def slide_patch(old: str, new: str) -> Patch | None:
    """The slides to replace to turn page ``old`` into page ``new``, or ``None`` when the page must reload."""
    before, after = split_page(old), split_page(new)
    if before is None or after is None:
        return None
    if before.head != after.head or before.tail != after.tail or len(before.slides) != len(after.slides):
        return None
    if any(b.tag != a.tag for b, a in zip(before.slides, after.slides, strict=True)):
        return None
    changed = tuple(
        (i, a.inner) for i, (b, a) in enumerate(zip(before.slides, after.slides, strict=True)) if b.inner != a.inner
    )
    if any(_SCRIPT.search(inner) for _, inner in changed):
        return None  # a script the author wrote on a slide runs when the page loads, not when HTML is inserted
    return Patch(len(after.slides), changed)
