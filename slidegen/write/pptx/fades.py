"""Slidev's ``fade`` in PowerPoint: a faded copy of a text box, shown while the original's paragraphs are hidden.

In Slidev a faded element (``<v-clicks fade>``, ``<v-click fade>``, ``v-click.fade``) is at half
opacity until its click instead of invisible. PowerPoint animates visibility only, so a text box
with faded paragraphs gets a copy drawn just behind it (``"... faded"``): there each faded paragraph
has its colours halfway to the slide background and the opposite timing (it shows while the
original is hidden, and vanishes when the original appears), and every other paragraph is drawn in
the background colour, so the copy lays out exactly as the original and shows nothing else.
PowerPoint and LibreOffice both draw it the same way: no transparency is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from slidegen.write.pptx.code_steps import mix
from slidegen.write.pptx.model import Para, Shape, TextBox

#: How far a faded paragraph's colours move toward the background (Slidev: ``opacity: 0.5``).
FADE = 0.5


def with_copies(shapes: Sequence[Shape], background: str) -> list[Shape]:
    """``shapes`` with a faded copy before each text box that has faded animated paragraphs."""
    out: list[Shape] = []
    for shape in shapes:
        if isinstance(shape, TextBox) and any(_faded(p) for p in shape.paras):
            out.append(copy(shape, background))
        out.append(shape)
    return out


def copy(box: TextBox, background: str) -> TextBox:
    """The faded copy of ``box`` (see the module's docstring)."""
    paras = tuple(_swap(p, background) if _faded(p) else _blank(p, background) for p in box.paras)
    return replace(box, paras=paras, name=f"{box.name} faded", placeholder=None)


def _faded(para: Para) -> bool:
    return para.fade and bool(para.appear or para.vanish)


def _swap(para: Para, background: str) -> Para:
    return replace(_recolor(para, background, FADE), appear=para.vanish, vanish=para.appear, fade=False)


def _blank(para: Para, background: str) -> Para:
    return replace(_recolor(para, background, 1.0), appear=0, vanish=0, fade=False)


def _recolor(para: Para, background: str, amount: float) -> Para:
    runs = tuple(
        replace(run, color=mix(run.color or para.color, background, amount), url=None, slide=None) for run in para.runs
    )
    return replace(para, runs=runs, color=mix(para.color, background, amount))
