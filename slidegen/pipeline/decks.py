"""One deck at a time: figures sized, media resolved, pictures drawn, then written through the writer table.

:func:`build_decks` is the code every process runs (:mod:`.parallel` sends it groups of decks): each deck
is written into its own staging folder (:mod:`.staging`) and lands whole, or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen.bind.glossary import explain, link_back
from slidegen.deck import figbox
from slidegen.deck.nodes import Deck, DeckEntry, DeckIndex
from slidegen.errors import Diagnostic, SlidegenError, display_path, internal_error
from slidegen.media import components
from slidegen.media.figure_cache import CachedFigureRenderer
from slidegen.media.figures import FigureRenderer
from slidegen.media.images import Media, resolve_media
from slidegen.pipeline import manifest
from slidegen.pipeline.bound import BoundDecks, bind_project
from slidegen.pipeline.glossary import glossary, glossary_deps
from slidegen.pipeline.index import index_of
from slidegen.pipeline.staging import Stage
from slidegen.project import Project
from slidegen.write import highlight
from slidegen.write.writers import WRITERS, WriteContext

if TYPE_CHECKING:
    from slidegen.write import snapshot


@dataclass(frozen=True)
class BuildSettings:
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


def build_decks(
    project: Project,
    paths: Sequence[Path],
    formats: dict[Path, tuple[str, ...]],
    settings: BuildSettings,
    every: BoundDecks,
    index: DeckIndex,
    progress: Callable[[str, str], None] | None = None,
) -> list[DeckBuilt]:
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
            deck = explain(deck, index) if deck.glossary is not None else link_back(deck, glossary(project, every))
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
            with Stage(out) as stage:
                context = WriteContext(stage.root, media, index, math_cache, tuple(found.values()), settings.animate)
                written, warnings = _write_deck(deck, deck_formats, context)
                landed = stage.land(places)
            diagnostics.extend(warnings)
            finals = tuple((flavor, landed[staged]) for flavor, staged in written)
            html_page = next((final for flavor, final in finals if flavor == "html"), None)
            built.append(
                DeckBuilt(
                    path,
                    finals,
                    tuple(final for flavor, final in finals if flavor != "html" or "html" in settings.formats),
                    tuple(diagnostics),
                    (),
                    _deps(deck, media, glossary_deps(project, deck, out)),
                    (deck, html_page) if html_page is not None and browsed else None,
                    tuple(p for c in used for p in (c.script, c.css) if p is not None),
                    diagrams,
                    entry,
                )
            )
            if progress is not None:
                for flavor in deck_formats:
                    if flavor != "pdf":
                        progress(display_path(path), flavor)
        except SlidegenError as failure:
            built.append(DeckBuilt(path, diagnostics=(*diagnostics, failure.diagnostic), entry=entry))
        except Exception as crash:  # noqa: BLE001 (a bug met on one deck must not stop the others)
            built.append(
                DeckBuilt(path, diagnostics=tuple(diagnostics), internal=(internal_error(crash),), entry=entry)
            )
    return built


def _deps(deck: Deck, media: Media, more: Sequence[Path] = ()) -> manifest.Deps:
    """What ``deck``'s outputs are made from: what its text names, the files its pictures, snippets
    and components' run records resolved to, and ``more`` (the glossary and the decks it links)."""
    from slidegen.deck.nodes import CodeBlock, slide_blocks, walk_blocks

    pictures = [src for src in media.html if not src.startswith("fig:")]
    files = [media.html[src] for src in pictures] + [media.pptx[src] for src in pictures if src in media.pptx]
    files += media.runs.values()
    for slide in deck.slides:
        for blocks in (slide_blocks(slide), slide.notes_blocks):
            files += (
                block.source
                for block in walk_blocks(blocks)
                if isinstance(block, CodeBlock) and block.source is not None
            )
    # Markdown files the deck imports (Slidev's `src:`): the files its slides were written in, and the importers
    imported = sorted(
        {slide.path for slide in deck.slides if slide.path is not None}
        | {site.path for site in deck.imports if site.path != deck.path}
    )
    texts = [Path(path).read_text(encoding="utf-8", errors="replace") for path in (deck.path, *imported)]
    named = (*files, *imported, *more)
    return manifest.text_deps("\n".join(texts), tuple(str(Path(f).resolve()) for f in named))


def _pictures(
    every: BoundDecks,
    targets: Sequence[Path],
    found: dict[str, components.Component],
    project: Project,
    renderer: FigureRenderer,
) -> dict[Path, snapshot.DeckPictures]:
    """The PowerPoint pictures of every component and diagram of the decks built, one browser for all."""
    from slidegen.write import snapshot

    decks = []
    for path in targets:
        try:
            decks.append(every.deck(path))
        except SlidegenError:
            continue  # reported when the deck is built
    return snapshot.build_pictures(
        decks, found, project.build_dir / "cache" / "pictures", renderer, project.runs_dir, project.root
    )


def _write_deck(
    deck: Deck, formats: Sequence[str], context: WriteContext
) -> tuple[list[tuple[str, Path]], list[Diagnostic]]:
    """Write ``deck`` in each format through the writer table: the files written (by format) and the warnings.
    PDF and PNG are printed from the HTML, so asking for either writes the HTML."""
    wanted = set(formats) | ({"html"} if {"pdf", "png"} & set(formats) else set())
    written: list[tuple[str, Path]] = []
    warnings: list[Diagnostic] = []
    for flavor, write in WRITERS.items():
        if flavor in wanted:
            paths, problems = write(deck, context)
            written += [(flavor, path) for path in paths]
            warnings += problems
    return written, warnings
