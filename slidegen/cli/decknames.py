"""Decks named on the command line: by path, by file name or by number (``slidegen build 01``).

:func:`resolve_decks` turns what a user typed into deck files, each once, in the order
given; a name that matches nothing (or several decks) is a :class:`UsageError` (exit 2)
with the closest names.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from slidegen.errors import UsageError
from slidegen.project import Project


def resolve_decks(project: Project, names: Sequence[str]) -> list[Path]:
    """The deck file of each name (duplicates dropped, first mention kept)."""
    out: dict[Path, Path] = {}
    for name in names:
        path = resolve_deck(project, name)
        out.setdefault(path.resolve(), path)
    return list(out.values())


def resolve_deck(project: Project, name: str) -> Path:
    """One deck: a path to a file; else a file in ``decks/`` (``01-training-loop.md``, ``01-training-loop``,
    ``training-loop``); else a number (``1``, ``01``) naming the deck whose file starts with it."""
    given = Path(name)
    if given.is_file():
        return given
    decks = project.deck_paths()
    for path in decks:
        if name in (path.name, path.stem):
            return path
    number = _number(name)
    matches = [p for p in decks if number is not None and _number(p.name.split("-", 1)[0]) == number]
    if not matches:
        matches = [p for p in decks if p.stem.split("-", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(f"deck '{name}' is ambiguous: {', '.join(p.name for p in matches)}")
    close = difflib.get_close_matches(name, [p.name for p in decks] + [p.stem for p in decks], n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return _missing(name, hint)


def _missing(name: str, hint: str) -> Path:
    raise UsageError(f"no such deck: {name}{hint}; `slidegen list decks` shows them")


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 4 else None
