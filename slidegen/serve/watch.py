"""Noticing saves: file-system events through watchfiles (:func:`event_changes`), or polling (mtime, size
and inode of every file under the watched folders, stdlib only) where events are not available."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
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


#: How long the events watcher waits after a change for more of the same save (an editor writes, renames,
#: touches), and at most, in milliseconds. watchfiles looks every step and hands a batch over once a
#: step brought nothing new, so a save is seen 1 to 2 steps after its last write (15 to 30 ms): an
#: editor's write, rename and touch land within a millisecond or two of each other.
EVENT_STEP_MS = 15
EVENT_DEBOUNCE_MS = 200
#: Milliseconds between two looks at what events cannot watch (single files, folders not there yet).
EVENT_TIMEOUT_MS = 300


def ignored(path: Path) -> bool:
    """Hidden and editor temp files, and anything under ``__pycache__``, ``node_modules`` or ``.git``."""
    name = path.name
    return (
        name.startswith((".", "#"))
        or name.endswith(("~", ".swp", ".tmp"))
        or any(part in _SKIP_DIRS or part == ".git" for part in path.parts)
    )


def events_available() -> bool:
    """Whether watchfiles (the platform's notify API: inotify, FSEvents, ReadDirectoryChangesW) can be imported."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def event_changes(roots: Iterable[Path], stop: threading.Event) -> Iterator[set[Path]]:
    """Each batch of files changed under ``roots``, as the file system reports them (watchfiles).

    Folders that exist are watched through events; single files (``references.bib``) and folders
    not there yet are looked at by :func:`snapshot` every :data:`EVENT_TIMEOUT_MS` ms, when an empty
    batch is yielded (the first one says the watch is set up). Raises
    ``ImportError`` without watchfiles and ``OSError``/``RuntimeError`` when the platform's watch
    cannot be set up (the caller falls back to polling). Ends when ``stop`` is set.
    """
    import watchfiles

    roots = list(roots)
    folders = [root for root in roots if root.is_dir()]
    rest = [root for root in roots if not root.is_dir()]
    seen = snapshot(rest)
    if not folders:
        raise RuntimeError("no folder to watch")
    batches = watchfiles.watch(
        *folders,
        watch_filter=lambda change, name: not ignored(Path(name)),
        debounce=EVENT_DEBOUNCE_MS,
        step=EVENT_STEP_MS,
        stop_event=stop,
        rust_timeout=EVENT_TIMEOUT_MS,
        yield_on_timeout=True,
        raise_interrupt=True,  # Ctrl-C (and SIGTERM, which the CLI turns into it) ends the preview
    )
    for batch in batches:
        changed = {Path(name) for _, name in batch}
        now = snapshot(rest)
        changed |= changed_files(seen, now)
        seen = now
        if any(root.is_dir() for root in rest):
            return  # a folder appeared: the caller watches again, that folder included
        yield changed
