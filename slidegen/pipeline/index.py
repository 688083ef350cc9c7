"""Read a project's decks once, and the deck index built from them.

``build``, ``check`` and ``results diff`` start here: :func:`read_decks` parses every deck
(a deck that does not parse is reported, and left out), :func:`index_of` lists what other
decks and the index page need to know of each one. No writer or checker reads a deck's
source after that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from slidegen.bind.numbers import is_literal
from slidegen.deck.glossary import is_glossary
from slidegen.deck.nodes import Deck, DeckEntry, DeckIndex, SlideEntry, slide_refs
from slidegen.errors import Diagnostic, SlidegenError, display_path
from slidegen.paths import in_project


@dataclass(frozen=True)
class Decks:
    """Every deck file read for one build or check: the ones that parsed, and the problems of the others."""

    paths: tuple[Path, ...]
    """Every deck file, parsed or not, in the order given."""
    parsed: dict[Path, Deck] = field(default_factory=dict)
    """The decks that parsed, by their path as given."""
    failed: dict[Path, Diagnostic] = field(default_factory=dict)
    """The error of each deck that did not parse, by its path as given."""

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(self.failed.values())

    @property
    def index(self) -> DeckIndex:
        return index_of(self.parsed.values())


#: The name of the page listing every deck, which no deck may take.
INDEX_PAGE = "index"


def read_decks(paths: Sequence[Path]) -> Decks:
    """Parse each deck of ``paths`` once."""
    from slidegen.read.glossary import read_glossary  # the parser is heavy; import it when needed
    from slidegen.read.parse import parse_deck

    parsed: dict[Path, Deck] = {}
    failed: dict[Path, Diagnostic] = {}
    for path in paths:
        if Path(path).stem == INDEX_PAGE:
            failed[path] = Diagnostic(
                display_path(path),
                1,
                1,
                f"a deck cannot be named {INDEX_PAGE}.md: its page "
                f"would overwrite the index page {INDEX_PAGE}.html; rename the deck",
            )
            continue
        try:
            parsed[path] = read_glossary(path) if is_glossary(path) else parse_deck(path)
        except SlidegenError as error:
            failed[path] = error.diagnostic
    return Decks(tuple(paths), parsed, failed)


def project_decks(root: Path) -> Decks:
    """Every deck of the project at ``root`` (``decks/*.md``, in name order), parsed once."""
    return read_decks(sorted((Path(root) / "decks").glob("*.md")))


def index_of(decks: Iterable[Deck]) -> DeckIndex:
    """The index of ``decks``: each one's path, title, headmatter, and its slides' numbers, ids and titles."""
    return DeckIndex(
        tuple(
            DeckEntry(
                deck.path,
                deck.title,
                dict(deck.headmatter),
                tuple(SlideEntry(s.index, s.id, s.title, s.line) for s in deck.slides),
                None if deck.glossary is None else len(deck.glossary.entries),
            )
            for deck in decks
        )
    )


def citations(decks: Iterable[Deck], root: Path) -> dict[str, list[tuple[str, int]]]:
    """Where each result key is cited: ``key -> [("decks/01-x.md", line), ...]``, paths relative to ``root``."""
    out: dict[str, list[tuple[str, int]]] = {}
    for deck in decks:
        rel = in_project(deck.path, root) or deck.path.as_posix()
        for slide in deck.slides:
            for ref in slide_refs(slide):
                if ref.key and not is_literal(ref.key):
                    site = (rel, ref.line)
                    sites = out.setdefault(ref.key, [])
                    if site not in sites:
                        sites.append(site)
    return out


def citations_of(root: Path) -> dict[str, list[tuple[str, int]]]:
    """Where each result key is cited in the project at ``root``; decks that do not parse are skipped."""
    return citations(project_decks(root).parsed.values(), Path(root))


def slide_finder(decks: Iterable[Deck], root: Path) -> Callable[[str, int], int | None]:
    """``(deck path as the project names it, line) -> slide number`` over ``decks`` (None: not a deck's line)."""
    starts = {
        in_project(deck.path, root) or deck.path.as_posix(): [slide.line for slide in deck.slides] for deck in decks
    }

    def slide_of(path: str, line: int) -> int | None:
        return sum(1 for start in starts.get(path, []) if start <= line) or None

    return slide_of
