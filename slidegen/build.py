"""``slidegen build``: parse, bind and write every deck, one process, outputs moved into place whole.

Every deck of the project is parsed and bound once per build; the deck index made from
them goes to every writer (links between decks, the index page), so no writer reads a
deck's source or calls the parser.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import components, highlight
from .assets import MEDIA_DIR
from .bind import bind_deck
from .cite import cite_deck
from .deck import Deck, DeckIndex
from .errors import Diagnostic, SlidegenError, display_path, internal_error
from .figures import FigureRenderer
from .frontmatter import visible
from .index import index_of, read_decks
from .library import load_library
from .media import Media, resolve_media
from .project import Project
from .results import Results

if TYPE_CHECKING:
    from . import snapshot

FORMATS = ("html", "pptx", "pdf", "png", "md", "marp")
#: What `slidegen build` writes when --to is not given (PDF needs Chromium; md and marp are for other tools).
DEFAULT_FORMATS = ("html", "pptx")


@dataclass
class BuildReport:
    """What one build wrote and what went wrong."""

    written: list[Path] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    """Bugs met (one "internal error, please report" message each); the build goes on without that deck."""

    @property
    def failed(self) -> bool:
        return bool(self.internal) or any(d.severity == "error" for d in self.diagnostics)


def load_results(project: Project) -> Results:
    """The project's results.md, or no results when it does not exist yet."""
    try:
        return Results.read(project.results_path)
    except FileNotFoundError:
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
    figures_dir: Path | None = None,
    scale: float = 1.5,
    progress: Callable[[str, str], None] | None = None,
    single_file: bool = False,
    with_clicks: bool = False,
    animate: bool = True,
) -> BuildReport:
    """Build ``paths`` (default: every deck) to ``out`` (default: ``build/``) in each format.

    A deck with an error is reported and skipped; the others are still built. Each deck's
    outputs are written to a staging folder first and moved into place only when every
    writer succeeded: a deck's outputs of one build all land or none do. PDF is printed
    from the HTML (``out/html``, or a temporary ``html_dir`` when HTML is not asked for); with
    ``notes``, each deck is also printed with its speaker notes under each slide, as
    ``SLUG.notes.pdf`` beside ``SLUG.pdf``. PNG pictures are taken from the HTML too, at ``scale``
    device pixels per CSS pixel (1.5: 1920x1080). ``figures_dir`` is where figures are drawn and
    cached (default: ``build/figures``). ``progress(deck, output)`` is called as each output of a
    deck is done. With ``single_file``, each deck's HTML page is made one self-contained file
    (:mod:`slidegen.singlefile`). ``with_clicks``: PDF and PNG show each click of a slide, not only
    its final state; ``animate``: PowerPoint slides animate their clicks (``False``: final-state slides).
    """
    out = out or project.build_dir
    browsed = "pdf" in formats or "png" in formats
    if browsed:
        from . import pdf, png

        png.check_scale(scale)
        pdf.check_available()  # before any work: no Chromium is a set-up problem (exit 2)
        if "html" not in formats and html_dir is None:
            with tempfile.TemporaryDirectory(prefix="slidegen-pdf-") as tmp:
                return build(project, paths, formats, out, notes=notes, html_dir=Path(tmp), figures_dir=figures_dir,
                             progress=progress, scale=scale, single_file=single_file,
                             with_clicks=with_clicks, animate=animate)
    html_dir = html_dir or out / "html"
    printable: list[tuple[Deck, Path]] = []
    targets = list(paths) if paths else project.deck_paths()
    report = BuildReport()
    every = bind_project(project, targets)
    index = every.index
    renderer = FigureRenderer(project, out_dir=figures_dir)
    math_cache = project.build_dir / "cache" / "math"  # equations drawn once, reused by every build
    places = {"html": html_dir, **{flavor: out / flavor for flavor in ("pptx", "md", "marp")}}
    found = components.discover(project.root)
    pictures = _pictures(every, targets, found, project, renderer) if "pptx" in formats else {}
    used: dict[str, components.Component] = {}
    diagrams = False
    for path in targets:
        try:
            deck = every.deck(path)
            problems = components.deck_problems(deck, found)
            if problems:
                report.diagnostics.extend(problems)
                continue
            media = resolve_media(deck, renderer, project.root)
            drawn = pictures.get(deck.path)
            if drawn is not None:
                if drawn.problems:
                    report.diagnostics.extend(drawn.problems)
                    continue
                media.pptx.update(drawn.files)
            used.update((c.name, c) for c in components.used(deck, found))
            diagrams = diagrams or next(components.diagrams(deck), None) is not None
            report.diagnostics.extend(highlight.problems(deck))
            with _Stage(out) as stage:
                written, warnings = _write_deck(deck, formats, stage.root, media, index, math_cache,
                                                tuple(found.values()), animate)
                landed = stage.land(places)
            report.diagnostics.extend(warnings)
            for flavor, staged in written:
                final = landed[staged]
                if flavor != "html" or "html" in formats:
                    report.written.append(final)
                if flavor == "html":
                    printable.append((deck, final))
            if progress is not None:
                for flavor in formats:
                    if flavor != "pdf":
                        progress(display_path(path), flavor)
        except SlidegenError as failure:
            report.diagnostics.append(failure.diagnostic)
        except Exception as crash:  # noqa: BLE001 (a bug met on one deck must not stop the others)
            report.internal.append(internal_error(crash))
    if "html" in formats or browsed:
        from . import html

        files = [p for c in used.values() for p in (c.script, c.css) if p is not None]
        html.copy_assets(html_dir, components=files, mermaid=diagrams)
    if "html" in formats:
        report.written.append(html.write_index(index.decks, html_dir))
        if single_file:
            report.diagnostics.extend(_single_files(printable))
    if "pdf" in formats and printable:
        def printed(deck: Deck) -> None:
            if progress is not None:
                progress(display_path(deck.path), "pdf")

        written_pdf, problems = pdf.print_decks(printable, out / "pdf", on_printed=printed, with_clicks=with_clicks)
        report.written.extend(written_pdf)
        report.diagnostics.extend(problems)
        if notes:
            written_pdf, problems = pdf.print_decks(printable, out / "pdf", notes=True, suffix=".notes.pdf")
            report.written.extend(written_pdf)
            report.diagnostics.extend(p for p in problems if p not in report.diagnostics)
    if "png" in formats and printable:
        written_png, problems = png.snapshot_decks(printable, out / "png", scale, with_clicks)
        report.written.extend(written_png)
        report.diagnostics.extend(problems)
    return report


def _single_files(pages: Sequence[tuple[Deck, Path]]) -> list[Diagnostic]:
    """Make each built page one self-contained file; a warning for each file it names that is not there."""
    from . import singlefile

    problems: list[Diagnostic] = []
    for deck, page in pages:
        def warn(url: str, deck: Deck = deck) -> None:
            problems.append(Diagnostic(display_path(deck.path), 1, 1, f"single file: '{url}' is not in the "
                                       "build, so the page still loads it from beside it", "warning"))

        singlefile.write_single(page, warn)
    return problems


def _pictures(every: BoundDecks, targets: Sequence[Path], found: dict[str, components.Component],
              project: Project, renderer: FigureRenderer) -> dict[Path, snapshot.DeckPictures]:
    """The PowerPoint pictures of every component and diagram of the decks built, one browser for all."""
    from . import snapshot

    decks = []
    for path in targets:
        try:
            decks.append(every.deck(path))
        except SlidegenError:
            continue  # reported when the deck is built
    return snapshot.build_pictures(decks, found, project.build_dir / "cache" / "pictures", renderer,
                                   project.runs_dir, project.root)


def _write_deck(deck: Deck, formats: Sequence[str], stage: Path, media: Media, index: DeckIndex,
                math_cache: Path, found: Sequence[components.Component] = (), animate: bool = True
                ) -> tuple[list[tuple[str, Path]], list[Diagnostic]]:
    """Write ``deck`` in each format under ``stage/FORMAT/``: the files written (by format) and the warnings."""
    written: list[tuple[str, Path]] = []
    warnings: list[Diagnostic] = []
    if "html" in formats or "pdf" in formats or "png" in formats:
        from . import html

        written.append(("html", html.write_deck(deck, stage / "html", media.html, found, media.runs)))
    for flavor in ("md", "marp"):
        if flavor in formats:
            from . import markdown_out

            written.append((flavor, markdown_out.write_deck(deck, stage / flavor, media.html, flavor, index)))
    if "pptx" in formats:
        from . import pptx

        target = stage / "pptx" / f"{deck.slug}.pptx"
        warnings.extend(pptx.write_deck(deck, target, media.pptx, cache_dir=math_cache, animate=animate))
        written.append(("pptx", target))
    return written, warnings


#: Staging folders are ``out/.staging-PID-XXXX``: a build killed before it cleaned up leaves one.
STAGE_PREFIX = ".staging-"


def _remove_stale_stages(out: Path) -> None:
    """Remove the staging folders of builds that are no longer running (killed mid-deck)."""
    for stage in out.glob(f"{STAGE_PREFIX}*"):
        pid = stage.name[len(STAGE_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stage, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Stage:
    """A staging folder inside ``out`` (same file system: moving out of it is a rename), removed on exit."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def __enter__(self) -> _Stage:
        self.out.mkdir(parents=True, exist_ok=True)
        _remove_stale_stages(self.out)
        self.root = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-", dir=self.out))
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def land(self, places: dict[str, Path]) -> dict[Path, Path]:
        """Move every staged file to its place (``stage/FORMAT/REST`` -> ``places[FORMAT]/REST``), pictures
        first; map each staged path to where it landed."""
        staged = sorted((p for p in self.root.rglob("*") if p.is_file()),
                        key=lambda p: (p.parent.name != MEDIA_DIR, str(p)))
        landed = {}
        for path in staged:
            flavor, *rest = path.relative_to(self.root).parts
            target = places[flavor].joinpath(*rest)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(path, target)
            except OSError:  # another file system (PDF's temporary HTML folder): copied, then renamed there
                shutil.move(path, target)
            landed[path] = target
        return landed


def project_index(project: Project) -> DeckIndex:
    """The index of every deck of ``project``, each parsed and bound once (for an index page without a build)."""
    return bind_project(project).index
