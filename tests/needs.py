"""Tests that need a system tool skip without it on a developer's machine, but fail in CI.

One rule, :func:`missing`, for every test that needs something the repository does not hold:
skip with the reason locally; fail when the ``CI`` variable is set (``1``, ``true`` or
``yes``), so a CI run can never pass by skipping. The helpers below find each tool and call it.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from slidegen import pdf


def in_ci() -> bool:
    """Whether the ``CI`` variable says this is a CI run."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(reason: str) -> NoReturn:
    """Skip the calling test with ``reason``; fail it instead when the CI variable is set."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so this test must run)")
    pytest.skip(reason)


def tool(name: str, package: str) -> str:
    """The path of the program ``name`` on ``$PATH``; :func:`missing` names its Debian ``package``."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name} not found (Debian package {package})")
    return found


def chromium() -> Path:
    """The Chromium the product itself would print with (:func:`slidegen.pdf.find_chromium`:
    ``$SLIDEGEN_CHROMIUM``, then the usual names and paths), with Playwright installed."""
    try:
        return pdf.check_available()
    except pdf.ChromiumMissing as error:
        missing(str(error))


def module(name: str, install: str) -> ModuleType:
    """The third-party module ``name`` (never one of the project's own); ``install`` says how to get it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"Python package {name} is not installed ({install})")


def file(path: Path, install: str) -> Path:
    """``path`` when it exists (a tool installed outside Python); ``install`` says how to get it."""
    if not path.exists():
        missing(f"{path} not found: {install}")
    return path
