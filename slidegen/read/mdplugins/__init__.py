"""markdown-it-py plugins for slidegen's Slidev-style Markdown, and the one configured parser.

Each plugin is a function ``name_plugin(md)`` that registers rules and keeps its data
in ``token.meta``; the Deck builder in :mod:`slidegen.read.convert` reads those tokens.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

from slidegen.read.mdplugins.cites import cites_plugin
from slidegen.read.mdplugins.directives import click_plugin, slot_plugin
from slidegen.read.mdplugins.positions import positions_plugin
from slidegen.read.mdplugins.refs import refs_plugin
from slidegen.read.mdplugins.snippets import snippet_plugin

__all__ = [
    "cites_plugin",
    "click_plugin",
    "markdown",
    "positions_plugin",
    "refs_plugin",
    "slot_plugin",
    "snippet_plugin",
]


def _keep_url(url: str) -> str:
    """Link targets stay as written (``02-data.md#windows``): writers resolve them."""
    return url


@cache
def markdown() -> MarkdownIt:
    """The parser: CommonMark + GFM tables and strikethrough + ``$`` math + footnotes + slidegen plugins.

    Built once per process; ``md.parse`` does not change it, so it is safe to share.
    """
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # No digit next to a dollar and no space inside it, so "$5 and $10" stays text.
    dollarmath_plugin(md, allow_space=False, allow_digits=False)
    footnote_plugin(md)  # [^1] and [^1]: ..., as Slidev's markdown-it-footnote reads them
    refs_plugin(md)
    cites_plugin(md)
    click_plugin(md)
    slot_plugin(md)
    snippet_plugin(md)  # <<< @/path#region lang {steps}
    positions_plugin(md)
    md.normalizeLink = _keep_url  # type: ignore[method-assign]
    return md
