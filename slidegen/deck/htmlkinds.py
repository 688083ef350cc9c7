"""What a piece of raw HTML is, decided once, when the deck is read: writers match on the node types.

- a ```` ```mermaid ```` fence is a :class:`~slidegen.deck.nodes.Diagram` (:func:`code_block`);
- an inline element whose tag names a custom element (``<lr-schedule ...>``) is a
  :class:`~slidegen.deck.nodes.Component`, any other an :class:`~slidegen.deck.nodes.HtmlSpan` (:func:`span`);
- an HTML block that opens custom elements is a :class:`~slidegen.deck.nodes.ComponentBlock`; one PowerPoint
  cannot draw natively an :class:`~slidegen.deck.nodes.HtmlRegion`, a picture of it; anything else (a
  ``<style>``, a lone wrapper tag around Markdown, ``<img>`` tags, Slidev's built-ins, what draws nothing) a
  plain :class:`~slidegen.deck.nodes.RawHtml` (:func:`html_block`).

Binding fills the numbers of attributes in and changes none of these decisions.
"""

from __future__ import annotations

import re
from dataclasses import fields

from slidegen.deck import nodes as d
from slidegen.deck import rawhtml, rawimages
from slidegen.deck.builtins import is_icon, only_builtins

MERMAID = "mermaid"
#: A valid custom element name (lower case, a hyphen, not one of the names HTML reserves).
_NAME_RE = re.compile(r"[a-z][a-z0-9._]*-[a-z0-9._-]*")
_RESERVED = frozenset(
    {
        "annotation-xml",
        "color-profile",
        "font-face",
        "font-face-src",
        "font-face-uri",
        "font-face-format",
        "font-face-name",
        "missing-glyph",
    }
)
_UNSEEN_RE = re.compile(
    r"<!--.*?-->|<script\b.*?</script\s*>|</?(?:br|wbr|meta|link|base|script)\b[^>]*>", re.DOTALL | re.IGNORECASE
)


def is_custom_tag(tag: str) -> bool:
    """Whether ``tag`` names a custom element (``lr-schedule``); Slidev's own ``v-click`` tags and icons
    (``carbon-logo-github``, :mod:`slidegen.deck.builtins`) are not."""
    return bool(_NAME_RE.fullmatch(tag)) and tag not in _RESERVED and not tag.startswith("v-") and not is_icon(tag)


def custom_tags(text: str) -> tuple[str, ...]:
    """The custom elements' tags ``text`` opens, each once, in order."""
    found = (m.group(1).lower() for m in rawhtml.OPEN_RE.finditer(text))
    return tuple(dict.fromkeys(tag for tag in found if is_custom_tag(tag)))


def needs_picture(text: str) -> bool:
    """Whether PowerPoint shows the HTML block ``text`` as a picture of it (see the module's docstring)."""
    if rawhtml.is_style(text) or rawhtml.closing(text) or custom_tags(text) or only_builtins(text):
        return False
    opened = rawhtml.opening(text.strip())
    if opened is not None and not opened[2]:
        return False  # a lone wrapper tag: the Markdown it holds is drawn
    return not rawimages.only_images(text) and bool(_UNSEEN_RE.sub("", text).strip())


def code_block(block: d.CodeBlock) -> d.CodeBlock:
    """A fenced block as its type: a :class:`~slidegen.deck.nodes.Diagram` in ``mermaid``, else ``block``."""
    if block.lang.lower() != MERMAID:
        return block
    return d.Diagram(**{f.name: getattr(block, f.name) for f in fields(d.CodeBlock)})


def span(tag: str, attrs: str, children: tuple[d.Inline, ...], refs: tuple[d.Ref, ...]) -> d.HtmlSpan:
    """An inline element: a :class:`~slidegen.deck.nodes.Component` when ``tag`` names a custom element."""
    if not is_custom_tag(tag):
        return d.HtmlSpan(tag, attrs, children, refs)
    line = 0
    if refs and refs[0].line:  # a reference knows its line: the tag starts above it by the newlines before it
        line = refs[0].line - attrs.count("\n", 0, refs[0].span[0])
    return d.Component(tag, attrs, children, refs, line=line)


def html_block(block: d.RawHtml) -> d.RawHtml:
    """``block`` as the node type its HTML makes it (see the module's docstring); its fields kept."""
    values = {f.name: getattr(block, f.name) for f in fields(d.RawHtml)}
    if tags := custom_tags(block.html):
        return d.ComponentBlock(**values, tags=tags)
    if needs_picture(block.html):
        return d.HtmlRegion(**values)
    return d.RawHtml(**values)
