"""``check`` warns at a slide over 50 words of body text; titles, code, formulas and notes do not count."""

from __future__ import annotations

from pathlib import Path

from slidegen.check.project import check_project
from slidegen.check.words import slide_words
from slidegen.read.parse import parse_text


def words(n: int) -> str:
    return " ".join(f"w{k}" for k in range(n))


def deck_text(*bodies: str) -> str:
    return "---\ntitle: Words\n---\n\n" + "\n\n---\n\n".join(bodies) + "\n"


def test_the_count_leaves_out_the_title_code_formulas_and_notes(tmp_path: Path) -> None:
    body = (
        f"# A title of six words here\n\n{words(10)}\n\n- {words(5)}\n- it's state-of-the-art, 2,000 x\n\n"
        "```py\nprint('not counted at all')\n```\n\n$$\na + b\n$$\n\n<!--\nnotes are not counted either\n-->"
    )
    deck = parse_text(deck_text(body), tmp_path / "01-w.md")
    assert slide_words(deck.slides[0]) == 10 + 5 + 4  # it's / state-of-the-art / 2,000 / x


def test_a_slide_over_fifty_words_is_a_warning_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "decks").mkdir()
    table = f"| a | b |\n|---|---|\n| {words(19)} | |"
    text = deck_text(
        f"# Fifty\n\n{words(50)}",
        f"# Fifty-one\n\n{words(30)}\n\n{table}",
        "# Code\n\n" + "```py\n" + "x = 1\n" * 12 + "```\n\n" + words(60),
        "---\nlayout: references\n---\n\n# References\n\n" + words(80),
    )
    (tmp_path / "decks" / "01-w.md").write_text(text, encoding="utf-8")
    found = [str(d) for d in check_project(tmp_path) if "words" in d.message]
    assert found == [
        "decks/01-w.md:10:1: warning: slide 2 shows 51 words, more than the 50 an audience reads from "
        "the back of the room: move the rest to the speaker notes or split the slide"
    ]
