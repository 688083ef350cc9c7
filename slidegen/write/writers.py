"""The writer table: ``WRITERS[format](deck, context) -> (files written, warnings)``, one signature for all.

The build calls a writer through this table only. Each entry imports its writer when first called, so a
build that writes no PowerPoint never loads python-pptx. PDF and PNG are no per-deck writers: they are
printed from the HTML once every deck is written (:mod:`.pdf`, :mod:`.png`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from slidegen.deck.nodes import Deck, DeckIndex
from slidegen.errors import Diagnostic
from slidegen.media.components import Component
from slidegen.media.images import Media


@dataclass(frozen=True)
class WriteContext:
    """What a writer needs besides the deck: where to write and what the build resolved for it."""

    out: Path
    """Each format writes under ``out/FORMAT/`` (a staging folder)."""
    media: Media
    """Every picture the deck names, resolved to its file (HTML's and PowerPoint's), and its run records."""
    index: DeckIndex
    """Every deck of the build: link targets and slide numbers of other decks."""
    math_cache: Path
    """Where equations drawn for PowerPoint are kept between builds."""
    components: Sequence[Component] = ()
    """The project's components (the HTML page loads those the deck uses)."""
    animate: bool = True
    """PowerPoint slides animate their clicks (``False``: final-state slides)."""


Writer = Callable[[Deck, WriteContext], tuple[list[Path], list[Diagnostic]]]


def write_html(deck: Deck, context: WriteContext) -> tuple[list[Path], list[Diagnostic]]:
    from slidegen.write import html

    page = html.write_deck(deck, context.out / "html", context.media.html, context.components, context.media.runs)
    return [page], []


def _markdown(flavor: str) -> Writer:
    def write(deck: Deck, context: WriteContext) -> tuple[list[Path], list[Diagnostic]]:
        from slidegen.write import markdown

        return [markdown.write_deck(deck, context.out / flavor, context.media.html, flavor, context.index)], []

    return write


def write_pptx(deck: Deck, context: WriteContext) -> tuple[list[Path], list[Diagnostic]]:
    from slidegen.write import pptx

    target = context.out / "pptx" / f"{deck.slug}.pptx"
    warnings = pptx.write_deck(
        deck, target, context.media.pptx, cache_dir=context.math_cache, animate=context.animate, index=context.index
    )
    return [target], warnings


#: Every per-deck writer by format name, in the order a build runs them.
WRITERS: dict[str, Writer] = {"html": write_html, "md": _markdown("md"), "marp": _markdown("marp"), "pptx": write_pptx}
