"""Slidev Markdown (``--to md``): the deck as Slidev reads it, every number already in place.

The headmatter, ``---`` between slides, each slide's frontmatter (layout, id, image...) as
YAML, slot markers (``::right::``), ``<v-click>``/``<v-clicks>`` and ```` ```py {2-3|5} ````
kept, the notes as the slide's final HTML comment. Links to a slide of this deck (``#id``)
become ``/N``; links to another deck (``NN-slug.md#id``) stay as written, since the other
deck's Markdown sits beside this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slidegen.deck.nodes import Click, CodeBlock, MathBlock, Slide
from slidegen.write.markdown.base import MarkdownWriter, yaml_block


class SlidevWriter(MarkdownWriter):
    """Prints one bound deck as Slidev Markdown."""

    def headmatter(self) -> dict[str, Any]:
        """The file's first front-matter: the deck's headmatter and slide 1's own frontmatter."""
        first = self.deck.slides[0] if self.deck.slides else None
        head = dict(self.deck.headmatter)
        if first is not None:
            head.update(self.frontmatter(first))
        if head.get("theme") == "slidegen":  # not a Slidev theme: Slidev would try to install it
            del head["theme"]
        return head

    def frontmatter(self, slide: Slide) -> dict[str, Any]:
        """A slide's own frontmatter as Slidev reads it, with its picture's new path."""
        fm = dict(slide.frontmatter)
        image = fm.get("image")
        if isinstance(image, str) and image in self.media_urls:
            fm["image"] = self.media_urls[image]
        if fm.get("layout") == "references":  # not a Slidev layout: a plain slide, classed for a theme to style
            fm["layout"], fm["class"] = "default", "references"
        return fm

    def slide_text(self, slide: Slide) -> str:
        if slide.index == 1:
            head = self.headmatter()
            separator = yaml_block(head) if head else ""
        else:
            fm = self.frontmatter(slide)
            separator = yaml_block(fm) if fm else "---\n"
        parts = (self.body(slide), self.notes(slide))
        return (separator + "\n" if separator else "") + "\n\n".join(part for part in parts if part)

    def slot_marker(self, name: str) -> str:
        return f"::{name}::"

    def rule(self) -> str:
        return "***"

    def click(self, node: Click) -> str:
        tag = "v-clicks" if node.each else "v-click"
        attrs = "".join(
            [
                f' at="{node.at}"' if node.at else "",
                " hide" if node.hide else "",
                " fade" if node.fade else "",
                f' depth="{node.depth}"' if node.each and node.depth != 1 else "",
                f' every="{node.every}"' if node.each and node.every != 1 else "",
            ]
        )
        return f"<{tag}{attrs}>\n\n{self.blocks(node.blocks)}\n\n</{tag}>"

    def math_info(self, node: MathBlock, notes: bool) -> str:
        """`` {1|3|all}``: the formula's line steps, outside the notes."""
        if notes or len(node.steps) < 2:
            return ""
        return " {" + "|".join("none" if s == (0,) else ",".join(_ranges(s)) if s else "all" for s in node.steps) + "}"

    def code_info(self, node: CodeBlock, notes: bool) -> str:
        """The language, then the highlight steps (``{2-3|5}``) outside the notes."""
        options = ",".join(
            [
                f"at:'{node.at}'" if node.at else "",
                f"lines:{str(node.line_numbers).lower()}" if node.line_numbers is not None else "",
                f"startLine:{node.start_line}" if node.start_line != 1 else "",
                f"maxHeight:'{node.max_height}'" if node.max_height else "",
            ]
        ).strip(",")
        options = ",".join(part for part in options.split(",") if part)
        if notes or not (node.steps or options):
            return node.lang
        spec = "|".join("none" if step == (0,) else ",".join(_ranges(step)) if step else "all" for step in node.steps)
        return f"{node.lang} {{{spec or 'all'}}}" + (f"{{{options}}}" if options else "")

    def slide_link(self, number: int) -> str:
        return f"/{number}"

    def deck_link(self, url: str, path: str, number: int | None) -> str:
        return url


def _ranges(lines: Sequence[int]) -> list[str]:
    """``(1, 2, 3, 5)`` -> ``["1-3", "5"]``."""
    runs: list[list[int]] = []
    for n in lines:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return [f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]
