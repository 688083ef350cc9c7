"""Built HTML decks -> one PNG per slide, taken by the headless Chromium that prints PDFs.

Each deck's page is opened as an audience sees it, with reveal's margin, controls, progress
bar and transitions turned off, so the 1280x720 slide fills the viewport exactly. Every
slide is shown in its final state (every click revealed, as the PDF and PPTX show it) and
taken at ``scale`` device pixels per CSS pixel: 1.5 gives 1920x1080. A deck's pictures are
written to a temporary folder and moved into ``out_dir/SLUG/`` only when all of them are
taken, as ``01.png``, ``02.png``...: an interrupted export leaves the previous set whole.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from slidegen.deck.nodes import Deck
from slidegen.errors import Diagnostic, UsageError, display_path
from slidegen.write.pdf import SLIDE_HEIGHT_PX, SLIDE_WIDTH_PX, TIMEOUT_MS, Printer, each_deck, opened

DEFAULT_SCALE = 1.5
MAX_SCALE = 4.0

_READY = """() => window.Reveal && Reveal.isReady() && Array.from(document.images).every(img => img.complete)"""
# reveal's slide transitions are configuration (a slide's own, an attribute); its fragments fade in by CSS transitions.
_STILL = """() => {
    Reveal.configure({margin: 0, controls: false, progress: false, transition: 'none',
                      backgroundTransition: 'none', hash: false});
    const style = document.createElement('style');
    style.textContent = '.reveal .slides section .fragment { transition: none !important; }';
    document.head.appendChild(style);
    // a slide's own transition (Slidev's transition: key) would outlast the screenshot
    document.querySelectorAll('.reveal .slides section[data-transition]').forEach(
        (s) => s.removeAttribute('data-transition'));
}"""
# Go to slide h with every fragment shown; resolves once fonts and pictures are in.
_SHOW = """(h) => {
    Reveal.slide(h, 0, 0);
    const count = Reveal.getCurrentSlide().querySelectorAll('.fragment').length;
    if (count) Reveal.slide(h, 0, count - 1);
    return document.fonts.ready.then(() => Reveal.getIndices().h);
}"""


def check_scale(scale: float) -> float:
    """``scale`` if it is a usable device-pixel ratio, else a usage error saying the range."""
    if not 0.25 <= scale <= MAX_SCALE:
        raise UsageError(
            f"--scale {scale:g} is out of range: give a number from 0.25 to {MAX_SCALE:g} "
            f"(1.5 gives {SLIDE_WIDTH_PX * 1.5:.0f}x{SLIDE_HEIGHT_PX * 1.5:.0f} pixels)"
        )
    return scale


# Go to slide h at click k (0: before the first); resolves to the number of clicks the slide has.
_AT_CLICK = """([h, k]) => {
    Reveal.slide(h, 0, k - 1);
    const indices = new Set(Array.from(Reveal.getCurrentSlide().querySelectorAll('.fragment'))
        .map((f) => f.getAttribute('data-fragment-index')));
    return document.fonts.ready.then(() => indices.size);
}"""


def click_names(slide: int, clicks: int, slides: int) -> list[str]:
    """``01-0.png`` (before the first click), ``01-1.png``... for slide ``slide`` of ``slides``."""
    width = max(2, len(str(slides)))
    return [f"{slide:0{width}d}-{k}.png" for k in range(clicks + 1)]


def file_names(count: int) -> list[str]:
    """``01.png`` ... for ``count`` slides: zero-padded so they sort in slide order."""
    width = max(2, len(str(count)))
    return [f"{n:0{width}d}.png" for n in range(1, count + 1)]


def snapshot_deck(
    printer: Printer,
    html: Path,
    folder: Path,
    scale: float,
    size: tuple[int, int] = (SLIDE_WIDTH_PX, SLIDE_HEIGHT_PX),
    with_clicks: bool = False,
) -> int:
    """Take every slide of the deck page ``html`` into ``folder`` (replaced whole); the slide count.

    ``size`` is the deck's slide in CSS px (its ``canvasWidth`` and ``aspectRatio``); the pictures are
    ``scale`` times 1280 px wide whatever it is, so 1.5 gives 1920x1080 at 16:9 and 1920x1440 at 4:3.
    ``with_clicks``: one picture per click of each slide (:func:`click_names`), not only its final state.
    """
    context = printer.browser.new_context(
        viewport={"width": size[0], "height": size[1]}, device_scale_factor=scale * SLIDE_WIDTH_PX / size[0]
    )
    staging = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(Path(html).resolve().as_uri() + "?paged", wait_until="load")  # a scrolling page too
        page.wait_for_function(_READY)
        page.evaluate(_STILL)
        count = int(page.evaluate("Reveal.getTotalSlides()"))
        for h, name in enumerate(file_names(count)):
            if page.evaluate(_SHOW, h) != h:
                raise RuntimeError(f"reveal.js did not show slide {h + 1}")
            page.wait_for_function(_READY)
            if not with_clicks:
                page.screenshot(path=str(staging / name))
                continue
            steps = int(page.evaluate(_AT_CLICK, [h, 0]))
            for k, step_name in enumerate(click_names(h + 1, steps, count)):
                page.evaluate(_AT_CLICK, [h, k])
                page.wait_for_function(_READY)
                page.screenshot(path=str(staging / step_name))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        context.close()
    old = folder.with_name(f".{folder.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return count


def snapshot_decks(
    pages: Sequence[tuple[Deck, Path]],
    out_dir: Path,
    scale: float = DEFAULT_SCALE,
    with_clicks: bool = False,
    printer: Printer | None = None,
) -> tuple[list[Path], list[Diagnostic]]:
    """Each ``(deck, its built HTML page)`` to ``out_dir/SLUG/NN.png`` with one browser (``printer`` when given).

    A deck that fails is an error at the deck; the others are still taken.
    """
    if not pages:
        return [], []

    def one(deck: Deck, html: Path) -> tuple[list[Path], list[Diagnostic]]:
        folder = Path(out_dir) / deck.slug
        look = deck.settings
        count = snapshot_deck(browser, html, folder, scale, (look.canvas_width, look.canvas_height), with_clicks)
        written = sorted(folder.glob("*.png")) if with_clicks else [folder / n for n in file_names(count)]
        if count == len(deck.slides):
            return written, []
        message = f"{count} picture(s) for {len(deck.slides)} slide(s)"
        return written, [Diagnostic(display_path(deck.path), 1, 1, message, "warning")]

    with opened(printer) as browser:
        return each_deck(pages, one, "PNG pictures not taken")
