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

from . import components, figbox, highlight, incremental, manifest
from .assets import MEDIA_DIR
from .bind import bind_deck
from .cite import cite_deck
from .deck import Deck, DeckEntry, DeckIndex
from .errors import Diagnostic, SlidegenError, display_path, internal_error
from .figure_cache import CachedFigureRenderer
from .figures import FigureRenderer
from .formats import DEFAULT_FORMATS, FORMATS, PARALLEL_FORMATS
from .frontmatter import visible
from .index import index_of, read_decks
from .library import load_library
from .media import Media, resolve_media
from .project import Project
from .results import Results

if TYPE_CHECKING:
    from . import snapshot

__all__ = ["DEFAULT_FORMATS", "FORMATS", "BuildReport", "build", "bind_project", "load_deck", "load_results"]


@dataclass
class BuildReport:
    """What one build wrote and what went wrong."""

    written: list[Path] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    """Bugs met (one "internal error, please report" message each); the build goes on without that deck."""
    skipped: list[Path] = field(default_factory=list)
    """Decks whose outputs were all up to date (nothing of theirs was written)."""

    @property
    def failed(self) -> bool:
        return bool(self.internal) or any(d.severity == "error" for d in self.diagnostics)


def load_results(project: Project, stale: bool = False) -> Results:
    """The project's results.md, or no results when it does not exist yet.

    With ``stale``, the rows whose experiment changed since it ran are marked (:attr:`Results.stale`,
    so binding warns where a slide cites one); :func:`build` reports why they could not be told.
    """
    try:
        results = Results.read(project.results_path)
    except FileNotFoundError:
        return Results()
    if stale and any(row.experiment for row in results.values()):  # measured rows: they may be stale
        from .stale import fingerprints_or_problem, stale_keys

        fingerprints, _ = fingerprints_or_problem(project)
        if fingerprints is not None:
            results.stale = stale_keys(fingerprints, {key: row.source for key, row in results.items()})
    return results


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


def bind_project(project: Project, extra: Sequence[Path] = (), only: Sequence[Path] | None = None) -> BoundDecks:
    """Parse and bind every deck of ``project`` (and ``extra`` decks outside it) once; index them in that order.

    ``only``: parse and bind just these decks (an incremental build knows the others from its manifest).
    """
    paths = {path.resolve(): path for path in [*project.deck_paths(), *extra]}
    if only is not None:
        wanted = {Path(path).resolve() for path in only}
        paths = {key: path for key, path in paths.items() if key in wanted}
    if not paths:  # nothing to bind: neither results.md nor the citation data is read
        return BoundDecks({}, {}, index_of([]))
    read = read_decks(list(paths.values()))
    results = load_results(project, stale=True)
    library = load_library(project.root, project.build_dir / "cache" / "citations")
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
    force: bool = False,
    jobs: int = 1,
) -> BuildReport:
    """Build ``paths`` (default: every deck) to ``out`` (default: ``build/``) in each format.

    Only outputs whose inputs changed since the last build into ``out`` are written (the
    manifest ``out/.manifest.json``, see :mod:`slidegen.manifest`); ``force`` writes them all.
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
    ``jobs``: worker processes for HTML and PowerPoint (0: one per core).
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
                             with_clicks=with_clicks, animate=animate, force=force, jobs=jobs)
    html_dir = html_dir or out / "html"
    targets = list(paths) if paths else project.deck_paths()
    report = BuildReport()
    if not paths:  # a deck file no build can read: its error, and the other decks built
        report.diagnostics += [Diagnostic(f"{display_path(p.parent)}/{p.name}", 1, 1, f"cannot read the deck: {why}")
                               for p, why in project.unusable_decks()]
    todo = incremental.Todo.make(project, targets, tuple(formats), out, html_dir, notes, scale, force,
                                 with_clicks=with_clicks, animate=animate, single_file=single_file)
    every = bind_project(project, targets, todo.to_parse)  # the decks the index needs before writing
    todo.entries_from(every)
    todo.inputs.rows()  # read once for the plan; says why staleness could not be told, if it could not
    if todo.paths and todo.inputs.stale_problem is not None:
        report.diagnostics.append(todo.inputs.stale_problem)
    settings = _Settings(tuple(formats), out, html_dir, figures_dir, animate)
    from . import parallel

    jobs = jobs or parallel.cores()
    if parallel.worth_it(len(todo.paths), jobs) and set(formats) <= PARALLEL_FORMATS:
        built = parallel.build_parallel(project, todo.paths, todo.deck_formats, settings, every, jobs, progress)
    else:
        built = build_decks(project, todo.paths, todo.deck_formats, settings, every, todo.index(), progress)
    printable: list[tuple[Deck, Path]] = []
    used: dict[str, Path] = {}
    diagrams = False
    for deck_built in built:
        report.written.extend(deck_built.reported)
        report.diagnostics.extend(deck_built.diagnostics)
        report.internal.extend(deck_built.internal)
        if deck_built.printable is not None:
            printable.append(deck_built.printable)
        used.update((p.name, p) for p in deck_built.component_files)
        diagrams = diagrams or deck_built.diagrams
    report.diagnostics.extend(todo.replayed())
    report.skipped.extend(todo.fresh)
    page = todo.finish(built)
    if built and ("html" in formats or browsed):
        from . import html

        html.copy_assets(html_dir, components=sorted(used.values()), mermaid=diagrams)
    if single_file:
        report.diagnostics.extend(_single_files([(b.path, final) for b in built for flavor, final in b.written
                                                 if flavor == "html"]))
    if "pdf" in formats and printable:
        def printed(deck: Deck) -> None:
            if progress is not None:
                progress(display_path(deck.path), "pdf")

        written_pdf, problems = pdf.print_decks(printable, out / "pdf", on_printed=printed, with_clicks=with_clicks)
        report.written.extend(written_pdf)
        report.diagnostics.extend(problems)
        todo.printed("pdf", written_pdf, problems)
        if notes:
            written_pdf, problems = pdf.print_decks(printable, out / "pdf", notes=True, suffix=".notes.pdf")
            report.written.extend(written_pdf)
            report.diagnostics.extend(p for p in problems if p not in report.diagnostics)
            todo.printed("pdf", written_pdf, problems)
    if "png" in formats and printable:
        written_png, problems = png.snapshot_decks(printable, out / "png", scale, with_clicks)
        report.written.extend(written_png)
        report.diagnostics.extend(problems)
        todo.printed("png", written_png, problems)
    if "html" in formats and (page is not None or built):  # last: it links the PPTX and PDF written above
        from . import html

        if not built:
            html.copy_assets(html_dir)
        decks = todo.index().decks
        files = {d.slug: {"pptx": out / "pptx" / f"{d.slug}.pptx", "pdf": out / "pdf" / f"{d.slug}.pdf"}
                 for d in decks}
        # the page the manifest says changed is written; else only when what it shows moved (counts, files)
        index_page = html.write_index(decks, html_dir, project.layout.title, files, changed_only=page is None)
        if index_page is not None:
            report.written.append(index_page)
    todo.save(page)
    return report


def _single_files(pages: Sequence[tuple[Path, Path]]) -> list[Diagnostic]:
    """Make each built page one self-contained file; a warning for each file it names that is not there."""
    from . import singlefile

    problems: list[Diagnostic] = []
    for source, page in pages:
        def warn(url: str, source: Path = source) -> None:
            problems.append(Diagnostic(display_path(source), 1, 1, f"single file: '{url}' is not in the "
                                       "build, so the page still loads it from beside it", "warning"))

        singlefile.write_single(page, warn)
    return problems


@dataclass(frozen=True)
class _Settings:
    """Where one build writes (what every deck of it shares, sent to worker processes as is)."""

    formats: tuple[str, ...]
    out: Path
    html_dir: Path
    figures_dir: Path | None
    animate: bool = True
    """PowerPoint slides animate their clicks (``False``: final-state slides)."""


@dataclass(frozen=True)
class DeckBuilt:
    """What building one deck did: files written per format, problems, and what the manifest keeps of it."""

    path: Path
    written: tuple[tuple[str, Path], ...] = ()
    """``(format, final path)`` of every file landed."""
    reported: tuple[Path, ...] = ()
    """The files the report lists (the HTML of a PDF-only build is not among them)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    internal: tuple[str, ...] = ()
    deps: manifest.Deps | None = None
    """What it was built from; ``None`` when it failed."""
    printable: tuple[Deck, Path] | None = None
    """The deck and its HTML, for PDF and PNG (serial builds only)."""
    component_files: tuple[Path, ...] = ()
    diagrams: bool = False
    entry: DeckEntry | None = None
    """Its index entry (when it parsed)."""
    pid: int = field(default_factory=os.getpid)
    """The process that wrote it."""


def build_decks(project: Project, paths: Sequence[Path], formats: dict[Path, tuple[str, ...]], settings: _Settings,
                every: BoundDecks, index: DeckIndex,
                progress: Callable[[str, str], None] | None = None) -> list[DeckBuilt]:
    """Write each deck of ``paths`` (bound in ``every``) in its ``formats`` under ``settings.out``."""
    out = settings.out
    missing = [p for p in paths if Path(p).resolve() not in every.problems]
    if missing:
        more = bind_project(project, paths, missing)
        every = BoundDecks({**every.decks, **more.decks}, {**every.problems, **more.problems}, every.index)
    renderer = CachedFigureRenderer(project, out_dir=settings.figures_dir)  # the registry found without imports
    math_cache = project.build_dir / "cache" / "math"  # equations drawn once, reused by every build
    places = {"html": settings.html_dir, **{flavor: out / flavor for flavor in ("pptx", "md", "marp")}}
    found = components.discover(project.root)
    with_pptx = [p for p in paths if "pptx" in formats[p]]
    pictures = _pictures(every, with_pptx, found, project, renderer) if with_pptx else {}
    browsed = "pdf" in settings.formats or "png" in settings.formats
    built = []
    for path in paths:
        deck_formats = formats[path]
        diagnostics: list[Diagnostic] = []
        parsed = every.decks.get(Path(path).resolve())
        entry = index_of([parsed]).decks[0] if parsed is not None else None
        diagnostics.extend(d for d in every.problems.get(Path(path).resolve(), []) if d.severity == "warning")
        try:
            deck = figbox.sized(every.deck(path))  # each figure drawn for the box its slide shows it in
            problems = components.deck_problems(deck, found)
            if problems:
                built.append(DeckBuilt(path, diagnostics=tuple(problems), entry=entry))
                continue
            media = resolve_media(deck, renderer, project.root)
            drawn = pictures.get(deck.path)
            if drawn is not None:
                if drawn.problems:
                    built.append(DeckBuilt(path, diagnostics=tuple(drawn.problems), entry=entry))
                    continue
                media.pptx.update(drawn.files)
            used = components.used(deck, found)
            diagrams = next(components.diagrams(deck), None) is not None
            diagnostics.extend(highlight.problems(deck))
            with _Stage(out) as stage:
                written, warnings = _write_deck(deck, deck_formats, stage.root, media, index, math_cache,
                                                tuple(found.values()), settings.animate)
                landed = stage.land(places)
            diagnostics.extend(warnings)
            finals = tuple((flavor, landed[staged]) for flavor, staged in written)
            html_page = next((final for flavor, final in finals if flavor == "html"), None)
            built.append(DeckBuilt(
                path, finals,
                tuple(final for flavor, final in finals if flavor != "html" or "html" in settings.formats),
                tuple(diagnostics), (), _deps(deck, media),
                (deck, html_page) if html_page is not None and browsed else None,
                tuple(p for c in used for p in (c.script, c.css) if p is not None), diagrams, entry,
            ))
            if progress is not None:
                for flavor in deck_formats:
                    if flavor != "pdf":
                        progress(display_path(path), flavor)
        except SlidegenError as failure:
            built.append(DeckBuilt(path, diagnostics=(*diagnostics, failure.diagnostic), entry=entry))
        except Exception as crash:  # noqa: BLE001 (a bug met on one deck must not stop the others)
            built.append(DeckBuilt(path, diagnostics=tuple(diagnostics), internal=(internal_error(crash),),
                                   entry=entry))
    return built


def _deps(deck: Deck, media: Media) -> manifest.Deps:
    """What ``deck``'s outputs are made from: what its text names, and the files its pictures, snippets
    and components' run records resolved to."""
    from .deck import CodeBlock, slide_blocks, walk_blocks

    pictures = [src for src in media.html if not src.startswith("fig:")]
    files = [media.html[src] for src in pictures] + [media.pptx[src] for src in pictures if src in media.pptx]
    files += media.runs.values()
    for slide in deck.slides:
        for blocks in (slide_blocks(slide), slide.notes_blocks):
            files += (block.source for block in walk_blocks(blocks)
                      if isinstance(block, CodeBlock) and block.source is not None)
    # Markdown files the deck imports (Slidev's `src:`): the files its slides were written in, and the importers
    imported = sorted({slide.path for slide in deck.slides if slide.path is not None}
                      | {site.path for site in deck.imports if site.path != deck.path})
    texts = [Path(path).read_text(encoding="utf-8", errors="replace") for path in (deck.path, *imported)]
    return manifest.text_deps("\n".join(texts), tuple(str(Path(f).resolve()) for f in (*files, *imported)))


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
