"""Slidev's ``src:`` imports, per-slide ``background``/``transition``/``zoom``/``clicks``, and the
headmatter's ``titleTemplate``, ``aspectRatio``, ``canvasWidth``, ``colorSchema``, ``transition``, ``defaults``,
``lineNumbers`` and ``fonts``.

The fixture is tests/fixtures/slidev/a.md, which imports tests/fixtures/slidev/parts/a-part.md.
"""

from __future__ import annotations

import re
import shutil
import struct
from pathlib import Path

import pytest
from lxml import etree
from pptx import Presentation
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.util import Emu

from slidegen import theme
from slidegen.check.project import check_project
from slidegen.cli.main import main
from slidegen.deck import background, settings
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.read import imports
from slidegen.read.frontmatter import key_warnings
from slidegen.read.parse import parse_deck, parse_text
from slidegen.write import html
from tests import needs

FIXTURES = Path(__file__).parent / "fixtures" / "slidev"
FIXTURE = FIXTURES / "a.md"
PART = FIXTURES / "parts" / "a-part.md"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


# ---------------------------------------------------------------------- parsing: imports and defaults


def test_imports_are_replaced_by_the_imported_slides_with_merged_frontmatter(deck: d.Deck):
    rows = [(s.index, s.line, s.layout, s.path and s.path.name, s.title) for s in deck.slides]
    assert rows == [
        (1, 15, "cover", None, "Slidev part a"),
        (2, 24, "default", None, "A dark colour"),
        (3, 33, "default", None, "A light colour, zoomed out"),
        (4, 42, "default", None, "A picture behind"),
        (5, 1, "default", "a-part.md", "Imported first"),  # not the cover: it is not the deck's first slide
        (6, 8, "fact", "a-part.md", "Imported fact"),
        (7, 16, "default", "a-part.md", "Imported third"),
        (8, 16, "center", "a-part.md", "Imported third"),  # src: ...#3 with layout: center over it
        (9, 58, "default", None, "The last slide"),
    ]
    assert deck.slide_path(deck.slides[4]) == deck.slides[4].path and deck.slide_path(deck.slides[0]) == FIXTURE
    # defaults are below a slide's own keys, an importing slide's keys above them (Slidev's order)
    assert [s.frontmatter.get("class") for s in deck.slides] == [
        "roomy",
        "roomy",
        "roomy",
        "roomy",
        "roomy",
        "roomy",
        "compact",
        "spotlight",
        "roomy",
    ]
    assert deck.slides[7].frontmatter == {"class": "spotlight", "layout": "center"}
    assert [(site.line, site.frontmatter["src"]) for site in deck.imports] == [
        (48, "./parts/a-part.md"),
        (52, "./parts/a-part.md#3"),
    ]
    assert "src" not in deck.headmatter and deck.headmatter["defaults"] == {"class": "roomy"}
    assert key_warnings("decks/a.md", deck) == []  # every key of the fixture is implemented


def test_ranges_follow_slidevs_parse_range_string():
    assert imports.pick(5, "") == imports.pick(5, "all") == imports.pick(5, "*") == [1, 2, 3, 4, 5]
    assert imports.pick(5, "none") == []
    assert imports.pick(6, "2-4") == [2, 3, 4]
    assert imports.pick(6, "5,1;3-") == [1, 3, 4, 5, 6]
    assert imports.pick(6, "4, 2-3, 3") == [2, 3, 4]
    for bad, message in [
        ("x", "is not a slide number or range"),
        ("3-1", "is empty"),
        ("0", "is empty"),
        ("2-9", r"goes past the file's last slide \(6\)"),
    ]:
        with pytest.raises(imports.ImportProblem, match=message):
            imports.pick(6, bad)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_imports_nest_and_a_hidden_import_brings_nothing(tmp_path: Path):
    root = _project(
        tmp_path,
        {
            "decks/01-x.md": "# One\n\n---\nsrc: /parts/a.md\nhide: true\n---\n\n---\nsrc: parts/b.md\n---\n",
            "decks/parts/a.md": "# A1\n\n---\n\n# A2\n",
            "decks/parts/b.md": "# B1\n\n---\nsrc: ./a.md#2\nclass: deep\n---\n",  # relative to b.md itself
        },
    )
    deck = parse_deck(root / "decks" / "01-x.md")
    # Slidev's loadSlide returns before src: on a hidden slide, so a.md's slides are not in the deck at all
    assert [(s.title, s.frontmatter) for s in deck.slides] == [("One", {}), ("B1", {}), ("A2", {"class": "deep"})]
    assert [(site.path.name, site.line, site.frontmatter) for site in deck.imports] == [
        ("01-x.md", 4, {"src": "/parts/a.md", "hide": True}),
        ("01-x.md", 9, {"src": "parts/b.md"}),
        ("b.md", 4, {"src": "./a.md#2", "class": "deep"}),
    ]
    from slidegen.read.frontmatter import visible

    assert [s.title for s in visible(deck).slides] == ["One", "B1", "A2"]


@pytest.mark.parametrize("key", ["hide", "disabled"])
def test_a_hidden_import_reads_no_file_as_slidev_does(tmp_path: Path, key: str):
    root = _project(
        tmp_path,
        {
            # a missing file, a file outside the project, a cycle and a range past the end: none is read, none is
            # an error
            "decks/01-x.md": (
                f"# One\n\n---\nsrc: ./missing.md\n{key}: true\n---\n\n"
                f"---\nsrc: ../../outside.md\n{key}: true\n---\n\n"
                f"---\nsrc: ./01-x.md#9\n{key}: true\n---\n\n"
                f"---\nsrc: ./p.md\n{key}: false\n---\n"
            ),
            "decks/p.md": "# P\n",
        },
    )
    deck = parse_deck(root / "decks" / "01-x.md")
    assert [(s.title, s.path and s.path.name) for s in deck.slides] == [("One", None), ("P", "p.md")]
    assert deck.slides[1].frontmatter == {key: False}  # false hides nothing: the import happens
    assert [site.line for site in deck.imports] == [4, 9, 14, 19]
    assert imports.skipped({"src": "x.md", "hide": True}) and imports.skipped({"disabled": True})
    assert not imports.skipped({"src": "x.md", "hide": False}) and not imports.skipped({"src": "x.md"})
    # only hidden imports: the deck has its own slide; with none of its own, it has no slides
    (root / "decks" / "02-y.md").write_text("---\nsrc: ./p.md\nhide: true\n---\n", encoding="utf-8")
    with pytest.raises(SlidegenError, match="the deck has no slides"):
        parse_deck(root / "decks" / "02-y.md")


@pytest.mark.parametrize(
    ("files", "where", "message"),
    [
        ({"decks/01-x.md": "# A\n\n---\nsrc: ./nope.md\n---\n"}, "decks/01-x.md:4:6", "src: './nope.md' not found"),
        (
            {"decks/01-x.md": "# A\n\n---\nsrc: ./p.md\n---\n", "decks/p.md": "# P\n\n---\nsrc: ./01-x.md\n---\n"},
            "decks/p.md:4:6",
            "src: imports form a cycle (01-x.md -> p.md -> 01-x.md)",
        ),
        (
            {"decks/01-x.md": "# A\n\n---\nsrc: ./p.md#4\n---\n", "decks/p.md": "# P\n"},
            "decks/01-x.md:4:6",
            "src: range '4' goes past the file's last slide (1)",
        ),
        (
            {"decks/01-x.md": "# A\n\n---\nsrc: ../../outside.md\n---\n", "outside.md": "# O\n"},
            "decks/01-x.md:4:6",
            "outside the project",
        ),
        (
            {"decks/01-x.md": "# A\n\n---\nsrc: ./p.md\n---\n", "decks/p.md": "# P\n\n```py\nx\n"},
            "decks/p.md:3:1",
            "unclosed code fence opened here",
        ),
        ({"decks/01-x.md": "# A\n\n---\nsrc: 3\n---\n"}, "decks/01-x.md:4:6", "src: names the Markdown file"),
    ],
)
def test_import_errors_are_located_in_the_file_that_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], where: str, message: str
):
    root = _project(tmp_path / "proj", files)
    monkeypatch.chdir(root)
    with pytest.raises(SlidegenError) as caught:
        parse_deck(Path("decks/01-x.md"))
    text = str(caught.value.diagnostic)
    assert text.startswith(where + ": error: ") and message in text, text


def test_imports_that_fan_out_stop_at_a_slide_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from slidegen.read import parse

    monkeypatch.setattr(parse, "MAX_IMPORTED_SLIDES", 6)
    twice = "---\nsrc: ./p{0}.md\n---\n\n---\nsrc: ./p{0}.md\n---\n"
    root = _project(
        tmp_path,
        {
            "decks/01-x.md": twice.format(0),
            "decks/p0.md": twice.format(1),
            "decks/p1.md": twice.format(2),
            "decks/p2.md": "# Leaf\n",
        },
    )
    with pytest.raises(SlidegenError, match="src: imports bring the deck past 6 slides") as caught:
        parse_deck(root / "decks" / "01-x.md")
    assert caught.value.diagnostic.path.endswith("p0.md") and caught.value.diagnostic.line == 6


def test_check_names_the_imported_file_for_problems_on_imported_slides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = _project(
        tmp_path,
        {
            "decks/01-x.md": "# A\n\n---\nsrc: ./parts/p.md\nwobble: 1\n---\n",
            "decks/parts/p.md": (
                "# P\n\nIt shows {{ ch01.nope }}\n\n---\nlayout: center\nflutter: 2\n---\n\n# Q [@nobody]\n"
            ),
        },
    )
    monkeypatch.chdir(root)
    found = [str(x) for x in check_project(root)]
    assert "decks/parts/p.md:3:10: error: unknown result key 'ch01.nope'" in found, found
    assert "decks/parts/p.md:7:1: warning: unknown frontmatter key 'flutter'; slidegen ignores it" in found
    assert "decks/01-x.md:5:1: warning: unknown frontmatter key 'wobble'; slidegen ignores it" in found
    assert not any("p.md" in x and "wobble" in x for x in found)  # warned once, where it is written
    assert any(x.startswith("decks/parts/p.md:10:") and "nobody" in x for x in found), found


def test_a_missing_picture_on_an_imported_slide_names_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = _project(
        tmp_path,
        {
            "decks/01-x.md": "# A\n\n---\nsrc: ./parts/p.md\n---\n",
            "decks/parts/p.md": "# P\n\n![a picture](img/none.png)\n",
        },
    )
    monkeypatch.chdir(root)
    found = [str(x) for x in check_project(root)]
    assert any(x.startswith("decks/parts/p.md:3:1: error: image 'img/none.png' not found") for x in found), found


def test_every_writer_names_the_imported_file_for_an_imported_slide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Pictures of HTML regions, components and diagrams, display math PowerPoint cannot take, a failed
    highlighter, component data: each names ``parts/p.md`` and its line there, not the importing deck."""
    from slidegen.check.outputs import math_problems
    from slidegen.media.components import Component
    from slidegen.media.images import resolve_media
    from slidegen.write import highlight, htmlpictures, snapshot
    from slidegen.write.pptx import layout

    part = (
        '# P\n\n<div style="display: grid">\n<div>cell</div>\n</div>\n\n'  # lines 3-5
        '<lr-x alt="x" run="nope"></lr-x>\n\n'  # line 7
        "```mermaid\ngraph LR\n  a --> b\n```\n\n"  # lines 9-12
        "$$\n\\ce{H2O}\n$$\n\n"  # lines 14-16
        "```python\nx = 1\n```\n"
    )  # lines 18-20
    root = _project(tmp_path, {"decks/01-x.md": "# A\n\n---\nsrc: ./parts/p.md\n---\n", "decks/parts/p.md": part})
    monkeypatch.chdir(root)
    deck = parse_deck(Path("decks/01-x.md"))
    where = "decks/parts/p.md"
    assert [(job.path, job.line) for job in htmlpictures.deck_jobs(deck)] == [(where, 3)]
    found = {"lr-x": Component("lr-x", root / "components" / "lr-x.js", None, ("lr-x",))}
    jobs = snapshot.deck_jobs(deck, found, root / "results" / "runs", root)
    assert sorted({(job.path, job.line) for job in jobs}) == [(where, 3), (where, 7), (where, 9)]
    assert [(x.path, x.line) for x in math_problems(deck)] == [(where, 14)]
    with pytest.raises(SlidegenError) as caught:
        layout.build(deck, {})
    assert (caught.value.diagnostic.path, caught.value.diagnostic.line) == (where, 14)
    monkeypatch.setattr(highlight, "highlighted", lambda code, lang: ((), False))
    assert [(x.path, x.line, x.severity) for x in highlight.problems(deck)] == [
        (where, 9, "warning"),
        (where, 18, "warning"),
    ]
    with pytest.raises(SlidegenError) as caught:
        resolve_media(deck, None, root)
    assert str(caught.value.diagnostic).startswith(f"{where}:7:1: error: component data: run='nope'")


@pytest.mark.browser
def test_check_names_the_imported_file_for_a_diagram_mermaid_cannot_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    needs.chromium()
    root = _project(
        tmp_path,
        {
            "decks/01-x.md": "# A\n\n---\nsrc: ./parts/p.md\n---\n",
            "decks/parts/p.md": "# P\n\n```mermaid\nflowchart LR\n  a --> b\n  b -->> c((\n```\n",
        },
    )
    monkeypatch.chdir(root)
    errors = [x for x in check_project(root) if x.severity == "error"]
    assert [(x.path, x.line) for x in errors] == [("decks/parts/p.md", 6)], [str(x) for x in errors]
    assert errors[0].message.startswith("Mermaid cannot parse this diagram")


@pytest.mark.browser
def test_the_pdf_names_the_imported_file_for_a_slide_taller_than_its_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import contextlib
    import io

    needs.chromium()
    tall = "# Tall\n\n" + "\n\n".join(f"Line {i}" for i in range(60)) + "\n"
    root = _project(tmp_path, {"decks/01-x.md": "# A\n\n---\nsrc: ./parts/p.md\n---\n", "decks/parts/p.md": tall})
    monkeypatch.chdir(root)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        assert main(["build", "--to", "pdf"]) == 0
    assert (
        "decks/parts/p.md:1:1: warning: slide 2 is taller than its page: its bottom is cut off in the PDF"
        in err.getvalue()
    ), err.getvalue()


# ---------------------------------------------------------------------- frontmatter values


@pytest.mark.parametrize(
    ("frontmatter", "where", "message"),
    [
        ("aspectRatio: 21/9", "3:14", "aspectRatio '21/9' is not 16/9 or 4/3"),
        ("canvasWidth: wide", "3:14", "canvasWidth 'wide' is not a width in pixels"),
        ("colorSchema: sepia", "3:14", "colorSchema 'sepia' is not one of light, dark, auto, all"),
        ("zoom: 0", "3:7", "zoom 0 is not a scale from 0.1 to 10"),
        ("clicks: -1", "3:9", "clicks -1 is not a whole number of clicks"),
        ("lineNumbers: yes please", "3:14", "lineNumbers must be true or false"),
        ("background: https://x.org/a.png", "3:13", "is remote"),
        ("background: notacolour", "3:13", "background 'notacolour' is neither a colour"),
        ("defaults: [1]", "3:11", "defaults: must be a mapping"),
        ("fonts: {sans: Carlito, cdn: yes}", "3:8", "fonts key 'cdn' is not one of Slidev's"),
    ],
)
def test_bad_values_are_errors_at_their_key(frontmatter: str, where: str, message: str):
    with pytest.raises(SlidegenError) as caught:
        parse_text(f"---\ntitle: T\n{frontmatter}\n---\n\n# T\n", Path("d.md"))
    text = str(caught.value.diagnostic)
    assert text.startswith(f"d.md:{where}: error: ") and message in text, text


def test_check_warns_on_what_slidegen_cannot_do_as_slidev_does():
    deck = parse_text(
        "---\nfonts:\n  sans: Fira Sans\n  provider: google\ndefaults:\n  wobble: 1\n---\n\n# T\n\n"
        "---\ntransition: my-swirl\naspectRatio: 4/3\n---\n\n# U\n",
        Path("d.md"),
    )
    assert [str(w) for w in key_warnings("d.md", deck)] == [
        "d.md:2:1: warning: fonts.provider 'google' is not used: slidegen never loads web fonts, only fonts "
        "installed on the machine that shows the deck",
        "d.md:2:1: warning: fonts.sans: Fira Sans would come from a web font service in Slidev; slidegen shows it "
        "only where it is installed (list it in fonts.local to say so)",
        "d.md:5:1: warning: defaults: key 'wobble' is not a slide's frontmatter key; slidegen ignores it",
        "d.md:12:1: warning: transition 'my-swirl' is not one of Slidev's built-in transitions (fade, fade-out, "
        "slide-left, slide-right, slide-up, slide-down, view-transition, none); the slide fades",
        "d.md:13:1: warning: frontmatter key 'aspectRatio' belongs in the headmatter (the first slide's frontmatter)",
    ]


def test_settings_read_slidevs_forms():
    assert [settings.aspect(v) for v in ("16/9", "4:3", "16x9", "4|3", 16 / 9, "1/1", "3/0")] == [
        (16, 9),
        (4, 3),
        (16, 9),
        (4, 3),
        (16, 9),
        None,
        None,
    ]
    look = settings.deck_settings(
        {
            "aspectRatio": "4/3",
            "canvasWidth": 980,
            "titleTemplate": "%s - Slidev",
            "transition": "slide-up | slide-down",
            "fonts": {"mono": "Fira Code, monospace"},
        }
    )
    assert (look.canvas_width, look.canvas_height, look.transition) == (980, 735, "slide-up")
    assert look.page_title("Deck") == "Deck - Slidev" and look.mono == '"Fira Code", monospace'
    assert settings.reveal_transition("slide-left | slide-right") == "slide"
    assert settings.reveal_transition("swirl") == "fade" and settings.reveal_transition(None) is None


def test_fonts_follow_slidevs_keys_in_html():
    look = settings.deck_settings(
        {
            "fonts": {
                "sans": "Carlito, sans-serif",
                "serif": "Liberation Serif",
                "mono": "monospace, DejaVu Sans Mono",
                "local": "Carlito",
            }
        }
    )
    assert (look.pptx_sans, look.pptx_mono) == ("Carlito", "DejaVu Sans Mono")  # a generic family is no typeface
    assert look.font_css() == (
        f':root {{ --sans: "Carlito", sans-serif, {theme.SANS_CSS}; --serif: "Liberation Serif", '
        f'{settings.SERIF_CSS}; --mono: monospace, "DejaVu Sans Mono", {theme.MONO_CSS}; }}'
        " .reveal .font-serif { font-family: var(--serif); }"
    )
    bare = settings.deck_settings({"fonts": {"sans": "Carlito", "fallbacks": False}})
    assert bare.font_css() == ':root { --sans: "Carlito"; }' and not bare.fallbacks
    assert settings.deck_settings({}).font_css() == "" and settings.deck_settings({}).pptx_sans is None
    assert settings.font_warnings({"sans": "Carlito", "local": "Carlito", "weights": "200,400", "italic": True}) == [
        "fonts.weights is not used: it says which styles of a web font Slidev downloads; slidegen uses the "
        "installed font's own weights and italics",
        "fonts.italic is not used: it says which styles of a web font Slidev downloads; slidegen uses the "
        "installed font's own weights and italics",
    ]
    with pytest.raises(SlidegenError, match="fonts.fallbacks must be true or false"):
        parse_text("---\nfonts:\n  fallbacks: nope\n---\n\n# T\n", Path("d.md"))


def test_check_warns_once_that_a_pptx_names_fonts_it_cannot_embed():
    warn = settings.pptx_font_warnings
    assert [
        str(x) for x in warn("d.md", 9, {"sans": "Carlito", "mono": "Fira Code", "local": "Carlito, Fira Code"})
    ] == [
        "d.md:9:1: warning: PowerPoint cannot embed fonts: the PPTX shows fonts.sans Carlito and fonts.mono "
        "Fira Code only on a machine that has it installed, and its default font elsewhere"
    ]
    assert warn("d.md", 9, {"sans": "Arial", "mono": "Courier New", "local": "Arial, Courier New"}) == []
    assert warn("d.md", 9, {"sans": "Fira Sans"}) == []  # the web-font warning already says so
    assert len(warn("d.md", 9, {"sans": "Fira Sans", "provider": "none"})) == 1
    assert warn("d.md", 9, {"serif": "Liberation Serif", "local": "Liberation Serif"}) == []  # no serif in PPTX
    assert warn("d.md", 9, None) == []


def test_check_on_the_fixture_names_the_font_once_at_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    shutil.copytree(FIXTURES, tmp_path / "decks")
    for other in ("b.md", "c.md", "all.md"):
        (tmp_path / "decks" / other).unlink(missing_ok=True)
    monkeypatch.chdir(tmp_path)
    found = [str(x) for x in check_project(tmp_path) if "font" in x.message]
    assert found == [
        "decks/a.md:9:1: warning: PowerPoint cannot embed fonts: the PPTX shows fonts.sans Carlito "
        "only on a machine that has it installed, and its default font elsewhere"
    ]


def test_defaults_keep_the_headmatter_bound():
    from slidegen.bind.numbers import bind_deck
    from slidegen.record.results import Results

    deck = parse_text("---\ntitle: 'Deck {{ \"two\" }}'\ndefaults:\n  class: roomy\n---\n\nText\n", Path("d.md"))
    bound, problems = bind_deck(deck, Results())
    assert problems == [] and bound.title == "Deck two" and bound.headmatter["title"] == "Deck two"
    assert bound.slides[0].frontmatter["class"] == "roomy"


def test_background_text_colour_keeps_aa_contrast():
    for value in ("#1d4ed8", "lightyellow", "#777", "rgb(118, 118, 118)", "black", "white", "#ff0000", "teal"):
        found = background.parse(value)
        assert found is not None and found.color is not None
        assert background.contrast(found.text, found.color) >= 4.5, value
    assert background.parse("#1d4ed8") == background.Background("#1d4ed8", None, theme.TEXT_ON_DARK)
    assert background.parse("LightYellow") == background.Background("#ffffe0", None, theme.TEXT)
    assert getattr(background.parse("#777"), "text", None) == "#000000"  # neither theme colour: 4.5:1 on mid grey
    assert background.parse("img/a.png") == background.Background(None, "img/a.png", theme.TEXT)
    assert getattr(background.parse("fig:ch01.loss"), "image", None) == "fig:ch01.loss"
    # the faded picture keeps the dark text above 7:1 even where the picture is black
    grey = round(255 * (1 - background.PICTURE_OPACITY))
    assert background.contrast(theme.TEXT, f"#{grey:02x}{grey:02x}{grey:02x}") > 7


# ---------------------------------------------------------------------- HTML


def test_html_draws_backgrounds_transitions_zoom_and_the_deck_settings(deck: d.Deck):
    page = html.render_deck(deck, {"img/a-backdrop.png": "media/a-backdrop.png"})
    assert "<title>Slidev part a · slidegen</title>" in page
    assert 'transition: "slide",' in page and "width: 1280," in page and "height: 720," in page
    assert ':root { --sans: "Carlito", Calibri' in page
    sections = [line for line in page.splitlines() if line.startswith("<section")]
    assert sections[1] == (
        '<section class="layout-default tone-dark roomy" data-background-color="#1d4ed8" '
        'data-transition="fade" style="--muted: #ffffff; --accent: #ffffff">'
    )
    assert sections[2] == (
        '<section class="layout-default roomy" data-background-color="#ffffe0" '
        'style="--muted: #1f2933; --accent: #1f2933">'
    )
    assert sections[3] == (
        '<section class="layout-default roomy" data-background-color="#ffffff" '
        'data-background-image="media/a-backdrop.png" data-background-opacity="0.25">'
    )
    assert sections[0].endswith('data-transition="slide">')  # the headmatter's: the deck's own for the others
    assert '<div class="slide-body" style="zoom: 0.8">' in page
    assert sections[5].startswith('<section class="layout-fact tone-dark centered text-center roomy"')
    assert page.count('<footer class="slide-footer">') == 9


def test_html_four_to_three_and_a_dark_schema():
    text = (
        FIXTURE.read_text(encoding="utf-8")
        .replace("aspectRatio: 16/9", "aspectRatio: 4/3")
        .replace("canvasWidth: 1280", "canvasWidth: 980")
        .replace("colorSchema: light", "colorSchema: dark")
    )
    deck = parse_text(text, FIXTURE)
    page = html.render_deck(deck, {})
    assert "width: 980," in page and "height: 735," in page
    assert ".reveal .slides section { height: 735px; }" in page
    sections = [line for line in page.splitlines() if line.startswith("<section")]
    assert sections[0].startswith('<section class="layout-cover tone-dark') and "#1f2933" in sections[0]
    assert sections[2].startswith('<section class="layout-default roomy" data-background-color="#ffffe0"')


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None = None, to: str = "html,pptx") -> Path:
    shutil.copytree(FIXTURES, tmp_path / "decks")
    (tmp_path / "decks" / "a.md").rename(tmp_path / "decks" / "01-a.md")
    if text is not None:
        (tmp_path / "decks" / "01-a.md").write_text(text, encoding="utf-8")
    for other in ("b.md", "c.md", "all.md"):
        (tmp_path / "decks" / other).unlink(missing_ok=True)
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--to", to]) == 0
    return tmp_path / "build"


def test_html_in_chromium_offline_with_the_colours_it_promises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    executable = needs.chromium()
    out = _build(tmp_path, monkeypatch, to="html")
    from playwright.sync_api import sync_playwright

    from slidegen.write.pdf import CHROMIUM_ARGS

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        needs.record_problems(page, problems)
        page.goto((out / "html" / "01-a.html").as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        page.evaluate("Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
        assert page.title() == "Slidev part a · slidegen"
        assert page.evaluate("Reveal.getTotalSlides()") == 9
        seen = []
        for i in (1, 2, 3, 7):
            page.evaluate(f"Reveal.slide({i})")
            seen.append(
                page.evaluate("""() => {
                const s = Reveal.getCurrentSlide(), h = s.querySelector('h1'), b = s.querySelector('.slide-body');
                const bg = document.querySelector('.backgrounds .slide-background.present');
                return [getComputedStyle(h).color, getComputedStyle(bg).backgroundColor,
                        getComputedStyle(b).zoom, getComputedStyle(s.querySelector('.footer-number')).color,
                        s.getAttribute('data-transition')]; }""")
            )
        browser.close()
    assert seen == [
        ["rgb(255, 255, 255)", "rgb(29, 78, 216)", "1", "rgb(255, 255, 255)", "fade"],
        ["rgb(31, 41, 51)", "rgb(255, 255, 224)", "0.8", "rgb(31, 41, 51)", None],
        ["rgb(31, 41, 51)", "rgb(255, 255, 255)", "1", "rgb(82, 96, 109)", None],
        ["rgb(31, 41, 51)", "rgb(255, 255, 255)", "1", "rgb(82, 96, 109)", None],
    ]
    assert not problems, problems


# ---------------------------------------------------------------------- PPTX, PNG


def _fill(slide) -> str | None:
    bg = slide.element.find(f"{P}cSld/{P}bg")
    found = None if bg is None else bg.find(f".//{A}srgbClr")
    return None if found is None else found.get("val")


def test_pptx_draws_backgrounds_tones_transitions_and_imported_slides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    out = _build(tmp_path, monkeypatch)
    prs = Presentation(str(out / "pptx" / "01-a.pptx"))
    assert (prs.slide_width, prs.slide_height) == (Emu(12192000), Emu(6858000))
    slides = list(prs.slides)
    assert len(slides) == 9
    assert [_fill(s) for s in slides] == [None, "1D4ED8", "FFFFE0", None, None, "1F2933", None, None, None]
    titles = [s.shapes.title.text_frame.text if s.shapes.title is not None else "" for s in slides]
    assert titles[4:8] == ["Imported first", "Imported fact", "Imported third", "Imported third"]
    title_colour = slides[1].shapes.title.text_frame.paragraphs[0].runs[0].font.color.rgb
    assert str(title_colour) == "FFFFFF"
    faded = slides[3].element.findall(f".//{A}blip/{A}alphaModFix")
    assert [x.get("amt") for x in faded] == ["25000"]
    first_pic = next(s for s in slides[3].shapes if s.shape_type == 13)
    assert (first_pic.left, first_pic.top, first_pic.width, first_pic.height) == (0, 0, 12192000, 6858000)
    transitions = []
    for slide in slides:
        found = slide.element.find(f"{P}transition")
        transitions.append(None if found is None else found[0].tag.split("}")[1] + found[0].get("dir", ""))
    assert transitions == ["pushl", "fade", "pushl", "pushl", "pushl", "pushl", "pushl", "pushl", "pushl"]


def test_pptx_names_the_decks_fonts_on_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    text = (
        FIXTURE.read_text(encoding="utf-8")
        .replace("  sans: Carlito\n", "  sans: Carlito\n  mono: Liberation Mono\n")
        .replace("# The last slide\n", "# The last slide\n\nSome `inline code`\n\n```py\nx = 1\n```\n")
    )
    out = _build(tmp_path, monkeypatch, text, to="pptx")
    prs = Presentation(str(out / "pptx" / "01-a.pptx"))
    faces: dict[str, set[str]] = {}
    for slide in prs.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                for para in shape.text_frame.paragraphs:
                    for run in para.runs:
                        faces.setdefault(run.font.name, set()).add(run.text)
    assert set(faces) == {"Carlito", "Liberation Mono"}, faces  # the theme's Calibri and DejaVu Sans Mono: none
    assert "inline code" in faces["Liberation Mono"] and "Imported fact" in faces["Carlito"]
    assert any("x" in t for t in faces["Liberation Mono"])
    # text an author adds later in PowerPoint takes the theme's fonts: the deck's sans, for headings and body
    theme_xml = prs.slide_master.part.part_related_by(RT.THEME).blob
    latin = etree.fromstring(theme_xml).findall(".//a:fontScheme/*/a:latin", {"a": A[1:-1]})
    assert [f.get("typeface") for f in latin] == ["Carlito", "Carlito"]


def test_pptx_and_png_at_four_to_three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    text = (
        FIXTURE.read_text(encoding="utf-8")
        .replace("aspectRatio: 16/9", "aspectRatio: 4/3")
        .replace("canvasWidth: 1280", "canvasWidth: 1024")
    )
    out = _build(tmp_path, monkeypatch, text, to="pptx")
    prs = Presentation(str(out / "pptx" / "01-a.pptx"))
    assert (prs.slide_width, prs.slide_height) == (Emu(9144000), Emu(6858000))
    slides = list(prs.slides)
    backdrop = next(s for s in slides[3].shapes if s.shape_type == 13)  # the 16:9 picture covers the 4:3 slide
    assert (backdrop.left, backdrop.top, backdrop.width, backdrop.height) == (-1524000, 0, 12192000, 6858000)
    right = max(s.left + s.width for slide in slides for s in slide.shapes if s != backdrop)
    assert right <= prs.slide_width
    needs.chromium()
    assert main(["build", "--to", "png,pdf", "--scale", "1"]) == 0
    with (out / "png" / "01-a" / "01.png").open("rb") as f:
        head = f.read(24)
    assert struct.unpack(">II", head[16:24]) == (1280, 960)  # 1280 px wide at scale 1, whatever the canvas
    boxes = re.findall(rb"/MediaBox \[([^\]]*)\]", (out / "pdf" / "01-a.pdf").read_bytes())
    assert boxes == [b"0 0 768 576"] * 9  # the 1024x768 px canvas, at 96 px per inch
