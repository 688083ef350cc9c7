"""The PresentationML the PPTX writer writes as text (python-pptx keeps its own XML in ``oxml/``).

- :class:`ShapeWriter`: a slide's text boxes, filled placeholders, tables, pictures and
  equations as XML text, which :func:`append_shapes` parses once per slide. python-pptx's
  proxies make the ~7,000 elements of a 20-slide deck one at a time, each after XPath
  look-ups: ten times slower. Equations sit in ``mc:AlternateContent`` with a picture
  fallback, the structure PowerPoint and Pandoc write (the formula itself comes from
  :mod:`slidegen.write.pptx.omml`);
- :func:`notes_slide`, :func:`set_background`, and reading and stretching a layout's placeholders;
- :func:`relationships` and :func:`content_types`, the package's own items, for :func:`.render.save`.

python-pptx keeps the package, slides, pictures and relationships: the writers here are
handed relationship ids and never create parts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from lxml import etree  # type: ignore[import-untyped]
from pptx.oxml import parse_xml
from pptx.util import Emu

from slidegen.write.pptx.model import Box, Equation, Para, Run, Table, TextBox
from slidegen.write.pptx.omml import A14, MC, A, display_math

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_DECLS = f'xmlns:a="{A}" xmlns:p="{P}" xmlns:r="{R}"'
ALIGN = {"left": "l", "center": "ctr", "right": "r"}
ANCHOR = {"top": "t", "middle": "ctr", "bottom": "b"}
#: python-pptx's default insets (left and right, top and bottom): an inset equal to its default is left out.
DEFAULT_INSETS = (91440, 45720)
#: The table style python-pptx gives a new table (PowerPoint's "Medium Style 2 - Accent 1").
TABLE_STYLE = "{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}"
TABLE_URI = "http://schemas.openxmlformats.org/drawingml/2006/table"
#: Placeholder types that get a text body (as python-pptx clones them; no ``type`` means ``obj``).
TEXT_PLACEHOLDERS = {"title", "ctrTitle", "subTitle", "body", "obj"}
#: Characters XML cannot hold (C0 controls but tab and newline, U+FFFE, U+FFFF, lone surrogates),
#: written as python-pptx writes a control character (``_x001B_``).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff\ud800-\udfff]")


def _text(value: str) -> str:
    """``value`` escaped as element text; control characters written as python-pptx does (``_x001B_``)."""
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if _CONTROL.search(value):
        value = _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", value)
    return value


@lru_cache(maxsize=4096)
def _attr(value: str) -> str:
    """``value`` escaped for a double-quoted attribute (whitespace as lxml writes it); names,
    fonts, relationship types and targets repeat, hence the cache."""
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    value = value.replace("\t", "&#9;").replace("\n", "&#10;").replace("\r", "&#13;")
    if _CONTROL.search(value):
        value = _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", value)
    return value


def _solid(color: str) -> str:
    return f'<a:solidFill><a:srgbClr val="{color.lstrip("#").upper()}"/></a:solidFill>'


def _xfrm(box: Box, tag: str = "a:xfrm") -> str:
    return f'<{tag}><a:off x="{int(box.x)}" y="{int(box.y)}"/><a:ext cx="{int(box.w)}" cy="{int(box.h)}"/></{tag}>'


def _ph(attrs: Mapping[str, str]) -> str:
    return "<p:ph" + "".join(f' {k}="{_attr(v)}"' for k, v in attrs.items()) + "/>"


@lru_cache(maxsize=512)
def _run_props(
    size: int, bold: bool, italic: bool, underline: bool, strike: bool, color: str, font: str, baseline: int = 0
) -> str:
    """An ``a:rPr`` start tag and its fill and font; the caller adds any link and the end tag."""
    attrs = f'sz="{size}" b="{int(bold)}" i="{int(italic)}"'
    if underline:
        attrs += ' u="sng"'
    if strike:
        attrs += ' strike="sngStrike"'
    if baseline:
        attrs += f' baseline="{baseline}"'
    return f'<a:rPr {attrs}>{_solid(color)}<a:latin typeface="{_attr(font)}"/>'


class Links(Protocol):
    """Relationship ids (from the slide's part) for the links on a slide."""

    def url(self, address: str) -> str:
        """The id of an external hyperlink to ``address``."""

    def slide(self, index: int) -> str | None:
        """The id of a relationship to slide ``index`` (1-based) of this deck; None when there is no such slide."""


class ShapeWriter:
    """One slide's shapes as XML text, for :func:`append_shapes`.

    ``links`` gives relationship ids for the runs' links; ``indent`` is the indent of one
    list level (EMU); ``bullets`` the bullet character of each level, repeating.
    """

    def __init__(self, links: Links, indent: int, bullets: Sequence[str]) -> None:
        self.links = links
        self.indent = int(indent)
        self.bullets = tuple(bullets)

    def text_box(self, shape_id: int, shape: TextBox, placeholder: Mapping[str, str] | None = None) -> str:
        """A ``p:sp``: a text box, or the placeholder whose ``p:ph`` has the attributes ``placeholder``."""
        fill = _solid(shape.fill) if shape.fill else ""
        if placeholder is None and not shape.paras and shape.fill:  # a filled shape without text: a mark of the master
            return (
                f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_attr(shape.name)}"/><p:cNvSpPr/><p:nvPr/>'
                f'</p:nvSpPr><p:spPr>{_xfrm(shape.box)}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>{fill}'
                "<a:ln><a:noFill/></a:ln></p:spPr></p:sp>"
            )
        if placeholder is None:
            props = '<p:cNvSpPr txBox="1"/><p:nvPr/>'
            geometry = '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom>' + (fill or "<a:noFill/>")
        else:
            props = f'<p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr>{_ph(placeholder)}</p:nvPr>'
            geometry = fill
        inset = int(shape.inset)
        body = f'wrap="square" anchor="{ANCHOR[shape.anchor]}"'
        if inset != DEFAULT_INSETS[0]:
            body += f' lIns="{inset}" rIns="{inset}"'
        if inset != DEFAULT_INSETS[1]:
            body += f' tIns="{inset}" bIns="{inset}"'
        return (
            f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_attr(shape.name)}"/>{props}</p:nvSpPr>'
            f"<p:spPr>{_xfrm(shape.box)}{geometry}</p:spPr>"
            f"<p:txBody><a:bodyPr {body}><a:noAutofit/></a:bodyPr><a:lstStyle/>"
            f"{self.paragraphs(shape.paras)}</p:txBody></p:sp>"
        )

    def paragraphs(self, paras: Sequence[Para]) -> str:
        """``a:p`` elements: alignment, spacing, list markers, then styled runs and line breaks."""
        if not paras:
            return "<a:p/>"
        out = []
        numbered: dict[int, int] = {}  # per level: numbered items since the list (re)started
        for para in paras:
            attrs = f'algn="{ALIGN[para.align]}"'
            props = ""
            if para.space_before:
                props += f'<a:spcBef><a:spcPts val="{Emu(para.space_before).centipoints}"/></a:spcBef>'
            for level in [lv for lv in numbered if lv > para.level or (lv == para.level and para.bullet != "number")]:
                del numbered[level]
            if para.bullet:
                if min(para.level, 8):
                    attrs += f' lvl="{min(para.level, 8)}"'
                hanging = self.indent if para.bullet in ("bullet", "number") else 0
                attrs += f' marL="{self.indent * (para.level + 1)}" indent="{-hanging}"'
                if para.bullet == "bullet":
                    char = self.bullets[para.level % len(self.bullets)]
                    props += f'<a:buFont typeface="Arial"/><a:buChar char="{_attr(char)}"/>'
                elif para.bullet == "number":
                    start = para.start - numbered.get(para.level, 0)
                    numbered[para.level] = numbered.get(para.level, 0) + 1
                    props += f'<a:buAutoNum type="arabicPeriod" startAt="{start}"/>'
                else:
                    props += "<a:buNone/>"
            out.append(f"<a:p><a:pPr {attrs}>{props}</a:pPr>" if props else f"<a:p><a:pPr {attrs}/>")
            empty = not any(run.text for run in para.runs)
            for run in para.runs:
                for j, piece in enumerate(run.text.split("\n")):
                    if j:
                        out.append("<a:br/>")
                    if piece or empty:
                        out.append(self._run(para, run, piece))
            out.append("</a:p>")
        return "".join(out)

    def _run(self, para: Para, run: Run, text: str) -> str:
        props = _run_props(
            Emu(para.size).centipoints,
            run.bold or para.bold,
            run.italic or para.italic,
            run.underline,
            run.strike,
            run.color or para.color,
            run.font or para.font,
            run.baseline,
        )
        if run.url and run.jump is not None:  # PowerPoint's own link to a slide of another presentation
            action = f"ppaction://hlinkpres?slideindex={run.jump}&amp;slidetitle="
            props += f'<a:hlinkClick r:id="{self.links.url(run.url)}" action="{action}"/>'
        elif run.url:
            props += f'<a:hlinkClick r:id="{self.links.url(run.url)}"/>'
        elif run.slide is not None:
            r_id = self.links.slide(run.slide)
            if r_id:
                props += f'<a:hlinkClick r:id="{r_id}" action="ppaction://hlinksldjump"/>'
        if run.field == "slidenum":  # PowerPoint's slide-number field; the text is its current value
            field_id = _guid(f"slidenum {text}")  # stable: the same deck gives the same bytes
            return f'<a:fld id="{{{field_id}}}" type="slidenum">{props}</a:rPr><a:t>{_text(text)}</a:t></a:fld>'
        return f"<a:r>{props}</a:rPr><a:t>{_text(text)}</a:t></a:r>"

    def table(
        self,
        shape_id: int,
        shape: Table,
        *,
        name: str,
        margins: tuple[int, int],
        fills: tuple[str, str],
        rule: str,
        rule_widths: tuple[int, int],
    ) -> str:
        """A ``p:graphicFrame`` holding an ``a:tbl``: header row first, one paragraph per cell.

        ``margins`` are the cells' (horizontal, vertical) margins; ``fills`` and ``rule_widths``
        are for (the header row, the other rows); ``rule`` is the colour of the line under each cell.
        """
        mx, my = (int(m) for m in margins)
        rows = []
        for r, row in enumerate((shape.header, *shape.rows)):
            head = 0 if r == 0 else 1
            lines = (
                '<a:lnL w="0"><a:noFill/></a:lnL><a:lnR w="0"><a:noFill/></a:lnR><a:lnT w="0"><a:noFill/></a:lnT>'
                f'<a:lnB w="{int(rule_widths[head])}"><a:solidFill><a:srgbClr val="{rule.lstrip("#")}"/>'
                "</a:solidFill></a:lnB>"
            )
            props = (
                f'<a:tcPr marL="{mx}" marR="{mx}" marT="{my}" marB="{my}" anchor="ctr">{lines}'
                f"{_solid(fills[head])}</a:tcPr>"
            )
            cells = "".join(
                f"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>{self.paragraphs(row[c : c + 1])}</a:txBody>{props}</a:tc>"
                for c in range(len(shape.col_widths))
            )
            rows.append(f'<a:tr h="{int(shape.row_heights[r])}">{cells}</a:tr>')
        grid = "".join(f'<a:gridCol w="{int(w)}"/>' for w in shape.col_widths)
        return (
            f'<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="{_attr(name)}"/>'
            '<p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/>'
            f'</p:nvGraphicFramePr>{_xfrm(shape.box, "p:xfrm")}<a:graphic><a:graphicData uri="{TABLE_URI}">'
            f'<a:tbl><a:tblPr firstRow="1"><a:tableStyleId>{TABLE_STYLE}</a:tableStyleId></a:tblPr>'
            f"<a:tblGrid>{grid}</a:tblGrid>{''.join(rows)}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
        )

    def picture(self, shape_id: int, box: Box, name: str, r_id: str, descr: str, opacity: float = 1.0) -> str:
        """A ``p:pic`` showing the image related to the slide as ``r_id``, stretched to ``box`` (faded below
        ``opacity`` 1)."""
        fade = f'<a:alphaModFix amt="{round(opacity * 100000)}"/>' if opacity < 1 else ""
        return (
            f'<p:pic><p:nvPicPr><p:cNvPr id="{shape_id}" name="{_attr(name)}" descr="{_attr(descr)}"/>'
            '<p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr>'
            f'<p:blipFill><a:blip r:embed="{r_id}">{fade}</a:blip><a:stretch><a:fillRect/></a:stretch></p:blipFill>'
            f'<p:spPr>{_xfrm(box)}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>'
        )

    def equation(self, shape_id: int, shape: Equation, r_id: str, descr: str) -> str:
        """An ``mc:AlternateContent``: the OMML alone in a text box (LibreOffice draws it only so),
        with the fallback picture (``r_id``) as ``shape_id`` and the text box as ``shape_id + 1``."""
        math = display_math(shape.omml, int(Emu(shape.size).pt * 100), shape.color.lstrip("#"))
        fallback = self.picture(shape_id, shape.box, "Equation fallback", r_id, descr)
        return (
            f'<mc:AlternateContent xmlns:mc="{MC}"><mc:Choice xmlns:a14="{A14}" Requires="a14">'
            f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id + 1}" name="Equation"/><p:cNvSpPr txBox="1"/><p:nvPr/>'
            f'</p:nvSpPr><p:spPr>{_xfrm(shape.box)}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/>'
            '</p:spPr><p:txBody><a:bodyPr wrap="none" lIns="0" tIns="0" rIns="0" bIns="0" anchor="ctr">'
            f'<a:spAutoFit/></a:bodyPr><a:lstStyle/><a:p><a:pPr algn="ctr"/><a14:m>{math}</a14:m>'
            "</a:p></p:txBody></p:sp></mc:Choice>"
            f"<mc:Fallback>{fallback}</mc:Fallback></mc:AlternateContent>"
        )


def append_shapes(tree: etree._Element, shapes: Sequence[str]) -> None:
    """Parse ``shapes`` (from :class:`ShapeWriter`) at once and append them to the ``p:spTree`` ``tree``."""
    if shapes:
        tree.extend(parse_xml(f"<p:spTree {_DECLS}>{''.join(shapes)}</p:spTree>"))


def set_background(c_sld: etree._Element, color: str) -> None:
    """Give the slide whose ``p:cSld`` is ``c_sld`` a solid background."""
    for old in c_sld.findall(f"{{{P}}}bg"):
        c_sld.remove(old)
    bg = parse_xml(f"<p:cSld {_DECLS}><p:bg><p:bgPr>{_solid(color)}<a:effectLst/></p:bgPr></p:bg></p:cSld>")[0]
    c_sld.insert(0, bg)


def set_transition(sld: etree._Element, name: str) -> None:
    """Give the slide ``p:sld`` the transition ``name`` (``fade``, ``push-l``...), after its ``p:clrMapOvr``."""
    kind, _, direction = name.partition("-")
    effect = f'<p:push dir="{direction}"/>' if kind == "push" else "<p:fade/>"
    element = parse_xml(f'<p:sld {_DECLS}><p:transition spd="med">{effect}</p:transition></p:sld>')[0]
    for old in sld.findall(f"{{{P}}}transition"):
        sld.remove(old)
    after = sld.find(f"{{{P}}}clrMapOvr")
    anchor = after if after is not None else sld.find(f"{{{P}}}cSld")
    assert anchor is not None
    anchor.addnext(element)


def notes_slide(placeholders: Sequence[tuple[str, Mapping[str, str]]], text: str) -> etree._Element:
    """A ``p:notes`` element with ``placeholders`` (name, ``p:ph`` attributes; ids 2, 3...) from the
    notes master, the first ``body`` one holding ``text``: a paragraph per line, as python-pptx's
    ``notes_text_frame.text = text`` writes it."""
    shapes = []
    filled = False
    for shape_id, (name, ph) in enumerate(placeholders, 2):
        kind = ph.get("type", "obj")
        body = ""
        if kind in TEXT_PLACEHOLDERS:
            paras = "<a:p/>"
            if kind == "body" and not filled:
                filled = True
                paras = "".join(_plain_paragraph(line) for line in text.split("\n"))
            body = f"<p:txBody><a:bodyPr/><a:lstStyle/>{paras}</p:txBody>"
        shapes.append(
            f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_attr(name)}"/><p:cNvSpPr>'
            f'<a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr>{_ph(ph)}</p:nvPr></p:nvSpPr><p:spPr/>{body}</p:sp>'
        )
    return parse_xml(
        f'<p:notes {_DECLS}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/>'
        '</p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/>'
        f'<a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>{"".join(shapes)}</p:spTree></p:cSld>'
        "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"
    )


def _plain_paragraph(line: str) -> str:
    """An unstyled ``a:p``; a vertical tab is a line break."""
    pieces = line.split("\v")
    runs = "<a:br/>".join(f"<a:r><a:t>{_text(p)}</a:t></a:r>" if p else "" for p in pieces)
    return f"<a:p>{runs}</a:p>" if runs else "<a:p/>"


#: The elements of a shape tree that are shapes (and may be placeholders).
_SHAPE_TAGS = {f"{{{P}}}{tag}" for tag in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic", "contentPart")}
#: The ``p:ph`` attributes python-pptx copies when it clones a placeholder.
PH_ATTRIBUTES = ("type", "orient", "sz", "idx")


def _placeholder_shapes(tree: etree._Element) -> Iterator[tuple[etree._Element, etree._Element]]:
    """``(shape, p:ph)`` for each placeholder among the shapes of the ``p:spTree`` ``tree``."""
    for shape in tree:
        if len(shape) and shape.tag in _SHAPE_TAGS:
            ph = shape[0].find(f"{{{P}}}nvPr/{{{P}}}ph")
            if ph is not None:
                yield shape, ph


def placeholders(tree: etree._Element) -> list[dict[str, str]]:
    """The ``p:ph`` attributes (those python-pptx copies to a new slide) of each placeholder in the
    ``p:spTree`` ``tree`` of a layout or master, in order."""
    return [{k: ph.get(k) for k in PH_ATTRIBUTES if ph.get(k)} for _, ph in _placeholder_shapes(tree)]


def stretch_placeholders(tree: etree._Element, k: float) -> None:
    """Multiply the left edge and width of each placeholder in ``tree`` that has its own position by ``k``."""
    for shape, _ in _placeholder_shapes(tree):
        off = shape.find(f"{{{P}}}spPr/{{{A}}}xfrm/{{{A}}}off")
        ext = shape.find(f"{{{P}}}spPr/{{{A}}}xfrm/{{{A}}}ext")
        if off is not None and ext is not None:
            off.set("x", str(int(int(off.get("x")) * k)))
            ext.set("cx", str(int(int(ext.get("cx")) * k)))


# --------------------------------------------------------------------------- package items

PR = "http://schemas.openxmlformats.org/package/2006/relationships"
CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n"


def relationships(rels: Iterable[tuple[str, str, str, bool]]) -> bytes:
    """A ``.rels`` item, byte for byte as python-pptx writes it: (id, type, target, external) each, in order."""
    items = "".join(
        f'<Relationship Id="{_attr(r_id)}" Type="{_attr(kind)}" Target="{_attr(target)}"'
        + (' TargetMode="External"/>' if external else "/>")
        for r_id, kind, target, external in rels
    )
    body = f'<Relationships xmlns="{PR}">{items}</Relationships>' if items else f'<Relationships xmlns="{PR}"/>'
    return (_DECLARATION + body).encode("utf-8")


def content_types(defaults: Iterable[tuple[str, str]], overrides: Iterable[tuple[str, str]]) -> bytes:
    """``[Content_Types].xml`` as python-pptx writes it: (extension, type) and (part name, type) pairs, in order."""
    items = "".join(f'<Default Extension="{_attr(ext)}" ContentType="{_attr(kind)}"/>' for ext, kind in defaults)
    items += "".join(f'<Override PartName="{_attr(name)}" ContentType="{_attr(kind)}"/>' for name, kind in overrides)
    return (f'{_DECLARATION}<Types xmlns="{CONTENT_TYPES}">{items}</Types>').encode()


def _guid(seed: str) -> str:
    """A GUID derived from ``seed``, in Office's upper-case 8-4-4-4-12 form."""
    h = hashlib.sha1(seed.encode("utf-8")).hexdigest()[:32].upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
