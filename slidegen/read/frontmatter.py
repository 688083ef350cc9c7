"""The frontmatter keys a deck may use, and what slidegen does with them: one table each for slides and decks.

Every key is Slidev's (https://sli.dev/custom/ and its built-in layouts' props) or the project's
own (``chapter``, ``summary``...). A key in neither table, or one slidegen does not implement yet,
is a ``check`` warning naming it at its line: nothing a deck says is ignored without a word.
An iframe layout's page is a warning too: it needs the network.

Hidden slides (``hide: true`` or ``disabled: true``) stay in the parsed deck, so ``check`` still
checks them; :func:`visible` leaves them out before any writer sees the deck, so they are in no
output and take no slide number.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from slidegen.deck.layouts import layout
from slidegen.deck.nodes import Deck, Slide
from slidegen.deck.settings import TRANSITIONS, font_warnings, slidev_transition
from slidegen.errors import Diagnostic

#: Per-slide keys that slidegen implements (headmatter included: it is also slide 1's frontmatter).
SLIDE_KEYS: frozenset[str] = frozenset(
    {
        "layout",
        "id",
        "title",
        "class",
        "hide",
        "disabled",
        "image",
        "backgroundSize",
        "url",
        "level",
        "hideInToc",  # a <Toc /> indents a slide's entry by its level, leaves out one hidden from it
        "alt",  # slidegen's own: the alt text of a layout's picture
        "background",
        "transition",
        "zoom",
        "clicks",  # slidegen/deck/background.py, slidegen/deck/settings.py
        "src",  # slidegen/read/imports.py: the slide is replaced by another file's slides
    }
)

#: Headmatter keys that slidegen implements.
DECK_KEYS: frozenset[str] = frozenset(
    {
        "title",
        "author",
        "lang",
        "info",
        "theme",
        "chapter",
        "summary",
        "date",
        "description",  # the project's own
        "csl",
        "references",  # the citation style, and `references: false` for no references slide
        "titleTemplate",
        "aspectRatio",
        "canvasWidth",
        "colorSchema",
        "lineNumbers",
        "fonts",  # slidegen/deck/settings.py
        "defaults",  # frontmatter every slide starts from (slidegen/read/parse.py)
    }
)

#: Slidev keys that slidegen reads but does not implement yet, with what happens instead.
NOT_YET: dict[str, str] = {}


def is_hidden(slide: Slide) -> bool:
    """Whether the slide is left out of every output (Slidev's ``hide: true`` or ``disabled: true``)."""
    return any(slide.frontmatter.get(key) is True for key in ("hide", "disabled"))


def visible(deck: Deck) -> Deck:
    """``deck`` without its hidden slides, the others numbered from 1 again."""
    if not any(is_hidden(slide) for slide in deck.slides):
        return deck
    shown = [slide for slide in deck.slides if not is_hidden(slide)]
    return replace(deck, slides=tuple(replace(slide, index=number) for number, slide in enumerate(shown, start=1)))


def key_warnings(where: str, deck: Deck, whole: Deck | None = None) -> list[Diagnostic]:
    """A warning for every frontmatter key slidegen does not know or does not implement, at the key's line.

    ``deck`` may be the slides of one file of ``whole`` (:func:`slidegen.read.imports.by_file`): keys a slide takes
    from the headmatter's ``defaults`` or from a slide that imported it are warned about where they are written."""
    whole = whole or deck
    defaults = whole.headmatter.get("defaults")
    inherited = {*(defaults if isinstance(defaults, dict) else ()), *(k for s in whole.imports for k in s.frontmatter)}
    out: list[Diagnostic] = []
    for site in deck.imports:
        out += _keys(where, site.frontmatter, site.frontmatter_at, site.line, False, set())
    for slide in deck.slides:
        out += _keys(
            where,
            slide.frontmatter,
            slide.frontmatter_at,
            slide.line,
            slide.index == 1,
            inherited,
            imported=slide.path is not None,
        )
        if layout(slide.layout).frame and isinstance(slide.frontmatter.get("url"), str):
            line, _col = slide.frontmatter_at.get("url", (slide.line, 1))
            out.append(
                Diagnostic(
                    where,
                    line,
                    1,
                    f"{slide.layout} slide shows the web page "
                    f"{slide.frontmatter['url']}, which needs the network; PowerPoint and PDF "
                    "show its address",
                    "warning",
                )
            )
    return out


def _keys(
    where: str,
    frontmatter: dict[str, Any],
    at: dict[str, tuple[int, int]],
    start: int,
    first: bool,
    inherited: set[str],
    imported: bool = False,
) -> list[Diagnostic]:
    """The warnings about one frontmatter's keys (``first``: it is the headmatter; ``imported``: a ``src:``
    brought the slide in, so an imported file's headmatter is no headmatter, as in Slidev)."""
    known = SLIDE_KEYS | (DECK_KEYS if first else frozenset())
    out: list[Diagnostic] = []
    for key, value in frontmatter.items():
        if key not in at and key in inherited:  # warned about where it is written
            continue
        line, _col = at.get(key, (start, 1))
        if key == "defaults" and first and isinstance(value, dict):
            out += [
                Diagnostic(
                    where,
                    line,
                    1,
                    f"defaults: key '{name}' is not a slide's frontmatter key; slidegen ignores it",
                    "warning",
                )
                for name in value
                if name not in SLIDE_KEYS
            ]
        if key == "fonts" and first:
            out += [Diagnostic(where, line, 1, message, "warning") for message in font_warnings(value)]
        name = slidev_transition(value) if key == "transition" else None
        if name is not None and name not in TRANSITIONS:
            out.append(
                Diagnostic(
                    where,
                    line,
                    1,
                    f"transition '{name}' is not one of Slidev's built-in "
                    "transitions (" + ", ".join(TRANSITIONS) + "); the slide fades",
                    "warning",
                )
            )
        if key in known:
            continue
        if key in NOT_YET:
            message = f"frontmatter key '{key}' is not implemented yet: {NOT_YET[key]}"
        elif key in DECK_KEYS and imported:
            message = (
                f"headmatter key '{key}' is ignored on an imported slide: only the importing deck's "
                "headmatter sets the deck (as in Slidev)"
            )
        elif key in DECK_KEYS:
            message = f"frontmatter key '{key}' belongs in the headmatter (the first slide's frontmatter)"
        else:
            message = f"unknown frontmatter key '{key}'; slidegen ignores it"
        out.append(Diagnostic(where, line, 1, message, "warning"))
    return out
