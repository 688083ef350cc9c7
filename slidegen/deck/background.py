"""A slide's ``background:`` (Slidev's frontmatter key): a colour or a picture, and the text colour on it.

Slidev takes a picture when the value is a path or address (``/x.png``, ``img/bg.jpg``) and a CSS
colour otherwise. Here a colour is ``#rgb``, ``#rrggbb``, ``rgb(r, g, b)`` or a CSS colour name;
a picture is a file beside the deck (like ``image:``) or ``fig:NAME``. Decks work offline, so an
address (``https://...``) is an error.

Text stays readable (WCAG AA, 4.5:1): on a colour, the theme's dark text when it reaches 4.5:1,
else its light text, else black or white (one of the two always does, 4.58:1 at worst). A picture
is shown faded (:data:`PICTURE_OPACITY` over the theme's white), which keeps the dark text above
7:1 on any picture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from slidegen import theme
from slidegen.deck.layouts import Layout, Tone, layout

if TYPE_CHECKING:  # the nodes read their look from here: no import back at run time
    from slidegen.deck.nodes import Slide

#: How opaque a background picture is drawn over the theme's background.
PICTURE_OPACITY = 0.25
#: The contrast ratio text keeps on a background colour (WCAG AA for body text).
AA = 4.5

_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_RGB = re.compile(r"rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)")
_NAME = re.compile(r"[a-zA-Z]+")
_PICTURE = re.compile(r".*\.(png|jpe?g|gif|svg|webp)", re.IGNORECASE)


class BackgroundProblem(ValueError):
    """A ``background:`` value that is neither a colour nor a picture; the message says what to write."""


@dataclass(frozen=True)
class Background:
    """What a slide is drawn on: a colour (``#rrggbb``) or a picture (``src`` as written), and its text colour."""

    color: str | None
    image: str | None
    text: str
    """The text colour: ``theme.TEXT``, ``theme.TEXT_ON_DARK``, or black or white when neither reaches AA."""

    @property
    def dark(self) -> bool:
        """Light text on it: the slide takes the dark tone (footers, links)."""
        return luminance(self.text) > 0.5


def parse(value: object) -> Background | None:
    """The background ``value`` names (``None`` for no value); :class:`BackgroundProblem` if it names none."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BackgroundProblem(
            f"background: takes a colour (#1d4ed8, rgb(29, 78, 216), navy) or a picture "
            f"(img/bg.png, fig:NAME), not {type(value).__name__}"
        )
    text = value.strip()
    if "://" in text:
        raise BackgroundProblem(
            f"background picture '{text}' is remote: decks work offline, so save it beside the deck"
        )
    if text.startswith("fig:") or _PICTURE.fullmatch(text) or "/" in text:
        return Background(None, text, theme.TEXT)
    color = css_color(text)
    if color is None:
        raise BackgroundProblem(
            f"background '{text}' is neither a colour (#rrggbb, rgb(r, g, b), a CSS colour "
            "name) nor a picture (a .png, .jpg, .svg or .webp file, or fig:NAME)"
        )
    return Background(color, None, text_on(color))


def css_color(text: str) -> str | None:
    """``text`` as ``#rrggbb`` when it is a colour: hex, ``rgb()`` or one of CSS's colour names."""
    if match := _HEX.fullmatch(text):
        digits = match[1] if len(match[1]) == 6 else "".join(c * 2 for c in match[1])
        return "#" + digits.lower()
    if match := _RGB.fullmatch(text):
        channels = [int(c) for c in match.groups()]
        return "#" + "".join(f"{c:02x}" for c in channels) if max(channels) <= 255 else None
    if _NAME.fullmatch(text):
        from matplotlib.colors import CSS4_COLORS  # CSS's 148 colour names; loaded only for a name

        found = CSS4_COLORS.get(text.lower())
        return str(found).lower() if found else None
    return None


def luminance(color: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""

    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(color[i : i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_on(color: str) -> str:
    """The text colour for background ``color``: the theme's own when one reaches AA, else black or white."""
    for text in (theme.TEXT, theme.TEXT_ON_DARK):
        if contrast(text, color) >= AA:
            return text
    return max(("#000000", "#ffffff"), key=lambda text: contrast(text, color))


def of_frontmatter(frontmatter: dict[str, object]) -> Background | None:
    """A slide's checked ``background:`` (the parser rejects a bad one; here it reads as none)."""
    try:
        return parse(frontmatter.get("background"))
    except BackgroundProblem:
        return None


def of_slide(slide: Slide) -> Background | None:
    """The slide's background, as read once into :attr:`Slide.look`."""
    return slide.look.background


def slide_layout(slide: Slide, dark_schema: bool = False) -> Layout:
    """The slide's layout as its writers draw it (:meth:`Deck.layout_of`): a background colour sets its tone
    (light text on a dark colour), and so does ``colorSchema: dark`` (every slide dark) otherwise."""
    spec = layout(slide.layout)
    found = slide.look.background
    if found is not None and found.color is not None:
        tone: Tone = "dark" if found.dark else "light"
    elif dark_schema:
        tone = "dark"
    else:
        return spec
    return spec if spec.tone == tone else replace(spec, tone=tone)


def base_color(spec: Layout) -> str:
    """The colour a slide of ``spec``'s tone is painted (under a faded picture, the colour it fades to)."""
    return theme.ACCENT_DARK_BG if spec.dark else theme.BACKGROUND
