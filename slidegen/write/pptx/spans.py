"""Inline clicks in PowerPoint (``<span v-click>`` in a paragraph): a copy of the paragraph per state.

PowerPoint animates whole paragraphs, not runs. A paragraph whose runs change on clicks
(:class:`~slidegen.write.pptx.model.Run` ``appear``/``vanish``) is drawn in each of its states: the
text box keeps the last state, shown from its click on; each earlier state is a copy of the
text box just behind it (``"... click state"``), on the slide from that state's first click to
the next one's. In every copy the runs hidden in its state are drawn in the slide background's
colour (halfway there with ``fade``), so the words keep their places, as the HTML keeps the room
of a hidden span (``opacity: 0``), and every other paragraph of the copy is drawn in the
background colour, with no animation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from slidegen.write.pptx.code_steps import mix
from slidegen.write.pptx.fades import FADE
from slidegen.write.pptx.model import Para, Run, Shape, TextBox


def with_states(shapes: Sequence[Shape], background: str) -> list[Shape]:
    """``shapes`` with the state copies of each text box whose paragraphs hold timed runs, before it."""
    out: list[Shape] = []
    for shape in shapes:
        if isinstance(shape, TextBox) and any(_changes(p) for p in shape.paras):
            out += copies(shape, background)
            paras = tuple(_final(p, background) if _changes(p) else p for p in shape.paras)
            shape = replace(shape, paras=paras)
        out.append(shape)
    return out


def copies(box: TextBox, background: str) -> list[TextBox]:
    """A copy of ``box`` for each earlier state of each of its changing paragraphs."""
    out = []
    for index, para in enumerate(box.paras):
        points = _changes(para)
        for start, end in zip([para.appear, *points[:-1]], points, strict=False):
            state = _state(para, start, background)
            appear, vanish = max(start, para.appear), min(end, para.vanish) if para.vanish else end
            if para.vanish and para.vanish <= appear:
                continue  # the paragraph is gone before this state
            shown = replace(state, appear=appear, vanish=vanish, fade=False)
            paras = tuple(shown if i == index else _blank(p, background) for i, p in enumerate(box.paras))
            out.append(replace(box, paras=paras, name=f"{box.name} click state", placeholder=None, appear=0, vanish=0))
    return out


def visible(run: Run, k: int) -> bool:
    """Whether ``run`` shows after ``k`` clicks (an appearance after the disappearance: hidden in between)."""
    if run.vanish and run.appear > run.vanish:
        return not run.vanish <= k < run.appear
    return run.appear <= k and not (run.vanish and k >= run.vanish)


def _changes(para: Para) -> list[int]:
    """The clicks on which a run of ``para`` shows or hides while the paragraph is on the slide, in order."""
    found = {c for run in para.runs for c in (run.appear, run.vanish) if c}
    return sorted(c for c in found if c > para.appear and not (para.vanish and c >= para.vanish))


def _state(para: Para, k: int, background: str) -> Para:
    runs = tuple(_plain(run) if visible(run, k) else _hidden(run, para, background) for run in para.runs)
    return replace(para, runs=runs)


def _final(para: Para, background: str) -> Para:
    """The paragraph in its last state, appearing on its last change (or its own click, if later)."""
    last = _changes(para)[-1]
    return replace(_state(para, last, background), appear=max(last, para.appear))


def _plain(run: Run) -> Run:
    return replace(run, appear=0, vanish=0, fade=False)


def _hidden(run: Run, para: Para, background: str) -> Run:
    color = mix(run.color or para.color, background, FADE if run.fade else 1.0)
    return replace(_plain(run), color=color, url=None, slide=None)


def _blank(para: Para, background: str) -> Para:
    runs = tuple(
        replace(_plain(run), color=mix(run.color or para.color, background, 1.0), url=None, slide=None)
        for run in para.runs
    )
    return replace(para, runs=runs, color=mix(para.color, background, 1.0), appear=0, vanish=0, fade=False)
