"""The pure step: ``Deck -> (PresentationModel, warnings)``. No XML; no files but the math cache's.

Each deck layout (:mod:`slidegen.deck.layouts`: slots, picture side, tone, placement, alignment)
maps to a :class:`Kind`: that layout plus its PowerPoint :class:`Look` (the template layout
it starts from, its title's size and style, its body's scale). The tone gives the background
and colours; a centred layout sets title and body as a group in the middle (``center``,
``section``...) instead of stacking them at the top (``default``). Body content is flattened
into items (:mod:`slidegen.write.pptx.content`), measured with an estimate of characters per
line, and placed top to bottom at the largest sizes that fit (code may grow past the theme size;
text shrinks down to the floors of :meth:`Sizes.at`); a slide that still overflows is reported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import assert_never

from pptx.util import Emu, Inches, Pt

from slidegen import theme
from slidegen.deck import figbox, links
from slidegen.deck import nodes as d
from slidegen.deck.layouts import LAYOUTS, Layout
from slidegen.errors import Diagnostic, display_path
from slidegen.media import components as comp
from slidegen.write.pptx import code_steps, fades, look, math_steps, spans, texmath
from slidegen.write.pptx.cache import MathCache
from slidegen.write.pptx.content import (
    DRAWN_EMU_PER_PX,
    CodeItem,
    Context,
    FigureItem,
    Flow,
    Item,
    MathItem,
    Sizes,
    TableItem,
    flatten,
    notes_lines,
    runs,
)
from slidegen.write.pptx.model import (
    Box,
    Equation,
    Para,
    Picture,
    PresentationModel,
    Run,
    Shape,
    SlideModel,
    Table,
    TextBox,
)

HEIGHT = Inches(theme.HEIGHT_IN)
WIDTH = Emu(HEIGHT * 16 // 9)  # 12192000 EMU, PowerPoint's own 16:9 (13.333 in)
#: One CSS px of the 1280x720 HTML slide: the master's geometry is the HTML theme's (theme.css.j2), so the two
#: outputs put the title, its rule, the accent bar and the footer in the same places.
PX = Emu(WIDTH // theme.WIDTH_PX)
MARGIN = Emu(72 * PX)
#: The cover's and the section slides' wider left margin, beside the cover's accent bar.
WIDE_MARGIN = Emu(112 * PX)
TITLE_TOP, TITLE_H = Inches(0.25), Emu(82 * PX)
BODY_TOP, BODY_BOTTOM = Inches(1.5), Inches(6.8)
FOOTER_TOP, FOOTER_H = Emu(676 * PX), Emu(36 * PX)
FOOTER_RULE_TOP = Emu(668 * PX)
GAP = Inches(0.18)
COLUMN_GAP = Inches(0.4)
INDENT = Inches(0.38)
TEXT_INSET = Inches(0.05)
CODE_INSET = Inches(0.15)
CELL_MARGIN_X, CELL_MARGIN_Y = Inches(0.1), Inches(0.05)
MIN_FIGURE_H = Inches(1.6)
#: Tallest figure on a centred slide, so the group keeps some air around it.
MAX_CENTERED_FIGURE_H = (BODY_BOTTOM - BODY_TOP) * 2 // 3
#: Shrink steps tried in order when content does not fit.
SCALES = (1.27, 1.13, 1.0, 0.91, 0.82, 0.73, 0.6)
#: Average advance of a character, in ems, per font (Carlito measures 0.40 on prose).
EM = {theme.SANS: 0.43, theme.MONO: 0.602}
LINE = 1.2
#: Room lost at the end of a wrapped line (about one word), in ems.
WRAP_WASTE = 2.0


@dataclass(frozen=True)
class Look:
    """How a layout's title and body look in PowerPoint, beyond the facts of the layout table."""

    template: str = "Title Only"
    """The template's slide layout the slide starts from."""
    title_pt: float = theme.TITLE_PT
    title_bold: bool = True
    title_italic: bool = False
    body_scale: float = 1.0


#: The looks of the layouts that differ from a plain content slide, by layout name.
LOOKS: dict[str, Look] = {
    "cover": Look("Title Slide", 48, body_scale=1.1),
    "section": Look(title_pt=46, body_scale=1.1),
    "fact": Look(title_pt=72, body_scale=1.1),
    "statement": Look(title_pt=48, body_scale=1.1),
    "quote": Look(title_pt=36, title_bold=False, title_italic=True, body_scale=1.45),
    "end": Look(title_pt=48, body_scale=1.1),
    "references": Look(body_scale=0.8),
}


@dataclass(frozen=True)
class Kind:
    """How a deck layout looks in PowerPoint: the layout's facts and its :class:`Look`."""

    layout: Layout
    look: Look = Look()


#: Every layout of the table as PowerPoint shows it.
KINDS: dict[str, Kind] = {name: Kind(spec, LOOKS.get(name, Look())) for name, spec in LAYOUTS.items()}
DEFAULT = KINDS["default"]


def build(
    deck: d.Deck,
    image_sizes: Mapping[str, tuple[int, int]],
    math: MathCache | None = None,
    animate: bool = False,
    index: d.DeckIndex | None = None,
) -> tuple[PresentationModel, list[Diagnostic]]:
    """Lay out every slide of ``deck``.

    ``image_sizes`` maps each image src that has a file to its pixel size; a src missing
    from it becomes a placeholder and a warning. Each slide's notes end with
    :func:`notes_footer`. ``math`` converts display math (default: in memory, no
    files). Raises SlidegenError for LaTeX that cannot be converted. With ``animate``, what a slide
    reveals on a click carries that click (:mod:`slidegen.write.pptx.anim` draws the animations) and code
    highlight steps become one copy of the block per step; without, every slide shows its final state.
    """
    warnings: list[Diagnostic] = []
    slides = []
    math = math or MathCache()
    width = look.slide_width(deck, HEIGHT)
    faces = deck.settings
    for slide in deck.slides:
        model, slide_warnings = _slide(
            deck, slide, image_sizes, display_path(deck.slide_path(slide)), math, width, animate, index
        )
        slides.append(look.typefaces(faces, replace(model, notes_footer=notes_footer(slide))))
        warnings += slide_warnings
    author = str(deck.headmatter.get("author", "") or "")
    return PresentationModel(width, HEIGHT, deck.title, author, tuple(slides), faces.pptx_sans or ""), warnings


def notes_footer(slide: d.Slide) -> tuple[str, ...]:
    """The lines that end a bound slide's notes: each result it cites with its source, once, then each work
    it cites in full (none: no lines)."""
    known = {source.key: source.source for source in slide.sources if source.source}
    lines: list[str] = []
    if known:
        lines += ["Sources of the numbers on this slide:", *(f"{key}: {text}" for key, text in known.items())]
    if slide.works and slide.layout != "references":
        lines += ["References:", *(work.reference for work in slide.works)]
    if comp.slide_instances(slide):
        lines.append(comp.INTERACTIVE_NOTE)
    return tuple(lines)


# --------------------------------------------------------------------------- one slide


def _slide(
    deck: d.Deck,
    slide: d.Slide,
    image_sizes: Mapping[str, tuple[int, int]],
    where: str,
    math: MathCache,
    width: int = WIDTH,
    animate: bool = False,
    index: d.DeckIndex | None = None,
) -> tuple[SlideModel, list[Diagnostic]]:
    kind = KINDS.get(slide.layout)
    fixed: list[Diagnostic] = []
    if kind is None:
        fixed.append(
            Diagnostic(where, slide.line, 1, f"unknown layout '{slide.layout}'; laid out as 'default'", "warning")
        )
        kind = DEFAULT
    else:  # a background colour or colorSchema: dark sets the tone; zoom: scales the text
        toned = deck.layout_of(slide)
        kind = replace(kind, layout=toned, look=replace(kind.look, body_scale=kind.look.body_scale * slide.look.zoom))
    color = theme.TEXT_ON_DARK if kind.layout.dark else theme.TEXT
    slide = shown_title(slide)
    blocks = tuple(b for i, b in enumerate(slide.blocks) if i != slide.title_heading)
    columns, region, shapes = _regions(slide, kind.layout, blocks, image_sizes, where, fixed, width)
    fill, behind = look.backdrop(slide, width, HEIGHT, image_sizes)

    warnings: list[Diagnostic] = []

    def sink(found: list[Diagnostic]) -> Callable[[int, str], None]:
        return lambda line, msg: found.append(Diagnostic(where, line or slide.line, 1, msg, "warning"))

    def in_column(blocks: tuple[d.Block, ...], area: Box) -> Callable[[Context], tuple[list[Shape], bool]]:
        return lambda ctx: _column(flatten(blocks, ctx), area, ctx, image_sizes, center=False)

    def fit(place: Callable[[Context], tuple[list[Shape], bool]]) -> list[Shape]:
        """``place`` at the largest sizes where it fits; at the smallest (and a warning) if none does."""
        for scale in SCALES:
            found: list[Diagnostic] = []
            ctx = Context(
                deck,
                Sizes.at(scale, kind.look.body_scale),
                color=color,
                link_color=theme.TEXT_ON_DARK if kind.layout.dark else theme.ACCENT,
                align=kind.layout.align,
                warn=sink(found),
                math=math,
                pictures=frozenset(image_sizes),
                animate=animate,
                where=where,
                index=index,
            )
            placed, fits = place(ctx)
            if fits:
                break
        else:
            found.append(
                Diagnostic(
                    where,
                    slide.line,
                    1,
                    f"slide {slide.index} does not fit even at {ctx.sizes.body:g} pt; split it or cut some content",
                    "warning",
                )
            )
        warnings.extend(w for w in found if w not in warnings)
        return placed

    footnotes, notes_h = _footnotes(slide, kind, Context(deck, Sizes.at(1.0), color=color, warn=sink(warnings)), region)
    if kind.layout.centered:
        author = str(deck.headmatter.get("author") or "") if slide.layout == "cover" else ""
        group = tuple(b for column in columns for b in column)  # one group: the slots one after the other
        placed = fit(lambda ctx: _place_centered(slide, kind, ctx, group, region, image_sizes, author))
    else:
        plain = Context(
            deck,
            Sizes.at(1.0, kind.look.body_scale),
            color=color,
            math=math,
            pictures=frozenset(image_sizes),
            where=where,
            index=index,
        )
        placed = _place_title(slide, kind, Context(deck, Sizes.at(1.0), color=color), region)
        top: int = BODY_TOP if placed else Inches(0.5)
        end: int = BODY_BOTTOM - (notes_h + GAP if notes_h else 0)
        header, bottom = _bands(slide, kind.layout, blocks)
        if header:
            h = _column_height(flatten(header, plain), region.w, image_sizes, plain)
            placed += fit(in_column(header, Box(region.x, top, region.w, h)))
            top += h + GAP
        if bottom:
            h = _column_height(flatten(bottom, plain), region.w, image_sizes, plain)
            placed += fit(in_column(bottom, Box(region.x, end - h, region.w, h)))
            end -= h + GAP
        col_w = (region.w - COLUMN_GAP * (len(columns) - 1)) // len(columns)
        for i, col in enumerate(columns):
            area = Box(region.x + i * (col_w + COLUMN_GAP), top, col_w, end - top)
            placed += fit(in_column(col, area))
    if kind.layout.image == "full":  # placeholders are drawn first: the picture behind would hide the title
        placed = [replace(s, placeholder=None) if isinstance(s, TextBox) else s for s in placed]
    shapes += (
        placed
        + footnotes
        + _footer(deck, slide, kind, _footer_band(kind, region, width))
        + _master_marks(slide, kind, placed, _footer_band(kind, region, width))
    )
    shapes = behind + look.recolor(slide, shapes)
    # copies drawn behind: a paragraph's states (inline clicks, pptx/spans.py), faded paragraphs (fades.py);
    # a formula's line steps: a dimmed copy per step (math_steps.py)
    ground = fill or (theme.ACCENT_DARK_BG if kind.layout.dark else theme.BACKGROUND)
    shapes = math_steps.with_steps(fades.with_copies(spans.with_states(shapes, ground), ground), ground)
    notes = tuple(notes_lines(slide.notes_blocks)) or tuple((slide.notes or "").splitlines())
    titled = any(isinstance(s, TextBox) and s.placeholder == "title" for s in shapes)
    template = kind.look.template if titled else "Blank"
    model = SlideModel(
        slide.index,
        slide.layout,
        template,
        tuple(shapes),
        background=fill or (theme.ACCENT_DARK_BG if kind.layout.dark else None),
        notes=notes,
        transition=look.transition(deck, slide),
    )
    return model, fixed + warnings


def _regions(
    slide: d.Slide,
    spec: Layout,
    blocks: tuple[d.Block, ...],
    image_sizes: Mapping[str, tuple[int, int]],
    where: str,
    warnings: list[Diagnostic],
    width: int = WIDTH,
) -> tuple[list[tuple[d.Block, ...]], Box, list[Shape]]:
    """The slots to lay out (one column each), the region (title and body) they share, and any half-slide image.

    In a layout with a header (``two-cols-header``) the columns are the named slots only: the default
    slot and the bottom slot are bands above and below them (:func:`_bands`).
    """
    margin = MARGIN if spec.padded else Inches(0.25)
    full = Box(margin, 0, width - 2 * margin, HEIGHT)
    if slide.layout in ("cover", "section"):  # flush left beside the accent bar, as in HTML
        right = WIDE_MARGIN if slide.layout == "cover" else MARGIN
        full = Box(WIDE_MARGIN, 0, width - WIDE_MARGIN - right, HEIGHT)
    if spec.header:
        columns = [tuple(slide.slots.get(name, ())) for name in spec.slots]
    elif spec.slots:
        columns = [blocks, *(tuple(slide.slots.get(name, ())) for name in spec.slots)]
    else:
        columns = [blocks + tuple(b for slot in slide.slots.values() for b in slot)]
    side = spec.image or spec.frame
    if side is None:
        return columns, full, []
    half = width // 2
    left = side == "left"
    if side == "full":
        region, side_box = full, Box(0, 0, width, HEIGHT)
    else:
        region = Box(half + MARGIN if left else MARGIN, 0, half - 2 * MARGIN, HEIGHT)
        side_box = Box(0 if left else half, 0, width - half, HEIGHT)
    if spec.frame:
        if side == "full":  # under the title (a placeholder, drawn first, that the box would hide)
            side_box = Box(MARGIN, BODY_TOP, width - 2 * MARGIN, BODY_BOTTOM - BODY_TOP)
        return columns, region, [_web_page(slide, side_box, where, warnings)]
    src = slide.frontmatter.get("image")
    if not src or str(src) not in image_sizes:
        why = "has no 'image:' in its frontmatter" if not src else f"image '{src}' was not found"
        warnings.append(Diagnostic(where, slide.line, 1, f"{slide.layout} slide {why}", "warning"))
        return columns, region, [_missing(side_box, str(src or "image:"))]
    pad = Inches(0) if side == "full" else Inches(0.4)
    picture: list[Shape] = []
    alt = str(slide.frontmatter.get("alt") or slide.title or src)
    _place_figure(
        FigureItem(str(src), alt, None, slide.line, DRAWN_EMU_PER_PX if figbox.split(str(src))[1] else 0),
        Box(side_box.x + pad, side_box.y + pad, side_box.w - 2 * pad, side_box.h - 2 * pad),
        image_sizes,
        picture,
        None,
        middle=True,
    )
    return columns, region, picture


def _web_page(slide: d.Slide, box: Box, where: str, warnings: list[Diagnostic]) -> TextBox:
    """An iframe layout's web page: PowerPoint cannot embed it, so its address, as a link, and a warning."""
    url = str(slide.frontmatter.get("url") or "")
    warnings.append(
        Diagnostic(
            where,
            slide.line,
            1,
            f"{slide.layout} slide shows the web page {url}, which needs the network; PowerPoint shows its address",
            "warning",
        )
    )
    inner = Box(box.x + Inches(0.4), box.y + Inches(0.4), box.w - Inches(0.8), box.h - Inches(0.8))
    paras = (
        Para((Run("Web page (opens with the network):"),), Pt(16), color=theme.MUTED, align="center"),
        Para((Run(url, url=url, color=theme.ACCENT),), Pt(20), align="center", space_before=Pt(8)),
    )
    return TextBox(inner, paras, "Web page", fill=theme.CODE_BACKGROUND, anchor="middle", inset=TEXT_INSET)


def _bands(
    slide: d.Slide, spec: Layout, blocks: tuple[d.Block, ...]
) -> tuple[tuple[d.Block, ...], tuple[d.Block, ...]]:
    """The blocks spanning the slide above the columns (the header) and below them (the bottom slot)."""
    header = blocks if spec.header else ()
    bottom = tuple(slide.slots.get(spec.bottom, ())) if spec.bottom else ()
    return header, bottom


def _place_centered(
    slide: d.Slide,
    kind: Kind,
    ctx: Context,
    blocks: tuple[d.Block, ...],
    region: Box,
    image_sizes: Mapping[str, tuple[int, int]],
    author: str,
) -> tuple[list[Shape], bool]:
    """Title and body as one group in the middle of the slide (cover, center, section...).

    The cover's first text box fills the subtitle placeholder and ends with ``author``.
    """
    title = _title_para(slide, kind, ctx, region.w, HEIGHT // 3)
    title_h = _para_height(title, region.w) + 2 * TEXT_INSET if title else 0
    items = flatten(blocks, ctx)
    if author:
        para = Para(
            (Run(author),),
            Pt(ctx.sizes.body),
            color=theme.MUTED,
            align=ctx.align,
            space_before=Pt(ctx.sizes.body) if items else Pt(0),
        )
        if items and isinstance(items[-1], Flow):
            items[-1].paras.append(para)
        else:
            items.append(Flow([para]))
    if slide.layout == "cover":  # the cover's subtitle is muted, as in HTML
        for item in items:
            if isinstance(item, Flow):
                item.paras[:] = [replace(p, color=theme.MUTED) if p.color == ctx.color else p for p in item.paras]
    top, bottom = Emu(44 * PX), Emu(656 * PX)  # the HTML slide body's box: the group centres where it does
    body_h = _column_height(items, region.w, image_sizes, ctx)
    # under the title: its rule and the space the HTML theme leaves (0.35 em of the title, 0.55 em of the body)
    rule_w, rule_h, rule_gap, _ = RULES.get(slide.layout, (72, 5, 14, False))
    after = Emu((rule_gap + rule_h + 40) * PX) if slide.layout not in NO_RULE else 2 * GAP
    free = bottom - top - body_h - (title_h + after if title else 0)
    y = top + max(free, 0) // 2
    shapes: list[Shape] = []
    if title:
        shapes.append(
            TextBox(Box(region.x, y, region.w, title_h), (title,), "Title", "title", anchor="middle", inset=TEXT_INSET)
        )
        y += title_h + after
    body, fits = _column(items, Box(region.x, y, region.w, bottom - y), ctx, image_sizes, center=True)
    if slide.layout == "cover" and title:  # a subtitle needs the title slide layout, which a slide without title lacks
        body = [
            replace(s, placeholder="subtitle", name="Subtitle") if i == 0 and isinstance(s, TextBox) else s
            for i, s in enumerate(body)
        ]
    return shapes + body, fits and free >= 0


def _place_title(slide: d.Slide, kind: Kind, ctx: Context, region: Box) -> list[Shape]:
    """The title at the top of a content slide, bottom-aligned over the body; none without a title."""
    title = _title_para(slide, kind, ctx, region.w, TITLE_H)
    if title is None:
        return []
    return [
        TextBox(
            Box(region.x, TITLE_TOP, region.w, TITLE_H), (title,), "Title", "title", anchor="bottom", inset=TEXT_INSET
        )
    ]


def shown_title(slide: d.Slide) -> d.Slide:
    """``slide`` with its first heading as the title box's text when a frontmatter ``title`` named it.

    A frontmatter ``title`` names the slide (table of contents, links, the index), as in Slidev,
    where it is never drawn: the slide still shows its heading, once, in the title box.
    """
    if slide.title_heading is not None:
        return slide
    first = next((i for i, b in enumerate(slide.blocks) if isinstance(b, d.Heading)), None)
    if first is None:
        return slide
    heading = slide.blocks[first]
    assert isinstance(heading, d.Heading)
    return replace(slide, title_heading=first, title_inlines=heading.children)


def _title_para(slide: d.Slide, kind: Kind, ctx: Context, width: int, height: int) -> Para | None:
    """The title paragraph, shrunk in 2-pt steps (down to 60%) until it fits ``width`` x ``height``."""
    if not slide.title.strip():
        return None
    inlines = slide.title_inlines or (d.Text(slide.title),)
    body = tuple(runs(inlines, replace(ctx, link_color=ctx.color), slide.line))
    size = kind.look.title_pt
    while True:
        para = Para(
            body,
            Pt(size),
            color=ctx.color,
            bold=kind.look.title_bold,
            italic=kind.look.title_italic,
            align=kind.layout.align,
        )
        if _para_height(para, width) + 2 * TEXT_INSET <= height or size - 2 < kind.look.title_pt * 0.6:
            return para
        size -= 2


# --------------------------------------------------------------------------- measuring


def _line_widths(para: Para) -> list[float]:
    """Width in points of each hard line of ``para`` if it were not wrapped."""
    widths = [0.0]
    size = para.size / 12700  # points
    for run in para.runs:
        em = EM.get(run.font or para.font, EM[theme.SANS]) * (1.05 if run.bold or para.bold else 1.0)
        for i, piece in enumerate(run.text.split("\n")):
            if i:
                widths.append(0.0)
            widths[-1] += len(piece.expandtabs(4)) * em * size
    return widths


def _indent(para: Para) -> int:
    return INDENT * (para.level + 1) if para.bullet else 0


def _para_height(para: Para, width: int) -> int:
    """Estimated height: hard lines, each wrapped at the box width less a word of waste."""
    avail = max(Emu(width - _indent(para) - 2 * TEXT_INSET).pt, 1.0)
    wrap_at = avail if para.font == theme.MONO else max(avail - WRAP_WASTE * para.size.pt, 1.0)
    lines = sum(1 if w <= avail else math.ceil(w / wrap_at) for w in _line_widths(para))
    return Pt(lines * para.size.pt * LINE) + para.space_before


def _flow_height(paras: list[Para], width: int, inset: int = TEXT_INSET) -> int:
    return sum(_para_height(p, width - 2 * (inset - TEXT_INSET)) for p in paras) + 2 * inset


def _fit_code(item: CodeItem, width: int) -> list[Para]:
    """Code paragraphs at a size where the longest line fits ``width``, never below the theme's code size
    (18 pt as shown): a longer line wraps, as in HTML, and ``slidegen check`` warns on code that cannot fit."""
    avail = Emu(width - 2 * CODE_INSET).pt
    size = item.paras[0].size.pt
    fitting = avail / (EM[theme.MONO] * max(item.width_chars, 1))
    if fitting < size:
        size = max(float(theme.CODE_PT), math.floor(fitting))
        return [replace(p, size=Pt(size)) for p in item.paras]
    return item.paras


def _table_dims(item: TableItem, width: int) -> tuple[list[int], list[int]]:
    """Column widths (natural, scaled down to ``width``) and row heights."""
    rows = [item.header, *item.rows]
    ncols = max(len(r) for r in rows)
    natural = [0.0] * ncols
    for row in rows:
        for i, cell in enumerate(row):
            natural[i] = max(natural[i], max(_line_widths(cell)) * 1.06 + Emu(2 * CELL_MARGIN_X).pt)
    natural = [max(n, Emu(Inches(0.7)).pt) for n in natural]
    total = sum(natural)
    scale = min(1.2, Emu(width).pt / total)
    cols = [int(Pt(n * scale)) for n in natural]
    heights = []
    for row in rows:
        h = max(
            (_para_height(cell, cols[i] - 2 * CELL_MARGIN_X + 2 * TEXT_INSET) for i, cell in enumerate(row)), default=0
        )
        heights.append(h + 2 * CELL_MARGIN_Y)
    return cols, heights


def _math_size(item: MathItem, ctx: Context, width: int) -> tuple[int, int]:
    px_w, px_h = texmath.png_size(item.png)
    scale = ctx.sizes.math / item.size
    w, h = int(Inches(px_w / texmath.DPI * scale)), int(Inches(px_h / texmath.DPI * scale))
    if w > width:
        w, h = width, int(h * width / w)
    return w, h


def _figure_natural(item: FigureItem, width: int, image_sizes: Mapping[str, tuple[int, int]]) -> int:
    w, h = image_sizes[item.src]
    if item.emu_per_px:
        return int(min(width / w, item.emu_per_px) * h)
    return int(width * h / w)


def _figure_least(item: FigureItem, width: int, image_sizes: Mapping[str, tuple[int, int]]) -> int:
    """The least height a figure needs: :data:`MIN_FIGURE_H`, or less for a picture drawn at a fixed scale
    (an HTML region, a component) whose natural height is smaller."""
    if item.emu_per_px and item.src in image_sizes:
        return min(MIN_FIGURE_H, _figure_natural(item, width, image_sizes))
    return MIN_FIGURE_H


def _fixed_height(item: Item, width: int, ctx: Context) -> int:
    """The height ``item`` takes whatever room is left; figures take what the others leave (0 here)."""
    match item:
        case Flow():
            return _flow_height(item.paras, width)
        case CodeItem():
            return _flow_height(_fit_code(item, width), width, CODE_INSET)
        case TableItem():
            return sum(_table_dims(item, width)[1])
        case MathItem():
            return _math_size(item, ctx, width)[1]
        case FigureItem():
            return 0
        case _:
            assert_never(item)


def _caption_height(item: FigureItem, width: int) -> int:
    return _para_height(item.caption, width) + 2 * TEXT_INSET if item.caption else 0


def _column_height(items: list[Item], width: int, image_sizes: Mapping[str, tuple[int, int]], ctx: Context) -> int:
    """Natural height of a column (figures at full width, capped at two thirds of the body)."""
    total = GAP * max(len(items) - 1, 0)
    for item in items:
        if isinstance(item, FigureItem):
            pic = _figure_natural(item, width, image_sizes) if item.src in image_sizes else MIN_FIGURE_H
            total += min(pic, MAX_CENTERED_FIGURE_H) + _caption_height(item, width)
        else:
            total += _fixed_height(item, width, ctx)
    return total


# --------------------------------------------------------------------------- placing


def _column(
    items: list[Item], area: Box, ctx: Context, image_sizes: Mapping[str, tuple[int, int]], center: bool
) -> tuple[list[Shape], bool]:
    """Shapes for ``items`` stacked from the top of ``area``; False when they overflow it."""
    figures = [it for it in items if isinstance(it, FigureItem)]
    fixed = sum(
        _fixed_height(it, area.w, ctx) + (_caption_height(it, area.w) if isinstance(it, FigureItem) else 0)
        for it in items
    ) + GAP * max(len(items) - 1, 0)
    free = area.h - fixed
    per_figure = free // len(figures) if figures else 0
    fits = free >= sum(_figure_least(it, area.w, image_sizes) for it in figures)
    per_figure = max(min(per_figure, MAX_CENTERED_FIGURE_H) if center else per_figure, MIN_FIGURE_H)

    shapes: list[Shape] = []
    y = area.y
    for item in items:
        if isinstance(item, Flow):
            h = _flow_height(item.paras, area.w)
            box = Box(area.x, y, area.w, h)
            if center and any(p.bullet for p in item.paras):
                w = min(
                    area.w,
                    int(Pt(max(max(_line_widths(p)) + Emu(_indent(p)).pt for p in item.paras) * 1.1)) + 2 * TEXT_INSET,
                )
                box = Box(area.x + (area.w - w) // 2, y, w, h)
            shapes.append(TextBox(box, tuple(item.paras), "Text", inset=TEXT_INSET))
        elif isinstance(item, CodeItem):
            paras = _fit_code(item, area.w)
            h = _flow_height(paras, area.w, CODE_INSET)
            shapes += code_steps.boxes(
                TextBox(
                    Box(area.x, y, area.w, h),
                    tuple(paras),
                    "Code",
                    fill=theme.CODE_BACKGROUND,
                    inset=CODE_INSET,
                    appear=item.appear,
                    vanish=item.vanish,
                ),
                item.steps,
                item.clicks,
            )
        elif isinstance(item, TableItem):
            cols, rows = _table_dims(item, area.w)
            w, h = sum(cols), sum(rows)
            x = area.x + (area.w - w) // 2 if center else area.x
            shapes.append(
                Table(
                    Box(x, y, w, h),
                    tuple(item.header),
                    tuple(tuple(r) for r in item.rows),
                    tuple(cols),
                    tuple(rows),
                    appear=item.appear,
                    vanish=item.vanish,
                )
            )
        elif isinstance(item, MathItem):
            w, h = _math_size(item, ctx, area.w)
            shapes.append(
                Equation(
                    Box(area.x + (area.w - w) // 2, y, w, h),
                    item.tex,
                    item.omml,
                    item.png,
                    Pt(ctx.sizes.math),
                    ctx.color,
                    appear=item.appear,
                    vanish=item.vanish,
                    steps=item.steps,
                    clicks=item.clicks,
                )
            )
        elif isinstance(item, FigureItem):
            placed = len(shapes)
            h = _place_figure(item, Box(area.x, y, area.w, per_figure), image_sizes, shapes, ctx)
            if item.appear or item.vanish:
                shapes[placed:] = [replace(s, appear=item.appear, vanish=item.vanish) for s in shapes[placed:]]
            if item.caption:
                cap_h = _caption_height(item, area.w)
                shapes.append(
                    TextBox(
                        Box(area.x, y + h, area.w, cap_h),
                        (item.caption,),
                        "Caption",
                        inset=TEXT_INSET,
                        appear=item.appear,
                        vanish=item.vanish,
                    )
                )
                h += cap_h
        else:
            assert_never(item)
        y += h + GAP
    return shapes, fits and y - GAP <= area.bottom


def _place_figure(
    item: FigureItem,
    area: Box,
    image_sizes: Mapping[str, tuple[int, int]],
    shapes: list[Shape],
    ctx: Context | None,
    middle: bool = False,
) -> int:
    """Add the picture fitted in ``area`` (centred), or a placeholder; return the height used."""
    if item.src not in image_sizes:
        if ctx:
            ctx.warn(item.line, f"image '{item.src}' was not found (or is not a PNG/JPEG); a placeholder is shown")
        shapes.append(_missing(Box(area.x, area.y, area.w, MIN_FIGURE_H), item.src))
        return MIN_FIGURE_H
    w, h = image_sizes[item.src]
    scale = min(area.w / w, area.h / h, item.emu_per_px or math.inf)
    pw, ph = int(w * scale), int(h * scale)
    y = area.y + (area.h - ph) // 2 if middle else area.y
    shapes.append(Picture(Box(area.x + (area.w - pw) // 2, y, pw, ph), item.src, item.alt or item.src))
    return ph


def _missing(box: Box, src: str) -> TextBox:
    """The placeholder shown where an image file is missing."""
    para = Para((Run(f"[missing image: {src}]"),), Pt(16), color=theme.MUTED, align="center")
    return TextBox(box, (para,), "Missing image", fill=theme.CODE_BACKGROUND, anchor="middle", inset=TEXT_INSET)


def _footnotes(slide: d.Slide, kind: Kind, ctx: Context, region: Box) -> tuple[list[Shape], int]:
    """The slide's footnotes in one small text box at the bottom of its body, and that box's height."""
    if not slide.footnotes:
        return [], 0
    size = Pt(theme.NOTE_PT)
    color = theme.TEXT_ON_DARK if kind.layout.dark else theme.MUTED
    paras = []
    for note in slide.footnotes:
        inlines: list[d.Inline] = []
        for block in note.blocks:
            inlines += [d.Text(" ")] if inlines else []
            inlines += d.block_inlines(block) or (d.Text(d.plain_text(d.block_inlines(block))),)
        body = runs(tuple(inlines), replace(ctx, color=color), note.line)
        paras.append(Para((Run(f"{note.number} ", baseline=30000), *body), size, color=color))
    h = _flow_height(paras, region.w)
    return [TextBox(Box(region.x, BODY_BOTTOM - h, region.w, h), tuple(paras), "Footnotes", inset=TEXT_INSET)], h


#: The rule under a title, by layout: (width, height, gap under the title) in px of the HTML slide, centred or not.
RULES: dict[str, tuple[int, int, int, bool]] = {
    "cover": (110, 6, 22, False),
    "section": (110, 5, 14, False),
    "center": (72, 5, 14, True),
    "statement": (72, 5, 14, True),
    "end": (72, 5, 14, True),
}
NO_RULE = ("fact", "quote", "full", "none", "image", "iframe")


def _master_marks(slide: d.Slide, kind: Kind, placed: list[Shape], band: Box) -> list[Shape]:
    """What the master draws besides text, as the HTML theme does: the cover's accent bar at the left edge, the
    rule under the title (accent on light slides, white on dark ones) and the rule over the footer."""
    marks: list[Shape] = []
    if slide.layout == "cover":
        marks.append(TextBox(Box(0, 0, Emu(18 * PX), HEIGHT), (), "Accent bar", fill=theme.ACCENT))
    title = next((s for s in placed if isinstance(s, TextBox) and s.placeholder == "title"), None)
    if title is not None and slide.layout not in NO_RULE and title.paras:
        w, h, gap, centred = RULES.get(slide.layout, (72, 5, 14, False))
        para = title.paras[0]
        text_h = _para_height(para, title.box.w) + 2 * TEXT_INSET
        text_bottom = (
            title.box.bottom
            if title.anchor == "bottom"
            else (title.box.y + (title.box.h + text_h) // 2 if title.anchor == "middle" else title.box.y + text_h)
        )
        left = title.box.x + TEXT_INSET
        if centred or para.align == "center":
            left = title.box.x + (title.box.w - w * PX) // 2
        colour = theme.TEXT_ON_DARK if kind.layout.dark else theme.ACCENT
        marks.append(TextBox(Box(left, text_bottom + gap * PX // 2, w * PX, h * PX), (), "Title rule", fill=colour))
    line = "#575e66" if kind.layout.dark else theme.TABLE_HEADER_BACKGROUND  # the HTML's white at 25% on dark
    marks.append(TextBox(Box(band.x, FOOTER_RULE_TOP, band.w, PX), (), "Footer rule", fill=line))
    return marks


def _footer_band(kind: Kind, region: Box, width: int) -> Box:
    """Where the footer runs: between the slide's margins, or under the text half beside a picture."""
    if kind.layout.image in ("left", "right") or kind.layout.frame in ("left", "right"):
        return region
    margin = MARGIN if kind.layout.padded else Inches(0.25)
    return Box(margin, 0, width - 2 * margin, HEIGHT)


def _glossary_runs(slide: d.Slide, kind: Kind) -> tuple[Run, ...]:
    """`` · Glossary: Term, Term``, each term linked to its slide of the glossary's file."""
    if not slide.glossary:
        return ()
    color = theme.TEXT_ON_DARK if kind.layout.dark else theme.ACCENT
    runs = [Run(" · Glossary: ")]
    for number, link in enumerate(slide.glossary):
        if number:
            runs.append(Run(", "))
        runs.append(Run(link.term, color=color, url=links.target(link.url).with_suffix(".pptx"), jump=link.number))
    return tuple(runs)


def _footer(deck: d.Deck, slide: d.Slide, kind: Kind, region: Box) -> list[Shape]:
    """Deck title and chapter on the left, the slide number on the right, small and muted."""
    color = theme.TEXT_ON_DARK if kind.layout.dark else theme.MUTED
    size = Pt(theme.NOTE_PT)
    chapter = deck.headmatter.get("chapter")
    if isinstance(chapter, int) and not isinstance(chapter, bool):
        chapter = f"Chapter {chapter}"
    label = " · ".join(str(part) for part in (deck.title, chapter) if part not in (None, ""))
    number_w = Inches(1.0)
    left = Para((Run(label), *_glossary_runs(slide, kind)), size, color=color)
    number = Para((Run(str(slide.index), field="slidenum"),), size, color=color, align="right")
    return [
        TextBox(
            Box(region.x, FOOTER_TOP, region.w - number_w, FOOTER_H),
            (left,),
            "Footer",
            anchor="middle",
            inset=TEXT_INSET,
        ),
        TextBox(
            Box(region.right - number_w, FOOTER_TOP, number_w, FOOTER_H),
            (number,),
            "Slide number",
            anchor="middle",
            inset=TEXT_INSET,
        ),
    ]
