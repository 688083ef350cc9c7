"""A project's interactive slides: web components in ``components/``, the instances decks use, checks.

``components/NAME.js`` defines one custom element whose tag is NAME (``customElements.define("NAME",
...)``); ``components/NAME.css``, when it exists, styles it. A slide uses one as raw HTML
(``<lr-schedule peak="{{ ch05.lr.best }}" alt="..."></lr-schedule>``); after binding, its attributes
hold the numbers as the slide shows them. The HTML writer loads the scripts a deck uses;
PowerPoint gets a picture of each instance (:mod:`slidegen.write.snapshot`), found under
its node's ``picture_key``. Mermaid diagrams (:class:`~slidegen.deck.nodes.Diagram`) are pictures the same
way. Which elements of a slide are components the reader decides (:mod:`slidegen.deck.htmlkinds`): each is
a :class:`~slidegen.deck.nodes.Component` node.

Attributes slidegen reads itself: ``alt`` (required: the picture's alt text), ``print-state``
(the state the picture shows; the element interprets it), ``fallback="fig:NAME"`` (the figure
PowerPoint shows when no Chromium can draw the picture) and ``run="ch01.trainer"`` (the page
defines ``window.SLIDEGEN_RUNS["ch01.trainer"]``, that experiment's record from
``results/runs/``, before any component script runs: a component reads a run as a figure does).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from slidegen.deck import nodes as d
from slidegen.deck.htmlkinds import is_custom_tag
from slidegen.deck.nodes import (
    Block,
    ComponentBlock,
    Deck,
    Diagram,
    Slide,
    block_inlines,
    slide_blocks,
    walk_blocks,
    walk_inlines,
)
from slidegen.errors import Diagnostic, display_path

COMPONENTS_DIR = "components"
#: Pixels per CSS pixel in the pictures of components and diagrams (a 1280 px slide drawn 2560 px wide).
PICTURE_SCALE = 2
#: What PowerPoint's notes of a slide with a component end with.
INTERACTIVE_NOTE = "Interactive in the HTML deck"

_DEFINE_RE = re.compile(r"""customElements\s*\.\s*define\s*\(\s*(["'`])([^"'`]*)\1""")
# --------------------------------------------------------------------------- the project's components


@dataclass(frozen=True)
class Component:
    """One ``components/NAME.js``: the tags it defines, and its stylesheet if it has one."""

    name: str
    script: Path
    css: Path | None
    defines: tuple[str, ...]

    def code(self) -> bytes:
        """The script and the stylesheet: what a picture's cache key follows."""
        css = self.css.read_bytes() if self.css else b""
        return self.script.read_bytes() + b"\0" + css


def discover(root: Path) -> dict[str, Component]:
    """The components of the project at ``root``, by file name (``components/NAME.js``)."""
    folder = Path(root) / COMPONENTS_DIR
    found: dict[str, Component] = {}
    if not folder.is_dir():
        return found
    for script in sorted(folder.glob("*.js")):
        text = script.read_text(encoding="utf-8", errors="replace")
        css = script.with_suffix(".css")
        defines = tuple(dict.fromkeys(m.group(2) for m in _DEFINE_RE.finditer(text)))
        found[script.stem] = Component(script.stem, script, css if css.is_file() else None, defines)
    return found


def by_tag(components: Mapping[str, Component]) -> dict[str, Component]:
    """The components by the tag each defines."""
    return {tag: c for c in components.values() for tag in c.defines}


def file_problems(components: Mapping[str, Component], root: Path) -> list[Diagnostic]:
    """A component file that defines no element, or another tag than its name, or an invalid one."""
    out: list[Diagnostic] = []
    for c in components.values():
        rel = f"{COMPONENTS_DIR}/{c.script.name}"
        if not c.defines:
            out.append(
                Diagnostic(
                    rel,
                    1,
                    1,
                    f"{rel} defines no custom element: write "
                    f'customElements.define("{c.name}", class extends HTMLElement {{...}})',
                )
            )
            continue
        text = c.script.read_text(encoding="utf-8", errors="replace")
        for tag in c.defines:
            at = text.find(tag)
            line = text.count("\n", 0, at) + 1
            col = at - text.rfind("\n", 0, at)
            if not is_custom_tag(tag):
                out.append(
                    Diagnostic(
                        rel, line, col, f"'{tag}' is not a valid custom element name (lower case, with a hyphen)"
                    )
                )
            elif tag != c.name:
                out.append(
                    Diagnostic(
                        rel,
                        line,
                        col,
                        f"{rel} defines <{tag}>: a component file defines the "
                        f"element it is named after, <{c.name}> (rename the file or the tag)",
                    )
                )
    return out


# --------------------------------------------------------------------------- instances on slides


@dataclass(frozen=True)
class Instance:
    """One custom element on a slide: the :class:`~slidegen.deck.nodes.Component` node (tag, attributes as
    bound, its picture's key) and where it is."""

    node: d.Component
    line: int
    slide: int
    """1-based number of the slide it is on."""

    @property
    def tag(self) -> str:
        return self.node.tag

    def attr(self, name: str) -> str | None:
        return self.node.attr(name)

    @property
    def key(self) -> str:
        return self.node.picture_key

    @property
    def element(self) -> str:
        """The element as one piece of HTML, for the picture's page."""
        return f"<{self.tag}{self.node.attrs}></{self.tag}>"


def _instance(node: d.Component, line: int, slide: int) -> Instance:
    return Instance(node, node.line or line, slide)


def block_instances(block: Block, slide: int) -> list[Instance]:
    """The custom elements of one block (not of the blocks inside it)."""
    line = getattr(block, "line", 0)
    if isinstance(block, ComponentBlock):
        return [_instance(c, line, slide) for c in block.components]
    out = []
    for node in walk_inlines(block_inlines(block)):
        if isinstance(node, d.Component):
            out.append(_instance(node, line, slide))
    return out


def slide_instances(slide: Slide) -> list[Instance]:
    """Every custom element on a slide's visible slots, in order."""
    return [i for b in walk_blocks(slide_blocks(slide)) for i in block_instances(b, slide.index)]


def instances(deck: Deck) -> Iterator[Instance]:
    """Every custom element the deck's slides show."""
    for slide in deck.slides:
        yield from slide_instances(slide)


def diagrams(deck: Deck) -> Iterator[tuple[Diagram, int]]:
    """Every Mermaid diagram the deck's slides show, with its slide number."""
    for slide in deck.slides:
        for block in walk_blocks(slide_blocks(slide)):
            if isinstance(block, Diagram):
                yield block, slide.index


def used(deck: Deck, components: Mapping[str, Component]) -> list[Component]:
    """The components ``deck`` uses, each once, in the order it first uses them."""
    tags = by_tag(components)
    seen = dict.fromkeys(tags[i.tag].name for i in instances(deck) if i.tag in tags)
    return [components[name] for name in seen]


def deck_problems(deck: Deck, components: Mapping[str, Component], rel: str | None = None) -> list[Diagnostic]:
    """An element no component defines (did you mean), one without ``alt``, a ``fallback`` that is no figure."""
    import difflib

    where = rel or display_path(deck.path)
    tags = by_tag(components)
    out: list[Diagnostic] = []
    for inst in instances(deck):
        if inst.tag not in tags:
            close = difflib.get_close_matches(inst.tag, list(tags), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            defined = ", ".join(sorted(tags)) or "none"
            out.append(
                Diagnostic(
                    where,
                    inst.line,
                    1,
                    f"<{inst.tag}> is not defined by any file in "
                    f"{COMPONENTS_DIR}/{hint}; components defined: {defined}",
                )
            )
            continue
        if not (inst.attr("alt") or "").strip():
            out.append(
                Diagnostic(
                    where,
                    inst.line,
                    1,
                    f"<{inst.tag}> needs an alt attribute: the text of its picture in PowerPoint and PDF",
                )
            )
        fallback = inst.attr("fallback")
        if fallback is not None and not fallback.startswith("fig:"):
            out.append(
                Diagnostic(
                    where, inst.line, 1, f"<{inst.tag}> fallback='{fallback}' must name a figure: fallback=\"fig:NAME\""
                )
            )
    return out


def fallbacks(deck: Deck) -> Iterator[tuple[str, int]]:
    """Every ``fallback="fig:NAME"`` of the deck's components, with its line (figures to draw)."""
    for inst in instances(deck):
        fallback = inst.attr("fallback")
        if fallback and fallback.startswith("fig:"):
            yield fallback, inst.line


RUN_ID_RE = re.compile(r"[a-z][a-z0-9]*(?:\.[a-z0-9_-]+)+")


def run_refs(deck: Deck) -> Iterator[tuple[str, int]]:
    """Every ``run="ID"`` of the deck's components, with its line (records the page must define)."""
    for inst in instances(deck):
        run = inst.attr("run")
        if run is not None:
            yield run, inst.line


def run_problem(run: str, runs_dir: Path) -> str | None:
    """Why ``run="RUN"`` cannot be given to a component (``None``: it can)."""
    if not RUN_ID_RE.fullmatch(run):
        return f"run='{run}' must name an experiment, like run=\"ch01.default\""
    if not (runs_dir / f"{run}.json").is_file():
        return f"run '{run}' has no record (looked for {runs_dir / (run + '.json')}); `slidegen run {run}` records it"
    return None
