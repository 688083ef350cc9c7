"""The glossary as a build sees it: its entries (for the back-links of the decks written) and what ties the
glossary and the decks it links to each other in the build cache.

A deck's back-links come from the glossary's entries, and the glossary names the decks' titles and slide
numbers, so each depends on the other's source: editing the glossary rebuilds the numbered decks (their
back-links may change), and editing a numbered deck rebuilds the glossary.
"""

from __future__ import annotations

import functools
from pathlib import Path

from slidegen.deck.glossary import GLOSSARY_FILE, Glossary, deck_number
from slidegen.deck.nodes import Deck
from slidegen.errors import SlidegenError
from slidegen.pipeline.bound import BoundDecks
from slidegen.project import Project


def glossary_path(project: Project) -> Path:
    return project.decks_dir / GLOSSARY_FILE


def glossary(project: Project, every: BoundDecks | None = None) -> Glossary | None:
    """The project's glossary entries: from the decks bound for this build when it is among them, else read
    (``None``: there is no glossary, or it does not read; building it reports why)."""
    path = glossary_path(project)
    if every is not None:
        bound = every.decks.get(path.resolve())
        if bound is not None:
            return bound.glossary
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _read(path: Path, mtime: int, size: int) -> Glossary | None:
    """The entries of the glossary at ``path`` as it is now (``mtime`` and ``size`` key the cache)."""
    from slidegen.read.glossary import read_glossary  # the parser is heavy; import it when needed

    try:
        return read_glossary(path).glossary
    except SlidegenError:
        return None


def glossary_deps(project: Project, deck: Deck) -> tuple[Path, ...]:
    """The files besides its own whose bytes ``deck``'s outputs depend on through the glossary: the glossary
    for a numbered deck; every numbered deck for the glossary."""
    path = glossary_path(project)
    if deck.glossary is not None:
        return tuple(p for p in project.deck_paths() if deck_number(p.stem) is not None)
    if deck_number(deck.slug) is not None and path.is_file():
        return (path,)
    return ()
