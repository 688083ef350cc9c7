"""Where a path written in a deck leads: the one check behind ``src:`` imports, ``<<<`` snippets and pictures.

An author names a file three ways: ``src: ./part.md`` (slides to import, :mod:`slidegen.read.imports`),
``<<< @/model/x.py`` (code to show, :mod:`slidegen.read.snippets`) and a picture (``![](img/x.png)``,
``image:``, ``background:``, ``<img src>``: :mod:`slidegen.media.images`). :func:`resolve` turns what was
written into the file it names, links followed, or stops with an error at the place that wrote it:
the path is remote, leads outside the project, names no file, names one that cannot be read, or
cannot be used at all (too long for the file system, a loop of symbolic links, a NUL character).
Every ``OSError`` the file system raises on the way is one of these errors, so no path an author
writes ends in an internal error.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

from .errors import SlidegenError

#: How many characters of a path a message shows whole; a longer one is shown by its two ends.
SHOWN = 120


@dataclass(frozen=True)
class Kind:
    """What a path names, as its messages say it, and where a relative one starts."""

    noun: str
    """How messages name the reference: ``image``, ``snippet file``, ``src:``."""
    rule: str
    """How a path is read, said when it names no file."""
    prefix: str = ""
    """A start (``@/``, ``/``) that names a fixed folder: the project (``to_root``) or the deck's folder."""
    to_root: bool = False
    from_holder: bool = False
    """Other paths start from the folder of the file that holds them (else from the deck's folder)."""


IMPORT = Kind(
    "src:",
    "a path starting with / is relative to the deck's folder, others to the file that imports it",
    prefix="/",
    from_holder=True,
)
SNIPPET = Kind(
    "snippet file",
    "'@/' names the project root, other paths are relative to the deck",
    prefix="@/",
    to_root=True,
    from_holder=True,
)
PICTURE = Kind("image", "check the path, relative to the deck")


@dataclass(frozen=True)
class Written:
    """A path as its author wrote it, and where: the file that holds it, its 1-based line and column."""

    text: str
    file: Path
    line: int
    col: int


def project_root(deck_path: Path) -> Path:
    """The folder ``@/`` names for a deck: the nearest ancestor that holds ``decks/``."""
    folder = Path(deck_path).resolve().parent
    for parent in (folder, *folder.parents):
        if (parent / "decks").is_dir():
            return parent
    return folder


def allowed_root(deck_path: Path, root: Path | None) -> Path:
    """The folder a deck's pictures must lie in: the project ``root``, or the deck's folder when the deck is
    outside it (resolved)."""
    folder = Path(deck_path).parent.resolve()
    if root is not None and folder.is_relative_to(root.resolve()):
        return root.resolve()
    return folder


def in_project(path: str | Path, root: Path) -> str | None:
    """``path`` as the project names it (``decks/01-x.md``: relative to ``root``, both resolved, ``/`` between
    parts), or None when it lies outside ``root`` (or cannot be resolved: a symlink loop)."""
    try:
        resolved, base = Path(path).resolve(), Path(root).resolve()
    except (OSError, RuntimeError):
        return None
    return resolved.relative_to(base).as_posix() if resolved.is_relative_to(base) else None


def shown(text: str | Path) -> str:
    """``text`` as a message quotes it: whole, or by its two ends when it is over :data:`SHOWN` characters."""
    text = str(text)
    return text if len(text) <= SHOWN else f"{text[:80]}...{text[-30:]}"


def resolve(kind: Kind, written: Written, deck: Path, root: Path) -> Path:
    """The readable file ``written`` names for the deck at ``deck``, resolved, inside ``root`` (resolved);
    a :class:`SlidegenError` at ``written``'s place saying what to do if there is none."""

    def fail(problem: str) -> SlidegenError:
        return SlidegenError(written.file, written.line, written.col, f"{kind.noun} '{shown(written.text)}' {problem}")

    text = written.text
    if "://" in text:
        raise fail("is remote: decks work offline, so save the file beside the deck")
    if kind.prefix and text.startswith(kind.prefix):
        base, rest = (root if kind.to_root else Path(deck).parent), text[len(kind.prefix) :].lstrip("/")
    else:
        base, rest = (written.file if kind.from_holder else Path(deck)).parent, text
    try:
        path = (base / rest).resolve()
        if not path.is_relative_to(root):
            raise fail(f"resolves to {shown(path)}, outside the project ({root}); a deck may only use files inside it")
        if not path.is_file():
            raise fail(f"not found (looked for {shown(path)}); {kind.rule}")
        with path.open("rb"):
            pass
    except (OSError, ValueError, RuntimeError) as error:  # RuntimeError: pathlib's symlink loop (Python < 3.13)
        raise fail(unusable(error)) from None
    return path


def unusable(error: Exception) -> str:
    """Why the file system would not take a path, and what to do, for a message naming the path."""
    code = getattr(error, "errno", None)
    if isinstance(error, RuntimeError) or code == errno.ELOOP:
        return "cannot be used: its symbolic links loop (Too many levels of symbolic links); point them at a file"
    if code == errno.ENAMETOOLONG:
        return "cannot be used: the file system refuses a name this long (File name too long); shorten the path"
    if code in (errno.EACCES, errno.EPERM):
        return "cannot be read: Permission denied; make the file (and its folders) readable, or name another file"
    if isinstance(error, ValueError):
        if "null" in str(error):
            return "cannot be used: a path cannot hold a NUL character; remove it"
        return f"cannot be used as a file name ({error}); write the path another way"
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return f"cannot be read: {reason}; check the path and the file"
