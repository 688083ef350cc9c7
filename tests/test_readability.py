"""The project's decks read from the back of the room (issue 31), measured on what is built.

Every deck is built to HTML and PPTX from the committed results; every slide is measured in Chromium at
1280x720 with all its clicks shown (:mod:`readability`): main text, tables, code and components at 18 pt or
more as shown, footers, captions and footnotes at 12 pt or more, figure labels at 18 pt or more (from each
figure's drawn size and smallest font, times the scale it is shown at), at most 50 words. The PPTX is held
to the same type-size rules, read from its XML. A failure lists every slide of every deck that falls short.
"""

from __future__ import annotations

from pathlib import Path

import needs
import pytest
import readability

from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.write.pdf import CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
PROJECT = Project(ROOT)
DECKS = sorted(PROJECT.deck_paths())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    if not DECKS:
        needs.missing("the project has no decks yet")
    out = tmp_path_factory.mktemp("build")
    build(PROJECT, options=BuildOptions(formats=("html", "pptx"), out=out))
    return out


def _failures(rows: dict[str, list[readability.SlideSizes]]) -> list[str]:
    return [
        f"{name} slide {s.number}: {'; '.join(s.problems())}"
        for name, slides in rows.items()
        for s in slides
        if s.problems()
    ]


def test_every_slide_reads_at_1280x720_in_chromium(built: Path) -> None:
    chromium = needs.chromium()
    from playwright.sync_api import sync_playwright

    rows = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for path in DECKS:
            html = built / "html" / f"{path.stem}.html"
            assert html.is_file(), f"{path.name} did not build"
            slides = readability.measure_html(page, html)
            for sizes, words in zip(slides, readability.slide_words(path), strict=False):
                sizes.words = words
            assert all(s.main_pt is not None for s in slides[1:-1] if s.words), "nothing measured"
            rows[path.name] = slides
        browser.close()
    failures = _failures(rows)
    assert not failures, "slides that do not read from the back of the room:\n" + "\n".join(failures)


def test_every_pptx_slide_keeps_the_type_sizes(built: Path) -> None:
    rows = {}
    for path in DECKS:
        slides = readability.measure_pptx(built / "pptx" / f"{path.stem}.pptx")
        assert any(s.main_pt is not None for s in slides), f"{path.name}: no text measured"
        rows[path.name] = slides  # words are the HTML test's: the same deck text
    failures = _failures(rows)
    assert not failures, "PPTX slides under the type-size rules:\n" + "\n".join(failures)


def test_the_measure_fails_on_small_type(tmp_path: Path) -> None:
    """The rules bite: a slide whose text is 15 pt, or with 51 words, is a failure."""
    small = readability.SlideSizes(1, main_pt=15.0, smallest=["p 'x'"])
    wordy = readability.SlideSizes(2, main_pt=22.0, words=51)
    tiny_figure = readability.SlideSizes(3, main_pt=22.0, figure_pt=12.5)
    fine = readability.SlideSizes(4, main_pt=18.0, small_pt=12.75, figure_pt=18.0, words=50)
    assert _failures({"d": [small, wordy, tiny_figure, fine]}) == [
        "d slide 1: main text 15.0 pt (p 'x')",
        "d slide 2: 51 words",
        "d slide 3: figure labels 12.5 pt",
    ]
