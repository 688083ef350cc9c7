"""Find the files behind a deck's images, before any writer runs.

A deck names images four ways: ``![alt](img/x.png)`` (a path relative to the deck file),
``![alt](fig:ch01.loss)`` (a figure rendered from run data), ``image:`` in a slide's
frontmatter (the picture of a layout with an image side) and ``<img src="img/x.png">`` in raw
HTML (:mod:`slidegen.deck.rawimages`). :func:`resolve_media` maps each
``src`` as written to the file each writer should use: any web format for HTML, a
raster (PNG or JPEG) for PowerPoint. A missing file is an error at the line that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from slidegen import paths
from slidegen.deck import rawimages
from slidegen.deck.nodes import Deck, Figure, Image, block_inlines, slide_blocks, walk_blocks, walk_inlines
from slidegen.errors import Diagnostic, SlidegenError
from slidegen.media.components import run_problem, run_refs
from slidegen.media.figures import UnknownFigure
from slidegen.read.imports import by_file

RASTER = {".png", ".jpg", ".jpeg", ".gif"}
WEB = RASTER | {".svg", ".webp"}

#: Renders a figure by name and returns (file for HTML, raster for PPTX).
FigureRenderer = Callable[[str], tuple[Path, Path]]


@dataclass
class Media:
    """Image files for one deck, keyed by ``src`` as written in it."""

    html: dict[str, Path] = field(default_factory=dict)
    pptx: dict[str, Path] = field(default_factory=dict)
    runs: dict[str, Path] = field(default_factory=dict)
    """Run records components read (``run="ch01.trainer"``): id -> ``results/runs/ID.json``."""


def image_refs(deck: Deck) -> Iterator[tuple[str, int]]:
    """Every image ``src`` in ``deck`` with the source line that names it."""
    for src, line, _path in image_sites(deck):
        yield src, line


def image_sites(deck: Deck) -> Iterator[tuple[str, int, Path]]:
    """Every image ``src`` in ``deck`` with the line and file that name it (an imported slide's file is its own;
    its pictures are still relative to the deck, as Slidev resolves them)."""
    for slide in deck.slides:
        where = deck.slide_path(slide)
        image = slide.frontmatter.get("image")
        if isinstance(image, str) and image:
            yield image, slide.line, where
        found = slide.look.background
        if found is not None and found.image:
            yield found.image, slide.frontmatter_at.get("background", (slide.line, 1))[0], where
        for blocks in (slide_blocks(slide), slide.notes_blocks):
            for block in walk_blocks(blocks):
                if isinstance(block, Figure):
                    yield block.src, block.line, where
                for node in walk_inlines(block_inlines(block)):
                    if isinstance(node, Image):
                        yield node.src, getattr(block, "line", slide.line), where
        for src, line in rawimages.slide_refs(slide):  # <img src> in raw HTML, as Slidev serves it
            yield src, line, where


def resolve_media(deck: Deck, render_figure: FigureRenderer | None = None, root: Path | None = None) -> Media:
    """Map every image of ``deck`` to files; raise :class:`SlidegenError` for the first missing one.

    A picture must resolve (links followed) inside ``root``, the project, or inside the deck's
    own folder for a deck outside ``root``; its first bytes must be the format its extension says.
    """
    media = Media()
    allowed = paths.allowed_root(deck.path, root)
    for src, line, where in image_sites(deck):
        if src in media.html:
            continue
        if src.startswith("fig:"):
            if render_figure is None:
                raise SlidegenError(where, line, 1, f"figure '{src}' cannot be drawn: no figures are registered")
            try:
                media.html[src], media.pptx[src] = render_figure(src[4:])
            except UnknownFigure as error:
                raise SlidegenError(where, line, 1, f"unknown figure '{error.name}'{error.hint}") from None
            continue
        media.html[src], media.pptx[src] = resolve_picture(deck, src, line, allowed, where)
    runs_dir = (root or deck.path.parent.parent) / "results" / "runs"
    for where_run, part in by_file(deck):  # an imported slide's error names its own file
        for run, line in run_refs(part):
            problem = run_problem(run, runs_dir)
            if problem:
                raise SlidegenError(where_run, line, 1, f"component data: {problem}")
            media.runs[run] = runs_dir / f"{run}.json"
    return media


def picture_problems(deck: Deck, root: Path | None = None) -> list[Diagnostic]:
    """Every picture file (not figure) of ``deck`` that :func:`resolve_media` would stop on, each once
    at its line: what ``slidegen check`` reports without building."""
    allowed = paths.allowed_root(deck.path, root)
    seen: set[str] = set()
    out: list[Diagnostic] = []
    for src, line, where in image_sites(deck):
        if src in seen or src.startswith("fig:"):
            continue
        seen.add(src)
        try:
            resolve_picture(deck, src, line, allowed, where)
        except SlidegenError as error:
            out.append(error.diagnostic)
    return out


def resolve_picture(deck: Deck, src: str, line: int, allowed: Path, where: Path | None = None) -> tuple[Path, Path]:
    """The file behind one picture ``src`` (for HTML) and its raster (for PowerPoint); a located error if none
    (in ``where``, the file that names it: the deck's by default)."""
    where = where or deck.path
    path = paths.resolve(paths.PICTURE, paths.Written(src, where, line, 1), deck.path, allowed)
    if path.suffix.lower() not in WEB:
        raise SlidegenError(where, line, 1, f"image '{src}' is not PNG, JPEG, GIF, SVG or WebP")
    _check_format(deck, line, src, path, where)
    raster = path if path.suffix.lower() in RASTER else path.with_suffix(".png")
    if not raster.is_file():
        raise SlidegenError(
            where,
            line,
            1,
            f"image '{src}' has no raster twin for PowerPoint: add {raster.name} beside it",
        )
    if raster != path:  # the twin may be a link of its own: it too must lead to a readable file in the project
        raster = paths.resolve(paths.PICTURE, paths.Written(str(raster), where, line, 1), deck.path, allowed)
    _check_format(deck, line, src, raster, where)
    return path, raster


#: How each picture format begins (SVG: its root element within the first few KB).
SIGNATURES = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
}


def _check_format(deck: Deck, line: int, src: str, path: Path, where: Path | None = None) -> None:
    """Raise unless ``path``'s first bytes are the picture format its extension names."""
    ext = path.suffix.lower()
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as error:
        raise SlidegenError(where or deck.path, line, 1, f"image '{src}' cannot be read: {error.strerror}") from None
    if ext in SIGNATURES:
        ok = head.startswith(SIGNATURES[ext])
    elif ext == ".webp":
        ok = head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    else:
        ok = b"<svg" in head.lower()
    if not ok:
        raise SlidegenError(
            where or deck.path,
            line,
            1,
            f"image '{src}' ({path.name}) does not hold a "
            f"{ext.lstrip('.').upper()} picture; its bytes are not what its extension says",
        )
