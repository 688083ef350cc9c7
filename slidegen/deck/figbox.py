"""The box a figure is shown in: the region its slide's layout gives it, in CSS px of the 1280x720 slide.

A figure is drawn for its box (:mod:`slidegen.media.figures`), so its labels come out at the style's point sizes
as shown: the slide is 13.333 in wide for 1280 px, 96 px an inch, and a figure drawn W/96 in wide and
shown W px wide is shown at 1:1. The box's width is the slot's (the body, one column, the half beside a
side picture); its height is what the slide's other blocks leave, estimated from their text the way the
HTML theme sets it (:data:`BODY_PX` type, 1.35 lines), shared among the slot's figures.

:func:`sized` writes each ``fig:NAME`` of a deck as ``fig:NAME@WxH``, before pictures are resolved: the
renderer draws that name at that size, and each writer shows it no larger than its box.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from slidegen import theme
from slidegen.deck import nodes as d
from slidegen.deck.layouts import layout

#: CSS px per point on the 1280x720 slide (960 x 540 pt): 18 pt is 24 px.
PX_PER_IN = 96.0  # 1280 px across PowerPoint's 16:9 slide, 12192000 EMU = 13 1/3 in
PX_PER_PT = PX_PER_IN / 72
#: The theme's type and geometry in px (slidegen/templates/theme.css.j2).
BODY_PX = theme.BODY_PT * PX_PER_PT
TITLE_PX = theme.TITLE_PT * PX_PER_PT
CODE_PX = theme.CODE_PT * PX_PER_PT
SMALL_PX = 17.0
PAD_X, PAD_TOP, PAD_BOTTOM, FOOTER = 72, 44, 12, 52
COLUMN_GAP = 56
LINE = 1.35
GAP = 0.55 * BODY_PX
#: Average advance of a character of the sans face, in ems (Carlito sets prose at about 0.45).
EM = 0.47
#: The title with its accent rule and the space under it.
TITLE_RULE = 14 + 5 + 0.35 * TITLE_PX
#: A box smaller than this cannot hold a plot with 18-pt ticks and labels.
MIN_W, MIN_H = 400, 300
#: The side picture's padding in image-left / image-right layouts.
SIDE_PAD = 28

_SIZED_RE = re.compile(r"^(?P<name>.+)@(?P<w>\d+)x(?P<h>\d+)$")


@dataclass(frozen=True)
class Box:
    """Width and height in CSS px of the 1280x720 slide."""

    w: int
    h: int

    @property
    def inches(self) -> tuple[float, float]:
        return self.w / PX_PER_IN, self.h / PX_PER_IN

    @property
    def too_small(self) -> bool:
        return self.w < MIN_W or self.h < MIN_H

    def __str__(self) -> str:
        return f"{self.w}x{self.h}"


def split(name: str) -> tuple[str, Box | None]:
    """``ch01.loss@1136x470`` -> (``ch01.loss``, its box); a name without a box -> (name, None)."""
    found = _SIZED_RE.match(name)
    if found is None:
        return name, None
    return found["name"], Box(int(found["w"]), int(found["h"]))


def body_box(slide: d.Slide) -> Box:
    """The slide body's box: the whole slide inside the margins, the title and the footer left out."""
    spec = layout(slide.layout)
    width = theme.WIDTH_PX - 2 * PAD_X
    if spec.image in ("left", "right") or spec.frame in ("left", "right"):
        width = theme.WIDTH_PX // 2 - PAD_X - 48
    return Box(width, theme.HEIGHT_PX - FOOTER - PAD_TOP - PAD_BOTTOM)


def slot_boxes(slide: d.Slide) -> list[tuple[tuple[d.Block, ...], int]]:
    """Each slot of ``slide`` with its width in px: the default slot, then the named ones."""
    spec = layout(slide.layout)
    body = body_box(slide).w
    half = (body - COLUMN_GAP) // 2
    default = half if spec.slots and not spec.header else body
    out = [(slide.blocks, default)]
    out += [(blocks, half if name in spec.slots else body) for name, blocks in slide.slots.items()]
    return out


def text_height(text: str, width: float, size: float = BODY_PX, line: float = LINE) -> float:
    """Height of ``text`` set at ``size`` px in a column ``width`` px wide, wrapped at about a word."""
    per_line = max(1.0, width / (EM * size) - 2)
    lines = sum(max(1, math.ceil(len(part) / per_line)) for part in text.split("\n"))
    return lines * line * size


def block_height(block: d.Block, width: float) -> float:
    """An estimate of ``block``'s height on the HTML slide (figures count 0: they take what is left)."""
    match block:
        case d.Heading():
            size = TITLE_PX if block.level <= 2 else 1.2 * BODY_PX
            return text_height(d.plain_text(block.children), width, size, 1.15)
        case d.Paragraph():
            return text_height(d.plain_text(block.children), width)
        case d.BulletList() | d.OrderedList():
            inner = width - 1.3 * BODY_PX
            return sum(sum(block_height(b, inner) for b in item.blocks) for item in block.items) + 0.35 * BODY_PX * (
                len(block.items) - 1
            )
        case d.CodeBlock():
            per_line = max(8, int((width - 44) / (0.602 * CODE_PX)) - 2)
            wrapped = sum(max(1, -(-len(line) // per_line)) for line in block.code.rstrip("\n").split("\n"))
            return wrapped * 1.25 * CODE_PX + 22
        case d.MathBlock():
            return (block.tex.count("\\\\") + 1) * 2.2 * BODY_PX
        case d.Table():
            size = theme.TABLE_PT * PX_PER_PT
            columns = max(1, len(block.header) or (len(block.rows[0]) if block.rows else 1))
            cell_w = width / columns - 1.8 * size
            table_rows = [block.header, *block.rows] if block.header else list(block.rows)
            return sum(
                max((text_height(d.plain_text(cell), cell_w, size) for cell in row), default=size * LINE)
                + 0.64 * size
                + 2
                for row in table_rows
            )
        case d.Quote() | d.Click():
            return sum(block_height(b, width) for b in block.blocks) + GAP * max(0, len(block.blocks) - 1)
        case d.Figure():
            return (SMALL_PX * LINE + 0.4 * BODY_PX) if block.title else 0.0
        case d.RawHtml():
            return 0.0 if block.html.lstrip().lower().startswith("<style") else 300.0
        case _:
            return BODY_PX * LINE


def _figures(blocks: tuple[d.Block, ...]) -> list[d.Figure]:
    """The figures of ``blocks`` shown one under the other (inside clicks too)."""
    out: list[d.Figure] = []
    for block in blocks:
        if isinstance(block, d.Figure) and block.src.startswith("fig:"):
            out.append(block)
        elif isinstance(block, d.Click):
            out += _figures(block.blocks)
    return out


def title_height(slide: d.Slide) -> float:
    """The title across the top of the slide, with its rule (0 without a title heading)."""
    if slide.title_heading is None:
        return 0.0
    heading = slide.blocks[slide.title_heading]
    width = theme.WIDTH_PX - 2 * PAD_X
    text = d.plain_text(heading.children) if isinstance(heading, d.Heading) else slide.title
    return text_height(text, width, TITLE_PX, 1.15) + TITLE_RULE + GAP


def slot_figure_box(slide: d.Slide, blocks: tuple[d.Block, ...], width: int) -> Box:
    """The box each figure of one slot gets: the slot's width, and the height the title and its other blocks
    leave."""
    body = body_box(slide)
    title = slide.blocks[slide.title_heading] if slide.title_heading is not None else None
    shown = [
        b
        for b in blocks
        if b is not title and not (isinstance(b, d.RawHtml) and b.html.lstrip().lower().startswith("<style"))
    ]
    used = title_height(slide) + sum(block_height(b, width) for b in shown)
    used += GAP * max(0, len(shown) - 1)
    count = max(1, len(_figures(blocks)))
    # a little air: the estimate errs, and a figure scaled down is one whose labels shrink
    height = (body.h - used - 8) / count
    return Box(int(width) // 8 * 8, max(0, int(height)) // 8 * 8)


def figure_boxes(slide: d.Slide) -> list[tuple[d.Figure, Box]]:
    """Every figure of ``slide`` (``fig:NAME``) with the box it is shown in."""
    out = []
    for blocks, width in slot_boxes(slide):
        figures = _figures(blocks)
        if figures:
            box = slot_figure_box(slide, blocks, width)
            out += [(figure, box) for figure in figures]
    return out


def side_box(slide: d.Slide) -> Box:
    """The half of the slide an ``image:`` fills in image-left / image-right."""
    return Box((theme.WIDTH_PX // 2 - 2 * SIDE_PAD) // 8 * 8, (theme.HEIGHT_PX - 2 * SIDE_PAD) // 8 * 8)


def sized(deck: d.Deck) -> d.Deck:
    """``deck`` with every ``fig:NAME`` written ``fig:NAME@WxH`` for the box it is shown in."""
    return replace(deck, slides=tuple(_sized_slide(slide) for slide in deck.slides))


def _sized_slide(slide: d.Slide) -> d.Slide:
    boxes = {id(figure): box for figure, box in figure_boxes(slide)}
    frontmatter = slide.frontmatter
    image = frontmatter.get("image")
    if isinstance(image, str) and image.startswith("fig:") and layout(slide.layout).image in ("left", "right"):
        frontmatter = {**frontmatter, "image": f"{image}@{side_box(slide)}"}
    if not boxes and frontmatter is slide.frontmatter:
        return slide

    def blocks(group: tuple[d.Block, ...]) -> tuple[d.Block, ...]:
        out: list[d.Block] = []
        for block in group:
            if isinstance(block, d.Figure) and id(block) in boxes:
                block = replace(block, src=f"{block.src}@{boxes[id(block)]}")
            elif isinstance(block, d.Click):
                block = replace(block, blocks=blocks(block.blocks))
            out.append(block)
        return tuple(out)

    return replace(
        slide,
        frontmatter=frontmatter,
        blocks=blocks(slide.blocks),
        slots={name: blocks(group) for name, group in slide.slots.items()},
    )
