"""The CI lint (``slidegen check``), the citing-slides index, and ``slidegen results diff``.

:func:`check_project` reads every deck and results.md and returns each problem as a
:class:`~slidegen.errors.Diagnostic`, sorted by file, line and column, paths relative to
the project root. Errors fail CI; warnings (results no slide cites) do not.

Stale results are reported once per row, at the row's line in ``results/results.md``;
the message names the slides that cite the row.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from slidegen.bind import SourceIndex, bind_deck, deck_references
from slidegen.deck import (
    Block,
    Deck,
    Figure,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    SoftBreak,
    Table,
    Text,
    block_inlines,
    walk_blocks,
)
from slidegen.errors import Diagnostic, SlidegenError, UsageError
from slidegen.results import Result, Results

RESULTS_PATH = "results/results.md"

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

    paths, decks, parse_errors = _parse_all(root)
    diagnostics += parse_errors
    ids = {name: {s.id for s in deck.slides if s.id} for name, deck in decks.items()}
    cited: dict[str, list[tuple[str, int]]] = {}
    for name, deck in decks.items():
        rel = f"decks/{name}"
        if results is not None:
            diagnostics += bind_deck(deck, results)[1]
        for key, line, _ in deck_references(deck):
            cited.setdefault(key, []).append((rel, line))
        source = SourceIndex(deck.path)
        diagnostics += _check_links(rel, deck, source, {p.name for p in paths}, ids)
        if figure_names is not None:
            diagnostics += _check_figures(rel, deck, source, figure_names)
        if strict:
            diagnostics += _check_numbers(rel, deck, source)

    if results is not None:
        if fingerprints is not None:
            diagnostics += _check_stale(results, fingerprints, cited)
        if not parse_errors:  # a deck that did not parse may cite anything
            diagnostics += [
                Diagnostic(RESULTS_PATH, r.line, 1, f"result '{key}' is not cited by any slide", "warning")
                for key, r in results.items()
                if key not in cited
            ]
    out = {_relative(root, d): None for d in diagnostics}
    return sorted(out, key=lambda d: (d.path, d.line, d.col))


def citations_of(root: Path) -> dict[str, list[tuple[str, int]]]:
    """Where each result key is cited: ``key -> [("decks/01-x.md", line), ...]``; decks that do not parse are skipped."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, deck in _parse_all(Path(root))[1].items():
        for key, line, _ in deck_references(deck):
            out.setdefault(key, []).append((f"decks/{name}", line))
    return out


# ---------------------------------------------------------------------- decks


def _parse_all(root: Path) -> tuple[list[Path], dict[str, Deck], list[Diagnostic]]:
    from slidegen.parse import parse_deck  # the parser is heavy; import it when needed

    paths = sorted((root / "decks").glob("*.md"))
    decks: dict[str, Deck] = {}
    errors: list[Diagnostic] = []
    for path in paths:
        try:
            decks[path.name] = parse_deck(path)
        except SlidegenError as e:
            errors.append(e.diagnostic)
    return paths, decks, errors


def _relative(root: Path, d: Diagnostic) -> Diagnostic:
    """``d`` with its path relative to the project root (``decks/01-x.md``)."""
    path = Path(d.path)
    try:
        rel = (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(root.resolve())
    except ValueError:
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


def _inlines_with_lines(block: Block) -> Iterator[tuple[Inline, int]]:
    """The inlines of one block, each with the source line it sits on (soft breaks counted)."""
    if isinstance(block, Table):
        rows = [(block.line, block.header), *((block.line + 2 + i, row) for i, row in enumerate(block.rows))]
        for line, row in rows:
            for cell in row:
                yield from _walk_lines(cell, line)
    else:
        yield from _walk_lines(block_inlines(block), getattr(block, "line", 0))


def _walk_lines(nodes: tuple[Inline, ...], line: int) -> Iterator[tuple[Inline, int]]:
    at = [line]

    def walk(nodes: tuple[Inline, ...]) -> Iterator[tuple[Inline, int]]:
        for node in nodes:
            yield node, at[0]
            yield from walk(getattr(node, "children", None) or ())
            if isinstance(node, (SoftBreak, LineBreak)):
                at[0] += 1

    return walk(nodes)


def _did_you_mean(word: str, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _check_links(
    rel: str, deck: Deck, source: SourceIndex, deck_files: set[str], ids: Mapping[str, set[str]]
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for block, _ in _all_blocks(deck):
        for node, line in _inlines_with_lines(block):
            if not isinstance(node, Link) or _SCHEME_RE.match(node.url) or node.url.startswith("/"):
                continue
            target, _, fragment = node.url.partition("#")
            name = Path(target).name if target else deck.path.name
            if target and not target.endswith(".md"):
                continue
            at = source.find(node.url, line)
            if name not in deck_files:
                out.append(Diagnostic(rel, *at, f"link to unknown deck '{target}'{_did_you_mean(name, deck_files)}"))
            elif fragment and name in ids and fragment not in ids[name]:
                hint = _did_you_mean(fragment, ids[name])
                out.append(Diagnostic(rel, *at, f"link to unknown slide id '{fragment}' in {name}{hint}"))
    return out


def _check_figures(rel: str, deck: Deck, source: SourceIndex, names: Collection[str]) -> list[Diagnostic]:
    """``fig:NAME`` in images, figures and frontmatter (``image: fig:NAME``) must name a registered figure."""
    images: list[tuple[str, int]] = []
    starts = [1, *(s.line for s in deck.slides)]  # a slide's frontmatter lies after the previous slide
    for slide, start in zip(deck.slides, starts):
        images += [(v, start) for v in slide.frontmatter.values() if isinstance(v, str)]
    for block, _ in _all_blocks(deck):
        images += [(block.src, block.line)] if isinstance(block, Figure) else []
        images += [(n.src, line) for n, line in _inlines_with_lines(block) if isinstance(n, Image)]
    out: list[Diagnostic] = []
    for src, line in images:
        name = src[4:]
        if src.startswith("fig:") and name not in names:
            out.append(Diagnostic(rel, *source.find(src, line), f"unknown figure '{name}'{_did_you_mean(name, names)}"))
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


def _check_numbers(rel: str, deck: Deck, source: SourceIndex) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for block, in_notes in _all_blocks(deck):
        first: Inline | None = block.children[0] if isinstance(block, Heading) and block.children else None
        for node, line in _inlines_with_lines(block):
            if not isinstance(node, Text):
                continue
            numbers = hand_typed_numbers(node.text, heading=node is first)
            if not numbers:
                continue
            base = source.search(node.text, line)
            where = "speaker notes" if in_notes else "slide text"
            for offset, number in numbers:
                at = (base[0], base[1] + offset) if base else source.find(number, line)
                message = (
                    f"hand-typed number '{number}' in {where}: cite a result ({{{{ key }}}}) "
                    f'or mark it as a literal ({{{{ "{number}" }}}})'
                )
                out.append(Diagnostic(rel, *at, message))
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


# ---------------------------------------------------------------------- results diff


@dataclass(frozen=True)
class KeyChange:
    """One key whose value differs between a revision and the working results.md."""

    key: str
    old: Result | None
    """The row at the revision; None when the key is new."""
    new: Result | None
    """The row in the working file; None when the key was removed."""
    citations: tuple[tuple[str, int], ...]
    """``(deck path, line)`` of every slide that cites the key."""

    @property
    def kind(self) -> str:
        """``added``, ``removed`` or ``changed``."""
        return "added" if self.old is None else "removed" if self.new is None else "changed"

    @property
    def old_value(self) -> float | None:
        return None if self.old is None else self.old.value

    @property
    def new_value(self) -> float | None:
        return None if self.new is None else self.new.value

    def __str__(self) -> str:
        def show(r: Result | None) -> str:
            if r is None:
                return "-"
            return f"{r.value:g}" + ("" if r.sd is None else f" ± {r.sd:g}")

        where = ", ".join(f"{p}:{line}" for p, line in self.citations) or "not cited"
        return f"{self.key}: {show(self.old)} -> {show(self.new)} ({where})"


def _shown(r: Result) -> tuple[object, ...]:
    """What a slide can show of a row: a change here is a change of value."""
    return (r.value, r.sd, r.n, r.unit, r.digits)


def results_diff(root: Path, rev: str = "HEAD") -> list[KeyChange]:
    """Keys added, removed or changed in value between ``git show REV:results/results.md`` and the working file.

    Raises :class:`UsageError` when ``rev`` is not a commit of the project's repository.
    """
    root = Path(root)
    check = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=root, capture_output=True, text=True,
    )
    if check.returncode != 0:
        raise UsageError(f"unknown revision '{rev}'" if "not a git" not in check.stderr
                         else f"{root} is not in a git repository")
    shown = subprocess.run(["git", "show", f"{rev}:./{RESULTS_PATH}"], cwd=root, capture_output=True)
    old = Results.parse(shown.stdout.decode("utf-8"), f"{rev}:{RESULTS_PATH}") if shown.returncode == 0 else Results()
    try:
        new = Results.read(root / RESULTS_PATH)
    except FileNotFoundError:
        new = Results()
    cites = citations_of(root)
    changes: list[KeyChange] = []
    for key in [*old, *(k for k in new if k not in old)]:
        before, after = old.get(key), new.get(key)
        if before is not None and after is not None and _shown(before) == _shown(after):
            continue
        changes.append(KeyChange(key, before, after, tuple(cites.get(key, []))))
    return changes
