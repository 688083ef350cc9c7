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

from .deck import Deck, Slide
from .errors import Diagnostic
from .layouts import layout

#: Per-slide keys that slidegen implements (headmatter included: it is also slide 1's frontmatter).
SLIDE_KEYS: frozenset[str] = frozenset({
    "layout", "id", "title", "class", "hide", "disabled", "image", "backgroundSize", "url",
    "level", "hideInToc",  # no table of contents is generated: nothing to leave out or indent
    "alt",  # slidegen's own: the alt text of a layout's picture
    "clicks",  # the slide's click total (slidegen/clicks.py)
})

#: Headmatter keys that slidegen implements.
DECK_KEYS: frozenset[str] = frozenset({
    "title", "author", "lang", "info", "theme",
    "chapter", "summary", "date", "description",  # the project's own
    "csl", "references",  # the citation style, and `references: false` for no references slide
    "lineNumbers",  # code blocks number their lines (a block's {lines:false} turns it off)
})

#: Slidev keys that slidegen reads but does not implement yet, with what happens instead.
NOT_YET: dict[str, str] = {
    "background": "the slide keeps the theme's background",
    "transition": "slides change without Slidev's transitions",
    "zoom": "the slide is shown at its normal size",
    "titleTemplate": "the page title is the deck's title",
    "aspectRatio": "slides stay 16:9",
    "canvasWidth": "slides keep their width of 1280 px",
    "colorSchema": "the theme's light scheme is used",
    "defaults": "each slide has only its own frontmatter",
    "fonts": "the theme's bundled fonts are used",
    "src": "imports are not read: the slide is empty",
}


def is_hidden(slide: Slide) -> bool:
    """Whether the slide is left out of every output (Slidev's ``hide: true`` or ``disabled: true``)."""
    return any(slide.frontmatter.get(key) is True for key in ("hide", "disabled"))


def visible(deck: Deck) -> Deck:
    """``deck`` without its hidden slides, the others numbered from 1 again."""
    if not any(is_hidden(slide) for slide in deck.slides):
        return deck
    shown = [slide for slide in deck.slides if not is_hidden(slide)]
    return replace(deck, slides=tuple(replace(slide, index=number) for number, slide in enumerate(shown, start=1)))


def key_warnings(where: str, deck: Deck) -> list[Diagnostic]:
    """A warning for every frontmatter key slidegen does not know or does not implement, at the key's line."""
    out: list[Diagnostic] = []
    for slide in deck.slides:
        known = SLIDE_KEYS | (DECK_KEYS if slide.index == 1 else frozenset())
        for key in slide.frontmatter:
            line, _col = slide.frontmatter_at.get(key, (slide.line, 1))
            if key in known:
                continue
            if key in NOT_YET:
                message = f"frontmatter key '{key}' is not implemented yet: {NOT_YET[key]}"
            elif key in DECK_KEYS:
                message = f"frontmatter key '{key}' belongs in the headmatter (the first slide's frontmatter)"
            else:
                message = f"unknown frontmatter key '{key}'; slidegen ignores it"
            out.append(Diagnostic(where, line, 1, message, "warning"))
        if layout(slide.layout).frame and isinstance(slide.frontmatter.get("url"), str):
            line, _col = slide.frontmatter_at.get("url", (slide.line, 1))
            out.append(Diagnostic(where, line, 1, f"{slide.layout} slide shows the web page "
                                  f"{slide.frontmatter['url']}, which needs the network; PowerPoint and PDF "
                                  "show its address", "warning"))
    return out
