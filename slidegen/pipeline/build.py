"""``slidegen build``: every deck read and bound once, written in each format, outputs moved into place whole.

The stages are apart: :mod:`.bound` reads and binds the project's decks once (the deck index made from
them goes to every writer: links between decks, the index page, so no writer reads a deck's source);
:mod:`.decks` writes each deck through the writer table (:mod:`.writers`) into a staging folder
(:mod:`.staging`); :mod:`.incremental` plans what is out of date and :mod:`.parallel` spreads the decks
over processes. This module only puts them in that order, then prints PDF and PNG and the index page.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from slidegen.deck.nodes import Deck
from slidegen.errors import Diagnostic, display_path
from slidegen.formats import DEFAULT_FORMATS, PARALLEL_FORMATS
from slidegen.pipeline import incremental, parallel
from slidegen.pipeline.bound import bind_project
from slidegen.pipeline.decks import BuildSettings, build_decks
from slidegen.project import Project

__all__ = ["BuildOptions", "BuildReport", "build"]


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


@dataclass(frozen=True)
class BuildOptions:
    """How one build writes: the formats, where, and each format's settings."""

    formats: tuple[str, ...] = DEFAULT_FORMATS
    out: Path | None = None
    """The output folder (default: the project's ``build/``)."""
    notes: bool = False
    """PDF: also print each deck with its speaker notes under each slide, as ``SLUG.notes.pdf``."""
    html_dir: Path | None = None
    """Where the HTML goes (default: ``out/html``); PDF and PNG are printed from it."""
    figures_dir: Path | None = None
    """Where figures are drawn and cached (default: ``build/figures``)."""
    scale: float = 1.5
    """PNG: device pixels per CSS pixel (1.5: 1920x1080)."""
    single_file: bool = False
    """HTML: each page one self-contained file (:mod:`slidegen.write.singlefile`)."""
    with_clicks: bool = False
    """PDF and PNG show each click of a slide, not only its final state."""
    animate: bool = True
    """PowerPoint slides animate their clicks (``False``: final-state slides)."""
    force: bool = False
    """Write every output, up to date or not."""
    jobs: int = 1
    """Worker processes for HTML and PowerPoint (0: one per core)."""


def build(
    project: Project,
    paths: Sequence[Path] | None = None,
    options: BuildOptions = BuildOptions(),
    progress: Callable[[str, str], None] | None = None,
) -> BuildReport:
    """Build ``paths`` (default: every deck) as ``options`` say.

    Only outputs whose inputs changed since the last build into the output folder are written (the
    manifest ``out/.manifest.json``, see :mod:`slidegen.pipeline.manifest`); ``options.force`` writes them
    all. A deck with an error is reported and skipped; the others are still built. Each deck's outputs are
    written to a staging folder first and moved into place only when every writer succeeded: a deck's
    outputs of one build all land or none do. PDF and PNG are printed from the HTML (``out/html``, or a
    temporary folder when HTML is not asked for). ``progress(deck, output)`` is called as each output of a
    deck is done.
    """
    if "pdf" in options.formats or "png" in options.formats:
        from slidegen.write import pdf, png

        png.check_scale(options.scale)
        pdf.check_available()  # before any work: no Chromium is a set-up problem (exit 2)
        if "html" not in options.formats and options.html_dir is None:
            with tempfile.TemporaryDirectory(prefix="slidegen-pdf-") as tmp:
                return _build(project, paths, replace(options, html_dir=Path(tmp)), progress)
    return _build(project, paths, options, progress)


def _build(
    project: Project, paths: Sequence[Path] | None, options: BuildOptions, progress: Callable[[str, str], None] | None
) -> BuildReport:
    formats, notes, scale, with_clicks = options.formats, options.notes, options.scale, options.with_clicks
    single_file, animate, force, jobs = options.single_file, options.animate, options.force, options.jobs
    out = options.out or project.build_dir
    browsed = "pdf" in formats or "png" in formats
    html_dir = options.html_dir or out / "html"
    targets = list(paths) if paths else project.deck_paths()
    report = BuildReport()
    if not paths:  # a deck file no build can read: its error, and the other decks built
        report.diagnostics += [
            Diagnostic(f"{display_path(p.parent)}/{p.name}", 1, 1, f"cannot read the deck: {why}")
            for p, why in project.unusable_decks()
        ]
    todo = incremental.Todo.make(
        project,
        targets,
        tuple(formats),
        out,
        html_dir,
        notes,
        scale,
        force,
        with_clicks=with_clicks,
        animate=animate,
        single_file=single_file,
    )
    jobs = jobs or parallel.cores()
    spread = parallel.worth_it(len(todo.paths), jobs) and set(formats) <= PARALLEL_FORMATS
    # the decks the index needs before writing; in one process the decks to write too, so the project is
    # read and bound once (worker processes read and bind their own decks)
    every = bind_project(project, targets, todo.to_parse if spread else [*todo.to_parse, *todo.paths])
    todo.entries_from(every)
    todo.inputs.rows()  # read once for the plan; says why staleness could not be told, if it could not
    if todo.paths and todo.inputs.stale_problem is not None:
        report.diagnostics.append(todo.inputs.stale_problem)
    settings = BuildSettings(tuple(formats), out, html_dir, options.figures_dir, animate)
    if spread:
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
        from slidegen.write import html

        html.copy_assets(html_dir, components=sorted(used.values()), mermaid=diagrams)
    if single_file:
        report.diagnostics.extend(
            _single_files([(b.path, final) for b in built for flavor, final in b.written if flavor == "html"])
        )
    if printable:
        _print(printable, options, out, report, todo, progress)
    if "html" in formats and (page is not None or built):  # last: it links the PPTX and PDF written above
        from slidegen.write import html

        if not built:
            html.copy_assets(html_dir)
        decks = todo.index().decks
        files = {d.slug: {"pptx": out / "pptx" / f"{d.slug}.pptx", "pdf": out / "pdf" / f"{d.slug}.pdf"} for d in decks}
        # the page the manifest says changed is written; else only when what it shows moved (counts, files)
        index_page = html.write_index(decks, html_dir, project.layout.title, files, changed_only=page is None)
        if index_page is not None:
            report.written.append(index_page)
    todo.save(page)
    return report


def _print(
    printable: Sequence[tuple[Deck, Path]],
    options: BuildOptions,
    out: Path,
    report: BuildReport,
    todo: incremental.Todo,
    progress: Callable[[str, str], None] | None,
) -> None:
    """PDF and PNG of the decks just written, printed and photographed from their HTML by Chromium."""
    from slidegen.write import pdf, png

    def printed(deck: Deck) -> None:
        if progress is not None:
            progress(display_path(deck.path), "pdf")

    with pdf.Printer() as printer:  # one browser for the PDF, its notes and the PNG pictures
        if "pdf" in options.formats:
            written, problems = pdf.print_decks(
                printable, out / "pdf", on_printed=printed, with_clicks=options.with_clicks, printer=printer
            )
            report.written.extend(written)
            report.diagnostics.extend(problems)
            todo.printed("pdf", written, problems)
            if options.notes:
                written, problems = pdf.print_decks(
                    printable, out / "pdf", notes=True, suffix=".notes.pdf", printer=printer
                )
                report.written.extend(written)
                report.diagnostics.extend(p for p in problems if p not in report.diagnostics)
                todo.printed("pdf", written, problems)
        if "png" in options.formats:
            written, problems = png.snapshot_decks(
                printable, out / "png", options.scale, options.with_clicks, printer=printer
            )
            report.written.extend(written)
            report.diagnostics.extend(problems)
            todo.printed("png", written, problems)


def _single_files(pages: Sequence[tuple[Path, Path]]) -> list[Diagnostic]:
    """Make each built page one self-contained file; a warning for each file it names that is not there."""
    from slidegen.write import singlefile

    problems: list[Diagnostic] = []
    for source, page in pages:

        def warn(url: str, source: Path = source) -> None:
            problems.append(
                Diagnostic(
                    display_path(source),
                    1,
                    1,
                    f"single file: '{url}' is not in the build, so the page still loads it from beside it",
                    "warning",
                )
            )

        singlefile.write_single(page, warn)
    return problems
