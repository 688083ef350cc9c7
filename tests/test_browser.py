"""Built decks in Debian's headless Chromium: offline, no errors, every slide fits, clicks work.

The browser is the one the product prints with (:func:`slidegen.write.pdf.find_chromium`). Skipped with
a reason when it (or Playwright) is missing, unless CI is set: then a missing browser is a failure.
"""

from __future__ import annotations

from pathlib import Path

import html_sample_deck
import needs
import pytest

from slidegen.media.images import image_refs
from slidegen.read.parse import parse_deck
from slidegen.write import html

pytestmark = pytest.mark.browser

SAMPLE = Path(__file__).parent / "fixtures" / "decks" / "sample.md"


def _sample_deck(tmp: Path):
    """The parser's fixture deck with stand-in pictures for its figures."""
    deck = parse_deck(SAMPLE)
    media = {}
    for src, _line in image_refs(deck):
        path = SAMPLE.parent / src
        if src.startswith("fig:") or not path.is_file():
            path = html_sample_deck.png(tmp / f"stand-in-{len(media)}.png")
        media[src] = path
    return deck, media


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Every test deck built into one output folder: {slug: (deck, file)}."""
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("html")
    decks = [html_sample_deck.kitchen_sink_deck(src), _sample_deck(src)]
    html.copy_assets(out)
    built = {deck.slug: (deck, html.write_deck(deck, out, media)) for deck, media in decks}
    html.write_index([deck for deck, _ in built.values()], out)
    return built


@pytest.fixture(scope="module")
def browser():
    with needs.browser() as chromium:
        yield chromium


class Watched:
    """A page that records console errors, page errors and any request leaving the disk."""

    def __init__(self, browser) -> None:
        self.problems: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 720})
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        self.page.on(
            "request",
            lambda r: r.url.startswith(("file:", "data:")) or self.problems.append(f"network: {r.url}"),
        )

    def open(self, url: str, ready: str = "window.Reveal && Reveal.isReady()") -> None:
        self.page.goto(url)
        self.page.wait_for_function(ready)
        self.page.evaluate("document.fonts.ready.then(() => true)")

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def watched(browser):
    page = Watched(browser)
    yield page
    page.close()


def test_decks_load_offline_without_errors_and_every_slide_fits(site, watched):
    for slug, (deck, path) in site.items():
        watched.open(path.as_uri())
        page = watched.page
        page.evaluate("Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
        assert page.evaluate("Reveal.getTotalSlides()") == len(deck.slides)
        assert page.evaluate("Reveal.hasPlugin('notes')")
        height = page.evaluate("Reveal.getConfig().height")
        assert height == 720
        too_tall = []
        for i in range(len(deck.slides)):
            page.evaluate(f"Reveal.slide({i})")
            section, body, room = page.evaluate(
                """() => { const s = Reveal.getCurrentSlide(), b = s.querySelector('.slide-body');
                           return [s.scrollHeight, b.scrollHeight, b.clientHeight]; }"""
            )
            if section > height or body > room + 1:  # +1: sub-pixel rounding
                too_tall.append(f"{slug} slide {i + 1}: section {section}px, body {body}px > {room}px")
        assert not too_tall
        assert not watched.problems, watched.problems


def test_index_loads_offline(site, watched):
    path = next(iter(site.values()))[1].with_name("index.html")
    watched.open(path.as_uri(), ready="document.readyState === 'complete'")
    assert watched.page.locator(".deck-list a.deck-title").count() == len(site)
    assert not watched.problems, watched.problems


def test_math_is_typeset_and_bad_tex_shown_in_red(site, watched):
    deck, path = site["01-training-loop"]
    watched.open(path.as_uri() + "#/5")
    counts = watched.page.evaluate(
        """() => [document.querySelectorAll('section .slide-frame .math').length,
                  document.querySelectorAll('section .slide-frame .math .katex').length,
                  document.querySelectorAll('section .slide-frame .katex-error').length]"""
    )
    assert counts == [3, 2, 1]
    # notes get MathML only: the speaker view has no KaTeX CSS
    notes = "document.querySelectorAll('aside.notes .math %s').length"
    assert watched.page.evaluate(notes % "math") == 1
    assert watched.page.evaluate(notes % ".katex-html") == 0
    assert not watched.problems, watched.problems


def test_code_steps_follow_the_clicks(site, watched):
    _, path = site["01-training-loop"]
    watched.open(path.as_uri() + "#/2")
    lit = "Array.from(Reveal.getCurrentSlide().querySelectorAll('.line.hl')).map(e => +e.dataset.line)"
    seen = []
    for _ in range(4):
        seen.append(watched.page.evaluate(lit))
        watched.page.evaluate("Reveal.next()")
    assert seen == [[2], [3, 4, 5], [], [7, 8]]
    watched.page.evaluate("Reveal.prev()")
    assert watched.page.evaluate(lit) == [7, 8]  # back from the next slide: its final state
    watched.page.evaluate("Reveal.prev()")
    assert watched.page.evaluate(lit) == []


def test_fragments_and_slide_links(site, watched):
    _, path = site["01-training-loop"]
    watched.open(path.as_uri() + "#/measure")
    page = watched.page
    assert page.evaluate("Reveal.getIndices().h") == 1
    assert page.evaluate("Reveal.getCurrentSlide().querySelectorAll('.fragment.visible').length") == 0
    for shown in range(1, 5):
        page.evaluate("Reveal.next()")
        assert page.evaluate("Reveal.getCurrentSlide().querySelectorAll('.fragment.visible').length") == shown
    page.evaluate("Reveal.slide(13)")
    page.click("a[href='#/measure']")
    page.wait_for_function("Reveal.getIndices().h === 1")


def test_print_view_shows_each_slide_in_its_final_state(site, watched):
    deck, path = site["01-training-loop"]
    watched.open(path.as_uri() + "?print-pdf", ready="document.querySelectorAll('.pdf-page').length > 0")
    page = watched.page
    page.wait_for_function("document.querySelector('.pdf-page .code .line.hl') !== null")
    assert page.evaluate("document.querySelectorAll('.pdf-page').length") == len(deck.slides)
    hidden = page.evaluate("document.querySelectorAll('.pdf-page .fragment:not(.custom):not(.visible)').length")
    assert hidden == 0
    lit = "Array.from(document.querySelectorAll('.pdf-page .line.hl')).map(e => +e.dataset.line)"
    assert page.evaluate(lit) == [7, 8]
    assert not watched.problems, watched.problems


def test_speaker_view_opens_on_s_with_the_notes(site, browser):
    _, path = site["01-training-loop"]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    problems: list[str] = []
    context.on("console", lambda m: m.type == "error" and problems.append(m.text))
    context.on("weberror", lambda e: problems.append(str(e.error)))
    try:
        page = context.new_page()
        page.goto(path.as_uri() + "#/measure")
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        with context.expect_page() as popup:
            page.keyboard.press("s")
        speaker = popup.value
        notes = "(document.querySelector('.speaker-controls-notes') || {}).innerText || ''"
        speaker.wait_for_function(f"({notes}).includes('Mention')")
        assert "Mention {{ ch01.unknown }}" in speaker.evaluate(notes)
        assert not problems, problems
    finally:
        context.close()
