"""``slidegen init [DIR]``: write a small working project into a new or empty folder.

The project's files are package data, ``slidegen/starter/``, copied as they are (so a wheel
carries them and editing one is editing a file, not a string in Python): one deck that shows
the main syntax with speaker notes, ``results/results.md`` with a row a slide shows,
``references.bib`` with the work a slide cites, and one component in ``components/``. A file
named ``gitignore`` is written as ``.gitignore`` (a dot file is easily lost from package data).
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from slidegen.errors import UsageError, display_path

#: The starter project's folder inside the package.
STARTER = "starter"
#: Names a starter file is written under, where they differ from the package's.
RENAMED = {"gitignore": ".gitignore"}


def starter_files() -> dict[str, bytes]:
    """Every file of the starter project by its path in the project (``decks/01-first-talk.md``), sorted."""
    found: dict[str, bytes] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for child in folder.iterdir():
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[prefix + RENAMED.get(child.name, child.name)] = child.read_bytes()

    walk(files("slidegen") / STARTER, "")
    return dict(sorted(found.items()))


def init_project(target: Path) -> list[Path]:
    """Write the starter project into ``target`` (created when missing); the files written.

    A ``target`` that is a file, or a folder holding anything, is a :class:`UsageError` and
    nothing is written.
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{display_path(target)} is a file: name a new or empty folder for the project")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(
            f"{display_path(target)} is not empty: slidegen init writes a project only into a new "
            "or empty folder (nothing was written)"
        )
    written = []
    for rel, data in starter_files().items():
        path = target.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def cmd_init(args: argparse.Namespace) -> int:
    import shlex

    target = Path(args.dir)
    written = init_project(target)
    if not args.quiet:
        where = display_path(target.resolve())
        print(f"wrote a slidegen project into {where}/:")
        for path in written:
            print(f"  {path.relative_to(target).as_posix()}")
        step = "" if target.resolve() == Path.cwd().resolve() else f"cd {shlex.quote(args.dir)} && "
        print(f"next: {step}slidegen serve   (or slidegen build, slidegen check --strict)")
    return 0
