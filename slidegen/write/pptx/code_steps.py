"""A code block's highlight steps in PowerPoint: one copy of the block per step, stacked.

The first copy shows step 1 and is on the slide from the start; each later copy shows its step
and appears on that step's click, on top of the one before (the code background is opaque, so
only the newest shows). In every copy the lines outside its step are dimmed, as Slidev dims
them; a step of all lines (``{all}``, ``{*}``) dims none, ``{none}`` dims every line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from slidegen import theme
from slidegen.write.pptx.model import Para, TextBox

#: How far a dimmed line's colours move toward the code background (0: unchanged, 1: invisible).
DIM = 0.62


def boxes(box: TextBox, steps: Sequence[tuple[int, ...]], clicks: Sequence[int]) -> list[TextBox]:
    """``box`` alone without steps; else one dimmed copy per step, the later ones appearing on ``clicks``."""
    if len(steps) < 2:
        return [box]
    out = [replace(box, paras=dimmed(box.paras, steps[0]))]
    for number, (step, click) in enumerate(zip(steps[1:], clicks, strict=False), start=2):
        out.append(
            replace(box, paras=dimmed(box.paras, step), name=f"Code step {number}", appear=max(click, box.appear))
        )
    return out


def dimmed(paras: Sequence[Para], step: tuple[int, ...]) -> tuple[Para, ...]:
    """``paras`` (one per line) with the lines outside ``step`` (1-based; empty: all lines) dimmed."""
    if not step:
        return tuple(paras)
    lit = set(step)
    return tuple(para if number in lit else _dim(para) for number, para in enumerate(paras, start=1))


def _dim(para: Para) -> Para:
    runs = tuple(replace(run, color=mix(run.color or para.color, theme.CODE_BACKGROUND, DIM)) for run in para.runs)
    return replace(para, runs=runs, color=mix(para.color, theme.CODE_BACKGROUND, DIM))


def mix(color: str, toward: str, amount: float) -> str:
    """``#rrggbb`` ``amount`` of the way from ``color`` to ``toward``."""
    a = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(toward[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * amount):02x}" for x, y in zip(a, b, strict=True))
