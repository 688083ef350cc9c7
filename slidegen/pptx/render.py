"""The second step: ``PresentationModel -> python-pptx Presentation``. Decides nothing.

Starts from python-pptx's default template, widened to 16:9, and picks its layouts by
name (``Title Slide``, ``Title Only``, ``Blank``). Raw XML is left to :mod:`.omml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE, PP_ALIGN
from pptx.presentation import Presentation as PresentationType
from pptx.slide import Slide
from pptx.util import Emu, Pt

from slidegen.pptx import omml
from slidegen.pptx.content import BULLETS
from slidegen.pptx.layout import CELL_MARGIN_X, CELL_MARGIN_Y, INDENT
from slidegen.pptx.model import (Equation, Para, Picture, PresentationModel, SlideModel, Table,
                                 TextBox)
from slidegen import theme

ALIGN = {"left": PP_ALIGN.LEFT, "center": PP_ALIGN.CENTER, "right": PP_ALIGN.RIGHT}
ANCHOR = {"top": MSO_ANCHOR.TOP, "middle": MSO_ANCHOR.MIDDLE, "bottom": MSO_ANCHOR.BOTTOM}
PLACEHOLDER_IDX = {"title": 0, "subtitle": 1}


def render(model: PresentationModel, media: Mapping[str, Path]) -> PresentationType:
    """A python-pptx presentation drawing ``model``; ``media`` maps picture srcs to files."""
    prs = Presentation()
    _widen(prs, model.width, model.height)
    layouts = {layout.name: layout for layout in prs.slide_layouts}
    slides = [prs.slides.add_slide(layouts[s.template_layout]) for s in model.slides]
    for spec, slide in zip(model.slides, slides):
        _draw_slide(spec, slide, slides, media)
    prs.core_properties.title = model.title
    prs.core_properties.author = model.author
    return prs


def _widen(prs: PresentationType, width: int, height: int) -> None:
    """Set the slide size and stretch the master's and layouts' placeholders to match."""
    k = width / prs.slide_width
    prs.slide_width, prs.slide_height = Emu(width), Emu(height)
    for owner in (prs.slide_master, *prs.slide_layouts):
        for shape in owner.placeholders:
            if shape._element.spPr.xfrm is not None:
                shape.left, shape.width = Emu(int(shape.left * k)), Emu(int(shape.width * k))


def _draw_slide(spec: SlideModel, slide: Slide, slides: list[Slide], media: Mapping[str, Path]) -> None:
    if spec.background:
        slide.background.fill.solid()
        slide.background.fill.fore_color.rgb = _rgb(spec.background)
    used = set()
    for shape in spec.shapes:
        if isinstance(shape, TextBox):
            if shape.placeholder:
                target = slide.placeholders[PLACEHOLDER_IDX[shape.placeholder]]
                target.left, target.top, target.width, target.height = shape.box.lengths()
                used.add(target.placeholder_format.idx)
            else:
                target = slide.shapes.add_textbox(*shape.box.lengths())
            target.name = shape.name
            if shape.fill:
                target.fill.solid()
                target.fill.fore_color.rgb = _rgb(shape.fill)
            _text_frame(target.text_frame, shape, slide, slides)
        elif isinstance(shape, Table):
            _table(slide, shape, slides)
        elif isinstance(shape, Picture):
            pic = slide.shapes.add_picture(str(media[shape.src]), *shape.box.lengths())
            pic.name = "Picture"
            omml.set_alt_text(pic, shape.alt)
        elif isinstance(shape, Equation):
            omml.add_equation(slide, shape.omml, shape.png, shape.box.lengths(), shape.size, shape.color)
    for placeholder in list(slide.placeholders):
        if placeholder.placeholder_format.idx not in used:
            omml.remove_shape(placeholder)
    lines = [*spec.notes, *spec.notes_footer]
    if lines:
        slide.notes_slide.notes_text_frame.text = "\n".join(lines)


def _text_frame(frame, shape: TextBox, slide: Slide, slides: list[Slide]) -> None:
    frame.word_wrap = True
    frame.auto_size = MSO_AUTO_SIZE.NONE
    frame.vertical_anchor = ANCHOR[shape.anchor]
    frame.margin_left = frame.margin_right = frame.margin_top = frame.margin_bottom = Emu(shape.inset)
    _paragraphs(frame, shape.paras, slide, slides)


def _paragraphs(frame, paras: tuple[Para, ...], slide: Slide, slides: list[Slide]) -> None:
    """Fill ``frame`` with ``paras``: alignment, spacing, list markers, then styled runs."""
    numbered_run: dict[int, int] = {}  # per level: numbered items since the list (re)started
    for i, para in enumerate(paras):
        p = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        p.alignment = ALIGN[para.align]
        if para.space_before:
            p.space_before = para.space_before
        for level in [lv for lv in numbered_run if lv > para.level or (lv == para.level and para.bullet != "number")]:
            del numbered_run[level]
        if para.bullet:
            p.level = min(para.level, 8)
            start = para.start - numbered_run.get(para.level, 0)
            if para.bullet == "number":
                numbered_run[para.level] = numbered_run.get(para.level, 0) + 1
            omml.set_bullet(p, para.bullet, INDENT * (para.level + 1), INDENT,
                            BULLETS[para.level % len(BULLETS)], start)
        for run in para.runs:
            for j, piece in enumerate(run.text.split("\n")):
                if j:
                    p.add_line_break()
                if piece or not para.text:
                    _run(p, para, run, piece, slide, slides)


def _run(p, para: Para, spec, text: str, slide: Slide, slides: list[Slide]) -> None:
    run = p.add_run()
    run.text = text
    font = run.font
    font.name = spec.font or para.font
    font.size = para.size
    font.bold = spec.bold or para.bold
    font.italic = spec.italic or para.italic
    if spec.underline:
        font.underline = True
    font.color.rgb = _rgb(spec.color or para.color)
    if spec.strike:
        omml.set_strike(run)
    if spec.url:
        run.hyperlink.address = spec.url
    if spec.slide is not None and 1 <= spec.slide <= len(slides):
        omml.link_to_slide(run, slide, slides[spec.slide - 1])
    if spec.field == "slidenum":
        omml.make_slide_number(run)


def _table(slide: Slide, shape: Table, slides: list[Slide]) -> None:
    rows = [shape.header, *shape.rows]
    ncols = len(shape.col_widths)
    frame = slide.shapes.add_table(len(rows), ncols, *shape.box.lengths())
    frame.name = "Table"
    table = frame.table
    table.first_row, table.horz_banding = True, False
    for i, width in enumerate(shape.col_widths):
        table.columns[i].width = Emu(width)
    for r, height in enumerate(shape.row_heights):
        table.rows[r].height = Emu(height)
    for r, row in enumerate(rows):
        for c in range(ncols):
            cell = table.cell(r, c)
            cell.margin_left = cell.margin_right = Emu(CELL_MARGIN_X)
            cell.margin_top = cell.margin_bottom = Emu(CELL_MARGIN_Y)
            cell.vertical_anchor = MSO_ANCHOR.MIDDLE
            cell.fill.solid()
            cell.fill.fore_color.rgb = _rgb(theme.TABLE_HEADER_BACKGROUND if r == 0 else theme.BACKGROUND)
            omml.set_cell_rule(cell, theme.TABLE_RULE, Pt(1.5) if r == 0 else Pt(0.75))
            if c < len(row):
                _paragraphs(cell.text_frame, (row[c],), slide, slides)


def _rgb(color: str) -> RGBColor:
    return RGBColor.from_string(color.lstrip("#").upper())
