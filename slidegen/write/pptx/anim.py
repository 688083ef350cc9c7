"""Clicks as PowerPoint animations: the ``p:timing`` of a slide, raw PresentationML.

Each thing the HTML reveals on click ``k`` (a shape, or a run of paragraphs of a text box) gets an
"Appear" entrance effect in the group of click ``k``; each thing it hides there a "Disappear" exit
effect; a click range appears on its start and disappears on its end on the same shape, and a
hidden one disappears first and appears again (a shape whose first effect is an exit is on the
slide from the start). Groups follow in click order in the main sequence, so clicking through the slide in
PowerPoint or LibreOffice Impress shows what the HTML shows click by click. Clicks on which nothing
changes (a gap left by an absolute ``at``, a larger ``clicks:`` total) have no group: PowerPoint
has no empty click.

PowerPoint reads both effects as presets (``presetID="1"``: Appear, Disappear) and keeps them
editable in its animation pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree  # type: ignore[import-untyped]

from slidegen.write.pptx.model import Para, Shape, TextBox

NS_P = "http://schemas.openxmlformats.org/presentationml/2006/main"


@dataclass(frozen=True)
class Effect:
    """One effect: on ``click``, shape ``spid`` (its paragraphs ``paras`` [first, last], or all of it)
    appears (``exit`` False) or disappears."""

    click: int
    spid: int
    exit: bool
    paras: tuple[int, int] | None = None


def shape_effects(spid: int, shape: Shape) -> list[Effect]:
    """The effects of one drawn shape: its own ``appear``/``vanish``, or its paragraphs' in runs."""
    found: list[Effect] = []
    if shape.appear > 0:
        found.append(Effect(shape.appear, spid, False))
    if shape.vanish > 0:
        found.append(Effect(shape.vanish, spid, True))
    if isinstance(shape, TextBox) and not found:
        for (appear, vanish), first, last in _runs(shape.paras):
            if appear > 0:
                found.append(Effect(appear, spid, False, (first, last)))
            if vanish > 0:
                found.append(Effect(vanish, spid, True, (first, last)))
    return found


def _runs(paras: Sequence[Para]) -> list[tuple[tuple[int, int], int, int]]:
    """Consecutive paragraphs with the same timing, as ``((appear, vanish), first, last)``."""
    out: list[tuple[tuple[int, int], int, int]] = []
    for i, para in enumerate(paras):
        key = (para.appear, para.vanish)
        if out and out[-1][0] == key and out[-1][2] == i - 1:
            out[-1] = (key, out[-1][1], i)
        else:
            out.append((key, i, i))
    return [run for run in out if run[0] != (0, 0)]


def timing_xml(effects: Sequence[Effect]) -> str:
    """The ``p:timing`` element for ``effects`` (empty string when there are none)."""
    if not effects:
        return ""
    ids = iter(range(3, 1_000_000))
    clicks = sorted({e.click for e in effects})
    groups = []
    for click in clicks:
        members = [e for e in effects if e.click == click]
        outer, middle = next(ids), next(ids)
        inner = "".join(
            _effect(e, next(ids), next(ids), "clickEffect" if i == 0 else "withEffect") for i, e in enumerate(members)
        )
        groups.append(
            f'<p:par><p:cTn id="{outer}" fill="hold"><p:stCondLst><p:cond delay="indefinite"/>'
            f'</p:stCondLst><p:childTnLst><p:par><p:cTn id="{middle}" fill="hold"><p:stCondLst>'
            f'<p:cond delay="0"/></p:stCondLst><p:childTnLst>{inner}</p:childTnLst></p:cTn></p:par>'
            f"</p:childTnLst></p:cTn></p:par>"
        )
    builds = []
    seen = set()
    for e in effects:
        key = (e.spid, int(e.exit))
        if key in seen or e.paras is None:
            continue
        seen.add(key)
        builds.append(f'<p:bldP spid="{e.spid}" grpId="{int(e.exit)}" build="p"/>')
    build_list = f"<p:bldLst>{''.join(builds)}</p:bldLst>" if builds else ""
    return (
        f'<p:timing xmlns:p="{NS_P}"><p:tnLst><p:par><p:cTn id="1" dur="indefinite" restart="never" '
        f'nodeType="tmRoot"><p:childTnLst><p:seq concurrent="1" nextAc="seek"><p:cTn id="2" '
        f'dur="indefinite" nodeType="mainSeq"><p:childTnLst>{"".join(groups)}</p:childTnLst></p:cTn>'
        '<p:prevCondLst><p:cond evt="onPrev" delay="0"><p:tgtEl><p:sldTgt/></p:tgtEl></p:cond></p:prevCondLst>'
        '<p:nextCondLst><p:cond evt="onNext" delay="0"><p:tgtEl><p:sldTgt/></p:tgtEl></p:cond></p:nextCondLst>'
        f"</p:seq></p:childTnLst></p:cTn></p:par></p:tnLst>{build_list}</p:timing>"
    )


def _effect(effect: Effect, outer: int, inner: int, node_type: str) -> str:
    kind, value = ("exit", "hidden") if effect.exit else ("entr", "visible")
    text = (
        f'<p:txEl><p:pRg st="{effect.paras[0]}" end="{effect.paras[1]}"/></p:txEl>' if effect.paras is not None else ""
    )
    return (
        f'<p:par><p:cTn id="{outer}" presetID="1" presetClass="{kind}" presetSubtype="0" fill="hold" '
        f'grpId="{int(effect.exit)}" nodeType="{node_type}"><p:stCondLst><p:cond delay="0"/></p:stCondLst>'
        f'<p:childTnLst><p:set><p:cBhvr><p:cTn id="{inner}" dur="1" fill="hold"><p:stCondLst>'
        f'<p:cond delay="0"/></p:stCondLst></p:cTn><p:tgtEl><p:spTgt spid="{effect.spid}">{text}</p:spTgt>'
        "</p:tgtEl><p:attrNameLst><p:attrName>style.visibility</p:attrName></p:attrNameLst></p:cBhvr>"
        f'<p:to><p:strVal val="{value}"/></p:to></p:set></p:childTnLst></p:cTn></p:par>'
    )


def add_timing(slide_element: etree._Element, effects: Sequence[Effect]) -> None:
    """Append the ``p:timing`` of ``effects`` to a slide's ``p:sld`` (after ``p:clrMapOvr``, as the schema orders)."""
    xml = timing_xml(effects)
    if not xml:
        return
    timing = etree.fromstring(xml)
    ext = slide_element.find(f"{{{NS_P}}}extLst")
    if ext is not None:
        ext.addprevious(timing)
    else:
        slide_element.append(timing)
