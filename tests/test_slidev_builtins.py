"""Slidev's built-in components, icons and ``theme:`` are located ``check`` warnings and leave nothing
behind in the outputs; an HTML block revealed by a click on its wrapping element animates in PowerPoint
(issue 30)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import needs
import pytest

from slidegen.check.project import check_project
from slidegen.deck import clicks
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project

DECK = """\
---
title: Built-ins
theme: seriph
---

# Clicks

<div v-click>One-line reveal</div>

<p v-click="[2, 3]">A paragraph on click 2</p>

<div><span v-click>inner a</span> <span v-click>inner b</span></div>

---

# Built-ins

<Toc />

<Tweet id="20" />

<Youtube id="luoMHjh-XcQ" />

<Arrow x1="10" y1="20" x2="100" y2="200" />

A <carbon-logo-github /> icon.
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "01-b.md").write_text(DECK, encoding="utf-8")
    return Project(tmp_path)


def test_check_names_each_builtin_the_theme_and_the_clicks_powerpoint_cannot_draw(project: Project) -> None:
    found = [str(d) for d in check_project(project.root)]
    tail = " does not appear: slidegen has no such component; write it as Markdown, HTML or a component in components/"
    assert found == [
        "decks/01-b.md:3:1: warning: theme 'seriph' is a Slidev theme: slidegen draws every deck in its own theme "
        "(fonts and colours from the headmatter; styles in a <style> block)",
        "decks/01-b.md:12:1: warning: clicks on elements inside an HTML block: PowerPoint shows the block as one "
        "picture with every part visible (give each part its own block, or put v-click on the element that wraps "
        "the block)",
        "decks/01-b.md:20:1: warning: <Tweet> (Slidev's built-in component for an embedded tweet)" + tail,
        "decks/01-b.md:22:1: warning: <Youtube> (Slidev's built-in component for an embedded YouTube video)" + tail,
        "decks/01-b.md:24:1: warning: <Arrow> (Slidev's built-in component for an arrow)" + tail,
        "decks/01-b.md:26:1: warning: <carbon-logo-github> (a Slidev icon, from Iconify)" + tail,
    ]


@pytest.mark.parametrize(
    ("html", "whole"),
    [
        ("<div v-click>text</div>", True),
        ('<p v-click="[2, 4]">a <b>b</b></p>', True),
        ('<img v-click src="a.png">', True),
        ("<div v-click><div>a</div><div>b</div></div>", True),
        ("<div v-click>a</div><div>b</div>", False),  # the click reveals the first of two elements
        ("<div><span v-click>a</span></div>", False),
        ("<div v-click>a <span v-click>b</span></div>", False),
        ("<div v-click>", False),  # a lone wrapper: what it wraps is timed
        ("<div>text</div>", False),
    ],
)
def test_an_html_block_is_revealed_whole_only_by_a_click_on_its_wrapping_element(html: str, whole: bool) -> None:
    assert clicks.revealed_whole(html) is whole


def test_builtins_leave_nothing_in_the_page_and_no_picture_in_powerpoint(project: Project) -> None:
    needs.chromium()  # the HTML blocks PowerPoint shows are drawn through it
    report = build(project, options=BuildOptions(formats=("html", "pptx")))
    assert not report.failed, report.diagnostics
    page = (project.root / "build" / "html" / "01-b.html").read_text(encoding="utf-8")
    for tag in ("<Toc", "<Tweet", "<Youtube", "<Arrow"):  # <Toc /> is a list of the slides (test_toc.py)
        assert tag not in page
    with zipfile.ZipFile(project.root / "build" / "pptx" / "01-b.pptx") as pptx:
        first = pptx.read("ppt/slides/slide1.xml").decode("utf-8")
        second = pptx.read("ppt/slides/slide2.xml").decode("utf-8")
    assert "<p:pic>" not in second  # no empty pictures for Slidev's components
    pictures = re.findall(r'<p:cNvPr id="(\d+)" name="Picture"', first)
    assert len(pictures) == 3
    animated = re.findall(r'<p:spTgt spid="(\d+)"', first)
    assert sorted(set(animated)) == pictures[:2]  # the one-line <div v-click> and <p v-click>, not the third
    assert 'presetClass="exit"' in first  # the paragraph's range [2, 3) hides it again on click 3


def test_a_block_of_one_line_reveals_is_one_part_per_element_each_with_its_click() -> None:
    from slidegen.deck import nodes as d

    html = '<div v-click>a</div>\n<div v-click="3">b</div>\n<p>c</p>\n<img v-after src="x.png">'
    timings = (d.Timing(1), d.Timing(3), d.Timing(3))
    found = clicks.parts(d.RawHtml(html, line=10, clicks=timings))
    assert [(p.html, p.line, p.clicks) for p in found] == [
        ("<div v-click>a</div>", 10, (d.Timing(1),)),
        ('<div v-click="3">b</div>', 11, (d.Timing(3),)),
        ("<p>c</p>", 12, ()),
        ('<img v-after src="x.png">', 13, (d.Timing(3),)),
    ]
    # each part typed by its own HTML: the elements are regions PowerPoint pictures, the <img> a figure
    assert [type(p) for p in found] == [d.HtmlRegion, d.HtmlRegion, d.HtmlRegion, d.RawHtml]
    inner = d.RawHtml("<div><span v-click>a</span></div>\n<div v-click>b</div>", clicks=timings[:2])
    assert clicks.parts(inner) == (inner,)  # a click inside an element: the block stays whole (check warns)
    text = d.RawHtml("<div v-click>a</div> and text", clicks=timings[:1])
    assert clicks.parts(text) == (text,)
