"""Find a project's experiments and fingerprint them from their source, importing nothing.

An experiment's fingerprint (format 5) hashes what it reaches (:mod:`slidegen.record.reach`):
its decorated function with its decorator call (config, seeds, quick), and every
definition of the project's experiment packages (``model/``) that these name,
transitively; each by its name and source text, not by its module, so moving a helper
to another module, or deleting one of two identical copies, leaves it as it is, and
editing anything an experiment reaches changes it. Non-Python files an experiment
declares with ``uses=`` are hashed by content. The config and the seeds are values of
code the fingerprint covers, so the same fingerprint means the same config; a run also
records its config, and ``slidegen run`` reruns where today's differs at
:data:`FLOAT_DIGITS` significant digits (a config read from outside the code).

The fingerprint is recorded in each measured row's source column (``run ch05.lr_sweep
9f3c2a1e``); a row whose fingerprint differs from today's is stale. Telling that reads
the syntax tree alone (:func:`fingerprints`), so ``slidegen build`` and ``check`` need
neither torch nor the experiments' imports. The Python, NumPy and torch versions a run
used (:func:`environment`) are recorded beside it, not hashed: a library upgrade makes
``slidegen check`` warn, not fail. A fingerprint is the same on every machine: it hashes
source text and files by content under their paths relative to the project root.

Running needs the live experiments (:func:`discover` imports the chapter modules, 3 s
with torch); what each module registers is cached in ``build/cache/experiments.json``
under a hash of the files it imports. The modules are those ``[tool.slidegen]`` names
(see :mod:`slidegen.project`); the registry is checked against :mod:`slidegen.record.contracts`
as they are imported, and against what the source declares.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib.metadata
import json
import math
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slidegen.errors import SlidegenError
from slidegen.project import Project
from slidegen.record import contracts
from slidegen.record.loader import (
    digest_bytes,
    digest_files,
    load_module,
    local_dependencies,
    module_name,
    project_imports,
)
from slidegen.record.reach import Found, Index, Resolver, digest_reach, find_experiments, reach_of

#: 5: what the experiment reaches, each unit by its syntax without docstrings (format 4 hashed
#: its source text; format 3 whole modules, its config and seeds, which needed importing).
FINGERPRINT_FORMAT = 5
#: Significant digits a config's floats are compared at (:func:`stable`): far above any
#: setting's precision, far below the last-bit differences of arithmetic between CPUs.
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
    """What the fingerprint covers, for people: ``path:name`` of each definition, or a declared file -> hash."""
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


@dataclass(frozen=True)
class Fingerprint:
    """An experiment as its source declares it, and today's fingerprint (no import)."""

    found: Found
    fingerprint: str
    files: dict[str, str]
    """What it covers, for people (see :attr:`ExperimentInfo.files`)."""
    declared: tuple[str, ...]
    """The non-Python files it declared with ``uses=``."""


def fingerprints(project: Project) -> dict[str, Fingerprint]:
    """Every experiment the source declares, by id, with today's fingerprint: from the syntax tree alone.

    Raises :class:`SlidegenError` for a module that does not parse, an id that is not a string
    literal, an experiment declared twice or a ``uses=`` naming nothing.
    """
    root = project.root.resolve()
    index = Index(root, project.layout.experiment_packages)
    resolver = Resolver(index)
    found: dict[str, Found] = {}
    for path in experiment_modules(project):
        for exp in find_experiments(index, module_name(root, path.resolve()), project.layout.experiment_registry):
            if exp.id in found:
                other = found[exp.id]
                message = f"experiment '{exp.id}' is registered twice: here and in {other.path}:{other.line}"
                raise SlidegenError(exp.path, exp.line, 1, message)
            found[exp.id] = exp
    out = {}
    for exp_id, exp in sorted(found.items()):
        reach = reach_of(resolver, exp)
        fingerprint = digest_reach(exp_id, reach, FINGERPRINT_FORMAT)
        out[exp_id] = Fingerprint(exp, fingerprint, reach.covered(), tuple(reach.files))
    return out


def current_fingerprints(project: Project) -> dict[str, str]:
    """Experiment id -> fingerprint of the code as it is now (no import)."""
    return {exp_id: fp.fingerprint for exp_id, fp in fingerprints(project).items()}


def discover(project: Project) -> dict[str, ExperimentInfo]:
    """Every experiment of ``project`` by id, in id order, live: its config and seeds come from importing
    the chapter modules (or the cache); its fingerprint from :func:`fingerprints`."""
    root = project.root.resolve()
    layout = project.layout
    packages = layout.experiment_packages
    cache_path = project.build_dir / "cache" / "experiments.json"
    cache = _read_cache(cache_path)
    entries: dict[str, dict[str, Any]] = {}
    missed: list[Path] = []
    for path in (found.resolve() for found in experiment_modules(project)):
        rel = path.relative_to(root).as_posix()
        key = digest_bytes(json.dumps(digest_files(root, local_dependencies(root, [path], packages))).encode())
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
        from slidegen.atomic import atomic_write

        text = json.dumps({"format": CACHE_FORMAT, "modules": entries}, indent=1, sort_keys=True)
        atomic_write(cache_path, text + "\n")
    declared = fingerprints(project)
    infos: dict[str, ExperimentInfo] = {}
    for rel, entry in entries.items():
        for exp in entry["experiments"]:
            if exp["id"] in infos:
                other = infos[exp["id"]]
                message = f"experiment '{exp['id']}' is registered twice: here and in {other.path}:{other.line}"
                raise SlidegenError(rel, exp["line"], 1, message)
            static = declared.get(exp["id"])
            if static is None or static.found.function != exp["function"] or static.found.path != rel:
                message = (
                    f"experiment '{exp['id']}' is registered in a way slidegen cannot read without "
                    'importing: decorate a top-level function with @experiment("ID", ...), the id a '
                    "string literal"
                )
                raise SlidegenError(rel, exp["line"], 1, message)
            infos[exp["id"]] = ExperimentInfo(
                id=exp["id"],
                description=exp["description"],
                module=module_name(root, root / rel),
                path=rel,
                function=exp["function"],
                line=exp["line"],
                config=exp["config"],
                seeds=tuple(exp["seeds"]),
                files=static.files,
                fingerprint=static.fingerprint,
            )
    return dict(sorted(infos.items()))


def same_config(recorded: Any, current: Any) -> bool:
    """True when two canonical configs agree at :data:`FLOAT_DIGITS` significant digits (what a run
    recorded against today's: a config may read something outside the code the fingerprint covers)."""
    return bool(json.dumps(stable(recorded), sort_keys=True) == json.dumps(stable(current), sort_keys=True))


def stable(data: Any) -> Any:
    """Canonical JSON ``data`` with every float at :data:`FLOAT_DIGITS` significant digits and every
    subnormal (and -0.0) as 0.0; ints and the strings of non-finite floats as they are. What
    :func:`same_config` compares."""
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


def _import_modules(
    root: Path, paths: list[Path], registry_name: str, packages: tuple[str, ...]
) -> dict[str, list[dict[str, Any]]]:
    """Import the experiment modules; check the registry against :mod:`slidegen.record.contracts`; return what
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
