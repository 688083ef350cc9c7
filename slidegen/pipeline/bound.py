"""A project's decks read and bound once per build: results.md and the citation data applied, the index made.

Every deck of the project is parsed and bound once; the deck index made from them goes to every writer
(links between decks, the index page), so no writer reads a deck's source or calls the parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from slidegen.bind.cite import cite_deck
from slidegen.bind.library import load_library
from slidegen.bind.numbers import bind_deck
from slidegen.deck.nodes import Deck, DeckIndex
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.pipeline.index import index_of, read_decks
from slidegen.project import Project
from slidegen.read.frontmatter import visible
from slidegen.record.results import Results


def load_results(project: Project, stale: bool = False) -> Results:
    """The project's results.md, or no results when it does not exist yet.

    With ``stale``, the rows whose experiment changed since it ran are marked (:attr:`Results.stale`,
    so binding warns where a slide cites one); :func:`build` reports why they could not be told.
    """
    try:
        results = Results.read(project.results_path)
    except FileNotFoundError:
        return Results()
    if stale and any(row.experiment for row in results.values()):  # measured rows: they may be stale
        from slidegen.record.stale import fingerprints_or_problem, stale_keys

        fingerprints, _ = fingerprints_or_problem(project)
        if fingerprints is not None:
            results.stale = stale_keys(fingerprints, {key: row.source for key, row in results.items()})
    return results


def first_error(diagnostics: Sequence[Diagnostic]) -> SlidegenError | None:
    """The first error among ``diagnostics``, as an exception to raise, or None."""
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            return SlidegenError(diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.message)
    return None


def load_deck(path: Path, results: Results) -> tuple[Deck, list[Diagnostic]]:
    """Parse one deck and bind its references: the bound deck and its warnings; the first error is raised."""
    decks = read_decks([path])
    if path in decks.failed:
        problem = decks.failed[path]
        raise SlidegenError(problem.path, problem.line, problem.col, problem.message)
    deck, diagnostics = bind_deck(decks.parsed[path], results)
    error = first_error(diagnostics)
    if error is not None:
        raise error
    return visible(deck), diagnostics


@dataclass(frozen=True)
class BoundDecks:
    """Every deck of a build, parsed and bound once, and the index made from them."""

    decks: dict[Path, Deck]
    """Bound decks by resolved path (decks that did not parse are missing)."""
    problems: dict[Path, list[Diagnostic]]
    """Each deck's parse or binding problems, by resolved path."""
    index: DeckIndex

    def deck(self, path: Path) -> Deck:
        """The bound deck at ``path``; its first problem is raised when it has one."""
        key = Path(path).resolve()
        error = first_error(self.problems.get(key, []))
        if error is not None:
            raise error
        return self.decks[key]


def bind_project(project: Project, extra: Sequence[Path] = (), only: Sequence[Path] | None = None) -> BoundDecks:
    """Parse and bind every deck of ``project`` (and ``extra`` decks outside it) once; index them in that order.

    ``only``: parse and bind just these decks (an incremental build knows the others from its manifest).
    """
    paths = {path.resolve(): path for path in [*project.deck_paths(), *extra]}
    if only is not None:
        wanted = {Path(path).resolve() for path in only}
        paths = {key: path for key, path in paths.items() if key in wanted}
    if not paths:  # nothing to bind: neither results.md nor the citation data is read
        return BoundDecks({}, {}, index_of([]))
    read = read_decks(list(paths.values()))
    results = load_results(project, stale=True)
    library = load_library(project.root, project.build_dir / "cache" / "citations")
    decks: dict[Path, Deck] = {}
    problems: dict[Path, list[Diagnostic]] = {}
    for key, path in paths.items():
        if path in read.failed:
            problems[key] = [read.failed[path]]
        else:
            bound, problems[key] = bind_deck(read.parsed[path], results)
            decks[key], cited = cite_deck(visible(bound), library)  # hidden slides: checked, never written
            problems[key] += cited
    return BoundDecks(decks, problems, index_of(decks.values()))


def project_index(project: Project) -> DeckIndex:
    """The index of every deck of ``project``, each parsed and bound once (for an index page without a build)."""
    return bind_project(project).index
