"""A Chromium page with one project component's script and style loaded, for the component tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from slidegen.write.pdf import CHROMIUM_ARGS
from tests import needs

COMPONENTS = Path(__file__).resolve().parents[1] / "components"


@contextmanager
def component_page(name: str) -> Iterator[Any]:
    """An empty page with ``components/NAME.js`` and ``.css`` added; fails if the page raised any error."""
    executable = needs.chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_content("<!doctype html><html><body></body></html>")
        page.add_style_tag(path=str(COMPONENTS / f"{name}.css"))
        page.add_script_tag(path=str(COMPONENTS / f"{name}.js"))
        yield page
        assert errors == []
        browser.close()
