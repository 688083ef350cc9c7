"""One look: the theme's colours pass WCAG AA, both writers use its code style, every slide
carries the deck title, chapter and slide number, and the index lists every deck."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pptx import Presentation
from pygments.styles import get_style_by_name
from pygments.token import Whitespace

from slidegen import theme
from slidegen.cli.main import main
from slidegen.media import assets

AA = 4.5


def relative_luminance(colour: str) -> float:
    """WCAG 2.x relative luminance of ``#rrggbb``."""
    value = colour.lstrip("#")
    assert re.fullmatch(r"[0-9a-fA-F]{6}", value), colour
    channels = []
    for i in (0, 2, 4):
        c = int(value[i : i + 2], 16) / 255
        channels.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    r, g, b = channels
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio, from 1 (none) to 21 (black on white)."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_on_known_pairs() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the classic AA grey


@pytest.mark.parametrize("fg, bg", theme.TEXT_PAIRS, ids=[f"{f}-on-{b}" for f, b in theme.TEXT_PAIRS])
def test_every_text_colour_passes_aa_on_its_background(fg: str, bg: str) -> None:
    ratio = contrast(getattr(theme, fg), getattr(theme, bg))
    assert ratio >= AA, f"{fg} {getattr(theme, fg)} on {bg} {getattr(theme, bg)}: {ratio:.2f}:1"


def test_text_pairs_cover_every_text_colour_and_background() -> None:
    used_fg = {f for f, _ in theme.TEXT_PAIRS}
    used_bg = {b for _, b in theme.TEXT_PAIRS}
    assert {"TEXT", "MUTED", "ACCENT", "TEXT_ON_DARK"} <= used_fg
    assert {"BACKGROUND", "ACCENT_DARK_BG", "CODE_BACKGROUND", "CODE_HIGHLIGHT", "TABLE_HEADER_BACKGROUND"} <= used_bg


@pytest.mark.parametrize("background", ["CODE_BACKGROUND", "CODE_HIGHLIGHT"])
def test_code_style_token_colours_pass_aa(background: str) -> None:
    """Every token colour of theme.CODE_STYLE, on the code box and on a highlighted line."""
    style = get_style_by_name(theme.CODE_STYLE)
    bg = getattr(theme, background)
    failing = []
    for token, look in style:
        if token in Whitespace or not look["color"]:
            continue  # whitespace shows no ink
        ratio = contrast("#" + look["color"], "#" + look["bgcolor"] if look["bgcolor"] else bg)
        if ratio < AA:
            failing.append(f"{token} #{look['color']}: {ratio:.2f}:1")
    assert not failing, f"{theme.CODE_STYLE} on {background} {bg}: {failing}"


def test_both_writers_colour_code_with_the_theme_style() -> None:
    from pygments.token import Keyword, String

    from slidegen.deck.nodes import CodeBlock
    from slidegen.write.pptx.content import code_item

    style = get_style_by_name(theme.CODE_STYLE)
    colours = {"#" + style.style_for_token(t)["color"].lower() for t in (Keyword, String)}
    css = assets.pygments_css().lower()
    assert all(c in css for c in colours)
    item = code_item(CodeBlock('def f():\n    return "x"\n', "python"), theme.CODE_PT)
    used = {run.color.lower() for para in item.paras for run in para.runs if run.color}
    assert colours <= used


def test_theme_css_has_the_theme_colours_and_no_web_fonts() -> None:
    css = assets.theme_css()
    for name in ("BACKGROUND", "TEXT", "MUTED", "ACCENT", "CODE_BACKGROUND"):
        assert getattr(theme, name) in css
    assert "@import" not in css and "url(http" not in css
    assert "Carlito" in css and "DejaVu Sans Mono" in css  # offline fallbacks Debian ships


# --------------------------------------------------------------------------- footers and the index

DECKS = {
    "01-loop.md": ("The Training Loop", 1, "Batch, forward, loss, backward, update."),
    "02-data.md": ("Data and Tokens", 2, "Characters in, windows out."),
    "03-attention.md": ("Attention", 3, "Who looks at whom."),
    "glossary.md": ("Glossary", None, "Every term, one line each."),
}


def _deck_text(title: str, chapter: int | None, summary: str) -> str:
    head = f"---\ntitle: {title}\n" + (f"chapter: {chapter}\n" if chapter else "") + f"summary: {summary}\n---\n"
    return head + f"\n# {title}\n\nA cover.\n\n---\n\n# Second\n\nText.\n\n---\nlayout: section\n---\n\n# Part two\n"


@pytest.fixture
def small_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "decks").mkdir()
    for name, (title, chapter, summary) in DECKS.items():
        (tmp_path / "decks" / name).write_text(_deck_text(title, chapter, summary), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_index_lists_every_deck_and_the_glossary_with_title_and_summary(small_project: Path) -> None:
    assert main(["build", "--to", "html"]) == 0
    index = (small_project / "build" / "html" / "index.html").read_text(encoding="utf-8")
    entries = re.findall(r'<a href="([^"]+)"', index)
    assert entries == ["01-loop.html", "02-data.html", "03-attention.html", "glossary.html"]
    for title, _, summary in DECKS.values():
        assert title in index and summary in index


def test_every_slide_carries_deck_title_chapter_and_number(small_project: Path) -> None:
    assert main(["build", "--to", "html,pptx"]) == 0
    for name, (title, chapter, _) in DECKS.items():
        slug = name.removesuffix(".md")
        page = (small_project / "build" / "html" / f"{slug}.html").read_text(encoding="utf-8")
        footers = re.findall(r'<footer class="slide-footer">(.*?)</footer>', page, re.DOTALL)
        assert len(footers) == 3
        for number, footer in enumerate(footers, start=1):
            assert title in footer and f"{number} / 3" in footer
            assert (f"Chapter {chapter}" in footer) == (chapter is not None)
        prs = Presentation(str(small_project / "build" / "pptx" / f"{slug}.pptx"))
        for slide in prs.slides:
            texts = {shape.name: shape.text_frame.text for shape in slide.shapes if shape.has_text_frame}
            assert title in texts["Footer"]
            assert (f"Chapter {chapter}" in texts["Footer"]) == (chapter is not None)
            assert slide.shapes._spTree.xpath(".//a:fld[@type='slidenum']")
