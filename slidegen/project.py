"""Where a project's files live: the nearest folder, upward from the working directory, that holds ``decks/``.

Decks, results and the build folder sit at fixed places. Where the project keeps its code
comes from the ``[tool.slidegen]`` table of its ``pyproject.toml``, each key defaulting to
the layout slidegen has always assumed::

    [tool.slidegen]
    experiments = "model/experiments/ch[0-9][0-9]*.py"   # modules that register experiments
    experiment-registry = "model.experiments.registry"   # the module holding REGISTRY
    figures = "figures/ch[0-9][0-9]*.py"                 # modules that register figures
    figure-registry = "figures.registry"                 # the module holding FIGURES
    figure-style = "figures.style"                       # rc() for every figure (optional module)
    csl = "styles/apa.csl"                               # the citation style (no default: see below)

Patterns are globs relative to the project root whose first folder is a package
(``**`` crosses folders); registries and the style are dotted module names. ``csl`` is the
CSL style of every deck whose headmatter names none: a ``.csl`` file relative to the project
root, or the name of one in ``styles/``; without it, the only style in ``styles/``, else
slidegen's own author-date style (:mod:`slidegen.bind.library`).
"""

from __future__ import annotations

import difflib
import errno
import functools
import re
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path, PurePosixPath
from typing import Any

from .errors import SlidegenError, UsageError

TABLE = "tool.slidegen"


@dataclass(frozen=True)
class CodeLayout:
    """Where a project keeps the code slidegen imports (``[tool.slidegen]``)."""

    experiments: str = "model/experiments/ch[0-9][0-9]*.py"
    """Glob of the modules that register experiments, relative to the project root."""
    experiment_registry: str = "model.experiments.registry"
    """Module whose ``REGISTRY`` maps experiment ids to experiments (see :mod:`slidegen.record.contracts`)."""
    figures: str = "figures/ch[0-9][0-9]*.py"
    """Glob of the modules that register figures."""
    figure_registry: str = "figures.registry"
    """Module whose ``FIGURES`` maps figure names to figures."""
    figure_style: str = "figures.style"
    """Module whose ``rc()`` gives every figure's matplotlib settings; matplotlib's own when it does not exist."""
    csl: str = ""
    """The decks' citation style: a ``.csl`` file relative to the root, or a style's name; ``""``: none named."""
    title: str = ""
    """The series the decks make up, as the index page names it (``title = "Training a tiny decoder"``)."""

    @property
    def experiment_packages(self) -> tuple[str, ...]:
        """Top-level packages of the experiment code: what fingerprints follow and a remote worker receives."""
        return _unique([_top(self.experiments), _top_module(self.experiment_registry)])

    @property
    def figure_packages(self) -> tuple[str, ...]:
        """Top-level packages a figure's cache key follows (figure code and the experiment code it may import)."""
        return _unique([_top(self.figures), _top_module(self.figure_registry), *self.experiment_packages])

    @property
    def packages(self) -> tuple[str, ...]:
        """Every top-level package of the project that slidegen imports."""
        return _unique([*self.figure_packages, _top_module(self.figure_style)])


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

    @functools.cached_property
    def layout(self) -> CodeLayout:
        """Where the project's code lives, read from ``pyproject.toml`` on first use."""
        return read_layout(self.root / "pyproject.toml")

    def deck_paths(self) -> list[Path]:
        """Every deck a build can read, numbered decks first in name order, then the others (the glossary);
        the rest are :meth:`unusable_decks`."""
        paths = [p for p in sorted(self.decks_dir.glob("*.md")) if _usable(p) is None]
        numbered = [p for p in paths if p.name[:2].isdigit()]
        return numbered + [p for p in paths if p not in numbered]

    def unusable_decks(self) -> list[tuple[Path, str]]:
        """The ``decks/*.md`` no build can read (a symbolic link that loops or leads nowhere), each with why."""
        found = [(p, _usable(p)) for p in sorted(self.decks_dir.glob("*.md"))]
        return [(p, why) for p, why in found if why is not None]


def _usable(path: Path) -> str | None:
    """Why the deck file at ``path`` cannot be read, or None when it can."""
    try:
        path.resolve(strict=True)
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop (Python < 3.13)
        if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP:
            return "its symbolic links loop; point the link at a file or remove it"
        return f"{getattr(error, 'strerror', None) or error}; fix the link or remove the file"
    return None


def find_project(start: Path | None = None) -> Project:
    """The project containing ``start`` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "decks").is_dir():
            return Project(folder)
    raise UsageError(f"no decks/ folder in {here} or above it: run slidegen inside a slidegen project")


# ---------------------------------------------------------------------- [tool.slidegen]

_KEYS = {f.name.replace("_", "-"): f.name for f in fields(CodeLayout)}
_GLOBS = ("experiments", "figures")
_GLOB_CHARS = re.compile(r"[*?\[]")
_DECODE_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def read_layout(path: Path) -> CodeLayout:
    """The layout ``[tool.slidegen]`` of ``path`` describes; the defaults when there is no file or no table.

    A bad table (unknown key, a value of the wrong kind, a pattern outside the project)
    is a :class:`SlidegenError` at its line in ``path``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return CodeLayout()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        at = _DECODE_AT.search(message)
        line, col = (int(at[1]), int(at[2])) if at else (1, 1)
        raise SlidegenError(path, line, col, f"invalid TOML: {_DECODE_AT.sub('', message)}") from None
    table = data.get("tool", {}).get("slidegen") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return CodeLayout()
    if not isinstance(table, dict):
        message = f"{TABLE} must be a table: write [{TABLE}] and its keys below it"
        raise SlidegenError(path, _line_of(text, None), 1, message)
    values: dict[str, str] = {}
    for key, value in table.items():
        where = (path, _line_of(text, key), 1)
        if key not in _KEYS:
            close = difflib.get_close_matches(key, list(_KEYS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f"; the keys are {', '.join(_KEYS)}"
            raise SlidegenError(*where, f"unknown key '{key}' in [{TABLE}]{hint}")
        if not isinstance(value, str) or not value.strip():
            raise SlidegenError(*where, f"[{TABLE}] {key} must be a non-empty string, not {_describe(value)}")
        problem = (
            _glob_problem(value)
            if key in _GLOBS
            else _style_problem(value)
            if key == "csl"
            else None
            if key == "title"
            else _module_problem(value)
        )
        if problem:
            raise SlidegenError(*where, f"[{TABLE}] {key} = {value!r}: {problem}")
        values[_KEYS[key]] = value
    return CodeLayout(**values)


def _glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot name project modules, or None."""
    parts = PurePosixPath(pattern).parts
    if pattern.startswith("/") or "\\" in pattern or ".." in parts:
        return "write a glob relative to the project root with '/' between folders, e.g. 'model/experiments/ch*.py'"
    if len(parts) < 2 or _GLOB_CHARS.search(parts[0]) or not parts[0].isidentifier():
        return "the modules must lie in a package folder named plainly, e.g. 'model/experiments/ch*.py'"
    if not pattern.endswith(".py"):
        return "the pattern must match Python files: end it with '.py'"
    return None


def _style_problem(value: str) -> str | None:
    """Why ``value`` cannot name a CSL style, or None."""
    parts = PurePosixPath(value).parts
    if value.endswith(".csl"):
        if value.startswith("/") or "\\" in value or ".." in parts:
            return "write a .csl file relative to the project root with '/' between folders, e.g. 'styles/apa.csl'"
        return None
    if "/" in value or "\\" in value:
        return "a path names a .csl file: end it with '.csl'"
    return None


def key_line(path: Path, key: str) -> int:
    """The line of ``key`` in the ``[tool.slidegen]`` table of ``path`` (1 when it cannot be read)."""
    try:
        return _line_of(path.read_text(encoding="utf-8"), key)
    except (OSError, UnicodeDecodeError):
        return 1


def _module_problem(name: str) -> str | None:
    if all(part.isidentifier() for part in name.split(".")) and "." in name:
        return None
    return "write a dotted module name inside a package, e.g. 'model.experiments.registry'"


def _line_of(text: str, key: str | None) -> int:
    """The line of ``key`` in the ``[tool.slidegen]`` table of ``text`` (of the table itself for None)."""
    found, table = 1, ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            table = line.strip("[] ").replace(" ", "")
            if table == TABLE:
                found = number
            continue
        if key is None and table == "tool" and re.match(r"slidegen\s*=", line):
            return number
        if key is not None and table == TABLE and re.match(rf"""["']?{re.escape(key)}["']?\s*=""", line):
            return number
    return found


def _describe(value: Any) -> str:
    name = type(value).__name__
    return f"{value!r} ({'an' if name[:1] in 'aeiou' else 'a'} {name})"


def _top(pattern: str) -> str:
    return PurePosixPath(pattern).parts[0]


def _top_module(name: str) -> str:
    return name.split(".", 1)[0]


def _unique(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
