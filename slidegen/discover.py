"""Find a project's experiments and fingerprint them, importing only what changed.

An experiment's fingerprint hashes everything in the project's own files that decides
its numbers: its own source (the chapter module without the *other* experiments'
functions, so editing one experiment leaves its neighbours current), every module of
the project's experiment packages (``model/``) it imports, transitively, or declares
with ``uses=``, its config and its seeds. It is recorded in each measured row's source
column (``run ch05.lr_sweep 9f3c2a1e``); a row whose fingerprint differs from today's is
stale. The Python, NumPy and torch versions a run used (:func:`environment`) are recorded
beside it (``results/runs/<id>.json`` and results.md's ``runs`` section), not hashed: a
library upgrade makes ``slidegen check`` warn, not fail.

A fingerprint is the same on every machine: files are hashed by content under their
path relative to the project root, and every float of the config is hashed at 12
significant digits (:func:`stable`), so a ladder such as ``np.geomspace(1e-3, 1e2, 161)``,
whose last bit differs between CPUs, hashes alike on all of them. The modules are those
``[tool.slidegen]`` names (see :mod:`slidegen.project`); the registry is checked against
:mod:`slidegen.contracts` as they are imported.

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
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import contracts
from .errors import SlidegenError
from .loader import (
    digest_bytes,
    digest_files,
    load_module,
    local_dependencies,
    module_file,
    module_name,
    project_imports,
)
from .project import Project

#: 3: floats hashed at :data:`FLOAT_DIGITS` significant digits (format 2 hashed them in full).
FINGERPRINT_FORMAT = 3
#: Significant digits a config's floats are hashed at: far above any setting's precision,
#: far below the last-bit differences of arithmetic between CPUs.
FLOAT_DIGITS = 12
CACHE_FORMAT = 2


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
    line: int
    """The line the experiment is defined at (its decorator), for error messages."""
    config: Any
    """The config in canonical JSON form (see :func:`canonical`)."""
    seeds: tuple[int, ...]
    files: dict[str, str]
    """Every file the fingerprint covers: path -> content hash (the module: its own view)."""
    fingerprint: str

    @property
    def chapter(self) -> str:
        return self.id.split(".", 1)[0]

    def accepts(self, recorded: str | None) -> bool:
        """True when a recorded fingerprint is today's (a prefix of it counts)."""
        return recorded is not None and same_fingerprint(recorded, self.fingerprint)


def same_fingerprint(recorded: str, current: str) -> bool:
    """Fingerprints match when one is a prefix of the other (results.md may keep a short form)."""
    return bool(recorded) and bool(current) and (current.startswith(recorded) or recorded.startswith(current))


def experiment_modules(project: Project) -> list[Path]:
    """The modules ``[tool.slidegen] experiments`` matches (``model/experiments/chNN_*.py``), in name order."""
    return sorted(path for path in project.root.glob(project.layout.experiments) if path.is_file())


def current_fingerprints(project: Project) -> dict[str, str]:
    """Experiment id -> fingerprint of the code as it is now (for ``slidegen check``)."""
    return {exp_id: info.fingerprint for exp_id, info in discover(project).items()}


def discover(project: Project) -> dict[str, ExperimentInfo]:
    """Every experiment of ``project`` by id, in id order, with today's fingerprints."""
    root = project.root.resolve()
    layout = project.layout
    packages = layout.experiment_packages
    cache_path = project.build_dir / "cache" / "experiments.json"
    cache = _read_cache(cache_path)
    entries: dict[str, dict[str, Any]] = {}
    deps: dict[str, set[Path]] = {}
    missed: list[Path] = []
    for path in (found.resolve() for found in experiment_modules(project)):
        rel = path.relative_to(root).as_posix()
        deps[rel] = local_dependencies(root, [path], packages)
        key = digest_bytes(json.dumps(digest_files(root, deps[rel])).encode())
        cached = cache.get(rel)
        if cached and cached.get("key") == key:
            entries[rel] = cached
        else:
            entries[rel] = {"key": key, "experiments": []}
            missed.append(path)
    if missed:
        for rel, found in _import_modules(root, missed, layout.experiment_registry, layout.packages).items():
            entries[rel]["experiments"] = found
    if entries != cache:
        from .atomic import atomic_write

        text = json.dumps({"format": CACHE_FORMAT, "modules": entries}, indent=1, sort_keys=True)
        atomic_write(cache_path, text + "\n")
    infos: dict[str, ExperimentInfo] = {}
    for rel, entry in entries.items():
        for exp in entry["experiments"]:
            if exp["id"] in infos:
                other = infos[exp["id"]]
                message = f"experiment '{exp['id']}' is registered twice: here and in {other.path}:{other.line}"
                raise SlidegenError(rel, exp["line"], 1, message)
            functions = [e["function"] for e in entry["experiments"]]
            infos[exp["id"]] = _info(root, rel, deps[rel], exp, functions, packages)
    return dict(sorted(infos.items()))


def _info(
    root: Path, rel: str, deps: set[Path], exp: dict[str, Any], functions: list[str], packages: tuple[str, ...]
) -> ExperimentInfo:
    module_path = root / rel
    used = set(deps)
    for use in exp["uses"]:
        target = root / use if "/" in use else module_file(root, use)  # a path, or model.x
        if target is None or not target.is_file():
            message = f"experiment '{exp['id']}' uses '{use}', which names no file or project module"
            raise SlidegenError(rel, exp["line"], 1, message)
        used |= local_dependencies(root, [target], packages)
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
        line=exp["line"],
        config=exp["config"],
        seeds=seeds,
        files=files,
        fingerprint=fingerprint(exp["id"], files, exp["config"], seeds),
    )


def fingerprint(exp_id: str, files: Mapping[str, str], config: Any, seeds: tuple[int, ...]) -> str:
    """Eight hex digits of SHA-256 over everything an experiment's numbers depend on."""
    payload: dict[str, Any] = {
        "format": FINGERPRINT_FORMAT,
        "id": exp_id,
        "files": dict(files),
        "config": stable(config),
        "seeds": list(seeds),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]


def stable(data: Any) -> Any:
    """Canonical JSON ``data`` with every float at :data:`FLOAT_DIGITS` significant digits and every
    subnormal (and -0.0) as 0.0; ints and the strings of non-finite floats as they are. What a
    fingerprint hashes of a config."""
    if isinstance(data, float):
        return 0.0 if abs(data) < sys.float_info.min else float(f"{data:.{FLOAT_DIGITS}g}")
    if isinstance(data, dict):
        return {key: stable(value) for key, value in data.items()}
    if isinstance(data, list):
        return [stable(value) for value in data]
    return data


#: The libraries whose versions are recorded beside each run.
LIBRARIES = ("numpy", "torch")


@functools.lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Installed torch and NumPy versions, read from package metadata (nothing is imported)."""
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "none"
    return out


def environment() -> dict[str, str]:
    """What a run records beside its fingerprint: the Python, NumPy and torch versions."""
    return {"python": platform.python_version(), **library_versions()}


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


def _import_modules(
    root: Path, paths: list[Path], registry_name: str, packages: tuple[str, ...]
) -> dict[str, list[dict[str, Any]]]:
    """Import the experiment modules; check the registry against :mod:`slidegen.contracts`; return what
    each module registers, as cacheable data."""
    names = {module_name(root, path): path.relative_to(root).as_posix() for path in paths}
    found: dict[str, list[dict[str, Any]]] = {rel: [] for rel in names.values()}
    with project_imports(root, packages):
        registry = load_module(root, registry_name, "the experiment registry")
        for name in names:
            load_module(root, name, "experiments")
        for key, exp in contracts.registry_mapping(registry, "REGISTRY", "experiment").items():
            contracts.check_experiment(key, exp, registry)
            rel = names.get(exp.module)
            if rel is None:
                continue
            site = contracts.site_of(exp.fn)
            found[rel].append(
                {
                    "id": exp.id,
                    "description": exp.description,
                    "function": getattr(exp.fn, "__name__", ""),
                    "line": site.line if site and site.path.resolve() == (root / rel).resolve() else 1,
                    "config": canonical(exp.config),
                    "seeds": list(exp.seeds),
                    "uses": list(exp.uses),
                }
            )
    return found


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {}
    modules = data.get("modules")
    return modules if isinstance(modules, dict) else {}
