"""Content digests: of bytes, of a JSON payload, and of the installed slidegen package itself.

Every cache keys on these (the build manifest, figures, citations): a change to slidegen's own files
(code, templates, the theme) is a change to what every output was made with.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def json_digest(payload: object) -> str:
    return digest(json.dumps(payload, sort_keys=True, default=str).encode())


def package_files() -> list[Path]:
    """Every file of the installed slidegen package (code, templates, the theme, the PowerPoint template)."""
    package = Path(__file__).resolve().parent
    return sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


_PACKAGE: dict[tuple[tuple[str, int, int], ...], str] = {}


def package_digest() -> str:
    """The digest of :func:`package_files`' bytes (remembered while their sizes and mtimes stay: ``serve``
    builds many times in one process)."""
    package = Path(__file__).resolve().parent
    files = package_files()
    stamps = tuple((str(path), info.st_size, info.st_mtime_ns) for path in files for info in [path.stat()])
    if stamps not in _PACKAGE:
        _PACKAGE.clear()
        _PACKAGE[stamps] = json_digest(
            {path.relative_to(package).as_posix(): digest(path.read_bytes()) for path in files}
        )
    return _PACKAGE[stamps]
