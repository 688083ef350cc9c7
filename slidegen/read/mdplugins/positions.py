"""Source offsets for inline tokens, so the Deck builder can give every node its column.

``positions_plugin`` wraps each inline rule: every token a rule pushes gets
``meta["offset"]`` (where the rule started, in the inline source it parsed) and
``meta["end"]`` (where it stopped), unless the rule set them itself. Tokens parsed from
an image's label (its ``children``) are offset within that label, which starts two
characters (``![``) after the image's own offset. Tokens made later by post-processing
(unpaired ``*`` turned back into text) keep the offset of the rule that pushed them.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

InlineRule = Callable[[StateInline, bool], bool]


def positions_plugin(md: MarkdownIt) -> None:
    """Record offsets for the tokens of every inline rule registered so far (register it last)."""
    ruler = md.inline.ruler
    for name in ruler.get_all_rules():
        rule = ruler.__rules__[ruler.__find__(name)]
        ruler.at(name, _recording(rule.fn), {"alt": list(rule.alt)})


def _recording(rule: InlineRule) -> InlineRule:
    def recorded(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        for token in state.tokens[count:]:
            token.meta.setdefault("offset", start)
            token.meta.setdefault("end", state.pos)
        return True

    return recorded
