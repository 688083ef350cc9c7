"""Binding: resolve every ``{{ key | filter }}`` of a deck against results.md.

:func:`bind_deck` returns a new deck in which every :class:`~slidegen.deck.nodes.Ref` has its
``text`` and ``info`` filled, the raw text that holds references (math, alt text, captions,
frontmatter strings, the notes as written) has them spliced in at the spans the parser
recorded, and each slide lists its :class:`~slidegen.deck.nodes.Source` objects. Problems come
back as :class:`~slidegen.errors.Diagnostic` objects at the reference's ``line:col``.
Binding reads no file: every position comes from the parsed deck.

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
import html
import re
from dataclasses import replace
from typing import Any, TypeVar

from slidegen.deck.nodes import (
    Block,
    BulletList,
    Click,
    Deck,
    Emph,
    Figure,
    Heading,
    HtmlSpan,
    Image,
    Inline,
    Link,
    Math,
    MathBlock,
    OrderedList,
    Paragraph,
    Quote,
    RawHtml,
    RawInline,
    Ref,
    Slide,
    Source,
    Strike,
    Strong,
    Table,
    plain_text,
    slide_refs,
)
from slidegen.errors import Diagnostic, display_path
from slidegen.record.results import Result, Results, format_number
from slidegen.record.stale import stale_message

#: Filters a reference may apply, as shown in error messages.
FILTERS: tuple[str, ...] = ("pm", "pct", "sci", "int", 'fmt(".3g")')

#: The widest field and the most decimals ``fmt`` may ask for (``fmt(".999999999f")`` would write a gigabyte).
MAX_FORMAT_WIDTH = 100
_FILTER_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:\((.*)\))?", re.DOTALL)
MALFORMED_REF = "malformed result reference '{}': write {{{{ chNN.key }}}} or {{{{ chNN.key | filter }}}}"
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
        raise FilterError('malformed arguments to fmt: expected one quoted format spec, as in fmt(".3g")')
    if any(len(n.lstrip("0")) > 3 or int(n) > MAX_FORMAT_WIDTH for n in re.findall(r"\d+", spec)):
        raise FilterError(f"format spec '{spec}' in fmt asks for a width or precision over {MAX_FORMAT_WIDTH}")
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


def ref_label(result: Result) -> str:
    """The bound number's tooltip, read like a footnote: ``2.271 ± 0.004 nats (3 seeds) · validation loss
    at the end · run ch01.default`` (the fingerprint left out)."""
    value = float(result.value)
    whole = result.sd is None and value.is_integer() and abs(value) >= 10_000  # 540,000,000,000, not 540000000000
    number = format_result(result, ("int",) if whole else ())
    if result.sd is not None:  # at the value's places, or at its own first digit when those round it to 0
        sd = float(result.sd)
        places = decimals(value, result.digits)
        number += " ± " + _fixed(sd, max(places, decimals(sd, 1)) if sd else places)
    number += f" {result.unit}" if result.unit else ""
    number += f" ({result.n} seeds)" if result.n and result.n > 1 else ""
    source = result.source
    if result.experiment is not None:
        source = f"run {result.experiment}"
    return " · ".join(part for part in (number, result.what, source) if part)


def ref_info(result: Result) -> tuple[tuple[str, str], ...]:
    """What a writer shows beside a bound number: ``label`` (a tooltip, :func:`ref_label`) and the row."""
    return (
        ("label", ref_label(result)),
        ("key", result.key),
        ("value", format_number(float(result.value))),
        ("sd", "" if result.sd is None else format_number(float(result.sd))),
        ("n", "" if result.n is None else str(result.n)),
        ("unit", result.unit),
        ("source", result.source),
        ("what", result.what),
    )


# ---------------------------------------------------------------------- binding


class _Binder:
    """One pass over a deck's tree, binding references and reporting each problem once."""

    def __init__(self, deck: Deck, results: Results) -> None:
        self.deck = deck
        self.path = display_path(deck.path)
        self.results = results
        self.diagnostics: list[Diagnostic] = []

    def error(self, line: int, col: int, message: str) -> None:
        self.diagnostics.append(Diagnostic(self.path, line, col, message))

    def resolve(self, ref: Ref, math_mode: bool, report: bool) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """The text and info of one reference, or ``(None, ())`` after reporting why not."""
        line, col = ref.line or 1, ref.col or 1
        if not ref.key:
            if report:
                self.error(line, col, MALFORMED_REF.format(ref.raw))
            return None, ()
        if is_literal(ref.key):
            if ref.filters and report:
                self.error(line, col, f"a quoted literal takes no filters: {{{{ {ref.key} }}}}")
            return ref.key[1:-1], ()
        result = self.results.get(ref.key)
        if result is None:
            if report:
                close = difflib.get_close_matches(ref.key, list(self.results), n=1, cutoff=0.75)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.error(line, col, f"unknown result key '{ref.key}'{hint}")
            return None, ()
        stale = self.results.stale.get(ref.key)
        if stale is not None and report:
            self.diagnostics.append(Diagnostic(self.path, line, col, stale_message(ref.key, *stale), "warning"))
        try:
            return format_result(result, ref.filters, math_mode), ref_info(result)
        except FilterError as e:
            if report:
                self.error(line, col, str(e))
            return None, ()

    def ref(self, ref: Ref, math_mode: bool = False, report: bool = True) -> Ref:
        text, info = self.resolve(ref, math_mode, report)
        return replace(ref, text=text, info=info)

    def splice(
        self, text: str, refs: tuple[Ref, ...], math_mode: bool = False, report: bool = True, markup: bool = False
    ) -> tuple[str, tuple[Ref, ...]]:
        """Raw ``text`` with each bound reference written over its span (unbound ones stay as written);
        ``markup``: ``text`` is HTML (attributes), so each value is written HTML-escaped."""
        bound = tuple(self.ref(r, math_mode, report) for r in refs)
        for ref in sorted(bound, key=lambda r: r.span[0], reverse=True):
            if ref.text is not None:
                start, end = ref.span
                value = html.escape(ref.text, quote=True) if markup else ref.text
                text = text[:start] + value + text[end:]
        return text, bound

    def inlines(self, nodes: tuple[Inline, ...], report: bool = True) -> tuple[Inline, ...]:
        return tuple(self.inline(node, report) for node in nodes)

    def inline(self, node: Inline, report: bool) -> Inline:
        if isinstance(node, Ref):
            return self.ref(node, report=report)
        if isinstance(node, Math):
            tex, refs = self.splice(node.tex, node.refs, True, report)
            return _changed(node, tex=tex, refs=refs)
        if isinstance(node, Image):
            alt, alt_refs = self.splice(node.alt, node.alt_refs, report=report)
            title, title_refs = self.splice(node.title, node.title_refs, report=report)
            return _changed(node, alt=alt, title=title, alt_refs=alt_refs, title_refs=title_refs)
        if isinstance(node, HtmlSpan):
            attrs, refs = self.splice(node.attrs, node.refs, report=report, markup=True)
            return _changed(node, attrs=attrs, refs=refs, children=self.inlines(node.children, report))
        if isinstance(node, RawInline):
            raw, refs = self.splice(node.html, node.refs, report=report, markup=True)
            return _changed(node, html=raw, refs=refs)
        if isinstance(node, (Emph, Strong, Strike, Link)):
            return _changed(node, children=self.inlines(node.children, report))
        return node

    def blocks(self, blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        return tuple(self.block(b) for b in blocks)

    def block(self, block: Block) -> Block:
        if isinstance(block, (Heading, Paragraph)):
            return _changed(block, children=self.inlines(block.children))
        if isinstance(block, (BulletList, OrderedList)):
            return _changed(block, items=tuple(_changed(i, blocks=self.blocks(i.blocks)) for i in block.items))
        if isinstance(block, (Quote, Click)):
            return _changed(block, blocks=self.blocks(block.blocks))
        if isinstance(block, MathBlock):
            tex, refs = self.splice(block.tex, block.refs, True)
            return _changed(block, tex=tex, refs=refs)
        if isinstance(block, Figure):
            alt, alt_refs = self.splice(block.alt, block.alt_refs)
            title, title_refs = self.splice(block.title, block.title_refs)
            return _changed(block, alt=alt, title=title, alt_refs=alt_refs, title_refs=title_refs)
        if isinstance(block, RawHtml):
            raw, refs = self.splice(block.html, block.refs, markup=True)
            return _changed(block, html=raw, refs=refs)
        if isinstance(block, Table):
            header = tuple(self.inlines(cell) for cell in block.header)
            rows = tuple(tuple(self.inlines(cell) for cell in row) for row in block.rows)
            return _changed(block, header=header, rows=rows)
        return block

    def frontmatter(self, slide: Slide) -> tuple[dict[str, Any], dict[str, tuple[Ref, ...]]]:
        """The slide's frontmatter with every string value's references spliced in."""
        fm, refs = dict(slide.frontmatter), {}
        for key, written in slide.frontmatter_refs.items():
            if isinstance(fm.get(key), str):
                fm[key], refs[key] = self.splice(fm[key], written)
        return fm, refs

    def slide(self, slide: Slide) -> Slide:
        self.path = display_path(self.deck.slide_path(slide))  # an imported slide's problems name its file
        frontmatter, frontmatter_refs = self.frontmatter(slide)
        # the title heading is one of the blocks, and the notes' references are those of notes_blocks:
        # bound again without reporting, so each problem is reported once
        title_inlines = self.inlines(slide.title_inlines, report=False)
        if slide.title_inlines:
            title = plain_text(title_inlines)
        elif "title" in slide.frontmatter and slide.title == str(slide.frontmatter["title"]):
            title = str(frontmatter["title"])
        else:
            title = slide.title
        notes, notes_refs = slide.notes, slide.notes_refs
        if notes is not None:
            notes, notes_refs = self.splice(notes, notes_refs, report=False)
        bound = replace(
            slide,
            frontmatter=frontmatter,
            frontmatter_refs=frontmatter_refs,
            blocks=self.blocks(slide.blocks),
            slots={name: self.blocks(b) for name, b in slide.slots.items()},
            notes_blocks=self.blocks(slide.notes_blocks),
            footnotes=tuple(replace(note, blocks=self.blocks(note.blocks)) for note in slide.footnotes),
            title_inlines=title_inlines,
            title=title,
            notes=notes,
            notes_refs=notes_refs,
        )
        return replace(bound, sources=self.sources(bound))

    def sources(self, slide: Slide) -> tuple[Source, ...]:
        """Every result the slide cites, in source order, with its value as bound (literals and malformed left out)."""
        out = []
        for ref in slide_refs(slide):
            if not ref.key or is_literal(ref.key):
                continue
            result = self.results.get(ref.key)
            if result is None:
                out.append(Source(ref.key, ref.line, ref.col))
            else:
                out.append(Source(ref.key, ref.line, ref.col, result.value, result.sd, result.n, result.source))
        return tuple(out)


def _changed(node: N, **fields: Any) -> N:
    """``replace(node, **fields)``, or ``node`` itself when nothing changed."""
    if all(getattr(node, k) == v for k, v in fields.items()):
        return node
    return replace(node, **fields)  # type: ignore[type-var]


def _dedupe(items: list[N]) -> list[N]:
    return list(dict.fromkeys(items))


def bind_deck(deck: Deck, results: Results) -> tuple[Deck, list[Diagnostic]]:
    """A copy of ``deck`` with every reference bound and each slide's sources, and the problems found on the way."""
    binder = _Binder(deck, results)
    slides = tuple(binder.slide(s) for s in deck.slides)
    headmatter = deck.headmatter
    first = deck.slides[0].frontmatter if deck.slides else {}
    if deck.slides and all(k in first and first[k] == v for k, v in deck.headmatter.items()):
        # the headmatter is slide 1's frontmatter (which may hold more: defaults, an import's keys)
        headmatter = {k: slides[0].frontmatter[k] for k in deck.headmatter}
    title = deck.title
    if deck.slides and deck.title == deck.slides[0].title:
        title = slides[0].title
    elif "title" in deck.headmatter and deck.title == str(deck.headmatter["title"]):
        title = str(headmatter["title"])
    bound = replace(deck, headmatter=headmatter, slides=slides, title=title)
    return bound, _dedupe(binder.diagnostics)
