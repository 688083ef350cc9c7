"""Deck -> reveal.js HTML: one self-contained page per deck, an index, and the assets beside them.

The page shell is a jinja2 template (``templates/deck.html.j2``, autoescaped); the slides'
HTML is built here, one small function per node kind, every string from the deck escaped
through :mod:`markupsafe` (``Markup.format`` escapes whatever is not already markup).

Everything a page loads sits in ``assets/`` next to it (:mod:`slidegen.media.assets` copies it), so
the output opens from ``file://`` with no network at all. A slide's layout comes from the one
table in :mod:`slidegen.deck.layouts`: its ``<section>`` carries ``layout-NAME`` and the classes the
theme styles by the table's facts (``tone-dark``, ``centered``, ``text-center``,
``image-side-left``/``-right``), so a new layout gets its tone, placement and picture side
without new CSS.

Every node kind has its own function, chosen by an exhaustive ``match``: a node this writer
does not know fails loudly (:func:`typing.assert_never`) instead of vanishing from the page.

Clicks become reveal.js fragments with explicit ``data-fragment-index`` values, counted
per slide in document order. A code block's highlight steps (```` ```py {2-3|5} ````) are
``fragment custom`` markers, invisible by themselves: a few lines of script in the page
count the markers shown and mark the lines of that step (``.line.hl``). All markers shown
(the final click, or a print with ``pdfSeparateFragments: false``) means the last step.

The project's components (:mod:`slidegen.media.components`) a deck uses are loaded from
``assets/components/``, each script and stylesheet once; their tags pass through as the author
wrote them, attributes bound. A ```` ```mermaid ```` fence is a ``.mermaid-diagram`` box holding
its text, which the page's script draws with Mermaid before reveal.js starts (so the print view,
and the PDF, show the drawn diagram).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, assert_never
from urllib.parse import quote, urlsplit

from markupsafe import Markup, escape
from pygments import format as pygments_format
from pygments.formatters import HtmlFormatter

from slidegen import theme
from slidegen.atomic import atomic_write
from slidegen.deck import background, clicks, figbox, links, rawhtml, rawimages, settings
from slidegen.deck import builtins as slidev_builtins
from slidegen.deck.layouts import Layout
from slidegen.deck.nodes import (
    Block,
    BulletList,
    Cite,
    Click,
    Code,
    CodeBlock,
    Deck,
    DeckEntry,
    Diagram,
    Emph,
    Figure,
    Footnote,
    FootnoteRef,
    Heading,
    HtmlSpan,
    Image,
    Inline,
    LineBreak,
    Link,
    ListItem,
    Math,
    MathBlock,
    OrderedList,
    Paragraph,
    Quote,
    RawHtml,
    RawInline,
    Ref,
    Rule,
    Slide,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
    Timing,
    cite_source,
    slide_blocks,
    walk_blocks,
)
from slidegen.media import components as comp
from slidegen.media import mermaid
from slidegen.media.assets import ASSETS_DIR, COMPONENTS_ASSETS, copy_media, copy_runs, templates
from slidegen.media.assets import (  # re-exported: callers build a page and its assets together
    copy_assets as copy_assets,
)
from slidegen.write import html_clicks
from slidegen.write.highlight import tokens

#: Code blocks longer than this use a smaller type size so they still fit.
_LONG_CODE_LINES = 13


# --------------------------------------------------------------------------- links and code


_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


def rewrite_url(url: str) -> str | None:
    """A link target for the page: ``#id`` -> ``#/id``, ``NN-x.md#id`` -> ``NN-x.html#/id``.

    External ``http(s)``/``mailto`` links are kept; other schemes (``javascript:``...) give ``None``.
    """
    to = links.target(url)
    if to.external:
        return url if to.scheme in _SAFE_SCHEMES else None
    path, fragment = (to.with_suffix(".html") if to.other_deck else to.path), to.fragment
    if fragment and not fragment.startswith("/") and (path == "" or path.endswith(".html")):
        fragment = "/" + fragment
    return path + ("#" + fragment if fragment else "")


@functools.cache
def _formatter() -> HtmlFormatter:
    """One Pygments formatter for every block (making one builds its stylesheet: 1 to 2 ms each)."""
    return HtmlFormatter(nowrap=True)


def highlight_lines(code: str, lang: str) -> list[Markup]:
    """``code`` coloured by Pygments, one balanced HTML fragment per source line."""
    html = pygments_format(tokens(code, lang), _formatter())
    lines = html.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [Markup(line) for line in lines]  # Pygments escapes the code itself


# --------------------------------------------------------------------------- slide bodies


@dataclass(frozen=True)
class SlideView:
    """What the page template needs to place one slide."""

    id: str | None
    classes: str
    """``layout-NAME`` and the classes of the layout's facts (:func:`layout_classes`)."""
    dark: bool
    body: Markup
    columns: tuple[tuple[str, Markup], ...]
    """The layout's named slots, each a column beside the body (``right`` in ``two-cols``)."""
    title: Markup | None
    image_side: str | None
    image: str | None
    image_missing: str | None
    notes: Markup | None
    number: int
    header: bool = False
    """The body spans the top, above the columns (``two-cols-header``), instead of being the first column."""
    bottom: Markup | None = None
    """The layout's bottom slot, spanning the slide below the columns."""
    frame_side: str | None = None
    """Where the web page of an iframe layout sits (``left``, ``right``, ``full``)."""
    frame_url: str | None = None
    image_size: str = ""
    """The picture's CSS ``object-fit`` (frontmatter ``backgroundSize``; ``cover`` for ``image``)."""
    footnotes: Markup | None = None
    """The slide's footnotes, shown at its bottom."""
    click_steps: Markup = Markup("")
    """Invisible fragments for the clicks nothing else marks (:func:`slidegen.write.html_clicks.markers`), first."""
    background: str = theme.BACKGROUND
    """The colour reveal.js paints the slide (``background:``, else its tone's)."""
    background_image: str | None = None
    """The URL of a ``background:`` picture, drawn faded over ``background``."""
    transition: str | None = None
    """The reveal.js transition into this slide (``transition:``), ``None`` for the deck's."""
    style: str = ""
    """Inline CSS of the ``<section>``: the text colour a background needs."""
    zoom: float | None = None
    """``zoom:``, the scale of the slide's content."""
    glossary: tuple[tuple[str, str], ...] = ()
    """``(term, href)`` of each glossary entry the slide explains, linked from its footer."""


def layout_classes(name: str, spec: Layout) -> str:
    """The classes of a slide's ``<section>``: its layout's name, then what the theme styles generically."""
    classes = [f"layout-{name}"]
    if spec.dark:
        classes.append("tone-dark")
    if spec.centered:
        classes.append("centered")
    if spec.align == "center":
        classes.append("text-center")
    if spec.image:
        classes.append(f"image-side-{spec.image}")
    if spec.frame:
        classes.append(f"frame-side-{spec.frame}")
    if not spec.padded:
        classes.append("unpadded")
    return " ".join(classes)


_CLASS_RE = re.compile(r"-?[A-Za-z_][A-Za-z0-9_:/.-]*")
#: The ``backgroundSize`` values a picture can take as its ``object-fit`` (others keep the layout's own).
_FITS = frozenset({"cover", "contain", "fill", "none", "scale-down"})


def frontmatter_classes(value: object) -> str:
    """The CSS classes a slide's frontmatter ``class:`` adds (a string or a list), invalid names left out."""
    items = value.split() if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
    return " ".join(item for item in items if _CLASS_RE.fullmatch(item))


def frame_url(value: object) -> str | None:
    """An iframe layout's ``url:`` when it is an http(s) address, else ``None``."""
    if not isinstance(value, str):
        return None
    return value if urlsplit(value).scheme.lower() in ("http", "https") else None


class _Renderer:
    """Turns blocks and inlines into HTML; one instance per slide, counting its fragments."""

    def __init__(
        self,
        media_urls: Mapping[str, str],
        *,
        clicks: bool = True,
        scope: str = "",
        units: Mapping[object, Timing] | None = None,
        line_numbers: bool = False,
    ) -> None:
        self.media_urls = media_urls
        self.clicks = clicks  # False for speaker notes: no fragments, code without steps
        self.fragments = 0
        self.scope = scope  # the class of the slide a <style> block applies to
        self.units = units or {}  # each <v-clicks> unit's timing (slidegen.deck.clicks.timing_map)
        self.line_numbers = line_numbers  # the deck's lineNumbers

    def next_fragment(self) -> int:
        """The next click of this slide."""
        index = self.fragments
        self.fragments += 1
        return index

    def timed(self, timing: Timing | None) -> Markup:
        """The fragment attributes for ``timing`` (:mod:`slidegen.write.html_clicks`), or nothing in notes."""
        return html_clicks.fragment_attrs(timing) if self.clicks else Markup("")

    def fragment_attrs(self) -> Markup:
        """` class="fragment" data-fragment-index="N"`, or nothing in notes."""
        if not self.clicks:
            return Markup("")
        return Markup(' class="fragment" data-fragment-index="{}"').format(self.next_fragment())

    # blocks ---------------------------------------------------------------

    def blocks(self, blocks: Sequence[Block]) -> Markup:
        return Markup("\n").join(self.block(b) for b in blocks)

    def block(self, node: Block) -> Markup:
        match node:
            case Heading():
                return self.heading(node)
            case Paragraph():
                return self.paragraph(node)
            case BulletList():
                return self.bullet_list(node)
            case OrderedList():
                return self.ordered_list(node)
            case Diagram():
                return self.diagram(node)
            case CodeBlock():
                return self.code_block(node)
            case MathBlock():
                return self.math_block(node)
            case Table():
                return self.table(node)
            case Figure():
                return self.figure(node)
            case Quote():
                return self.quote(node)
            case Rule():
                return self.rule(node)
            case Click():
                return self.click(node)
            case RawHtml():
                return self.raw_html(node)
            case _:
                assert_never(node)

    def heading(self, node: Heading) -> Markup:
        level = min(max(node.level, 1), 6)
        return Markup("<h{0}>{1}</h{0}>").format(level, self.inlines(node.children))

    def paragraph(self, node: Paragraph) -> Markup:
        return Markup("<p>{}</p>").format(self.inlines(node.children))

    def list_items(self, items: Sequence[ListItem], each: bool = False) -> Markup:
        out = []
        for item in items:
            attrs = self.timed(self.units.get(id(item)))
            blocks = item.blocks
            if blocks and isinstance(blocks[0], Paragraph):  # tight item: text straight in <li>
                first, blocks = self.inlines(blocks[0].children), blocks[1:]
            else:
                first = Markup("")
            out.append(Markup("<li{}>{}{}</li>").format(attrs, first, self.blocks(blocks)))
        return Markup("\n").join(out)

    def bullet_list(self, node: BulletList, each: bool = False) -> Markup:
        return Markup("<ul>\n{}\n</ul>").format(self.list_items(node.items, each))

    def ordered_list(self, node: OrderedList, each: bool = False) -> Markup:
        start = Markup(' start="{}"').format(node.start) if node.start != 1 else Markup("")
        return Markup("<ol{}>\n{}\n</ol>").format(start, self.list_items(node.items, each))

    def code_block(self, node: CodeBlock) -> Markup:
        lines = highlight_lines(node.code, node.lang)
        steps = node.steps if self.clicks else ()
        lit = set(steps[0]) if steps else set()
        numbered = node.line_numbers if node.line_numbers is not None else self.line_numbers
        rows = []
        for number, line in enumerate(lines, start=1):
            css = "line hl" if number in lit else "line"
            shown = Markup(' data-number="{}"').format(node.start_line + number - 1) if numbered else Markup("")
            rows.append(Markup('<span class="{}" data-line="{}"{}>{}\n</span>').format(css, number, shown, line))
        classes = ["code"] + (["long"] if len(lines) > _LONG_CODE_LINES else []) + (["numbered"] if numbered else [])
        attrs = Markup(' class="{}"').format(" ".join(classes))
        if node.max_height:
            attrs += Markup(' style="--code-max-height: {}"').format(node.max_height)
        if node.lang:
            attrs += Markup(' data-lang="{}"').format(node.lang)
        markers = Markup("")
        if len(steps) > 1:
            attrs += Markup(' data-steps="{}"').format("|".join(",".join(map(str, s)) for s in steps))
            markers = Markup("").join(
                Markup('<span class="fragment custom code-step" data-fragment-index="{}"></span>').format(at - 1)
                for at in (node.clicks or range(self.fragments + 1, self.fragments + len(steps)))
            )
        return Markup("<div{}>{}<pre><code>{}</code></pre></div>").format(attrs, markers, Markup("").join(rows))

    def diagram(self, node: Diagram) -> Markup:
        """A Mermaid fence: its text, which the page's script replaces by the drawn SVG."""
        return Markup('<div class="mermaid-diagram" role="img"><pre class="mermaid-source">{}</pre></div>').format(
            node.code
        )

    def math_block(self, node: MathBlock) -> Markup:
        if not (self.clicks and len(node.steps) > 1):
            return Markup('<div class="math display">{}</div>').format(node.tex)
        steps = "|".join(",".join(map(str, s)) for s in node.steps)
        markers = Markup("").join(
            Markup('<span class="fragment custom code-step" data-fragment-index="{}"></span>').format(at - 1)
            for at in node.clicks
        )
        return Markup('<div class="math-steps" data-steps="{}">{}<div class="math display">{}</div></div>').format(
            steps, markers, node.tex
        )

    def table(self, node: Table, rows: Sequence[Timing | None] = ()) -> Markup:
        def align(col: int) -> Markup:
            value = node.aligns[col] if col < len(node.aligns) else ""
            if value in ("left", "center", "right"):
                return Markup(' class="align-{}"').format(value)
            return Markup("")

        def row(cells: Sequence[Sequence[Inline]], tag: str, timing: Timing | None = None) -> Markup:
            return Markup("<tr{}>{}</tr>").format(
                self.timed(timing),
                Markup("").join(
                    Markup("<{0}{1}>{2}</{0}>").format(Markup(tag), align(i), self.inlines(cell))
                    for i, cell in enumerate(cells)
                ),
            )

        head = Markup("<thead>{}</thead>").format(row(node.header, "th")) if node.header else Markup("")
        body = Markup("\n").join(
            row(cells, "td", rows[i] if i < len(rows) else None) for i, cells in enumerate(node.rows)
        )
        return Markup("<table>{}\n<tbody>\n{}\n</tbody></table>").format(head, body)

    def figure(self, node: Figure) -> Markup:
        caption = Markup("<figcaption>{}</figcaption>").format(node.title) if node.title else Markup("")
        return Markup("<figure>{}{}</figure>").format(self.picture(node.src, node.alt, node.title, "div"), caption)

    def picture(self, src: str, alt: str, title: str, placeholder_tag: str) -> Markup:
        """An ``<img>``, or a visible box with the alt text when ``src`` has no media file."""
        url = self.media_urls.get(src)
        if url is None:
            return Markup('<{0} class="missing-image" role="img" aria-label="{1}" title="{2}">{1}</{0}>').format(
                Markup(placeholder_tag), alt, f"missing: {src}"
            )
        title_attr = Markup(' title="{}"').format(title) if title else Markup("")
        if src.startswith("fig:") and figbox.split(src)[1] is not None:
            # drawn for its box: shown at its own size (its labels at the style's points), smaller only if it must
            title_attr += Markup(' class="drawn-figure"')
        return Markup('<img src="{}" alt="{}"{}>').format(url, alt, title_attr)

    def quote(self, node: Quote) -> Markup:
        return Markup("<blockquote>\n{}\n</blockquote>").format(self.blocks(node.blocks))

    def rule(self, node: Rule) -> Markup:
        return Markup("<hr>")

    def footnotes(self, notes: Sequence[Footnote]) -> Markup:
        """A slide's footnotes: a numbered list, each note's blocks after its number."""
        items = []
        for note in notes:
            blocks = note.blocks
            if blocks and isinstance(blocks[0], Paragraph):  # one paragraph: its text straight in <li>
                first, blocks = self.inlines(blocks[0].children), blocks[1:]
            else:
                first = Markup("")
            items.append(Markup('<li value="{}">{}{}</li>').format(note.number, first, self.blocks(blocks)))
        return Markup('<ol class="footnotes">\n{}\n</ol>').format(Markup("\n").join(items))

    def raw_html(self, node: RawHtml) -> Markup:
        """The author's HTML as written (as Slidev passes it through); a ``<style>`` scoped to this slide."""
        if rawhtml.is_style(node.html) and self.scope:
            return Markup(rawhtml.scoped_style(node.html, self.scope))
        if slidev_builtins.only_builtins(node.html):
            return Markup("")  # Slidev's <Tweet>, <Toc>...: nothing to show (check warns)
        html = rawimages.rewrite(node.html, self.media_urls)
        if self.clicks and node.clicks:
            return Markup(html_clicks.reveal_tags(html, node.clicks))
        return Markup(html)

    def click(self, node: Click) -> Markup:
        if not self.clicks:
            return self.blocks(node.blocks)
        if not node.each:
            attrs = self.timed(node.clicks[0] if node.clicks else None)
            return Markup("<div{}>\n{}\n</div>").format(attrs, self.blocks(node.blocks))
        out = []
        for block in node.blocks:
            if isinstance(block, (BulletList, OrderedList)):
                out.append(self.block(block))  # its items find their timings in self.units
            elif isinstance(block, Table) and len(node.blocks) == 1:
                out.append(
                    self.table(
                        block, rows=[self.units.get(clicks.unit_key((block, i))) for i in range(len(block.rows))]
                    )
                )
            else:
                attrs = self.timed(self.units.get(id(block)))
                out.append(Markup("<div{}>{}</div>").format(attrs, self.block(block)))
        return Markup("\n").join(out)

    # inlines --------------------------------------------------------------

    def inlines(self, nodes: Sequence[Inline]) -> Markup:
        return Markup("").join(self.inline(node) for node in nodes)

    def inline(self, node: Inline) -> Markup:  # noqa: C901 (one branch per inline node type)
        match node:
            case Text():
                return self.text(node)
            case Code():
                return self.code(node)
            case Emph():
                return self.emph(node)
            case Strong():
                return self.strong(node)
            case Strike():
                return self.strike(node)
            case Link():
                return self.link(node)
            case Image():
                return self.image(node)
            case Math():
                return self.math(node)
            case SoftBreak():
                return self.soft_break(node)
            case LineBreak():
                return self.line_break(node)
            case Ref():
                return self.ref(node)
            case Cite():
                return self.cite(node)
            case HtmlSpan():
                return self.html_span(node)
            case RawInline():
                return Markup(rawimages.rewrite(node.html, self.media_urls))  # the author's HTML, pictures copied
            case FootnoteRef():
                return Markup('<sup class="footnote-ref" data-footnote="{0}">{0}</sup>').format(node.number)
            case _:
                assert_never(node)

    def html_span(self, node: HtmlSpan) -> Markup:
        """An inline element the author wrote: its tag and attributes as written, its content rendered."""
        attrs = node.attrs
        if self.clicks and node.clicks:
            attrs = html_clicks.tag_attrs(attrs, node.clicks[0])
        return Markup("<{0}{1}>{2}</{0}>").format(Markup(node.tag), Markup(attrs), self.inlines(node.children))

    def text(self, node: Text) -> Markup:
        return escape(node.text)

    def code(self, node: Code) -> Markup:
        return Markup("<code>{}</code>").format(node.text)

    def emph(self, node: Emph) -> Markup:
        return Markup("<em>{}</em>").format(self.inlines(node.children))

    def strong(self, node: Strong) -> Markup:
        return Markup("<strong>{}</strong>").format(self.inlines(node.children))

    def strike(self, node: Strike) -> Markup:
        return Markup("<del>{}</del>").format(self.inlines(node.children))

    def link(self, node: Link) -> Markup:
        href = rewrite_url(node.url)
        content = self.inlines(node.children)
        if href is None:
            return Markup('<span class="link-removed" title="{}">{}</span>').format(node.url, content)
        title = Markup(' title="{}"').format(node.title) if node.title else Markup("")
        return Markup('<a href="{}"{}>{}</a>').format(href, title, content)

    def image(self, node: Image) -> Markup:
        return self.picture(node.src, node.alt, node.title, "span")

    def math(self, node: Math) -> Markup:
        return Markup('<span class="math inline">{}</span>').format(node.tex)

    def soft_break(self, node: SoftBreak) -> Markup:
        return Markup("\n")

    def line_break(self, node: LineBreak) -> Markup:
        return Markup("<br>\n")

    def ref(self, node: Ref) -> Markup:
        if node.text is None:
            return Markup('<span class="ref unbound" data-key="{0}">{{{{ {0} }}}}</span>').format(node.key)
        info = dict(node.info)
        attrs = [Markup(' data-key="{}"').format(node.key)]
        for name, value in node.info:
            attr = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")
            if attr and attr not in ("key", "label"):
                attrs.append(Markup(' data-{}="{}"').format(Markup(attr), value))
        title = info.get("label") or node.key
        return Markup('<span class="ref"{} title="{}">{}</span>').format(Markup("").join(attrs), title, node.text)

    def cite(self, node: Cite) -> Markup:
        """The formatted citation, linking to the references slide, the full references as its tooltip."""
        keys = " ".join(item.key for item in node.items)
        text = node.text if node.text is not None else cite_source(node)
        title = Markup(' title="{}"').format(node.reference) if node.reference else Markup("")
        if node.target:
            return Markup('<a class="cite" href="#/{}" data-cites="{}"{}>{}</a>').format(node.target, keys, title, text)
        return Markup('<span class="cite" data-cites="{}"{}>{}</span>').format(keys, title, text)


def _slide_view(deck: Deck, slide: Slide, media_urls: Mapping[str, str]) -> SlideView:
    """Render one slide's body, slots and notes."""
    spec = deck.layout_of(slide)
    found = slide.look.background
    styled = any(isinstance(b, RawHtml) and rawhtml.is_style(b.html) for b in walk_blocks(slide_blocks(slide)))
    scope = f"slide-style-{slide.index}" if styled else ""
    units = clicks.timing_map(slide_blocks(slide))
    render = _Renderer(media_urls, scope=scope, units=units, line_numbers=deck.settings.line_numbers)
    blocks = list(slide.blocks)
    title = None
    if spec.slots and slide.title_heading is not None and not spec.header:
        # the title spans the columns rather than sitting atop the first one
        title = render.block(blocks.pop(slide.title_heading))
    body = render.blocks(blocks)
    if slide.layout == "cover":
        if not any(isinstance(b, Heading) for b in blocks):
            body = Markup("<h1>{}</h1>\n").format(slide.title or deck.title) + body
        meta = [str(deck.headmatter[k]) for k in ("author", "date") if deck.headmatter.get(k)]
        if meta:
            body += Markup('\n<p class="cover-meta">{}</p>').format(" · ".join(meta))
    columns = tuple((name, render.blocks(slide.slots.get(name, ()))) for name in spec.slots)
    bottom = render.blocks(slide.slots.get(spec.bottom, ())) if spec.bottom and spec.bottom in slide.slots else None
    image_src = slide.frontmatter.get("image") if spec.image else None
    image = media_urls.get(str(image_src)) if image_src else None
    size = slide.frontmatter.get("backgroundSize")
    image_size = size if isinstance(size, str) and size in _FITS else ("cover" if spec.image == "full" else "")
    if not image_size and image_src and figbox.split(str(image_src))[1]:
        image_size = "scale-down"  # a figure drawn for the half it fills: never shown larger than drawn
    notes, click_notes = _notes(slide, media_urls)
    classes = " ".join(
        c for c in (layout_classes(slide.layout, spec), frontmatter_classes(slide.frontmatter.get("class")), scope) if c
    )
    return SlideView(
        id=slide.id,
        classes=classes,
        dark=spec.dark,
        body=body,
        columns=columns,
        title=title,
        image_side=spec.image,
        image=image,
        image_missing=str(image_src) if image_src and image is None else None,
        notes=notes,
        number=slide.index,
        header=spec.header,
        bottom=bottom,
        frame_side=spec.frame,
        frame_url=frame_url(slide.frontmatter.get("url")) if spec.frame else None,
        image_size=image_size,
        footnotes=render.footnotes(slide.footnotes) if slide.footnotes else None,
        glossary=tuple((link.term, rewrite_url(link.url) or "") for link in slide.glossary),
        click_steps=html_clicks.markers(slide.clicks, click_notes, clicks.used(slide)),
        **_look(slide, spec, found, media_urls),
    )


def _look(
    slide: Slide, spec: Layout, found: background.Background | None, media_urls: Mapping[str, str]
) -> dict[str, Any]:
    """The SlideView fields of a slide's ``background:``, ``transition:`` and ``zoom:``."""
    color = found.color if found and found.color else background.base_color(spec)
    text = found.text if found and found.color else None
    default_text = theme.TEXT_ON_DARK if spec.dark else theme.TEXT
    style = ""
    if text and text != default_text:
        style = f"color: {text}; --muted: {text}; --accent: {text}; --on-dark: {text}"
    if found and found.color and not style:
        style = f"--muted: {default_text}; --accent: {default_text}"  # the theme's muted and accent need its own bg
    return {
        "background": color,
        "background_image": media_urls.get(found.image) if found and found.image else None,
        "transition": settings.reveal_transition(slide.look.transition),
        "style": style,
        "zoom": slide.look.zoom if slide.look.zoom != 1 else None,
    }


def _notes(slide: Slide, media_urls: Mapping[str, str]) -> tuple[Markup | None, list[Markup | None]]:
    """The slide's notes, and with ``[click]`` markers the notes shown from each click on (cumulative)."""
    if not slide.notes_blocks:
        return None, []
    render = _Renderer(media_urls, clicks=False)
    if not (slide.clicks and clicks.has_markers(slide.notes_blocks)):
        segments = clicks.notes_segments(slide.notes_blocks)
        return render.blocks([b for _, group in segments for b in group]), []
    segments = clicks.notes_segments(slide.notes_blocks)

    def upto(k: int) -> Markup:
        return render.blocks([b for at, group in segments if at <= k for b in group])

    return upto(0), [upto(k) for k in range(1, slide.clicks + 1)]


def render_deck(
    deck: Deck,
    media_urls: Mapping[str, str],
    components: Sequence[comp.Component] = (),
    run_scripts: Sequence[str] = (),
) -> str:
    """The whole page for ``deck``; ``media_urls`` maps each image ``src`` to its URL; ``components``: the
    project's components the deck uses (each script and stylesheet loaded once); ``run_scripts``: the
    URLs of the run records they read (:func:`slidegen.media.assets.copy_runs`), loaded before them."""
    chapter = deck.headmatter.get("chapter")
    folder = f"{ASSETS_DIR}/{COMPONENTS_ASSETS}"
    scripts = [f"{folder}/{quote(c.script.name)}" for c in components]
    styles = [f"{folder}/{quote(c.css.name)}" for c in components if c.css is not None]
    diagrams = next(comp.diagrams(deck), None) is not None
    look = deck.settings
    return (
        templates()
        .get_template("deck.html.j2")
        .render(
            deck=deck,
            page_title=look.page_title(deck.title),
            transition=settings.reveal_transition(look.transition) or "fade",
            deck_style=Markup(_deck_style(look)),  # numbers and checked font names only
            lang=str(deck.headmatter.get("lang", "en")),
            chapter=chapter if chapter not in (None, "") else None,
            slides=[_slide_view(deck, s, media_urls) for s in deck.slides],
            total=len(deck.slides),
            assets=ASSETS_DIR,
            width=look.canvas_width,
            height=look.canvas_height,
            dark_background=theme.ACCENT_DARK_BG,
            background=theme.BACKGROUND,
            picture_opacity=background.PICTURE_OPACITY,
            component_scripts=[*run_scripts, *scripts],
            component_styles=styles,
            mermaid_script=f"{ASSETS_DIR}/{mermaid.SCRIPT}" if diagrams else None,
            mermaid_config=Markup(mermaid.config_json()),
        )
    )


def _deck_style(look: settings.DeckSettings) -> str:
    """CSS for what the headmatter changes in the theme: the slide's height, the fonts (installed ones only)."""
    rules = []
    if look.canvas_height != theme.HEIGHT_PX:
        rules.append(f".reveal .slides section {{ height: {look.canvas_height}px; }}")
    if fonts := look.font_css():
        rules.append(fonts)
    return "\n".join(rules)


def write_deck(
    deck: Deck,
    out_dir: Path,
    media: Mapping[str, Path],
    components: Sequence[comp.Component] = (),
    runs: Mapping[str, Path] | None = None,
) -> Path:
    """Write ``out_dir/SLUG.html`` (atomically) and copy its media into ``out_dir/media``.

    ``components`` are the project's components (:func:`slidegen.media.components.discover`); the page loads
    those the deck uses, from ``assets/components/`` (:func:`slidegen.media.assets.copy_assets` copies them).
    ``runs`` are the run records they read (``run="ID"`` -> ``results/runs/ID.json``), written beside the media.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    urls = copy_media(media, out_dir)
    run_scripts = copy_runs(runs or {}, out_dir)
    target = out_dir / f"{deck.slug}.html"
    used = comp.used(deck, {c.name: c for c in components})
    atomic_write(target, render_deck(deck, urls, used, run_scripts).encode("utf-8"))
    return target


def write_index(
    decks: Sequence[Deck | DeckEntry],
    out_dir: Path,
    series: str = "",
    outputs: Mapping[str, Mapping[str, Path]] | None = None,
    changed_only: bool = False,
) -> Path | None:
    """Write ``out_dir/index.html``: the series' title (``[tool.slidegen] title``), then every deck of the deck
    index with its chapter, title, slide count (for the glossary, its count of terms), summary, a picture of
    its cover (the deck's own page, shown small) and links to its HTML and to the other files the build wrote
    for it (``outputs``: slug -> format -> file; a format is linked only when its file is there). With
    ``changed_only``, a page that would read as the one already there is left alone (``None``)."""
    out_dir = Path(out_dir)
    outputs = outputs or {}
    entries = []
    for d in decks:
        page = out_dir / f"{d.slug}.html"
        files = [
            (fmt.upper(), quote(os.path.relpath(path, out_dir).replace(os.sep, "/")))
            for fmt, path in outputs.get(d.slug, {}).items()
            if Path(path).is_file()
        ]
        entries.append(
            {
                "href": f"{quote(d.slug)}.html",
                "title": d.title or d.slug,
                "chapter": d.headmatter.get("chapter"),
                "summary": d.headmatter.get("summary", ""),
                "slides": slide_count(page) or len(d.slides),
                "terms": d.terms if isinstance(d, DeckEntry) else d.glossary and len(d.glossary.entries),
                "files": files,
                "thumbnail": page.is_file(),
            }
        )
    html = templates().get_template("index.html.j2").render(decks=entries, assets=ASSETS_DIR, series=series)
    target = out_dir / "index.html"
    if changed_only and target.is_file() and target.read_bytes() == html.encode("utf-8"):
        return None
    atomic_write(target, html.encode("utf-8"))
    return target


def slide_count(page: Path) -> int | None:
    """The slides of a deck page as written (one ``<section`` a line start each); ``None`` when there is no page."""
    try:
        text = page.read_text(encoding="utf-8")
    except OSError:
        return None
    return sum(1 for line in text.splitlines() if line.startswith("<section"))
