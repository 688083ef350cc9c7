"""The presentation model: every slide, shape, position and font size the PPTX writer draws.

:mod:`slidegen.write.pptx.layout` builds it from a :class:`~slidegen.deck.nodes.Deck` without touching
XML; :mod:`slidegen.write.pptx.render` turns it into python-pptx objects. Lengths are EMU
(``pptx.util.Length``: ``Inches(1) == 914400``, ``Pt(1) == 12700``); colours ``#rrggbb``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pptx.util import Emu, Length

from slidegen import theme


@dataclass(frozen=True)
class Box:
    """A rectangle on the slide: left, top, width, height."""

    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    def lengths(self) -> tuple[Length, Length, Length, Length]:
        """The four values as ``pptx.util`` lengths, in ``add_*`` argument order."""
        return Emu(self.x), Emu(self.y), Emu(self.w), Emu(self.h)


@dataclass(frozen=True)
class Run:
    """A stretch of text with one look. ``None`` fields take the paragraph's value."""

    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    underline: bool = False
    font: str | None = None
    color: str | None = None
    url: str | None = None
    """Hyperlink address: a web URL or another deck's ``NN-slug.pptx``."""
    slide: int | None = None
    """1-based index of the slide of this deck the run jumps to."""
    jump: int | None = None
    """With ``url`` (another deck's file): the 1-based slide of that file the run opens at (PowerPoint)."""
    field: str | None = None
    """``"slidenum"``: the text is the current value of PowerPoint's slide-number field."""
    baseline: int = 0
    """Raised (superscript, ``30000``: 30%) or lowered (subscript, ``-25000``) from the line, in 1/1000 %."""
    appear: int = 0
    """The click an inline ``<span v-click>`` shows on (0: from the start); :mod:`.spans` draws it."""
    vanish: int = 0
    fade: bool = False


@dataclass(frozen=True)
class Para:
    """A paragraph: runs plus paragraph-wide size, font, colour, alignment and list marker."""

    runs: tuple[Run, ...]
    size: Length
    font: str = theme.SANS
    color: str = theme.TEXT
    bold: bool = False
    italic: bool = False
    align: str = "left"
    """``left``, ``center`` or ``right``."""
    level: int = 0
    """Nesting depth in a list, 0 at the top; sets the indent."""
    bullet: str | None = None
    """``None`` (plain), ``"bullet"``, ``"number"`` or ``"indent"`` (a list item's later paragraph)."""
    start: int = 1
    """The number a ``"number"`` paragraph shows."""
    space_before: Length = Emu(0)
    appear: int = 0
    """The click the paragraph appears on (0: shown from the start); :mod:`slidegen.write.pptx.anim` animates it."""
    vanish: int = 0
    """The click it disappears on (0: never)."""
    fade: bool = False
    """While hidden it shows at half opacity (Slidev's ``fade``): :mod:`.fades` draws a faded copy."""

    @property
    def text(self) -> str:
        return "".join(run.text for run in self.runs)


@dataclass(frozen=True)
class TextBox:
    """A text frame: a new text box, or the slide's ``title``/``subtitle`` placeholder."""

    box: Box
    paras: tuple[Para, ...]
    name: str = "Text"
    placeholder: str | None = None
    fill: str | None = None
    anchor: str = "top"
    """Vertical anchor: ``top``, ``middle`` or ``bottom``."""
    inset: int = 0
    appear: int = 0
    """The click the whole shape appears on (0: shown from the start; its paragraphs may have their own)."""
    vanish: int = 0


@dataclass(frozen=True)
class Table:
    """A native table; one paragraph per cell, header row first."""

    box: Box
    header: tuple[Para, ...]
    rows: tuple[tuple[Para, ...], ...]
    col_widths: tuple[int, ...]
    row_heights: tuple[int, ...]
    """Header row first."""
    appear: int = 0
    vanish: int = 0


@dataclass(frozen=True)
class Picture:
    """A raster image from ``media[src]`` stretched to ``box`` (which keeps its aspect ratio)."""

    box: Box
    src: str
    alt: str
    opacity: float = 1.0
    """Below 1: drawn faded (a ``background:`` picture)."""
    appear: int = 0
    vanish: int = 0


@dataclass(frozen=True)
class Equation:
    """An editable OMML equation with a PNG fallback of the same formula."""

    box: Box
    tex: str
    omml: str
    """One ``m:oMath`` element as XML text."""
    png: bytes
    size: Length
    """Font size of the formula's characters."""
    color: str = theme.TEXT
    appear: int = 0
    vanish: int = 0
    steps: tuple[tuple[int, ...], ...] = ()
    """A formula's line steps kept for animation (``$$ {1|3|all}``; :mod:`slidegen.write.pptx.math_steps`)."""
    clicks: tuple[int, ...] = ()
    """The click each step after the first shows on."""


Shape = TextBox | Table | Picture | Equation


@dataclass(frozen=True)
class SlideModel:
    """One slide: the template layout it starts from, its background, shapes and notes."""

    index: int
    layout: str
    """The deck's layout name (``default``, ``two-cols``...)."""
    template_layout: str
    """Name of the template layout: ``Title Slide``, ``Title Only`` or ``Blank``."""
    shapes: tuple[Shape, ...]
    background: str | None = None
    notes: tuple[str, ...] = ()
    notes_footer: tuple[str, ...] = ()
    """Lines appended to the notes (the binding stage's ``Sources: key — source``)."""
    transition: str | None = None
    """The transition into the slide: ``fade``, ``push-l`` / ``-r`` / ``-u`` / ``-d``, or ``None`` (none)."""

    @property
    def title(self) -> TextBox | None:
        """The shape filling the title placeholder, if the slide has one."""
        for shape in self.shapes:
            if isinstance(shape, TextBox) and shape.placeholder == "title":
                return shape
        return None


@dataclass(frozen=True)
class PresentationModel:
    """The whole presentation: slide size, document properties and slides."""

    width: int
    height: int
    title: str
    author: str
    slides: tuple[SlideModel, ...]
    sans: str = ""
    """The theme's heading and body typeface (``fonts.sans``), for text an author adds in PowerPoint;
    ``""`` keeps the template's."""
