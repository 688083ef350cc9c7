"""Marp Markdown (``--to marp``): the deck as Marp reads it, layouts mapped as well as Marp can.

``marp: true``, ``paginate: true``, ``size: 16:9`` and ``math: katex`` in the front-matter,
with the deck title and chapter as Marp's footer. Each layout maps from its facts in
:mod:`slidegen.deck.layouts`: a centred layout with centred text is Marp's ``lead`` slide
(``<!-- _class: lead -->``, plus ``invert`` when its tone is dark); a layout's picture side
becomes a split background (``![bg left contain](...)``, ``![bg cover](...)`` for the whole
slide); an iframe layout's page becomes its address, as a link; named slots follow the default one
(two columns one after the other). ``<v-clicks>`` lists become Marp's fragmented lists
(``*`` bullets, ``1)`` numbers); other clicks show at once; rules inside a slide (``***``)
are left out, since Marp starts a new slide at any of them. Notes are HTML comments, which
Marp turns into presenter notes. Links to a slide become ``#N``; links to another deck
point at its HTML output, ``NN-slug.html#N``.
"""

from __future__ import annotations

from typing import Any

from slidegen.deck.layouts import Layout, layout
from slidegen.deck.nodes import BulletList, Click, FootnoteRef, OrderedList, Slide
from slidegen.write.markdown.base import MarkdownWriter, destination, escape_text, yaml_block


def marp_class(spec: Layout) -> str | None:
    """Marp's class for a slide of layout ``spec``: ``lead`` when its text is centred (``lead invert`` when dark),
    ``invert`` for a dark one that stands flush left (a section), or none."""
    if not (spec.centered and spec.align == "center"):
        return "invert" if spec.dark else None
    return "lead invert" if spec.dark else "lead"


class MarpWriter(MarkdownWriter):
    """Prints one bound deck as Marp Markdown."""

    def headmatter(self) -> dict[str, Any]:
        """The file's front-matter: Marp's settings, the deck's title, author and description."""
        head: dict[str, Any] = {"marp": True, "paginate": True, "size": "16:9", "theme": "default", "math": "katex"}
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

    def footer(self) -> str:
        """Deck title and chapter, as the HTML and PPTX footers show them."""
        chapter = self.deck.headmatter.get("chapter")
        parts = [self.deck.title] if self.deck.title else []
        if chapter not in (None, ""):
            parts.append(f"Chapter {chapter}")
        return escape_text(" · ".join(parts))

    def slide_text(self, slide: Slide) -> str:
        separator = yaml_block(self.headmatter()) if slide.index == 1 else "---\n"
        spec = layout(slide.layout)
        directives = []
        classes = marp_class(spec)
        if classes:
            directives.append(f"<!-- _class: {classes} -->")
        image = slide.frontmatter.get("image") if spec.image else None
        if isinstance(image, str) and image:
            url = self.media_urls.get(image, image)
            side = "" if spec.image == "full" else f"{spec.image} "
            fit = "cover" if spec.image == "full" else "contain"
            directives.append(f"![bg {side}{fit}]({destination(url)})")
        page = slide.frontmatter.get("url") if spec.frame else None
        if isinstance(page, str) and page:
            directives.append(f"Web page: <{page}>")  # Marp has no iframe: the address, as a link
        parts = ("\n\n".join(directives), self.body(slide), self.notes(slide))
        return separator + "\n" + "\n\n".join(part for part in parts if part)

    def slot_marker(self, name: str) -> str:
        return ""

    def footnote_ref(self, node: FootnoteRef) -> str:
        return f"<sup>{node.number}</sup>"  # Marp has no footnotes: the number, raised

    def footnotes(self, slide: Slide) -> str:
        """Marp has no footnotes: each one a small paragraph at the end of the slide."""
        return "\n\n".join(
            f"<small><sup>{note.number}</sup> {self.blocks(note.blocks)}</small>" for note in slide.footnotes
        )

    def rule(self) -> str:
        return ""  # every thematic break starts a new slide in Marp: left out

    def click(self, node: Click) -> str:
        """Marp has fragmented lists only: ``<v-clicks>`` lists reveal item by item, the rest shows at once."""
        if not node.each:
            return self.blocks(node.blocks)
        return "\n\n".join(
            self.list(b, fragmented=True) if isinstance(b, (BulletList, OrderedList)) else self.block(b)
            for b in node.blocks
        )

    def slide_link(self, number: int) -> str:
        return f"#{number}"

    def deck_link(self, url: str, path: str, number: int | None) -> str:
        return path[: -len(".md")] + ".html" + (f"#{number}" if number else "")
