"""Binding: resolve every ``{{ key | filter }}`` of a deck against results.md.

:func:`bind_deck` returns a new deck in which every :class:`~slidegen.deck.Ref` has its
``text`` and ``info`` filled, and references written inside math, captions, frontmatter
titles and notes (kept as raw text by the parser) are substituted. Problems come back as
:class:`~slidegen.errors.Diagnostic` objects at the reference's ``line:col``.

Formats (``digits`` is the row's significant digits; the integer part is never rounded)::

    {{ k }}             2.303           the value with its recorded digits
    {{ k | pm }}        2.276 ± 0.002   mean ± sd, the sd at the mean's decimals
    {{ k | pct }}       37.1%           value × 100 with its digits
    {{ k | sci }}       6.02 × 10²³     mantissa with its digits, Unicode superscripts
    {{ k | int }}       5,376           rounded, thousands separators
    {{ k | fmt(".3g") }}  2.3           any Python format spec
    {{ "2,000" }}       2,000           a literal: a number typed by hand on purpose

Inside math the same filters write TeX: ``2.276 \\pm 0.002``, ``37.1\\%``,
``6.02 \\times 10^{23}``, ``5{,}376``. ``\\{{`` keeps the braces: in titles and captions
it prints ``{{``; in math it is TeX's own ``\\{`` and is left alone.
"""

from __future__ import annotations

import decimal
import difflib
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from slidegen.deck import (
    Block,
    BulletList,
    Click,
    Deck,
    Emph,
    Figure,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    Math,
    MathBlock,
    OrderedList,
    Paragraph,
    Quote,
    Ref,
    Slide,
    SoftBreak,
    Strike,
    Strong,
    Table,
    block_inlines,
    plain_text,
    walk_blocks,
)
from slidegen.errors import Diagnostic, display_path
from slidegen.mdplugins.refs import parse_ref
from slidegen.results import Result, Results, format_number

#: Filters a reference may apply, as shown in error messages.
FILTERS: tuple[str, ...] = ("pm", "pct", "sci", "int", 'fmt(".3g")')

_FILTER_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:\((.*)\))?", re.DOTALL)
_REF_RE = re.compile(r"(\\?)\{\{(.*?)\}\}")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")

N = TypeVar("N")


class FilterError(ValueError):
    """A filter that does not exist, or does not apply to this result."""


def is_literal(key: str) -> bool:
    """True for a quoted literal, ``{{ "2,000" }}``: text typed by hand on purpose."""
    return len(key) >= 2 and key[0] == key[-1] == '"'


# ---------------------------------------------------------------------- formatting


_DECIMAL = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP)


def _exact(x: float) -> decimal.Decimal:
    """``x`` as the decimal it was written as (shortest round-trip), so 0.371 × 100 is 37.1."""
    return decimal.Decimal(repr(float(x)))


def decimals(x: float | decimal.Decimal, digits: int) -> int:
    """Decimal places that show ``digits`` significant digits, never fewer than 0."""
    d = x if isinstance(x, decimal.Decimal) else _exact(x)
    return max(digits - 1, 0) if d.is_zero() else max(0, digits - 1 - d.adjusted())


def _fixed(x: float | decimal.Decimal, places: int, thousands: bool = False) -> str:
    """``x`` rounded half up to ``places`` decimals, without float noise or a ``-0``."""
    d = x if isinstance(x, decimal.Decimal) else _exact(x)
    q = _DECIMAL.quantize(d, decimal.Decimal(1).scaleb(-places))
    if q.is_zero():
        q = abs(q)
    return format(q, ",f" if thousands else "f")


def format_result(result: Result, filters: tuple[str, ...] = (), math_mode: bool = False) -> str:
    """``result`` as a slide shows it after ``filters``; TeX when ``math_mode``.

    Raises :class:`FilterError` for an unknown filter, bad arguments or a filter that
    does not apply (``pm`` without an sd).
    """
    if len(filters) > 1:
        raise FilterError(f"one filter per reference, got {' | '.join(filters)}")
    value, digits = float(result.value), result.digits
    if not filters:
        return _fixed(value, decimals(value, digits))
    m = _FILTER_RE.fullmatch(filters[0])
    if not m:
        raise FilterError(f"malformed filter '{filters[0]}'")
    name, args = m.group(1), m.group(2)
    if name not in ("pm", "pct", "sci", "int", "fmt"):
        close = difflib.get_close_matches(name, ["pm", "pct", "sci", "int", "fmt", "literal"], n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise FilterError(f"unknown filter '{name}'{hint}; known filters: {', '.join(FILTERS)}")
    if name != "fmt" and args is not None:
        raise FilterError(f"filter '{name}' takes no arguments")
    if name == "pm":
        if result.sd is None:
            raise FilterError(f"filter 'pm' needs an sd, and '{result.key}' has none")
        places = decimals(value, digits)
        sep = r" \pm " if math_mode else " ± "
        return _fixed(value, places) + sep + _fixed(float(result.sd), places)
    if name == "pct":
        pct = _exact(value) * 100
        return _fixed(pct, decimals(pct, digits)) + (r"\%" if math_mode else "%")
    if name == "sci":
        return _sci(value, digits, math_mode)
    if name == "int":
        text = _fixed(value, 0, thousands=True)
        return text.replace(",", "{,}") if math_mode else text
    spec = _quoted(args)
    if spec is None:
        raise FilterError("malformed arguments to fmt: expected one quoted format spec, as in fmt(\".3g\")")
    try:
        text = format(value, spec)
    except ValueError as e:
        raise FilterError(f"invalid format spec '{spec}' in fmt: {e}") from None
    return text.replace("%", r"\%").replace(",", "{,}") if math_mode else text


def _quoted(args: str | None) -> str | None:
    if args is None:
        return None
    m = re.fullmatch(r"\s*(\"([^\"]*)\"|'([^']*)')\s*", args)
    if not m:
        return None
    return m.group(2) if m.group(2) is not None else m.group(3)


def _sci(value: float, digits: int, math_mode: bool) -> str:
    """``6.02 × 10²³`` (TeX: ``6.02 \\times 10^{23}``), ``digits`` significant in the mantissa."""
    d = _exact(value)
    exponent = 0 if d.is_zero() else d.adjusted()
    mantissa = _fixed(d.scaleb(-exponent), digits - 1)
    if mantissa.lstrip("-").startswith("10"):  # 9.996 rounded up to 10.00
        exponent += 1
        mantissa = _fixed(d.scaleb(-exponent), digits - 1)
    if math_mode:
        return rf"{mantissa} \times 10^{{{exponent}}}"
    return f"{mantissa} × 10{str(exponent).translate(_SUPERSCRIPT)}"


def ref_info(result: Result) -> tuple[tuple[str, str], ...]:
    """What a writer shows beside a bound number (a tooltip, the notes)."""
    return (
        ("key", result.key),
        ("value", format_number(float(result.value))),
        ("sd", "" if result.sd is None else format_number(float(result.sd))),
        ("n", "" if result.n is None else str(result.n)),
        ("unit", result.unit),
        ("source", result.source),
        ("what", result.what),
    )


# ---------------------------------------------------------------------- source positions


class SourceIndex:
    """The lines of a deck's source, to find the column of text the model keeps no column for.

    ``find`` returns successive occurrences of the same text on successive calls, so
    two identical references on one line get their own columns.
    """

    def __init__(self, path: Path | None) -> None:
        try:
            self.lines = path.read_text(encoding="utf-8").split("\n") if path else []
        except OSError:
            self.lines = []
        self.used: set[tuple[int, int]] = set()

    def find(self, needle: str, line: int, claim: bool = True) -> tuple[int, int]:
        """``(line, col)`` of the first unclaimed ``needle`` at or after ``line``; else ``(line, 1)``."""
        return self.search(needle, line, claim) or (max(line, 1), 1)

    def search(self, needle: str, line: int, claim: bool = True, within: int = 200) -> tuple[int, int] | None:
        """Like :meth:`find`, looking ``within`` lines from ``line``; None when not there."""
        if not needle:
            return None
        for number in range(max(line, 1), min(len(self.lines), max(line, 1) + within) + 1):
            col = self.lines[number - 1].find(needle)
            while col >= 0:
                if (number, col + 1) not in self.used:
                    if claim:
                        self.used.add((number, col + 1))
                    return number, col + 1
                col = self.lines[number - 1].find(needle, col + 1)
        return None


# ---------------------------------------------------------------------- binding


class _Binder:
    """One pass over a slide tree, binding references and recording where each was cited."""

    def __init__(self, path: Path | None, results: Results) -> None:
        self.path = display_path(path) if path else "<deck>"
        self.results = results
        self.source = SourceIndex(path)
        self.diagnostics: list[Diagnostic] = []
        self.sites: list[tuple[str, int, int]] = []

    def error(self, line: int, col: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, col, message))

    def resolve(
        self, key: str, filters: tuple[str, ...], line: int, col: int, math_mode: bool, report: bool
    ) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """The text and info of one reference, or ``(None, ())`` after reporting why not."""
        if is_literal(key):
            if filters and report:
                self.error(line, col, f"a quoted literal takes no filters: {{{{ {key} }}}}")
            return key[1:-1], ()
        if report:
            self.sites.append((key, line, col))
        result = self.results.get(key)
        if result is None:
            if report:
                close = difflib.get_close_matches(key, list(self.results), n=1, cutoff=0.75)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.error(line, col, f"unknown result key '{key}'{hint}")
            return None, ()
        try:
            return format_result(result, filters, math_mode), ref_info(result)
        except FilterError as e:
            if report:
                self.error(line, col, str(e))
            return None, ()

    def string(self, text: str, line: int, mode: str, report: bool = True) -> str:
        """Substitute the references in raw text: ``mode`` is ``plain``, ``math`` or ``markdown``."""
        if "{{" not in text:
            return text

        def sub(m: re.Match[str]) -> str:
            escaped, inner, raw = m.group(1), m.group(2), m.group(0)
            if escaped:  # \{{ : TeX's \{ in math, Markdown's escape in notes, literal braces in titles
                return raw if mode != "plain" else raw[1:]
            if mode == "math" and ("{" in inner or not re.search(r"[.\"|]", inner)):
                return raw  # TeX's own braces, such as x^{{2}}
            at = self.source.find(raw, line, claim=report) if report else (line, 1)
            parsed = parse_ref(inner)
            if parsed is None:
                if report:
                    self.error(*at, f"malformed result reference '{raw}': write {{{{ chNN.key }}}} or {{{{ chNN.key | filter }}}}")
                return raw
            text_, _ = self.resolve(*parsed, *at, math_mode=mode == "math", report=report)
            return raw if text_ is None else text_

        return _REF_RE.sub(sub, text)

    def inlines(self, nodes: tuple[Inline, ...], line: int, report: bool = True) -> tuple[Inline, ...]:
        out: list[Inline] = []
        for node in nodes:
            out.append(self.inline(node, line, report))
            line += sum(isinstance(n, (SoftBreak, LineBreak)) for n in _walk((node,)))
        return tuple(out)

    def inline(self, node: Inline, line: int, report: bool) -> Inline:
        if isinstance(node, Ref):
            if node.line and node.col and report:
                self.source.used.add((node.line, node.col))
            text, info = self.resolve(node.key, node.filters, node.line or line, node.col or 1, False, report)
            return replace(node, text=text, info=info)
        if isinstance(node, Math):
            return _changed(node, tex=self.string(node.tex, line, "math", report))
        if isinstance(node, Image):
            return _changed(
                node, alt=self.string(node.alt, line, "plain", report), title=self.string(node.title, line, "plain", report)
            )
        if isinstance(node, (Emph, Strong, Strike, Link)):
            return _changed(node, children=self.inlines(node.children, line, report))
        return node

    def blocks(self, blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        return tuple(self.block(b) for b in blocks)

    def block(self, block: Block) -> Block:
        if isinstance(block, (Heading, Paragraph)):
            return _changed(block, children=self.inlines(block.children, block.line))
        if isinstance(block, (BulletList, OrderedList)):
            return _changed(block, items=tuple(_changed(i, blocks=self.blocks(i.blocks)) for i in block.items))
        if isinstance(block, (Quote, Click)):
            return _changed(block, blocks=self.blocks(block.blocks))
        if isinstance(block, MathBlock):
            return _changed(block, tex=self.string(block.tex, block.line, "math"))
        if isinstance(block, Figure):
            return _changed(
                block,
                alt=self.string(block.alt, block.line, "plain"),
                title=self.string(block.title, block.line, "plain"),
            )
        if isinstance(block, Table):
            header = tuple(self.inlines(cell, block.line) for cell in block.header)
            rows = tuple(
                tuple(self.inlines(cell, block.line + 2 + i) for cell in row) for i, row in enumerate(block.rows)
            )
            return _changed(block, header=header, rows=rows)
        return block

    def frontmatter(self, fm: dict[str, Any], line: int) -> dict[str, Any]:
        if isinstance(fm.get("title"), str) and "{{" in fm["title"]:
            return {**fm, "title": self.string(fm["title"], line, "plain")}
        return fm

    def slide(self, slide: Slide, frontmatter_line: int = 1) -> Slide:
        """Bind one slide; its frontmatter lies at or after ``frontmatter_line``."""
        frontmatter = self.frontmatter(slide.frontmatter, frontmatter_line)
        blocks = self.blocks(slide.blocks)
        slots = {name: self.blocks(b) for name, b in slide.slots.items()}
        notes_blocks = self.blocks(slide.notes_blocks)
        title_inlines = self.inlines(slide.title_inlines, slide.line, report=False)
        if slide.title_inlines:
            title = plain_text(title_inlines)
        else:
            title = self.string(slide.title, slide.line, "plain", report=False)
        notes = None if slide.notes is None else self.string(slide.notes, slide.notes_line, "markdown", report=False)
        return replace(
            slide,
            frontmatter=frontmatter,
            blocks=blocks,
            slots=slots,
            notes_blocks=notes_blocks,
            title_inlines=title_inlines,
            title=title,
            notes=notes,
        )


def _changed(node: N, **fields: Any) -> N:
    """``replace(node, **fields)``, or ``node`` itself when nothing changed."""
    if all(getattr(node, k) == v for k, v in fields.items()):
        return node
    return replace(node, **fields)  # type: ignore[type-var]


def _walk(nodes: tuple[Inline, ...]) -> Iterator[Inline]:
    for node in nodes:
        yield node
        yield from _walk(getattr(node, "children", ()))


def _dedupe(items: list[N]) -> list[N]:
    return list(dict.fromkeys(items))


def bind_deck(deck: Deck, results: Results) -> tuple[Deck, list[Diagnostic]]:
    """A copy of ``deck`` with every reference bound, and the problems found on the way."""
    binder = _Binder(deck.path, results)
    slides = _bind_slides(binder, deck)
    headmatter = _headmatter(binder, deck, slides)
    if deck.slides and deck.title == deck.slides[0].title:
        title = slides[0].title
    else:
        title = binder.string(deck.title, 1, "plain", report=False)
    bound = replace(deck, headmatter=headmatter, slides=slides, title=title)
    return bound, _dedupe(binder.diagnostics)


def _bind_slides(binder: _Binder, deck: Deck) -> tuple[Slide, ...]:
    """Bind every slide; a slide's frontmatter sits between the previous slide and its own line."""
    starts = [1, *(s.line for s in deck.slides)]
    return tuple(binder.slide(s, start) for s, start in zip(deck.slides, starts))


def _headmatter(binder: _Binder, deck: Deck, slides: tuple[Slide, ...]) -> dict[str, Any]:
    """The bound headmatter; its title is slide 1's frontmatter title when the two are one."""
    title = deck.headmatter.get("title")
    if deck.slides and title is not None and title == deck.slides[0].frontmatter.get("title"):
        return {**deck.headmatter, "title": slides[0].frontmatter.get("title")}
    return binder.frontmatter(deck.headmatter, 1)


def deck_references(deck: Deck) -> list[tuple[str, int, int]]:
    """Every result key the deck cites, as ``(key, line, col)`` in source order (literals excluded)."""
    binder = _Binder(deck.path, Results())
    _headmatter(binder, deck, _bind_slides(binder, deck))
    return _dedupe(binder.sites)


def slide_sources(slide: Slide, results: Results | None = None) -> list[tuple[str, str]]:
    """``(key, source)`` of every result cited on a slide, deduplicated, in order.

    Sources come from the bound references' ``info``, else from ``results``. References
    inside math and frontmatter titles are substituted away by binding: to list those too,
    pass the unbound slide together with ``results``.
    """
    binder = _Binder(None, results or Results())
    binder.slide(slide)
    known: dict[str, str] = {}
    for blocks in (slide.blocks, *slide.slots.values(), slide.notes_blocks):
        for node in _slide_refs(blocks):
            info = dict(node.info)
            if info.get("source"):
                known.setdefault(node.key, info["source"])
    out: list[tuple[str, str]] = []
    for key in dict.fromkeys(key for key, _, _ in binder.sites):
        source = known.get(key) or (results[key].source if results is not None and key in results else None)
        if source:
            out.append((key, source))
    return out


def _slide_refs(blocks: tuple[Block, ...]) -> Iterator[Ref]:
    for block in walk_blocks(blocks):
        for node in _walk(block_inlines(block)):
            if isinstance(node, Ref):
                yield node
