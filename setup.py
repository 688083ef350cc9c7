"""Build hook: the wheel and the sdist carry the reveal.js, KaTeX (and Mermaid) files the pages load.

They are copied from ``node_modules`` (``npm ci``) into ``slidegen/_vendor/node_modules`` of the
build, never into the source tree or git. The list is :data:`slidegen.media.assets.BUNDLED`, read as a
literal so this file imports nothing of slidegen. An sdist carries the copy, so a wheel built from
it (as ``python -m build`` does) finds the files there.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
ASSETS = HERE / "slidegen" / "media" / "assets.py"
VENDOR = Path("slidegen") / "_vendor" / "node_modules"


def _literal(name: str) -> tuple:
    """A module-level literal of slidegen/media/assets.py (``BUNDLED``, ``OPTIONAL``, ``_VENDOR_FILES``)."""
    for node in ast.parse(ASSETS.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise SystemExit(f"setup.py: {ASSETS} defines no {name}")


def _sources() -> Path:
    """Where the files come from: the project's node_modules, else the copy an sdist carries."""
    for folder in (HERE / "node_modules", HERE / VENDOR):
        if (folder / "reveal.js" / "dist" / "reveal.js").is_file():
            return folder
    raise SystemExit("setup.py: the wheel carries reveal.js and KaTeX from node_modules: run `npm ci` first")


def vendor_files() -> list[str]:
    """Every bundled file, relative to node_modules, sorted."""
    source = _sources()
    globs = {*_literal("BUNDLED"), *(path for path, _ in _literal("_VENDOR_FILES"))}
    optional = set(_literal("OPTIONAL"))
    found: set[str] = set()
    for pattern in sorted(globs):
        matches = [p.relative_to(source).as_posix() for p in source.glob(pattern) if p.is_file()]
        if not matches and pattern not in optional:
            raise SystemExit(f"setup.py: node_modules has no {pattern}: run `npm ci`")
        found.update(matches)
    return sorted(found)


def _copy(files: list[str], target: Path) -> None:
    source = _sources()
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target / rel)


class BuildPy(build_py):
    """``build_py`` plus the vendor files in ``build/lib/slidegen/_vendor``."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):  # `pip install -e .` reads the checkout's node_modules
            _copy(vendor_files(), Path(self.build_lib) / VENDOR)


class Sdist(sdist):
    """``sdist`` plus the vendor files, so a wheel built from it needs no node_modules."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        _copy(vendor_files(), Path(base_dir) / VENDOR)


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
