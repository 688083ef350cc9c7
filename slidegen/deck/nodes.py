"""The document model: one format-neutral tree that every reader fills and every writer reads.

A :class:`Deck` holds :class:`Slide` objects; a slide holds blocks; blocks hold inlines.
Nothing here knows about Markdown, HTML or PowerPoint. Every node that can be wrong
keeps the 1-based source line it came from, so any later stage can report
``decks/x.md:LINE:COL: error: ...``.

Nodes are frozen dataclasses with tuple children: a stage that changes a deck (binding
results, resolving figures) builds a new tree with :func:`dataclasses.replace`.

Every result reference is a positioned :class:`Ref`: in running text as an inline node,
in raw text (math, alt text, captions, frontmatter strings, the notes as written) in the
``refs`` of the node holding that text, with its span in it. Positions that only errors
need (``line``/``col`` of text, ``target_at`` of links and images) and those ``refs`` do
not take part in equality, so two trees with the same content compare equal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

# The layouts a slide may name, by name: one table, in slidegen/deck/layouts.py (re-exported here).
from slidegen.deck import elements
from slidegen.deck.background import slide_layout
from slidegen.deck.glossary import Glossary, GlossaryLink
from slidegen.deck.layouts import LAYOUTS as LAYOUTS
from slidegen.deck.layouts import Layout
from slidegen.deck.rawhtml import OPEN_RE
from slidegen.deck.settings import DeckSettings, SlideLook, deck_settings, slide_look

# --------------------------------------------------------------------------- inlines


def _position() -> Any:
    """A position field: kept for error messages, left out of equality and repr."""
    return field(default=0, compare=False, repr=False)


def _target_at() -> Any:
    return field(default=(0, 0), compare=False, repr=False)


def _refs() -> Any:
    return field(default=(), compare=False, repr=False)


def _timings() -> Any:
    """Click timings: computed from the tree by :func:`slidegen.deck.clicks.resolve`, left out of equality."""
    return field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Timing:
    """When one revealed thing changes: from click ``at`` on (1-based) it shows, or, with ``hide``, it hides.

    ``end`` (a click range, ``v-click="[2, 4]"``; 0: none): from that click on it is back as before
    ``at``. ``fade``: while hidden it shows at half opacity instead (``v-click.fade``, ``<v-click fade>``).
    """

    at: int
    hide: bool = False
    end: int = 0
    fade: bool = False


@dataclass(frozen=True)
class Text:
    """Plain text, unescaped. ``line``/``col``: 1-based file position of its first character (0: unknown)."""

    text: str
    line: int = _position()
    col: int = _position()


@dataclass(frozen=True)
class Code:
    """Inline code (`` `x` ``): shown verbatim, never bound."""

    text: str


@dataclass(frozen=True)
class Emph:
    """Emphasis (``*x*``)."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Strong:
    """Strong emphasis (``**x**``)."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Strike:
    """Strikethrough (``~~x~~``)."""

    children: tuple[Inline, ...]


@dataclass(frozen=True)
class Link:
    """A hyperlink.

    ``url`` is kept as written: ``https://...``, ``#id`` (a slide of this deck) or
    ``NN-slug.md#id`` (a slide of another deck); writers turn the last two into
    slide links.
    """

    children: tuple[Inline, ...]
    url: str
    title: str = ""
    target_at: tuple[int, int] = _target_at()
    """1-based file (line, col) where ``url`` is written (``(0, 0)``: unknown)."""


@dataclass(frozen=True)
class Image:
    """An image inside running text. ``src`` is a path relative to the deck or ``fig:NAME``.

    ``alt_refs`` and ``title_refs`` are the references written in ``alt`` and ``title``.
    """

    alt: str
    src: str
    title: str = ""
    alt_refs: tuple[Ref, ...] = _refs()
    title_refs: tuple[Ref, ...] = _refs()
    target_at: tuple[int, int] = _target_at()
    """1-based file (line, col) where ``src`` is written (``(0, 0)``: unknown)."""


@dataclass(frozen=True)
class Math:
    """Inline TeX math (``$...$``), without the dollars; ``refs``: the references written in it."""

    tex: str
    refs: tuple[Ref, ...] = _refs()


@dataclass(frozen=True)
class SoftBreak:
    """A newline inside a paragraph: a space when rendered."""


@dataclass(frozen=True)
class LineBreak:
    """A hard line break (two trailing spaces, a backslash or ``<br>``)."""


@dataclass(frozen=True)
class Ref:
    """A reference to a result, ``{{ key | filter }}``; filled in by binding.

    ``line``/``col`` point at its ``{{``. ``text`` is what the slide shows once bound
    (``None`` before binding); ``info`` carries what a writer shows beside it (value, sd, n,
    unit, source). A quoted ``key`` (``"2,000"``) is a literal, printed as is. In raw text,
    ``span`` is where the reference stands in that text (``[start, end)``) and ``raw`` the
    reference as written; an empty ``key`` marks a malformed one, which binding reports.
    """

    key: str
    filters: tuple[str, ...] = ()
    line: int = 0
    col: int = 0
    text: str | None = None
    info: tuple[tuple[str, str], ...] = ()
    span: tuple[int, int] = field(default=(0, 0), compare=False, repr=False)
    raw: str = field(default="", compare=False, repr=False)


@dataclass(frozen=True)
class CiteItem:
    """One work inside a citation: its BibTeX key and the locator written after it (``§2.1``)."""

    key: str
    locator: str = ""
    prefix: str = ""
    """Text before the ``@`` inside the brackets (``see``)."""
    line: int = _position()
    col: int = _position()
    """1-based file position of the key's ``@``."""


@dataclass(frozen=True)
class Cite:
    """A citation, Pandoc's syntax: ``[@key]``, ``[@key, §2.1]``, ``[@a; @b]``, or in-text ``@key``.

    ``text`` is the citation as the deck's CSL style writes it (``None`` before citing);
    ``reference`` the full references of its works, one per line (a tooltip); ``target``
    the id of the deck's references slide, which the citation links to.
    """

    items: tuple[CiteItem, ...]
    in_text: bool = False
    line: int = _position()
    col: int = _position()
    text: str | None = None
    reference: str = ""
    target: str = ""


@dataclass(frozen=True)
class HtmlSpan:
    """Inline HTML an author wrote around text (``<b>x</b>``, ``<span style="color:red">x</span>``).

    ``tag`` is the element's name in lower case, ``attrs`` its attributes exactly as written (with
    their leading space); the HTML writer passes both through, PowerPoint maps the tags it can draw. A custom
    element of the project is a :class:`Component`, typed so by the reader.
    """

    tag: str
    attrs: str
    children: tuple[Inline, ...]
    refs: tuple[Ref, ...] = _refs()
    """The references written in ``attrs`` (``peak="{{ ch05.lr.best }}"``), spans in ``attrs``."""
    clicks: tuple[Timing, ...] = _timings()
    """When a ``v-click`` directive in ``attrs`` shows or hides the span (:mod:`slidegen.deck.clicks`)."""


@dataclass(frozen=True)
class Component(HtmlSpan):
    """A custom element of the project (``<lr-schedule peak="{{ ch05.lr.best }}" alt="...">``), written inline
    or found in an HTML block (:class:`ComponentBlock`); the reader decides it, by its tag.

    The HTML page shows it as written (its script defines it); PowerPoint shows a picture of it, found under
    :attr:`picture_key`. ``attrs`` are its attributes as written, bound once binding has run; ``line``: where
    its tag is written when known (0: its block's line).
    """

    line: int = _position()

    @cached_property
    def attributes(self) -> tuple[tuple[str, str], ...]:
        """Name and value of each attribute, as the page sees them (entities decoded)."""
        return elements.parse_attrs(self.attrs)

    def attr(self, name: str) -> str | None:
        """The value of attribute ``name`` (``None``: not written)."""
        return next((value for key, value in self.attributes if key == name), None)

    @property
    def alt(self) -> str:
        """The text of its picture (``alt``, required: ``check`` says so)."""
        return self.attr("alt") or ""

    @property
    def print_state(self) -> str | None:
        """The state its picture shows (``print-state``; the element interprets it)."""
        return self.attr("print-state")

    @property
    def fallback(self) -> str | None:
        """The figure PowerPoint shows when no Chromium can draw it (``fallback="fig:NAME"``)."""
        return self.attr("fallback")

    @property
    def run(self) -> str | None:
        """The run record the page gives it (``run="ch01.trainer"``)."""
        return self.attr("run")

    @property
    def picture_key(self) -> str:
        """The media key of its picture: its tag and attributes."""
        return elements.component_key(self.tag, self.attrs)


@dataclass(frozen=True)
class RawInline:
    """An inline HTML tag that holds no text (``<img ...>``, ``<wbr>``): passed through to HTML as written."""

    html: str
    refs: tuple[Ref, ...] = _refs()
    """The references written in the tag's attributes, spans in ``html``."""


@dataclass(frozen=True)
class FootnoteRef:
    """A footnote reference (``[^label]``): ``number`` is the footnote's 1-based number on its slide."""

    number: int
    label: str


Inline = (
    Text
    | Code
    | Emph
    | Strong
    | Strike
    | Link
    | Image
    | Math
    | SoftBreak
    | LineBreak
    | Ref
    | Cite
    | HtmlSpan
    | RawInline
    | FootnoteRef
)


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    """A heading, level 1-6."""

    level: int
    children: tuple[Inline, ...]
    line: int = 0


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of inlines."""

    children: tuple[Inline, ...]
    line: int = 0


@dataclass(frozen=True)
class ListItem:
    """One item of a list: its blocks (usually one tight paragraph, perhaps a nested list)."""

    blocks: tuple[Block, ...]
    line: int = 0


@dataclass(frozen=True)
class BulletList:
    """An unordered list."""

    items: tuple[ListItem, ...]
    line: int = 0


@dataclass(frozen=True)
class OrderedList:
    """A numbered list starting at ``start``."""

    items: tuple[ListItem, ...]
    start: int = 1
    line: int = 0


@dataclass(frozen=True)
class CodeBlock:
    """A fenced code block.

    ``steps`` holds the highlight steps of ```` ```py {2-3|5} ````: one tuple of
    1-based line numbers per step, an empty tuple meaning "all lines". No steps
    means no highlighting beyond the syntax colours. A block imported with
    ``<<< @/model/x.py#region`` holds the imported code and names its file in ``source``.
    """

    code: str
    lang: str = ""
    steps: tuple[tuple[int, ...], ...] = ()
    line: int = 0
    source: Path | None = None
    """The file a snippet import read (resolved), else ``None``."""
    at: str = ""
    """When the steps start (``{at:3}``, ``{at:'+2'}``): Slidev's ``at``, as written; ``""``: the next click."""
    line_numbers: bool | None = None
    """``{lines:true}``/``{lines:false}``; ``None``: the deck's ``lineNumbers`` headmatter decides."""
    start_line: int = 1
    """The number the first line shows (``{startLine:5}``)."""
    max_height: str = ""
    """A CSS length (``{maxHeight:'200px'}``): the HTML block scrolls beyond it."""
    clicks: tuple[int, ...] = _timings()
    """The click each step after the first shows on (:mod:`slidegen.deck.clicks`)."""
    monaco: bool = False
    """Written ```` ```ts {monaco} ````: Slidev's editor, shown as a plain highlighted block (``check`` warns)."""


@dataclass(frozen=True)
class Diagram(CodeBlock):
    """A ```` ```mermaid ```` fence, typed so by the reader: Mermaid draws it on the HTML page, PowerPoint shows
    a picture of it (:attr:`picture_key`). Writers that show code as text write it back as the fence it is."""

    @property
    def picture_key(self) -> str:
        """The media key of its picture: its text."""
        return elements.diagram_key(self.code)


@dataclass(frozen=True)
class MathBlock:
    """Display TeX math (``$$...$$``), without the dollars; ``refs``: the references written in it."""

    tex: str
    line: int = 0
    refs: tuple[Ref, ...] = _refs()
    steps: tuple[tuple[int, ...], ...] = ()
    """Line steps (``$$ {1|3|all}``), as a code block's: 1-based lines (split at ``\\\\``), ``()`` all."""
    at: str = ""
    clicks: tuple[int, ...] = _timings()
    """The click each step after the first shows on."""


@dataclass(frozen=True)
class Table:
    """A GFM table. ``aligns`` holds ``"left"``, ``"center"``, ``"right"`` or ``""`` per column."""

    header: tuple[tuple[Inline, ...], ...]
    rows: tuple[tuple[tuple[Inline, ...], ...], ...]
    aligns: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Figure:
    """An image standing alone in its paragraph: a picture with alt text and optional caption.

    ``alt_refs`` and ``title_refs`` are the references written in ``alt`` and ``title``.
    """

    alt: str
    src: str
    title: str = ""
    line: int = 0
    alt_refs: tuple[Ref, ...] = _refs()
    title_refs: tuple[Ref, ...] = _refs()
    target_at: tuple[int, int] = _target_at()
    """1-based file (line, col) where ``src`` is written (``(0, 0)``: unknown)."""


@dataclass(frozen=True)
class Quote:
    """A block quote."""

    blocks: tuple[Block, ...]
    line: int = 0


@dataclass(frozen=True)
class Rule:
    """A thematic break inside a slide (``***``)."""

    line: int = 0


@dataclass(frozen=True)
class Click:
    """Content revealed on a click (``<v-click>``), or item by item (``<v-clicks>``: ``each``).

    ``at`` is Slidev's ``at`` as written (``"3"`` absolute, ``"+1"``/``"-1"`` relative, ``""`` the
    next click; ``<v-after>`` is ``"+0"``); ``hide`` hides instead of showing (``<v-click hide>``,
    ``<v-click-hide>``); ``depth`` and ``every`` are ``<v-clicks>``' (nested list levels revealed,
    items per click).
    """

    blocks: tuple[Block, ...]
    each: bool = False
    line: int = 0
    at: str = ""
    hide: bool = False
    depth: int = 1
    every: int = 1
    clicks: tuple[Timing, ...] = _timings()
    """One timing per revealed unit, in document order (:func:`slidegen.deck.clicks.units`)."""
    fade: bool = False
    """Hidden content shows at half opacity (``fade``)."""


@dataclass(frozen=True)
class RawHtml:
    """A block of HTML as written (CommonMark's HTML block: up to a blank line, or a whole ``<style>``...).

    The HTML writer passes it through (a ``<style>`` applies to its own slide only); writers that cannot
    draw HTML leave it out with a warning at ``line``. The reader types a block holding custom elements a
    :class:`ComponentBlock` and one PowerPoint shows as a picture an :class:`HtmlRegion`.
    """

    html: str
    line: int = 0
    refs: tuple[Ref, ...] = _refs()
    """The references written in the attributes of its tags (``<x-y peak="{{ key }}">``), spans in ``html``."""
    clicks: tuple[Timing, ...] = _timings()
    """One timing per tag carrying a ``v-click``/``v-after`` directive, in document order."""


@dataclass(frozen=True)
class ComponentBlock(RawHtml):
    """An HTML block holding custom elements of the project (``tags``, decided by the reader): the HTML page
    shows it as written; PowerPoint a picture of each element (:attr:`components`) and nothing else of it."""

    tags: tuple[str, ...] = ()
    """The custom elements' tags (lower case) the block opens."""

    @cached_property
    def components(self) -> tuple[Component, ...]:
        """Each custom element the block opens, in order, with its (bound) attributes and its line."""
        out = []
        for m in OPEN_RE.finditer(self.html):
            tag = m.group(1).lower()
            if tag in self.tags:
                line = self.line + self.html.count("\n", 0, m.start())
                out.append(Component(tag, m.group(2) or "", (), line=line))
        return tuple(out)


@dataclass(frozen=True)
class HtmlRegion(RawHtml):
    """An HTML block PowerPoint cannot draw natively (a ``<div>`` grid, an ``<iframe>``), decided by the reader:
    PowerPoint shows a picture of it (:attr:`picture_key`), the HTML page the block as written.

    A plain :class:`RawHtml` needs no picture: a ``<style>``, a lone wrapper tag around Markdown, ``<img>``
    tags (figures), Slidev's built-ins, or what draws nothing.
    """

    @property
    def picture_key(self) -> str:
        """The media key of its picture: its line and HTML."""
        return elements.region_key(self.html, self.line)


Block = (
    Heading
    | Paragraph
    | BulletList
    | OrderedList
    | CodeBlock
    | MathBlock
    | Table
    | Figure
    | Quote
    | Rule
    | Click
    | RawHtml
)


# --------------------------------------------------------------------------- slides and decks


@dataclass(frozen=True)
class Footnote:
    """A footnote of a slide (``[^label]: text``), shown at the bottom of that slide in every output."""

    number: int
    """1-based, in the order the slide first refers to them (Slidev's markdown-it-footnote numbering)."""
    label: str
    blocks: tuple[Block, ...]
    line: int = 0


@dataclass(frozen=True)
class Source:
    """One result a slide cites: where (the ``{{`` of its reference), and what it said when bound.

    ``value``, ``sd`` and ``n`` are ``None`` (and ``source`` empty) when results.md has no such key.
    """

    key: str
    line: int
    col: int
    value: float | None = None
    sd: float | None = None
    n: int | None = None
    source: str = ""


@dataclass(frozen=True)
class Work:
    """One work a slide cites (by ``[@key]`` or through a cited number it shows), fully referenced."""

    key: str
    reference: str
    """The full reference, plain text, as the deck's style writes it."""


@dataclass(frozen=True)
class Slide:
    """One slide.

    ``blocks`` is the default slot; ``slots`` the named ones (``right`` in ``two-cols``).
    ``title`` is plain text (frontmatter ``title``, else the first heading); when it
    came from a heading, ``title_heading`` is that heading's position in ``blocks``
    so a writer with a title placeholder can leave it out of the body.
    """

    index: int
    """1-based position in the deck."""
    line: int
    """1-based source line where the slide's content (or frontmatter) starts."""
    layout: str
    frontmatter: dict[str, Any]
    title: str
    content: str
    """The slide's Markdown without frontmatter and notes."""
    blocks: tuple[Block, ...]
    slots: dict[str, tuple[Block, ...]] = field(default_factory=dict)
    notes: str | None = None
    """Speaker notes as written (Markdown), trimmed; ``None`` when the slide has none."""
    notes_blocks: tuple[Block, ...] = ()
    notes_line: int = 0
    clicks: int = 0
    """How many clicks the slide takes to reach its final state."""
    id: str | None = None
    title_heading: int | None = None
    title_inlines: tuple[Inline, ...] = ()
    frontmatter_refs: dict[str, tuple[Ref, ...]] = field(default_factory=dict, compare=False, repr=False)
    """The references written in each top-level string value of ``frontmatter``."""
    frontmatter_at: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)
    """1-based file (line, col) where each top-level frontmatter value is written."""
    notes_refs: tuple[Ref, ...] = field(default=(), compare=False, repr=False)
    """The references written in ``notes`` (the text as written), to fill it in; ``notes_blocks`` holds the same."""
    sources: tuple[Source, ...] = ()
    """Every result the slide cites, in source order (literals left out); filled in by binding."""
    works: tuple[Work, ...] = ()
    """Every work the slide cites, in order of first citation; filled in by citing (:mod:`slidegen.bind.cite`)."""
    footnotes: tuple[Footnote, ...] = ()
    """The slide's footnotes, by number."""
    path: Path | None = None
    """The file the slide is written in, when a ``src:`` import brought it from another file (``None``: the deck's)."""
    glossary: tuple[GlossaryLink, ...] = ()
    """The glossary entries this slide explains, linked back to (filled in before writing: bind/glossary.py)."""

    @cached_property
    def look(self) -> SlideLook:
        """Its ``zoom:`` and ``transition:``, typed, read once (the deck's settings: :attr:`Deck.settings`)."""
        return slide_look(self.frontmatter)


@dataclass(frozen=True)
class ImportSite:
    """A slide that ``src:`` replaced by another file's slides: where it is written and its own frontmatter."""

    path: Path
    line: int
    frontmatter: dict[str, Any]
    frontmatter_at: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Deck:
    """A parsed deck: its source, its settings (the headmatter) and its slides."""

    path: Path
    title: str
    headmatter: dict[str, Any]
    slides: tuple[Slide, ...]
    imports: tuple[ImportSite, ...] = ()
    """The slides written as ``src:`` imports, in source order (their slides are in ``slides``)."""
    glossary: Glossary | None = None
    """The entries, when the deck is the glossary (``decks/glossary.md``): :mod:`slidegen.deck.glossary`."""

    @cached_property
    def settings(self) -> DeckSettings:
        """The headmatter's settings, typed, read once: what every writer asks of the deck as a whole."""
        return deck_settings(self.headmatter)

    def layout_of(self, slide: Slide) -> Layout:
        """``slide``'s layout as the writers draw it: its tone set by its background or the deck's
        ``colorSchema``."""
        return slide_layout(slide, self.settings.dark)

    @property
    def slug(self) -> str:
        """The file name without ``.md``: ``01-training-loop``; names every output."""
        return self.path.stem

    def slide_path(self, slide: Slide) -> Path:
        """The file ``slide`` is written in: its own for an imported slide, else the deck's."""
        return slide.path or self.path

    def slide_by_id(self, slide_id: str) -> Slide | None:
        """The slide whose frontmatter ``id`` is ``slide_id``, if any."""
        for slide in self.slides:
            if slide.id == slide_id:
                return slide
        return None


# --------------------------------------------------------------------------- the deck index


@dataclass(frozen=True)
class SlideEntry:
    """One slide as other slides and decks see it: its number, id and title."""

    number: int
    """1-based slide number (``Slide.index``)."""
    id: str | None
    title: str
    line: int
    """1-based source line where the slide starts."""


@dataclass(frozen=True)
class DeckEntry:
    """One deck of the project as the index page, links and the checker see it."""

    path: Path
    title: str
    headmatter: dict[str, Any]
    slides: tuple[SlideEntry, ...]
    terms: int | None = None
    """How many entries the glossary has, when the deck is the glossary (the index page counts those)."""

    @property
    def slug(self) -> str:
        return self.path.stem

    def slide(self, slide_id: str) -> SlideEntry | None:
        """The slide whose ``id`` is ``slide_id``, if any."""
        for entry in self.slides:
            if entry.id == slide_id:
                return entry
        return None


@dataclass(frozen=True)
class DeckIndex:
    """Every deck of a build, by file name: built once per build and handed to every writer and to ``check``.

    Links between decks (``NN-slug.md#id``) resolve through it; nothing after the parser reads a source file.
    """

    decks: tuple[DeckEntry, ...] = ()

    def deck(self, name: str) -> DeckEntry | None:
        """The deck named ``name``: its file name (``01-x.md``) or slug (``01-x``)."""
        stem = name[: -len(".md")] if name.endswith(".md") else name
        for entry in self.decks:
            if entry.slug == stem:
                return entry
        return None

    def slide_number(self, name: str, slide_id: str) -> int | None:
        """The number of slide ``slide_id`` in deck ``name``, or ``None`` when either is unknown."""
        entry = self.deck(name)
        slide = entry.slide(slide_id) if entry else None
        return slide.number if slide else None


def walk_inlines(nodes: tuple[Inline, ...]) -> Iterator[Inline]:
    """Yield every inline in ``nodes``, depth first."""
    for node in nodes:
        yield node
        children = getattr(node, "children", None)
        if children is not None:
            yield from walk_inlines(children)


def walk_blocks(blocks: tuple[Block, ...]) -> Iterator[Block]:
    """Yield every block in ``blocks``, depth first (list items' and quotes' blocks included)."""
    for block in blocks:
        yield block
        if isinstance(block, (BulletList, OrderedList)):
            for item in block.items:
                yield from walk_blocks(item.blocks)
        elif isinstance(block, (Quote, Click)):
            yield from walk_blocks(block.blocks)


def block_inlines(block: Block) -> tuple[Inline, ...]:
    """The inlines directly held by one block (headings, paragraphs, table cells)."""
    if isinstance(block, (Heading, Paragraph)):
        return block.children
    if isinstance(block, Table):
        cells = [*block.header, *(cell for row in block.rows for cell in row)]
        return tuple(node for cell in cells for node in cell)
    return ()


def table_cells(block: Table) -> Iterator[tuple[Inline, ...]]:
    """Every cell of a table, header first, row by row."""
    yield from block.header
    for row in block.rows:
        yield from row


def slide_refs(slide: Slide) -> Iterator[Ref]:
    """Every reference a slide cites, in source order: frontmatter, body, slots, notes.

    References in ``notes`` (the text as written) are left out: ``notes_blocks`` holds them.
    """
    refs = [ref for value in slide.frontmatter_refs.values() for ref in value]
    footnotes = tuple(block for note in slide.footnotes for block in note.blocks)
    for blocks in (slide.blocks, *slide.slots.values(), footnotes, slide.notes_blocks):
        refs.extend(block_refs(blocks))
    yield from sorted(refs, key=lambda ref: (ref.line, ref.col))


def block_refs(blocks: tuple[Block, ...]) -> Iterator[Ref]:
    """Every reference in ``blocks``: inline ones and those written in math, alt text and captions."""
    for block in walk_blocks(blocks):
        if isinstance(block, MathBlock):
            yield from block.refs
        elif isinstance(block, Figure):
            yield from block.alt_refs
            yield from block.title_refs
        elif isinstance(block, RawHtml):
            yield from block.refs
        else:
            yield from inline_refs(block_inlines(block))


def inline_refs(nodes: tuple[Inline, ...]) -> Iterator[Ref]:
    """Every reference in ``nodes`` and in the math and images among them."""
    for node in walk_inlines(nodes):
        if isinstance(node, Ref):
            yield node
        elif isinstance(node, Math):
            yield from node.refs
        elif isinstance(node, Image):
            yield from node.alt_refs
            yield from node.title_refs
        elif isinstance(node, (HtmlSpan, RawInline)):
            yield from node.refs


def cite_source(node: Cite) -> str:
    """A citation as written: ``[@a, §2; @b]`` or ``@a``."""
    items = [
        (f"{i.prefix} " if i.prefix else "") + (f"@{i.key}, {i.locator}" if i.locator else f"@{i.key}")
        for i in node.items
    ]
    return items[0] if node.in_text else "[" + "; ".join(items) + "]"


def slide_cites(slide: Slide) -> Iterator[Cite]:
    """Every citation of a slide, in source order: body, slots, notes."""
    found = []
    for blocks in (slide.blocks, *slide.slots.values(), slide.notes_blocks):
        for block in walk_blocks(blocks):
            found += [n for n in walk_inlines(block_inlines(block)) if isinstance(n, Cite)]
    yield from sorted(found, key=lambda c: (c.line, c.col))


def slide_blocks(slide: Slide) -> tuple[Block, ...]:
    """All of a slide's visible blocks: the default slot, then the named slots in order."""
    out = list(slide.blocks)
    for blocks in slide.slots.values():
        out.extend(blocks)
    return tuple(out)


def plain_text(nodes: tuple[Inline, ...]) -> str:
    """The text a reader sees, without markup: for titles, alt text and PPTX runs."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, (Text, Code)):
            parts.append(node.text)
        elif isinstance(node, Math):
            parts.append(node.tex)
        elif isinstance(node, SoftBreak):
            parts.append(" ")
        elif isinstance(node, LineBreak):
            parts.append("\n")
        elif isinstance(node, Ref):
            parts.append(node.text if node.text is not None else f"{{{{ {node.key} }}}}")
        elif isinstance(node, Cite):
            parts.append(node.text if node.text is not None else cite_source(node))
        elif isinstance(node, Image):
            parts.append(node.alt)
        elif isinstance(node, FootnoteRef):
            parts.append(f"[{node.number}]")
        elif isinstance(node, (Emph, Strong, Strike, Link, HtmlSpan)):
            parts.append(plain_text(node.children))
    return "".join(parts)
