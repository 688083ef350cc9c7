"""``slidegen check``'s word count: a slide an audience can read holds at most :data:`MAX_WORDS` words.

Counted: the words a slide shows in its body, outside its title (its first heading): headings, paragraphs, list items,
table cells, quotes and the text of its HTML, a bound number or a citation one word each. Not
counted: code blocks, formulas, speaker notes and footnotes. A references slide (``layout:
references``) and a slide whose body is mostly code or a formula are left alone.
"""

from __future__ import annotations

import re

from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic

#: Words a slide's body may hold (issue 31: the back of the room reads about that many).
MAX_WORDS = 50
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’.,][^\W_]+)*")
_TAG_RE = re.compile(r"<[^>]*>|&\w+;")


def slide_words(slide: d.Slide) -> int:
    """The words of ``slide``'s body (see the module's docstring)."""
    words = 0
    title = slide.title_heading
    if title is None and slide.blocks and isinstance(slide.blocks[0], d.Heading):
        title = 0  # a heading first on the slide is its title, even when the frontmatter names one too
    blocks = [b for k, b in enumerate(slide.blocks) if k != title]
    blocks += [b for group in slide.slots.values() for b in group]
    for block in d.walk_blocks(tuple(blocks)):
        if isinstance(block, d.RawHtml):
            words += len(_WORD_RE.findall(_TAG_RE.sub(" ", block.html)))
            continue
        for node in d.walk_inlines(d.block_inlines(block)):
            if isinstance(node, (d.Text, d.Code)):
                words += len(_WORD_RE.findall(node.text))
            elif isinstance(node, (d.Ref, d.Cite)):
                words += 1
    return words


def _mostly_code(slide: d.Slide) -> bool:
    """Whether code or formulas hold more lines than the slide's text blocks."""
    shown = list(d.walk_blocks(d.slide_blocks(slide)))
    code = sum(b.code.count("\n") + 1 for b in shown if isinstance(b, d.CodeBlock))
    code += sum(b.tex.count("\n") + 1 for b in shown if isinstance(b, d.MathBlock))
    text = sum(1 for b in shown if isinstance(b, (d.Paragraph, d.Heading)))
    return code > 0 and code >= text


def warnings(rel: str, deck: d.Deck) -> list[Diagnostic]:
    """A warning at each shown slide of ``deck`` (its file shown as ``rel``) over :data:`MAX_WORDS` words;
    an imported slide's warning names its own file."""
    from slidegen.errors import display_path
    from slidegen.read.frontmatter import visible

    out = []
    for number, slide in enumerate(visible(deck).slides, 1):
        if slide.layout == "references" or _mostly_code(slide):
            continue
        words = slide_words(slide)
        if words > MAX_WORDS:
            path = deck.slide_path(slide)
            where = rel if path == deck.path else display_path(path)
            out.append(
                Diagnostic(
                    where,
                    slide.line,
                    1,
                    f"slide {number} shows {words} words, more than the "
                    f"{MAX_WORDS} an audience reads from the back of the room: move the rest to "
                    "the speaker notes or split the slide",
                    "warning",
                )
            )
    return out
