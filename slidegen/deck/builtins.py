"""Slidev's built-in components and Iconify icons, which slidegen does not draw.

Slidev ships Vue components (``<Tweet>``, ``<Youtube>``, ``<Arrow>``...; ``<Toc>`` is drawn, see
:mod:`slidegen.read.toc`) and renders
``<carbon-logo-github />``-style tags as icons from Iconify's collections, fetched at build time.
slidegen has neither Vue nor Iconify's data offline, so each is a located ``check`` warning that
names what will not appear (:func:`warnings`), and the writers leave the tag out: no empty picture
in PowerPoint, no unknown element in the page.
"""

from __future__ import annotations

import re

from slidegen.deck import nodes as d
from slidegen.deck import rawhtml
from slidegen.errors import Diagnostic

#: Slidev's built-in components: lower-case tag (as tags are compared) -> (name as Slidev writes it, what it shows).
COMPONENTS = {
    "arrow": ("Arrow", "an arrow"),
    "autofittext": ("AutoFitText", "text sized to its box"),
    "lightordark": ("LightOrDark", "content for light or dark mode"),
    "link": ("Link", "a link to a slide"),
    "poweredbyslidev": ("PoweredBySlidev", "the 'Powered by Slidev' badge"),
    "renderwhen": ("RenderWhen", "content for some views only"),
    "slidecurrentno": ("SlideCurrentNo", "the current slide's number"),
    "slidestotal": ("SlidesTotal", "the number of slides"),
    "titlerenderer": ("TitleRenderer", "a slide's title"),
    "transform": ("Transform", "scaled content"),
    "tweet": ("Tweet", "an embedded tweet"),
    "vdrag": ("VDrag", "a draggable element"),
    "vdragarrow": ("VDragArrow", "a draggable arrow"),
    "vswitch": ("VSwitch", "content switched by clicks"),
    "youtube": ("Youtube", "an embedded YouTube video"),
}

#: Iconify collections Slidev decks use most (``<carbon-...>``, ``<mdi-...>``), and the ``i-`` prefix.
ICON_COLLECTIONS = (
    "bi",
    "bx",
    "carbon",
    "charm",
    "cib",
    "ci",
    "clarity",
    "codicon",
    "devicon",
    "emojione",
    "eos-icons",
    "fa",
    "fa6-brands",
    "fa6-regular",
    "fa6-solid",
    "fluent",
    "fluent-emoji",
    "gg",
    "heroicons",
    "heroicons-outline",
    "heroicons-solid",
    "i",
    "ic",
    "icon-park",
    "iconoir",
    "la",
    "line-md",
    "logos",
    "lucide",
    "material-symbols",
    "mdi",
    "noto",
    "octicon",
    "ph",
    "ri",
    "simple-icons",
    "skill-icons",
    "streamline",
    "tabler",
    "twemoji",
    "uil",
    "uim",
    "vscode-icons",
)
_COLLECTIONS = "|".join(re.escape(c) for c in sorted(ICON_COLLECTIONS, key=len, reverse=True))
_ICON_RE = re.compile(rf"(?:{_COLLECTIONS})-[a-z0-9][a-z0-9-]*")


def is_icon(tag: str) -> bool:
    """Whether ``tag`` (lower case) is a Slidev icon: an Iconify collection's prefix, a hyphen, a name."""
    return bool(_ICON_RE.fullmatch(tag))


def builtin(tag: str) -> str | None:
    """How a warning names the Slidev built-in ``tag``, or None: ``<Toc> (Slidev's table of contents)``,
    ``<carbon-logo-github> (a Slidev icon)``."""
    name = tag.lower()
    if name in COMPONENTS:
        written, what = COMPONENTS[name]
        return f"<{written}> (Slidev's built-in component for {what})"
    return f"<{name}> (a Slidev icon, from Iconify)" if is_icon(name) else None


def tags_in(html: str) -> list[tuple[int, str]]:
    """``(offset, tag)`` of each Slidev built-in opened in ``html``."""
    return [(m.start(), m.group(1).lower()) for m in rawhtml.OPEN_RE.finditer(html) if builtin(m.group(1))]


def only_builtins(html: str) -> bool:
    """Whether ``html`` holds nothing but Slidev built-ins (and their closing tags): nothing to draw."""
    rest = rawhtml.OPEN_RE.sub(lambda m: "" if builtin(m.group(1)) else m.group(0), html)
    rest = re.sub(r"</([A-Za-z][\w-]*)\s*>", lambda m: "" if builtin(m.group(1)) else m.group(0), rest)
    return bool(tags_in(html)) and not rest.strip()


def warnings(where: str, deck: d.Deck) -> list[Diagnostic]:
    """A warning at each Slidev built-in and icon in ``deck``, and at a ``theme:`` in its headmatter."""
    out: list[Diagnostic] = []
    theme = deck.headmatter.get("theme")
    if theme not in (None, "", "default", "none"):
        first = deck.slides[0] if deck.slides else None
        place = first.frontmatter_at.get("theme") if first is not None and first.path is None else None
        line = place[0] if place else 1
        out.append(
            Diagnostic(
                where,
                line,
                1,
                f"theme '{theme}' is a Slidev theme: slidegen draws every deck in "
                "its own theme (fonts and colours from the headmatter; styles in a <style> block)",
                "warning",
            )
        )
    for slide in deck.slides:
        for block in d.walk_blocks(d.slide_blocks(slide)):
            line = getattr(block, "line", 0) or slide.line
            texts: list[tuple[int, str]] = []
            if isinstance(block, d.RawHtml):
                texts.append((line, block.html))
            for node in d.walk_inlines(d.block_inlines(block)):
                if isinstance(node, d.RawInline):
                    texts.append((line, node.html))
                elif isinstance(node, d.HtmlSpan):
                    texts.append((line, f"<{node.tag}{node.attrs}>"))
            for at, html in texts:
                for offset, tag in tags_in(html):
                    out.append(
                        Diagnostic(
                            where,
                            at + html.count("\n", 0, offset),
                            1,
                            f"{builtin(tag)} does not appear: slidegen has no such component; write "
                            "it as Markdown, HTML or a component in components/",
                            "warning",
                        )
                    )
    return out
