"""``slidegen check``'s citation checks: references.bib, results/cited.yaml, and how the decks use them.

Errors: a malformed or duplicate BibTeX entry (at its line), an unknown citation key on a
slide (:mod:`slidegen.bind.cite` reports it), a cited number whose work is not in references.bib,
one resting on a fact sheet item the project does not list or whose status is not P, S or D,
a cited number given twice, and a results.md cited row that differs from the cited-numbers
file (``slidegen run`` rewrites them). Warnings: a work nothing cites, a cited number no
slide shows. Fact statuses are the project's own copy (``facts:`` in results/cited.yaml), so
the check needs no file outside the project.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable

from slidegen.bind.cite import cite_deck, slide_clusters
from slidegen.bind.cited import CITABLE
from slidegen.bind.library import Library, cited_rows
from slidegen.deck.nodes import Deck
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.record.results import RESULTS_PATH, Results


def check_library(library: Library) -> list[Diagnostic]:
    """The problems of the citation files themselves."""
    out = list(library.bibliography.errors) + list(library.cited.errors)
    cited = library.cited
    entries = library.bibliography.entries
    seen: dict[str, int] = {}
    for number in cited.numbers:
        if number.key in seen:
            out.append(
                Diagnostic(
                    cited.path,
                    *number.where("key"),
                    f"duplicate cited number '{number.key}' (first at line {seen[number.key]})",
                )
            )
        seen.setdefault(number.key, number.line)
        if number.cite not in entries:
            out.append(
                Diagnostic(
                    cited.path,
                    *number.where("cite"),
                    f"cited number '{number.key}' cites '{number.cite}', which is not in "
                    f"{library.bibliography.path}{_did_you_mean(number.cite, entries)}",
                )
            )
        out += _check_fact(
            library, number.key, number.fact, number.status, number.where("fact"), number.where("status")
        )
    for fact, status in cited.facts.items():
        if not _citable(status):
            out.append(
                Diagnostic(
                    cited.path,
                    *cited.fact_at[fact],
                    f"fact '{fact}' has status '{status}': only P, S or D items may be cited",
                )
            )
    return out


def _citable(status: str) -> bool:
    parts = status.split("/")
    return all(len(p) == 1 for p in parts) and set(parts) <= CITABLE


def _check_fact(
    library: Library, key: str, fact: str, status: str, fact_at: tuple[int, int], status_at: tuple[int, int]
) -> list[Diagnostic]:
    path, facts = library.cited.path, library.cited.facts
    if fact not in facts:
        return [
            Diagnostic(
                path,
                *fact_at,
                f"cited number '{key}' rests on unknown fact '{fact}'"
                f"{_did_you_mean(fact, facts)}; list it under 'facts:' with its status",
            )
        ]
    if not _citable(facts[fact]):
        return [
            Diagnostic(
                path,
                *fact_at,
                f"cited number '{key}' rests on fact '{fact}' of status "
                f"'{facts[fact]}': only P, S or D items may be cited",
            )
        ]
    if status != facts[fact]:
        return [
            Diagnostic(
                path,
                *status_at,
                f"status '{status}' of cited number '{key}' differs from fact '{fact}', which has '{facts[fact]}'",
            )
        ]
    return []


def check_cited_rows(library: Library, results: Results) -> list[Diagnostic]:
    """results.md's cited rows must be exactly those the cited-numbers file gives (``slidegen run`` writes them)."""
    try:
        expected = {r.key: r for r in cited_rows(library)}
    except SlidegenError as error:  # the style itself is broken: that is the problem to report
        return [error.diagnostic]
    out: list[Diagnostic] = []
    for key, row in results.items():
        if not row.cited:
            continue
        want = expected.get(key)
        if want is None:
            out.append(
                Diagnostic(
                    RESULTS_PATH,
                    row.line,
                    1,
                    f"cited row '{key}' is not in {library.cited.path}; run `slidegen run` to remove it",
                )
            )
        elif want != row:
            out.append(
                Diagnostic(
                    RESULTS_PATH,
                    row.line,
                    1,
                    f"cited row '{key}' differs from {library.cited.path}; run `slidegen run` to rewrite it",
                )
            )
    line = max((r.line for r in results.values()), default=1)
    for key in expected:
        if key not in results:
            out.append(
                Diagnostic(
                    RESULTS_PATH,
                    line,
                    1,
                    f"cited number '{key}' of {library.cited.path} has no row; run `slidegen run` to write it",
                )
            )
    return out


def check_deck_cites(decks: Iterable[Deck], library: Library) -> list[Diagnostic]:
    """Unknown keys and styles in bound decks (the problems :func:`~slidegen.bind.cite.cite_deck` reports)."""
    return [problem for deck in decks for problem in cite_deck(deck, library)[1]]


def check_unused(decks: Collection[Deck], library: Library, complete: bool) -> list[Diagnostic]:
    """Warnings: works nothing cites, and cited numbers no slide shows (only when every deck parsed: ``complete``)."""
    if not complete:
        return []
    cited = library.cited
    written = {
        item.key for deck in decks for slide in deck.slides for cite in slide_clusters(slide) for item in cite.items
    }
    shown = {source.key for deck in decks for slide in deck.slides for source in slide.sources}
    backing = {n.cite for n in cited.numbers}
    out = [
        Diagnostic(library.bibliography.path, entry.line, 1, f"work '{key}' is never cited", "warning")
        for key, entry in library.bibliography.entries.items()
        if key not in written | backing
    ]
    out += [
        Diagnostic(cited.path, *n.where("key"), f"cited number '{n.key}' is not shown on any slide", "warning")
        for n in cited.numbers
        if n.key not in shown
    ]
    return out


def _did_you_mean(word: str, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
