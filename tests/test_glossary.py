"""The glossary (decks/glossary.md): read into entries, checked against the decks, linked both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from slidegen.bind.glossary import explain, link_back
from slidegen.check.project import check_project
from slidegen.deck.nodes import Emph, Link, Paragraph, plain_text
from slidegen.errors import SlidegenError
from slidegen.pipeline.index import index_of, read_decks
from slidegen.read.glossary import read_glossary
from slidegen.record.results import Result, Results

LOOP = """\
---
title: The loop
chapter: 1
---

# The loop

Intro.

---
id: training-step
---

# One training step

Forward, backward, update: one step.

---
id: params
---

# The weights

What the optimiser changes.
"""

GLOSSARY = """\
---
title: Glossary
series:
  - Training step
  - Parameters
  - Pre-LN vs post-LN
---

# Glossary

Every term in one sentence.

---
term: Training step
aliases: [step]
deck: "01"
slide: training-step
---

One turn of the loop; the run takes {{ ch01.steps | int }} of them.

---
term: Parameters
aliases: [weights]
deck: "01"
slide: params
---

The numbers training adjusts.

---
term: Pre-LN vs post-LN
aliases: [pre-LN]
deck: "06"
slide: pre-post-ln
---

Normalise before each sublayer or after each residual sum.
"""

ROWS = [Result("ch01.steps", 2000, digits=4, unit="steps", what="steps", source="run ch01.default 0123456789ab")]


def project(tmp_path: Path, glossary: str = GLOSSARY, loop: str = LOOP) -> Path:
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "01-loop.md").write_text(loop, encoding="utf-8")
    (tmp_path / "decks" / "glossary.md").write_text(glossary, encoding="utf-8")
    Results(ROWS).write(tmp_path / "results" / "results.md")
    return tmp_path


def glossary_lines(root: Path) -> list[str]:
    """What ``check`` says of the glossary (the numbered deck's own warnings left out)."""
    return [str(d) for d in check_project(root) if d.path == "decks/glossary.md"]


def test_the_reader_makes_one_entry_and_one_slide_per_term(tmp_path: Path) -> None:
    deck = read_glossary(project(tmp_path) / "decks" / "glossary.md")
    assert deck.glossary is not None
    assert deck.glossary.series == ("Training step", "Parameters", "Pre-LN vs post-LN")
    assert [(e.term, e.deck, e.slide, e.id, e.number) for e in deck.glossary.entries] == [
        ("Training step", "01", "training-step", "training-step", 2),
        ("Parameters", "01", "params", "params", 3),
        ("Pre-LN vs post-LN", "06", "pre-post-ln", "pre-post-ln", 4),
    ]
    assert [s.title for s in deck.slides] == ["Glossary", "Training step", "Parameters", "Pre-LN vs post-LN"]
    assert deck.slides[1].id == "training-step" and deck.slides[1].frontmatter == {"id": "training-step"}
    assert deck.glossary.entries[0].where("slide") == (17, 8)  # positions for errors: file and line
    assert "series" not in deck.headmatter


@pytest.mark.parametrize(
    ("old", "new", "where", "says"),
    [
        ('deck: "01"\nslide: params', 'deck: "1"\nslide: params', "25:7", "not a deck number: write two digits"),
        ("term: Parameters\n", "", "23:1", "a glossary entry needs 'term:'"),
        ("aliases: [weights]", "alias: [weights]", "24:8", "unknown key 'alias' in a glossary entry"),
        ("term: Parameters", "term: training step", "23:7", "duplicate term 'training step' (line 14 has it)"),
        ("The numbers training adjusts.", "", "23:1", "the entry 'Parameters' has no sentence"),
    ],
)
def test_a_malformed_entry_is_an_error_at_its_line(tmp_path: Path, old: str, new: str, where: str, says: str) -> None:
    assert old in GLOSSARY
    root = project(tmp_path, GLOSSARY.replace(old, new, 1))
    with pytest.raises(SlidegenError) as raised:
        read_glossary(root / "decks" / "glossary.md")
    assert f"decks/glossary.md:{where}: error: " in str(raised.value)
    assert says in str(raised.value)
    assert any(says in line and "error" in line for line in glossary_lines(root))  # check reports it too


def test_check_passes_a_sound_glossary_and_warns_of_a_deck_not_written(tmp_path: Path) -> None:
    assert glossary_lines(project(tmp_path)) == [
        "decks/glossary.md:34:7: warning: 'Pre-LN vs post-LN': deck 06 is not written yet, so the term is left "
        "unlinked; it links once decks/06-*.md has a slide with id: pre-post-ln"
    ]


def test_check_errs_on_a_slide_id_no_slide_of_the_deck_has(tmp_path: Path) -> None:
    root = project(tmp_path, GLOSSARY.replace("slide: params", "slide: parameters"))
    assert (
        "decks/glossary.md:26:8: error: 'Parameters': decks/01-loop.md has no slide with id 'parameters': give the "
        "slide that explains it that id: in its frontmatter, or name its id here"
    ) in glossary_lines(root)


def test_check_errs_on_a_defining_slide_that_never_uses_the_term(tmp_path: Path) -> None:
    root = project(tmp_path, loop=LOOP.replace("# The weights", "# The knobs"))
    assert glossary_lines(root)[0] == (
        "decks/glossary.md:24:10: error: 'Parameters': slide 3 of decks/01-loop.md (id params, line 21) uses none "
        "of 'Parameters', 'weights': name the term on that slide, or add the word it uses to aliases:"
    )
    (tmp_path / "term").mkdir()
    root = project(tmp_path / "term", loop=LOOP.replace("# The weights", "# The parameters"))  # the term itself
    assert len(glossary_lines(root)) == 1  # the warning of deck 06 alone


def test_check_errs_on_a_series_term_without_an_entry_and_an_entry_outside_the_series(tmp_path: Path) -> None:
    root = project(tmp_path, GLOSSARY.replace("  - Parameters\n", "  - Parameters\n  - Perplexity\n"))
    assert (
        "decks/glossary.md:3:8: error: the series' term 'Perplexity' has no entry: add one (term, deck, slide, "
        "sentence)"
    ) in glossary_lines(root)
    (tmp_path / "extra").mkdir()
    root = project(tmp_path / "extra", GLOSSARY.replace("  - Parameters\n", ""))
    assert (
        "decks/glossary.md:22:7: error: 'Parameters' is not a term of the series: add it to series: in the "
        "headmatter, or fix its spelling"
    ) in glossary_lines(root)


def test_check_errs_on_an_unknown_results_key_in_a_sentence(tmp_path: Path) -> None:
    root = project(tmp_path, GLOSSARY.replace("ch01.steps", "ch01.step"))
    assert glossary_lines(root)[0] == (
        "decks/glossary.md:20:37: error: unknown result key 'ch01.step' (did you mean 'ch01.steps'?)"
    )


def test_terms_link_to_their_slides_and_slides_back_to_their_terms(tmp_path: Path) -> None:
    root = project(tmp_path)
    decks = read_decks([root / "decks" / "01-loop.md", root / "decks" / "glossary.md"])
    loop, glossary = decks.parsed[root / "decks" / "01-loop.md"], decks.parsed[root / "decks" / "glossary.md"]
    index = index_of([loop, glossary])
    explained = explain(glossary, index)
    last = explained.slides[1].blocks[-1]
    assert isinstance(last, Paragraph) and isinstance(last.children[0], Emph)
    link = last.children[0].children[1]
    assert isinstance(link, Link) and link.url == "01-loop.md#training-step"
    assert plain_text(last.children) == "Explained in deck 01, The loop, slide 2: One training step."
    assert plain_text(link.children) == "slide 2: One training step"
    assert plain_text(explained.slides[3].blocks[-1].children) == "Explained in deck 06, not written yet."  # type: ignore[union-attr]
    linked = link_back(loop, glossary.glossary)
    assert [(s.id, [(g.term, g.url, g.number) for g in s.glossary]) for s in linked.slides] == [
        (None, []),
        ("training-step", [("Training step", "glossary.md#training-step", 2)]),
        ("params", [("Parameters", "glossary.md#params", 3)]),
    ]


def test_a_glossary_slide_without_entry_keys_stays_an_ordinary_slide(tmp_path: Path) -> None:
    part = "---\nlayout: section\n---\n\n# Part two: the optimiser\n\n"
    text = GLOSSARY.replace("---\nterm: Parameters", part + "---\nterm: Parameters")
    deck = read_glossary(project(tmp_path, text) / "decks" / "glossary.md")
    assert deck.glossary is not None
    assert [s.title for s in deck.slides][2:4] == ["Part two: the optimiser", "Parameters"]
    assert [e.number for e in deck.glossary.entries] == [2, 4, 5]
