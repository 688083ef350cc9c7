"""The deck-wide settings a Slidev headmatter gives, and the values per-slide keys may take.

Headmatter (https://sli.dev/custom/): ``aspectRatio`` (``16/9`` or ``4/3``; Slidev also reads
``16:9``, ``16x9`` and ``16|9``), ``canvasWidth`` (the slide's width in CSS pixels, which sets
how large everything on it looks; slidegen's default is 1280, Slidev's 980), ``colorSchema``
(``light``, ``dark``; ``auto`` and ``all`` print light, as a static export must pick one),
``transition``, ``titleTemplate`` (``%s`` is the deck's title), ``lineNumbers`` and ``fonts``.
Per slide: ``transition``, ``zoom`` (a positive scale of the slide's content) and ``clicks``
(the slide's number of clicks, a whole number).

Fonts (https://sli.dev/custom/config-fonts) come from the machine, never from a web font service.
``fonts.sans`` (the text), ``fonts.serif`` (Slidev's ``font-serif`` class) and ``fonts.mono`` (code)
name families put first in the theme's stacks in HTML, before the theme's fallbacks unless
``fallbacks: false``; PowerPoint names the first family of ``sans`` and ``mono`` on every run
(its ``a:latin`` typeface), and cannot embed it. ``check`` warns about a family ``fonts.local``
does not list (Slidev would fetch it from Google Fonts), once per deck about the families a PPTX
shows only where they are installed (:func:`pptx_font_warnings`), and about ``provider`` other
than ``none``, ``weights`` and ``italic``: they choose what Slidev downloads, which slidegen never does.

:func:`problems` lists each value that is wrong (the parser raises the first at its key);
:func:`deck_settings` reads a checked headmatter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from slidegen import theme
from slidegen.deck.background import Background, of_frontmatter
from slidegen.errors import Diagnostic

#: Slidev's built-in transitions, and the reveal.js transition each one is drawn with.
TRANSITIONS = {
    "fade": "fade",
    "fade-out": "fade",
    "slide-left": "slide",
    "slide-right": "slide",
    "slide-up": "slide",
    "slide-down": "slide",
    "view-transition": "fade",
    "none": "none",
}
#: The aspect ratios every output supports.
ASPECTS = {(16, 9), (4, 3)}
COLOR_SCHEMAS = ("light", "dark", "auto", "all")
FONT_KEYS = frozenset({"sans", "serif", "mono", "local", "provider", "weights", "italic", "fallbacks"})
_FAMILY = re.compile(r"[\w .-]+")
#: CSS's generic families: no typeface PowerPoint could name.
GENERIC = frozenset(
    {
        "serif",
        "sans-serif",
        "monospace",
        "cursive",
        "fantasy",
        "system-ui",
        "ui-sans-serif",
        "ui-serif",
        "ui-monospace",
        "ui-rounded",
        "math",
        "emoji",
    }
)
#: Fonts every machine that shows a PPTX has: those Windows and macOS ship, and those PowerPoint installs.
EVERYWHERE = frozenset(
    {
        "arial",
        "calibri",
        "cambria",
        "consolas",
        "courier new",
        "georgia",
        "tahoma",
        "times new roman",
        "trebuchet ms",
        "verdana",
    }
)
_RATIO = re.compile(r"\s*(\d+(?:\.\d+)?)\s*[:/x|]\s*(\d+(?:\.\d+)?)\s*")


@dataclass(frozen=True)
class DeckSettings:
    """A deck's settings, with slidegen's defaults: read once from the headmatter (:attr:`Deck.settings`)."""

    aspect: tuple[int, int] = (16, 9)
    canvas_width: int = theme.WIDTH_PX
    color_schema: str = "light"
    transition: str | None = None
    """The Slidev transition the headmatter names (``None``: the theme's fade)."""
    title_template: str = "%s"
    line_numbers: bool = False
    sans: str | None = None
    """``fonts.sans`` as a CSS family list (quoted names), ``None`` without one; likewise ``serif``, ``mono``."""
    serif: str | None = None
    mono: str | None = None
    fallbacks: bool = True
    """``fonts.fallbacks``: the theme's own families follow the deck's (``false``: only the deck's)."""
    pptx_sans: str | None = None
    """The typeface PowerPoint text takes (the first of ``fonts.sans`` that is no generic family); ``None``:
    the theme's. Likewise ``pptx_mono`` for code."""
    pptx_mono: str | None = None

    @property
    def canvas_height(self) -> int:
        return round(self.canvas_width * self.aspect[1] / self.aspect[0])

    @property
    def dark(self) -> bool:
        """Every slide takes the dark tone (``colorSchema: dark``)."""
        return self.color_schema == "dark"

    def page_title(self, title: str) -> str:
        return self.title_template.replace("%s", title)

    def font_css(self) -> str:
        """The CSS rule that puts the deck's fonts in the theme's custom properties (``""``: none given)."""
        stacks = [
            ("--sans", self.sans, theme.SANS_CSS),
            ("--serif", self.serif, SERIF_CSS),
            ("--mono", self.mono, theme.MONO_CSS),
        ]
        props = [f"{name}: {given}{', ' + rest if self.fallbacks else ''};" for name, given, rest in stacks if given]
        if not props:
            return ""
        serif = " .reveal .font-serif { font-family: var(--serif); }" if self.serif else ""
        return ":root { " + " ".join(props) + " }" + serif


@dataclass(frozen=True)
class SlideLook:
    """What a slide's own frontmatter changes of how it looks, read once (:attr:`Slide.look`)."""

    zoom: float = 1.0
    """``zoom:``, the scale of the slide's content (1: none)."""
    transition: str | None = None
    """The Slidev transition the slide names for itself (``None``: the deck's)."""
    background: Background | None = None
    """Its ``background:``, a colour or a picture with the text colour on it (``None``: the theme's)."""


def slide_look(frontmatter: dict[str, Any]) -> SlideLook:
    """The look ``frontmatter`` gives a slide (values :func:`problems` rejects keep the defaults)."""
    zoom = frontmatter.get("zoom")
    return SlideLook(
        zoom=float(zoom) if _number(zoom) else 1.0,
        transition=slidev_transition(frontmatter.get("transition")),
        background=of_frontmatter(frontmatter),
    )


#: The serif stack ``fonts.serif`` goes before (Slidev's own fallbacks, in its order).
SERIF_CSS = "ui-serif, Georgia, Cambria, 'Times New Roman', Times, serif"


def aspect(value: object) -> tuple[int, int] | None:
    """``value`` as one of :data:`ASPECTS` (``16/9``, ``"4:3"``, ``1.777``...), else ``None``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ratio = float(value)
    elif isinstance(value, str) and (match := _RATIO.fullmatch(value)) and float(match[2]):
        ratio = float(match[1]) / float(match[2])
    else:
        return None
    return next((a for a in ASPECTS if abs(a[0] / a[1] - ratio) < 0.01), None)


def slidev_transition(value: object) -> str | None:
    """The forward transition of a Slidev ``transition:`` (``slide-left | slide-right`` -> ``slide-left``)."""
    return value.split("|")[0].strip() if isinstance(value, str) and value.strip() else None


def reveal_transition(value: object) -> str | None:
    """The reveal.js transition that draws Slidev transition ``value`` (an unknown name fades)."""
    name = slidev_transition(value)
    return None if name is None else TRANSITIONS.get(name, "fade")


def problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``(key, message)`` for each value in frontmatter ``data`` that slidegen cannot use."""
    out: list[tuple[str, str]] = []
    if "aspectRatio" in data and aspect(data["aspectRatio"]) is None:
        out.append(
            (
                "aspectRatio",
                f"aspectRatio {data['aspectRatio']!r} is not 16/9 or 4/3, the ratios every "
                "output (HTML, PPTX, PDF, PNG) draws",
            )
        )
    width = data.get("canvasWidth")
    if "canvasWidth" in data and not (_number(width) and 320 <= width <= 7680):
        out.append(
            (
                "canvasWidth",
                f"canvasWidth {width!r} is not a width in pixels from 320 to 7680 "
                f"(slidegen's default is {theme.WIDTH_PX})",
            )
        )
    if "colorSchema" in data and data["colorSchema"] not in COLOR_SCHEMAS:
        out.append(("colorSchema", f"colorSchema {data['colorSchema']!r} is not one of " + ", ".join(COLOR_SCHEMAS)))
    if "titleTemplate" in data and not isinstance(data["titleTemplate"], str):
        out.append(("titleTemplate", "titleTemplate must be text in which %s stands for the deck's title"))
    if "lineNumbers" in data and not isinstance(data["lineNumbers"], bool):
        out.append(("lineNumbers", "lineNumbers must be true or false"))
    if "transition" in data and slidev_transition(data["transition"]) is None:
        out.append(("transition", "transition must name a transition, e.g. fade or slide-left"))
    zoom = data.get("zoom")
    if "zoom" in data and not (_number(zoom) and 0.1 <= zoom <= 10):
        out.append(("zoom", f"zoom {zoom!r} is not a scale from 0.1 to 10 (1 is the normal size)"))
    clicks = data.get("clicks")
    if "clicks" in data and not (isinstance(clicks, int) and not isinstance(clicks, bool) and clicks >= 0):
        out.append(("clicks", f"clicks {clicks!r} is not a whole number of clicks (0 or more)"))
    if "fonts" in data:
        out += _font_problems(data["fonts"])
    return out


def _font_problems(fonts: object) -> list[tuple[str, str]]:
    if not isinstance(fonts, dict):
        return [("fonts", "fonts must be a mapping, e.g. fonts: {sans: Carlito, local: Carlito}")]
    out = []
    for key, value in fonts.items():
        if key not in FONT_KEYS:
            out.append(("fonts", f"fonts key '{key}' is not one of Slidev's: " + ", ".join(sorted(FONT_KEYS))))
        elif key in ("sans", "serif", "mono", "local") and not (
            isinstance(value, str) and all(_FAMILY.fullmatch(name) for name in families(value))
        ):
            out.append(
                (
                    "fonts",
                    f"fonts.{key} must be font family names (letters, digits, spaces, - and _), separated by commas",
                )
            )
        elif key in ("fallbacks", "italic") and not isinstance(value, bool):
            out.append(("fonts", f"fonts.{key} must be true or false"))
    return out


def font_warnings(fonts: object) -> list[str]:
    """Warnings for ``fonts``: families Slidev would fetch from a web font service, which slidegen never does."""
    if not isinstance(fonts, dict):
        return []
    local = {name.lower() for name in families(fonts.get("local"))}
    out = []
    provider = fonts.get("provider")
    if provider not in (None, "none"):
        out.append(
            f"fonts.provider '{provider}' is not used: slidegen never loads web fonts, only fonts "
            "installed on the machine that shows the deck"
        )
    for key in ("weights", "italic"):
        if key in fonts:
            out.append(
                f"fonts.{key} is not used: it says which styles of a web font Slidev downloads; slidegen "
                "uses the installed font's own weights and italics"
            )
    for key in ("sans", "serif", "mono"):
        fetched = [name for name in families(fonts.get(key)) if name.lower() not in local]
        if fetched and provider != "none":
            out.append(
                f"fonts.{key}: {', '.join(fetched)} would come from a web font service in Slidev; slidegen "
                "shows it only where it is installed (list it in fonts.local to say so)"
            )
    return out


def pptx_font_warnings(where: str, line: int, fonts: object) -> list[Diagnostic]:
    """One warning at ``where:line`` naming the families of ``fonts`` a PPTX names but cannot embed (none when
    every one is a font every machine has, or is already warned about as a web font)."""
    if not isinstance(fonts, dict):
        return []
    local = {name.lower() for name in families(fonts.get("local"))}
    look = deck_settings({"fonts": fonts})
    named = [(key, name) for key, name in (("sans", look.pptx_sans), ("mono", look.pptx_mono)) if name]
    missing = [
        f"fonts.{key} {name}"
        for key, name in named
        if name.lower() not in EVERYWHERE and (name.lower() in local or fonts.get("provider") == "none")
    ]
    if not missing:
        return []
    return [
        Diagnostic(
            where,
            line,
            1,
            f"PowerPoint cannot embed fonts: the PPTX shows {' and '.join(missing)} only "
            "on a machine that has it installed, and its default font elsewhere",
            "warning",
        )
    ]


def families(value: object) -> list[str]:
    """The font family names of a comma-separated ``value``, quotes removed."""
    if not isinstance(value, str):
        return []
    return [name.strip().strip("'\"") for name in value.split(",") if name.strip().strip("'\"")]


def deck_settings(headmatter: dict[str, Any]) -> DeckSettings:
    """The settings ``headmatter`` gives (values :func:`problems` rejects keep the defaults)."""
    width = headmatter.get("canvasWidth")
    given = headmatter.get("fonts")
    fonts: dict[str, Any] = given if isinstance(given, dict) else {}
    schema = headmatter.get("colorSchema")
    template = headmatter.get("titleTemplate")
    numbers = headmatter.get("lineNumbers")
    sans, serif, mono = (
        [name for name in families(fonts.get(key)) if _FAMILY.fullmatch(name)] for key in ("sans", "serif", "mono")
    )
    return DeckSettings(
        aspect=aspect(headmatter.get("aspectRatio")) or (16, 9),
        canvas_width=int(width) if _number(width) and 320 <= width <= 7680 else theme.WIDTH_PX,
        color_schema=schema if schema in COLOR_SCHEMAS else "light",
        transition=slidev_transition(headmatter.get("transition")),
        title_template=template if isinstance(template, str) and template else "%s",
        line_numbers=numbers if isinstance(numbers, bool) else False,
        sans=_css_families(sans),
        serif=_css_families(serif),
        mono=_css_families(mono),
        fallbacks=fonts.get("fallbacks") is not False,
        pptx_sans=_typeface(sans),
        pptx_mono=_typeface(mono),
    )


def _css_families(names: list[str]) -> str | None:
    """``names`` as a CSS font-family list: each font quoted, a generic family (``monospace``) as the keyword."""
    return ", ".join(name.lower() if name.lower() in GENERIC else f'"{name}"' for name in names) or None


def _typeface(names: list[str]) -> str | None:
    """The first of ``names`` that is a font, not a generic family."""
    return next((name for name in names if name.lower() not in GENERIC), None)


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
