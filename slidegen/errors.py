"""Errors and warnings located in a source file, printed the way a compiler prints them."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Diagnostic:
    """One problem at ``path:line:col``; ``severity`` is ``"error"`` or ``"warning"``."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"


class SlidegenError(Exception):
    """A problem in the user's input; the CLI prints it and exits 1, without a traceback."""

    def __init__(self, path: str | Path, line: int, col: int, message: str) -> None:
        self.diagnostic = Diagnostic(display_path(path), line, col, message)
        super().__init__(str(self.diagnostic))


class UsageError(Exception):
    """The command line itself is wrong; the CLI exits 2."""


def display_path(path: str | Path) -> str:
    """``path`` relative to the working directory when it lies under it, else as given."""
    try:
        return _display_in(str(path), os.getcwd())
    except OSError:  # a removed working directory
        return _display_path(path)


@functools.lru_cache(maxsize=4096)
def _display_in(path: str, cwd: str) -> str:
    """:func:`display_path` from working directory ``cwd``, found once per path (writers name the same deck file
    for every slide, and each answer costs two ``resolve`` calls)."""
    return _display_path(path)


def _display_path(path: str | Path) -> str:
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # elsewhere, a symlink loop, a removed working directory
        p = Path(path).absolute() if not p.is_absolute() else p
        try:
            return str(p.relative_to(Path.cwd()))
        except (ValueError, OSError):
            return str(path)


#: The exit code of a bug in slidegen itself (BSD's EX_SOFTWARE), apart from 1 for problems in the content.
EXIT_INTERNAL = 70


def internal_error(error: BaseException) -> str:
    """One line for a bug met in slidegen: what was raised, where, and the innermost slidegen frame
    that led there when that is elsewhere (in a library)."""
    import traceback

    def place(frame: traceback.FrameSummary) -> str:
        return f"{display_path(frame.filename)}:{frame.lineno} in {frame.name}"

    frames = traceback.extract_tb(error.__traceback__)
    package = str(Path(__file__).resolve().parent) + os.sep
    ours = [f for f in frames if f.filename.startswith(package)]
    where = f" at {place(frames[-1])}" if frames else ""
    if ours and ours[-1] is not frames[-1]:
        where += f" (from {place(ours[-1])})"
    return f"slidegen: internal error, please report: {type(error).__name__}: {error}{where}"
