"""The glossary as a build sees it: its entries (for the back-links of the decks written) and what ties the
glossary and the decks it links to each other in the build cache.

A numbered deck's outputs depend on its back-links, not on the whole glossary: :func:`refresh_links` writes
each deck's back-links to a small file in the output folder (``build/cache/glossary/NN.links``, rewritten
only when they change),
and that file is among the deck's dependencies. Editing a sentence rebuilds the glossary alone; moving a
term to another slide rebuilds the glossary and the decks whose back-links moved. The glossary names the
decks' titles and slide numbers, so editing a numbered deck rebuilds the glossary too.

This module stays light (no parser, no writer) so that a build with nothing to do imports neither: the
glossary is parsed only when its bytes changed since the links files were written.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen.atomic import atomic_write
from slidegen.deck.glossary import GLOSSARY_FILE, Glossary, deck_number
from slidegen.digests import digest
from slidegen.errors import SlidegenError
from slidegen.project import Project

if TYPE_CHECKING:
    from slidegen.deck.nodes import Deck
    from slidegen.pipeline.bound import BoundDecks


def glossary_path(project: Project) -> Path:
    return project.decks_dir / GLOSSARY_FILE


def links_dir(out: Path) -> Path:
    """Where the back-links files of a build into ``out`` live."""
    return Path(out) / "cache" / "glossary"


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


def refresh_links(project: Project, out: Path) -> None:
    """Write each numbered deck's back-links file for a build into ``out``, when the glossary's bytes changed
    since they were written (each file rewritten only when its back-links changed, so its digest moves only
    then). Without a glossary, nothing is written unless there were back-links before."""
    folder = links_dir(out)
    try:
        stamp = digest(glossary_path(project).read_bytes())
    except OSError:
        stamp = "-"
    if stamp == "-" and not folder.is_dir():
        return
    marker = folder / "glossary.digest"
    try:
        if marker.read_text(encoding="utf-8") == stamp:
            return
    except OSError:
        pass
    found = glossary(project) if stamp != "-" else None
    for path in project.deck_paths():
        number = deck_number(path.stem)
        if number is None:
            continue
        entries = found.explained_in(number) if found is not None else ()
        text = "".join(f"{e.slide}\t{e.id}\t{e.number}\t{e.term}\n" for e in entries)
        target = folder / f"{number}.links"
        try:
            if target.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(marker, stamp)


def glossary_deps(project: Project, deck: Deck, out: Path) -> tuple[Path, ...]:
    """The files besides its own whose bytes ``deck``'s outputs (built into ``out``) depend on through the
    glossary: its back-links file for a numbered deck; every numbered deck for the glossary."""
    if deck.glossary is not None:
        return tuple(p for p in project.deck_paths() if deck_number(p.stem) is not None)
    number = deck_number(deck.slug)
    return (links_dir(out) / f"{number}.links",) if number is not None else ()
