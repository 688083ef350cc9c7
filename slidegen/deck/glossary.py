"""The glossary in the document model: the series' terms, each with its sentence and the slide that explains it.

``decks/glossary.md`` is read into a :class:`~slidegen.deck.nodes.Deck` whose first slide is its cover and
whose every other slide is one :class:`Term` (its sentence, bound like any slide's); ``Deck.glossary`` holds
the entries. A deck's slide that explains a term carries a :class:`GlossaryLink` back to it
(``Slide.glossary``), filled in before writing, so no writer reads the glossary's source.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

#: The glossary's file name in ``decks/``.
GLOSSARY_FILE = "glossary.md"

#: The keys an entry's frontmatter may hold.
ENTRY_KEYS = ("term", "aliases", "deck", "slide", "id")


def is_glossary(path: Path) -> bool:
    """Whether ``path`` is a project's glossary source (``decks/glossary.md``)."""
    return Path(path).name == GLOSSARY_FILE


def deck_number(slug: str) -> str | None:
    """``"01"`` for a numbered deck's slug ``01-training-loop``; ``None`` for any other deck."""
    found = re.match(r"(\d\d)-", slug)
    return found.group(1) if found else None


def term_id(term: str) -> str:
    """The slide id of a term's entry when it names none: ``"Pre-LN vs post-LN"`` -> ``"pre-ln-vs-post-ln"``."""
    plain = unicodedata.normalize("NFKD", term.replace("µ", "mu")).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-") or "term"


@dataclass(frozen=True)
class Term:
    """One entry of the glossary."""

    term: str
    aliases: tuple[str, ...]
    """Words the defining slide may use instead of the term (the check looks for one of them)."""
    deck: str
    """The number of the deck that explains it: ``"01"``."""
    slide: str
    """The ``id:`` of the slide of that deck that explains it."""
    id: str
    """The id of its own slide in the glossary (``glossary.md#id``)."""
    number: int
    """Its slide's number in the glossary deck."""
    line: int
    """Where its entry starts in the glossary's source."""
    at: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    """1-based (line, col) of each key of the entry's frontmatter."""

    @property
    def words(self) -> tuple[str, ...]:
        """The term and its aliases: a defining slide uses at least one of them."""
        return (self.term, *self.aliases)

    def where(self, key: str) -> tuple[int, int]:
        """The (line, col) of ``key`` in the entry, else of the entry."""
        return self.at.get(key, (self.line, 1))


@dataclass(frozen=True)
class Glossary:
    """Every entry, in the order written, and the series' terms the headmatter promises."""

    entries: tuple[Term, ...]
    series: tuple[str, ...] = ()
    """The series' terms (headmatter ``series:``): each needs an entry."""
    series_at: tuple[int, int] = (1, 1)

    def explained_in(self, number: str) -> tuple[Term, ...]:
        """The entries that deck ``number`` (``"01"``) explains."""
        return tuple(entry for entry in self.entries if entry.deck == number)


@dataclass(frozen=True)
class GlossaryLink:
    """A link from a slide that explains a term to the term's entry in the glossary."""

    term: str
    id: str
    """The entry's slide id: ``glossary.md#id``."""
    number: int
    """The entry's slide number in the glossary deck (PowerPoint jumps to it)."""

    @property
    def url(self) -> str:
        return f"{GLOSSARY_FILE}#{self.id}"
