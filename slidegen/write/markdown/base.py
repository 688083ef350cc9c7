"""What the Slidev and Marp writers share: printing the deck model's blocks and inlines as Markdown.

:class:`MarkdownWriter` prints every node kind (an exhaustive ``match``: a node kind it does
not know fails loudly instead of vanishing) and leaves to each flavour what differs: the
front-matter, a slide's separator and directives, slot markers, thematic breaks, clicks, code
highlight steps and the form of a link to a slide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

import yaml

from slidegen.deck import links, rawimages
from slidegen.deck.layouts import layout
from slidegen.deck.nodes import (
    Block,
    BulletList,
    Cite,
    Click,
    Code,
    CodeBlock,
    Deck,
    DeckIndex,
    Emph,
    Figure,
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
    cite_source,
)

#: Characters that mean something inline in Markdown (or in Slidev's Vue templates).
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]$~|])")
#: A line that would start a block (heading, list, quote, rule, slide separator, slot, fence).
_BLOCK_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|[-+*](?=\s|$)|\d{1,9}(?=[.)](?:\s|$))|>|-{3,}|={3,}|::|~~~|```)")


class MarkdownWriter:
    """Prints one bound deck as Markdown; a subclass per flavour says what differs."""

    def __init__(self, deck: Deck, media_urls: Mapping[str, str], index: DeckIndex) -> None:
        self.deck = deck
        self.media_urls = media_urls
        self.index = index
        self.ids = {slide.id: slide.index for slide in deck.slides if slide.id}

    # ------------------------------------------------------------------ what each flavour decides

    def slide_text(self, slide: Slide) -> str:
        """One slide, its separator and front-matter included."""
        raise NotImplementedError

    def slot_marker(self, name: str) -> str:
        """What stands between the default slot and the slot ``name`` ("" for none)."""
        raise NotImplementedError

    def rule(self) -> str:
        """A thematic break inside a slide ("" to leave it out)."""
        raise NotImplementedError

    def click(self, node: Click) -> str:
        """Content revealed on a click, outside the notes."""
        raise NotImplementedError

    def math_info(self, node: MathBlock, notes: bool) -> str:
        """What follows a formula's opening ``$$``: nothing here (Slidev's writer adds its line steps)."""
        return ""

    def code_info(self, node: CodeBlock, notes: bool) -> str:
        """The info string after a code fence's backticks: the language."""
        return node.lang

    def slide_link(self, number: int) -> str:
        """A link to slide ``number`` of this deck."""
        raise NotImplementedError

    def deck_link(self, url: str, path: str, number: int | None) -> str:
        """A link ``url`` to another deck's Markdown file ``path``, whose slide ``number`` it names if known."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the deck

    def deck_text(self) -> str:
        """The whole file."""
        return "\n\n".join(self.slide_text(slide) for slide in self.deck.slides).rstrip() + "\n"

    def body(self, slide: Slide) -> str:
        """The slide's content: the default slot, then the layout's named slots, each after its marker."""
        blocks = self.blocks(slide.blocks)
        if slide.layout == "cover" and not any(isinstance(b, Heading) for b in slide.blocks):
            blocks = "\n\n".join(p for p in (f"# {escape_text(slide.title or self.deck.title)}", blocks) if p)
        for name in layout(slide.layout).slot_names:
            slot = slide.slots.get(name)
            if slot is not None:
                blocks = "\n\n".join(p for p in (blocks, self.slot_marker(name), self.blocks(slot)) if p)
        return "\n\n".join(p for p in (blocks, self.footnotes(slide), self.glossary_line(slide)) if p)

    def glossary_line(self, slide: Slide) -> str:
        """The footer's back-links to the glossary entries the slide explains, as a small last line."""
        if not slide.glossary:
            return ""
        refs = ", ".join(
            f"[{escape_text(link.term)}]({destination(self.link_target(link.url))})" for link in slide.glossary
        )
        return f"<small>Glossary: {refs}</small>"

    def footnote_ref(self, node: FootnoteRef) -> str:
        return f"[^{node.label}]"

    def footnotes(self, slide: Slide) -> str:
        """The slide's footnote definitions (``[^label]: text``), after its content."""
        out = []
        for note in slide.footnotes:
            text = self.blocks(note.blocks).replace("\n", "\n    ")
            out.append(f"[^{note.label}]: {text}")
        return "\n".join(out)

    def notes(self, slide: Slide) -> str:
        """The notes as the slide's last HTML comment (``-->`` inside them defused)."""
        if not slide.notes_blocks:
            return ""
        text = self.blocks(slide.notes_blocks, notes=True).replace("-->", "--&gt;")
        return f"<!--\n{text}\n-->"

    # ------------------------------------------------------------------ blocks

    def blocks(self, blocks: Sequence[Block], notes: bool = False) -> str:
        return "\n\n".join(text for text in (self.block(b, notes) for b in blocks) if text)

    def block(self, node: Block, notes: bool = False) -> str:
        match node:
            case Heading():
                return "#" * min(max(node.level, 1), 6) + " " + self.inlines(node.children).replace("\n", " ")
            case Paragraph():
                return self.inlines(node.children)
            case BulletList() | OrderedList():
                return self.list(node, fragmented=False)
            case CodeBlock():
                return self.code_block(node, notes)
            case MathBlock():
                return f"$${self.math_info(node, notes)}\n{node.tex.strip()}\n$$"
            case Table():
                return self.table(node)
            case Figure():
                return self.picture(node.alt, node.src, node.title)
            case Quote():
                inner = self.blocks(node.blocks, notes)
                return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
            case Rule():
                return self.rule()
            case Click():
                return self.blocks(node.blocks, notes) if notes else self.click(node)
            case RawHtml():
                return rawimages.rewrite(node.html, self.media_urls)  # HTML as written, its pictures copied
            case _:
                assert_never(node)

    def list(self, node: BulletList | OrderedList, fragmented: bool) -> str:
        """A list; ``fragmented`` uses the markers Marp reveals item by item (``*``, ``1)``)."""
        out = []
        for number, item in enumerate(node.items, start=node.start if isinstance(node, OrderedList) else 1):
            if isinstance(node, OrderedList):
                marker = f"{number})" if fragmented else f"{number}."
            else:
                marker = "*" if fragmented else "-"
            out.append(self.list_item(item, marker + " "))
        loose = any(sum(not isinstance(b, (BulletList, OrderedList)) for b in i.blocks) > 1 for i in node.items)
        return ("\n\n" if loose else "\n").join(out)

    def list_item(self, item: ListItem, marker: str) -> str:
        pieces = []
        for i, block in enumerate(item.blocks):
            text = self.block(block)
            if i and not isinstance(block, (BulletList, OrderedList)):
                text = "\n" + text  # a second paragraph: a blank line before it
            pieces.append(text)
        text = "\n".join(pieces) or ""
        pad = " " * len(marker)
        lines = text.split("\n")
        return marker + lines[0] + "".join("\n" + (pad + line if line else "") for line in lines[1:])

    def code_block(self, node: CodeBlock, notes: bool) -> str:
        fence = "`" * max(3, _longest_run(node.code, "`") + 1)
        return f"{fence}{self.code_info(node, notes)}\n{node.code.rstrip(chr(10))}\n{fence}"

    def table(self, node: Table) -> str:
        def cell(inlines: Sequence[Inline]) -> str:
            return self.inlines(inlines).replace("\n", " ").strip() or " "

        columns = max([len(node.header), *(len(r) for r in node.rows)])
        rule = {"left": ":---", "center": ":---:", "right": "---:"}
        aligns = [rule.get(node.aligns[i] if i < len(node.aligns) else "", "---") for i in range(columns)]
        header = [cell(c) for c in node.header] + [" "] * (columns - len(node.header))
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(aligns) + "|"]
        for row in node.rows:
            cells = [cell(c) for c in row] + [" "] * (columns - len(row))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    # ------------------------------------------------------------------ inlines

    def inlines(self, nodes: Sequence[Inline]) -> str:
        text = "".join(self.inline(n) for n in nodes)
        # a line that would read as a block marker (heading, list, separator...) is escaped
        return "\n".join(
            _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1) for line in text.split("\n")
        )

    def inline(self, node: Inline) -> str:  # noqa: C901 (one branch per inline node type)
        match node:
            case Text():
                return escape_text(node.text)
            case Ref():  # bound: its text; unbound (never in a bound deck): the key
                return escape_text(node.text if node.text is not None else node.key)
            case Cite():  # cited: the formatted text; not cited (a deck built without a bibliography): as written
                return escape_text(node.text if node.text is not None else cite_source(node))
            case Code():
                ticks = "`" * (_longest_run(node.text, "`") + 1)
                pad = " " if node.text.startswith("`") or node.text.endswith("`") else ""
                return f"{ticks}{pad}{node.text}{pad}{ticks}"
            case Emph():
                return f"*{self.inlines(node.children)}*"
            case Strong():
                return f"**{self.inlines(node.children)}**"
            case Strike():
                return f"~~{self.inlines(node.children)}~~"
            case Link():
                title = f' "{_title(node.title)}"' if node.title else ""
                return f"[{self.inlines(node.children)}]({destination(self.link_target(node.url))}{title})"
            case Image():
                return self.picture(node.alt, node.src, node.title)
            case Math():
                return f"${node.tex.strip()}$"
            case SoftBreak():
                return "\n"
            case LineBreak():
                return "\\\n"
            case HtmlSpan():
                return f"<{node.tag}{node.attrs}>{self.inlines(node.children)}</{node.tag}>"
            case RawInline():
                return rawimages.rewrite(node.html, self.media_urls)
            case FootnoteRef():
                return self.footnote_ref(node)
            case _:
                assert_never(node)

    def picture(self, alt: str, src: str, title: str) -> str:
        """An image, linked to its copy in ``media/``."""
        quoted = f' "{_title(title)}"' if title else ""
        return f"![{escape_text(alt)}]({destination(self.media_urls.get(src, src))}{quoted})"

    def link_target(self, url: str) -> str:
        """Slide links as the target tool reads them; web links unchanged."""
        to = links.target(url)
        if to.external:
            return url
        if not to.path:
            number = self.ids.get(to.fragment)
            return url if number is None else self.slide_link(number)
        if to.other_deck:
            fragment = to.fragment
            return self.deck_link(url, to.path, self.index.slide_number(to.path, fragment) if fragment else None)
        return url


def escape_text(text: str) -> str:
    """Plain text as Markdown that prints it unchanged in Slidev, Marp and CommonMark."""
    text = re.sub(r"&(?=#?\w+;)", "&amp;", text)  # would read as an entity
    text = _INLINE_SPECIAL.sub(r"\\\1", text)
    text = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)  # would open an HTML tag
    return text.replace("{{", "&#123;&#123;")  # Slidev compiles slides as Vue templates


def yaml_block(data: Mapping[str, Any]) -> str:
    """``data`` as a front-matter block between ``---`` lines, in its own key order."""
    dumped = yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{dumped}---\n"


def destination(url: str) -> str:
    """A link destination: in angle brackets when it holds spaces or parentheses."""
    if re.search(r"[\s()<>]", url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _title(title: str) -> str:
    return title.replace("\\", "\\\\").replace('"', '\\"')


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(r) for r in runs), default=0)
