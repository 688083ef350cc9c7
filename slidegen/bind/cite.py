"""Citing: a bound deck's citations formatted by its CSL style, and its references slide.

:func:`cite_deck` runs after binding (it needs each slide's ``sources``). For each slide it
finds the works cited: every ``[@key]`` (text, lists, tables, notes, figure captions) and
every cited number it shows (``results/cited.yaml``), which brings in its work without a
``[@...]``. Then it

- writes each :class:`~slidegen.deck.nodes.Cite`'s ``text`` in the deck's style, its full
  references (``reference``, a tooltip) and ``target``, the id of the references slide;
- fills each slide's ``works`` (what PowerPoint lists in the notes);
- lists exactly the works the deck cites, in the style's order, on the references slide:
  the deck's ``layout: references`` slide, or one added at the end (before a closing
  ``layout: end`` slide); a long list goes on as many slides as it needs. ``references: false``
  in the headmatter adds none.

Problems (an unknown key, an unknown style) are diagnostics at their ``line:col``.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from slidegen.bind.citestyle import Cluster, Formatted, Reference
from slidegen.bind.library import Library
from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic, SlidegenError, display_path
from slidegen.project import key_line
from slidegen.read.mdplugins.cites import find_cites

#: The layout of a references slide.
REFERENCES_LAYOUT = "references"
#: The id a references slide gets when it has none.
REFERENCES_ID = "references"
#: Works listed on one references slide; a longer list continues on the next.
PER_SLIDE = 5
TITLE = "References"
#: The speaker notes of a references slide the deck did not write.
NOTES = "The works this deck cites, in full."

_TAG_RE = re.compile(r"(<[^>]+>)")
_URL_RE = re.compile(r"(https?://\S+?)(?=[.,;)]?(?:\s|$))")


def deck_cites(deck: d.Deck) -> bool:
    """Whether ``deck`` writes any ``[@...]`` (in text or captions)."""
    return any(True for slide in deck.slides for _ in slide_clusters(slide))


def cite_deck(deck: d.Deck, library: Library) -> tuple[d.Deck, list[Diagnostic]]:
    """``deck`` (bound) with its citations formatted, each slide's works, and its references slide(s)."""
    path = display_path(deck.path)
    problems: list[Diagnostic] = []
    numbers = library.cited.by_key()
    entries = library.bibliography.entries
    pulled = [
        [numbers[s.key].cite for s in slide.sources if s.key in numbers and numbers[s.key].cite in entries]
        for slide in deck.slides
    ]
    written = [list(slide_clusters(slide)) for slide in deck.slides]
    if not any(pulled) and not any(written):
        return deck, []
    if any(written):
        problems += [replace(e, severity="error") for e in library.bibliography.errors]
    for slide, slide_cites in zip(deck.slides, written, strict=True):
        for cite in slide_cites:
            for item in cite.items:
                if item.key not in entries:
                    hint = _did_you_mean(item.key, entries)
                    problems.append(
                        Diagnostic(
                            display_path(deck.slide_path(slide)),
                            item.line or 1,
                            item.col or 1,
                            f"unknown citation key '{item.key}'{hint}",
                        )
                    )
    style = library.style_path(deck.headmatter)
    if style is None:
        problems.append(_style_problem(path, deck, library))
        return deck, problems
    good = [c for slide_cites in written for c in slide_cites if all(i.key in entries for i in c.items)]
    extra = [key for keys in pulled for key in keys]
    try:
        formatted = library.style(style).format(
            [Cluster(tuple((i.key, i.locator, i.prefix) for i in c.items), c.in_text) for c in good], extra
        )
    except SlidegenError as error:
        return deck, [*problems, error.diagnostic]
    texts = {_place(c): t for c, t in zip(good, formatted.texts, strict=True)}
    full = {r.key: r for r in formatted.references}
    target = _target(deck) if formatted.references else ""
    slides = []
    for slide, keys in zip(deck.slides, pulled, strict=True):
        fill = _Filler(texts, full, target)
        slide = fill.slide(slide)
        order = [i.key for c in slide_clusters(slide) for i in c.items if i.key in full] + keys
        slide = replace(slide, works=tuple(d.Work(k, full[k].text) for k in dict.fromkeys(order)))
        slides.append(slide)
    return replace(deck, slides=_with_references(deck, tuple(slides), formatted, target)), problems


def slide_clusters(slide: d.Slide) -> list[d.Cite]:
    """The citations of a slide, in source order: those in running text, then those in captions."""
    return list(d.slide_cites(slide)) + [cite for _, _, cite in _caption_cites(slide)]


def _caption_cites(slide: d.Slide) -> list[tuple[d.Figure | d.Image, tuple[int, int], d.Cite]]:
    """``(figure or image, span in its title, citation)`` for every ``[@...]`` in a caption."""
    out: list[tuple[d.Figure | d.Image, tuple[int, int], d.Cite]] = []
    for blocks in (slide.blocks, *slide.slots.values()):
        for block in d.walk_blocks(blocks):
            holders: list[d.Figure | d.Image] = [block] if isinstance(block, d.Figure) else []
            holders += [n for n in d.walk_inlines(d.block_inlines(block)) if isinstance(n, d.Image)]
            for holder in holders:
                line, col = holder.target_at
                base = col + len(holder.src) + 2  # after `src "`
                for start, end, items in find_cites(holder.title):
                    cite_items = tuple(d.CiteItem(k, loc, pre, line, base + at) for k, loc, pre, at in items)
                    out.append((holder, (start, end), d.Cite(cite_items, False, line, base + start)))
    return out


class _Filler:
    """Writes formatted citations into one slide's tree."""

    def __init__(self, texts: dict[Place, str], full: dict[str, Reference], target: str) -> None:
        self.texts, self.full, self.target = texts, full, target

    def cite(self, node: d.Cite) -> d.Cite:
        text = self.texts.get(_place(node))
        if text is None:
            return node
        reference = "\n".join(self.full[i.key].text for i in node.items if i.key in self.full)
        return replace(node, text=text, reference=reference, target=self.target)

    def inlines(self, nodes: tuple[d.Inline, ...]) -> tuple[d.Inline, ...]:
        return tuple(self.inline(n) for n in nodes)

    def inline(self, node: d.Inline) -> d.Inline:
        if isinstance(node, d.Cite):
            return self.cite(node)
        if isinstance(node, (d.Emph, d.Strong, d.Strike, d.Link)):
            return replace(node, children=self.inlines(node.children))
        return node

    def blocks(self, blocks: tuple[d.Block, ...]) -> tuple[d.Block, ...]:
        return tuple(self.block(b) for b in blocks)

    def block(self, block: d.Block) -> d.Block:
        if isinstance(block, (d.Heading, d.Paragraph)):
            return replace(block, children=self.inlines(block.children))
        if isinstance(block, (d.BulletList, d.OrderedList)):
            return replace(block, items=tuple(replace(i, blocks=self.blocks(i.blocks)) for i in block.items))
        if isinstance(block, (d.Quote, d.Click)):
            return replace(block, blocks=self.blocks(block.blocks))
        if isinstance(block, d.Table):
            return replace(
                block,
                header=tuple(self.inlines(c) for c in block.header),
                rows=tuple(tuple(self.inlines(c) for c in row) for row in block.rows),
            )
        return block

    def slide(self, slide: d.Slide) -> d.Slide:
        captions = _caption_cites(slide)
        title_inlines = self.inlines(slide.title_inlines)
        title = d.plain_text(title_inlines) if title_inlines != slide.title_inlines else slide.title
        slide = replace(
            slide,
            blocks=self.blocks(slide.blocks),
            slots={k: self.blocks(v) for k, v in slide.slots.items()},
            notes_blocks=self.blocks(slide.notes_blocks),
            title_inlines=title_inlines,
            title=title,
        )
        return self.captions(slide, captions) if captions else slide

    def captions(self, slide: d.Slide, found: list[tuple[d.Figure | d.Image, tuple[int, int], d.Cite]]) -> d.Slide:
        """Each caption's ``[@...]`` written over with its formatted citation."""
        titles: dict[int, str] = {}
        for holder, (start, end), cite in sorted(found, key=lambda f: -f[1][0]):
            text = self.texts.get(_place(cite))
            if text is None:
                continue
            title = titles.get(id(holder), holder.title)
            titles[id(holder)] = title[:start] + text + title[end:]
        if not titles:
            return slide

        def swap(node: Any) -> Any:
            return replace(node, title=titles[id(node)]) if id(node) in titles else node

        mapper = _Mapper(swap)
        return replace(
            slide, blocks=mapper.blocks(slide.blocks), slots={k: mapper.blocks(v) for k, v in slide.slots.items()}
        )


Place = tuple[int, int, tuple[d.CiteItem, ...], bool]


def _place(cite: d.Cite) -> Place:
    """A citation's identity across passes over the tree: where it is written, and what it cites."""
    return cite.line, cite.col, cite.items, cite.in_text


class _Mapper:
    """Applies ``fn`` to every Figure block and Image inline of a slide."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def blocks(self, blocks: tuple[d.Block, ...]) -> tuple[d.Block, ...]:
        return tuple(self.block(b) for b in blocks)

    def block(self, block: d.Block) -> d.Block:
        if isinstance(block, d.Figure):
            figure: d.Figure = self.fn(block)
            return figure
        filler = _Filler({}, {}, "")
        if isinstance(block, (d.BulletList, d.OrderedList)):
            return replace(block, items=tuple(replace(i, blocks=self.blocks(i.blocks)) for i in block.items))
        if isinstance(block, (d.Quote, d.Click)):
            return replace(block, blocks=self.blocks(block.blocks))
        if isinstance(block, (d.Heading, d.Paragraph)):
            return replace(
                block,
                children=tuple(self.fn(n) if isinstance(n, d.Image) else filler.inline(n) for n in block.children),
            )
        return block


def _target(deck: d.Deck) -> str:
    """The id of the deck's references slide: its ``layout: references`` slide's, or ``references``."""
    for slide in deck.slides:
        if slide.layout == REFERENCES_LAYOUT:
            return slide.id or REFERENCES_ID
    return REFERENCES_ID if deck.headmatter.get("references", True) is not False else ""


def _with_references(
    deck: d.Deck, slides: tuple[d.Slide, ...], formatted: Formatted, target: str
) -> tuple[d.Slide, ...]:
    """``slides`` with the references listed on the references slide(s), renumbered."""
    if not target or not formatted.references:
        return slides
    at = next((i for i, s in enumerate(slides) if s.layout == REFERENCES_LAYOUT), None)
    if at is None:  # at the end, before a closing `layout: end` slide, so the deck still ends on it
        at = len(slides) - 1 if len(slides) > 1 and slides[-1].layout == "end" else len(slides)
        near = slides[at - 1]
        base = d.Slide(
            index=0,
            line=near.line,
            layout=REFERENCES_LAYOUT,
            frontmatter={"layout": REFERENCES_LAYOUT},
            title=TITLE,
            content="",
            blocks=(),
            notes=NOTES,
            notes_blocks=(d.Paragraph((d.Text(NOTES),), near.line),),
        )
        slides = (*slides[:at], base, *slides[at:])
    base = slides[at]
    pages = [formatted.references[i : i + PER_SLIDE] for i in range(0, len(formatted.references), PER_SLIDE)]
    made = []
    for number, page in enumerate(pages):
        title = base.title or TITLE
        if number:
            title = f"{title} ({number + 1}/{len(pages)})"
        heading = d.Heading(1, (d.Text(title),), base.line)
        own = base.blocks if number == 0 and base.title_heading is not None else (heading,)
        if number == 0 and base.title_heading is None and not base.blocks:
            own = (heading,)
        elif number == 0 and base.title_heading is None:
            own = (heading, *base.blocks)
        body = tuple(d.Paragraph(reference_inlines(r.html), base.line) for r in page)
        ident = base.id or REFERENCES_ID
        made.append(
            replace(
                base,
                title=title,
                blocks=(*own, *body),
                title_heading=0 if own else None,
                title_inlines=(d.Text(title),),
                id=ident if number == 0 else f"{ident}-{number + 1}",
            )
        )
    out = [*slides[:at], *made, *slides[at + 1 :]]
    return tuple(replace(s, index=i) for i, s in enumerate(out, start=1))


def reference_inlines(markup: str) -> tuple[d.Inline, ...]:
    """A reference in citeproc's HTML as deck inlines: ``<i>`` as emphasis, ``<b>`` as strong, URLs as links."""
    stack: list[tuple[str, list[d.Inline]]] = [("", [])]
    for piece in _TAG_RE.split(markup):
        if not piece:
            continue
        tag = piece.lower()
        if tag in ("<i>", "<b>"):
            stack.append((tag, []))
        elif tag in ("</i>", "</b>") and len(stack) > 1:
            kind, nodes = stack.pop()
            stack[-1][1].append(d.Emph(tuple(nodes)) if kind == "<i>" else d.Strong(tuple(nodes)))
        elif piece.startswith("<"):
            continue
        else:
            stack[-1][1].extend(_linked(html.unescape(piece)))
    while len(stack) > 1:
        _, nodes = stack.pop()
        stack[-1][1].extend(nodes)
    return tuple(stack[0][1])


def _linked(text: str) -> list[d.Inline]:
    out: list[d.Inline] = []
    last = 0
    for match in _URL_RE.finditer(text):
        if match.start() > last:
            out.append(d.Text(text[last : match.start()]))
        out.append(d.Link((d.Text(match.group(1)),), match.group(1)))
        last = match.end()
    if last < len(text):
        out.append(d.Text(text[last:]))
    return out


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _style_problem(path: str, deck: d.Deck, library: Library) -> Diagnostic:
    """Why the deck has no style, at its ``csl:`` (or at ``[tool.slidegen] csl`` when that names it)."""
    first = deck.slides[0] if deck.slides else None
    line, col = first.frontmatter_at.get("csl", (1, 1)) if first else (1, 1)
    if "csl" not in deck.headmatter and library.configured:
        pyproject = library.root / "pyproject.toml"
        return Diagnostic(display_path(pyproject), key_line(pyproject, "csl"), 1, library.style_problem({}))
    return Diagnostic(path, line, col, library.style_problem(deck.headmatter))
