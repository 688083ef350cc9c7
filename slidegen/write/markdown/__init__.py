"""Bound deck -> Markdown for other tools: Slidev (``--to md``) or Marp (``--to marp``).

A writer over the document model, like the HTML and PowerPoint ones: it reads the BOUND
:class:`~slidegen.deck.nodes.Deck` (every ``{{ reference }}`` already replaced by its text) and
prints each node back as Markdown, so the output holds no reference and needs nothing of
slidegen. Pictures (``fig:`` figures and files beside the deck) are copied to ``media/``
next to the Markdown (:func:`slidegen.media.assets.copy_media`, the HTML output's names) and
linked by relative paths. Links to other decks take their slide numbers from the build's
:class:`~slidegen.deck.nodes.DeckIndex`; no source file is read here.

:mod:`.base` prints the nodes; :mod:`.slidev` and :mod:`.marp` say what each flavour does
differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from slidegen.atomic import atomic_write
from slidegen.deck.nodes import Deck, DeckIndex
from slidegen.media.assets import copy_media
from slidegen.write.markdown.base import MarkdownWriter, escape_text
from slidegen.write.markdown.marp import MarpWriter
from slidegen.write.markdown.slidev import SlidevWriter

__all__ = ["FLAVORS", "MarkdownWriter", "MarpWriter", "SlidevWriter", "escape_text", "write_deck", "writer"]

#: The writer of each flavour, by the name ``--to`` gives it.
WRITERS: dict[str, type[MarkdownWriter]] = {"md": SlidevWriter, "marp": MarpWriter}
FLAVORS = tuple(WRITERS)


def writer(deck: Deck, media_urls: Mapping[str, str], flavor: str, index: DeckIndex) -> MarkdownWriter:
    """The writer of ``flavor`` for ``deck``; ``media_urls`` maps each picture's ``src`` to its new path."""
    if flavor not in WRITERS:
        raise ValueError(f"unknown Markdown flavour {flavor!r}; choose from {', '.join(FLAVORS)}")
    return WRITERS[flavor](deck, media_urls, index)


def write_deck(deck: Deck, out_dir: Path, media: Mapping[str, Path], flavor: str, index: DeckIndex) -> Path:
    """Write ``out_dir/SLUG.md`` (atomically), its pictures in ``out_dir/media``.

    ``deck`` must be bound; ``media`` maps each picture's ``src`` to its file (the HTML
    writer's choice: figures may be SVG); ``index`` holds every deck of the build, for links.
    """
    out_dir = Path(out_dir)
    text = writer(deck, copy_media(media, out_dir), flavor, index).deck_text()
    target = out_dir / f"{deck.slug}.md"
    atomic_write(target, text)
    return target
