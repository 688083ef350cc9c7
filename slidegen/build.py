"""``slidegen build``: parse, bind and write every deck, one process, outputs moved into place whole."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .bind import bind_deck, slide_sources
from .deck import Deck, DeckEntry, DeckIndex, SlideEntry
from .errors import Diagnostic, SlidegenError
from .figures import FigureRenderer
from .media import Media, resolve_media
from .parse import parse_deck
from .project import Project
from .results import Results

FORMATS = ("html", "pptx", "pdf", "md", "marp")
#: What `slidegen build` writes when --to is not given (PDF needs Chromium; md and marp are for other tools).
DEFAULT_FORMATS = ("html", "pptx")


@dataclass
class BuildReport:
    """What one build wrote and what went wrong."""

    written: list[Path] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def load_results(project: Project) -> Results:
    """The project's results.md, or no results when it does not exist yet."""
    if project.results_path.is_file():
        return Results.read(project.results_path)
    return Results()


def load_deck(path: Path, results: Results) -> tuple[Deck, dict[int, list[str]]]:
    """Parse one deck and bind its references; the first binding error is raised.

    Also returns, per slide index, the lines that end its PowerPoint notes: the key and
    source of every number on it (taken before binding, which substitutes references in
    math and titles away).
    """
    parsed = parse_deck(path)
    deck, diagnostics = bind_deck(parsed, results)
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            raise SlidegenError(diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.message)
    sources = {}
    for slide in parsed.slides:
        cited = slide_sources(slide, results)
        if cited:
            sources[slide.index] = ["Sources of the numbers on this slide:"] + [f"{k}: {src}" for k, src in cited]
    return deck, sources


def build(
    project: Project,
    paths: Sequence[Path] | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
    out: Path | None = None,
    notes: bool = False,
    html_dir: Path | None = None,
) -> BuildReport:
    """Build ``paths`` (default: every deck) to ``out`` (default: ``build/``) in each format.

    A deck with an error is reported and skipped; the others are still built. PDF is printed
    from the HTML (``out/html``, or a temporary ``html_dir`` when HTML is not asked for), with
    the speaker notes under each slide when ``notes`` is true.
    """
    out = out or project.build_dir
    if "pdf" in formats:
        from . import pdf

        pdf.check_available()  # before any work: no Chromium is a set-up problem (exit 2)
        if "html" not in formats and html_dir is None:
            with tempfile.TemporaryDirectory(prefix="slidegen-pdf-") as tmp:
                return build(project, paths, formats, out, notes=notes, html_dir=Path(tmp))
    html_dir = html_dir or out / "html"
    printable: list[tuple[Deck, Path]] = []
    targets = list(paths) if paths else project.deck_paths()
    report = BuildReport()
    built: list[Deck] = []
    results = load_results(project)
    renderer = FigureRenderer(project)
    math_cache = project.build_dir / "cache" / "math"  # equations drawn once, reused by every build
    loaded: list[tuple[Deck, dict[int, list[str]], Media]] = []
    for path in targets:
        try:
            deck, sources = load_deck(path, results)
            loaded.append((deck, sources, resolve_media(deck, renderer)))
        except SlidegenError as error:
            report.diagnostics.append(error.diagnostic)
    wants_md = any(flavor in formats for flavor in ("md", "marp"))
    index = DeckIndex(tuple(index_decks(project, [deck for deck, _, _ in loaded], slides=wants_md)))
    for deck, sources, media in loaded:
        try:
            if "html" in formats or "pdf" in formats:
                from . import html

                page = html.write_deck(deck, html_dir, media.html)
                if "html" in formats:
                    report.written.append(page)
                printable.append((deck, page))
            for flavor in ("md", "marp"):
                if flavor in formats:
                    from . import markdown_out

                    report.written.append(markdown_out.write_deck(deck, out / flavor, media.html, flavor, index))
            if "pptx" in formats:
                from . import pptx

                target = out / "pptx" / f"{deck.slug}.pptx"
                report.diagnostics.extend(
                    pptx.write_deck(deck, target, media.pptx, notes_footer=sources, cache_dir=math_cache)
                )
                report.written.append(target)
        except SlidegenError as error:
            report.diagnostics.append(error.diagnostic)
            continue
        built.append(deck)
    if "html" in formats or "pdf" in formats:
        from . import html

        html.copy_assets(html_dir)
    if "html" in formats:
        report.written.append(html.write_index(index_decks(project, built), html_dir))
    if "pdf" in formats and printable:
        written, problems = pdf.print_decks(printable, out / "pdf", notes=notes)
        report.written.extend(written)
        report.diagnostics.extend(problems)
    return report


def index_decks(project: Project, built: list[Deck], slides: bool = False) -> list[DeckEntry]:
    """Every deck of the project for the index page and links: the ones just built, the rest read from disk.

    With ``slides``, the rest are parsed whole, so links into them find their slide numbers.
    """
    by_path = {deck.path.resolve(): deck for deck in built}
    entries = []
    for path in project.deck_paths():
        deck = by_path.pop(path.resolve(), None) or (_parsed(path) if slides else index_entry(path))
        if deck is not None:
            entries.append(deck_entry(deck))
    if slides:  # decks built from outside decks/ can be linked to as well
        entries += [deck_entry(deck) for deck in by_path.values()]
    return entries


def deck_entry(deck: Deck) -> DeckEntry:
    """``deck`` as the deck index holds it."""
    slides = tuple(SlideEntry(s.index, s.id, s.title, s.line) for s in deck.slides)
    return DeckEntry(deck.path, deck.title, deck.headmatter, slides)


def _parsed(path: Path) -> Deck | None:
    try:
        return parse_deck(path)
    except SlidegenError:
        return None


def index_entry(path: Path) -> Deck | None:
    """A deck with its title and headmatter but no slides, read cheaply for the index page.

    Reads only the headmatter when it names the title; otherwise parses the whole deck.
    A deck that does not parse is left out (it is reported when it is built itself).
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and lines[0].strip() == "---" and "---" in (line.strip() for line in lines[1:]):
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
        try:
            headmatter = yaml.safe_load("\n".join(lines[1:end]))
        except yaml.YAMLError:
            headmatter = None
        title = headmatter.get("title") if isinstance(headmatter, dict) else None
        if isinstance(title, str) and title and "{{" not in title:
            return Deck(path=path, title=title, headmatter=headmatter, slides=())
    try:
        return parse_deck(path)
    except SlidegenError:
        return None
