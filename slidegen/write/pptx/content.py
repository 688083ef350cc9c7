"""Deck blocks and inlines -> model paragraphs and items, before anything has a position.

:func:`flatten` turns a slot's blocks into a list of items: runs of text paragraphs
(:class:`Flow`) and the things that need a shape of their own (code, tables, equations,
figures). :mod:`slidegen.write.pptx.layout` measures and places them.

Every dispatch on a node kind is an exhaustive ``match``: a node kind this module does not
know fails loudly (:func:`typing.assert_never`) instead of vanishing from the slide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, assert_never

from pptx.util import Inches, Pt

from slidegen import theme
from slidegen.deck import builtins as slidev_builtins
from slidegen.deck import clicks, figbox, links, rawhtml, rawimages
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.media import components as comp
from slidegen.media import mermaid
from slidegen.write import htmlpictures
from slidegen.write.highlight import tokens
from slidegen.write.pptx import texmath
from slidegen.write.pptx.cache import MathCache
from slidegen.write.pptx.model import Para, Run

#: A figure drawn for its box (``fig:NAME@WxH``) is placed no larger than drawn: one pixel of its 200-dpi PNG.
DRAWN_EMU_PER_PX = int(Inches(1)) // 200

#: Bullet characters by list depth.
BULLETS = ("•", "–", "◦")


@dataclass(frozen=True)
class Sizes:
    """Font sizes for one attempt at fitting a slide."""

    body: float
    code: float
    table: float
    math: float

    @classmethod
    def at(cls, scale: float, body_scale: float = 1.0) -> Sizes:
        """Theme sizes times ``scale`` (code alone grows past 1), never below the floors: main text, tables and
        code at :data:`theme.MIN_MAIN_PT` (18 pt as shown), code never under its theme size."""
        shrink = min(scale, 1.0)
        floor = float(theme.MIN_MAIN_PT)
        return cls(
            body=max(floor, round(theme.BODY_PT * body_scale * shrink)),
            code=max(float(theme.CODE_PT), round(theme.CODE_PT * scale)),
            table=max(floor, round(theme.TABLE_PT * shrink)),
            math=max(20.0, round(32 * shrink)),
        )


@dataclass
class Context:
    """What converting one slot needs: the deck (links), sizes, colours, and a warning sink."""

    deck: d.Deck
    sizes: Sizes
    color: str = theme.TEXT
    link_color: str = theme.ACCENT
    align: str = "left"
    warn: Callable[[int, str], None] = lambda line, message: None
    math: MathCache = field(default_factory=MathCache)
    """Where display math's OMML and fallback pictures come from."""
    pictures: frozenset[str] = frozenset()
    """The media keys that have a picture (an HTML block's, drawn through Chromium, is one when present)."""
    animate: bool = False
    """Clicks become animations (:mod:`slidegen.write.pptx.anim`); ``False``: every slide in its final state."""
    where: str | None = None
    """The file the slide is written in, as errors name it (an imported slide's own; ``None``: the deck's)."""
    index: d.DeckIndex | None = None
    """The build's decks: a link to another deck's slide by id opens at that slide's number."""


@dataclass
class Flow:
    """Consecutive text paragraphs: one text box."""

    paras: list[Para] = field(default_factory=list)


@dataclass
class CodeItem:
    """A code block: one paragraph per line, coloured runs."""

    paras: list[Para]
    width_chars: int
    steps: tuple[tuple[int, ...], ...] = ()
    """Highlight steps kept for animation (empty: the final state, no highlight)."""
    clicks: tuple[int, ...] = ()
    """The click each step after the first shows on."""
    appear: int = 0
    vanish: int = 0


@dataclass
class TableItem:
    header: list[Para]
    rows: list[list[Para]]
    appear: int = 0
    vanish: int = 0


@dataclass
class MathItem:
    tex: str
    omml: str
    png: bytes
    size: float
    """Point size the PNG was drawn at."""
    appear: int = 0
    vanish: int = 0
    steps: tuple[tuple[int, ...], ...] = ()
    """Line steps kept for animation (empty: the whole formula)."""
    clicks: tuple[int, ...] = ()


@dataclass
class FigureItem:
    src: str
    alt: str
    caption: Para | None
    line: int
    emu_per_px: int = 0
    """The largest size of one picture pixel (0: the picture fills its room): a component or diagram
    keeps the size it has on the HTML slide, never larger."""
    appear: int = 0
    vanish: int = 0


#: One pixel of a component's or diagram's picture, at the size it has on the HTML slide.
PICTURE_EMU_PER_PX = int(Inches(theme.WIDTH_IN)) // (theme.WIDTH_PX * comp.PICTURE_SCALE)


Item = Flow | CodeItem | TableItem | MathItem | FigureItem


# --------------------------------------------------------------------------- inlines


def runs(nodes: tuple[d.Inline, ...], ctx: Context, line: int, **style: Any) -> list[Run]:
    """The runs for ``nodes``, neighbours with one look merged."""
    merged: list[Run] = []
    for run in _runs(nodes, ctx, line, **style):
        if merged and _look(merged[-1]) == _look(run):
            merged[-1] = replace(run, text=merged[-1].text + run.text)
        else:
            merged.append(run)
    return merged


def _look(run: Run) -> tuple[object, ...]:
    """Every field of ``run`` but its text."""
    return (
        run.bold,
        run.italic,
        run.strike,
        run.underline,
        run.font,
        run.color,
        run.url,
        run.slide,
        run.field,
        run.baseline,
        run.appear,
        run.vanish,
        run.fade,
    )


def _runs(nodes: tuple[d.Inline, ...], ctx: Context, line: int, **style: Any) -> list[Run]:  # noqa: C901 (per node type)
    """The runs for ``nodes``; ``style`` holds :class:`Run` fields set by enclosing markup."""
    out: list[Run] = []
    for node in nodes:
        match node:
            case d.Text():
                out.append(Run(node.text, **style))
            case d.Code():
                out.append(Run(node.text, **{**style, "font": theme.MONO}))
            case d.Emph():
                out += _runs(node.children, ctx, line, **{**style, "italic": True})
            case d.Strong():
                out += _runs(node.children, ctx, line, **{**style, "bold": True})
            case d.Strike():
                out += _runs(node.children, ctx, line, **{**style, "strike": True})
            case d.Link():
                target = link_target(node.url, ctx, line)
                look = {"color": ctx.link_color, "underline": True, **target}
                out += _runs(node.children, ctx, line, **{**style, **look})
            case d.Math():
                bold = style.get("bold", False)
                out += [
                    Run(
                        piece.text,
                        **{**style, "italic": piece.italic, "bold": bold or piece.bold, "baseline": piece.baseline},
                    )
                    for piece in texmath.tex_to_runs(node.tex)
                ]
            case d.SoftBreak():
                out.append(Run(" ", **style))
            case d.LineBreak():
                out.append(Run("\n", **style))
            case d.Ref():
                text = node.text if node.text is not None else f"{{{{ {node.key} }}}}"
                out.append(Run(text, **style))  # a number reads as the text around it
            case d.Cite():
                out.append(Run(node.text if node.text is not None else d.cite_source(node), **style))
            case d.Image():
                ctx.warn(
                    line,
                    f"image '{node.src}' inside text is shown as its alt text; "
                    "put it in a paragraph of its own to show the picture",
                )
                out.append(Run(f"[{node.alt}]", **style))
            case d.Component():
                pass  # a component: its paragraph shows it as a picture (see _blocks)
            case d.HtmlSpan():
                timed = _span_timing(node, ctx, style)
                out += _runs(node.children, ctx, line, **{**style, **_html_look(node, ctx, line), **timed})
            case d.RawInline():
                ctx.warn(line, f"inline HTML {node.html[:40]} is left out of PowerPoint, which cannot draw it")
            case d.FootnoteRef():
                out.append(Run(str(node.number), **{**style, "baseline": 30000}))
            case _:
                assert_never(node)
    return out


def _span_timing(node: d.HtmlSpan, ctx: Context, style: Mapping[str, Any]) -> dict[str, Any]:
    """The ``appear``/``vanish``/``fade`` run fields of an inline ``<span v-click>`` (with ``ctx.animate``)."""
    if not (ctx.animate and node.clicks and node.clicks[0].at > 0):
        return {}
    timing = node.clicks[0]
    appear, vanish = _combine(style.get("appear", 0), style.get("vanish", 0), timing)
    return {"appear": appear, "vanish": vanish, "fade": style.get("fade", False) or timing.fade}


def _html_look(node: d.HtmlSpan, ctx: Context, line: int) -> dict[str, Any]:
    """Run fields for an inline HTML element: ``<b> <i> <u> <s> <sub> <sup> <kbd>``, a ``style`` colour."""
    look = rawhtml.PPTX_TAGS.get(node.tag)
    if look is None:
        ctx.warn(line, f"inline HTML <{node.tag}> is drawn as plain text in PowerPoint")
        look = {}
    fields = {key: (theme.MONO if value == "mono" else value) for key, value in look.items()}
    color = rawhtml.css_color(node.attrs)
    if color:
        fields["color"] = color
    return fields


def link_target(url: str, ctx: Context, line: int) -> dict[str, Any]:
    """Run fields for a link: ``slide`` for ``#id``, ``url`` otherwise (``x.md`` -> ``x.pptx``)."""
    to = links.target(url)
    if to.this_deck:
        slide = ctx.deck.slide_by_id(to.fragment)
        if slide is None:
            ctx.warn(line, f"link to '{url}': no slide of this deck has id '{to.fragment}'")
            return {}
        return {"slide": slide.index}
    if to.external:
        return {"url": url}
    if not to.other_deck:
        return {"url": to.path}
    number = ctx.index.slide_number(to.path, to.fragment) if ctx.index is not None and to.fragment else None
    return {"url": to.with_suffix(".pptx"), **({"jump": number} if number is not None else {})}


# --------------------------------------------------------------------------- blocks


def flatten(blocks: tuple[d.Block, ...], ctx: Context) -> list[Item]:
    """The items for a slot's blocks, in reading order."""
    items: list[Item] = []
    units = clicks.timing_map(blocks) if ctx.animate else {}
    _blocks(blocks, ctx, items, depth=0, marker=None, units=units)
    for item in items:
        if isinstance(item, Flow) and item.paras:
            item.paras[0] = replace(item.paras[0], space_before=Pt(0))
    return items


def _add_para(items: list[Item], para: Para) -> None:
    """Append ``para`` to the last text box, or to a new one when the last item is not text."""
    last = items[-1] if items else None
    if not isinstance(last, Flow):
        last = Flow()
        items.append(last)
    last.paras.append(para)


def _blocks(  # noqa: C901 (one branch per block node type)
    blocks: tuple[d.Block, ...],
    ctx: Context,
    items: list[Item],
    depth: int,
    marker: tuple[str, int] | None,
    italic: bool = False,
    units: Mapping[object, d.Timing] | None = None,
) -> None:
    """Append items for ``blocks``; ``marker`` (kind, number) goes on the first paragraph.

    With ``ctx.animate``, what a click reveals gets its click (``appear``/``vanish``): a ``<v-click>``'s
    content, and each ``<v-clicks>`` unit by ``units`` (:func:`slidegen.deck.clicks.timing_map`).
    """
    units = units or {}
    wrappers: list[d.Timing | None] = []  # the clicks of the HTML wrapper tags open around this block
    for block in blocks:
        first = marker
        marker = None
        before = _mark(items)
        timing = units.get(id(block))
        if isinstance(block, d.RawHtml) and ctx.animate:
            _wrap(block, wrappers)
        match block:
            case d.Paragraph() if shown := comp.block_instances(block, 0):
                if any(not _blank(n) and not _component(n) for n in block.children):
                    _add_para(items, _text_para(block, ctx, depth, first, italic))
                items += [_component_item(inst) for inst in shown]
            case d.Paragraph() if images := _images_alone(block):
                for img in images:
                    items.append(FigureItem(img.src, img.alt, _caption(img.title, ctx), block.line))
            case d.Paragraph() if raw_images := rawimages.alone(block):
                items += [FigureItem(src, alt, None, block.line) for src, alt in raw_images]
            case d.Heading() | d.Paragraph():
                _add_para(items, _text_para(block, ctx, depth, first, italic))
            case d.BulletList():
                for item in block.items:
                    mark = _mark(items)
                    _blocks(item.blocks, ctx, items, depth + 1, ("bullet", 1), italic, units)
                    _stamp(items, mark, units.get(id(item)))
            case d.OrderedList():
                for i, item in enumerate(block.items):
                    mark = _mark(items)
                    _blocks(item.blocks, ctx, items, depth + 1, ("number", block.start + i), italic, units)
                    _stamp(items, mark, units.get(id(item)))
            case d.Diagram():
                items.append(
                    FigureItem(block.picture_key, mermaid.alt_text(block.code), None, block.line, PICTURE_EMU_PER_PX)
                )
            case d.CodeBlock():
                numbered = block.line_numbers if block.line_numbers is not None else ctx.deck.settings.line_numbers
                code = code_item(block, ctx.sizes.code, block.start_line if numbered else 0)
                if ctx.animate and len(block.steps) > 1 and block.clicks:
                    code.steps, code.clicks = block.steps, block.clicks
                items.append(code)
            case d.MathBlock():
                formula = math_item(block, ctx)
                if ctx.animate and len(block.steps) > 1 and block.clicks:
                    formula.steps, formula.clicks = block.steps, block.clicks
                items.append(formula)
            case d.Table():
                items.append(table_item(block, ctx))
            case d.Figure():
                items.append(
                    FigureItem(
                        block.src,
                        block.alt,
                        _caption(block.title, ctx),
                        block.line,
                        DRAWN_EMU_PER_PX if figbox.split(block.src)[1] else 0,
                    )
                )
            case d.Quote():
                _blocks(block.blocks, ctx, items, depth + 1 if depth else depth, None, italic=True, units=units)
            case d.Click():
                _blocks(block.blocks, ctx, items, depth, first, italic, units)
                if ctx.animate and not block.each and block.clicks:
                    timing = block.clicks[0]
                elif ctx.animate and len(block.blocks) == 1 and isinstance(block.blocks[0], d.Table):
                    timing = units.get(clicks.unit_key((block.blocks[0], 0)))  # a table shows whole, on its first row
            case d.Rule():
                pass  # a thematic break inside a slide: nothing to show
            case d.RawHtml():
                for part in clicks.parts(block):  # each <div v-click>...</div> of a block its own picture
                    mark = _mark(items)
                    _raw_html(part, ctx, items)
                    if ctx.animate and part.clicks and clicks.revealed_whole(part.html):
                        _stamp(items, mark, part.clicks[0])  # the picture appears on the element's click
            case _:
                assert_never(block)
        _stamp(items, before, timing)
        for wrapper in wrappers:
            _stamp(items, before, wrapper)


def _wrap(block: d.RawHtml, wrappers: list[d.Timing | None]) -> None:
    """Track the HTML wrapper tags around Markdown (``<div v-click="[2, 4]">`` ... ``</div>``): an opening
    tag alone pushes its click (``None`` without one), a closing tag alone pops it."""
    html = block.html.strip()
    if rawhtml.closing(html):
        if wrappers:
            wrappers.pop()
    elif (tag := rawhtml.opening(html)) is not None and not tag[2]:
        wrappers.append(block.clicks[0] if block.clicks else None)


def _mark(items: list[Item]) -> tuple[int, int]:
    """Where the next block's output starts: the item count, and the paragraphs in the last text box."""
    last = items[-1] if items else None
    return len(items), len(last.paras) if isinstance(last, Flow) else 0


def _stamp(items: list[Item], mark: tuple[int, int], timing: d.Timing | None) -> None:
    """Give what was added since ``mark`` the click ``timing`` (combined with any it has: the later
    appearance, the earlier disappearance)."""
    if timing is None or timing.at < 1:
        return
    count, paras = mark
    start = count - 1 if paras and count else count
    for k in range(start, len(items)):
        item = items[k]
        if isinstance(item, Flow):
            first = paras if k == count - 1 else 0
            item.paras[first:] = [_timed(p, timing) for p in item.paras[first:]]
        else:
            item.appear, item.vanish = _combine(item.appear, item.vanish, timing)


def _combine(appear: int, vanish: int, timing: d.Timing) -> tuple[int, int]:
    """``(appear, vanish)`` with ``timing`` added. A click range ``[a, e)`` shows on ``a`` and vanishes on
    ``e``; a hidden range vanishes on ``a`` and appears again on ``e`` (an appearance after the
    disappearance: the thing is on the slide from the start)."""
    shown, hidden = (timing.end, timing.at) if timing.hide else (timing.at, timing.end)
    if timing.hide and not timing.end:
        shown, hidden = 0, timing.at
    if shown:
        appear = max(appear, shown)
    if hidden:
        vanish = min(vanish, hidden) if vanish else hidden
    return appear, vanish


def _timed(para: Para, timing: d.Timing) -> Para:
    appear, vanish = _combine(para.appear, para.vanish, timing)
    return replace(para, appear=appear, vanish=vanish, fade=para.fade or timing.fade)


def _component(node: d.Inline) -> bool:
    return isinstance(node, d.Component)


def _component_item(inst: comp.Instance) -> FigureItem:
    """A component's static picture (drawn at build time, :mod:`slidegen.write.snapshot`), with its alt text."""
    return FigureItem(inst.key, inst.attr("alt") or f"<{inst.tag}>", None, inst.line, PICTURE_EMU_PER_PX)


def _raw_html(block: d.RawHtml, ctx: Context, items: list[Item]) -> None:
    """An HTML block, as the reader typed it (:mod:`slidegen.deck.htmlkinds`): a component block shows a picture
    of each of its elements and nothing else; an HTML region a picture of it (drawn through Chromium,
    :mod:`slidegen.write.htmlpictures`) when the build has one, else it is left out with a warning.

    Of a plain block, ``<img>`` tags alone are figures; a ``<style>`` (it styles the HTML page only), a lone
    wrapper tag (``<div class="x">`` ... ``</div>`` around Markdown, which is drawn) and Slidev's built-ins are
    left out without a warning; anything else with one.
    """
    html = block.html
    match block:
        case d.ComponentBlock():
            items += [_component_item(inst) for inst in comp.block_instances(block, 0)]
            return
        case d.HtmlRegion() if block.picture_key in ctx.pictures:
            items.append(
                FigureItem(block.picture_key, htmlpictures.alt_text(block), None, block.line, PICTURE_EMU_PER_PX)
            )
            for url, offset in htmlpictures.iframes(html):
                if htmlpictures.remote(url):
                    ctx.warn(
                        block.line + offset,
                        f"<iframe> shows the web page {url}, which needs the network; PowerPoint shows its address",
                    )
            return
        case d.HtmlRegion():
            pass
        case _ if pictures := rawimages.only_images(html):
            items += [FigureItem(src, alt, None, block.line) for src, alt in pictures]  # <img> tags: figures
            return
        case _ if (
            rawhtml.is_style(html) or rawhtml.closing(html) or (rawhtml.opening(html) or ("", "", True))[2] is False
        ):
            return
        case _ if slidev_builtins.only_builtins(html):  # Slidev's <Tweet>, <Toc>...: nothing to draw (check warns)
            return
    first = html.split("\n", 1)[0]
    first = first if len(first) <= 40 else first[:40] + "..."
    ctx.warn(
        block.line,
        f"HTML block '{first}' is left out of PowerPoint, which cannot draw it natively (the HTML output shows it)",
    )


def _images_alone(block: d.Paragraph) -> list[d.Image]:
    """The images of a paragraph that holds nothing else but blanks (shown as figures); ``[]`` otherwise."""
    shown = [n for n in block.children if not _blank(n)]
    images = [n for n in shown if isinstance(n, d.Image)]
    return images if shown and len(images) == len(shown) else []


def _text_para(
    block: d.Heading | d.Paragraph, ctx: Context, depth: int, marker: tuple[str, int] | None, italic: bool
) -> Para:
    """A heading or paragraph as one model paragraph; ``marker`` (kind, number) makes it a list item."""
    heading = isinstance(block, d.Heading)
    level = block.level if isinstance(block, d.Heading) else 0
    size = ctx.sizes.body * (1.2 if heading and level <= 2 else 1.1 if heading else 1.0)
    bullet: str | None
    if marker is not None:
        bullet, number = marker
    else:
        bullet, number = ("indent" if depth else None), 1
    return Para(
        tuple(runs(block.children, ctx, block.line)),
        Pt(size),
        color=ctx.color,
        bold=heading,
        italic=italic,
        align=ctx.align if not depth else "left",
        level=max(depth - 1, 0),
        bullet=bullet,
        start=number,
        space_before=Pt(size * (0.25 if depth else 0.6 if heading else 0.45)),
    )


def _blank(node: d.Inline) -> bool:
    return isinstance(node, (d.SoftBreak, d.LineBreak)) or (isinstance(node, d.Text) and not node.text.strip())


def _caption(title: str, ctx: Context) -> Para | None:
    if not title:
        return None
    color = theme.MUTED if ctx.color == theme.TEXT else ctx.color
    return Para((Run(title),), Pt(max(12.0, ctx.sizes.body - 4)), color=color, align="center")


def code_item(block: d.CodeBlock, size: float, first_number: int = 0) -> CodeItem:
    """Pygments-coloured lines in the theme's monospace font; highlight steps show the final state.

    ``first_number`` > 0 numbers the lines from it (``lineNumbers``, ``{lines:true,startLine:N}``), in the muted colour.
    """
    lines = _highlight(block.code, block.lang)
    if first_number > 0:
        width = len(str(first_number + len(lines) - 1))
        lines = tuple((Run(f"{first_number + i:>{width}}  ", color=theme.MUTED), *line) for i, line in enumerate(lines))
    paras = [Para(line, Pt(size), font=theme.MONO) for line in lines]
    width = max(len(p.text.expandtabs(4)) for p in paras)
    return CodeItem(paras, width)


@lru_cache(maxsize=256)
def _highlight(code: str, lang: str) -> tuple[tuple[Run, ...], ...]:
    """The runs of each line of ``code``, coloured by Pygments (cached: layout tries several sizes)."""
    style = _code_style()
    lines: list[list[Run]] = [[]]
    for token, value in tokens(code.rstrip("\n"), lang):
        look = style.style_for_token(_styled(token, style))
        color = f"#{look['color']}" if look["color"] else None
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if piece:
                lines[-1].append(Run(piece, bold=bool(look["bold"]), italic=bool(look["italic"]), color=color))
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return tuple(tuple(line) or (Run(""),) for line in lines)


def _styled(token: Any, style: Any) -> Any:
    """``token`` or its nearest parent the style knows: lexers make token types of their own
    (``Token.Literal.Scalar.Plain``), which a style has no entry for."""
    while not style.styles_token(token) and token.parent is not None:
        token = token.parent
    return token


@lru_cache(maxsize=1)
def _code_style() -> Any:
    from pygments.styles import get_style_by_name

    return get_style_by_name(theme.CODE_STYLE)


#: The error for display math the converter cannot take (``slidegen check`` reports the same).
MATH_ADVICE = "cannot convert this LaTeX to an equation: {}; simplify it or split it into one $$...$$ block per line"


def math_item(block: d.MathBlock, ctx: Context) -> MathItem:
    """Convert display math now, so bad LaTeX is an input error with its line."""
    tex = block.tex.strip()
    try:
        xml = ctx.math.omml(tex)
    except ValueError as exc:
        raise SlidegenError(ctx.where or ctx.deck.path, block.line, 1, MATH_ADVICE.format(exc)) from None
    size = 32.0
    return MathItem(tex, xml, ctx.math.png(tex, size, ctx.color), size)


def table_item(block: d.Table, ctx: Context) -> TableItem:
    size = Pt(ctx.sizes.table)
    aligns = list(block.aligns) + [""] * len(block.header)

    def cell(nodes: tuple[d.Inline, ...], col: int, header: bool) -> Para:
        return Para(
            tuple(runs(nodes, replace(ctx, color=theme.TEXT, link_color=theme.ACCENT), block.line)),
            size,
            color=theme.TEXT,
            bold=header,
            align=aligns[col] or "left",
        )

    header = [cell(c, i, True) for i, c in enumerate(block.header)]
    rows = [[cell(c, i, False) for i, c in enumerate(row)] for row in block.rows]
    return TableItem(header, rows)


# --------------------------------------------------------------------------- notes


#: The cue that opens the first notes paragraph of click ``N`` (Slidev's ``[click]`` / ``[click:N]`` marker).
NOTES_CUE = "(click {}) "


def notes_lines(blocks: tuple[d.Block, ...]) -> list[str]:
    """Speaker notes as plain text, one string per paragraph.

    PowerPoint's notes cannot change per click, so the paragraphs after a ``[click]`` marker
    (:func:`slidegen.deck.clicks.notes_segments`) open with :data:`NOTES_CUE` naming their click instead.
    """
    lines: list[str] = []
    for at, group in clicks.notes_segments(blocks):
        part = _plain_notes(group)
        if at:
            cue = NOTES_CUE.format(at)
            part = [cue + part[0], *part[1:]] if part else [cue.rstrip()]
        lines += part
    return lines


def _plain_notes(blocks: tuple[d.Block, ...], indent: str = "") -> list[str]:
    lines: list[str] = []
    for block in blocks:
        match block:
            case d.Heading() | d.Paragraph():
                lines.append(indent + d.plain_text(block.children))
            case d.BulletList() | d.OrderedList():
                for i, item in enumerate(block.items):
                    mark = f"{block.start + i}. " if isinstance(block, d.OrderedList) else "• "
                    sub = _plain_notes(item.blocks, indent + "   ")
                    if sub:
                        sub[0] = indent + mark + sub[0].lstrip()
                    lines += sub
            case d.CodeBlock():
                lines += [indent + line for line in block.code.rstrip("\n").split("\n")]
            case d.MathBlock():
                lines.append(indent + block.tex.strip())
            case d.Table():
                for row in (block.header, *block.rows):
                    lines.append(indent + " | ".join(d.plain_text(c) for c in row))
            case d.Figure():
                lines.append(f"{indent}[image: {block.alt}]")
            case d.Quote() | d.Click():
                lines += _plain_notes(block.blocks, indent)
            case d.Rule() | d.RawHtml():
                pass
            case _:
                assert_never(block)
    return lines
