"""Find the files behind a deck's images, before any writer runs.

A deck names images three ways: ``![alt](img/x.png)`` (a path relative to the deck file),
``![alt](fig:ch01.loss)`` (a figure rendered from run data) and ``image:`` in a slide's
frontmatter (the picture of a layout with an image side). :func:`resolve_media` maps each
``src`` as written to the file each writer should use: any web format for HTML, a
raster (PNG or JPEG) for PowerPoint. A missing file is an error at the line that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .deck import Deck, Figure, Image, block_inlines, slide_blocks, walk_blocks, walk_inlines
from .errors import SlidegenError
from .figures import UnknownFigure

RASTER = {".png", ".jpg", ".jpeg", ".gif"}
WEB = RASTER | {".svg", ".webp"}

#: Renders a figure by name and returns (file for HTML, raster for PPTX).
FigureRenderer = Callable[[str], tuple[Path, Path]]


@dataclass
class Media:
    """Image files for one deck, keyed by ``src`` as written in it."""

    html: dict[str, Path] = field(default_factory=dict)
    pptx: dict[str, Path] = field(default_factory=dict)


def image_refs(deck: Deck) -> Iterator[tuple[str, int]]:
    """Every image ``src`` in ``deck`` with the source line that names it."""
    for slide in deck.slides:
        image = slide.frontmatter.get("image")
        if isinstance(image, str) and image:
            yield image, slide.line
        for blocks in (slide_blocks(slide), slide.notes_blocks):
            for block in walk_blocks(blocks):
                if isinstance(block, Figure):
                    yield block.src, block.line
                for node in walk_inlines(block_inlines(block)):
                    if isinstance(node, Image):
                        yield node.src, getattr(block, "line", slide.line)


def resolve_media(deck: Deck, render_figure: FigureRenderer | None = None) -> Media:
    """Map every image of ``deck`` to files; raise :class:`SlidegenError` for the first missing one."""
    media = Media()
    for src, line in image_refs(deck):
        if src in media.html:
            continue
        if src.startswith("fig:"):
            if render_figure is None:
                raise SlidegenError(deck.path, line, 1, f"figure '{src}' cannot be drawn: no figures are registered")
            try:
                media.html[src], media.pptx[src] = render_figure(src[4:])
            except UnknownFigure as error:
                raise SlidegenError(deck.path, line, 1, f"unknown figure '{error.name}'{error.hint}") from None
            continue
        if "://" in src:
            raise SlidegenError(
                deck.path, line, 1, f"image '{src}' is remote: decks work offline, so save it beside the deck"
            )
        path = (deck.path.parent / src).resolve()
        if not path.is_file():
            raise SlidegenError(
                deck.path, line, 1, f"image '{src}' not found (looked for {path}); check the path, relative to the deck"
            )
        if path.suffix.lower() not in WEB:
            raise SlidegenError(deck.path, line, 1, f"image '{src}' is not PNG, JPEG, GIF, SVG or WebP")
        media.html[src] = path
        raster = path if path.suffix.lower() in RASTER else path.with_suffix(".png")
        if raster.is_file():
            media.pptx[src] = raster
        else:
            raise SlidegenError(
                deck.path, line, 1,
                f"image '{src}' has no raster twin for PowerPoint: add {raster.name} beside it",
            )
    return media
