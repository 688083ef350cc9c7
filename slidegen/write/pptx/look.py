"""What a slide's ``background:``, ``zoom:`` and the deck's ``aspectRatio``, ``colorSchema`` and ``fonts`` change in
PowerPoint.

:mod:`slidegen.write.pptx.layout` asks here for the slide's width, its layout with the tone its background
gives (:func:`slidegen.deck.background.slide_layout`), the picture drawn behind it, and the text colour
its shapes take on a background colour (every text box without a fill of its own: title, body,
footnotes, footer; code, tables and filled boxes keep theirs). ``fonts.sans`` and ``fonts.mono`` name
the typeface of every run that takes the theme's (:func:`typefaces`); PowerPoint draws it where it
is installed (a PPTX cannot embed it) and its default font elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pptx.util import Emu

from slidegen import theme
from slidegen.deck import background, settings
from slidegen.deck import nodes as d
from slidegen.write.pptx.model import Box, Para, Picture, Run, Shape, SlideModel, Table, TextBox

#: The theme colours a background colour's text colour replaces.
_THEME_TEXT = frozenset({theme.TEXT, theme.MUTED, theme.ACCENT, theme.TEXT_ON_DARK})


def slide_width(deck: d.Deck, height: int) -> int:
    """The slide's width in EMU for ``height``: 16:9 or 4:3 as the headmatter's ``aspectRatio`` says."""
    w, h = deck.settings.aspect
    return int(Emu(height * w // h))


def backdrop(
    slide: d.Slide, width: int, height: int, image_sizes: Mapping[str, tuple[int, int]]
) -> tuple[str | None, list[Shape]]:
    """The slide's background colour (``None``: its tone's) and the faded picture behind everything, covering
    the slide as CSS's ``background-size: cover`` does (centred; the slide's edges cut what overhangs)."""
    found = slide.look.background
    if found is None:
        return None, []
    if found.color is not None:
        return found.color, []
    assert found.image is not None
    w, h = image_sizes.get(found.image, (width, height))
    scale = max(width / w, height / h)
    box = Box(round((width - w * scale) / 2), round((height - h * scale) / 2), round(w * scale), round(h * scale))
    return None, [Picture(box, found.image, "", opacity=background.PICTURE_OPACITY)]


def recolor(slide: d.Slide, shapes: list[Shape]) -> list[Shape]:
    """``shapes`` with the theme's text colours replaced by the text colour the slide's background colour needs."""
    found = slide.look.background
    if found is None or found.color is None:
        return shapes
    text = found.text

    def para(p: Para) -> Para:
        runs = tuple(replace(r, color=text) if r.color in _THEME_TEXT else r for r in p.runs)
        return replace(p, color=text if p.color in _THEME_TEXT else p.color, runs=runs)

    return [
        replace(s, paras=tuple(para(p) for p in s.paras)) if isinstance(s, TextBox) and s.fill is None else s
        for s in shapes
    ]


#: The PowerPoint transition each of Slidev's draws as (``None``: none).
_PPTX_TRANSITIONS = {
    "fade": "fade",
    "fade-out": "fade",
    "view-transition": "fade",
    "slide-left": "push-l",
    "slide-right": "push-r",
    "slide-up": "push-u",
    "slide-down": "push-d",
    "none": None,
}


def transition(deck: d.Deck, slide: d.Slide) -> str | None:
    """The slide's transition in PowerPoint: its own ``transition:``, else the headmatter's; none without either."""
    name = slide.look.transition or deck.settings.transition
    return None if name is None else _PPTX_TRANSITIONS.get(name, "fade")


def typefaces(look: settings.DeckSettings, slide: SlideModel) -> SlideModel:
    """``slide`` with the theme's sans and mono typefaces replaced by the deck's ``fonts.sans`` and ``fonts.mono``."""
    names = {theme.SANS: look.pptx_sans, theme.MONO: look.pptx_mono}
    faces = {theme_face: face for theme_face, face in names.items() if face}
    if not faces:
        return slide

    def run(r: Run) -> Run:
        return replace(r, font=faces[r.font]) if r.font in faces else r

    def para(p: Para) -> Para:
        return replace(p, font=faces.get(p.font, p.font), runs=tuple(run(r) for r in p.runs))

    def shape(s: Shape) -> Shape:
        if isinstance(s, TextBox):
            return replace(s, paras=tuple(para(p) for p in s.paras))
        if isinstance(s, Table):
            return replace(
                s, header=tuple(para(p) for p in s.header), rows=tuple(tuple(para(p) for p in row) for row in s.rows)
            )
        return s

    return replace(slide, shapes=tuple(shape(s) for s in slide.shapes))
