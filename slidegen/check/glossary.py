"""The glossary's problems: each term of the series has one entry, each entry a slide that explains it.

Errors: a term of the series (the headmatter's ``series:``) without an entry, an entry whose term is not in
the series, a defining slide id that no slide of its (written) deck has, and a defining slide whose text uses
neither the term nor one of its aliases. A term whose deck is not written yet is a warning: it stays unlinked
until the deck exists. Duplicate terms and malformed entries are the reader's errors; unknown result keys in a
sentence are binding's, like any slide's.
"""

from __future__ import annotations

from collections.abc import Iterable

from slidegen.deck.glossary import Glossary, Term, deck_number
from slidegen.deck.nodes import Deck, Slide
from slidegen.errors import Diagnostic


def glossary_problems(decks: Iterable[Deck]) -> list[Diagnostic]:
    """Every problem of the glossary among ``decks`` (none when there is no glossary)."""
    decks = list(decks)
    source = next((deck for deck in decks if deck.glossary is not None), None)
    if source is None or source.glossary is None:
        return []
    where = f"decks/{source.path.name}"
    written = {number: deck for deck in decks if (number := deck_number(deck.slug)) is not None}
    out = _series_problems(where, source.glossary)
    for entry in source.glossary.entries:
        out += _entry_problems(where, entry, written.get(entry.deck))
    return out


def _series_problems(where: str, glossary: Glossary) -> list[Diagnostic]:
    line, col = glossary.series_at
    terms = {entry.term.casefold(): entry for entry in glossary.entries}
    series = {term.casefold() for term in glossary.series}
    out = [
        Diagnostic(where, line, col, f"the series' term '{term}' has no entry: add one (term, deck, slide, sentence)")
        for term in glossary.series
        if term.casefold() not in terms
    ]
    out += [
        Diagnostic(
            where,
            *entry.where("term"),
            f"'{entry.term}' is not a term of the series: add it to series: in the headmatter, or fix its spelling",
        )
        for entry in glossary.entries
        if entry.term.casefold() not in series
    ]
    seen: set[str] = set()
    for term in glossary.series:
        if term.casefold() in seen:
            out.append(Diagnostic(where, line, col, f"series: lists '{term}' twice: keep one"))
        seen.add(term.casefold())
    return out


def _entry_problems(where: str, entry: Term, deck: Deck | None) -> list[Diagnostic]:
    if deck is None:
        message = (
            f"'{entry.term}': deck {entry.deck} is not written yet, so the term is left unlinked; "
            f"it links once decks/{entry.deck}-*.md has a slide with id: {entry.slide}"
        )
        return [Diagnostic(where, *entry.where("deck"), message, "warning")]
    slide = deck.slide_by_id(entry.slide)
    if slide is None:
        return [
            Diagnostic(
                where,
                *entry.where("slide"),
                f"'{entry.term}': decks/{deck.path.name} has no slide with id '{entry.slide}': "
                f"give the slide that explains it that id: in its frontmatter, or name its id here",
            )
        ]
    if not _uses(slide, entry.words):
        words = ", ".join(f"'{word}'" for word in entry.words)
        return [
            Diagnostic(
                where,
                *entry.where("aliases" if entry.aliases else "term"),
                f"'{entry.term}': slide {slide.index} of decks/{deck.path.name} (id {entry.slide}, line {slide.line}) "
                f"uses none of {words}: name the term on that slide, or add the word it uses to aliases:",
            )
        ]
    return []


def _uses(slide: Slide, words: tuple[str, ...]) -> bool:
    """Whether the slide's text (its title and content; not its notes) holds one of ``words``, case aside."""
    text = "\n".join((slide.title, slide.content)).casefold()
    return any(word.casefold() in text for word in words)
