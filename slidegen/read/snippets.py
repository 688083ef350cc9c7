"""Read the code a snippet import names: the file, one region of it, dedented.

``<<< @/model/reference.py#attention`` shows the lines between the region markers
``# #region attention`` and ``# #endregion attention`` (or ``# region`` / ``// #region`` /
``<!-- #region -->`` / ``/* #region */``, as VS Code folds them; nested regions' marker lines
are dropped). ``#attention:6-13`` shows lines 6 to 13 of the region (``#:6-13`` of the file): a
long region split over two slides, each still read from the file, so code is never shrunk to
fit. ``@/`` is the project root: the nearest folder above the deck that holds
``decks/``, else the deck's own folder. A snippet must lie inside that root.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from slidegen import paths
from slidegen.paths import project_root

#: A region marker in the common comment styles: ``# #region name``, ``// region name``...
_MARKER = re.compile(
    r"^\s*(?:#|//|<!--|/\*)\s*#?(?P<end>end)?region\b"
    r"[ \t]*(?P<name>[\w.-]*?)[ \t]*(?:-->|\*/)?[ \t]*$"
)
MAX_BYTES = 1_000_000


class SnippetError(ValueError):
    """A snippet that cannot be read: the message says what to do."""


@dataclass(frozen=True)
class Snippet:
    code: str
    lang: str
    path: Path
    """The file, resolved."""


def load_snippet(written: str, region: str, deck_path: Path, line: int, col: int) -> Snippet:
    """The code of snippet ``written`` (``@/a/b.py`` or ``b.py``), region ``region`` ("" for all), written
    at ``line``, ``col`` of ``deck_path``; a path that names no readable file is a located error there."""
    path = paths.resolve(
        paths.SNIPPET, paths.Written(written, Path(deck_path), line, col), deck_path, project_root(deck_path)
    )
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SnippetError(f"snippet file '{written}' is over {MAX_BYTES:,} bytes; import a region of it")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SnippetError(f"snippet file '{written}' is not UTF-8 text") from None
    except OSError as error:  # changed since it was checked
        raise SnippetError(f"snippet file '{paths.shown(written)}' {paths.unusable(error)}") from None
    lines = text.replace("\r\n", "\n").split("\n")
    region, part = _part(region, written)
    lines = _region(lines, region, written) if region else [line for line in lines if not _MARKER.match(line)]
    if part is not None:
        first, last = part
        if last > len(lines):
            raise SnippetError(f"'{written}#{region}' has {len(lines)} lines, not {last}; name lines within it")
        lines = lines[first - 1 : last]
    code = textwrap.dedent("\n".join(lines)).strip("\n")
    return Snippet(code, path.suffix.removeprefix("."), path)


_PART = re.compile(r"(?P<region>.*):(?P<first>\d+)-(?P<last>\d+)")


def _part(region: str, written: str) -> tuple[str, tuple[int, int] | None]:
    """``name:6-13`` -> (``name``, (6, 13)); a region without a line range -> (region, None)."""
    found = _PART.fullmatch(region)
    if found is None:
        return region, None
    first, last = int(found["first"]), int(found["last"])
    if not 1 <= first <= last:
        raise SnippetError(f"lines {first}-{last} of '{written}' are not a range: write FIRST-LAST, from 1")
    return found["region"], (first, last)


def _region(lines: list[str], name: str, written: str) -> list[str]:
    """The lines inside region ``name``; an unnamed ``#endregion`` closes the innermost region."""
    start, depth = None, 0
    for i, line in enumerate(lines):
        marker = _MARKER.match(line)
        if not marker:
            continue
        if start is None:
            if not marker.group("end") and marker.group("name") == name:
                start = i
        elif not marker.group("end"):
            depth += 1
        elif marker.group("name") == name or (not marker.group("name") and depth == 0):
            return [line for line in lines[start + 1 : i] if not _MARKER.match(line)]
        else:
            depth -= 1
    if start is not None:
        raise SnippetError(f"region '{name}' of '{written}' has no '#endregion {name}' line; add one")
    names = sorted({m.group("name") for m in map(_MARKER.match, lines) if m and not m.group("end")} - {""})
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        hint = f"; did you mean '{close[0]}'?"
    elif names:
        hint = f"; its regions are {', '.join(names)}"
    else:
        hint = "; it has no regions (mark one with '# #region NAME' and '# #endregion NAME' lines)"
    raise SnippetError(f"region '{name}' not found in '{written}'{hint}")
