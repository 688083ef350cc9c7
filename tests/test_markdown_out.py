"""`--to md` (Slidev) and `--to marp`: bound Markdown that other tools read, written from the deck model."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from slidegen.cli.main import main
from slidegen.deck.nodes import DeckIndex, Figure, block_inlines, plain_text, slide_blocks, walk_blocks
from slidegen.pipeline.bound import load_deck
from slidegen.read.parse import parse_deck, parse_text
from slidegen.record.results import Result, Results
from slidegen.write import markdown as markdown_out

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "decks"
MARP = ROOT / "node_modules" / ".bin" / "marp"

BOUND = """\
---
title: Loss is {{ ch01.val_loss.final }}
chapter: 1
summary: Numbers from results.md.
---

# Loss is {{ ch01.val_loss.final }}

---
id: tricky
---

# Tricky text

Validation loss ends at {{ ch01.val_loss.final | pm }} after {{ "2,000" }} steps.

Stars * and _underscores_ stay, so do <div> tags, $5 \\$ and \\{{ not a reference }}.

| key | value |
|:----|------:|
| final | {{ ch01.val_loss.final | pm }} |

$$
L = {{ ch01.val_loss.final }}
$$

1. see [this slide](#tricky)
2. or [the other deck](02-other.md#far)

<!-- The loss is {{ ch01.val_loss.final }} nats. -->

---
layout: two-cols
---

# Two

left

::right::

right

---
layout: fact
---

# {{ ch01.val_loss.final }}

nats
"""

OTHER = """\
---
title: Other
---

# Other

---
id: far
---

# Far away
"""


def make_project(root: Path) -> Path:
    decks = root / "decks"
    decks.mkdir(parents=True)
    (decks / "01-bound.md").write_text(BOUND, encoding="utf-8")
    (decks / "02-other.md").write_text(OTHER, encoding="utf-8")
    shutil.copy(FIXTURES / "sample.md", decks / "03-sample.md")
    shutil.copytree(FIXTURES / "img", decks / "img")
    results = Results(
        [
            Result(
                "ch01.val_loss.final",
                2.27634,
                sd=0.00213,
                n=3,
                unit="nats",
                what="validation loss",
                source="run ch01.default 0123456789ab",
                digits=4,
            )
        ]
    )
    (root / "results").mkdir()
    results.write(root / "results" / "results.md")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("mdproject"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["build", "--to", "md,marp"]) == 0
    finally:
        os.chdir(cwd)
    return root


def visible_text(deck) -> list[str]:
    """Per slide: the plain text of every block, notes included, whitespace folded."""
    out = []
    for slide in deck.slides:
        parts = []
        for block in walk_blocks(slide_blocks(slide) + slide.notes_blocks):
            parts.append(plain_text(block_inlines(block)))
            if isinstance(block, Figure):
                parts.append(block.alt + "|" + block.title)
            tex = getattr(block, "tex", None) or getattr(block, "code", None)
            if tex:
                parts.append(tex)
        out.append(" ".join(" ".join(parts).split()))
    return out


def test_slidev_markdown_round_trips_to_the_bound_deck(built: Path) -> None:
    results = Results.read(built / "results" / "results.md")
    for slug in ("01-bound", "02-other", "03-sample"):
        bound, _ = load_deck(built / "decks" / f"{slug}.md", results)
        out = built / "build" / "md" / f"{slug}.md"
        text = out.read_text(encoding="utf-8")
        assert "{{" not in text.replace("&#123;&#123;", "")
        again = parse_deck(out)  # our own reader takes it back: Slidev's rules
        assert [s.layout for s in again.slides] == [s.layout for s in bound.slides]
        assert [s.id for s in again.slides] == [s.id for s in bound.slides]
        assert [s.clicks for s in again.slides] == [s.clicks for s in bound.slides]
        assert visible_text(again) == visible_text(bound), slug


def test_slidev_markdown_has_headmatter_frontmatter_resolved_numbers_and_notes(built: Path) -> None:
    text = (built / "build" / "md" / "01-bound.md").read_text(encoding="utf-8")
    assert text.startswith("---\ntitle: Loss is 2.276\nchapter: 1\n")
    assert "\n---\nid: tricky\n---\n" in text and "\n---\nlayout: two-cols\n---\n" in text
    assert "2.276 ± 0.002 after 2,000 steps" in text
    assert "| final | 2.276 ± 0.002 |" in text
    assert "$$\nL = 2.276\n$$" in text
    assert "&lt;div>" in text and "\\$5" in text  # text stays text: no tag, no math
    assert "::right::" in text
    assert "[this slide](/2)" in text and "[the other deck](02-other.md#far)" in text
    tricky = text.split("\n---\nid: tricky\n---\n")[1].split("\n---\n")[0]
    assert tricky.rstrip().endswith("<!--\nThe loss is 2.276 nats.\n-->")  # notes: the final comment


def test_pictures_are_copied_beside_the_markdown_with_relative_paths(built: Path) -> None:
    text = (built / "build" / "md" / "03-sample.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"\((media/[^)\s]+)", text)) | set(re.findall(r"^image: (\S+)$", text, re.MULTILINE))
    assert paths and all(p.startswith("media/") for p in paths)
    for p in paths:
        assert (built / "build" / "md" / p).is_file()
    assert "{1-2|4|5-6}" in text and "<v-clicks>" in text and "theme: slidegen" not in text


def test_fig_images_point_at_the_rendered_file(tmp_path: Path) -> None:
    deck = parse_text('# A figure\n\n![Loss](fig:ch01.loss "Validation loss")\n', tmp_path / "01-f.md")
    rendered = tmp_path / "figures" / "ch01.loss-abc.svg"
    rendered.parent.mkdir()
    rendered.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    for flavor in markdown_out.FLAVORS:
        out = markdown_out.write_deck(deck, tmp_path / flavor, {"fig:ch01.loss": rendered}, flavor, DeckIndex())
        text = out.read_text(encoding="utf-8")
        match = re.search(r'!\[Loss\]\((media/[^ )]+) "Validation loss"\)', text)
        assert match and "fig:" not in text
        assert (out.parent / match.group(1)).read_bytes() == rendered.read_bytes()


def test_marp_markdown_has_directives_and_mapped_layouts(built: Path) -> None:
    text = (built / "build" / "marp" / "03-sample.md").read_text(encoding="utf-8")
    head = text.split("\n---\n", 1)[0]
    for line in ("marp: true", "paginate: true", "size: '16:9'", "footer: Training a tiny decoder · Chapter 1"):
        assert line in head
    assert text.count("<!-- _class: lead -->") == 1  # center (the cover stands flush left, as in HTML and PPTX)
    assert text.count("<!-- _class: lead invert -->") == 3  # fact, statement, end
    assert text.count("<!-- _class: invert -->") == 1  # section, flush left
    assert "![bg right contain](media/" in text  # image-right: a split background
    assert "::right::" not in text and "<v-click" not in text and "{1-2|4|5-6}" not in text
    assert "\n***\n" not in text  # a rule would start a new slide in Marp
    assert "<!--\nThe picture is drawn by matplotlib; point at the knee of the curve.\n-->" in text
    bound = (built / "build" / "marp" / "01-bound.md").read_text(encoding="utf-8")
    assert "[this slide](#2)" in bound and "[the other deck](02-other.html#2)" in bound


def test_marp_cli_renders_one_slide_per_deck_slide(built: Path, tmp_path: Path) -> None:
    from needs import file  # skips locally, fails under CI

    file(MARP, "run `npm ci` (marp-cli is a devDependency)")
    source = built / "build" / "marp" / "03-sample.md"
    out = tmp_path / "sample.html"
    run = subprocess.run(
        [str(MARP), "--html", str(source), "-o", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    page = out.read_text(encoding="utf-8")
    slides = re.findall(r'<section\b[^>]*\bid="(\d+)"', page)  # split backgrounds add id-less sections
    assert slides == [str(i) for i in range(1, 14)]
    assert len(parse_deck(FIXTURES / "sample.md").slides) == 13


def test_escape_text_keeps_text_as_text() -> None:
    assert markdown_out.escape_text("a*b_c`d[e]$f|g~h\\") == "a\\*b\\_c\\`d\\[e\\]\\$f\\|g\\~h\\\\"
    assert markdown_out.escape_text("<b> & &amp; {{ x }}") == "&lt;b> & &amp;amp; &#123;&#123; x }}"
    assert markdown_out.escape_text("1 < 2") == "1 < 2"
