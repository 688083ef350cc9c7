"""Slidev's ``src:`` imports: which file a slide imports, and which of its slides.

A slide whose frontmatter says ``src: ./part.md`` is replaced by the slides of that file, and
``src: ./part.md#2,5-7`` by those slides only (Slidev's ``packages/parser/src/fs.ts``). A path
starting with ``/`` is relative to the deck's folder (Slidev's user root), any other relative to
the file that holds the importing slide; either way it must lie inside the project, like a
snippet. The range is Slidev's: ``N``, ``N-M``, ``N-`` (to the last slide), ``all`` or ``*``,
``none``, parts joined by ``,`` or ``;``; the numbers are 1-based, sorted and counted once.
Where Slidev skips a part it cannot read, this module says so: a range part that is not a
number or a range, or one past the file's last slide, is an error.

An importing slide with ``hide: true`` or ``disabled: true`` imports nothing (:func:`skipped`):
Slidev's loader returns before it looks at ``src:``, so the file is not read (a missing one is no
error) and none of its slides is in the deck, not even as hidden slides for ``check`` to check.

The headmatter of an imported file is no headmatter in the deck: as in Slidev, it is the
frontmatter of the file's first slide, merged like any other; the importing deck's headmatter
alone sets the deck (``check`` warns about each deck-wide key written there, since it is ignored).

The parser (:mod:`slidegen.read.parse`) reads the files, merges the frontmatter and locates errors;
this module only decides, so it has no state and reads nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from slidegen import paths
from slidegen.deck.nodes import Deck
from slidegen.paths import project_root

_RANGE_PART = re.compile(r"(\d+)(?:\s*-\s*(\d*))?")


class ImportProblem(ValueError):
    """An import that cannot be followed: the message says what to do."""


@dataclass(frozen=True)
class Target:
    """What one ``src:`` value names: the file (resolved) and the range as written (``""``: every slide)."""

    path: Path
    range: str


def skipped(frontmatter: dict[str, object]) -> bool:
    """Whether an importing slide's own ``frontmatter`` hides it, so it imports nothing (Slidev's rule;
    the same values that hide a slide, :func:`slidegen.read.frontmatter.is_hidden`)."""
    return any(frontmatter.get(key) is True for key in ("hide", "disabled"))


def target(value: object, importer: Path, deck: Path, line: int, col: int) -> Target:
    """The file and range ``src: value`` names, written at ``line``, ``col`` of ``importer``, for the deck at
    ``deck``; a path that names no readable file inside the project is a located error there."""
    if not isinstance(value, str) or not value.strip():
        raise ImportProblem("src: names the Markdown file whose slides replace this one, e.g. src: ./part.md")
    written, _, wanted = value.strip().partition("#")
    path = paths.resolve(paths.IMPORT, paths.Written(written, Path(importer), line, col), deck, project_root(deck))
    return Target(path, wanted.strip())


def pick(total: int, wanted: str) -> list[int]:
    """The 1-based slide numbers range ``wanted`` selects from a file of ``total`` slides (Slidev's rule)."""
    if wanted in ("", "all", "*"):
        return list(range(1, total + 1))
    if wanted == "none":
        return []
    numbers: set[int] = set()
    for part in re.split(r"[,;]", wanted):
        match = _RANGE_PART.fullmatch(part.strip())
        if not match:
            raise ImportProblem(
                f"src: range part '{part.strip()}' is not a slide number or range (write e.g. #2, #2-4, #3- or #1,5-7)"
            )
        start = int(match[1])
        end = total if match[2] == "" else int(match[2]) if match[2] else start
        if start < 1 or start > end:
            raise ImportProblem(f"src: range '{part.strip()}' is empty; slides are numbered from 1, low to high")
        if end > total:
            raise ImportProblem(f"src: range '{part.strip()}' goes past the file's last slide ({total})")
        numbers.update(range(start, end + 1))
    return sorted(numbers)


def by_file(deck: Deck) -> Iterator[tuple[Path, Deck]]:
    """``deck`` cut by the file each slide is written in, the deck's own first: each part keeps the deck's
    path (links to ``#id`` mean the deck) and the import sites written in that file, so a per-file check
    names the right file."""
    files = dict.fromkeys([deck.path, *(deck.slide_path(s) for s in deck.slides), *(s.path for s in deck.imports)])
    if len(files) == 1:
        yield deck.path, deck
        return
    for path in files:
        slides = tuple(s for s in deck.slides if deck.slide_path(s) == path)
        sites = tuple(site for site in deck.imports if site.path == path)
        yield path, replace(deck, slides=slides, imports=sites)
