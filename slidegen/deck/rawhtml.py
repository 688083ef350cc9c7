"""Raw HTML an author writes on a slide, as Slidev passes it through (markdown-it with ``html`` on).

Markdown-it gives inline HTML tag by tag (``html_inline``) and block HTML as CommonMark's HTML
blocks (``html_block``: up to a blank line, or a whole ``<style>``/``<script>``/``<pre>``). The
converter pairs inline tags into :class:`~slidegen.deck.nodes.HtmlSpan` nodes with the helpers here;
the HTML writer scopes a slide's ``<style>`` to that slide with :func:`scoped_style`.
The author's HTML is not checked or sanitised: it is the author's, as in Slidev.

PowerPoint draws the inline tags of :data:`PPTX_TAGS` as run formatting; anything else it
cannot draw is left out with a warning.
"""

from __future__ import annotations

import re

OPEN_RE = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*?)?)\s*(/?)>", re.DOTALL)
CLOSE_RE = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>")
STYLE_RE = re.compile(r"\s*<style(\s[^>]*)?>(.*)</style>\s*", re.DOTALL | re.IGNORECASE)
COLOR_RE = re.compile(r"(?:^|;)\s*color\s*:\s*(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-zA-Z]+)\s*(?:;|$)")

#: Elements without content: a lone tag is the whole element.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})

#: Inline tags PowerPoint draws natively, and the run formatting each gives.
PPTX_TAGS: dict[str, dict[str, object]] = {
    "b": {"bold": True},
    "strong": {"bold": True},
    "i": {"italic": True},
    "em": {"italic": True},
    "u": {"underline": True},
    "ins": {"underline": True},
    "s": {"strike": True},
    "del": {"strike": True},
    "strike": {"strike": True},
    "sub": {"baseline": -25000},
    "sup": {"baseline": 30000},
    "kbd": {"font": "mono"},
    "code": {"font": "mono"},
    "span": {},
    "mark": {},
    "small": {},
}

#: CSS colour names PowerPoint runs accept, beyond ``#rgb`` and ``#rrggbb``.
NAMED_COLORS = {
    "black": "#000000",
    "white": "#ffffff",
    "red": "#ff0000",
    "green": "#008000",
    "blue": "#0000ff",
    "yellow": "#ffff00",
    "orange": "#ffa500",
    "purple": "#800080",
    "gray": "#808080",
    "grey": "#808080",
    "teal": "#008080",
    "navy": "#000080",
    "maroon": "#800000",
    "olive": "#808000",
    "crimson": "#dc143c",
}


def opening(html: str) -> tuple[str, str, bool] | None:
    """``(name, attributes as written, void)`` of an opening tag; ``None`` for anything else."""
    match = OPEN_RE.fullmatch(html)
    if not match:
        return None
    name = match.group(1).lower()
    return name, match.group(2) or "", bool(match.group(3)) or name in VOID


def closing(html: str) -> str | None:
    """The element name of a closing tag, or ``None``."""
    match = CLOSE_RE.fullmatch(html)
    return match.group(1).lower() if match else None


def css_color(attrs: str) -> str | None:
    """The ``#rrggbb`` colour of a ``style="color: ..."`` attribute, if it names one PowerPoint can show."""
    style = re.search(r"""style\s*=\s*(["'])(.*?)\1""", attrs, re.DOTALL)
    found = COLOR_RE.search(style.group(2)) if style else None
    if not found:
        return None
    value = found.group(1).lower()
    if value.startswith("#"):
        return "#" + "".join(c * 2 for c in value[1:]) if len(value) == 4 else value
    return NAMED_COLORS.get(value)


def is_style(html: str) -> bool:
    """Whether an HTML block is one ``<style>`` element."""
    return STYLE_RE.fullmatch(html) is not None


def scoped_style(html: str, scope: str) -> str:
    """A ``<style>`` block whose rules apply inside the slide of class ``scope`` only (CSS nesting).

    Slidev scopes a slide's ``<style>`` to that slide (Vue's scoped styles); nesting the rules under
    ``.reveal .SCOPE`` does the same and outweighs the theme's ``.reveal h1``-style rules.
    """
    match = STYLE_RE.fullmatch(html)
    if not match:
        return html
    attrs, css = match.group(1) or "", match.group(2)
    return f"<style{attrs}>.reveal .{scope} {{\n{css.strip()}\n}}</style>"
