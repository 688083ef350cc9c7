"""Slidev features a deck uses that slidegen shows differently, each a ``check`` warning at its line.

- A ```` ```ts {monaco} ```` block (Slidev embeds its Monaco editor) is a plain highlighted block.
- PowerPoint draws a click on inline HTML (``<span v-click>``) as copies of its paragraph
  (:mod:`slidegen.pptx.spans`), but not in a table cell: there it shows the text in full.
- ``fade`` is drawn on text only: PowerPoint hides a faded code block, table, formula or picture
  until its click.
- Slidev's enter animations (``v-click.up``, ``.scale``...) are plain clicks.
"""

from __future__ import annotations

from . import clicks
from . import deck as d
from .errors import Diagnostic


def warnings(where: str, deck: d.Deck) -> list[Diagnostic]:
    """The warnings for ``deck`` (shown as ``where``), in slide order."""
    out: list[Diagnostic] = []
    for slide in deck.slides:
        for block in d.walk_blocks(d.slide_blocks(slide)):
            line = getattr(block, "line", 0) or slide.line
            if isinstance(block, d.CodeBlock) and block.monaco:
                out.append(Diagnostic(where, line, 1, "{monaco} code editors are Slidev's own: the block is "
                                      "shown as plain highlighted code", "warning"))
            elif isinstance(block, d.RawHtml) and (unknown := _modifiers(block)):
                out.append(Diagnostic(where, line, 1, f"click animation {', '.join(unknown)} is Slidev's enter "
                                      "animation: slidegen shows the element on its click without it", "warning"))
            elif isinstance(block, d.Click) and block.fade and _drawn_whole(block):
                out.append(Diagnostic(where, line, 1, "fade on a code block, table, formula or picture: PowerPoint "
                                      "hides it until its click (fade is drawn on text only)", "warning"))
            elif isinstance(block, d.Table) and any(isinstance(n, d.HtmlSpan) and n.clicks
                                                    for n in d.walk_inlines(d.block_inlines(block))):
                out.append(Diagnostic(where, line, 1, "a click on inline HTML in a table is shown in HTML and PDF; "
                                      "PowerPoint shows the table's text in full", "warning"))
    return out


def _modifiers(block: d.RawHtml) -> list[str]:
    """The directive modifiers in ``block`` slidegen does not draw (``.up``, ``.scale``...), as written."""
    return [f"v-click.{m}" for _, _, spec in clicks.html_units(block.html) for m in spec.unknown]


def _drawn_whole(block: d.Click) -> bool:
    return any(isinstance(b, (d.CodeBlock, d.Table, d.MathBlock, d.Figure)) for b in d.walk_blocks(block.blocks))
