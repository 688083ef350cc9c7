"""Pictures an author names in raw HTML (``<img src="img/x.png">``), treated as Markdown pictures are.

Slidev serves ``<img src>`` relative to the deck like ``![](img/x.png)``; here the file goes
through the same resolution (inside the project, the bytes its extension names) and is copied to
``media/`` with the deck's other pictures. :func:`slide_refs` lists each ``src`` with its line (for
:func:`slidegen.media.images.image_refs`), :func:`rewrite` points the tags at the copied files, and
:func:`alone` finds a paragraph that is nothing but pictures (a figure in PowerPoint).
``data:`` pictures stay as written.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Mapping

from slidegen.deck import nodes as d

#: An ``<img>`` tag and, inside it, its ``src`` attribute's value (double, single or no quotes).
IMG_RE = re.compile(r"<img\b[^<>]*>", re.IGNORECASE)
SRC_RE = re.compile(r"""(\ssrc\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
ALT_RE = re.compile(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)


def _value(match: re.Match[str], first: int) -> str:
    return html.unescape(next((g for g in match.groups()[first:] if g is not None), ""))


def img_srcs(text: str) -> Iterator[tuple[str, int]]:
    """Each file ``src`` of the ``<img>`` tags in ``text``, with how many lines into ``text`` its tag is."""
    for tag in IMG_RE.finditer(text):
        found = SRC_RE.search(tag.group(0))
        if found:
            src = _value(found, 1).strip()
            if src and not src.lower().startswith("data:"):
                yield src, text.count("\n", 0, tag.start())


def img_alt(tag: str) -> str:
    """The ``alt`` text of one ``<img>`` tag (empty without one)."""
    found = ALT_RE.search(tag)
    return _value(found, 0) if found else ""


def block_refs(block: d.Block) -> Iterator[tuple[str, int]]:
    """The pictures of one block's raw HTML (not of the blocks inside it), each with its source line."""
    line = getattr(block, "line", 0)
    if isinstance(block, d.RawHtml):
        for src, offset in img_srcs(block.html):
            yield src, line + offset
        return
    for node in d.walk_inlines(d.block_inlines(block)):
        if isinstance(node, d.RawInline):
            for src, _ in img_srcs(node.html):
                yield src, line


def slide_refs(slide: d.Slide) -> Iterator[tuple[str, int]]:
    """Every raw-HTML picture of a slide (its slots and its notes), with its line."""
    for blocks in (d.slide_blocks(slide), slide.notes_blocks):
        for block in d.walk_blocks(blocks):
            yield from block_refs(block)


def rewrite(text: str, urls: Mapping[str, str] | Callable[[str], str | None]) -> str:
    """``text`` with each ``<img>``'s ``src`` replaced by its media URL (a ``src`` without one is kept)."""
    look = urls if callable(urls) else urls.get

    def tag(match: re.Match[str]) -> str:
        def src(found: re.Match[str]) -> str:
            url = look(_value(found, 1).strip())
            if url is None:
                return found.group(0)
            return f'{found.group(1)}"{html.escape(url, quote=True)}"'

        return SRC_RE.sub(src, match.group(0), count=1)

    return IMG_RE.sub(tag, text)


def only_images(text: str) -> list[tuple[str, str]]:
    """``(src, alt)`` of each ``<img>`` of ``text`` when it holds nothing else but blanks; ``[]`` otherwise."""
    if IMG_RE.sub("", text).strip():
        return []
    tags = IMG_RE.findall(text)
    found = [next(img_srcs(tag), None) for tag in tags]
    return [(f[0], img_alt(tag)) for f, tag in zip(found, tags, strict=True) if f] if all(found) else []


def alone(block: d.Paragraph) -> list[tuple[str, str]]:
    """``(src, alt)`` of each ``<img>`` of a paragraph that holds nothing else but blanks; ``[]`` otherwise."""
    parts: list[str] = []
    for node in block.children:
        if isinstance(node, d.RawInline):
            parts.append(node.html)
        elif isinstance(node, (d.SoftBreak, d.LineBreak)) or (isinstance(node, d.Text) and not node.text.strip()):
            parts.append(" ")
        else:
            return []
    return only_images("".join(parts))
