"""Slidev's frontmatter keys: hidden slides, the keys `check` warns about.

The fixture is tests/fixtures/decks/slidev_frontmatter.md.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.check.project import check_project
from slidegen.cli.main import main
from slidegen.read.frontmatter import is_hidden, key_warnings, visible
from slidegen.read.parse import parse_deck
from slidegen.write import html

FIXTURE = Path(__file__).parent / "fixtures" / "decks" / "slidev_frontmatter.md"


def test_hidden_slides_are_parsed_then_left_out_and_the_rest_renumbered():
    deck = parse_deck(FIXTURE)
    assert [is_hidden(s) for s in deck.slides] == [False, False, True, True, False]
    shown = visible(deck)
    assert [(s.index, s.title) for s in shown.slides] == [
        (1, "Slidev frontmatter"),
        (2, "Shown second"),
        (3, "Shown third"),
    ]
    assert visible(shown) is shown


def test_check_names_every_key_it_does_not_implement_at_its_line():
    deck = parse_deck(FIXTURE)
    assert [str(w) for w in key_warnings("decks/x.md", deck)] == [  # transition: fade is implemented now
        "decks/x.md:36:1: warning: unknown frontmatter key 'wobble'; slidegen ignores it",
    ]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "decks").mkdir()
    shutil.copy(FIXTURE, tmp_path / "decks" / "01-fm.md")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_still_checks_a_hidden_slide(project: Path):
    found = [str(d) for d in check_project(project)]
    assert any(line.startswith("decks/01-fm.md:26:5: error: unknown result key") for line in found), found
    assert "decks/01-fm.md:36:1: warning: unknown frontmatter key 'wobble'; slidegen ignores it" in found


def test_hidden_slides_are_in_no_output(project: Path):
    deck = parse_deck(FIXTURE)
    page = html.render_deck(visible(deck), {})
    assert "Hidden" not in page and "Disabled" not in page
    assert '<span class="footer-number">3 / 3</span>' in page
    assert '<section id="plain" class="layout-default text-center"' in page  # class: on the slide
    # a build binds every slide, hidden ones too: their errors stop it as check reports them
    (project / "decks" / "01-fm.md").write_text(
        FIXTURE.read_text(encoding="utf-8").replace("{{ ch01.missing.key }}", "text"), encoding="utf-8"
    )
    assert main(["build", "--to", "html,pptx"]) == 0
    built = (project / "build" / "html" / "01-fm.html").read_text(encoding="utf-8")
    assert "Hidden" not in built and "3 / 3" in built
    prs = Presentation(str(project / "build" / "pptx" / "01-fm.pptx"))
    assert len(prs.slides) == 3
