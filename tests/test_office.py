"""The PPTX as LibreOffice sees it: converted to PDF, one page per slide, titles and equations on the pages.

Skipped with a reason when ``soffice`` is missing, unless CI is set: then it fails.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pptx_sample_deck
import pytest
from needs import tool

from slidegen.write.pptx import write_deck

pytestmark = pytest.mark.office


@pytest.fixture(scope="module")
def pdf(tmp_path_factory) -> tuple[Path, int, list[str]]:
    """The hand-built deck written as PPTX and converted by LibreOffice; (pdf, slides, titles)."""
    soffice = tool("soffice", "libreoffice-impress")
    tmp = tmp_path_factory.mktemp("office")
    deck, media = pptx_sample_deck.every_feature_deck(tmp)
    pptx = tmp / "deck.pptx"
    write_deck(deck, pptx, media)
    out = tmp / "pdf"
    subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{tmp / 'profile'}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(out),
            str(pptx),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    return out / "deck.pdf", len(deck.slides), [s.title for s in deck.slides]


def test_one_page_per_slide(pdf):
    path, slides, _ = pdf
    info = subprocess.run(
        [tool("pdfinfo", "poppler-utils"), str(path)], check=True, capture_output=True, text=True
    ).stdout
    assert int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1)) == slides


def test_titles_and_equations_are_on_their_pages(pdf):
    path, _, titles = pdf
    text = subprocess.run(
        [tool("pdftotext", "poppler-utils"), "-layout", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    *pages, after = text.split("\f")  # pdftotext ends every page with a form feed
    assert after.strip() == ""
    for page, title in zip(pages, titles, strict=True):
        assert title.replace("  ", " ") in " ".join(page.split()) if title else True, (title, page)
    assert "log" in pages[4]  # the equation on slide 5 was drawn, not left blank
    assert "5,376" in pages[8]
