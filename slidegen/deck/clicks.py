"""Slidev's click timeline: on which click each revealed thing of a slide shows (or hides).

Slidev (packages/client/composables/useClicks.ts, builtin/VClicks.ts) resolves every click
directive in the order the slide mounts them, which is document order: a relative ``at``
(``"+1"``, the default; ``"+0"`` for ``v-after``; ``"-1"``) counts from the running offset (the
sum of the relative steps so far) and moves it, an absolute one (``"3"``) stands alone. A
``<v-clicks>`` gives its items (list items down to ``depth`` levels, else its blocks, or a lone
table's rows) successive clicks, ``every`` items per click. A code block's or formula's highlight
steps take one click each after the first. The slide's total is its ``clicks:`` frontmatter, else
the last click anything happens on.

A directive's value may be a click range, ``[start, end]`` with the end exclusive, resolved as
Slidev's ``calculateRange``: a relative start counts from the offset, a relative end from the
start, and both relative parts move the offset. Its modifiers ``.hide`` and ``.fade`` (half
opacity while hidden; ``fade`` on the click components too) are kept in the timing; any other
modifier (one of Slidev's enter animations) is kept by name for ``check`` to warn about.

:func:`resolve` writes the timings into the tree (``Click.clicks``, ``CodeBlock.clicks``...) and
the total into ``Slide.clicks``; the reader calls it once as it builds each slide, and the writers take
the timings as given (a tree built by hand goes through it too). It is idempotent. :func:`units` names
what each timing of a ``<v-clicks>`` reveals, in timing order, for the writers to look up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from slidegen.deck import htmlkinds, rawhtml
from slidegen.deck import nodes as d

AT_RE = re.compile(r"[+-]?\d+")
#: A click directive on an HTML tag: ``v-click``, ``v-after``, ``v-click-hide``, its modifiers (``.hide``,
#: ``.fade``...) and its value.
DIRECTIVE_RE = re.compile(
    r"""(?<![\w:.-])(v-click-hide|v-click|v-after)((?:\.[\w-]+)*)"""
    r"""(?:\s*=\s*("[^"]*"|'[^']*'))?(?=[\s/>]|$)"""
)
#: Slidev's click components written as tags inside an HTML block.
COMPONENT_TAGS = frozenset({"v-click", "v-after", "v-click-hide"})
#: The directive modifiers slidegen draws: ``hide`` and ``fade`` (Slidev's reserved ones); any other is
#: one of Slidev's enter animations (``.up``, ``.scale``...), which ``check`` names in a warning.
MODIFIERS = frozenset({"hide", "fade"})
#: The most clicks a slide takes (a larger ``clicks:`` or ``at`` is cut to it): each click is a page with --with-clicks.
MAX_CLICKS = 500
#: ``[click]`` or ``[click:3]`` opening a paragraph of the notes.
NOTES_MARK_RE = re.compile(r"\[click(?::(\d+))?\]\s*")
_RANGE_RE = re.compile(r"\[\s*([^,\]]*?)\s*,\s*([^,\]]*?)\s*\]")


class AtError(ValueError):
    """An ``at`` value Slidev's syntax does not allow (the message says why); ``line``: where, when known."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Directive:
    """A click directive as written: ``at`` (``"+1"``, ``"3"``), a range's ``end`` (``"4"``, ``"+1"``; ``None``:
    no range), ``hide``, ``fade``, and the modifiers slidegen does not draw (``("up",)``)."""

    at: str
    hide: bool = False
    end: str | None = None
    fade: bool = False
    unknown: tuple[str, ...] = ()


@dataclass
class Timeline:
    """The running state while a slide's directives are resolved in document order."""

    offset: int = 0
    last: int = 0

    def take(self, at: str, size: int = 1) -> int:
        """The first click of a thing resolved at ``at`` spanning ``size`` clicks; moves the offset."""
        relative, value = parse_at(at)
        if relative:
            start = self.offset + value
            self.offset += value + size - 1
        else:
            start = value
        self.last = max(self.last, start + size - 1)
        return start

    def span(self, at: str, end: str) -> tuple[int, int]:
        """A click range's ``(start, end)`` as Slidev's ``calculateRange`` gives them: a relative start counts
        from the offset, a relative end from the start; both relative parts move the offset."""
        relative, value = parse_at(at)
        start = self.offset + value if relative else value
        delta = value if relative else 0
        relative, value = parse_at(end)
        stop = start + value if relative else value
        delta += value if relative else 0
        if stop <= start:
            raise AtError(
                f"the click range ends on click {stop}, not after its start {start}: "
                'the end is exclusive (v-click="[2, 4]" shows on clicks 2 and 3)'
            )
        self.offset += delta
        self.last = max(self.last, stop)
        return start, stop

    def timing(self, spec: Directive) -> d.Timing:
        """The timing of one directive (a range or a single position)."""
        if spec.end is not None:
            start, stop = self.span(spec.at, spec.end)
            if start < 1:  # changed from the start: only the end changes anything
                return d.Timing(stop, not spec.hide, 0, spec.fade)
            return d.Timing(start, spec.hide, stop, spec.fade)
        return d.Timing(self.take(spec.at), spec.hide, 0, spec.fade)


def parse_at(at: str) -> tuple[bool, int]:
    """``"+2"`` -> ``(True, 2)``, ``"3"`` -> ``(False, 3)``, ``""`` -> ``(True, 1)`` (the next click)."""
    text = at.strip() or "+1"
    if not AT_RE.fullmatch(text):
        hint = (
            ': a click range goes on a tag as a directive, <div v-click="[2, 4]">'
            if text.startswith("[")
            else ": write a number (3, absolute) or a signed one (+1, relative)"
        )
        raise AtError(f"'{at}' is not a click position{hint}")
    return text[0] in "+-", int(text)


def _unquote(text: str) -> tuple[str, bool]:
    """``'+2'`` -> ``("+2", True)`` (a JavaScript string), ``2`` -> ``("2", False)``."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1].strip(), True
    return text, False


def directive_at(name: str, value: str | None) -> tuple[str, str | None]:
    """The ``(at, range end)`` of a directive as Vue reads its value, a JavaScript expression.

    ``v-click`` is ``"+1"`` and ``v-after`` ``"+0"``; a quoted string (``v-click="'+2'"``) is relative
    when signed; a bare number is absolute (``v-click="+1"`` is the number 1, as in Slidev). An array
    is a range, its end exclusive: ``[2, 4]`` (absolute), ``['+1', '+2']`` (relative: the start from the
    running offset, the end from the start), or the string ``'[+1, +1]'`` Slidev's guide writes.
    """
    if value is None or value.strip() in ("", "true"):
        return ("+0" if name == "v-after" else "+1"), None
    text, quoted = _unquote(value)
    found = _RANGE_RE.fullmatch(text)
    if found:
        parts = []
        for part in found.groups():
            inner, inner_quoted = _unquote(part)
            if not inner:
                raise AtError(f"'{value.strip()}' is not a click range: write [2, 4] or ['+1', '+2']")
            relative, number = parse_at(inner)
            parts.append(inner if (inner_quoted or quoted) and relative else str(number))
        return parts[0], parts[1]
    if text.startswith("["):
        raise AtError(f"'{value.strip()}' is not a click range: write [2, 4] or ['+1', '+2'] (the end is exclusive)")
    if quoted:
        parse_at(text)
        return text, None
    relative, number = parse_at(text)
    return str(number), None


def tag_directive(attrs: str) -> Directive | None:
    """The click directive among a tag's attributes, ``None`` without one."""
    match = DIRECTIVE_RE.search(attrs)
    if not match:
        return None
    name, value = match.group(1), match.group(3)
    modifiers = tuple(m for m in match.group(2).split(".") if m)
    at, end = directive_at(name, value[1:-1] if value else None)
    return Directive(
        at,
        "hide" in modifiers or name == "v-click-hide",
        end,
        "fade" in modifiers,
        tuple(m for m in modifiers if m not in MODIFIERS),
    )


def component_directive(tag: str, attrs: str) -> Directive:
    """The directive of a ``<v-click at="2" hide fade>`` / ``<v-after>`` / ``<v-click-hide>`` tag."""
    found = re.search(r"""(?<![\w-])at\s*=\s*(["'])(.*?)\1""", attrs)
    at = found.group(2).strip() if found else ("+0" if tag == "v-after" else "+1")
    parse_at(at)
    hide = tag == "v-click-hide" or re.search(r"(?<![\w-])hide(?![\w-])", attrs) is not None
    return Directive(at, hide, None, re.search(r"(?<![\w-])fade(?![\w-])", attrs) is not None)


def html_units(html: str) -> list[tuple[int, int, Directive]]:
    """Every tag of ``html`` that a click reveals: ``(start, end, directive)`` of the tag in ``html``."""
    found = []
    for match in rawhtml.OPEN_RE.finditer(html):
        tag, attrs = match.group(1).lower(), match.group(2) or ""
        if tag in COMPONENT_TAGS:
            found.append((match.start(), match.end(), component_directive(tag, attrs)))
        elif (directive := tag_directive(attrs)) is not None:
            found.append((match.start(), match.end(), directive))
    return found


def revealed_whole(html: str) -> bool:
    """Whether an HTML block's one click directive is on the element that wraps all of it
    (``<div v-click>text</div>``, ``<img v-click src="a.png">``): a picture of the block can appear on
    that click. False for a block with no or several directives, one on an inner element, or a lone
    opening tag (a wrapper around Markdown, which is timed by what it wraps)."""
    units = html_units(html)
    text = html.strip()
    if len(units) != 1 or units[0][0] != len(html) - len(html.lstrip()):
        return False
    opened = rawhtml.OPEN_RE.match(text)
    if opened is None:
        return False
    tag = opened.group(1).lower()
    if opened.end() == len(text):
        return tag in rawhtml.VOID or bool(opened.group(3))
    closes = list(re.finditer(rf"</{re.escape(tag)}\s*>", text, re.IGNORECASE))
    return bool(closes) and closes[-1].end() == len(text) and _balanced(text, tag)


def parts(block: d.RawHtml) -> tuple[d.RawHtml, ...]:
    """``block`` as the HTML blocks PowerPoint draws a picture of each: its top-level elements, one
    block each, when that lets every click animate (``<div v-click>a</div>`` then ``<div v-click>b</div>``
    on the next line); else the block itself. A part keeps its own line and clicks."""
    units = html_units(block.html)
    if not units or block.refs or revealed_whole(block.html):
        return (block,)
    spans = _top_level(block.html)
    if spans is None or len(spans) < 2:
        return (block,)
    pieces = [block.html[start:end] for start, end in spans]
    if any(html_units(piece) and not revealed_whole(piece) for piece in pieces):
        return (block,)
    out, taken = [], 0
    for (start, _), piece in zip(spans, pieces, strict=True):
        count = len(html_units(piece))
        timing = block.clicks[taken : taken + count]
        taken += count
        at = block.line + block.html.count("\n", 0, start)
        out.append(htmlkinds.html_block(replace(block, html=piece, line=at, clicks=timing)))  # typed by its own HTML
    return tuple(out)


_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^<>]*?(/?)>")


def _top_level(html: str) -> list[tuple[int, int]] | None:
    """``(start, end)`` of each top-level element of ``html``; None when text, a comment or an unclosed tag
    stands between them."""
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    start = at = 0
    for m in _TAG_RE.finditer(html):
        if not stack and html[at : m.start()].strip():
            return None  # text outside any element
        closing, name, selfclosing = m.group(1), m.group(2).lower(), m.group(3)
        if not stack:
            start = m.start()
        if closing:
            if not stack or stack.pop() != name:
                return None
        elif not (selfclosing or name in rawhtml.VOID):
            stack.append(name)
        if not stack:
            spans.append((start, m.end()))
        at = m.end()
    if stack or html[at:].strip():
        return None
    return spans


def _balanced(html: str, tag: str) -> bool:
    """Whether the first ``<tag>`` of ``html`` is closed only by its last ``</tag>`` (it wraps the rest)."""
    depth = 0
    pattern = re.compile(rf"<(/?){re.escape(tag)}\b[^>]*?(/?)>", re.IGNORECASE)
    matches = list(pattern.finditer(html))
    for k, m in enumerate(matches):
        if m.group(2):
            continue
        depth += -1 if m.group(1) else 1
        if depth == 0 and k != len(matches) - 1:
            return False
    return depth == 0


# ---------------------------------------------------------------------- resolving


def resolve(slide: d.Slide) -> d.Slide:
    """``slide`` with every click timing filled in and ``clicks`` its total."""
    line = Timeline()
    blocks = _blocks(slide.blocks, line)
    slots = {name: _blocks(group, line) for name, group in slide.slots.items()}
    override = slide.frontmatter.get("clicks")
    total = (
        override
        if isinstance(override, int) and not isinstance(override, bool) and override >= 0
        else max(line.last, 0)
    )
    return replace(slide, blocks=blocks, slots=slots, clicks=min(total, MAX_CLICKS))


def _blocks(blocks: tuple[d.Block, ...], line: Timeline) -> tuple[d.Block, ...]:
    out = []
    for block in blocks:
        try:
            out.append(_block(block, line))
        except AtError as exc:
            raise AtError(str(exc), exc.line or getattr(block, "line", 0)) from None
    return tuple(out)


def _block(block: d.Block, line: Timeline) -> d.Block:
    match block:
        case d.Click() if block.each:
            return _each(block, line)
        case d.Click():
            timing = d.Timing(line.take(block.at), block.hide, 0, block.fade)
            return replace(block, clicks=(timing,), blocks=_blocks(block.blocks, line))
        case d.CodeBlock() | d.MathBlock() if len(block.steps) > 1:
            start = line.take(block.at, len(block.steps) - 1)
            return replace(block, clicks=tuple(range(start, start + len(block.steps) - 1)))
        case d.BulletList() | d.OrderedList():
            return replace(block, items=tuple(replace(i, blocks=_blocks(i.blocks, line)) for i in block.items))
        case d.Quote():
            return replace(block, blocks=_blocks(block.blocks, line))
        case d.Heading() | d.Paragraph():
            return replace(block, children=_inlines(block.children, line))
        case d.Table():
            return replace(
                block,
                header=tuple(_inlines(c, line) for c in block.header),
                rows=tuple(tuple(_inlines(c, line) for c in row) for row in block.rows),
            )
        case d.RawHtml():
            units = html_units(block.html)
            return replace(block, clicks=tuple(line.timing(spec) for _, _, spec in units))
        case _:
            return block


def _inlines(nodes: tuple[d.Inline, ...], line: Timeline) -> tuple[d.Inline, ...]:
    out: list[d.Inline] = []
    for node in nodes:
        if isinstance(node, d.HtmlSpan):
            directive = tag_directive(node.attrs)
            timing = (line.timing(directive),) if directive else ()
            node = replace(node, clicks=timing, children=_inlines(node.children, line))
        elif isinstance(node, (d.Emph, d.Strong, d.Strike, d.Link)):
            node = replace(node, children=_inlines(node.children, line))
        out.append(node)
    return tuple(out)


def used(slide: d.Slide) -> set[int]:
    """The clicks on which something of a resolved slide starts to show or hide (a click range's end, where
    it changes back, is left out: the HTML gives that click a marker of its own)."""
    found: set[int] = set()
    for block in d.walk_blocks(d.slide_blocks(slide)):
        if isinstance(block, (d.Click, d.RawHtml)):
            found.update(t.at for t in block.clicks)
        elif isinstance(block, (d.CodeBlock, d.MathBlock)):
            found.update(block.clicks)
        found.update(
            t.at for n in d.walk_inlines(d.block_inlines(block)) if isinstance(n, d.HtmlSpan) for t in n.clicks
        )
    return found


def units(click: d.Click) -> list[object]:
    """What each timing of a ``<v-clicks>`` reveals, in order: list items (down to ``depth`` levels,
    parents before their children), a lone table's rows (as ``(table, row index)``), else its blocks."""
    if len(click.blocks) == 1 and isinstance(click.blocks[0], (d.BulletList, d.OrderedList)):
        found: list[object] = []
        _list_units(click.blocks[0], click.depth, 1, found)
        return found
    if len(click.blocks) == 1 and isinstance(click.blocks[0], d.Table):
        table = click.blocks[0]
        return [(table, i) for i in range(len(table.rows))]
    return list(click.blocks)


def _list_units(block: d.BulletList | d.OrderedList, depth: int, level: int, found: list[object]) -> None:
    for item in block.items:
        found.append(item)
        if level < depth:
            for inner in item.blocks:
                if isinstance(inner, (d.BulletList, d.OrderedList)):
                    _list_units(inner, depth, level + 1, found)


def _each(click: d.Click, line: Timeline) -> d.Click:
    """A ``<v-clicks>``: its units' timings as VClicks.ts gives them, then the timings inside its blocks."""
    relative, first = parse_at(click.at)
    every = max(click.every, 1)
    timings = []
    done = 0
    for number in range(1, len(units(click)) + 1):
        show = first + -(-number // every) - 1  # ceil(number / every)
        if relative:
            timings.append(d.Timing(line.take(f"{show - done:+d}"), click.hide, 0, click.fade))
            done = show
        else:
            timings.append(d.Timing(line.take(str(show)), click.hide, 0, click.fade))
    return replace(click, clicks=tuple(timings), blocks=_blocks(click.blocks, line))


def timing_map(blocks: tuple[d.Block, ...]) -> dict[object, d.Timing]:
    """Each ``<v-clicks>`` unit of ``blocks`` (by :func:`unit_key`) to its timing, for writers walking the tree."""
    found: dict[object, d.Timing] = {}
    for block in d.walk_blocks(blocks):
        if isinstance(block, d.Click) and block.each:
            for unit, timing in zip(units(block), block.clicks, strict=False):
                found[unit_key(unit)] = timing
    return found


def unit_key(unit: object) -> object:
    """The :func:`timing_map` key of a unit: a node's ``id``, or ``(id(table), row)`` for a table row."""
    if isinstance(unit, tuple):
        return (id(unit[0]), unit[1])
    return id(unit)


# ---------------------------------------------------------------------- notes


def notes_segments(blocks: tuple[d.Block, ...]) -> list[tuple[int, tuple[d.Block, ...]]]:
    """The notes split at paragraphs opening with ``[click]`` (or ``[click:N]``): ``(click, blocks)`` each,
    the marker removed. The first segment (click 0) holds what comes before any marker."""
    segments: list[tuple[int, list[d.Block]]] = [(0, [])]
    for block in blocks:
        marked = _marker(block)
        if marked is None:
            segments[-1][1].append(block)
            continue
        number, rest = marked
        at = number if number is not None else segments[-1][0] + 1
        segments.append((at, [rest] if rest.children else []))
    return [(at, tuple(group)) for at, group in segments if group or at == 0]


def _marker(block: d.Block) -> tuple[int | None, d.Paragraph] | None:
    if not isinstance(block, d.Paragraph) or not block.children or not isinstance(block.children[0], d.Text):
        return None
    first = block.children[0]
    match = NOTES_MARK_RE.match(first.text)
    if not match:
        return None
    text = first.text[match.end() :]
    rest = ((replace(first, text=text),) if text else ()) + block.children[1:]
    while rest and isinstance(rest[0], (d.SoftBreak, d.LineBreak)):
        rest = rest[1:]
    return (int(match.group(1)) if match.group(1) else None), replace(block, children=rest)


def has_markers(blocks: tuple[d.Block, ...]) -> bool:
    """Whether the notes hold a ``[click]`` marker."""
    return any(_marker(block) is not None for block in blocks)
