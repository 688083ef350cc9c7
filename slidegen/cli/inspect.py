"""``slidegen inspect DECK``: a parsed deck as a few readable lines (``--json`` gives all of it).

One line for the deck (title, slide count, headmatter keys), then one per slide: number,
source line, layout, title, and what it holds (its id, result references, clicks, notes,
hidden).
"""

from __future__ import annotations

import argparse
import json

from slidegen.bind.numbers import is_literal
from slidegen.deck.nodes import Deck, Slide, slide_refs
from slidegen.errors import display_path
from slidegen.project import find_project


def summary(deck: Deck, where: str) -> list[str]:
    """The lines ``slidegen inspect`` prints for ``deck`` (read from ``where``)."""
    keys = ", ".join(sorted(str(k) for k in deck.headmatter)) or "none"
    lines = [f"{where}: {deck.title or '(untitled)'}: {len(deck.slides)} slide(s); headmatter: {keys}"]
    width = len(str(max((s.line for s in deck.slides), default=1)))
    for slide in deck.slides:
        lines.append(
            f"{slide.index:>3}  line {slide.line:<{width}}  {slide.layout:<12}  "
            f"{slide.title or '(no title)'}{_details(slide)}"
        )
    return lines


def _details(slide: Slide) -> str:
    parts = []
    if slide.id:
        parts.append(f"id {slide.id}")
    refs = sorted({ref.key for ref in slide_refs(slide) if ref.key and not is_literal(ref.key)})
    if refs:
        parts.append(f"{len(refs)} key(s): {', '.join(refs[:3])}{', ...' if len(refs) > 3 else ''}")
    if slide.clicks:
        parts.append(f"{slide.clicks} click(s)")
    if slide.notes:
        parts.append("notes")
    if slide.frontmatter.get("hide") is True:
        parts.append("hidden")
    return f"  [{'; '.join(parts)}]" if parts else ""


def cmd_inspect(args: argparse.Namespace) -> int:
    from slidegen.cli.decknames import resolve_deck
    from slidegen.deck.glossary import is_glossary
    from slidegen.read.glossary import read_glossary
    from slidegen.read.parse import deck_to_json, parse_deck

    project = find_project()
    path = resolve_deck(project, args.deck)
    deck = read_glossary(path) if is_glossary(path) else parse_deck(path)
    if args.json:
        print(json.dumps(deck_to_json(deck), indent=2, ensure_ascii=False, default=str))
    else:
        print("\n".join(summary(deck, display_path(path))))
    return 0
