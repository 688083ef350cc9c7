"""A temporary copy of ``tests/fixtures/fakeproject`` with the real registries and figure style."""

from __future__ import annotations

import shutil
from pathlib import Path

from slidegen.project import Project

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "fakeproject"
#: Files of the real project the fake one shares: the experiment and figure registries, the style.
SHARED = ("model/experiments/registry.py", "figures/registry.py", "figures/style.py")


def make_fake_project(dest: Path) -> Project:
    """Copy the fake project to ``dest`` (which must not exist) and return it."""
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for rel in SHARED:
        shutil.copy(REPO / rel, dest / rel)
    return Project(dest)
