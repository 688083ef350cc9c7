"""What the writers would stop on, found without writing: ``slidegen check`` covers ``slidegen build``.

``build`` raises, per deck, for (besides parse, binding and citation errors, which ``check``
finds through the same functions): a picture it cannot place (:func:`slidegen.media.images.picture_problems`:
missing, remote, outside the project, a format PowerPoint cannot hold or whose bytes are not
what its extension says, an SVG without its PNG twin), a figure whose function raises
(:meth:`slidegen.media.figures.FigureRenderer.problems`, called by the CLI) and display math the
PowerPoint converter cannot take (:func:`math_problems`). Each is reported here at the
location ``build`` gives it, on the slides ``build`` writes (hidden ones left out).
"""

from __future__ import annotations

from pathlib import Path

from slidegen.deck.nodes import Deck, MathBlock, slide_blocks, walk_blocks
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.media.images import picture_problems
from slidegen.read.frontmatter import visible


def output_problems(deck: Deck, root: Path | None) -> list[Diagnostic]:
    """The errors ``build`` would raise for bound ``deck`` in its writers and media, each at its location."""
    shown = visible(deck)
    return picture_problems(shown, root) + math_problems(shown)


def math_problems(deck: Deck) -> list[Diagnostic]:
    """Display math (``$$...$$``) the PowerPoint writer cannot convert to an equation, at its line."""
    from slidegen.write.pptx.cache import MathCache
    from slidegen.write.pptx.content import MATH_ADVICE

    cache = MathCache()
    out: list[Diagnostic] = []
    for slide in deck.slides:
        for block in walk_blocks(slide_blocks(slide)):
            if not isinstance(block, MathBlock):
                continue
            try:
                cache.omml(block.tex.strip())
            except ValueError as exc:
                out.append(SlidegenError(deck.slide_path(slide), block.line, 1, MATH_ADVICE.format(exc)).diagnostic)
    return out
