"""``slidegen list decks | keys [PATTERN] | figures``: what an author can use, and where it is used.

Each listing is a list of plain-text lines (the CLI prints them): decks with their slide
counts and titles; result keys as a slide shows them, with their source and the slides
citing them; figures with the module defining them and the slides showing them.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from slidegen.bind.numbers import format_result
from slidegen.deck.nodes import Deck, Figure, Image, block_inlines, slide_blocks, walk_blocks, walk_inlines
from slidegen.errors import display_path
from slidegen.pipeline.index import citations, project_decks, slide_finder
from slidegen.project import Project, find_project
from slidegen.record.results import Result


def list_decks(project: Project) -> list[str]:
    """``decks/01-x.md  18 slides  Title`` per deck; a deck that does not parse says so."""
    decks = project_decks(project.root)
    rows = []
    for path in decks.paths:
        deck = decks.parsed.get(path)
        if deck is None:
            problem = decks.failed[path]
            rows.append((display_path(path), "-", f"does not parse: {problem}"))
        else:
            hidden = sum(1 for slide in deck.slides if slide.frontmatter.get("hide") is True)
            count = f"{len(deck.slides)} slide{'s' if len(deck.slides) != 1 else ''}" + (
                f" ({hidden} hidden)" if hidden else ""
            )
            rows.append((display_path(path), count, deck.title))
    return _table(rows) or ["no decks in decks/"]


def list_keys(project: Project, results: Mapping[str, Result], pattern: str | None = None) -> list[str]:
    """Each key matching ``pattern`` (a glob such as ``ch01.val_*``, else a substring), as a slide prints it,
    with its unit, source and citing slides (``decks/01-x.md:12 (slide 3)``)."""
    decks = project_decks(project.root)
    cited = citations(decks.parsed.values(), project.root)
    slide_of = slide_finder(decks.parsed.values(), project.root)
    rows = []
    for key, row in results.items():
        if not matches(key, pattern):
            continue
        shown = format_result(row, ("pm",)) if row.sd is not None else format_result(row)
        value = f"{shown} {row.unit}".strip()
        rows.append((key, value, row.source, _sites(cited.get(key, []), slide_of)))
    if not rows:
        return [f"no result key matches '{pattern}'" if pattern else "no results yet: `slidegen run` measures them"]
    return _table(rows)


def list_figures(project: Project, figures: Mapping[str, tuple[Path, int]]) -> list[str]:
    """Each registered figure (name -> defining file and line) with the slides that show it."""
    decks = project_decks(project.root)
    shown: dict[str, list[str]] = {}
    for deck in decks.parsed.values():
        for number, src, line in _images(deck):
            if src.startswith("fig:"):
                shown.setdefault(src[4:], []).append(f"{display_path(deck.path)}:{line} (slide {number})")
    rows = [
        (name, f"{display_path(path)}:{line}", ", ".join(shown.get(name, [])) or "not shown")
        for name, (path, line) in sorted(figures.items())
    ]
    return _table(rows) or ["no figures registered"]


def _sites(sites: Sequence[tuple[str, int]], slide_of: Callable[[str, int], int | None]) -> str:
    """``decks/01-x.md slides 3, 8; decks/glossary.md slide 2`` (or ``not cited``)."""
    by_deck: dict[str, list[int]] = {}
    for path, line in sites:
        numbers = by_deck.setdefault(path, [])
        number = slide_of(path, line)
        if number is not None and number not in numbers:
            numbers.append(number)
    parts = [
        f"{path} slide{'s' if len(numbers) > 1 else ''} {', '.join(map(str, sorted(numbers)))}" if numbers else path
        for path, numbers in by_deck.items()
    ]
    return "; ".join(parts) or "not cited"


def matches(key: str, pattern: str | None) -> bool:
    """``pattern`` None matches all; a glob (``*``, ``?``, ``[``) matches whole keys; other text, a substring."""
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(key, pattern)
    return pattern in key


def _images(deck: Deck) -> Iterable[tuple[int, str, int]]:
    for slide in deck.slides:
        image = slide.frontmatter.get("image")
        if isinstance(image, str):
            yield slide.index, image, slide.line
        for block in walk_blocks(slide_blocks(slide)):
            if isinstance(block, Figure):
                yield slide.index, block.src, block.line
            for node in walk_inlines(block_inlines(block)):
                if isinstance(node, Image):
                    yield slide.index, node.src, getattr(block, "line", slide.line)


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Rows as aligned columns (the last column unpadded)."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]]).rstrip()
        for row in rows
    ]


def cmd_list(args: argparse.Namespace) -> int:
    project = find_project()
    if args.list_command == "decks":
        lines = list_decks(project)
    elif args.list_command == "keys":
        from slidegen.pipeline.bound import load_results

        lines = list_keys(project, load_results(project), args.pattern)
    else:
        from slidegen.media.figures import discover_figures

        figures = {name: (info.path, info.line) for name, info in discover_figures(project).items()}
        lines = list_figures(project, figures)
    print("\n".join(lines))
    return 0
