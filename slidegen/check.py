"""The CI lint (``slidegen check``).

:func:`check_project` reads every deck once (:mod:`slidegen.index`) and results.md, and
returns each problem as a :class:`~slidegen.errors.Diagnostic`, sorted by file, line and
column, paths relative to the project root. Errors fail CI; warnings (results no slide
cites) do not. The checks themselves read no file: positions come from the parsed decks,
links between decks resolve through the :class:`~slidegen.deck.DeckIndex`.

Stale results are reported once per row, at the row's line in ``results/results.md``;
the message names the slides that cite the row.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from slidegen import components
from slidegen.bind import bind_deck
from slidegen.check_cites import check_cited_rows, check_deck_cites, check_library, check_unused
from slidegen.deck import (
    Block,
    Deck,
    DeckIndex,
    Figure,
    Heading,
    Image,
    Link,
    Text,
    block_inlines,
    walk_blocks,
    walk_inlines,
)
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.frontmatter import key_warnings, visible
from slidegen.index import Decks, citations, index_of, project_decks
from slidegen.library import Library, load_library
from slidegen.results import RESULTS_PATH, Results

#: A number as typed: 2,000 / 2.31 / 1e-3 / 37%.
_NUMBER_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?%?")
#: A heading's own number: "01", "Chapter 3", "3.2".
_CHAPTER_NUMBER_RE = re.compile(r"\s*(?:(?:chapter|ch\.?|part|section|§)\s*)?\d+(?:\.\d+)*", re.IGNORECASE)
_SCHEME_RE = re.compile(r"[A-Za-z][\w+.-]*:")


def check_project(
    root: Path,
    strict: bool = False,
    fingerprints: Mapping[str, str] | None = None,
    figure_names: Collection[str] | None = None,
) -> list[Diagnostic]:
    """Every problem in the project's decks and results.md.

    ``fingerprints`` maps each registered experiment id to its fingerprint today (None
    skips the staleness check); ``figure_names`` lists the registered figures (None
    skips the figure check); ``strict`` also flags numbers typed by hand.
    """
    root = Path(root)
    diagnostics: list[Diagnostic] = []
    results: Results | None = Results()
    try:
        results = Results.read(root / RESULTS_PATH)
    except FileNotFoundError:
        pass
    except SlidegenError as e:
        diagnostics.append(e.diagnostic)
        results = None

    decks = project_decks(root)
    diagnostics += check_decks(decks, results, strict, fingerprints, figure_names, root, load_library(root))
    out = {_relative(root, d): None for d in diagnostics}
    return sorted(out, key=lambda d: (d.path, d.line, d.col))


def check_decks(
    decks: Decks,
    results: Results | None,
    strict: bool = False,
    fingerprints: Mapping[str, str] | None = None,
    figure_names: Collection[str] | None = None,
    root: Path = Path("."),
    library: Library | None = None,
) -> list[Diagnostic]:
    """The problems of decks read once: parse errors, binding, links (through the index), figures, numbers, results,
    and citations (``library``: the project's works, styles and cited numbers; None skips those checks).

    ``results`` is None when results.md itself did not read (its error is reported by the caller).
    """
    diagnostics = list(decks.errors)
    index = decks.index
    shown = index_of(visible(deck) for deck in decks.parsed.values())  # what the build writes and links to
    deck_files = {path.name for path in decks.paths}
    bound: list[Deck] = []
    found = components.discover(root)
    diagnostics += components.file_problems(found, root)
    for deck in decks.parsed.values():
        rel = f"decks/{deck.path.name}"
        if results is not None:
            deck, problems = bind_deck(deck, results)
            diagnostics += problems
            bound.append(deck)
        diagnostics += components.deck_problems(deck, found, rel)
        diagnostics += [Diagnostic(rel, line, 1, problem) for run, line in components.run_refs(deck)
                        if (problem := components.run_problem(run, root / "results" / "runs"))]
        diagnostics += _check_links(rel, deck, deck_files, index, shown)
        diagnostics += key_warnings(rel, deck)
        if figure_names is not None:
            diagnostics += _check_figures(rel, deck, figure_names)
        if strict:
            diagnostics += _check_numbers(rel, deck)
    diagnostics += _check_diagrams(list(decks.parsed.values()), root)
    if library is not None:
        diagnostics += check_library(library)
        diagnostics += check_deck_cites(bound, library)
        if results is not None and library.cited.exists:
            diagnostics += check_cited_rows(library, results)
            diagnostics += check_unused(bound, library, complete=not decks.errors)
    if results is not None:
        cited = citations(decks.parsed.values(), root)
        if fingerprints is not None:
            diagnostics += _check_stale(results, fingerprints, cited)
        if not decks.errors:  # a deck that did not parse may cite anything
            diagnostics += [
                Diagnostic(RESULTS_PATH, r.line, 1, f"result '{key}' is not cited by any slide", "warning")
                for key, r in results.items()
                if key not in cited and not (r.cited and library is not None and library.cited.exists)
            ]  # a cited number no slide shows is reported once, at its line in the cited-numbers file
    return diagnostics


def _check_diagrams(decks: list[Deck], root: Path) -> list[Diagnostic]:
    """Every Mermaid diagram must parse (Mermaid's own parser, in Chromium; parsed texts are remembered in
    ``build/cache/mermaid``, so an unchanged project is checked without a browser)."""
    from slidegen import mermaid, snapshot
    from slidegen.assets import AssetsMissing
    from slidegen.pdf import ChromiumMissing

    found = [(f"decks/{deck.path.name}", block) for deck in decks for block, _ in components.diagrams(deck)]
    if not found:
        return []
    try:
        failed = snapshot.parse_problems([block.code for _, block in found], root / "build" / "cache" / "mermaid")
    except (ChromiumMissing, AssetsMissing) as error:
        rel, block = found[0]
        return [Diagnostic(rel, block.line, 1, f"Mermaid diagrams not checked: {error}", "warning")]
    out = []
    for rel, block in found:
        if block.code in failed:
            message = failed[block.code]
            out.append(Diagnostic(rel, mermaid.error_line(message, block.line), 1,
                                  f"Mermaid cannot parse this diagram: {mermaid.first_line(message)}"))
    return out


def _relative(root: Path, d: Diagnostic) -> Diagnostic:
    """``d`` with its path relative to the project root (``decks/01-x.md``)."""
    path = Path(d.path)
    try:
        rel = (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(root.resolve())
    except (ValueError, RuntimeError):  # elsewhere, or a symlink loop
        return d
    return Diagnostic(rel.as_posix(), d.line, d.col, d.message, d.severity)


def _all_blocks(deck: Deck) -> Iterator[tuple[Block, bool]]:
    """Every block of every slide, notes included, with ``True`` for notes blocks."""
    for slide in deck.slides:
        for blocks in (slide.blocks, *slide.slots.values()):
            for block in walk_blocks(blocks):
                yield block, False
        for block in walk_blocks(slide.notes_blocks):
            yield block, True


def _inlines(block: Block) -> Iterator[Text | Link | Image]:
    """The text runs, links and images of one block (table cells and nested spans included)."""
    for node in walk_inlines(block_inlines(block)):
        if isinstance(node, (Text, Link, Image)):
            yield node


def _did_you_mean(word: str, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_links(rel: str, deck: Deck, deck_files: set[str], index: DeckIndex, shown: DeckIndex) -> list[Diagnostic]:
    """Links to ``NN-x.md`` and ``NN-x.md#id`` (or ``#id``) must name a deck file, and a slide id the index knows
    on a slide the build writes (``shown``: hidden slides left out)."""
    out: list[Diagnostic] = []
    for block, _ in _all_blocks(deck):
        for node in _inlines(block):
            if not isinstance(node, Link) or _SCHEME_RE.match(node.url) or node.url.startswith("/"):
                continue
            target, _, fragment = node.url.partition("#")
            name = Path(target).name if target else deck.path.name
            if target and not target.endswith(".md"):
                continue
            entry = index.deck(name)
            if name not in deck_files:
                message = f"link to unknown deck '{target}'{_did_you_mean(name, deck_files)}"
                out.append(Diagnostic(rel, *node.target_at, message))
            elif fragment and entry is not None and entry.slide(fragment) is None:
                hint = _did_you_mean(fragment, [s.id for s in entry.slides if s.id])
                out.append(Diagnostic(rel, *node.target_at, f"link to unknown slide id '{fragment}' in {name}{hint}"))
            elif fragment and entry is not None and (written := shown.deck(name)) and written.slide(fragment) is None:
                out.append(Diagnostic(rel, *node.target_at, f"link to slide '{fragment}' in {name}, which is hidden "
                                      "(hide: true) and not in any output; show it or drop the link"))
    return out


def _check_figures(rel: str, deck: Deck, names: Collection[str]) -> list[Diagnostic]:
    """``fig:NAME`` in images, figures and frontmatter (``image: fig:NAME``) must name a registered figure."""
    images: list[tuple[str, tuple[int, int]]] = []
    for slide in deck.slides:
        images += [(v, slide.frontmatter_at.get(k, (slide.line, 1)))
                   for k, v in slide.frontmatter.items() if isinstance(v, str)]
    images += [(src, (line, 1)) for src, line in components.fallbacks(deck)]  # fallback="fig:NAME"
    for block, _ in _all_blocks(deck):
        images += [(block.src, block.target_at)] if isinstance(block, Figure) else []
        images += [(n.src, n.target_at) for n in _inlines(block) if isinstance(n, Image)]
    out: list[Diagnostic] = []
    for src, at in images:
        name = src[4:]
        if src.startswith("fig:") and name not in names:
            out.append(Diagnostic(rel, *at, f"unknown figure '{name}'{_did_you_mean(name, names)}"))
    return out


# ---------------------------------------------------------------------- strict: numbers typed by hand


def hand_typed_numbers(text: str, heading: bool = False) -> list[tuple[int, str]]:
    """``(offset, number)`` of every measured-looking number typed in ``text``.

    Flagged: decimals (2.31), percentages (37%), numbers in scientific notation and any
    other number of two or more digits (42, 2,000). Not flagged: single digits; years
    1900-2099; numbers glued to letters, directly or by a hyphen (FP8, GPT-3, 7B, H100,
    16-bit, arXiv:1412.6980) except a multiplier ``x`` (2.5x is flagged); section signs
    (§5.1); and, when ``heading``, the heading's own number at its start (``01 Training``).
    """
    skip = 0
    if heading and (m := _CHAPTER_NUMBER_RE.match(text)):
        skip = m.end()
    found: list[tuple[int, str]] = []
    for m in _NUMBER_RE.finditer(text):
        start, end, number = m.start(), m.end(), m.group()
        before = text[start - 1] if start else ""
        before2 = text[start - 2] if start > 1 else ""
        after = text[end] if end < len(text) else ""
        after2 = text[end + 1] if end + 1 < len(text) else ""
        if start < skip or before == "§" or before.isalpha() or (before == "." and before2.isdigit()):
            continue
        if before in "-:" and before2.isalpha():
            continue
        if (after.isalpha() and after != "x") or (after == "x" and after2.isalpha()):
            continue
        if after == "-" and after2.isalpha() and not number.endswith("%"):
            continue
        if number.isdigit() and (len(number) < 2 or (len(number) == 4 and 1900 <= int(number) <= 2099)):
            continue
        found.append((start, number))
    return found


def _check_numbers(rel: str, deck: Deck) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for block, in_notes in _all_blocks(deck):
        first = block.children[0] if isinstance(block, Heading) and block.children else None
        for node in _inlines(block):
            if not isinstance(node, Text):
                continue
            where = "speaker notes" if in_notes else "slide text"
            for offset, number in hand_typed_numbers(node.text, heading=node is first):
                message = (
                    f"hand-typed number '{number}' in {where}: cite a result ({{{{ key }}}}) "
                    f'or mark it as a literal ({{{{ "{number}" }}}})'
                )
                out.append(Diagnostic(rel, node.line, node.col + offset, message))
    return out


# ---------------------------------------------------------------------- stale results


def _same_fingerprint(recorded: str, current: str) -> bool:
    """Fingerprints match when one is a prefix of the other (results.md may keep a short form)."""
    return bool(recorded) and bool(current) and (current.startswith(recorded) or recorded.startswith(current))


def _check_stale(
    results: Results, fingerprints: Mapping[str, str], cited: Mapping[str, list[tuple[str, int]]]
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for key, r in results.items():
        experiment, recorded = r.experiment, r.fingerprint
        if experiment is None or recorded is None:
            continue
        if experiment not in fingerprints:
            hint = _did_you_mean(experiment, fingerprints)
            out.append(Diagnostic(RESULTS_PATH, r.line, 1,
                                  f"result '{key}' comes from experiment '{experiment}', which no longer exists{hint}"))
            continue
        current = fingerprints[experiment]
        if not _same_fingerprint(recorded, current):
            where = ", ".join(f"{p}:{line}" for p, line in cited.get(key, [])) or "no slide"
            out.append(Diagnostic(
                RESULTS_PATH, r.line, 1,
                f"stale result '{key}': recorded by {experiment} {recorded}, whose fingerprint is now "
                f"{current[: len(recorded)]}; run `slidegen run {experiment}` (cited by {where})",
            ))
    return out
