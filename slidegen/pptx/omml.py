"""Every raw-XML trick of the PPTX writer, in one place (python-pptx keeps its own in ``oxml/``).

- :func:`latex_to_omml`: LaTeX -> MathML (latex2mathml) -> OMML (mathml_to_omml), repaired;
- :func:`add_equation`: an editable equation inside ``mc:AlternateContent`` with a picture
  fallback, the structure PowerPoint and Pandoc write;
- run-level slide jumps, list bullets, strikethrough, the slide-number field, alt text,
  table cell rules and removing an unused placeholder.
"""

from __future__ import annotations

import re
import uuid
from io import BytesIO

from lxml import etree
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml.ns import qn
from pptx.shapes.base import BaseShape
from pptx.slide import Slide
from pptx.text.text import _Paragraph, _Run
from pptx.util import Emu, Length

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
A14 = "http://schemas.microsoft.com/office/drawing/2010/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"

#: Accents mathml_to_omml writes as ``m:limUpp`` (a limit) instead of ``m:acc``.
ACCENT_CHARS = {"^": "\u0302", "~": "\u0303", "˜": "\u0303", "˙": "\u0307", "¨": "\u0308",
                "ˇ": "\u030c", "´": "\u0301", "`": "\u0300", "˘": "\u0306", "¯": "\u0304"}


def _m(tag: str) -> str:
    return f"{{{M}}}{tag}"


# --------------------------------------------------------------------------- equations


def latex_to_omml(tex: str) -> str:
    """One ``m:oMath`` element (as XML text, ``xmlns:m`` declared) for ``tex``.

    Raises :class:`ValueError` saying why when the converters cannot take it.
    """
    import latex2mathml.converter
    import mathml_to_omml

    tex = re.sub(r"\\begin\{(aligned|align\*?|gathered)\}", r"\\begin{array}{rl}", tex)
    tex = re.sub(r"\\end\{(aligned|align\*?|gathered)\}", r"\\end{array}", tex)
    tex = re.sub(r"\\(arg|argmax|argmin)\b", r"\\operatorname{\1}", tex)
    try:
        fragment = mathml_to_omml.convert(latex2mathml.converter.convert(tex))
        root = etree.fromstring(f'<m:oMathPara xmlns:m="{M}">{fragment}</m:oMathPara>')
    except Exception as exc:  # the converters raise anything from KeyError to SAX errors
        reason = str(exc).strip() or type(exc).__name__
        raise ValueError(reason) from exc
    unknown = [t.text for t in root.iter(_m("t")) if t.text and re.match(r"\\[A-Za-z]+", t.text)]
    if unknown:
        raise ValueError(f"unknown command {unknown[0]}")
    omath = root.find(_m("oMath"))
    if omath is None:
        raise ValueError("the converter returned no formula")
    _fix_radicals(omath)
    _fix_accents(omath)
    _fix_nary(omath)
    _mark_literals(omath)
    return etree.tostring(omath, encoding="unicode")


def _fix_radicals(omath: etree._Element) -> None:
    """Square roots need an explicit hidden degree, or Office and LibreOffice show a box."""
    for rad in omath.iter(_m("rad")):
        if rad.find(_m("deg")) is None:
            rad_pr = etree.Element(_m("radPr"))
            etree.SubElement(rad_pr, _m("degHide")).set(_m("val"), "1")
            rad.insert(0, rad_pr)
            rad.insert(1, etree.Element(_m("deg")))


ALWAYS_LITERAL = set("<>|[]‖⟨⟩")
OPERATORS = set("=+-−±∓·×÷<>≤≥≠≈∼≃≡∝→←⇒⇔↦∈∉⊂⊆∪∩∣,;:")


def _mark_literals(omath: etree._Element) -> None:
    """Mark runs LibreOffice would misread as literal text (``m:lit``; Office draws them the same).

    LibreOffice turns OMML into StarMath, where an operator needs operands on both sides and
    brackets must pair inside a group: ``x_{<t}``, ``|x|``, ``(z)_i`` or an aligned ``&=`` come
    out as a red ``¿`` and may blank the rest of the formula.
    """
    for group in {r.getparent() for r in omath.iter(_m("r"))}:
        group_runs = [c for c in group if c.tag == _m("r")]
        texts = ["".join(t.text or "" for t in r.iter(_m("t"))) for r in group_runs]
        depth, balanced = 0, True
        for ch in "".join(texts):
            depth += (ch == "(") - (ch == ")")
            balanced = balanced and depth >= 0
        balanced = balanced and depth == 0
        for i, (run, text) in enumerate(zip(group_runs, texts)):
            edge = i == 0 or i == len(group_runs) - 1
            if (ALWAYS_LITERAL & set(text) or (not balanced and set(text) & set("()"))
                    or (edge and text.strip() in OPERATORS)):
                rpr = run.find(_m("rPr"))
                if rpr is None:
                    rpr = etree.Element(_m("rPr"))
                    run.insert(0, rpr)
                if rpr.find(_m("nor")) is None and rpr.find(_m("lit")) is None:
                    rpr.insert(0, etree.Element(_m("lit")))


def _fix_nary(omath: etree._Element) -> None:
    """A sum with only a lower limit has an empty ``m:sup``: hide it, or LibreOffice draws a box."""
    for nary in omath.iter(_m("nary")):
        props = nary.find(_m("naryPr"))
        if props is None:
            props = etree.Element(_m("naryPr"))
            nary.insert(0, props)
        for part, flag in (("sub", "subHide"), ("sup", "supHide")):
            limit = nary.find(_m(part))
            if limit is not None and len(limit) == 0 and props.find(_m(flag)) is None:
                etree.SubElement(props, _m(flag)).set(_m("val"), "1")


def _fix_accents(omath: etree._Element) -> None:
    """``\\hat{x}`` arrives as a limit with ``^`` above; make it a real accent (``m:acc``)."""
    for lim_upp in list(omath.iter(_m("limUpp"))):
        chars = "".join(t.text or "" for t in lim_upp.iterfind(f"{_m('lim')}//{_m('t')}"))
        base = lim_upp.find(_m("e"))
        if chars not in ACCENT_CHARS or base is None:
            continue
        acc = etree.Element(_m("acc"))
        etree.SubElement(etree.SubElement(acc, _m("accPr")), _m("chr")).set(_m("val"), ACCENT_CHARS[chars])
        acc.append(base)
        lim_upp.getparent().replace(lim_upp, acc)


def add_equation(slide: Slide, omml: str, png: bytes, box: tuple[Length, Length, Length, Length],
                 size: Length, color: str) -> None:
    """Add ``omml`` as an editable equation alone in its text box, with ``png`` as the fallback."""
    pic = slide.shapes.add_picture(BytesIO(png), *box)
    pic.name = "Equation fallback"
    text_box = slide.shapes.add_textbox(*box)
    text_box.name = "Equation"
    body = text_box.text_frame._txBody
    body_pr = body.find(qn("a:bodyPr"))
    body_pr.attrib.update({"wrap": "none", "lIns": "0", "tIns": "0", "rIns": "0", "bIns": "0",
                           "anchor": "ctr"})
    paragraph = body.find(qn("a:p"))
    paragraph.get_or_add_pPr().set("algn", "ctr")

    omath = etree.fromstring(omml)
    for run in omath.iter(_m("r")):  # PowerPoint takes size, colour and font from a:rPr
        rpr = etree.Element(qn("a:rPr"), {"lang": "en-US", "sz": str(int(Emu(size).pt * 100)), "i": "1"})
        fill = etree.SubElement(rpr, qn("a:solidFill"))
        etree.SubElement(fill, qn("a:srgbClr")).set("val", color.lstrip("#"))
        etree.SubElement(rpr, qn("a:latin")).set("typeface", "Cambria Math")
        run.insert(1 if run.find(_m("rPr")) is not None else 0, rpr)
    a14m = etree.SubElement(paragraph, f"{{{A14}}}m", nsmap={"a14": A14})
    para = etree.SubElement(a14m, _m("oMathPara"), nsmap={"m": M})
    etree.SubElement(etree.SubElement(para, _m("oMathParaPr")), _m("jc")).set(_m("val"), "centerGroup")
    para.append(omath)

    alternate = etree.Element(f"{{{MC}}}AlternateContent", nsmap={"mc": MC})
    choice = etree.SubElement(alternate, f"{{{MC}}}Choice", {"Requires": "a14"}, nsmap={"a14": A14})
    fallback = etree.SubElement(alternate, f"{{{MC}}}Fallback")
    sp, pic_el = text_box._element, pic._element
    sp.addprevious(alternate)
    choice.append(sp)
    fallback.append(pic_el)


# --------------------------------------------------------------------------- runs and paragraphs


def link_to_slide(run: _Run, source: Slide, target: Slide) -> None:
    """Make ``run`` jump to ``target`` when clicked in the slide show."""
    r_id = source.part.relate_to(target.part, RT.SLIDE)
    rpr = run._r.get_or_add_rPr()
    rpr.add_hlinkClick(r_id).set("action", "ppaction://hlinksldjump")


def set_strike(run: _Run) -> None:
    run._r.get_or_add_rPr().set("strike", "sngStrike")


def set_bullet(paragraph: _Paragraph, kind: str | None, margin: Length, hanging: Length,
               char: str = "•", number: int = 1) -> None:
    """Indent ``paragraph`` by ``margin``; ``kind`` ``"bullet"``/``"number"`` hangs a marker in ``hanging``."""
    ppr = paragraph._p.get_or_add_pPr()
    for tag in ("a:buFont", "a:buNone", "a:buAutoNum", "a:buChar"):
        for old in ppr.findall(qn(tag)):
            ppr.remove(old)
    ppr.set("marL", str(int(margin)))
    ppr.set("indent", str(-int(hanging)) if kind in ("bullet", "number") else "0")
    if kind == "bullet":
        etree.SubElement(ppr, qn("a:buFont"), typeface="Arial")
        etree.SubElement(ppr, qn("a:buChar"), char=char)
    elif kind == "number":
        etree.SubElement(ppr, qn("a:buAutoNum"), type="arabicPeriod", startAt=str(number))
    else:
        etree.SubElement(ppr, qn("a:buNone"))


def make_slide_number(run: _Run) -> None:
    """Turn ``run`` into PowerPoint's slide-number field (its text is the current value)."""
    r = run._r
    r.tag = qn("a:fld")
    r.set("id", "{%s}" % str(uuid.uuid4()).upper())
    r.set("type", "slidenum")


# --------------------------------------------------------------------------- shapes


def set_alt_text(shape: BaseShape, text: str) -> None:
    """The description screen readers announce (``cNvPr/@descr``)."""
    shape._element.xpath("./*[1]/p:cNvPr")[0].set("descr", text)


def set_cell_rule(cell, color: str, width: Length) -> None:
    """A bottom rule under a table cell (and no other cell borders)."""
    tcpr = cell._tc.get_or_add_tcPr()
    for side in ("lnL", "lnR", "lnT", "lnB"):
        for old in tcpr.findall(qn(f"a:{side}")):
            tcpr.remove(old)
    for i, side in enumerate(("lnL", "lnR", "lnT", "lnB")):
        line = etree.Element(qn(f"a:{side}"), w=str(int(width) if side == "lnB" else 0))
        if side == "lnB":
            fill = etree.SubElement(line, qn("a:solidFill"))
            etree.SubElement(fill, qn("a:srgbClr")).set("val", color.lstrip("#"))
        else:
            etree.SubElement(line, qn("a:noFill"))
        tcpr.insert(i, line)


def remove_shape(shape: BaseShape) -> None:
    """Delete a shape (an unused placeholder) from its slide."""
    element = shape._element
    element.getparent().remove(element)
