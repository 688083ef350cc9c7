"""Every Slidev rule slidegen reads, in one fixture deck: tests/fixtures/slidev/all.md (issue 13's "Done when").

It has a headmatter of its own with every headmatter key issue 13 lists, then imports the Slidev
fixtures as a Slidev user joins decks (``src: ./a.md``, ``./b.md``, ``./c.md``, the layouts, footnotes and
raw-HTML decks of tests/fixtures/decks/, and parts/all-more.md for the per-slide keys, hidden slides,
separators with text, a snippet and notes by click), and ends with a hidden import, which brings nothing.
Every count here is derived from parsing the parts, so a part may grow.

Slidev's rules for the join (packages/parser/src/fs.ts): each imported slide keeps its own frontmatter
with the importing slide's over it; the importing deck's ``defaults`` apply, a part's do not; a part's
headmatter is its first slide's frontmatter, and that slide is not the deck's first, so it takes the
``default`` layout, not ``cover``.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pptx import Presentation

from slidegen.bind.library import load_library
from slidegen.check.project import check_decks
from slidegen.cli.main import main
from slidegen.deck import nodes as d
from slidegen.errors import Diagnostic
from slidegen.pipeline.index import read_decks
from slidegen.read.frontmatter import DECK_KEYS, SLIDE_KEYS, visible
from slidegen.read.parse import parse_deck
from slidegen.record.results import Results
from tests import needs

FIXTURES = Path(__file__).parent / "fixtures"
ALL = FIXTURES / "slidev" / "all.md"
#: The parts all.md imports that are decks of their own, in its order (all-more.md is a part only).
DECKS = ("a.md", "b.md", "c.md", "slidev_layouts.md", "slidev_footnotes.md", "slidev_html.md")
MORE = "parts/all-more.md"
#: Every headmatter key issue 13 lists.
HEADMATTER = {
    "title",
    "titleTemplate",
    "author",
    "info",
    "lang",
    "aspectRatio",
    "canvasWidth",
    "colorSchema",
    "transition",
    "defaults",
    "lineNumbers",
    "fonts",
}
#: all-more.md's shown slides: their fragments in HTML and their animation counts in PowerPoint.
MORE_FRAGMENTS: list[list[Any]] = [
    [],
    [],  # "More rules", "Keys by title" (the hidden and the disabled slide are in no output)
    [["0", "code-step custom fragment", ""]],  # the snippet's {2|3}: one click
    [["0", "click-step fragment", "Shown before any click. Shown after the "], ["0", "fragment", "One revealed line"]],
]
MORE_ANIMATIONS: list[int] = [0, 0, 1, 1]
NS = {"p": "http://schemas.openxmlformats.org/presentationml/2006/main"}


def copy_project(root: Path) -> Path:
    """A project whose decks/ holds the Slidev fixtures and the decks all.md imports from ../decks/."""
    shutil.copytree(FIXTURES / "slidev", root / "decks")
    for name in DECKS[3:]:
        shutil.copy(FIXTURES / "decks" / name, root / "decks" / name)
    return root


@dataclass(frozen=True)
class Joined:
    deck: d.Deck
    parts: dict[str, d.Deck]  # by file name, parsed alone


@pytest.fixture(scope="module")
def joined() -> Joined:
    deck = parse_deck(ALL)
    parts = {
        Path(site.frontmatter["src"]).name: parse_deck((ALL.parent / site.frontmatter["src"]).resolve())
        for site in deck.imports
        if site.path == ALL and not site.frontmatter.get("hide")
    }
    return Joined(deck, parts)


# --------------------------------------------------------------------------- the parsed deck


def _own(part: d.Deck, slide: d.Slide) -> dict[str, Any]:
    """A part's slide frontmatter without what only the part's own ``defaults`` gave it (Slidev applies the
    importing deck's ``defaults`` alone)."""
    defaults = part.headmatter.get("defaults") or {}
    return {
        k: v
        for k, v in slide.frontmatter.items()
        if not (k in defaults and k not in slide.frontmatter_at and v == defaults[k])
    }


def test_the_headmatter_uses_every_key_issue_13_lists(joined: Joined):
    assert set(joined.deck.headmatter) == HEADMATTER
    assert joined.deck.title == "Every Slidev rule"
    assert [site.frontmatter for site in joined.deck.imports if site.path == ALL] == [
        {"src": "./a.md"},
        {"src": "./b.md"},
        {"src": "./c.md"},
        {"src": "../decks/slidev_layouts.md"},
        {"src": "../decks/slidev_footnotes.md"},
        {"src": "../decks/slidev_html.md"},
        {"src": "./parts/all-more.md"},
        {"src": "./parts/a-part.md", "hide": True},
    ]


def test_the_joined_deck_has_exactly_the_slides_of_its_parts(joined: Joined):
    deck, parts = joined.deck, joined.parts
    assert list(parts) == [*DECKS, "all-more.md"]
    defaults = deck.headmatter["defaults"]
    expected: list[tuple[Any, ...]] = []
    for part in parts.values():
        for number, slide in enumerate(part.slides, start=1):
            layout = "default" if number == 1 and "layout" not in slide.frontmatter else slide.layout
            expected.append(
                (
                    part.slide_path(slide).resolve(),
                    slide.line,
                    layout,
                    slide.title,
                    slide.content,
                    slide.notes,
                    slide.clicks,
                    slide.id,
                    slide.blocks,
                    slide.slots,
                    {**defaults, **_own(part, slide)},
                )
            )
    got = [
        (
            deck.slide_path(s).resolve(),
            s.line,
            s.layout,
            s.title,
            s.content,
            s.notes,
            s.clicks,
            s.id,
            s.blocks,
            s.slots,
            s.frontmatter,
        )
        for s in deck.slides[1:]
    ]
    assert len(got) == len(expected) == sum(len(p.slides) for p in parts.values())
    for have, want in zip(got, expected, strict=True):
        assert have == want, (have[:4], want[:4])
    assert [s.index for s in deck.slides] == list(range(1, len(deck.slides) + 1))
    # a part's headmatter is its first slide's frontmatter, not the deck's: a.md's defaults class is gone
    first_of_a = deck.slides[1]
    assert first_of_a.frontmatter["defaults"] == {"class": "roomy"} and first_of_a.frontmatter["class"] == "joined"
    assert deck.headmatter["lineNumbers"] is True and "author" not in parts["a.md"].headmatter
    # the hidden import brought nothing, not even hidden slides
    assert not any(deck.slide_path(s).name == "a-part.md" and s.frontmatter.get("hide") for s in deck.slides)
    assert [s.title for s in deck.slides if s.frontmatter.get("hide") or s.frontmatter.get("disabled")] == [
        "Hidden, still checked",
        "Disabled as well",
    ]


def test_every_layout_is_in_the_joined_deck(joined: Joined):
    from slidegen.deck.layouts import LAYOUTS

    assert {s.layout for s in joined.deck.slides} == set(LAYOUTS) - {"references"}


# --------------------------------------------------------------------------- check


def _check(root: Path, name: str) -> set[str]:
    diagnostics: list[Diagnostic] = check_decks(
        read_decks([Path("decks") / name]), Results(), root=root, library=load_library(root)
    )
    return {str(x) for x in diagnostics}


def test_check_gives_no_error_and_exactly_the_parts_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, joined: Joined
):
    root = copy_project(tmp_path)
    monkeypatch.chdir(root)
    whole = _check(root, "all.md")
    assert not [x for x in whole if ": error: " in x], whole
    parts = {name: _check(root, name) for name in DECKS}
    assert all(": error: " not in x for found in parts.values() for x in found)
    # alone, a.md's fonts are its headmatter's; joined, they are its first slide's frontmatter
    dropped = {x for x in parts["a.md"] if "PowerPoint cannot embed fonts" in x}
    assert dropped == {
        "decks/a.md:9:1: warning: PowerPoint cannot embed fonts: the PPTX shows fonts.sans "
        "Carlito only on a machine that has it installed, and its default font elsewhere"
    }
    ignored = set()
    for name in DECKS:
        head = joined.parts[name].slides[0]
        for key in head.frontmatter_at:
            if key in DECK_KEYS and key not in SLIDE_KEYS:
                ignored.add(
                    f"decks/{name}:{head.frontmatter_at[key][0]}:1: warning: headmatter key '{key}' is "
                    "ignored on an imported slide: only the importing deck's headmatter sets the deck (as in "
                    "Slidev)"
                )
    # a.md's titleTemplate, aspectRatio, canvasWidth, colorSchema, lineNumbers, fonts and defaults (its title and
    # transition are slide keys too); b.md's author and lineNumbers, slidev_layouts.md's author (their files may grow)
    assert sorted(int(x.split(":")[1]) for x in ignored if x.startswith("decks/a.md:")) == [3, 4, 5, 6, 8, 9, 12]
    assert {x.split(":")[0] for x in ignored} == {"decks/a.md", "decks/b.md", "decks/slidev_layouts.md"}
    own = {
        "decks/all.md:12:1: warning: PowerPoint cannot embed fonts: the PPTX shows fonts.sans Carlito only on "
        "a machine that has it installed, and its default font elsewhere"
    }
    assert whole == (set().union(*parts.values()) - dropped) | ignored | own
    assert not any("all-more.md" in x or "a-part.md" in x for x in whole)


# --------------------------------------------------------------------------- the outputs


def _run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        code = main(args)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs.chromium()
    root = copy_project(tmp_path_factory.mktemp("all"))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        code, err = _run(["build", "--to", "html,pptx"])
        assert code == 0, err
        code, err = _run(["build", "decks/all.md", "--to", "html,png", "--single-file", "-o", "single"])
        assert code == 0, err
    return root


_FRAGMENTS = """() => Array.from(Reveal.getCurrentSlide().querySelectorAll('.fragment')).map(f => [
    f.getAttribute('data-fragment-index'),
    Array.from(f.classList).filter(c => !['visible', 'current-fragment', 'disabled'].includes(c)).sort().join(' '),
    f.textContent.replace(/\\s+/g, ' ').trim().slice(0, 40)])"""


def _fragments(browser: Any, page_file: Path, problems: list[str], web: list[str]) -> list[list[Any]]:
    """Each slide's fragments in reveal.js's order, read in Chromium with the network cut off."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    needs.cut_off(context, web)
    page = context.new_page()
    page.on("console", lambda m: problems.extend([f"console: {m.text}"] if m.type == "error" else []))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(page_file.as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    page.evaluate("Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
    out = []
    for i in range(page.evaluate("Reveal.getTotalSlides()")):
        page.evaluate(f"Reveal.slide({i})")
        out.append(page.evaluate(_FRAGMENTS))
    context.close()
    return out


@pytest.mark.slow
@pytest.mark.browser
def test_html_in_chromium_keeps_each_parts_fragment_order_offline(built: Path, joined: Joined):
    html = built / "build" / "html"
    problems: list[str] = []
    web: list[str] = []
    with needs.browser() as browser:
        whole = _fragments(browser, html / "all.html", problems, web)
        parts = {name: _fragments(browser, html / name.replace(".md", ".html"), problems, web) for name in DECKS}
    shown = visible(joined.deck)
    assert len(whole) == len(shown.slides)
    more = len([s for s in shown.slides if shown.slide_path(s).name == "all-more.md"])
    head = len(whole) - more
    assert whole[:head] == [[]] + [slide for name in DECKS for slide in parts[name]]  # the cover has none
    assert whole[head:] == MORE_FRAGMENTS
    assert sum(map(len, whole)) > 30  # b.md's click forms are in it
    assert problems == []
    urls = {s.frontmatter["url"] for s in joined.deck.slides if "url" in s.frontmatter} | {"https://example.org/demo"}
    assert {url.rstrip("/") for url in web} <= urls, web  # only the iframes ask for the network, and are cut off


def _animations(slide: Any) -> list[tuple[str | None, ...]]:
    timing = slide.element.find("p:timing", NS)
    if timing is None:
        return []
    return [
        (c.get("nodeType"), c.get("presetClass"), c.get("presetID"))
        for c in timing.iterfind(".//p:cTn", NS)
        if c.get("presetClass") or c.get("nodeType") == "clickEffect"
    ]


@pytest.mark.browser
def test_pptx_has_each_parts_slides_layouts_and_animations(built: Path, joined: Joined):
    out = built / "build" / "pptx"
    whole = list(Presentation(str(out / "all.pptx")).slides)
    shown = visible(joined.deck)
    assert len(whole) == len(shown.slides)
    got = [(s.slide_layout.name, _animations(s)) for s in whole]
    expected: list[tuple[str, list[tuple[str | None, ...]]]] = [("Title Slide", [])]
    for name in DECKS:
        prs = Presentation(str(out / name.replace(".md", ".pptx")))
        part = [(s.slide_layout.name, _animations(s)) for s in prs.slides]
        if "layout" not in visible(joined.parts[name]).slides[0].frontmatter:  # the cover alone, a default slide here
            part[0] = ("Title Only", part[0][1])
        expected += part
    more = len([s for s in shown.slides if shown.slide_path(s).name == "all-more.md"])
    assert got[: len(got) - more] == expected
    assert [layout for layout, _ in got[len(got) - more :]] == ["Title Only"] * more
    assert [len(a) for _, a in got[len(got) - more :]] == MORE_ANIMATIONS
    assert Counter(n for _, a in got for n, _c, _p in a)["clickEffect"] > 10


@pytest.mark.browser
def test_png_and_single_file_exports(built: Path, joined: Joined, tmp_path: Path):
    shown = visible(joined.deck)
    pngs = sorted((built / "single" / "png" / "all").glob("*.png"))
    assert len(pngs) == len(shown.slides)
    import numpy as np
    from PIL import Image

    def title_area(number: int) -> Any:
        with Image.open(pngs[number - 1]) as im:
            rgb = np.asarray(im.convert("RGB"))
        return rgb[: rgb.shape[0] // 6, : rgb.shape[1] // 2].reshape(-1, 3)

    # a slide with a transition of its own is taken when it is over: white title on blue, dark title on white
    assert shown.slides[2].frontmatter["transition"] == "fade" and title_area(3).min(axis=1).max() > 240
    assert shown.slides[1].frontmatter["transition"] == "slide-left" and title_area(2).max(axis=1).min() < 60
    page = built / "single" / "html" / "all.html"
    text = page.read_text(encoding="utf-8")
    assert 'src="assets/' not in text and 'href="assets/' not in text and 'src="media/' not in text
    alone = tmp_path / "all.html"
    shutil.copy(page, alone)  # nothing beside it
    problems: list[str] = []
    web: list[str] = []
    with needs.browser() as browser:
        frames = _fragments(browser, alone, problems, web)
    assert len(frames) == len(shown.slides) and problems == []


#: Slidev syntax that must never reach a slide as text (outside code, where an author shows it on purpose).
SYNTAX = (
    "v-click",
    "v-after",
    "v-clicks",
    "v-mark",
    "::left::",
    "::right::",
    "::default::",
    "::bottom::",
    "[^",
    "src:",
    "[click",
    "{{",
    "}}",
    "$$",
    "<<<",
    "{monaco}",
    "{lines:",
    "layout:",
    "hideInToc",
    "<style",
    "<v-",
    "</",
    "-->",
    "<!--",
)

_SHOWN_TEXT = """() => Array.from(document.querySelectorAll('.reveal .slides section')).map(s => {
    const c = s.cloneNode(true);
    c.querySelectorAll('pre, code, script, style, aside.notes, .katex-mathml').forEach(e => e.remove());
    return c.textContent; })"""


@pytest.mark.browser
def test_no_slidev_syntax_is_printed_on_a_slide(built: Path):
    with needs.browser() as browser:
        page = browser.new_page()
        page.goto((built / "build" / "html" / "all.html").as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        html_texts = page.evaluate(_SHOWN_TEXT)
    assert len(html_texts) > 40
    leaks = [(i + 1, token) for i, text in enumerate(html_texts) for token in SYNTAX if token in text]
    assert leaks == []
    prs = Presentation(str(built / "build" / "pptx" / "all.pptx"))
    pptx_leaks = []
    for number, slide in enumerate(prs.slides, start=1):
        for shape in slide.shapes:
            if not shape.has_text_frame:
                continue
            for para in shape.text_frame.paragraphs:
                if any(r.font.name and "Mono" in r.font.name for r in para.runs):
                    continue  # a code line
                pptx_leaks += [(number, token) for token in SYNTAX if token in para.text]
        notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else ""
        pptx_leaks += [(number, f"notes {token}") for token in ("[click", "<!--", "-->") if token in notes]
    assert pptx_leaks == []
