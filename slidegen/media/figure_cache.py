"""The figure registry of a build, remembered in ``build/cache/figures.json`` while the figure code's bytes stay.

Finding which figures exist (:func:`slidegen.media.figures.discover_figures`) imports every figure
module, and with them NumPy and the model code, then reads the imports of each to hash what
it depends on: about a second on the real project, paid by every build that shows a figure
even when each figure is already drawn. What it finds depends only on the Python files of
the figure packages (``[tool.slidegen]``), the layout naming them and slidegen itself; so it
is kept on disk under the digest of those, and found again by hashing them (milliseconds).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

from slidegen import digests
from slidegen.atomic import atomic_write
from slidegen.media.figures import FigureInfo, FigureRenderer, discover_figures
from slidegen.project import Project

#: Bumped when what is kept changes.
CACHE_FORMAT = 1
CACHE_NAME = "figures.json"


def code_digest(project: Project) -> str:
    """What the registry is made from: every Python file of the figure packages (by bytes), where the project
    is, the layout naming them and slidegen's own files."""
    root = project.root
    files = sorted(
        path
        for package in project.layout.figure_packages
        for path in (root / package).rglob("*.py")
        if "__pycache__" not in path.parts
    )
    payload = {
        "format": CACHE_FORMAT,
        "root": str(root.resolve()),
        "layout": repr(project.layout),
        "slidegen": digests.package_digest(),
        "files": {path.relative_to(root).as_posix(): digests.digest(path.read_bytes()) for path in files},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def cached_figures(project: Project, cache_dir: Path) -> dict[str, FigureInfo]:
    """:func:`discover_figures` of ``project``, from ``cache_dir/figures.json`` when made from the same code."""
    key = code_digest(project)
    path = Path(cache_dir) / CACHE_NAME
    kept = _load(path, key)
    if kept is not None:
        return kept
    found = discover_figures(project)  # raises on a broken registry: nothing is kept
    data = {"key": key, "figures": {name: _plain(info) for name, info in found.items()}}
    with contextlib.suppress(OSError):  # a read-only build folder: found again next time
        atomic_write(path, json.dumps(data, sort_keys=True) + "\n")
    return found


def _plain(info: FigureInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "path": str(info.path),
        "line": info.line,
        "runs": None if info.runs is None else list(info.runs),
        "code": info.code,
    }


def _load(path: Path, key: str) -> dict[str, FigureInfo] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return {
            name: FigureInfo(
                str(f["name"]),
                Path(f["path"]),
                int(f["line"]),
                None if f["runs"] is None else tuple(str(r) for r in f["runs"]),
                {str(k): str(v) for k, v in f["code"].items()},
            )
            for name, f in data["figures"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


class CachedFigureRenderer(FigureRenderer):
    """A :class:`FigureRenderer` whose registry comes from :func:`cached_figures` (figures are drawn as before)."""

    def __init__(
        self, project: Project, runs_dir: Path | None = None, out_dir: Path | None = None, cache_dir: Path | None = None
    ) -> None:
        super().__init__(project, runs_dir, out_dir)
        self.cache_dir = cache_dir or project.build_dir / "cache"
        self._cached: dict[str, FigureInfo] | None = None

    @property
    def figures(self) -> dict[str, FigureInfo]:
        if self._cached is None:
            self._cached = cached_figures(self.project, self.cache_dir)
        return self._cached
