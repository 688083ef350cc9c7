"""Equations for PowerPoint: LaTeX -> MathML (latex2mathml) -> OMML (mathml_to_omml), repaired so
Office and LibreOffice both draw it, and styled for a slide.

- :func:`latex_to_omml`: one ``m:oMath`` element for a formula;
- :func:`display_math`: that formula as the ``m:oMathPara`` a text box holds, its runs sized and coloured.

The rest of the writer's XML (shapes, notes, package items) is in :mod:`slidegen.write.pptx.pml`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree  # type: ignore[import-untyped]

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
#: An equation sits in ``mc:AlternateContent``, its formula in ``a14:m`` (Office 2010's math in DrawingML).
A14 = "http://schemas.microsoft.com/office/drawing/2010/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"

#: Accents mathml_to_omml writes as ``m:limUpp`` (a limit) instead of ``m:acc``.
ACCENT_CHARS = {
    "^": "\u0302",
    "~": "\u0303",
    "˜": "\u0303",
    "˙": "\u0307",
    "¨": "\u0308",
    "ˇ": "\u030c",
    "´": "\u0301",
    "`": "\u0300",
    "˘": "\u0306",
    "¯": "\u0304",
}


def _m(tag: str) -> str:
    return f"{{{M}}}{tag}"


# --------------------------------------------------------------------------- equations


def latex_to_omml(tex: str) -> str:
    """One ``m:oMath`` element (as XML text, ``xmlns:m`` declared) for ``tex``.

    Raises :class:`ValueError` saying why when the converters cannot take it.
    """
    import latex2mathml.converter
    import mathml_to_omml

    if top_level_rows(tex):  # a plain multi-line formula: one centred column, a row per line
        tex = "\\begin{array}{c}" + tex + "\\end{array}"
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
    return str(etree.tostring(omath, encoding="unicode"))


def top_level_rows(tex: str) -> bool:
    """Whether ``tex`` breaks lines with ``\\\\`` outside any environment and braces (``a \\\\ b``)."""
    depth = envs = 0
    for match in re.finditer(r"\\begin\{|\\end\{|\\\\|\\[{}]|[{}]", tex):
        token = match.group(0)
        if token in ("\\begin{", "\\end{"):
            envs += 1 if token == "\\begin{" else -1
            depth += 1  # the brace around the environment's name
        elif token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        elif token == "\\\\" and depth == 0 and envs <= 0:
            return True
    return False


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
        for i, (run, text) in enumerate(zip(group_runs, texts, strict=True)):
            edge = i == 0 or i == len(group_runs) - 1
            if (
                ALWAYS_LITERAL & set(text)
                or (not balanced and set(text) & set("()"))
                or (edge and text.strip() in OPERATORS)
            ):
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


def display_math(omml: str, size: int, color: str) -> str:
    """The ``m:oMathPara`` (``xmlns:m`` declared, centred) holding ``omml`` styled by :func:`styled_omath`."""
    return (
        f'<m:oMathPara xmlns:m="{M}"><m:oMathParaPr><m:jc m:val="centerGroup"/></m:oMathParaPr>'
        f"{styled_omath(omml, size, color)}</m:oMathPara>"
    )


@lru_cache(maxsize=256)
def styled_omath(omml: str, size: int, color: str) -> str:
    """``omml`` with an ``a:rPr`` in every run: PowerPoint takes size (in hundredths of a point), colour
    (``rrggbb``) and font from it."""
    holder = etree.fromstring(f'<a:rPr xmlns:a="{A}">{omml}</a:rPr>')
    omath = holder[0]
    for run in omath.iter(_m("r")):
        if run.find(f"{{{A}}}rPr") is not None:  # styled already (a dimmed row of a formula step)
            continue
        rpr = etree.Element(f"{{{A}}}rPr", {"lang": "en-US", "sz": str(size), "i": "1"})
        fill = etree.SubElement(rpr, f"{{{A}}}solidFill")
        etree.SubElement(fill, f"{{{A}}}srgbClr").set("val", color)
        etree.SubElement(rpr, f"{{{A}}}latin").set("typeface", "Cambria Math")
        run.insert(1 if run.find(_m("rPr")) is not None else 0, rpr)
    xml = str(etree.tostring(omath, encoding="unicode"))
    # both namespaces are declared where the formula goes (the slide and m:oMathPara)
    start, rest = xml.split(">", 1)
    return start.replace(f' xmlns:m="{M}"', "").replace(f' xmlns:a="{A}"', "") + ">" + rest
