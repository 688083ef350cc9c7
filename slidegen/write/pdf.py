"""Built HTML decks -> PDF, printed by Debian's Chromium through Playwright (no browser download).

Each deck's page is opened with reveal.js's print view (``?print-pdf``), which lays every
slide out on a page of its own, fragments shown (the HTML writer sets
``pdfSeparateFragments: false``) and reveal's margin 0. We wait for reveal's ``pdf-ready``
event, the fonts and the pictures, then print with the CSS page size: one page per slide,
1280x720 CSS px = 960x540 pt. ``pdfMaxPagesPerSlide=1`` (passed in the query string, which
reveal.js reads as configuration) keeps a slide that is too tall on its one page, cut at the
bottom, and the slide is reported as a warning instead of spilling onto a second page.

With ``notes=True`` each page is a handout page: the slide, unchanged, at the top
(1280x720 px), and its speaker notes in a band of :data:`NOTES_HEIGHT_PX` below it, so a page
is 1280x1080 px = 960x810 pt and there is still exactly one page per slide. (reveal's own
``showNotes: true`` draws the notes over the bottom of the slide, and ``'separate-page'``
doubles the page count and splits long notes over pages: neither reads cleanly.) Long notes
are set smaller until they fit the band.

One browser serves every deck of a build: :class:`Printer` is a context manager around it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen.atomic import atomic_write
from slidegen.deck.nodes import Deck
from slidegen.errors import Diagnostic, UsageError, display_path

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

#: Where we look for the browser: $SLIDEGEN_CHROMIUM, then these names on $PATH, then these paths.
CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMIUM_PATHS = (Path("/usr/bin/chromium"), Path("/usr/lib/chromium/chromium"))

#: Flags for a quiet, offline, throw-away headless Chromium (``--no-sandbox``: it may run as root).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
)

#: The slide's size in CSS px (96 per inch): 960x540 pt in the PDF.
SLIDE_WIDTH_PX, SLIDE_HEIGHT_PX = 1280, 720
#: The notes band under each slide when printing with notes.
NOTES_HEIGHT_PX = 360
#: How long a deck may take to lay out its print view.
TIMEOUT_MS = 60_000

_INSTALL_HINT = (
    "PDF output needs Debian's Chromium: install it with `sudo apt-get install chromium` "
    "(or set SLIDEGEN_CHROMIUM to a Chromium binary)"
)

# Set before any script of the page runs: reveal.js dispatches `pdf-ready` once its print
# layout is done; a capturing listener on the document sees it whether or not it bubbles.
_READY_FLAG = """
document.addEventListener("pdf-ready", function () { window.__slidegenPdfReady = true; }, true);
"""

_PAGES_READY = """() => window.__slidegenPdfReady === true
    && document.querySelectorAll('.pdf-page').length > 0
    && Array.from(document.images).every(img => img.complete)"""

# Slides whose content is taller than the page (cut off in print): their 1-based numbers.
_TOO_TALL = """() => Array.from(document.querySelectorAll('.pdf-page > section')).map((s, i) => {
    const body = s.querySelector('.slide-body');
    const over = s.scrollHeight > s.clientHeight + 1 || (body && body.scrollHeight > body.clientHeight + 1);
    return over ? i + 1 : 0;
}).filter(n => n > 0)"""

# Moves each slide's notes into a band under it and makes every page taller by that band.
_NOTES_BELOW = """([width, height, band, colors]) => {
    const style = document.createElement('style');
    style.textContent = `
      @page { size: ${width}px ${height + band}px; margin: 0; }
      html.print-pdf body { height: auto !important; }
      .reveal .slides .pdf-page > .slide-background { height: ${height}px !important; }
      .reveal .slides .pdf-page > .slidegen-notes {
        position: absolute; left: 0; right: 0; top: ${height}px; height: ${band}px;
        box-sizing: border-box; padding: 22px 72px 24px; overflow: hidden;
        background: ${colors.band}; color: ${colors.text}; border-top: 2px solid ${colors.rule};
        font-size: 22px; line-height: 1.4; text-align: left;
      }
      .slidegen-notes .slidegen-notes-label {
        font-size: 15px; font-weight: 700; letter-spacing: 0.08em; text-transform: uppercase;
        color: ${colors.muted}; margin-bottom: 8px;
      }
      .slidegen-notes p, .slidegen-notes ul, .slidegen-notes ol { margin: 0 0 0.45em; }
      .slidegen-notes ul, .slidegen-notes ol { padding-left: 1.2em; }
      .slidegen-notes .code { font-size: 0.8em; background: none; border: 0; padding: 0; }
      .slidegen-notes .none { color: ${colors.muted}; font-style: italic; }
    `;
    document.head.appendChild(style);
    document.querySelectorAll('.reveal .slides .pdf-page').forEach(page => {
        page.style.height = (height + band - 1) + 'px';  // reveal's pdfPageHeightOffset is -1
        const section = page.querySelector(':scope > section');
        const notes = section && section.querySelector('aside.notes');
        const box = document.createElement('div');
        box.className = 'slidegen-notes';
        box.innerHTML = '<div class="slidegen-notes-label">Notes</div>'
            + (notes ? '<div class="slidegen-notes-text">' + notes.innerHTML + '</div>'
                     : '<p class="none">No notes for this slide.</p>');
        page.appendChild(box);
        let size = 22;
        while (box.scrollHeight > box.clientHeight + 1 && size > 11) {
            size -= 1;
            box.style.fontSize = size + 'px';
        }
    });
}"""


def _notes_colors() -> dict[str, str]:
    """The notes band in the theme's colours (text on the code background passes WCAG AA)."""
    from slidegen import theme

    return {"band": theme.CODE_BACKGROUND, "text": theme.TEXT, "muted": theme.MUTED, "rule": theme.TABLE_RULE}


class ChromiumMissing(UsageError):
    """No Chromium (or no Playwright) to print with: a set-up problem, exit 2."""


def find_chromium() -> Path | None:
    """The Chromium binary to use, or None: ``$SLIDEGEN_CHROMIUM`` when it is set (and nothing else
    then), else the first of :data:`CHROMIUM_NAMES` on ``$PATH``, else the first of :data:`CHROMIUM_PATHS`."""
    configured = os.environ.get("SLIDEGEN_CHROMIUM")
    if configured:
        return Path(configured) if _executable(Path(configured)) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    for path in CHROMIUM_PATHS:
        if _executable(path):
            return path
    return None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def require_chromium() -> Path:
    """:func:`find_chromium`'s answer; :class:`ChromiumMissing`, saying how to install it, when there is none."""
    chromium = find_chromium()
    if chromium is not None:
        return chromium
    configured = os.environ.get("SLIDEGEN_CHROMIUM")
    if configured:
        raise ChromiumMissing(f"SLIDEGEN_CHROMIUM={configured} is not an executable file. {_INSTALL_HINT}")
    raise ChromiumMissing(f"Chromium not found. {_INSTALL_HINT}")


def require_playwright() -> None:
    """Raise :class:`ChromiumMissing` unless the Playwright package (its Python side) is installed."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise ChromiumMissing(
            "PDF, PNG and the PowerPoint pictures of components and diagrams drive Chromium through the Python "
            "package playwright, a dependency of slidegen: `pip install playwright`; do not run `playwright install`, "
            "the system's Chromium is used"
        ) from None


def check_available() -> Path:
    """Everything printing needs is there; returns the Chromium binary. Call before building."""
    chromium = require_chromium()
    require_playwright()
    return chromium


def print_url(html: Path, with_clicks: bool = False) -> str:
    """The ``file://`` URL of ``html`` in reveal.js's print view, one page per slide (``with_clicks``: per click)."""
    return Path(html).resolve().as_uri() + "?print-pdf&pdfMaxPagesPerSlide=1" + ("&with-clicks" if with_clicks else "")


class Printer:
    """One headless Chromium that prints any number of decks; use it as a context manager.

    >>> with Printer() as printer:                       # doctest: +SKIP
    ...     printer.print(Path("build/html/01-x.html"), Path("build/pdf/01-x.pdf"))
    """

    def __init__(self, chromium: Path | None = None) -> None:
        self.chromium = chromium or check_available()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._page: Page | None = None

    def __enter__(self) -> Printer:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        try:
            self._browser = playwright.chromium.launch(
                executable_path=str(self.chromium), args=list(CHROMIUM_ARGS), headless=True
            )
        except Exception as error:
            playwright.stop()
            raise ChromiumMissing(f"could not start {self.chromium}: {error}. {_INSTALL_HINT}") from None
        self._playwright = playwright
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_page()
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if self._playwright is not None:
            self._playwright.stop()
            self._playwright = None

    @property
    def browser(self) -> Browser:
        """The open browser (for other kinds of capture, as :mod:`slidegen.write.png` does)."""
        if self._browser is None:
            raise RuntimeError("Printer is not open: use it in a with statement")
        return self._browser

    def _open_page(self, browser: Browser) -> Page:
        """The one tab every deck is printed in: reusing it halves the time per deck."""
        if self._page is None:
            context = browser.new_context(viewport={"width": SLIDE_WIDTH_PX, "height": SLIDE_HEIGHT_PX})
            context.add_init_script(_READY_FLAG)
            self._page = context.new_page()
            self._page.set_default_timeout(TIMEOUT_MS)
        return self._page

    def _close_page(self) -> None:
        if self._page is not None:
            self._page.context.close()
            self._page = None

    def print(
        self,
        html: Path,
        target: Path,
        *,
        notes: bool = False,
        size: tuple[int, int] = (SLIDE_WIDTH_PX, SLIDE_HEIGHT_PX),
        with_clicks: bool = False,
    ) -> tuple[int, list[int]]:
        """Print the deck page ``html`` to ``target`` (atomically); ``size``: its slide in CSS px (reveal.js
        makes each page that size, from the deck's ``canvasWidth`` and ``aspectRatio``); ``with_clicks``:
        a page per click of each slide.

        Returns the number of pages and the 1-based numbers of slides too tall for their page.
        """
        if self._browser is None:
            raise RuntimeError("Printer is not open: use it in a with statement")
        page = self._open_page(self._browser)
        try:
            if page.viewport_size != {"width": size[0], "height": size[1]}:
                page.set_viewport_size({"width": size[0], "height": size[1]})
            page.goto(print_url(html, with_clicks), wait_until="domcontentloaded")
            page.wait_for_function(_PAGES_READY)
            page.evaluate("document.fonts.ready.then(() => true)")
            too_tall = page.evaluate(_TOO_TALL)
            if notes:
                page.evaluate(_NOTES_BELOW, [size[0], size[1], NOTES_HEIGHT_PX, _notes_colors()])
                page.evaluate("document.fonts.ready.then(() => true)")
            count = page.evaluate("document.querySelectorAll('.pdf-page').length")
            data = page.pdf(prefer_css_page_size=True, print_background=True)
        except BaseException:
            self._close_page()  # a fresh tab for the next deck
            raise
        atomic_write(Path(target), data)
        return count, too_tall


DeckWork = Callable[[Deck, Path], tuple[list[Path], list[Diagnostic]]]


def each_deck(pages: Sequence[tuple[Deck, Path]], work: DeckWork, failed: str) -> tuple[list[Path], list[Diagnostic]]:
    """``work(deck, page)`` for each ``(deck, its built HTML page)``: the files written and the problems.

    The one loop PDF and PNG share: a deck whose work fails is an error at the deck (``failed``, then the
    error's first line) and the others are still done; a usage error (no Chromium) stops them all.
    """
    written: list[Path] = []
    problems: list[Diagnostic] = []
    for deck, html in pages:
        try:
            files, found = work(deck, html)
        except Exception as error:  # a deck that does not print must not stop the others
            if isinstance(error, UsageError):
                raise
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            problems.append(Diagnostic(display_path(deck.path), 1, 1, f"{failed}: {first_line}"))
            continue
        written += files
        problems += found
    return written, problems


@contextmanager
def opened(printer: Printer | None) -> Iterator[Printer]:
    """``printer`` when the caller holds one open (one browser for PDF, notes and PNG), else a new one."""
    if printer is not None:
        yield printer
        return
    with Printer() as fresh:
        yield fresh


def print_decks(
    pages: Sequence[tuple[Deck, Path]],
    out_dir: Path,
    *,
    notes: bool = False,
    suffix: str = ".pdf",
    on_printed: Callable[[Deck], None] | None = None,
    with_clicks: bool = False,
    printer: Printer | None = None,
) -> tuple[list[Path], list[Diagnostic]]:
    """Print each ``(deck, its built HTML page)`` to ``out_dir/SLUG`` + ``suffix`` with one browser (``printer``
    when given); ``on_printed(deck)`` is called after each deck. ``with_clicks`` prints a page per click of each
    slide (its state before the first click, then after each), as Slidev's ``export --with-clicks`` does.

    Returns the files written and the problems found: a slide too tall for its page is a
    warning at that slide; a deck that fails to print is an error, and the others still print.
    """
    if not pages:
        return [], []

    def one(deck: Deck, html: Path) -> tuple[list[Path], list[Diagnostic]]:
        target = Path(out_dir) / f"{deck.slug}{suffix}"
        look = deck.settings
        count, too_tall = browser.print(
            html, target, notes=notes, size=(look.canvas_width, look.canvas_height), with_clicks=with_clicks
        )
        if on_printed is not None:
            on_printed(deck)
        return [target], _page_problems(deck, count, too_tall, with_clicks)

    with opened(printer) as browser:
        return each_deck(pages, one, "PDF not printed")


def _page_problems(deck: Deck, count: int, too_tall: list[int], with_clicks: bool) -> list[Diagnostic]:
    """A warning at each slide too tall for its page, and one when the pages do not match the slides."""
    problems = []
    for number in too_tall:
        slide = deck.slides[number - 1] if number <= len(deck.slides) else None
        problems.append(
            Diagnostic(
                display_path(deck.slide_path(slide) if slide else deck.path),
                slide.line if slide else 1,
                1,
                f"slide {number} is taller than its page: its bottom is cut off in the PDF",
                "warning",
            )
        )
    expected = sum(s.clicks + 1 for s in deck.slides) if with_clicks else len(deck.slides)
    if count != expected and not with_clicks:
        problems.append(
            Diagnostic(
                display_path(deck.path), 1, 1, f"PDF has {count} page(s) for {len(deck.slides)} slide(s)", "warning"
            )
        )
    elif count != expected:
        problems.append(
            Diagnostic(
                display_path(deck.path),
                1,
                1,
                f"PDF has {count} page(s) for the {expected} click state(s) of {len(deck.slides)} slide(s)",
                "warning",
            )
        )
    return problems
