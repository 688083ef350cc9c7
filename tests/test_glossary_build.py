"""The glossary built: its HTML page and PowerPoint, links both ways, the index page, and incremental builds."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import needs
import pytest

from slidegen.pipeline.bound import bind_project
from slidegen.pipeline.build import BuildOptions, build
from slidegen.pipeline.index import project_decks
from slidegen.project import Project
from slidegen.record.results import Results
from tests.test_glossary import GLOSSARY, LOOP, ROWS


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "p"
    (root / "decks").mkdir(parents=True)
    (root / "decks" / "01-loop.md").write_text(LOOP, encoding="utf-8")
    (root / "decks" / "02-data.md").write_text("---\ntitle: Data\n---\n\n# Data\n\nWindows.\n", encoding="utf-8")
    (root / "decks" / "glossary.md").write_text(GLOSSARY, encoding="utf-8")
    Results(ROWS).write(root / "results" / "results.md")
    monkeypatch.chdir(root)
    return Project(root)


def written(project: Project) -> set[str]:
    report = build(project, None, BuildOptions(formats=("html", "pptx"), jobs=1))
    assert not report.failed, [str(d) for d in report.diagnostics]
    return {p.relative_to(project.build_dir).as_posix() for p in report.written}


def slide_xml(pptx: Path, number: int) -> tuple[str, str]:
    """Slide ``number``'s XML and its relationships."""
    with zipfile.ZipFile(pptx) as archive:
        xml = archive.read(f"ppt/slides/slide{number}.xml").decode()
        rels = archive.read(f"ppt/slides/_rels/slide{number}.xml.rels").decode()
    return xml, rels


def link_of(xml: str, rels: str, text: str) -> tuple[str, str]:
    """(target file, action) of the hyperlink on the run whose text is ``text``."""
    found = re.search(r'<a:hlinkClick r:id="(rId\d+)"(?: action="([^"]*)")?/></a:rPr><a:t>' + re.escape(text), xml)
    assert found, text
    target = re.search(rf'Id="{found[1]}"[^>]*Target="([^"]+)"|Target="([^"]+)"[^>]*Id="{found[1]}"', rels)
    assert target
    return target[1] or target[2], found[2] or ""


def test_the_glossary_is_a_page_and_a_presentation_linked_both_ways(project: Project) -> None:
    assert written(project) >= {"html/glossary.html", "pptx/glossary.pptx", "html/01-loop.html", "html/index.html"}
    html = project.build_dir / "html"
    page = (html / "glossary.html").read_text(encoding="utf-8")
    assert 'deck 01, The loop, <a href="01-loop.html#/training-step">slide 2: One training step</a>' in page
    assert "Explained in deck 06, not written yet." in page
    assert "view: /[?&amp;](thumbnail|print-pdf)(&amp;|$)/" in page or '"scroll"' in page  # one scrolling page
    deck = (html / "01-loop.html").read_text(encoding="utf-8")
    assert '<span class="footer-glossary">Glossary: <a href="glossary.html#/training-step">Training step</a>' in deck
    assert deck.count("footer-glossary") == 2  # the two slides that explain a term, and no other
    index = (html / "index.html").read_text(encoding="utf-8")
    assert 'href="glossary.html"' in index and "../pptx/glossary.pptx" in index
    terms = project_decks(project.root).parsed[project.root / "decks" / "glossary.md"].glossary
    assert terms is not None and len(terms.entries) == 3
    assert '<span class="deck-count">3 terms</span>' in index  # terms, not the glossary's pages

    pptx = project.build_dir / "pptx"
    xml, rels = slide_xml(pptx / "01-loop.pptx", 2)  # the back-link: the glossary's file, at the term's slide
    assert link_of(xml, rels, "Training step") == ("glossary.pptx", "ppaction://hlinkpres?slideindex=2&amp;slidetitle=")
    xml, rels = slide_xml(pptx / "glossary.pptx", 3)  # the term: the deck's file, at its slide
    assert link_of(xml, rels, "slide 3: The weights") == (
        "01-loop.pptx",
        "ppaction://hlinkpres?slideindex=3&amp;slidetitle=",
    )


def test_editing_the_glossary_rebuilds_it_and_the_decks_whose_back_links_change(project: Project) -> None:
    written(project)
    assert written(project) == set()
    glossary = project.decks_dir / "glossary.md"
    glossary.write_text(GLOSSARY.replace("The numbers training", "The numbers that training"), encoding="utf-8")
    assert written(project) == {"html/glossary.html", "pptx/glossary.pptx"}  # a sentence: no back-link moved
    glossary.write_text(GLOSSARY.replace("slide: params", "slide: training-step"), encoding="utf-8")
    assert written(project) == {"html/glossary.html", "pptx/glossary.pptx", "html/01-loop.html", "pptx/01-loop.pptx"}
    deck = (project.build_dir / "html" / "01-loop.html").read_text(encoding="utf-8")
    assert deck.count("footer-glossary") == 1 and "Training step</a>, <a" in deck  # both terms on one slide
    loop = project.decks_dir / "01-loop.md"
    loop.write_text(LOOP.replace("# One training step", "# A training step"), encoding="utf-8")
    assert written(project) == {"html/glossary.html", "pptx/glossary.pptx", "html/01-loop.html", "pptx/01-loop.pptx"}
    assert "slide 2: A training step" in (project.build_dir / "html" / "glossary.html").read_text(encoding="utf-8")
    assert written(project) == set()


def test_the_scrolling_glossary_is_pictured_slide_by_slide(project: Project) -> None:
    needs.chromium()
    report = build(project, [project.root / "decks" / "glossary.md"], BuildOptions(formats=("png",), jobs=1))
    assert not report.failed, [str(d) for d in report.diagnostics]
    pictures = sorted(p.name for p in (project.build_dir / "png" / "glossary").iterdir())
    slides = len(bind_project(project).deck(project.root / "decks" / "glossary.md").slides)
    assert pictures == [f"{n:02d}.png" for n in range(1, slides + 1)]


def test_markdown_output_keeps_the_footer_back_links(project: Project) -> None:
    report = build(project, None, BuildOptions(formats=("md",), jobs=1))
    assert not report.failed, [str(d) for d in report.diagnostics]
    text = (project.build_dir / "md" / "01-loop.md").read_text(encoding="utf-8")
    assert "<small>Glossary: [Training step](glossary.md#training-step)</small>" in text
    assert text.count("<small>Glossary:") == 2  # the two slides that explain a term, as in HTML
