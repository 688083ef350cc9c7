"""Clicks in the reveal.js page: the fragment markup for the timings :mod:`slidegen.deck.clicks` resolves.

A thing shown on click ``k`` is a fragment with ``data-fragment-index="k-1"``; one hidden on click
``k`` is a ``fade-out`` fragment at the same index. Reveal.js steps through the indices its
fragments use, closing gaps, so a slide gets an invisible ``click-step`` marker for each click on
which no element changes (``clicks: 5``, an absolute ``at``; :func:`markers`): it then takes
exactly its total of clicks, as Slidev's does. With ``[click]`` markers in the notes every click
gets one, carrying the notes from that click on; the markers come first in the slide, so the
speaker view (which reads the notes of the first current fragment) finds them.

A click range (``v-click="[2, 4]"``) is a fragment at its start with ``click-range`` and
``data-click-end`` (the fragment index of its end): the page's script marks it ``click-ended``
once a fragment at that index is shown, and the theme hides it again (or, hidden, shows it
again); the end click gets a marker when nothing else changes there. ``fade`` adds
``click-fade``: the theme draws the hidden state at half opacity, as Slidev's ``vclick.css`` does.

Directives written on the author's HTML tags (``<div v-click>``, ``v-click.hide``, ``v-after``) and
Slidev's click tags inside an HTML block (``<v-click at="2">``) are rewritten into those fragments.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from markupsafe import Markup

from slidegen.deck import clicks, rawhtml
from slidegen.deck.nodes import Timing

_CLASS_ATTR_RE = re.compile(r"""(\sclass\s*=\s*)(["'])(.*?)\2""", re.DOTALL)


def fragment_classes(timing: Timing) -> str:
    """The classes of a fragment with ``timing``: ``fragment`` (shown) or ``fragment fade-out`` (hidden),
    then ``click-fade`` (half opacity while hidden) and ``click-range`` (changes back at its end)."""
    classes = ["fragment fade-out" if timing.hide else "fragment"]
    if timing.fade:
        classes.append("click-fade")
    if timing.end:
        classes.append("click-range")
    return " ".join(classes)


def _index(timing: Timing) -> str:
    """`` data-fragment-index="N"`` and, for a range, `` data-click-end="M"`` (the fragment index of its end)."""
    end = f' data-click-end="{timing.end - 1}"' if timing.end else ""
    return f' data-fragment-index="{timing.at - 1}"{end}'


def fragment_attrs(timing: Timing | None) -> Markup:
    """`` class="fragment" data-fragment-index="N"`` for ``timing``; nothing for ``None``.

    A thing shown from click 0 (an absolute ``at`` of 0) is no fragment; one hidden from click 0 is hidden
    (or, with ``fade``, at half opacity).
    """
    if timing is None:
        return Markup("")
    if timing.at < 1:
        return Markup(' class="{}"').format(_hidden(timing)) if timing.hide else Markup("")
    return Markup(' class="{}"{}').format(fragment_classes(timing), Markup(_index(timing)))


def _hidden(timing: Timing) -> str:
    return "click-faded" if timing.fade else "click-hidden"


def tag_attrs(attrs: str, timing: Timing | None) -> str:
    """A tag's attributes with its click directive replaced by the fragment's class and index."""
    attrs = re.sub(r"\s*" + clicks.DIRECTIVE_RE.pattern, "", attrs)
    if timing is None or (timing.at < 1 and not timing.hide):
        return attrs
    if timing.at < 1:
        classes, index = _hidden(timing), ""
    else:
        classes, index = fragment_classes(timing), _index(timing)
    found = _CLASS_ATTR_RE.search(attrs)
    if found:
        merged = f"{found.group(1)}{found.group(2)}{found.group(3)} {classes}{found.group(2)}"
        attrs = attrs[: found.start()] + merged + attrs[found.end() :]
    else:
        attrs = f' class="{classes}"' + attrs
    return attrs + index


def reveal_tags(html: str, timings: Sequence[Timing]) -> str:
    """An HTML block with each click-carrying tag (:func:`slidegen.deck.clicks.html_units`) made a fragment.

    Slidev's ``<v-click>``/``<v-after>``/``<v-click-hide>`` tags become ``<div>``s (their closing tags
    too); the ``at`` and ``hide`` attributes they carry are dropped.
    """
    units = clicks.html_units(html)
    if not units:
        return html
    out: list[str] = []
    pos = 0
    for (start, end, _), timing in zip(units, timings, strict=False):
        tag = rawhtml.OPEN_RE.fullmatch(html, start, end)
        assert tag is not None
        name, attrs = tag.group(1), tag.group(2) or ""
        if name.lower() in clicks.COMPONENT_TAGS:
            name = "div"
            attrs = re.sub(r"""(?<![\w-])(at\s*=\s*(["']).*?\2|hide|fade)(?![\w-])""", "", attrs)
        out.append(html[pos:start])
        out.append(f"<{name}{tag_attrs(attrs, timing)}{'/' if tag.group(3) else ''}>")
        pos = end
    out.append(html[pos:])
    return re.sub(r"</(?:v-click-hide|v-click|v-after)\s*>", "</div>", "".join(out))


def markers(total: int, notes: Sequence[Markup | None] = (), used: Collection[int] = ()) -> Markup:
    """An invisible ``click-step`` fragment for each click 1..``total`` on which nothing in ``used`` changes;
    with ``notes`` (``notes[k-1]``: the notes from click ``k``), one for every click, carrying them."""
    out = []
    for k in range(1, total + 1):
        if k in used and not notes:
            continue
        aside = notes[k - 1] if k - 1 < len(notes) else None
        inner = Markup('<aside class="notes">{}</aside>').format(aside) if aside is not None else Markup("")
        out.append(Markup('<span class="fragment click-step" data-fragment-index="{}">{}</span>').format(k - 1, inner))
    return Markup("").join(out)
