"""``slidegen build``: parse, bind and write every deck, one process, outputs moved into place whole.

Every deck of the project is parsed and bound once per build; the deck index made from
them goes to every writer (links between decks, the index page), so no writer reads a
deck's source or calls the parser.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .bind import bind_deck
from .cite import cite_deck
from .deck import Deck, DeckIndex
from .errors import Diagnostic, SlidegenError
from .figures import FigureRenderer
from .frontmatter import visible
from .index import index_of, read_decks
from .library import load_library
from .media import resolve_media
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


def first_error(diagnostics: Sequence[Diagnostic]) -> SlidegenError | None:
    """The first error among ``diagnostics``, as an exception to raise, or None."""
    for diagnostic in diagnostics:
        if diagnostic.severity == "error":
            return SlidegenError(diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.message)
    return None


def load_deck(path: Path, results: Results) -> tuple[Deck, list[Diagnostic]]:
    """Parse one deck and bind its references: the bound deck and its warnings; the first error is raised."""
    decks = read_decks([path])
    if path in decks.failed:
        problem = decks.failed[path]
        raise SlidegenError(problem.path, problem.line, problem.col, problem.message)
    deck, diagnostics = bind_deck(decks.parsed[path], results)
    error = first_error(diagnostics)
    if error is not None:
        raise error
    return visible(deck), diagnostics


@dataclass(frozen=True)
class BoundDecks:
    """Every deck of a build, parsed and bound once, and the index made from them."""

    decks: dict[Path, Deck]
    """Bound decks by resolved path (decks that did not parse are missing)."""
    problems: dict[Path, list[Diagnostic]]
    """Each deck's parse or binding problems, by resolved path."""
    index: DeckIndex

    def deck(self, path: Path) -> Deck:
        """The bound deck at ``path``; its first problem is raised when it has one."""
        key = Path(path).resolve()
        error = first_error(self.problems.get(key, []))
        if error is not None:
            raise error
        return self.decks[key]


def bind_project(project: Project, extra: Sequence[Path] = ()) -> BoundDecks:
    """Parse and bind every deck of ``project`` (and ``extra`` decks outside it) once; index them in that order."""
    paths = {path.resolve(): path for path in [*project.deck_paths(), *extra]}
    read = read_decks(list(paths.values()))
    results = load_results(project)
    library = load_library(project.root)
    decks: dict[Path, Deck] = {}
    problems: dict[Path, list[Diagnostic]] = {}
    for key, path in paths.items():
        if path in read.failed:
            problems[key] = [read.failed[path]]
        else:
            bound, problems[key] = bind_deck(read.parsed[path], results)
            decks[key], cited = cite_deck(visible(bound), library)  # hidden slides: checked, never written
            problems[key] += cited
    return BoundDecks(decks, problems, index_of(decks.values()))


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
    every = bind_project(project, targets)
    index = every.index
    renderer = FigureRenderer(project)
    math_cache = project.build_dir / "cache" / "math"  # equations drawn once, reused by every build
    for path in targets:
        try:
            deck = every.deck(path)
            media = resolve_media(deck, renderer)
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
                report.diagnostics.extend(pptx.write_deck(deck, target, media.pptx, cache_dir=math_cache))
                report.written.append(target)
        except SlidegenError as failure:
            report.diagnostics.append(failure.diagnostic)
    if "html" in formats or "pdf" in formats:
        from . import html

        html.copy_assets(html_dir)
    if "html" in formats:
        report.written.append(html.write_index(index.decks, html_dir))
    if "pdf" in formats and printable:
        written, problems = pdf.print_decks(printable, out / "pdf", notes=notes)
        report.written.extend(written)
        report.diagnostics.extend(problems)
    return report


def project_index(project: Project) -> DeckIndex:
    """The index of every deck of ``project``, each parsed and bound once (for an index page without a build)."""
    return bind_project(project).index
