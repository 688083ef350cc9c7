"""Bound deck -> Markdown for other tools: Slidev (``--to md``) or Marp (``--to marp``).

A writer over the document model, like the HTML and PowerPoint ones: it reads the BOUND
:class:`~slidegen.deck.Deck` (every ``{{ reference }}`` already replaced by its text) and
prints each node back as Markdown, so the output holds no reference and needs nothing of
slidegen. Pictures (``fig:`` figures and files beside the deck) are copied to ``media/``
next to the Markdown and linked by relative paths.

Slidev flavour: the headmatter, ``---`` between slides, each slide's frontmatter (layout,
id, image...) as YAML, ``<v-click>``/``<v-clicks>`` and ```` ```py {2-3|5} ```` kept, the
notes as the slide's final HTML comment.

Marp flavour: ``marp: true``, ``paginate: true``, ``size: 16:9`` and ``math: katex`` in the
front-matter, with the deck title and chapter as Marp's footer; layouts mapped as well as
Marp can: ``<!-- _class: lead -->`` for cover, section, center, fact, statement and end
(``lead invert`` for the dark ones), the picture of ``image-left``/``image-right`` as a split
background (``![bg left contain](...)``), two columns one after the other, ``<v-clicks>``
lists as Marp's fragmented lists (``*`` bullets, ``1)`` numbers), other clicks shown, and
rules inside a slide (``***``) left out, since Marp starts a new slide at any of them. Notes
are HTML comments, which Marp turns into presenter notes.

Links to a slide (``#id``) become slide numbers (``#5`` in Marp, ``/5`` in Slidev); links
to another deck (``NN-slug.md#id``) stay as written for Slidev (the other deck's Markdown sits
beside this one) and point at ``NN-slug.html#N`` for Marp (its HTML output), with the slide
number when the other deck can be read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from .assets import copy_media
from .atomic import atomic_write
from .deck import (
    Block,
    BulletList,
    Click,
    Code,
    CodeBlock,
    Deck,
    Emph,
    Figure,
    Heading,
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
    Ref,
    Rule,
    Slide,
    SoftBreak,
    Strike,
    Strong,
    Table,
    Text,
)

FLAVORS = ("md", "marp")

#: Layouts Marp shows as a centred "lead" slide; the dark ones also get Marp's ``invert``.
MARP_LEAD = frozenset({"cover", "section", "center", "fact", "statement", "end"})
MARP_DARK = frozenset({"section", "fact", "statement", "end"})

#: Characters that mean something inline in Markdown (or in Slidev's Vue templates).
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]$~|])")
#: A line that would start a block (heading, list, quote, rule, slide separator, slot, fence).
_BLOCK_START = re.compile(r"^(\s*)(#{1,6}(?=\s|$)|[-+*](?=\s|$)|\d{1,9}(?=[.)](?:\s|$))|>|-{3,}|={3,}|::|~~~|```)")


class MarkdownWriter:
    """Prints one bound deck as Markdown of one flavour (``"md"`` for Slidev, ``"marp"``)."""

    def __init__(
        self,
        deck: Deck,
        media_urls: Mapping[str, str],
        flavor: str = "md",
        slide_number: Callable[[str, str], int | None] | None = None,
    ) -> None:
        if flavor not in FLAVORS:
            raise ValueError(f"unknown Markdown flavour {flavor!r}; choose from {', '.join(FLAVORS)}")
        self.deck = deck
        self.media_urls = media_urls
        self.flavor = flavor
        self.marp = flavor == "marp"
        self.slide_number = slide_number or (lambda _deck, _id: None)
        self.ids = {slide.id: slide.index for slide in deck.slides if slide.id}

    # ------------------------------------------------------------------ the deck

    def deck_text(self) -> str:
        """The whole file."""
        parts = []
        for slide in self.deck.slides:
            parts.append(self.slide_text(slide))
        return "\n\n".join(parts).rstrip() + "\n"

    def headmatter(self) -> dict:
        """The file's first front-matter."""
        if self.marp:
            head: dict = {"marp": True, "paginate": True, "size": "16:9", "theme": "default", "math": "katex"}
            if self.deck.title:
                head["title"] = self.deck.title
            for key in ("author", "description"):
                if self.deck.headmatter.get(key):
                    head[key] = str(self.deck.headmatter[key])
            if self.deck.headmatter.get("summary") and "description" not in head:
                head["description"] = str(self.deck.headmatter["summary"])
            footer = self.footer()
            if footer:
                head["footer"] = footer
            return head
        first = self.deck.slides[0] if self.deck.slides else None
        head = dict(self.deck.headmatter)
        if first is not None:
            head.update(self.frontmatter(first))
        if head.get("theme") == "slidegen":  # not a Slidev theme: Slidev would try to install it
            del head["theme"]
        return head

    def footer(self) -> str:
        """Deck title and chapter, as the HTML and PPTX footers show them."""
        chapter = self.deck.headmatter.get("chapter")
        parts = [self.deck.title] if self.deck.title else []
        if chapter not in (None, ""):
            parts.append(f"Chapter {chapter}")
        return escape_text(" · ".join(parts))

    def frontmatter(self, slide: Slide) -> dict:
        """A slide's own frontmatter as Slidev reads it, with its picture's new path."""
        fm = dict(slide.frontmatter)
        image = fm.get("image")
        if isinstance(image, str) and image in self.media_urls:
            fm["image"] = self.media_urls[image]
        return fm

    def slide_text(self, slide: Slide) -> str:
        """One slide, its separator and front-matter included."""
        if self.marp:
            return self.marp_slide(slide)
        if slide.index == 1:
            head = _yaml_block(self.headmatter()) if self.headmatter() else ""
        else:
            fm = self.frontmatter(slide)
            head = _yaml_block(fm) if fm else "---\n"
        body = self.body(slide)
        notes = self.notes(slide)
        return (head + "\n" if head else "") + "\n\n".join(part for part in (body, notes) if part)

    def marp_slide(self, slide: Slide) -> str:
        head = _yaml_block(self.headmatter()) if slide.index == 1 else "---\n"
        directives = []
        if slide.layout in MARP_LEAD:
            classes = "lead invert" if slide.layout in MARP_DARK else "lead"
            directives.append(f"<!-- _class: {classes} -->")
        image = slide.frontmatter.get("image") if slide.layout in ("image-left", "image-right") else None
        if isinstance(image, str) and image:
            side = "left" if slide.layout == "image-left" else "right"
            url = self.media_urls.get(image, image)
            directives.append(f"![bg {side} contain]({_url(url)})")
        body = self.body(slide)
        notes = self.notes(slide)
        return head + "\n" + "\n\n".join(part for part in ("\n\n".join(directives), body, notes) if part)

    def body(self, slide: Slide) -> str:
        blocks = self.blocks(slide.blocks)
        if slide.layout == "cover" and not any(isinstance(b, Heading) for b in slide.blocks):
            blocks = "\n\n".join(p for p in (f"# {escape_text(slide.title or self.deck.title)}", blocks) if p)
        right = slide.slots.get("right")
        if right is not None and slide.layout == "two-cols":
            separator = "" if self.marp else "::right::"
            blocks = "\n\n".join(p for p in (blocks, separator, self.blocks(right)) if p)
        return blocks

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
        if isinstance(node, Heading):
            return "#" * min(max(node.level, 1), 6) + " " + self.inlines(node.children).replace("\n", " ")
        if isinstance(node, Paragraph):
            return self.inlines(node.children)
        if isinstance(node, (BulletList, OrderedList)):
            return self.list(node, fragmented=False)
        if isinstance(node, CodeBlock):
            return self.code_block(node, notes)
        if isinstance(node, MathBlock):
            return f"$$\n{node.tex.strip()}\n$$"
        if isinstance(node, Table):
            return self.table(node)
        if isinstance(node, Figure):
            title = f' "{_title(node.title)}"' if node.title else ""
            return f"![{escape_text(node.alt)}]({_url(self.media_urls.get(node.src, node.src))}{title})"
        if isinstance(node, Quote):
            inner = self.blocks(node.blocks, notes)
            return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
        if isinstance(node, Rule):  # every thematic break starts a new slide in Marp: left out
            return "" if self.marp else "***"
        if isinstance(node, Click):
            return self.click(node, notes)
        return ""

    def click(self, node: Click, notes: bool) -> str:
        if notes:
            return self.blocks(node.blocks, notes)
        if self.marp:  # Marp has fragmented lists only: the rest shows at once
            if node.each:
                return "\n\n".join(
                    self.list(b, fragmented=True) if isinstance(b, (BulletList, OrderedList)) else self.block(b)
                    for b in node.blocks
                )
            return self.blocks(node.blocks)
        tag = "v-clicks" if node.each else "v-click"
        return f"<{tag}>\n\n{self.blocks(node.blocks)}\n\n</{tag}>"

    def list(self, node: BulletList | OrderedList, fragmented: bool) -> str:
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
        info = node.lang
        if node.steps and not self.marp and not notes:
            spec = "|".join(",".join(_ranges(step)) if step else "all" for step in node.steps)
            info = f"{info} {{{spec}}}".strip()
        return f"{fence}{info}\n{node.code.rstrip(chr(10))}\n{fence}"

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
        return "\n".join(_BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line, count=1)
                         for line in text.split("\n"))

    def inline(self, node: Inline) -> str:
        if isinstance(node, Text):
            return escape_text(node.text)
        if isinstance(node, Ref):  # bound: its text; unbound (never in a bound deck): the key
            return escape_text(node.text if node.text is not None else node.key)
        if isinstance(node, Code):
            ticks = "`" * (_longest_run(node.text, "`") + 1)
            pad = " " if node.text.startswith("`") or node.text.endswith("`") else ""
            return f"{ticks}{pad}{node.text}{pad}{ticks}"
        if isinstance(node, Emph):
            return f"*{self.inlines(node.children)}*"
        if isinstance(node, Strong):
            return f"**{self.inlines(node.children)}**"
        if isinstance(node, Strike):
            return f"~~{self.inlines(node.children)}~~"
        if isinstance(node, Link):
            title = f' "{_title(node.title)}"' if node.title else ""
            return f"[{self.inlines(node.children)}]({_url(self.link_target(node.url))}{title})"
        if isinstance(node, Image):
            title = f' "{_title(node.title)}"' if node.title else ""
            return f"![{escape_text(node.alt)}]({_url(self.media_urls.get(node.src, node.src))}{title})"
        if isinstance(node, Math):
            return f"${node.tex.strip()}$"
        if isinstance(node, SoftBreak):
            return "\n"
        if isinstance(node, LineBreak):
            return "\\\n"
        return ""

    def link_target(self, url: str) -> str:
        """Slide links as the target tool reads them; web links unchanged."""
        parts = urlsplit(url)
        if parts.scheme:
            return url
        path, _, fragment = url.partition("#")
        if not path:
            number = self.ids.get(fragment)
            if number is None:
                return url
            return f"#{number}" if self.marp else f"/{number}"
        if path.endswith(".md"):
            number = self.slide_number(path, fragment) if fragment else None
            if self.marp:
                path = path[: -len(".md")] + ".html"
                return path + (f"#{number}" if number else "")
        return url


def escape_text(text: str) -> str:
    """Plain text as Markdown that prints it unchanged in Slidev, Marp and CommonMark."""
    text = re.sub(r"&(?=#?\w+;)", "&amp;", text)  # would read as an entity
    text = _INLINE_SPECIAL.sub(r"\\\1", text)
    text = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)  # would open an HTML tag
    return text.replace("{{", "&#123;&#123;")  # Slidev compiles slides as Vue templates


def write_deck(
    deck: Deck,
    out_dir: Path,
    media: Mapping[str, Path],
    flavor: str = "md",
) -> Path:
    """Write ``out_dir/SLUG.md`` (atomically), its pictures in ``out_dir/media``.

    ``deck`` must be bound; ``media`` maps each picture's ``src`` to its file (the HTML
    writer's choice: figures may be SVG).
    """
    out_dir = Path(out_dir)
    urls = copy_media(media, out_dir)  # the same names as in the HTML output: media/STEM-HASH.EXT
    writer = MarkdownWriter(deck, urls, flavor, slide_number=_sibling_numbers(deck))
    target = out_dir / f"{deck.slug}.md"
    atomic_write(target, writer.deck_text())
    return target


def _sibling_numbers(deck: Deck) -> Callable[[str, str], int | None]:
    """Looks up the slide number of ``id`` in the deck file ``name`` beside ``deck`` (cached)."""
    cache: dict[str, dict[str, int]] = {}

    def number(name: str, slide_id: str) -> int | None:
        if name not in cache:
            from .errors import SlidegenError
            from .parse import parse_deck

            path = deck.path.parent / name
            try:
                other = parse_deck(path) if path.is_file() else None
            except SlidegenError:
                other = None
            cache[name] = {s.id: s.index for s in other.slides if s.id} if other else {}
        return cache[name].get(slide_id)

    return number


def _yaml_block(data: Mapping) -> str:
    dumped = yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{dumped}---\n"


def _url(url: str) -> str:
    """A link destination: in angle brackets when it holds spaces or parentheses."""
    if re.search(r"[\s()<>]", url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


def _title(title: str) -> str:
    return title.replace("\\", "\\\\").replace('"', '\\"')


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", text)
    return max((len(r) for r in runs), default=0)


def _ranges(lines: Sequence[int]) -> list[str]:
    """``(1, 2, 3, 5)`` -> ``["1-3", "5"]``."""
    out: list[str] = []
    start = prev = None
    for n in lines:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return out
