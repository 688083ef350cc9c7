"""The box a figure is shown in (slidegen.deck.figbox) and the type-size rules of ``slidegen check`` (check_type)."""

from __future__ import annotations

from pathlib import Path

from slidegen.check import type_size as check_type
from slidegen.deck import figbox
from slidegen.deck import nodes as d


def _slide(*blocks: d.Block, layout: str = "default", slots: dict | None = None) -> d.Slide:
    title = d.Heading(1, (d.Text("A title"),), line=2)
    return d.Slide(1, 1, layout, {}, "A title", "", (title, *blocks), slots or {}, title_heading=0)


def _deck(*slides: d.Slide) -> d.Deck:
    return d.Deck(Path("decks/09-x.md"), "X", {}, slides)


FIG = d.Figure("a curve", "fig:ch99.curve", line=4)


def test_a_figure_alone_under_its_title_gets_the_body_and_text_takes_its_share() -> None:
    ((_, alone),) = figbox.figure_boxes(_slide(FIG))
    assert alone.w == 1136 and 440 <= alone.h <= 520
    para = d.Paragraph((d.Text("one line of takeaway under the figure"),), line=6)
    ((_, with_line),) = figbox.figure_boxes(_slide(FIG, para))
    assert with_line.w == 1136 and alone.h - 70 <= with_line.h < alone.h
    listed = d.BulletList(tuple(d.ListItem((d.Paragraph((d.Text("a point " * 12),)),)) for _ in range(4)))
    ((_, crowded),) = figbox.figure_boxes(_slide(FIG, listed))
    assert crowded.h < with_line.h - 150 and crowded.too_small


def test_a_column_or_a_side_gets_half_the_width() -> None:
    right = {"right": (d.Paragraph((d.Text("x"),)),)}
    ((_, column),) = figbox.figure_boxes(_slide(FIG, layout="two-cols", slots=right))
    assert column.w == (1136 - 56) // 2 // 8 * 8
    side = d.Slide(1, 1, "image-right", {"image": "fig:ch99.curve"}, "t", "", ())
    (sized,) = figbox.sized(_deck(side)).slides
    assert sized.frontmatter["image"] == f"fig:ch99.curve@{figbox.side_box(side)}"


def test_sized_names_each_figure_with_its_box_and_split_reads_it_back() -> None:
    (slide,) = figbox.sized(_deck(_slide(d.Click((FIG,), line=3)))).slides
    (click,) = [b for b in slide.blocks if isinstance(b, d.Click)]
    (figure,) = click.blocks
    name, box = figbox.split(figure.src[4:])
    assert name == "ch99.curve" and box is not None and figure.src == f"fig:ch99.curve@{box.w}x{box.h}"
    assert figbox.split("ch99.curve") == ("ch99.curve", None)
    assert box.inches == (box.w / 96, box.h / 96)


def test_check_warns_on_code_that_does_not_fit_at_18_pt_and_on_figures_without_room() -> None:
    short = d.CodeBlock("x = 1\ny = 2\n", "python", line=5)
    long = d.CodeBlock("".join(f"x{i} = {i}\n" for i in range(20)), "python", line=9)
    wide = d.CodeBlock("y = " + "a + " * 60 + "b\n" + "z = 1\n" * 13, "python", line=13)
    listed = d.BulletList(tuple(d.ListItem((d.Paragraph((d.Text("a point " * 12),)),)) for _ in range(4)))
    deck = _deck(_slide(short), _slide(long), _slide(wide), _slide(FIG, listed), _slide(FIG))
    found = check_type.warnings("decks/09-x.md", deck)
    messages = [f"{w.line}: {w.message}" for w in found]
    assert len(found) == 3, messages
    assert messages[0].startswith("9: slide 2: this code block does not fit at 18 pt (20 lines")
    assert messages[1].startswith("13: slide 3: this code block does not fit at 18 pt (14 lines (")
    assert "wrapped" in messages[1]
    assert messages[2].startswith("4: slide 4: figure 'ch99.curve' gets a 1136x") and "too small" in messages[2]
    assert all(w.severity == "warning" for w in found)
