"""Find a project's experiments and fingerprint them, importing only what changed.

An experiment's fingerprint hashes everything its numbers depend on: its own source
(the chapter module without the *other* experiments' functions, so editing one
experiment leaves its neighbours current), every ``model/`` module it imports,
transitively, or declares with ``uses=``, its config, its seeds, and the torch and
NumPy versions. It is recorded in each measured row's source column
(``run ch05.lr_sweep 9f3c2a1e``); a row whose fingerprint differs from today's is stale.

Importing a chapter module may import torch (3 s), so what each module registers is
cached in ``build/cache/experiments.json`` under a hash of the files it imports: an
unchanged project is fingerprinted from the AST and that cache alone.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import hashlib
import importlib.metadata
import json
import math
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SlidegenError, UsageError
from .loader import (
    digest_bytes,
    digest_files,
    import_project_module,
    local_dependencies,
    module_file,
    module_name,
    project_imports,
)
from .project import Project

FINGERPRINT_FORMAT = 1
CACHE_FORMAT = 1
MODULE_GLOB = "ch[0-9][0-9]*.py"


@dataclass(frozen=True)
class ExperimentInfo:
    """A registered experiment as the runner sees it (no live objects: it may come from the cache)."""

    id: str
    description: str
    module: str
    """Dotted module name: ``model.experiments.ch05_lr``."""
    path: str
    """The module's file, relative to the project root."""
    function: str
    config: Any
    """The config in canonical JSON form (see :func:`canonical`)."""
    seeds: tuple[int, ...]
    files: dict[str, str]
    """Every file the fingerprint covers: path -> content hash (the module: its own view)."""
    fingerprint: str

    @property
    def chapter(self) -> str:
        return self.id.split(".", 1)[0]


def experiment_modules(project: Project) -> list[Path]:
    """The chapter modules ``model/experiments/chNN_*.py``, in name order."""
    return sorted((project.root / "model" / "experiments").glob(MODULE_GLOB))


def current_fingerprints(project: Project) -> dict[str, str]:
    """Experiment id -> fingerprint of the code as it is now (for ``slidegen check``)."""
    return {exp_id: info.fingerprint for exp_id, info in discover(project).items()}


def discover(project: Project) -> dict[str, ExperimentInfo]:
    """Every experiment of ``project`` by id, in id order, with today's fingerprints."""
    root = project.root.resolve()
    cache_path = project.build_dir / "cache" / "experiments.json"
    cache = _read_cache(cache_path)
    entries: dict[str, dict[str, Any]] = {}
    deps: dict[str, set[Path]] = {}
    missed: list[Path] = []
    for path in experiment_modules(project):
        rel = path.relative_to(project.root).as_posix()
        deps[rel] = local_dependencies(root, [path])
        key = digest_bytes(json.dumps(digest_files(root, deps[rel])).encode())
        cached = cache.get(rel)
        if cached and cached.get("key") == key:
            entries[rel] = cached
        else:
            entries[rel] = {"key": key, "experiments": []}
            missed.append(path)
    if missed:
        for rel, found in _import_modules(root, missed).items():
            entries[rel]["experiments"] = found
    if entries != cache:
        from .atomic import atomic_write

        atomic_write(cache_path, json.dumps({"format": CACHE_FORMAT, "modules": entries}, indent=1, sort_keys=True) + "\n")
    infos: dict[str, ExperimentInfo] = {}
    for rel, entry in entries.items():
        for exp in entry["experiments"]:
            if exp["id"] in infos:
                raise SlidegenError(rel, 1, 1, f"experiment '{exp['id']}' is registered twice: here and in {infos[exp['id']].path}")
            infos[exp["id"]] = _info(root, rel, deps[rel], exp, [e["function"] for e in entry["experiments"]])
    return dict(sorted(infos.items()))


def _info(root: Path, rel: str, deps: set[Path], exp: dict[str, Any], functions: list[str]) -> ExperimentInfo:
    module_path = root / rel
    used = set(deps)
    for use in exp["uses"]:
        target = root / use if "/" in use else module_file(root, use)  # a path, or model.x
        if target is None or not target.is_file():
            raise SlidegenError(rel, 1, 1, f"experiment '{exp['id']}' uses '{use}', which names no file or model module")
        used |= local_dependencies(root, [target])
    files = digest_files(root, used - {module_path.resolve()})
    files[rel] = digest_bytes(_own_view(module_path, exp["function"], functions).encode())
    files = dict(sorted(files.items()))
    seeds = tuple(exp["seeds"])
    return ExperimentInfo(
        id=exp["id"],
        description=exp["description"],
        module=module_name(root, module_path),
        path=rel,
        function=exp["function"],
        config=exp["config"],
        seeds=seeds,
        files=files,
        fingerprint=fingerprint(exp["id"], files, exp["config"], seeds, library_versions()),
    )


def fingerprint(exp_id: str, files: Mapping[str, str], config: Any, seeds: tuple[int, ...], versions: Mapping[str, str]) -> str:
    """Eight hex digits of SHA-256 over everything an experiment's numbers depend on."""
    payload = {
        "format": FINGERPRINT_FORMAT,
        "id": exp_id,
        "files": dict(files),
        "config": config,
        "seeds": list(seeds),
        "versions": dict(versions),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]


@functools.lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Installed torch and NumPy versions, read from package metadata (nothing is imported)."""
    out = {}
    for name in ("numpy", "torch"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "none"
    return out


def canonical(obj: Any) -> Any:
    """``obj`` as plain JSON data, the same on every run: dataclasses become dicts with their class name."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return {"__class__": type(obj).__name__, **fields}
    if isinstance(obj, Mapping):
        return {str(k): canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((canonical(v) for v in obj), key=repr)
    if isinstance(obj, enum.Enum):
        return f"{type(obj).__name__}.{obj.name}"
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if hasattr(obj, "item") and getattr(obj, "ndim", None) == 0:  # NumPy or torch scalar
        return canonical(obj.item())
    return repr(obj)


def _own_view(path: Path, function: str, functions: list[str]) -> str:
    """The module's text without the other experiments' top-level functions (decorators included)."""
    text = path.read_text(encoding="utf-8")
    others = set(functions) - {function}
    if not others:
        return text
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in others:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            drop.update(range(start - 1, node.end_lineno or node.lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _import_modules(root: Path, paths: list[Path]) -> dict[str, list[dict[str, Any]]]:
    """Import chapter modules; return what each registers, as cacheable data."""
    names = {module_name(root, path): path.relative_to(root).as_posix() for path in paths}
    found: dict[str, list[dict[str, Any]]] = {rel: [] for rel in names.values()}
    with project_imports(root):
        try:
            registry = import_project_module(root, "model.experiments.registry")
        except ModuleNotFoundError as error:
            raise UsageError(f"{root}/model/experiments/registry.py is missing: {error}") from None
        for name, rel in names.items():
            try:
                import_project_module(root, name)
            except (SlidegenError, UsageError):
                raise
            except Exception as error:
                raise _located(error, root / rel) from error
        for exp in registry.REGISTRY.values():
            rel = names.get(exp.module)
            if rel is None:
                continue
            found[rel].append(
                {
                    "id": exp.id,
                    "description": exp.description,
                    "function": exp.fn.__name__,
                    "config": canonical(exp.config),
                    "seeds": list(exp.seeds),
                    "uses": list(exp.uses),
                }
            )
    return found


def _located(error: BaseException, path: Path) -> SlidegenError:
    """An import failure as ``file:line: error``, at the deepest line of ``path`` in the traceback."""
    if isinstance(error, SyntaxError) and error.filename:
        return SlidegenError(error.filename, error.lineno or 1, error.offset or 1, f"syntax error: {error.msg}")
    line = 1
    for frame in traceback.extract_tb(error.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno or 1
    return SlidegenError(path, line, 1, f"cannot import experiments: {type(error).__name__}: {error}")


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {}
    modules = data.get("modules")
    return modules if isinstance(modules, dict) else {}
