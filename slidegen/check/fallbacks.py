"""Slidev features a deck uses that slidegen shows differently, each a ``check`` warning at its line.

- A ```` ```ts {monaco} ```` block (Slidev embeds its Monaco editor) is a plain highlighted block.
- PowerPoint draws a click on inline HTML (``<span v-click>``) as copies of its paragraph
  (:mod:`slidegen.write.pptx.spans`), but not in a table cell: there it shows the text in full.
- ``fade`` is drawn on text only: PowerPoint hides a faded code block, table, formula or picture
  until its click.
- Slidev's enter animations (``v-click.up``, ``.scale``...) are plain clicks.
- An HTML block is a picture in PowerPoint (one per top-level element when each is revealed whole):
  a click on the element wrapping a picture animates it; clicks on elements inside it cannot, and the
  picture shows every part.
"""

from __future__ import annotations

from slidegen.deck import clicks, rawhtml
from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic


def warnings(where: str, deck: d.Deck) -> list[Diagnostic]:
    """The warnings for ``deck`` (shown as ``where``), in slide order."""
    out: list[Diagnostic] = []
    for slide in deck.slides:
        for block in d.walk_blocks(d.slide_blocks(slide)):
            line = getattr(block, "line", 0) or slide.line
            if isinstance(block, d.CodeBlock) and block.monaco:
                out.append(
                    Diagnostic(
                        where,
                        line,
                        1,
                        "{monaco} code editors are Slidev's own: the block is shown as plain highlighted code",
                        "warning",
                    )
                )
            elif isinstance(block, d.RawHtml) and (unknown := _modifiers(block)):
                out.append(
                    Diagnostic(
                        where,
                        line,
                        1,
                        f"click animation {', '.join(unknown)} is Slidev's enter "
                        "animation: slidegen shows the element on its click without it",
                        "warning",
                    )
                )
            elif isinstance(block, d.RawHtml) and any(_clicks_inside(part.html) for part in clicks.parts(block)):
                out.append(
                    Diagnostic(
                        where,
                        line,
                        1,
                        "clicks on elements inside an HTML block: PowerPoint shows "
                        "the block as one picture with every part visible (give each part its own "
                        "block, or put v-click on the element that wraps the block)",
                        "warning",
                    )
                )
            elif isinstance(block, d.Click) and block.fade and _drawn_whole(block):
                out.append(
                    Diagnostic(
                        where,
                        line,
                        1,
                        "fade on a code block, table, formula or picture: PowerPoint "
                        "hides it until its click (fade is drawn on text only)",
                        "warning",
                    )
                )
            elif isinstance(block, d.Table) and any(
                isinstance(n, d.HtmlSpan) and n.clicks for n in d.walk_inlines(d.block_inlines(block))
            ):
                out.append(
                    Diagnostic(
                        where,
                        line,
                        1,
                        "a click on inline HTML in a table is shown in HTML and PDF; "
                        "PowerPoint shows the table's text in full",
                        "warning",
                    )
                )
    return out


def _modifiers(block: d.RawHtml) -> list[str]:
    """The directive modifiers in ``block`` slidegen does not draw (``.up``, ``.scale``...), as written."""
    return [f"v-click.{m}" for _, _, spec in clicks.html_units(block.html) for m in spec.unknown]


def _clicks_inside(html: str) -> bool:
    """Whether an HTML block's click directives reveal parts of it, which its one picture cannot animate."""
    if not clicks.html_units(html) or clicks.revealed_whole(html):
        return False
    opened = rawhtml.opening(html.strip())
    return not (opened is not None and not opened[2])  # a lone wrapper tag: the Markdown it holds is timed


def _drawn_whole(block: d.Click) -> bool:
    return any(isinstance(b, (d.CodeBlock, d.Table, d.MathBlock, d.Figure)) for b in d.walk_blocks(block.blocks))
