"""Import a project's own packages (``model/``, ``figures/``), and find what a file imports.

``slidegen`` is installed once but serves any checkout or copy of a project, so the
project's packages (named by its ``[tool.slidegen]`` layout) must come from the project
being run, not from wherever slidegen was installed. :func:`project_imports` makes that
so for the length of a ``with`` block and then restores ``sys.modules`` as it was;
:func:`load_module` turns a module that fails to import into a located error.

:func:`local_dependencies` follows ``import`` statements through the AST, without
running anything, to list the project files a module uses (for the import cache of
:mod:`slidegen.record.discover`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import sys
import threading
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from slidegen.errors import SlidegenError, UsageError

_LOCK = threading.RLock()


@contextmanager
def project_imports(root: Path, packages: Iterable[str]) -> Iterator[None]:
    """Within the block, ``import model...`` (for each of ``packages``) loads ``root``'s files.

    Any modules of those packages loaded before are set aside and put back afterwards,
    so a test process can run a temporary project without disturbing its own imports.
    Blocks are serialised (one project at a time per process).
    """
    root = root.resolve()
    tops = frozenset(packages)

    def _is_project_module(name: str) -> bool:
        return name.split(".", 1)[0] in tops

    with _LOCK:
        saved = {name: module for name, module in sys.modules.items() if _is_project_module(name)}
        for name in saved:
            del sys.modules[name]
        sys.path.insert(0, str(root))
        importlib.invalidate_caches()
        try:
            yield
        finally:
            if str(root) in sys.path:
                sys.path.remove(str(root))
            for name in [name for name in sys.modules if _is_project_module(name)]:
                del sys.modules[name]
            sys.modules.update(saved)


def import_project_module(root: Path, name: str) -> ModuleType:
    """Import ``name`` (inside :func:`project_imports`), checking it came from ``root``."""
    package = name.split(".", 1)[0]
    if not (root / package / "__init__.py").is_file():
        raise UsageError(f"{root / package} is not a package: add an empty __init__.py")
    module = importlib.import_module(name)
    origin = getattr(module, "__file__", None)
    if origin is None or not Path(origin).resolve().is_relative_to(root.resolve()):
        raise UsageError(f"module {name} was imported from {origin}, not from the project at {root}")
    return module


def load_module(root: Path, name: str, what: str) -> ModuleType:
    """:func:`import_project_module`, with a failure as a :class:`SlidegenError` in the file that failed.

    ``what`` says what the module is in messages (``the experiment registry``). A module
    that does not exist is a :class:`UsageError` naming the file to create.
    """
    path = module_file(root, name)
    if path is None:
        where = root.joinpath(*name.split(".")).with_suffix(".py")
        raise UsageError(
            f"{what} {name} is missing: create {where}, or name another module in [tool.slidegen] of pyproject.toml"
        )
    try:
        return import_project_module(root, name)
    except (SlidegenError, UsageError):
        raise
    except Exception as error:
        raise located(error, path, f"cannot import {what}: {type(error).__name__}: {error}") from error


def located(error: BaseException, path: Path, message: str, line: int = 1) -> SlidegenError:
    """``message`` at the deepest line of ``path`` in ``error``'s traceback (else at ``line``).

    A syntax error is reported where it is, in whichever file it is.
    """
    if isinstance(error, SyntaxError) and error.filename:
        return SlidegenError(error.filename, error.lineno or 1, error.offset or 1, f"syntax error: {error.msg}")
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno or line
    return SlidegenError(path, line, 1, message)


def module_name(root: Path, path: Path) -> str:
    """``model.experiments.ch01_loop`` for ``ROOT/model/experiments/ch01_loop.py``."""
    parts = list(path.resolve().relative_to(root.resolve()).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_file(root: Path, name: str) -> Path | None:
    """The file of project module ``name`` (a package's ``__init__.py``), if it exists."""
    base = root.joinpath(*name.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(path: Path, name: str) -> Iterator[str]:
    """Every module name an ``import`` in ``path`` (module ``name``) may load, at any depth."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_bytes(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"


def local_dependencies(root: Path, files: Iterable[Path], packages: Iterable[str]) -> set[Path]:
    """``files`` and every file of ``packages`` under ``root`` they import, transitively.

    A module's parent packages' ``__init__.py`` count too (importing runs them).
    Imports are found statically, including those inside functions; ``importlib``
    calls are not seen (declare those files instead).
    """
    root = root.resolve()
    tracked = tuple(packages)
    seen: set[Path] = set()
    todo = [Path(f).resolve() for f in files]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        name = module_name(root, path) if path.is_relative_to(root) else ""
        if path.suffix != ".py":
            continue
        parents = name.split(".")[:-1]
        candidates = [".".join(parents[: i + 1]) for i in range(len(parents))]
        candidates.extend(_imported_names(path, name))
        for candidate in candidates:
            if candidate.split(".", 1)[0] not in tracked:
                continue
            found = module_file(root, candidate)
            if found is not None:
                todo.append(found.resolve())
            # `import model.a.b` also runs model/__init__.py and model/a/__init__.py
            parts = candidate.split(".")
            for i in range(1, len(parts)):
                init = module_file(root, ".".join(parts[:i]))
                if init is not None:
                    todo.append(init.resolve())
    return seen


def digest_bytes(data: bytes) -> str:
    """A short content hash (16 hex digits of SHA-256)."""
    return hashlib.sha256(data).hexdigest()[:16]


def digest_files(root: Path, paths: Iterable[Path]) -> dict[str, str]:
    """``{path relative to root: content hash}``, sorted by path."""
    out = {path.resolve().relative_to(root.resolve()).as_posix(): digest_bytes(path.read_bytes()) for path in paths}
    return dict(sorted(out.items()))
