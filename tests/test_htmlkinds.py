"""The reader decides what raw HTML and fences are (slidegen/deck/htmlkinds.py): a Diagram, a Component, a
ComponentBlock, an HtmlRegion or a plain RawHtml; binding fills their attributes and keeps their type."""

from __future__ import annotations

from pathlib import Path

from slidegen.bind.numbers import bind_deck
from slidegen.deck import elements
from slidegen.deck import nodes as d
from slidegen.read.parse import parse_text
from slidegen.record.results import Result, Results


def blocks(body: str, tmp_path: Path) -> tuple[d.Block, ...]:
    return parse_text(f"# Slide\n\n{body}\n", tmp_path / "d.md").slides[0].blocks[1:]


def test_a_mermaid_fence_is_a_diagram_and_other_fences_code(tmp_path: Path) -> None:
    found = blocks(
        "```mermaid\nflowchart LR\n  a --> b\n```\n\n```Mermaid\ngraph TD\n```\n\n```py\nx = 1\n```", tmp_path
    )
    assert [type(b) for b in found] == [d.Diagram, d.Diagram, d.CodeBlock]
    first = found[0]
    assert isinstance(first, d.Diagram) and first.code == "flowchart LR\n  a --> b" and first.line == 3
    assert first.picture_key == elements.diagram_key(first.code) and first.picture_key.startswith("mermaid:")


def test_a_custom_element_inline_is_a_component_with_its_attributes(tmp_path: Path) -> None:
    (para,) = blocks(
        'Peak <lr-dot alt="the peak" print-state="2" run="ch01.trainer">here</lr-dot> and <b>x</b>', tmp_path
    )
    assert isinstance(para, d.Paragraph)
    spans = [n for n in d.walk_inlines(para.children) if isinstance(n, d.HtmlSpan)]
    assert [type(n) for n in spans] == [d.Component, d.HtmlSpan]  # <b> stays a span
    comp = spans[0]
    assert isinstance(comp, d.Component)
    assert (comp.tag, comp.alt, comp.print_state, comp.run, comp.fallback) == (
        "lr-dot",
        "the peak",
        "2",
        "ch01.trainer",
        None,
    )
    assert comp.picture_key == elements.component_key("lr-dot", comp.attrs)


def test_slidev_tags_and_icons_are_no_components(tmp_path: Path) -> None:
    (para,) = blocks(
        "A <carbon-logo-github /> icon, <font-face>reserved</font-face> and <carbon-add>x</carbon-add>", tmp_path
    )
    assert not any(isinstance(n, d.Component) for n in d.walk_inlines(d.block_inlines(para)))


def test_an_html_block_with_custom_elements_is_a_component_block(tmp_path: Path) -> None:
    (block,) = blocks(
        '<div class="row">\n<lr-schedule peak="0.02" alt="a"></lr-schedule>\n<unit-scale alt="b"></unit-scale>\n</div>',
        tmp_path,
    )
    assert isinstance(block, d.ComponentBlock) and block.tags == ("lr-schedule", "unit-scale")
    assert [(c.tag, c.alt, c.line) for c in block.components] == [("lr-schedule", "a", 4), ("unit-scale", "b", 5)]
    assert block.components[0].attr("peak") == "0.02"


def test_an_html_block_powerpoint_cannot_draw_is_a_region_and_a_style_is_not(tmp_path: Path) -> None:
    found = blocks(
        '<div class="grid"><p>one</p><p>two</p></div>\n\n<style>\nh1 { color: red }\n</style>\n\n'
        '<img src="a.png">\n\n<div>',
        tmp_path,
    )
    kinds = [type(b) for b in found if isinstance(b, d.RawHtml)]
    assert kinds == [d.HtmlRegion, d.RawHtml, d.RawHtml, d.RawHtml]  # a grid; a <style>, <img> tags, a wrapper tag
    region = found[0]
    assert isinstance(region, d.HtmlRegion) and region.picture_key == elements.region_key(region.html, region.line)


def test_binding_fills_a_components_attributes_and_keeps_its_type(tmp_path: Path) -> None:
    text = (
        '# A\n\n<lr-schedule peak="{{ ch90.lr.best }}" alt="x"></lr-schedule>\n\n'
        'Inline <unit-scale value="{{ ch90.base }}" alt="y">s</unit-scale>\n\n'
        '<div class="g" title="{{ ch90.base }}">grid</div>\n\n'
        '<div>\n<unit-scale value="{{ ch90.base }}" alt="z"></unit-scale>\n</div>\n'
    )
    deck = parse_text(text, tmp_path / "d.md")
    results = Results([Result("ch90.lr.best", 0.02, digits=1), Result("ch90.base", 2.5, digits=2)])
    bound, problems = bind_deck(deck, results)
    assert not problems
    lone, para, region, block = bound.slides[0].blocks[1:]
    assert isinstance(lone, d.Paragraph) and isinstance(lone.children[0], d.Component)  # an element on its own line
    assert lone.children[0].attr("peak") == "0.02"
    unbound = deck.slides[0].blocks[1]
    assert isinstance(unbound, d.Paragraph) and isinstance(unbound.children[0], d.Component)
    assert unbound.children[0].picture_key != lone.children[0].picture_key  # the key follows the bound value
    assert isinstance(para, d.Paragraph)
    (comp,) = [n for n in d.walk_inlines(para.children) if isinstance(n, d.Component)]
    assert comp.attr("value") == "2.5" and comp.line == 5
    assert isinstance(region, d.HtmlRegion) and 'title="2.5"' in region.html
    assert isinstance(block, d.ComponentBlock) and [(c.attr("value"), c.line) for c in block.components] == [
        ("2.5", 10)
    ]


def test_a_self_closing_custom_element_is_a_component_written_whole(tmp_path: Path) -> None:
    """``<lr-dot ... />`` would leave the element open in a browser (custom elements do not close themselves):
    it is a Component like any other, which the HTML page writes with its closing tag."""
    from slidegen.write.html import render_deck

    deck = parse_text('# Slide\n\nA dot <lr-dot alt="a dot" r="2" /> here\n', tmp_path / "d.md")
    para = deck.slides[0].blocks[1]
    assert isinstance(para, d.Paragraph)
    (comp,) = [n for n in para.children if isinstance(n, d.Component)]
    assert (comp.tag, comp.attrs, comp.alt, comp.children) == ("lr-dot", ' alt="a dot" r="2"', "a dot", ())
    assert '<lr-dot alt="a dot" r="2"></lr-dot>' in render_deck(deck, {})
