"""Where a project's files live: the nearest folder, upward from the working directory, that holds ``decks/``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError


@dataclass(frozen=True)
class Project:
    """A slidegen project rooted at ``root``."""

    root: Path

    @property
    def decks_dir(self) -> Path:
        return self.root / "decks"

    @property
    def results_path(self) -> Path:
        return self.root / "results" / "results.md"

    @property
    def runs_dir(self) -> Path:
        return self.root / "results" / "runs"

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    def deck_paths(self) -> list[Path]:
        """Every deck, numbered decks first in name order, then the others (the glossary)."""
        paths = sorted(self.decks_dir.glob("*.md"))
        numbered = [p for p in paths if p.name[:2].isdigit()]
        return numbered + [p for p in paths if p not in numbered]


def find_project(start: Path | None = None) -> Project:
    """The project containing ``start`` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "decks").is_dir():
            return Project(folder)
    raise UsageError(f"no decks/ folder in {here} or above it: run slidegen inside a slidegen project")
