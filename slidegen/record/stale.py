"""Which results are stale today: measured rows whose experiment changed since it ran, or is gone.

``slidegen check`` reports them at results.md; a build reports each place a built deck cites
one (:mod:`slidegen.bind.numbers`), so a presenter who only builds still learns. Today's fingerprints
come from the syntax tree alone (:func:`slidegen.record.discover.fingerprints`): nothing is
imported, so neither torch nor the experiments' other libraries are needed, and a cold
``build/`` gives the same answer. Reading the experiment packages takes about half a second,
so today's fingerprints are kept in ``build/cache/fingerprints.json`` under a digest of every
file they can depend on: each Python file of the experiment packages, each other file an
experiment declared with ``uses=``, and ``pyproject.toml``. A build whose project code did
not change pays for hashing those files, a few milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from slidegen.errors import Diagnostic, SlidegenError
from slidegen.project import Project

CACHE_NAME = "fingerprints.json"
#: How the warning at a slide citing a stale row starts (``slidegen build --strict`` fails on these).
STALE = "stale result"


def stale_message(key: str, experiment: str, known: bool) -> str:
    """The warning at a slide citing ``key``, a row of ``experiment`` (``known``: it still exists)."""
    if not known:
        return f"{STALE} '{key}': experiment {experiment} no longer exists; drop the row or the citation"
    return f"{STALE} '{key}': {experiment} changed since it ran; run `slidegen run {experiment}`"


def is_stale_warning(diagnostic: Diagnostic) -> bool:
    return diagnostic.message.startswith(STALE)


def stale_keys(fingerprints: Mapping[str, str], sources: Mapping[str, str]) -> dict[str, tuple[str, bool]]:
    """``key -> (experiment, still registered)`` for each row whose source (``run EXP FINGERPRINT``)
    is not today's fingerprint of ``EXP`` in ``fingerprints``; cited rows are never stale."""
    from slidegen.record.discover import same_fingerprint

    out: dict[str, tuple[str, bool]] = {}
    for key, source in sources.items():
        parts = source.split()
        if len(parts) != 3 or parts[0] != "run":
            continue
        _, experiment, recorded = parts
        current = fingerprints.get(experiment)
        if current is None or not same_fingerprint(recorded, current):
            out[key] = (experiment, current is not None)
    return out


def current_fingerprints(project: Project) -> dict[str, str] | None:
    """Experiment id -> today's fingerprint (from the cache when no file it covers changed); None for a
    project without experiment modules (its results are taken as they are). Nothing is imported.

    Raises :class:`SlidegenError` when the experiments' source cannot be read (a syntax error).
    """
    from slidegen.record.discover import experiment_modules, fingerprints

    if not experiment_modules(project):
        return None
    path = project.build_dir / "cache" / CACHE_NAME
    cached = _read(path)
    extra = cached.get("extra")
    if isinstance(extra, list) and cached.get("key") == _key(project, [str(name) for name in extra]):
        kept = cached.get("fingerprints")
        if isinstance(kept, dict):
            return {str(k): str(v) for k, v in kept.items()}
    declared = fingerprints(project)
    today = {exp_id: fp.fingerprint for exp_id, fp in declared.items()}
    covered = sorted({name for fp in declared.values() for name in fp.declared})
    data = {"key": _key(project, covered), "extra": covered, "fingerprints": today}
    try:
        from slidegen.atomic import atomic_write

        atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:  # a read-only build folder: fingerprinted again next time
        pass
    return today


def fingerprints_or_problem(project: Project) -> tuple[dict[str, str] | None, Diagnostic | None]:
    """:func:`current_fingerprints`, or None and a warning saying why staleness was not checked."""
    try:
        return current_fingerprints(project), None
    except SlidegenError as error:
        found = error.diagnostic
        return None, Diagnostic(
            found.path, found.line, found.col, f"results not checked for staleness: {found.message}", "warning"
        )


def _key(project: Project, covered: list[str]) -> str:
    """A digest of every file today's fingerprints can depend on."""
    from slidegen.record.discover import FINGERPRINT_FORMAT
    from slidegen.record.loader import digest_bytes

    root = project.root.resolve()
    names = set(covered)
    for package in project.layout.experiment_packages:
        names.update(
            p.relative_to(root).as_posix() for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts
        )
    files: dict[str, str] = {}
    for name in sorted(names | {"pyproject.toml"}):
        try:
            files[name] = digest_bytes((root / name).read_bytes())
        except OSError:
            files[name] = "missing"
    reader = digest_bytes(Path(__file__).with_name("reach.py").read_bytes())  # how the source is read
    payload = {"format": FINGERPRINT_FORMAT, "reader": reader, "files": files}
    return digest_bytes(json.dumps(payload, sort_keys=True).encode())


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
