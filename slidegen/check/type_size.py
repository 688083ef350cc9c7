"""``slidegen check``'s type-size rules: what would be shown under 18 pt at 1280x720 is a warning.

The theme sets main text, tables and code at 18 pt or more as shown (24 px of the 1280x720 slide, which is
960 x 540 pt) and never shrinks them; footers, captions and footnotes at 12 pt or more (16 px). So what
can still come out small is what does not fit at those sizes:

- a code block longer than the slide holds at :data:`slidegen.theme.CODE_PT`, or wider than its column
  (split it over two slides, or cut it to the lines that matter);
- a figure (``fig:NAME``) whose box (:mod:`slidegen.deck.figbox`) is too small for a plot with 18-pt ticks and
  labels: beside too much text, or in a narrow column.
"""

from __future__ import annotations

from slidegen import theme
from slidegen.deck import figbox
from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic, display_path

#: The least size of main text, tables and code as shown, and of footers, captions and footnotes (points).
MAIN_PT = 18.0
SMALL_PT = 12.0
#: A character of the monospace face advances 0.602 em (DejaVu Sans Mono).
MONO_EM = 0.602
CODE_LINE = 1.25
CODE_PAD_X = 44


def code_fits(block: d.CodeBlock, width: float, height: float) -> tuple[bool, str]:
    """Whether ``block`` fits ``width`` x ``height`` px at the theme's code size (a long line wraps onto more
    rows, as the theme wraps it); why not, if it does not."""
    size = figbox.CODE_PX
    lines = block.code.rstrip("\n").split("\n")
    per_line = max(8, int((width - CODE_PAD_X) / (MONO_EM * size)) - 2)
    fit_rows = int((height - 22) / (CODE_LINE * size))
    rows = sum(max(1, -(-len(line.expandtabs(4)) // per_line)) for line in lines)
    if rows > fit_rows:
        wrapped = f" ({rows} rows, long lines wrapped at {per_line} characters)" if rows > len(lines) else ""
        return False, f"{len(lines)} lines{wrapped}, where {max(fit_rows, 0)} rows fit"
    return True, ""


def warnings(rel: str, deck: d.Deck) -> list[Diagnostic]:
    """A warning at each code block of ``deck`` that does not fit at 18 pt, and at each figure whose box cannot
    hold 18-pt labels; an imported slide's warning names its own file."""
    from slidegen.read.frontmatter import visible

    out = []
    for number, slide in enumerate(visible(deck).slides, 1):
        path = deck.slide_path(slide)
        where = rel if path == deck.path else display_path(path)
        body = figbox.body_box(slide)
        title = slide.blocks[slide.title_heading] if slide.title_heading is not None else None
        for blocks, width in figbox.slot_boxes(slide):
            shown = [b for b in blocks if b is not title]
            for block in d.walk_blocks(tuple(shown)):
                if not isinstance(block, d.CodeBlock) or block.max_height:
                    continue
                others = sum(
                    figbox.block_height(b, width) for b in shown if b is not block and not isinstance(b, d.Figure)
                )
                room = body.h - figbox.title_height(slide) - others - figbox.GAP * max(0, len(shown) - 1)
                fits, why = code_fits(block, width, room)
                if not fits:
                    out.append(
                        Diagnostic(
                            where,
                            block.line,
                            1,
                            f"slide {number}: this code block does not fit at "
                            f"{theme.CODE_PT:g} pt ({why}): split it over two slides or show the "
                            "lines that matter; code is never shrunk",
                            "warning",
                        )
                    )
        for figure, box in figbox.figure_boxes(slide):
            if box.too_small:
                out.append(
                    Diagnostic(
                        where,
                        figure.line,
                        1,
                        f"slide {number}: figure '{figure.src[4:]}' gets a "
                        f"{box.w}x{box.h} px box, too small for {MAIN_PT:g}-pt labels (at least "
                        f"{figbox.MIN_W}x{figbox.MIN_H}): give it the slide's width or move text to "
                        "the notes",
                        "warning",
                    )
                )
    return out
