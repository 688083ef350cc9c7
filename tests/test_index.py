"""The deck index: every deck of a build read once, what links, writers and the index page know of each."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_check import BROKEN, DATA, LOOP, project

from slidegen.cli.main import main
from slidegen.deck.nodes import DeckEntry, SlideEntry
from slidegen.pipeline.bound import bind_project
from slidegen.pipeline.index import citations_of, index_of, project_decks, read_decks
from slidegen.project import Project
from slidegen.record.results import Result, Results

SLIDEGEN = Path(__file__).resolve().parents[1] / "slidegen"

FIRST = """\
---
title: Loss {{ ch01.loss }}
date: 2024-01-01
chapter: 1
id: cover
---

# The cover

---
id: curve
---

## The curve

---

# No id
"""

SECOND = """\
# Data and windows

---
id: windows
---

## Windows

See [the curve](01-first.md#curve).
"""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "01-first.md").write_text(FIRST, encoding="utf-8")
    (tmp_path / "decks" / "02-second.md").write_text(SECOND, encoding="utf-8")
    (tmp_path / "decks" / "03-broken.md").write_text("# Broken\n\n```\nnever closed\n", encoding="utf-8")
    Results([Result("ch01.loss", 2.27634, None, None, "nats", "loss", "run ch01.default 9f3c2a1e", 3)]).write(
        tmp_path / "results" / "results.md"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_index_lists_each_deck_with_its_slides_ids_titles_and_headmatter(root: Path) -> None:
    decks = project_decks(root)
    assert [p.name for p in decks.failed] == ["03-broken.md"]  # left out, and reported
    assert str(decks.errors[0]).startswith("decks/03-broken.md:3:1: error: unclosed code fence")
    index = decks.index
    assert [entry.slug for entry in index.decks] == ["01-first", "02-second"]
    first = index.deck("01-first.md")
    assert first == index.deck("01-first")
    assert first == DeckEntry(
        root / "decks" / "01-first.md",
        "Loss {{ ch01.loss }}",  # the parsed title; a build indexes the bound one
        {"title": "Loss {{ ch01.loss }}", "date": "2024-01-01", "chapter": 1, "id": "cover"},
        (
            SlideEntry(1, "cover", "Loss {{ ch01.loss }}", 7),
            SlideEntry(2, "curve", "The curve", 13),
            SlideEntry(3, None, "No id", 17),
        ),
    )
    assert first.slide("curve") == SlideEntry(2, "curve", "The curve", 13)
    assert index.slide_number("01-first.md", "curve") == 2
    assert index.slide_number("02-second.md", "windows") == 2
    assert index.slide_number("02-second.md", "curve") is None
    assert index.slide_number("03-broken.md", "x") is None
    assert index.deck("nope.md") is None
    assert index_of([]).decks == ()


def test_a_build_indexes_every_deck_bound_once(root: Path) -> None:
    every = bind_project(Project(root))
    first = every.index.deck("01-first")
    assert first is not None
    assert first.title == first.headmatter["title"] == first.slides[0].title == "Loss 2.28"
    assert first.headmatter["date"] == "2024-01-01"  # one YAML reader: dates stay as written
    assert [s.key for s in every.deck(root / "decks" / "01-first.md").slides[0].sources] == ["ch01.loss"]
    assert [d.slug for d in read_decks([root / "decks" / "02-second.md"]).parsed.values()] == ["02-second"]


def test_the_date_reads_one_way_in_every_output(root: Path) -> None:
    (root / "decks" / "03-broken.md").unlink()
    assert main(["build", "--to", "html,md,marp"]) == 0
    page = (root / "build" / "html" / "01-first.html").read_text(encoding="utf-8")
    assert "2024-01-01" in page
    index = (root / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "Loss 2.28" in index and "{{" not in index
    markdown = (root / "build" / "md" / "01-first.md").read_text(encoding="utf-8")
    assert "date: '2024-01-01'" in markdown
    marp = (root / "build" / "marp" / "02-second.md").read_text(encoding="utf-8")
    assert "[the curve](01-first.html#2)" in marp  # the slide number comes from the index


def test_citations_of_lists_every_citing_line(tmp_path: Path) -> None:
    root = project(tmp_path, {"01-loop.md": LOOP, "02-data.md": DATA, "03-broken.md": BROKEN})
    assert citations_of(root) == {
        "ch01.val_loss.init": [("decks/01-loop.md", 8)],
        "ch01.val_los.final": [("decks/01-loop.md", 8)],
        "ch01.params": [("decks/01-loop.md", 10)],
        "ch01.val_loss.final": [("decks/02-data.md", 5)],
    }
