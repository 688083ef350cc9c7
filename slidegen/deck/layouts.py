"""The slide layouts, defined once: every fact about a layout that more than one stage needs.

The parser validates a slide's ``layout:`` against :data:`LAYOUTS` (and the slots and picture
it takes); each writer only maps a :class:`Layout` to its format: reveal.js classes and
backgrounds, PowerPoint placement and colours, Marp's ``lead``/``invert`` classes and split
backgrounds. Looks that belong to one format alone (a title's point size, the cover's accent
bar) stay in that writer, keyed by layout name.

The names are Slidev's 19 built-in layouts, with their slots (``::right::``, ``::left::``,
``::bottom::``; ``::default::`` names the default slot explicitly) and the frontmatter each
reads (``image:`` and ``backgroundSize:``, ``url:``), so a Slidev author feels at home.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Side = Literal["left", "right", "full"]
Tone = Literal["light", "dark"]
Align = Literal["left", "center"]


@dataclass(frozen=True)
class Layout:
    """One layout a slide may name in its frontmatter."""

    name: str
    slots: tuple[str, ...] = ()
    """Named slots besides the default one, in order (``right`` for ``::right::``); each is a column."""
    image: Side | None = None
    """The half of the slide the frontmatter's ``image:`` fills (``full``: the whole slide, behind the content);
    ``None``: the layout shows no such picture."""
    tone: Tone = "light"
    """``dark``: light text on the theme's dark background."""
    centered: bool = False
    """Title and body sit as one group in the middle of the slide, not stacked from the top."""
    align: Align = "left"
    """How the slide's text lines up."""
    frame: Side | None = None
    """The part of the slide the web page at the frontmatter's ``url:`` fills (Slidev's iframe layouts)."""
    header: bool = False
    """The default slot spans the top of the slide, above the named slots' columns (``two-cols-header``)."""
    bottom: str | None = None
    """A named slot that spans the bottom of the slide, below the columns (``bottom`` in ``two-cols-header``)."""
    padded: bool = True
    """``False``: the content uses the whole slide, without the theme's margins (``full``, ``none``)."""

    @property
    def slot_names(self) -> tuple[str, ...]:
        """Every named slot a slide of this layout may use: the columns, then the bottom one."""
        return self.slots + ((self.bottom,) if self.bottom else ())

    @property
    def dark(self) -> bool:
        return self.tone == "dark"


def _table(*layouts: Layout) -> dict[str, Layout]:
    return {layout.name: layout for layout in layouts}


#: Every layout, by name, in the order error messages list them.
LAYOUTS: dict[str, Layout] = _table(
    Layout("cover", centered=True),
    Layout("default"),
    Layout("center", centered=True, align="center"),
    Layout("section", tone="dark", centered=True),
    Layout("two-cols", slots=("right",)),
    Layout("image-left", image="left"),
    Layout("image-right", image="right"),
    Layout("fact", tone="dark", centered=True, align="center"),
    Layout("statement", tone="dark", centered=True, align="center"),
    Layout("quote", centered=True),
    Layout("end", tone="dark", centered=True, align="center"),
    Layout("full", padded=False),
    Layout("image", image="full"),
    Layout("iframe", frame="full"),
    Layout("iframe-left", frame="left"),
    Layout("iframe-right", frame="right"),
    Layout("intro", centered=True),
    Layout("none", padded=False),
    Layout("two-cols-header", slots=("left", "right"), header=True, bottom="bottom"),
    Layout("references"),
)

#: What a writer falls back to for a slide whose layout is not in the table (a deck built by hand).
DEFAULT = LAYOUTS["default"]


def layout(name: str) -> Layout:
    """The layout called ``name``; :data:`DEFAULT` when there is none (the parser lets no such slide through)."""
    return LAYOUTS.get(name, DEFAULT)
