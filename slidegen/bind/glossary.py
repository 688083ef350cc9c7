"""The glossary's links, both ways, made before writing: each term to the slide that explains it, and each
such slide back to the term.

:func:`explain` ends each term's slide in the glossary with where the term is explained (the deck's title,
the slide's number and title, linked as ``NN-slug.md#id``), or says that its deck is not written yet.
:func:`link_back` gives each slide of a deck that explains a term a :class:`GlossaryLink` (``Slide.glossary``),
which every writer shows in the slide's footer. Both work from the deck index and ``Deck.glossary``; no
source file is read here.
"""

from __future__ import annotations

from dataclasses import replace

from slidegen.deck import nodes as d
from slidegen.deck.glossary import Glossary, GlossaryLink, Term, deck_number


def defining_deck(entry: Term, index: d.DeckIndex) -> d.DeckEntry | None:
    """The deck of the index that explains ``entry`` (its number ``NN-``), or ``None`` when it is not written."""
    return next((deck for deck in index.decks if deck_number(deck.slug) == entry.deck), None)


def explain(glossary: d.Deck, index: d.DeckIndex) -> d.Deck:
    """``glossary`` with each term's slide ending in where the term is explained."""
    if glossary.glossary is None:
        return glossary
    by_number = {entry.number: entry for entry in glossary.glossary.entries}
    slides = []
    for slide in glossary.slides:
        entry = by_number.get(slide.index)
        if entry is not None and slide.id == entry.id:
            slide = replace(slide, blocks=(*slide.blocks, _where(entry, index, slide.line)))
        slides.append(slide)
    return replace(glossary, slides=tuple(slides))


def _where(entry: Term, index: d.DeckIndex, line: int) -> d.Paragraph:
    """``Explained in deck 01, The Training Loop and the Objective, slide 5: Training step.``"""
    deck = defining_deck(entry, index)
    found = deck.slide(entry.slide) if deck is not None else None
    if deck is None:
        return d.Paragraph((d.Emph((d.Text(f"Explained in deck {entry.deck}, not written yet."),)),), line)
    if found is None:
        return d.Paragraph((d.Emph((d.Text(f"Explained in deck {entry.deck}, {deck.title}."),)),), line)
    link = d.Link((d.Text(f"slide {found.number}: {found.title}"),), f"{deck.slug}.md#{entry.slide}")
    return d.Paragraph((d.Emph((d.Text(f"Explained in deck {entry.deck}, {deck.title}, "), link, d.Text("."))),), line)


def link_back(deck: d.Deck, glossary: Glossary | None) -> d.Deck:
    """``deck`` with each slide that explains a term of ``glossary`` linking back to the term's entry."""
    number = deck_number(deck.slug)
    if glossary is None or number is None:
        return deck
    wanted: dict[str, list[GlossaryLink]] = {}
    for entry in glossary.explained_in(number):
        wanted.setdefault(entry.slide, []).append(GlossaryLink(entry.term, entry.id, entry.number))
    if not wanted:
        return deck
    slides = tuple(
        replace(slide, glossary=tuple(wanted[slide.id])) if slide.id in wanted else slide for slide in deck.slides
    )
    return replace(deck, slides=slides)


def back_links(deck: d.Deck, glossary: Glossary | None) -> tuple[tuple[str, str, int], ...]:
    """What :func:`link_back` gives ``deck``: ``(slide id, term, entry number)`` each, for the build cache."""
    number = deck_number(deck.slug)
    if glossary is None or number is None:
        return ()
    return tuple((entry.slide, entry.term, entry.number) for entry in glossary.explained_in(number))
