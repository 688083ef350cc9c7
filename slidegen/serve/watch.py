"""Noticing saves by polling: (mtime, size, inode) of every file under the watched folders, stdlib only."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

#: Seconds between two looks at the watched folders.
POLL_SECONDS = 0.3

#: What :func:`snapshot` records of a file: (mtime in ns, size, inode).
Stamp = tuple[int, int, int]

_SKIP_DIRS = {"__pycache__", "node_modules"}


def snapshot(roots: Iterable[Path]) -> dict[Path, Stamp]:
    """(mtime in ns, size, inode) of every file under ``roots`` (folders, or single files such as
    ``references.bib``); hidden and editor temp files left out."""
    seen: dict[Path, Stamp] = {}
    for root in roots:
        if root.is_file():
            info = root.stat()
            seen[root] = (info.st_mtime_ns, info.st_size, info.st_ino)
            continue
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS]
            for name in files:
                if name.startswith((".", "#")) or name.endswith(("~", ".swp", ".tmp")):
                    continue
                path = Path(folder) / name
                try:
                    info = path.stat()
                except OSError:  # removed while we looked
                    continue
                seen[path] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return seen


def changed_files(before: dict[Path, Stamp], after: dict[Path, Stamp]) -> set[Path]:
    """Files added, removed or modified between two snapshots."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
