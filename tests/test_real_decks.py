"""The project's own decks, built from the committed results: they build, fit, open offline
in Chromium without errors, and convert in LibreOffice to one page per slide.

Browser and office checks skip with a reason when their tool is missing, unless CI is set (the
browser is the one the product prints with: :func:`slidegen.write.pdf.find_chromium`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import needs
import pytest
from pptx import Presentation

from slidegen.deck.nodes import Deck
from slidegen.pipeline.bound import bind_project
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.write.pdf import CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
PROJECT = Project(ROOT)
DECKS = list(PROJECT.deck_paths())


def parse_deck(path: Path) -> Deck:
    """The deck as it is built: parsed, bound and cited (with its references slide)."""
    return bind_project(PROJECT).deck(path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    if not DECKS:
        needs.missing("the project has no decks yet")
    out = tmp_path_factory.mktemp("build")
    report = build(PROJECT, options=BuildOptions(formats=("html", "pptx"), out=out))
    assert not report.diagnostics, [str(d) for d in report.diagnostics]  # no error, and no warning either
    return out


def test_every_deck_has_notes_on_every_slide(built: Path) -> None:
    for path in DECKS:
        deck = parse_deck(path)
        silent = [s.index for s in deck.slides if not s.notes]
        if deck.glossary is None:  # the glossary is looked up, not presented: its terms need no notes
            assert not silent, f"{path.name}: slides without speaker notes: {silent}"
        prs = Presentation(str(built / "pptx" / f"{deck.slug}.pptx"))
        assert len(prs.slides) == len(deck.slides)
        for slide, pptx_slide in zip(deck.slides, prs.slides, strict=True):
            notes = pptx_slide.notes_slide.notes_text_frame.text
            assert notes.strip() or slide.index in silent, f"{path.name} slide {slide.index}: empty notes pane"
            if "{{" in slide.content:
                assert "Sources of the numbers on this slide:" in notes, f"{path.name} slide {slide.index}"


@pytest.mark.slow
def test_decks_open_offline_without_errors_and_every_slide_fits(built: Path) -> None:
    chromium = needs.chromium()
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on(
            "request",
            lambda r: (
                None if r.url.split(":", 1)[0] in ("file", "data", "blob") else problems.append(f"request: {r.url}")
            ),
        )
        for path in DECKS:
            page.goto((built / "html" / f"{path.stem}.html").as_uri())
            page.wait_for_function("window.Reveal && Reveal.isReady()")
            total = page.evaluate("Reveal.getTotalSlides()")
            assert total == len(parse_deck(path).slides)
            for i in range(total):
                page.evaluate(f"Reveal.slide({i}, 0, 999)")
                height = page.evaluate("Reveal.getCurrentSlide().scrollHeight")
                if height > page.evaluate("Reveal.getConfig().height"):
                    problems.append(f"{path.name} slide {i + 1} is {height} px tall")
        browser.close()
    assert not problems, problems


@pytest.mark.slow
def test_powerpoint_converts_to_one_page_per_slide(built: Path, tmp_path: Path) -> None:
    soffice = needs.tool("soffice", "libreoffice-impress")
    pdfinfo = needs.tool("pdfinfo", "poppler-utils")
    subprocess.run(  # one LibreOffice start for every deck: each start costs seconds
        [
            soffice,
            f"-env:UserInstallation=file://{tmp_path / 'profile'}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path),
            *[str(built / "pptx" / f"{path.stem}.pptx") for path in DECKS],
        ],
        check=True,
        capture_output=True,
        timeout=180 * len(DECKS),
    )
    for path in DECKS:
        info = subprocess.run([pdfinfo, str(tmp_path / f"{path.stem}.pdf")], check=True, capture_output=True, text=True)
        pages = int(next(line.split()[-1] for line in info.stdout.splitlines() if line.startswith("Pages:")))
        assert pages == len(parse_deck(path).slides), path.name
