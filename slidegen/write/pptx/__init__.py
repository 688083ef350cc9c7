"""The PowerPoint writer: ``Deck -> .pptx`` with native text, tables, code, equations and notes.

Two steps, as Pandoc does it: :func:`slidegen.write.pptx.layout.build` decides every slide,
shape, position and font size (pure, testable without XML); :func:`slidegen.write.pptx.render.render`
draws that model with python-pptx. Raw XML lives in :mod:`slidegen.write.pptx.pml` and, for equations,
:mod:`slidegen.write.pptx.omml` only; display math is converted once and kept by
:class:`slidegen.write.pptx.cache.MathCache`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from slidegen.atomic import atomic_write
from slidegen.deck.nodes import Deck, DeckIndex
from slidegen.errors import Diagnostic

__all__ = ["write_deck", "image_sizes"]


def write_deck(
    deck: Deck,
    path: Path,
    media: Mapping[str, Path],
    cache_dir: Path | None = None,
    animate: bool = True,
    index: DeckIndex | None = None,
) -> list[Diagnostic]:
    """Write ``deck`` to ``path`` atomically and return the warnings.

    ``media`` maps each image src as written in the deck (``Figure.src``, ``Image.src``,
    ``fig:NAME``, a slide's ``image:``) to a PNG or JPEG file; a src missing from it
    becomes a placeholder and a warning. Each slide's speaker notes end with the sources of
    the numbers it cites (``Slide.sources``, filled in by binding). ``cache_dir`` keeps
    each display formula's OMML and fallback PNG across builds (``None``: kept in memory
    for this process only). Raises SlidegenError when display math cannot become an equation.
    ``animate``: each click becomes a native animation in click order (``False``: final-state slides).
    ``index``: the build's decks, so a link to another deck's slide opens that slide (PowerPoint; others open
    the file).
    """
    from slidegen.write.pptx import layout, render
    from slidegen.write.pptx.cache import MathCache

    model, warnings = layout.build(deck, image_sizes(media), MathCache(cache_dir), animate=animate, index=index)
    atomic_write(path, render.save(render.render(model, media), theme_sans=model.sans))
    return warnings


def image_sizes(media: Mapping[str, Path]) -> dict[str, tuple[int, int]]:
    """Pixel size of each readable PNG/JPEG in ``media``; unreadable files are left out."""
    from PIL import Image, UnidentifiedImageError

    sizes = {}
    for src, file in media.items():
        try:
            with Image.open(file) as img:
                if img.format in ("PNG", "JPEG"):
                    sizes[src] = img.size
        except (OSError, UnidentifiedImageError):
            continue
    return sizes
