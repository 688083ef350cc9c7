"""Slidev's click vocabulary, code options and formula steps, in every output.

The fixture is tests/fixtures/slidev/b.md. The expected clicks are those Slidev's documentation
(sli.dev/guide/animations) and its resolver (packages/client/composables/useClicks.ts,
builtin/VClicks.ts) give: a relative ``at`` counts from the running offset and moves it, an
absolute one stands alone, ``v-after`` is ``+0``, ``<v-clicks>`` takes ``depth`` and ``every``.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import needs
import pytest
from lxml import etree
from pptx import Presentation

from slidegen.check import fallbacks
from slidegen.cli.main import main
from slidegen.deck import clicks
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.read.parse import parse_deck, parse_text
from slidegen.write import html
from slidegen.write.pptx import code_steps, math_steps, write_deck

FIXTURE = Path(__file__).parent / "fixtures" / "slidev" / "b.md"
LABEL_RE = re.compile(r"\b([A-Z]\d+b?)\b")
NS = {
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
}

#: Per slide: each revealed thing's label -> (the click it changes on, whether it hides), as Slidev resolves it.
EXPECTED: dict[int, dict[str, tuple[int, bool]]] = {
    # sli.dev/guide/animations, "Mixed Case": 1, 3, 2, 1 ('-1' from offset 2), 4
    2: {"M1": (1, False), "M3": (3, False), "M2": (2, False), "M1b": (1, False), "M4": (4, False)},
    3: {
        "R1": (1, False),
        "R1b": (1, False),
        "R3": (3, False),
        "H4": (4, True),
        "H5": (5, True),
        "H6": (6, True),
        "H6b": (6, True),
    },
    # depth 2: parents before their children; every 2: two items per click
    4: {"L1": (1, False), "L2": (2, False), "L3": (3, False), "L4": (4, False), "E5": (5, False), "E6": (6, False)},
    5: {"A2": (2, False), "A3": (3, False)},  # an absolute at leaves the offset at 0
    8: {"T1": (1, False), "T2": (2, False)},
}
TOTALS = [0, 4, 6, 6, 5, 3, 2, 2, 5, 5, 3]
#: The slides of click ranges and fade: each label's full timing, as Slidev's calculateRange resolves it (the
#: end exclusive; an absolute range leaves the offset alone, ['+1', '+2'] starts after the offset, ends 2 later).
RANGES: dict[int, dict[str, d.Timing]] = {
    9: {
        "G2": d.Timing(2, False, 4),
        "G1": d.Timing(1),
        "K1": d.Timing(1, True, 3),
        "J2": d.Timing(2, False, 4),
        "J5": d.Timing(5),
    },
    10: {
        "F1": d.Timing(1, fade=True),
        "F2": d.Timing(2, fade=True),
        "F3": d.Timing(3, fade=True),
        "F4": d.Timing(4, fade=True),
        "U5": d.Timing(5),
    },
    11: {"P1": d.Timing(1), "Q2": d.Timing(2, True, 3), "P2": d.Timing(2, fade=True)},
}


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


def _label(text: str) -> str:
    found = LABEL_RE.search(text)
    assert found, text
    return found.group(1)


def timings(slide: d.Slide) -> dict[str, d.Timing]:
    """Each labelled revealed thing of a parsed slide and its timing (an HTML wrapper tag: the next block's label)."""
    found: dict[str, d.Timing] = {}

    def put(text: str, timing: d.Timing) -> None:
        found.setdefault(_label(text), timing)

    blocks = list(d.walk_blocks(d.slide_blocks(slide)))
    for i, block in enumerate(blocks):
        if isinstance(block, d.RawHtml):
            for (_, end, _), timing in zip(clicks.html_units(block.html), block.clicks, strict=True):
                after = block.html[end:]
                put(after if LABEL_RE.search(after) else d.plain_text(d.block_inlines(blocks[i + 1])), timing)
        elif isinstance(block, d.Click) and block.each:
            for unit, timing in zip(clicks.units(block), block.clicks, strict=True):
                if isinstance(unit, tuple):
                    put(d.plain_text(unit[0].rows[unit[1]][0]), timing)
                else:
                    assert isinstance(unit, d.ListItem)
                    put(d.plain_text(d.block_inlines(unit.blocks[0])), timing)
        elif isinstance(block, d.Click):
            put(d.plain_text(d.block_inlines(block.blocks[0])), block.clicks[0])
        for node in d.walk_inlines(d.block_inlines(block)):
            if isinstance(node, d.HtmlSpan) and node.clicks:
                put(d.plain_text(node.children), node.clicks[0])
    return found


def timeline(slide: d.Slide) -> dict[str, tuple[int, bool]]:
    """Each labelled revealed thing of a parsed slide: the click it changes on, whether it hides."""
    return {label: (t.at, t.hide) for label, t in timings(slide).items()}


def _active(timing: d.Timing, k: int) -> bool:
    """Whether ``timing`` has changed its thing after ``k`` clicks (Slidev's isActive: start <= k < end)."""
    return timing.at <= k and (not timing.end or k < timing.end)


def shown_at(expected: dict[str, tuple[int, bool]] | dict[str, d.Timing], k: int) -> set[str]:
    """The labels visible (a faded one too: it is on screen at half opacity) after ``k`` clicks."""
    out = set()
    for label, value in expected.items():
        timing = value if isinstance(value, d.Timing) else d.Timing(*value)
        if timing.fade or _active(timing, k) != timing.hide:
            out.add(label)
    return out


def full_at(expected: dict[str, d.Timing], k: int) -> set[str]:
    """The labels shown at full opacity after ``k`` clicks."""
    return {label for label, t in expected.items() if _active(t, k) != t.hide}


# ---------------------------------------------------------------------- the parsed deck


def test_every_click_form_resolves_as_slidev_does(deck: d.Deck):
    assert [s.clicks for s in deck.slides] == TOTALS
    for number, expected in EXPECTED.items():
        assert timeline(deck.slides[number - 1]) == expected, number
    for number, ranges in RANGES.items():
        assert timings(deck.slides[number - 1]) == ranges, number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[2, 4]", ("2", "4")),
        ("['+1', '+2']", ("+1", "+2")),
        ("'[+1, +1]'", ("+1", "+1")),
        ("[2, '+1']", ("2", "+1")),
        ("['-1', 3]", ("-1", "3")),
        ("'+2'", ("+2", None)),
        ("3", ("3", None)),
    ],
)
def test_click_values_and_ranges_read_as_vue_reads_them(value: str, expected: tuple[str, str | None]):
    assert clicks.directive_at("v-click", value) == expected


def test_a_range_resolves_as_slidevs_calculate_range():
    line = clicks.Timeline(offset=2)
    assert line.span("+1", "+2") == (3, 5) and line.offset == 5  # relative both: start from offset, end from start
    assert line.span("2", "4") == (2, 4) and line.offset == 5  # absolute: the offset stays
    assert line.span("+0", "7") == (5, 7) and line.offset == 5
    assert line.last == 7
    with pytest.raises(clicks.AtError, match="not after its start"):
        line.span("4", "4")


def test_directive_modifiers():
    spec = clicks.tag_directive(' class="x" v-click.hide.fade="[1, 3]"')
    assert spec == clicks.Directive("1", True, "3", True, ())
    assert clicks.tag_directive(" v-click.up.scale").unknown == ("up", "scale")  # type: ignore[union-attr]
    assert clicks.component_directive("v-click", ' at="2" fade') == clicks.Directive("2", False, None, True)


def test_code_options_and_steps(deck: d.Deck):
    first, plain, offset, monaco = [b for b in deck.slides[5].blocks if isinstance(b, d.CodeBlock)]
    assert first.steps == ((0,), (1,), (3, 4)) and first.at == "2" and first.clicks == (2, 3)
    assert plain.steps == ((),) and plain.line_numbers is False and plain.max_height == "120px"
    assert offset.start_line == 10 and offset.clicks == (1,)
    assert monaco.monaco and monaco.lang == "ts" and monaco.steps == ()
    formula = deck.slides[6].blocks[1]
    assert isinstance(formula, d.MathBlock)
    assert formula.steps == ((1,), (3,), ()) and formula.clicks == (1, 2)
    assert formula.tex.startswith("a = b + c")  # the steps are not typeset into the formula


def test_notes_split_at_click_markers(deck: d.Deck):
    segments = clicks.notes_segments(deck.slides[3].notes_blocks)
    assert [(at, d.plain_text(d.block_inlines(group[0]))) for at, group in segments] == [
        (0, "Before any click: the slide's question."),
        (1, "The first item is on screen."),
        (4, "From click 4 on: the second list."),
    ]


def test_check_warns_where_an_output_differs(deck: d.Deck):
    found = [(w.line, w.message.split(":")[0].split(" ")[0]) for w in fallbacks.warnings("b.md", deck)]
    assert found == [(123, "{monaco}"), (207, "click")]


def test_a_clicks_total_that_is_no_number_is_a_located_error():
    with pytest.raises(SlidegenError) as found:
        parse_text("---\nclicks: many\n---\n\n# A\n\n<v-click>\n\nB\n\n</v-click>\n", Path("deck.md"))
    assert str(found.value) == "deck.md:2:9: error: clicks 'many' is not a whole number of clicks (0 or more)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '# A\n\n<v-click at="x">\n\nA\n\n</v-click>\n',
            "3:1: error: <v-click>: 'x' is not a click position: write a number (3, absolute) "
            "or a signed one (+1, relative)",
        ),
        (
            '# A\n\n<v-clicks depth="0">\n\n- a\n\n</v-clicks>\n',
            '3:1: error: <v-clicks>: depth="0" is not a whole number from 1',
        ),
        (
            '# A\n\n<div v-click="[3, 1]">x</div>\n',
            "3:1: error: the click range ends on click 1, not after its start 3: the end is exclusive "
            '(v-click="[2, 4]" shows on clicks 2 and 3)',
        ),
        (
            '# A\n\n<div v-click="[1, 2, 3]">x</div>\n',
            "3:1: error: '[1, 2, 3]' is not a click range: write [2, 4] or ['+1', '+2'] (the end is exclusive)",
        ),
        (
            '# A\n\n<v-click at="[1, 3]">\n\nA\n\n</v-click>\n',
            "3:1: error: <v-click>: '[1, 3]' is not a click position: a click range goes on a tag as a directive, "
            '<div v-click="[2, 4]">',
        ),
        (
            "# A\n\n```py {1}{colour:1}\nx\n```\n",
            "3:10: error: bad code block option '{colour:1}': unknown option 'colour' "
            "(slidegen reads lines, startLine, maxHeight and at); "
            "write options like {lines:true,startLine:5,maxHeight:'200px',at:2}",
        ),
    ],
)
def test_bad_click_and_code_syntax_is_a_located_error(text: str, message: str):

    with pytest.raises(SlidegenError) as info:
        parse_text(text, Path("deck.md"))
    assert str(info.value.diagnostic).startswith("deck.md:" + message), str(info.value.diagnostic)


# ---------------------------------------------------------------------- HTML


def test_html_fragments_and_markers(deck: d.Deck):
    page = html.render_deck(deck, {})
    # a marker for each click nothing else marks (slide 3: click 2; slide 5: clicks 1, 4, 5), and for each
    # click of a slide whose notes change on clicks (slide 4), and the clicks only a range's end changes (slide 9:
    # 3, 4; slide 11: 3)
    assert page.count('class="fragment click-step"') == 1 + 3 + 6 + 2 + 1
    assert '<div class="fragment click-range" data-fragment-index="1" data-click-end="3">' in page
    assert '<div class="fragment fade-out click-range" data-fragment-index="0" data-click-end="2">' in page
    assert '<li class="fragment click-fade" data-fragment-index="0">F1 faded until click 1</li>' in page
    assert '<div class="fragment" data-fragment-index="2">M3 after 3 clicks</div>' in page
    assert '<p class="fragment fade-out" data-fragment-index="5">H6b hidden with it</p>' in page
    assert "v-click" not in page.split("<body>")[1].split("<script")[0]  # no Slidev tag or directive left
    assert 'data-number="10"' in page and 'style="--code-max-height: 120px"' in page
    assert '<div class="math-steps" data-steps="1|3|">' in page


@pytest.fixture(scope="module")
def page_file(deck: d.Deck, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("b-html")
    html.copy_assets(out)
    return html.write_deck(deck, out, {})


@pytest.fixture  # not kept for the module: the --with-clicks build starts Playwright of its own
def browser():
    with needs.browser() as chromium:
        yield chromium


# What a reader sees of each labelled fragment: shown, or (a fade-out one) not yet hidden.
_VISIBLE = """() => Array.from(Reveal.getCurrentSlide().querySelectorAll('.fragment:not(.click-step):not(.code-step)'))
    .filter(f => f.classList.contains('fade-out') !== f.classList.contains('visible'))
    .map(f => ((f.querySelector('td') || f).textContent.match(/\\b[A-Z]\\d+b?\\b/) || [''])[0]).filter(Boolean)"""


# Each labelled fragment of the current slide and its drawn opacity (0 when hidden by visibility).
_OPACITY = """() => Array.from(Reveal.getCurrentSlide().querySelectorAll('.fragment:not(.click-step):not(.code-step)'))
    .map(f => { const s = getComputedStyle(f), m = f.textContent.match(/\\b[A-Z]\\d+b?\\b/);
                return [m ? m[0] : '', s.visibility === 'hidden' ? 0 : +s.opacity]; }).filter(p => p[0])"""


def test_html_in_chromium_steps_through_the_clicks_in_slidevs_order(page_file: Path, browser):
    problems: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: r.url.startswith(("file:", "data:")) or problems.append(f"network: {r.url}"))
    try:
        page.goto(page_file.as_uri())
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        for number, expected in EXPECTED.items():
            page.evaluate(f"Reveal.slide({number - 1}, 0, -1)")
            for k in range(TOTALS[number - 1] + 1):
                assert set(page.evaluate(_VISIBLE)) == shown_at(expected, k), (number, k)
                if k < TOTALS[number - 1]:
                    page.evaluate("Reveal.next()")
            assert page.evaluate("Reveal.availableFragments().next") is False  # exactly the slide's clicks
            assert page.evaluate("Reveal.getIndices().h") == number - 1
        # ranges and fade, by what the page draws: each labelled fragment's opacity (transitions off)
        page.add_style_tag(content=".reveal .slides section .fragment { transition: none !important; }")
        for number, ranges in RANGES.items():
            page.evaluate(f"Reveal.slide({number - 1}, 0, -1)")
            for k in range(TOTALS[number - 1] + 1):
                drawn = dict(page.evaluate(_OPACITY))
                assert {label for label, o in drawn.items() if o > 0} == shown_at(ranges, k), (number, k)
                assert {label for label, o in drawn.items() if o == 1} == full_at(ranges, k), (number, k)
                assert all(o in (0, 0.5, 1) for o in drawn.values()), drawn
                if k < TOTALS[number - 1]:
                    page.evaluate("Reveal.next()")
            assert page.evaluate("Reveal.availableFragments().next") is False
        # code steps from click 2 on ({none|1|3-4}{at:2}), line numbers from startLine
        page.evaluate("Reveal.slide(5, 0, -1)")
        lit = (
            "Array.from(Reveal.getCurrentSlide().querySelectorAll('.code')[0].querySelectorAll('.line.hl'))"
            ".map(e => +e.dataset.line)"
        )
        seen = []
        for _ in range(4):
            seen.append(page.evaluate(lit))
            page.evaluate("Reveal.next()")
        assert seen == [[], [], [1], [3, 4]]
        # formula steps dim the lines outside the step
        page.evaluate("Reveal.slide(6, 0, -1)")
        dims = []
        for _ in range(3):
            dims.append(page.evaluate("Reveal.getCurrentSlide().querySelectorAll('.katex-html > .dim').length > 0"))
            page.evaluate("Reveal.next()")
        assert dims == [True, True, False]
        # the notes the speaker view shows: those of the first current fragment, else the slide's
        notes = """() => { const s = Reveal.getCurrentSlide(), f = s.querySelector('.current-fragment');
            const a = f && f.querySelector('aside.notes');
            return (a || s.querySelector(':scope > aside.notes')).textContent.replace(/\\s+/g, ' ').trim(); }"""
        page.evaluate("Reveal.slide(3, 0, -1)")
        assert page.evaluate(notes) == "Before any click: the slide's question."
        page.evaluate("Reveal.slide(3, 0, 0)")
        assert page.evaluate(notes).endswith("The first item is on screen.")
        page.evaluate("Reveal.slide(3, 0, 3)")
        assert page.evaluate(notes).endswith("From click 4 on: the second list.")
        assert not problems, problems
    finally:
        page.close()


# ---------------------------------------------------------------------- PowerPoint


def _animations(slide) -> list[tuple[int, str, list[str]]]:
    """Each click group of a slide's main sequence: (click number, effect kinds, the texts they target)."""
    timing = slide.element.find("p:timing", NS)
    if timing is None:
        return []
    shapes = {sh.shape_id: sh for sh in slide.shapes}
    out = []
    groups = timing.findall(".//p:cTn[@nodeType='mainSeq']/p:childTnLst/p:par", NS)
    for number, group in enumerate(groups, start=1):
        kinds, texts = [], []
        for effect in group.iterfind(".//p:cTn[@presetClass]", NS):
            kinds.append(effect.get("presetClass"))
            target = effect.find(".//p:spTgt", NS)
            shape = shapes[int(target.get("spid"))]
            rng = target.find("p:txEl/p:pRg", NS)
            if rng is None:
                texts.append(shape.name)
            else:
                paras = shape.text_frame.paragraphs[int(rng.get("st")) : int(rng.get("end")) + 1]
                texts.append(" ".join(_label(p.text) for p in paras))
        out.append((number, ",".join(kinds), texts))
    return out


@pytest.fixture(scope="module")
def presentation(deck: d.Deck, tmp_path_factory: pytest.TempPathFactory):
    target = tmp_path_factory.mktemp("b-pptx") / "b.pptx"
    write_deck(deck, target, {})
    return Presentation(str(target))


def test_pptx_clicks_are_native_animations_in_click_order(presentation):
    lists = _animations(presentation.slides[3])
    assert lists == [
        (1, "entr", ["L1"]),
        (2, "entr", ["L2"]),
        (3, "entr", ["L3"]),
        (4, "entr", ["L4"]),
        (5, "entr", ["E5 E5"]),
        (6, "entr", ["E6"]),
    ]
    # raw HTML blocks are left out of PowerPoint, so H4 and H6b have no shape; the rest keep their clicks
    assert _animations(presentation.slides[2]) == [
        (1, "entr", ["R1 R1b"]),
        (2, "entr", ["R3"]),
        (3, "exit", ["H5"]),
        (4, "exit", ["H6"]),
    ]
    assert _animations(presentation.slides[7]) == [(1, "entr", ["Table"])]
    assert _animations(presentation.slides[0]) == []
    xml = etree.tostring(presentation.slides[3].element.find("p:timing", NS)).decode()
    assert 'presetID="1"' in xml and 'nodeType="clickEffect"' in xml and 'build="p"' in xml


def test_pptx_code_steps_are_dimmed_copies_one_click_each(presentation):
    slide = presentation.slides[5]
    names = [sh.name for sh in slide.shapes if sh.name.startswith("Code")]
    assert names == ["Code", "Code step 2", "Code step 3", "Code", "Code", "Code step 2", "Code"]
    assert _animations(slide) == [
        (1, "entr", ["Code step 2"]),
        (2, "entr", ["Code step 2"]),
        (3, "entr", ["Code step 3"]),
    ]
    code = [sh for sh in slide.shapes if sh.name.startswith("Code")]
    dim = code_steps.mix(code_steps.theme.TEXT, code_steps.theme.CODE_BACKGROUND, code_steps.DIM).lstrip("#")

    def colours(shape, line: int) -> set[str]:
        runs = shape.text_frame.paragraphs[line].runs[1:]  # after the line number
        return {str(r.font.color.rgb).lower() for r in runs if r.text.strip() and r.font.color.type is not None}

    bg = code_steps.theme.CODE_BACKGROUND
    lit = colours(code[2], 2)  # step {3-4}: line 3 lit
    assert lit and dim not in lit
    assert colours(code[1], 2) == {code_steps.mix(f"#{c}", bg, code_steps.DIM)[1:] for c in lit}  # step {1}: dimmed
    assert colours(code[0], 2) == colours(code[1], 2)  # step {none}: every line dimmed
    assert colours(code[2], 0) == {code_steps.mix(f"#{c}", bg, code_steps.DIM)[1:] for c in colours(code[1], 0)}
    assert [p.runs[0].text for p in code[0].text_frame.paragraphs] == ["1  ", "2  ", "3  ", "4  "]
    assert code[3].text_frame.paragraphs[0].runs[0].text == "x"  # {lines:false}
    assert [p.runs[0].text for p in code[4].text_frame.paragraphs] == ["10  ", "11  ", "12  "]


def test_pptx_final_state_has_no_animation(deck: d.Deck, tmp_path: Path):
    target = tmp_path / "final.pptx"
    write_deck(deck, target, {}, animate=False)
    prs = Presentation(str(target))
    assert all(s.element.find("p:timing", NS) is None for s in prs.slides)
    assert not any(sh.name.startswith("Code step") for s in prs.slides for sh in s.shapes)


# ---------------------------------------------------------------------- --with-clicks: PDF and PNG


def _run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    return code, err.getvalue()


@pytest.mark.slow
def test_with_clicks_prints_a_page_and_a_picture_per_click(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    needs.chromium()
    pdfinfo = needs.tool("pdfinfo", "poppler-utils")
    (tmp_path / "decks").mkdir()
    shutil.copy(FIXTURE, tmp_path / "decks" / "01-b.md")
    monkeypatch.chdir(tmp_path)
    code, err = _run(["build", "--to", "pdf,png", "--with-clicks", "--scale", "0.25"])
    assert code == 0, err
    info = subprocess.run(
        [pdfinfo, str(tmp_path / "build" / "pdf" / "01-b.pdf")], capture_output=True, text=True, check=True
    ).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert pages == sum(t + 1 for t in TOTALS)
    pictures = sorted(p.name for p in (tmp_path / "build" / "png" / "01-b").iterdir())
    assert len(pictures) == sum(t + 1 for t in TOTALS)
    assert pictures[:6] == ["01-0.png", "02-0.png", "02-1.png", "02-2.png", "02-3.png", "02-4.png"]
    code, err = _run(["build", "--to", "html", "--with-clicks"])
    assert code == 2 and "--with-clicks" in err


def test_slidev_markdown_keeps_the_click_vocabulary(deck: d.Deck):
    from slidegen.write import markdown as markdown_out

    text = markdown_out.writer(deck, {}, "md", d.DeckIndex()).deck_text()
    again = parse_text(text, Path("again.md"))
    assert [s.clicks for s in again.slides] == TOTALS
    for number, expected in EXPECTED.items():
        assert timeline(again.slides[number - 1]) == expected, number
    first = next(b for b in again.slides[5].blocks if isinstance(b, d.CodeBlock))
    assert (first.steps, first.at, first.clicks) == (((0,), (1,), (3, 4)), "2", (2, 3))


# ---------------------------------------------------------------------- ranges, fade and notes cues in PowerPoint


def test_pptx_ranges_appear_then_disappear_on_the_same_shape(presentation):
    # G2 [2, 4): in on 2, out on 4; K1 hidden [1, 3): out on 1, back on 3; J2 ['+1', '+2'] from offset 1: [2, 4)
    assert _animations(presentation.slides[8]) == [
        (1, "entr,exit", ["G1", "K1"]),
        (2, "entr,entr", ["G2", "J2"]),
        (3, "entr", ["K1"]),
        (4, "exit,exit", ["G2", "J2"]),
        (5, "entr", ["J5"]),
    ]


def test_pptx_fade_is_a_faded_copy_shown_until_the_click(presentation):
    slide = presentation.slides[9]
    body, copy = (next(sh for sh in slide.shapes if sh.name == name) for name in ("Text", "Text faded"))
    assert [sh.name for sh in slide.shapes].index("Text faded") < [sh.name for sh in slide.shapes].index("Text")
    assert [p.text for p in copy.text_frame.paragraphs] == [p.text for p in body.text_frame.paragraphs]
    # the copy's faded paragraphs vanish on the click the original's appear on; U5 (no fade) has no copy to vanish
    assert _animations(slide) == [
        (1, "exit,entr", ["F1", "F1"]),
        (2, "exit,entr", ["F2", "F2"]),
        (3, "exit,entr", ["F3", "F3"]),
        (4, "exit,entr", ["F4", "F4"]),
    ]
    text = code_steps.theme.TEXT
    half = code_steps.mix(text, code_steps.theme.BACKGROUND, 0.5)[1:]

    def colours(shape, number: int) -> set[str]:
        return {str(r.font.color.rgb).lower() for r in shape.text_frame.paragraphs[number].runs if r.text.strip()}

    labels = [_label(p.text) for p in body.text_frame.paragraphs]
    assert colours(copy, labels.index("F1")) == {half} and colours(body, labels.index("F1")) == {text[1:]}
    assert colours(copy, 0) == {half}


def test_pptx_notes_carry_a_cue_per_click_never_slidevs_marker(presentation):
    notes = presentation.slides[3].notes_slide.notes_text_frame.text
    assert "[click" not in notes
    assert notes.splitlines()[:3] == [
        "Before any click: the slide's question.",
        "(click 1) The first item is on screen.",
        "(click 4) From click 4 on: the second list.",
    ]


def _row_colours(choice) -> list[set[str]]:
    """The run colours of each row (``m:mr``) of the equation in an ``mc:Choice``."""
    m = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
    rows = choice.findall(f".//{m}mr")
    return [{c.get("val") for c in row.iter(f"{{{NS['a']}}}srgbClr")} for row in rows]


def test_pptx_formula_steps_are_dimmed_copies_one_click_each(presentation):
    slide = presentation.slides[6]
    mc = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
    copies = [e.find(f"{mc}Choice") for e in slide.shapes._spTree if e.tag == f"{mc}AlternateContent"]
    text = code_steps.theme.TEXT[1:]
    dim = math_steps.mix(code_steps.theme.TEXT, code_steps.theme.BACKGROUND, math_steps.DIM)[1:]
    # {1|3|all}: row 1 lit, then row 3, then every row; a plain `a \\ b \\ c` formula has a row per line
    assert [_row_colours(c) for c in copies] == [
        [{text}, {dim}, {dim}],
        [{dim}, {dim}, {text}],
        [{text}, {text}, {text}],
    ]
    ids = [int(c.find(".//p:cNvPr", NS).get("id")) for c in copies]
    timing = slide.element.find("p:timing", NS)
    groups = timing.findall(".//p:cTn[@nodeType='mainSeq']/p:childTnLst/p:par", NS)
    seen = [
        [
            (e.get("presetClass"), int(e.find(".//p:spTgt", NS).get("spid")))
            for e in g.iterfind(".//p:cTn[@presetClass]", NS)
        ]
        for g in groups
    ]
    # each copy shows from its step's click to the next step's (an equation has no background to stack on)
    assert seen == [[("exit", ids[0]), ("entr", ids[1])], [("exit", ids[1]), ("entr", ids[2])]]


def test_formula_rows_and_dimming():
    from slidegen.write.pptx import omml

    assert omml.top_level_rows(r"a \\ b") and not omml.top_level_rows(r"\begin{aligned} a \\ b \end{aligned}")
    assert omml.top_level_rows(r"\begin{cases} 1 \\ 2 \end{cases} \\ y") and not omml.top_level_rows(r"\frac{a}{b}")
    xml = omml.latex_to_omml(r"\begin{aligned} a &= b \\ c &= d \end{aligned}")
    assert math_steps.rows(xml) == 2
    assert math_steps.dimmed(xml, (), "aaaaaa", 2800) == xml  # {all}: nothing dimmed
    assert math_steps.dimmed(xml, (2,), "aaaaaa", 2800).count('val="aaaaaa"') == 3  # c, =, d
    assert math_steps.dimmed(xml, (0,), "aaaaaa", 2800).count('val="aaaaaa"') == 6  # {none}: every run


def test_pptx_final_state_has_one_whole_formula(deck: d.Deck, tmp_path: Path):
    target = tmp_path / "final.pptx"
    write_deck(deck, target, {}, animate=False)
    slide = Presentation(str(target)).slides[6]
    mc = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
    copies = [e.find(f"{mc}Choice") for e in slide.shapes._spTree if e.tag == f"{mc}AlternateContent"]
    assert [_row_colours(c) for c in copies] == [[{code_steps.theme.TEXT[1:]}] * 3]


def test_pptx_inline_clicks_are_copies_of_the_paragraph_per_state(presentation):
    slide = presentation.slides[10]
    # P1: the paragraph's first state (P1 hidden) until click 1, then the box's own paragraph; Q2/P2: three states
    assert _animations(slide) == [
        (1, "exit,entr", ["P1", "P1"]),
        (2, "exit,entr", ["Q2", "Q2"]),
        (3, "exit,entr", ["Q2", "Q2"]),
    ]
    states = [sh for sh in slide.shapes if sh.name == "Text click state"]
    body = next(sh for sh in slide.shapes if sh.name == "Text")
    assert len(states) == 3 and all(s.text_frame.text == body.text_frame.text for s in states)  # the same layout
    bg, text = code_steps.theme.BACKGROUND[1:], code_steps.theme.TEXT[1:]
    half = code_steps.mix(code_steps.theme.TEXT, code_steps.theme.BACKGROUND, 0.5)[1:]

    def colour(shape, para: int, label: str) -> str:
        run = next(r for r in shape.text_frame.paragraphs[para].runs if r.text.startswith(label))
        return str(run.font.color.rgb).lower()

    assert colour(states[0], 0, "P1") == bg and colour(states[0], 0, "Words") == text  # hidden: room kept
    assert (colour(states[1], 1, "Q2"), colour(states[1], 1, "P2")) == (text, half)  # before click 2
    assert (colour(states[2], 1, "Q2"), colour(states[2], 1, "P2")) == (bg, text)  # click 2
    assert (colour(body, 1, "Q2"), colour(body, 1, "P2")) == (text, text)  # from click 3
    assert colour(states[0], 1, "Q2") == bg  # another paragraph of a copy is drawn in the background colour
