"""``decks/glossary.md`` -> a Deck of one cover and one slide per term, with ``Deck.glossary`` holding the entries.

The glossary is written as a Slidev deck: the headmatter (``title``, ``summary`` and ``series``, the list of the
series' terms) and a cover, then one slide per term, whose frontmatter names it and whose text is its
sentence (``{{ key }}`` references bound like any slide's)::

    ---
    term: Training step
    aliases: [training step, step]   # words the defining slide may use instead of the term
    deck: "01"                       # the deck that explains it
    slide: training-step             # the id: of the slide that explains it
    ---

    One turn of the loop: ...

A slide without entry keys stays an ordinary slide (a part's title, say). The reader checks each entry's keys
(file, line and what to do), titles its slide with the term and gives it an id (the entry's ``id:``, else its
defining slide's id, else the term made a slug), so ``glossary.md#id`` reaches it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from slidegen.deck import nodes as d
from slidegen.deck.glossary import ENTRY_KEYS, Glossary, Term, term_id
from slidegen.errors import SlidegenError
from slidegen.read.parse import parse_deck


def read_glossary(path: Path) -> d.Deck:
    """The glossary at ``path``: its cover, one slide per term, and ``Deck.glossary``."""
    deck = parse_deck(path)
    cover = deck.slides[0]
    series, series_at = _series(path, cover)
    headmatter = {k: v for k, v in deck.headmatter.items() if k != "series"}
    cover = replace(cover, frontmatter={k: v for k, v in cover.frontmatter.items() if k != "series"})
    slides: list[d.Slide] = [cover]
    entries: list[Term] = []
    for slide in deck.slides[1:]:
        if not any(key in slide.frontmatter for key in ENTRY_KEYS if key != "id"):
            slides.append(slide)  # a slide of its own (a part's title, a note), not an entry
            continue
        entry = _entry(path, slide, entries, taken={s.id for s in slides if s.id})
        entries.append(entry)
        slides.append(_term_slide(slide, entry))
    glossary = Glossary(tuple(entries), series, series_at)
    return replace(deck, headmatter=headmatter, slides=tuple(slides), glossary=glossary)


def _series(path: Path, cover: d.Slide) -> tuple[tuple[str, ...], tuple[int, int]]:
    """The headmatter's ``series:``: the series' terms, each of which needs an entry."""
    at = cover.frontmatter_at.get("series", (1, 1))
    value = cover.frontmatter.get("series", [])
    if not isinstance(value, list) or not all(isinstance(term, str) and term.strip() for term in value):
        raise SlidegenError(path, *at, "series: must be a list of the series' terms, e.g. [Training step, SGD]")
    return tuple(term.strip() for term in value), at


def _entry(path: Path, slide: d.Slide, before: list[Term], taken: set[str]) -> Term:
    """The entry slide ``slide`` writes, its keys checked."""
    fm, at = slide.frontmatter, slide.frontmatter_at
    start = min((line for line, _ in at.values()), default=slide.line)  # the entry's first key
    for key in fm:
        if key not in ENTRY_KEYS:
            where = at.get(key, (slide.line, 1))
            raise SlidegenError(path, *where, f"unknown key '{key}' in a glossary entry: the keys are {_keys()}")
    term = _text(path, slide, start, "term", "the term as the glossary lists it, e.g. term: Training step")
    deck = _text(path, slide, start, "deck", 'the number of the deck that explains it, quoted: deck: "01"')
    if not (len(deck) == 2 and deck.isdigit()):
        raise SlidegenError(path, *at["deck"], f'deck: {deck!r} is not a deck number: write two digits, e.g. "01"')
    target = _text(path, slide, start, "slide", "the id: of the slide that explains it, e.g. slide: training-step")
    aliases = _aliases(path, slide)
    for other in before:
        if other.term.casefold() == term.casefold():
            raise SlidegenError(
                path, *at["term"], f"duplicate term '{term}' (line {other.line} has it): merge the two entries"
            )
    entry_id = slide.id or (target if target not in taken else term_id(term))
    if entry_id in taken:
        raise SlidegenError(
            path, *at["term"], f"term '{term}' makes the slide id '{entry_id}', already taken: give it an id:"
        )
    if not any(isinstance(block, d.Paragraph) for block in slide.blocks):
        raise SlidegenError(path, start, 1, f"the entry '{term}' has no sentence: write it under its frontmatter")
    return Term(term, aliases, deck, target, entry_id, slide.index, start, dict(at))


def _text(path: Path, slide: d.Slide, start: int, key: str, what: str) -> str:
    value = slide.frontmatter.get(key)
    if value is None:
        raise SlidegenError(path, start, 1, f"a glossary entry needs '{key}:': {what}")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise SlidegenError(path, *slide.frontmatter_at[key], f"{key}: must be text: {what}")
    return str(value).strip()


def _aliases(path: Path, slide: d.Slide) -> tuple[str, ...]:
    value: Any = slide.frontmatter.get("aliases", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(alias, str) and alias.strip() for alias in value):
        where = slide.frontmatter_at.get("aliases", (slide.line, 1))
        raise SlidegenError(path, *where, "aliases: must be a list of words, e.g. aliases: [step, steps]")
    return tuple(alias.strip() for alias in value)


def _keys() -> str:
    return ", ".join(ENTRY_KEYS)


def _term_slide(slide: d.Slide, entry: Term) -> d.Slide:
    """The entry's slide: titled with the term, its id set, its sentence below."""
    heading = d.Heading(1, (d.Text(entry.term, slide.line, 1),), slide.line)
    return replace(
        slide,
        id=entry.id,
        title=entry.term,
        title_heading=0,
        title_inlines=heading.children,
        blocks=(heading, *slide.blocks),
        content=f"# {entry.term}\n\n{slide.content}",
        frontmatter={"id": entry.id},
        frontmatter_at={"id": entry.where("id")} if "id" in entry.at else {},
    )
