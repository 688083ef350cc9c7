"""The second step: ``PresentationModel -> python-pptx Presentation``. Decides nothing.

Starts from python-pptx's default template, widened to 16:9, and picks its layouts by
name (``Title Slide``, ``Title Only``, ``Blank``). python-pptx makes the package, the slide,
notes and image parts and every relationship; each slide's shapes (text boxes, filled
placeholders, tables, pictures, equations) are written as XML text by
:class:`.pml.ShapeWriter` and parsed once: python-pptx's proxies are ten times slower.

This module leans on python-pptx's internals, not only its public API: ``prs.part.add_slide``,
``get_or_add_sldIdLst``, ``NotesSlidePart``, ``package.next_partname``, ``package.iter_parts``,
``package._rels``, ``part.rels`` and ``opc.spec.default_content_types``. They are why
pyproject.toml pins ``python-pptx>=1.0.2,<1.1``: check this module (and the byte-for-byte
tests of :func:`save`) before raising that bound.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path
from typing import Any

from pptx import Presentation
from pptx.opc.constants import CONTENT_TYPE as CT
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.opc.packuri import CONTENT_TYPES_URI, PACKAGE_URI, PackURI
from pptx.opc.spec import default_content_types
from pptx.parts.image import ImagePart
from pptx.parts.slide import NotesSlidePart, SlidePart
from pptx.presentation import Presentation as PresentationType
from pptx.slide import Slide, SlideLayout
from pptx.util import Emu, Pt

from slidegen import theme
from slidegen.write.pptx import anim, pml
from slidegen.write.pptx.content import BULLETS
from slidegen.write.pptx.layout import CELL_MARGIN_X, CELL_MARGIN_Y, INDENT
from slidegen.write.pptx.model import Equation, Picture, PresentationModel, SlideModel, Table, TextBox
from slidegen.xmlchars import xml_safe

PLACEHOLDER_IDX = {"title": 0, "subtitle": 1}
#: The notes master's placeholders a notes slide gets, by ``p:ph`` type, and python-pptx's
#: names for them (then " 1", " 2"...).
NOTES_PLACEHOLDERS = {
    "sldImg": "Slide Image Placeholder",
    "body": "Notes Placeholder",
    "sldNum": "Slide Number Placeholder",
}


def render(model: PresentationModel, media: Mapping[str, Path]) -> PresentationType:
    """A python-pptx presentation drawing ``model``; ``media`` maps picture srcs to files."""
    prs = Presentation()
    _widen(prs, model.width, model.height)
    layouts = {layout.name: layout for layout in prs.slide_layouts}
    slots = {name: _placeholder_slots(layouts[name]) for name in {s.template_layout for s in model.slides}}
    slides = _add_slides(prs, [layouts[s.template_layout] for s in model.slides])
    notes, images = _Notes(prs), _Images()
    for spec, slide in zip(model.slides, slides, strict=True):
        _draw_slide(spec, slide, slides, slots[spec.template_layout], media, images)
        lines = [*spec.notes, *spec.notes_footer]
        if lines:
            notes.add(slide, "\n".join(lines))
    prs.core_properties.title = core_property(model.title)
    prs.core_properties.author = core_property(model.author)
    return prs


#: The longest value a core property (title, author) may hold in python-pptx and PowerPoint.
CORE_PROPERTY_MAX = 255


def core_property(text: str) -> str:
    """``text`` as a core property: XML-safe and cut to :data:`CORE_PROPERTY_MAX` characters (with an ellipsis)."""
    text = xml_safe(text)
    return text if len(text) <= CORE_PROPERTY_MAX else text[: CORE_PROPERTY_MAX - 1] + "…"


def _widen(prs: PresentationType, width: int, height: int) -> None:
    """Set the slide size and stretch the master's and layouts' placeholders to match."""
    k = width / prs.slide_width
    prs.slide_width, prs.slide_height = Emu(width), Emu(height)
    for owner in (prs.slide_master, *prs.slide_layouts):
        pml.stretch_placeholders(owner.element.cSld.spTree, k)


def _add_slides(prs: PresentationType, layouts: list[SlideLayout]) -> list[Slide]:
    """A new slide on each of ``layouts``, with no shapes yet, in linear time.

    ``prs.slides.add_slide`` would also copy every placeholder of the layout, through
    proxies (about 1 ms a slide); :func:`_draw_slide` writes the ones the slide fills. Its
    ``relate_to`` and ``add_sldId`` search every slide added before (quadratic: 5,000 slides
    took 17 s), so the relationship ids and slide ids are counted here instead.
    """
    part = prs.part
    id_list = prs.element.get_or_add_sldIdLst()
    first = len(id_list)
    used = [int(s.get("id")) for s in id_list]
    next_id = max([255, *used]) + 1
    slides = []
    for i, layout in enumerate(layouts):
        partname = PackURI(f"/ppt/slides/slide{first + i + 1}.xml")
        slide_part = SlidePart.new(partname, part.package, layout.part)
        r_id = part.rels._add_relationship(RT.SLIDE, slide_part)  # a new part: nothing to match
        id_list._add_sldId(id=next_id + i, rId=r_id)
        slides.append(slide_part.slide)
    return slides


def _placeholder_slots(layout: SlideLayout) -> dict[int, tuple[int, dict[str, str]]]:
    """Per placeholder idx of ``layout``: its position among the layout's placeholders and its ``p:ph`` attributes."""
    found = pml.placeholders(layout.element.cSld.spTree)
    return {int(ph.get("idx", 0)): (order, ph) for order, ph in enumerate(found)}


class _Links:
    """Relationship ids for the links of one slide (python-pptx reuses an existing relationship)."""

    def __init__(self, slide: Slide, slides: list[Slide]) -> None:
        self.part = slide.part
        self.slides = slides

    def url(self, address: str) -> str:
        return self.part.relate_to(address, RT.HYPERLINK, is_external=True)

    def slide(self, index: int) -> str | None:
        if 1 <= index <= len(self.slides):
            return self.part.relate_to(self.slides[index - 1].part, RT.SLIDE)
        return None


def _draw_slide(
    spec: SlideModel,
    slide: Slide,
    slides: list[Slide],
    slots: Mapping[int, tuple[int, dict[str, str]]],
    media: Mapping[str, Path],
    images: _Images,
) -> None:
    """Draw ``spec``'s shapes: filled placeholders first, in the layout's order (where python-pptx
    would have copied them), then the others in the model's order; all parsed at once."""
    c_sld = slide.element.cSld
    if spec.background:
        pml.set_background(c_sld, spec.background)
    if spec.transition:
        pml.set_transition(slide.element, spec.transition)
    writer = pml.ShapeWriter(_Links(slide, slides), INDENT, BULLETS)
    ranked = sorted(
        (slots[PLACEHOLDER_IDX[s.placeholder]][0], i, s)
        for i, s in enumerate(spec.shapes)
        if isinstance(s, TextBox) and s.placeholder
    )
    filled = [s for _, _, s in ranked]
    others = [s for s in spec.shapes if not (isinstance(s, TextBox) and s.placeholder)]
    shapes: list[str] = []
    effects: list[anim.Effect] = []
    next_id = 2  # 1 is the shape tree itself
    for shape in (*filled, *others):
        # an equation's effects target its OMML text box (next_id + 1), which PowerPoint and LibreOffice draw
        effects += anim.shape_effects(next_id + 1 if isinstance(shape, Equation) else next_id, shape)
        if isinstance(shape, TextBox):
            ph = slots[PLACEHOLDER_IDX[shape.placeholder]][1] if shape.placeholder else None
            shapes.append(writer.text_box(next_id, shape, ph))
        elif isinstance(shape, Table):
            shapes.append(
                writer.table(
                    next_id,
                    shape,
                    name="Table",
                    margins=(CELL_MARGIN_X, CELL_MARGIN_Y),
                    fills=(theme.TABLE_HEADER_BACKGROUND, theme.BACKGROUND),
                    rule=theme.TABLE_RULE,
                    rule_widths=(Pt(1.5), Pt(0.75)),
                )
            )
        elif isinstance(shape, Picture):
            r_id, _ = images.relate(slide, str(media[shape.src]))
            shapes.append(writer.picture(next_id, shape.box, "Picture", r_id, shape.alt, shape.opacity))
        elif isinstance(shape, Equation):
            r_id, descr = images.relate(slide, shape.png)
            shapes.append(writer.equation(next_id, shape, r_id, descr))
            next_id += 1  # the fallback picture and the text box
        next_id += 1
    pml.append_shapes(c_sld.spTree, shapes)
    anim.add_timing(slide.element, effects)


class _Images:
    """The presentation's image parts by file or content, so a repeated image skips python-pptx's
    search through every part of the package for a duplicate."""

    def __init__(self) -> None:
        self.parts: dict[str | bytes, ImagePart] = {}

    def relate(self, slide: Slide, image: str | bytes) -> tuple[str, str]:
        """The relationship id from ``slide`` to ``image`` (a path or PNG bytes) and the image's file name."""
        part = self.parts.get(image)
        if part is None:
            part, r_id = slide.part.get_or_add_image_part(BytesIO(image) if isinstance(image, bytes) else image)
            self.parts[image] = part
        else:
            r_id = slide.part.relate_to(part, RT.IMAGE)
        return r_id, part.desc


class _Notes:
    """Adds notes slides: python-pptx's parts and relationships, the XML from :func:`.pml.notes_slide`.

    ``slide.notes_slide`` would copy the notes master's placeholders through proxies and scan
    every part of the package for a free name: about 4 ms a slide.
    """

    def __init__(self, prs: PresentationType) -> None:
        self.prs = prs
        self.placeholders: list[tuple[str, dict[str, str]]] | None = None
        self.next_index = 0

    def add(self, slide: Slide, text: str) -> None:
        package = self.prs.part.package
        master_part = self.prs.part.notes_master_part  # made from python-pptx's template on first use
        if self.placeholders is None:
            self.placeholders = []
            for ph in pml.placeholders(master_part.notes_master.element.cSld.spTree):
                kind = ph.get("type", "obj")
                if kind in NOTES_PLACEHOLDERS:
                    self.placeholders.append((f"{NOTES_PLACEHOLDERS[kind]} {len(self.placeholders) + 1}", ph))
            first = package.next_partname("/ppt/notesSlides/notesSlide%d.xml").idx
            self.next_index = first if first is not None else 1
        partname = PackURI(f"/ppt/notesSlides/notesSlide{self.next_index}.xml")
        self.next_index += 1
        part = NotesSlidePart(partname, CT.PML_NOTES_SLIDE, package, pml.notes_slide(self.placeholders, text))
        part.relate_to(master_part, RT.NOTES_MASTER)
        part.relate_to(slide.part, RT.SLIDE)
        slide.part.relate_to(part, RT.NOTES_SLIDE)


def save(prs: PresentationType, theme_sans: str = "") -> bytes:
    """The .pptx file of ``prs``: the items ``prs.save`` writes, in the same order, with the same bytes.

    ``theme_sans`` (when given) becomes the theme's heading and body typeface (:func:`theme_fonts`).

    python-pptx makes every relationship and content-type entry an lxml element, and finds
    each relative target with ``posixpath.relpath``, before writing it: about a third of its
    time for a 20-slide deck.
    """
    package = prs.part.package
    parts = list(package.iter_parts())
    defaults = {"rels": CT.OPC_RELATIONSHIPS, "xml": CT.XML}
    overrides = {}
    for part in parts:
        ext = part.partname.ext.lower()
        if (ext, part.content_type) in default_content_types:
            defaults[ext] = part.content_type
        else:
            overrides[part.partname] = part.content_type
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, strict_timestamps=False) as archive:
        _write(
            archive,
            CONTENT_TYPES_URI.membername,
            pml.content_types(sorted(defaults.items()), sorted(overrides.items())),
        )
        # python-pptx keeps the package's own relationships private
        _write(archive, PACKAGE_URI.rels_uri.membername, _rels_item(package._rels, PACKAGE_URI))
        for part in parts:
            blob = part.blob
            if theme_sans and part.content_type == CT.OFC_THEME:
                blob = theme_fonts(blob, theme_sans)
            _write(archive, part.partname.membername, blob)
            if len(part.rels):
                _write(archive, part.partname.rels_uri.membername, _rels_item(part.rels, part.partname.baseURI))
    return buffer.getvalue()


def theme_fonts(xml: bytes, face: str) -> bytes:
    """A theme part with ``face`` as its major (headings) and minor (body) latin typeface."""
    from lxml import etree  # type: ignore[import-untyped]

    root = etree.fromstring(xml)
    a = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    for latin in root.iterfind(f".//{a}fontScheme/*/{a}latin"):
        latin.set("typeface", face)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True))


#: Every item's time stamp: a fixed one, so the same deck gives the same bytes at any time (zip's epoch).
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _write(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Add one item, compressed, with the fixed :data:`ZIP_TIME`."""
    archive.writestr(zipfile.ZipInfo(name, date_time=ZIP_TIME), data, zipfile.ZIP_DEFLATED)


def _rels_item(rels: Any, base: str) -> bytes:
    """The ``.rels`` item of the relationships of a part in folder ``base``, in numeric id order as
    python-pptx sorts them."""

    def order(r_id: str) -> tuple[int, str]:
        return (int(r_id[3:]) if r_id.startswith("rId") and r_id[3:].isdigit() else 0, r_id)

    return pml.relationships(
        (
            rel.rId,
            rel.reltype,
            rel.target_ref if rel.is_external else _relative(rel.target_partname, base),
            rel.is_external,
        )
        for rel in sorted(rels.values(), key=lambda rel: order(rel.rId))
    )


def _relative(target: str, base: str) -> str:
    """Part name ``target`` relative to the folder ``base``: python-pptx's ``relative_ref``, whose
    ``posixpath.relpath`` asks the OS for the working directory twice per relationship."""
    if base == "/":
        return target[1:]
    to, start = target.split("/")[1:], base.split("/")[1:]
    common = 0
    while common < min(len(to), len(start)) and to[common] == start[common]:
        common += 1
    return "/".join([".."] * (len(start) - common) + to[common:])
