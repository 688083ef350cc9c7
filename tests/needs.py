"""Tests that need a system tool skip without it on a developer's machine, but fail in CI.

One rule, :func:`missing`, for every test that needs something the repository does not hold:
skip with the reason locally; fail when the ``CI`` variable is set (``1``, ``true`` or
``yes``), so a CI run can never pass by skipping. The helpers below find each tool and call it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

from slidegen.write import pdf


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
    """The Chromium the product itself would print with (:func:`slidegen.write.pdf.find_chromium`:
    ``$SLIDEGEN_CHROMIUM``, then the usual names and paths), with Playwright installed."""
    try:
        return pdf.check_available()
    except pdf.ChromiumMissing as error:
        missing(str(error))


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """:func:`chromium` launched headless through Playwright with slidegen's own flags, closed on exit."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(executable), args=list(pdf.CHROMIUM_ARGS), headless=True)
        try:
            yield launched
        finally:
            launched.close()


def record_problems(page: Any, problems: list[str]) -> None:
    """Append to ``problems`` each console error and page error of ``page``, and each request it makes
    for anything but a file: or data: address (the decks must work offline)."""
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: r.url.startswith(("file:", "data:")) or problems.append(f"network: {r.url}"))


def cut_off(context: Any, web: list[str]) -> None:
    """Serve only file:, data: and about: addresses in the browser ``context``; every other request is
    aborted and its address appended to ``web`` (a deck page must work offline)."""

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "about:")):
            r.continue_()
        else:
            web.append(r.request.url)
            r.abort()

    context.route("**/*", route)


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
