"""Pictures of the HTML blocks PowerPoint cannot draw (a ``<div>`` grid, an ``<iframe>``), through Chromium.

Slidev's own PowerPoint export is a picture of every slide; here only the regions PowerPoint
cannot draw natively are pictures, and everything else stays editable text. A block is pictured
when the reader typed it an :class:`~slidegen.deck.nodes.HtmlRegion` (:mod:`slidegen.deck.htmlkinds`):
not a ``<style>`` (it styles the page), not a lone wrapper tag around Markdown (the Markdown is
drawn), not only ``<img>`` tags (figures), not a component (pictured by its own job). Its picture is
drawn by :mod:`slidegen.write.snapshot` in the same Chromium as the components', from a page holding
the theme, the slide's own ``<style>`` blocks (scoped as on the slide) and the block, laid out as
wide as a slide's body, then narrowed to what it draws. The page runs no script and loads nothing:
its pictures are inlined, and each ``<iframe>`` is drawn as a box showing the address it would
load. Without Chromium the block is left out of PowerPoint with a warning at its line
(:mod:`slidegen.write.pptx.content`).
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from slidegen import paths
from slidegen.deck import clicks, rawhtml, rawimages
from slidegen.deck.layouts import layout
from slidegen.deck.nodes import Block, Deck, HtmlRegion, RawHtml, Slide, slide_blocks, walk_blocks
from slidegen.errors import Diagnostic, SlidegenError, display_path

if TYPE_CHECKING:
    from slidegen.write.picture_jobs import Job

KIND = "html"
#: The page blocks scripts, frames and every load but inlined data.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:"
#: Bumped when the page or its fitting changes, so cached pictures are drawn again.
PAGE_FORMAT = 1

IFRAME_RE = re.compile(r"<iframe\b([^<>]*)>(.*?)</iframe\s*>|<iframe\b([^<>]*)/?>", re.IGNORECASE | re.DOTALL)
_ATTR_RE = r"""\s{0}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))"""


def alt_text(block: RawHtml) -> str:
    """What the picture shows, for its alt text: the block's ``title``/``aria-label``, else its words."""
    label = re.search(r"""\s(?:aria-label|title)\s*=\s*(?:"([^"]*)"|'([^']*)')""", block.html)
    if label:
        return html.unescape(label.group(1) or label.group(2) or "")
    words = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", block.html)).split())
    return (words[:120] + "...") if len(words) > 120 else (words or "HTML block")


def _attr(attrs: str, name: str) -> str | None:
    found = re.search(_ATTR_RE.format(name), attrs, re.IGNORECASE)
    return html.unescape(next((g for g in found.groups() if g is not None), "")) if found else None


def iframes(text: str) -> Iterator[tuple[str, int]]:
    """The address of each ``<iframe>`` in ``text``, with how many lines into ``text`` it starts."""
    for match in IFRAME_RE.finditer(text):
        yield _attr(match.group(1) or match.group(3) or "", "src") or "", text.count("\n", 0, match.start())


def remote(url: str) -> bool:
    return url.lower().startswith(("http://", "https://", "//"))


def _size(value: str | None, default: str) -> str:
    if value is None or not value.strip():
        return default
    value = value.strip()
    return f"{value}px" if value.isdigit() else html.escape(value, quote=True)


def _address_box(match: re.Match[str]) -> str:
    """An ``<iframe>`` as the box its picture shows: the address, where the page would be."""
    attrs = match.group(1) or match.group(3) or ""
    url = _attr(attrs, "src") or ""
    what = "Web page (opens with the network)" if remote(url) else "Embedded page"
    style = (
        f"width: {_size(_attr(attrs, 'width'), '100%')}; height: {_size(_attr(attrs, 'height'), '300px')}; "
        "box-sizing: border-box; display: flex; flex-direction: column; align-items: center; "
        "justify-content: center; gap: 0.4em; background: var(--code-bg); color: var(--muted); "
        "font-size: 0.7em; text-align: center; padding: 1em; overflow-wrap: anywhere;"
    )
    return (
        f'<div class="slidegen-web-page" style="{style}"><span>{html.escape(what)}:</span>'
        f'<span style="color: var(--accent)">{html.escape(url)}</span></div>'
    )


def _inline_pictures(text: str, deck: Deck, root: Path | None) -> str:
    """``text`` with each ``<img src>`` that names a picture file of the deck inlined as a ``data:`` URL."""
    allowed = paths.allowed_root(deck.path, root)

    def data_url(src: str) -> str | None:
        try:  # a picture the build refuses (outside the project, unreadable) is its error there, never inlined
            path = paths.resolve(paths.PICTURE, paths.Written(src, deck.path, 1, 1), deck.path, allowed)
            data = path.read_bytes()
        except (SlidegenError, OSError):
            return None
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return f"data:{kind};base64,{base64.b64encode(data).decode()}"

    return rawimages.rewrite(text, data_url)


def page(block: RawHtml, slide: Slide, deck: Deck, root: Path | None, width_px: int) -> str:
    """The page the block's picture is drawn from (see the module's docstring)."""
    from slidegen.media.assets import theme_css
    from slidegen.write.html import frontmatter_classes

    scope = f"slide-style-{slide.index}"
    styles = [
        rawhtml.scoped_style(b.html, scope)
        for b in walk_blocks(slide_blocks(slide))
        if isinstance(b, RawHtml) and rawhtml.is_style(b.html)
    ]
    classes = " ".join(c for c in (scope, frontmatter_classes(slide.frontmatter.get("class"))) if c)
    body = IFRAME_RE.sub(_address_box, _inline_pictures(block.html, deck, root))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        f'<meta name="slidegen-picture" content="{PAGE_FORMAT}">\n'
        f"<style>{theme_css()}\nhtml, body {{ margin: 0; background: var(--bg); }}\n"
        f"#stage {{ width: {width_px}px; padding: 8px; display: flow-root; }}</style>\n"
        + "\n".join(styles)
        + f'\n</head><body>\n<div class="reveal"><div class="{classes}"><div id="stage">\n{body}\n'
        "</div></div></div>\n</body></html>\n"
    )


#: The gap between two columns of a slide (the theme's ``column-gap``), in CSS px.
COLUMN_GAP_PX = 56


def slot_width(slide: Slide, slot: str | None, body_px: int) -> int:
    """How wide a block in ``slot`` (``None``: the default one) is on the slide: the body, or one column."""
    spec = layout(slide.layout)
    half = (body_px - COLUMN_GAP_PX) // 2
    if spec.image in ("left", "right") or spec.frame in ("left", "right"):
        return half
    if slot is None:
        return half if spec.slots and not spec.header else body_px
    return half if slot in spec.slots else body_px


def deck_jobs(deck: Deck, root: Path | None = None) -> list[Job]:
    """One picture job per HTML block of ``deck`` that PowerPoint cannot draw, laid out as wide as its slot."""
    from slidegen.write.picture_jobs import BODY_WIDTH_PX, Job

    jobs = []
    for slide in deck.slides:
        where = display_path(deck.slide_path(slide))  # an imported slide's pictures name its own file
        slots: list[tuple[str | None, tuple[Block, ...]]] = [(None, slide.blocks), *slide.slots.items()]
        for slot, blocks in slots:
            width = slot_width(slide, slot, BODY_WIDTH_PX)
            for block in walk_blocks(blocks):
                for part in clicks.parts(block) if isinstance(block, RawHtml) else ():
                    if isinstance(part, HtmlRegion):
                        jobs.append(Job(part.picture_key, KIND, page(part, slide, deck, root, width), where, part.line))
    return jobs


def network_warnings(where: str, deck: Deck) -> list[Diagnostic]:
    """A warning for each raw ``<iframe>`` that loads a web page: it needs the network."""
    out = []
    for slide in deck.slides:
        for block in walk_blocks(slide_blocks(slide)):
            if isinstance(block, RawHtml):
                out += [
                    Diagnostic(
                        where,
                        block.line + offset,
                        1,
                        f"<iframe> shows the web page {url}, which needs the network; PowerPoint shows its address",
                        "warning",
                    )
                    for url, offset in iframes(block.html)
                    if remote(url)
                ]
    return out
