"""Project components (``components/NAME.js``): found, checked, bound, loaded by the HTML deck, drawn
as pictures for PowerPoint (cached), and ``lr-schedule`` equal to ``model.train.lr_at``.

The fixture project (tests/fixtures/components) has two components, one bound to a result key,
and two Mermaid diagrams (tests/test_mermaid.py). The browser tests share one build and one
Chromium (module-scoped fixtures).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import needs
import pytest
from pptx import Presentation

from slidegen.bind.numbers import bind_deck
from slidegen.check.project import check_project
from slidegen.deck import elements, htmlkinds
from slidegen.media import components
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.read.parse import parse_deck, parse_text
from slidegen.record.results import Results
from slidegen.write import snapshot

FIXTURE = Path(__file__).parent / "fixtures" / "components"
REPO = Path(__file__).resolve().parents[1]
DECK = "90-widgets"


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


# --------------------------------------------------------------------------- without a browser


def test_discover_finds_each_component_and_the_tag_it_defines():
    found = components.discover(FIXTURE)
    assert sorted(found) == ["tally-counter", "unit-scale"]
    assert found["tally-counter"].defines == ("tally-counter",)
    assert found["tally-counter"].css == FIXTURE / "components" / "tally-counter.css"
    assert found["unit-scale"].css is None
    assert components.file_problems(found, FIXTURE) == []


def test_a_component_file_without_an_element_or_with_another_tag_is_an_error(tmp_path):
    folder = tmp_path / "components"
    folder.mkdir()
    (folder / "empty-thing.js").write_text("// nothing here\n")
    (folder / "my-widget.js").write_text('\n\ncustomElements.define("other-widget", class extends HTMLElement {});\n')
    problems = [str(p) for p in components.file_problems(components.discover(tmp_path), tmp_path)]
    assert problems[0].startswith(
        "components/empty-thing.js:1:1: error: components/empty-thing.js defines no custom element"
    )
    assert problems[1].startswith("components/my-widget.js:3:24: error: components/my-widget.js defines <other-widget>")


def test_an_undefined_element_is_a_located_check_error_with_did_you_mean(tmp_path):
    root = copy_fixture(tmp_path / "p")
    deck = root / "decks" / f"{DECK}.md"
    plain = deck.read_text().replace("```mermaid", "```text")  # no diagram to parse: no browser here
    deck.write_text(
        plain + '\n---\n\n## Typo\n\n<tally-countr alt="x"></tally-countr>\n\n<unit-scale value="1"></unit-scale>\n'
    )
    errors = [str(d) for d in check_project(root) if d.severity == "error"]
    lines = deck.read_text().splitlines()
    typo = lines.index('<tally-countr alt="x"></tally-countr>') + 1
    assert errors == [
        f"decks/{DECK}.md:{typo}:1: error: <tally-countr> is not defined by any file in components/ "
        "(did you mean 'tally-counter'?); components defined: tally-counter, unit-scale",
        f"decks/{DECK}.md:{typo + 2}:1: error: <unit-scale> needs an alt attribute: the text of its picture "
        "in PowerPoint and PDF",
    ]


def test_references_in_attributes_are_bound_and_a_missing_key_is_located():
    text = (
        '# A\n\n<unit-scale value="{{ ch90.base }}" alt="x"></unit-scale>\n\n'
        '<div>\n<unit-scale\n  value="{{ ch90.nope }}" alt="y"></unit-scale>\n</div>\n'
    )
    deck = parse_text(text, Path("decks/x.md"))
    bound, problems = bind_deck(deck, Results.read(FIXTURE / "results" / "results.md"))
    assert [str(p) for p in problems] == ["decks/x.md:7:10: error: unknown result key 'ch90.nope'"]
    found = list(components.instances(bound))
    assert [(i.tag, i.attr("value"), i.line) for i in found] == [
        ("unit-scale", "2.5", 3),
        ("unit-scale", "{{ ch90.nope }}", 6),
    ]
    assert [s.key for s in bound.slides[0].sources] == ["ch90.base", "ch90.nope"]


def test_attributes_parse_and_picture_keys_follow_the_attributes_only():
    attrs = elements.parse_attrs(" peak=\"0.02\" warmup=100 alt='a &amp; b' disabled")
    assert attrs == (("peak", "0.02"), ("warmup", "100"), ("alt", "a & b"), ("disabled", ""))
    key = elements.component_key("lr-schedule", ' peak="0.02" warmup="100"')
    assert key == elements.component_key("lr-schedule", '\n  warmup="100"\n  peak="0.02"')
    assert key != elements.component_key("lr-schedule", ' peak="0.03" warmup="100"')
    assert key.startswith("component:lr-schedule:")
    assert not htmlkinds.is_custom_tag("v-click") and htmlkinds.is_custom_tag("lr-schedule")


def test_without_chromium_a_fallback_figure_is_placed_else_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(tmp_path / "no-such-chromium"))
    text = (
        '# A\n\n<tally-counter alt="c" fallback="fig:ch90.counter"></tally-counter>\n\n'
        '<unit-scale value="2" alt="u"></unit-scale>\n'
    )
    deck = parse_text(text, tmp_path / "decks" / "x.md")
    figure = tmp_path / "counter.png"
    drawn = snapshot.build_pictures(
        [deck],
        components.discover(FIXTURE),
        tmp_path / "cache",
        lambda name: (figure, figure) if name == "ch90.counter" else (figure, figure),
    )
    result = drawn[deck.path]
    counter, scale = components.instances(deck)
    assert result.files == {counter.key: figure}
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert (problem.line, problem.severity) == (5, "error")
    assert problem.message.startswith("<unit-scale> needs Chromium to draw its PowerPoint picture")
    assert "install Debian's chromium and the Python package playwright" in problem.message
    assert 'fallback="fig:NAME"' in problem.message


# --------------------------------------------------------------------------- one build, one browser


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    needs.chromium()
    root = copy_fixture(tmp_path_factory.mktemp("components") / "project")
    launches = snapshot.launches
    report = build(Project(root), options=BuildOptions(formats=("html", "pptx")))
    assert not report.diagnostics, [str(d) for d in report.diagnostics]
    assert snapshot.launches == launches + 1  # one browser for every picture
    return root


@pytest.mark.browser
def test_each_instance_is_a_picture_with_its_alt_text_in_powerpoint(built):
    prs = Presentation(str(built / "build" / "pptx" / f"{DECK}.pptx"))
    slides = list(prs.slides)
    for number, alt in ((2, "A counter that starts at 3"), (3, "The base number times a factor")):
        slide = slides[number - 1]
        pictures = [s for s in slide.shapes if s.shape_type == 13]
        assert [p._element.nvPicPr.cNvPr.get("descr") for p in pictures] == [alt]
        width_in = pictures[0].width / 914400
        assert 1 < width_in < 8  # at its size on the HTML slide, not blown up to the column
        assert slide.notes_slide.notes_text_frame.text.splitlines()[-1] == "Interactive in the HTML deck"
    assert "Interactive" not in slides[0].notes_slide.notes_text_frame.text


@pytest.mark.browser
def test_an_unchanged_second_build_launches_no_browser(built):
    before = snapshot.launches
    pictures = sorted((built / "build" / "cache" / "pictures").glob("*.png"))
    assert len(pictures) == 4  # two components, two diagrams
    report = build(Project(built), options=BuildOptions(formats=("pptx",)))
    assert not report.diagnostics
    assert snapshot.launches == before
    assert sorted((built / "build" / "cache" / "pictures").glob("*.png")) == pictures


@pytest.mark.browser
def test_a_changed_attribute_draws_only_that_picture_again(built, tmp_path):
    root = copy_fixture(tmp_path / "p")
    shutil.copytree(built / "build" / "cache", root / "build" / "cache")
    deck = root / "decks" / f"{DECK}.md"
    deck.write_text(deck.read_text().replace('start="3"', 'start="4"'))
    before = snapshot.launches
    report = build(Project(root), options=BuildOptions(formats=("pptx",)))
    assert not report.diagnostics
    assert snapshot.launches == before + 1
    assert len(list((root / "build" / "cache" / "pictures").glob("*.png"))) == 5


@pytest.mark.browser
def test_a_component_that_throws_while_drawing_is_a_located_build_error(built, tmp_path):
    root = copy_fixture(tmp_path / "p")
    shutil.copytree(built / "build" / "cache", root / "build" / "cache")  # only the new picture is drawn
    (root / "components" / "boom-box.js").write_text(
        'customElements.define("boom-box", class extends HTMLElement {\n'
        '  connectedCallback() { throw new Error("no state " + this.getAttribute("print-state")); }\n});\n'
    )
    deck = root / "decks" / f"{DECK}.md"
    deck.write_text(deck.read_text() + '\n---\n\n## Boom\n\n<boom-box print-state="x=1" alt="b"></boom-box>\n')
    report = build(Project(root), options=BuildOptions(formats=("pptx",)))
    line = deck.read_text().splitlines().index('<boom-box print-state="x=1" alt="b"></boom-box>') + 1
    assert [str(d) for d in report.diagnostics] == [
        f"{deck}:{line}:1: error: <boom-box> threw while drawing its picture: no state x=1"
    ]


# --------------------------------------------------------------------------- in the browser
# (after the builds: a build drives its own Playwright, which cannot start inside this one)


@pytest.fixture(scope="module")
def browser():
    with needs.browser() as chromium:
        yield chromium


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.problems = []  # type: ignore[attr-defined]
    page.on("console", lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    page.on("request", lambda r: r.url.startswith(("file:", "data:")) or page.problems.append(f"network: {r.url}"))
    yield page
    page.close()


def open_deck(page, root: Path, slide: int) -> None:
    page.goto((root / "build" / "html" / f"{DECK}.html").as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    page.evaluate(f"Reveal.configure({{transition: 'none'}}); Reveal.slide({slide})")


@pytest.mark.browser
def test_the_html_deck_loads_each_component_once_from_its_assets(built):
    page = (built / "build" / "html" / f"{DECK}.html").read_text()
    assert page.count('<script src="assets/components/tally-counter.js">') == 1
    assert page.count('<script src="assets/components/unit-scale.js">') == 1
    assert page.count('<link rel="stylesheet" href="assets/components/tally-counter.css">') == 1
    assets = built / "build" / "html" / "assets" / "components"
    assert sorted(p.name for p in assets.iterdir()) == ["tally-counter.css", "tally-counter.js", "unit-scale.js"]
    assert 'value="2.5"' in page  # the bound number, as the slide shows it


@pytest.mark.browser
def test_both_components_are_upgraded_and_answer_mouse_and_keyboard(built, page):
    open_deck(page, built, 1)
    assert page.evaluate("['tally-counter', 'unit-scale'].map(t => customElements.get(t) !== undefined)") == [True] * 2
    assert page.text_content("tally-counter output") == "count 3"
    page.click("tally-counter button")
    assert page.text_content("tally-counter output") == "count 5"
    page.evaluate("Reveal.slide(2)")
    assert page.text_content("unit-scale output") == "= 2.5"
    page.fill("unit-scale input", "4")
    assert page.text_content("unit-scale output") == "= 10"
    page.focus("unit-scale input")
    page.keyboard.press("ArrowRight")  # the component keeps its keys: the slide does not change
    assert page.evaluate("Reveal.getIndices().h") == 2
    assert not page.problems, page.problems


@pytest.mark.browser
def test_a_component_that_throws_fails_the_browser_check(built, page, tmp_path):
    html = built / "build" / "html" / f"{DECK}.html"
    broken = html.with_name("broken.html")
    broken.write_text(
        html.read_text().replace(
            "</body>",
            "<script>customElements.define('boom-box', class extends "
            "HTMLElement { connectedCallback() { throw new Error('boom'); } });"
            "document.body.appendChild(document.createElement('boom-box'));"
            "</script></body>",
        )
    )
    page.goto(broken.as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    assert any("boom" in p for p in page.problems)


# --------------------------------------------------------------------------- lr-schedule


@pytest.mark.browser
def test_lr_schedule_equals_the_python_schedule(browser):
    from model.train import TrainConfig, lr_at

    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_script_tag(path=str(REPO / "components" / "lr-schedule.js"))
    worst = 0.0
    cases = 0
    for schedule in ("constant", "cosine", "wsd"):
        for warmup, decay_frac, peak in (
            (5, 0.2, 0.02),
            (0, 0.25, 3e-3),
            (10, 0.5, 1.0),
            (49, 0.1, 0.1),
            (7, 0.05, 2e-3),
            (0, 0.3, 0.02),
        ):
            cfg = TrainConfig(lr=peak, warmup=warmup, steps=50, schedule=schedule, decay_frac=decay_frac)
            js = page.evaluate(
                "c => customElements.get('lr-schedule').curve(c)",
                {"peak": peak, "warmup": warmup, "steps": 50, "schedule": schedule, "decayFrac": decay_frac},
            )
            python = [lr_at(step, cfg) for step in range(50)]
            assert len(js) == 50
            worst = max(worst, max(abs(a - b) for a, b in zip(js, python, strict=True)))
            cases += 1
    assert cases == 18 and worst <= 1e-12, worst
    assert not errors
    page.close()


@pytest.mark.browser
def test_lr_schedule_draws_prints_its_state_and_keeps_its_keys(browser):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content(
        '<!doctype html><html><body><lr-schedule peak="0.02" warmup="100" steps="2000" '
        'schedule="wsd" decay-frac="0.2" print-state="step=1900" alt="x"></lr-schedule></body></html>'
    )
    page.add_script_tag(path=str(REPO / "components" / "lr-schedule.js"))
    assert page.text_content("lr-schedule .lr-readout") == "step 1900: learning rate 0.005"
    page.select_option("lr-schedule select", "constant")
    assert page.text_content("lr-schedule .lr-readout") == "step 1900: learning rate 0.02"
    page.fill("lr-schedule input[aria-label='peak learning rate']", "0.5")
    assert page.get_attribute("lr-schedule", "peak") == "0.5"
    assert page.text_content("lr-schedule .lr-readout") == "step 1900: learning rate 0.5"
    page.focus("lr-schedule .lr-step")
    page.evaluate("window.seen = 0; document.addEventListener('keydown', () => window.seen++)")
    page.keyboard.press("ArrowLeft")
    assert page.text_content("lr-schedule .lr-readout") == "step 1899: learning rate 0.5"
    assert page.evaluate("window.seen") == 0  # reveal.js listens on the document: it never sees the key
    page.evaluate("document.querySelector('lr-schedule').setAttribute('steps', '1000')")
    assert page.get_attribute("lr-schedule .lr-step", "max") == "999"
    assert not errors
    page.close()


def test_the_lr_schedule_deck_helper_attributes_are_what_it_reads():
    text = (REPO / "components" / "lr-schedule.js").read_text()
    observed = text.split("observedAttributes()", 1)[1].split("]", 1)[0]
    for name in ("peak", "warmup", "steps", "schedule", "decay-frac", "print-state"):
        assert f'"{name}"' in observed
    deck = parse_deck(FIXTURE / "decks" / f"{DECK}.md")
    assert deck.slides  # the fixture parses


def test_a_fallback_must_name_a_registered_figure():
    from slidegen.check.project import _check_figures

    deck = parse_text(
        '# A\n\n<lr-schedule alt="x" fallback="fig:ch05.schedulez"></lr-schedule>\n\n'
        '<lr-schedule alt="y" fallback="ch05.schedules"></lr-schedule>\n',
        Path("decks/a.md"),
    )
    assert [str(d) for d in _check_figures("decks/a.md", deck, {"ch05.schedules"})] == [
        "decks/a.md:3:1: error: unknown figure 'ch05.schedulez' (did you mean 'ch05.schedules'?)"
    ]
    found = components.discover(REPO)
    assert [str(d) for d in components.deck_problems(deck, found)] == [
        "decks/a.md:5:1: error: <lr-schedule> fallback='ch05.schedules' must name a figure: fallback=\"fig:NAME\""
    ]


def test_an_element_inside_a_paragraph_is_located_at_its_own_line():
    deck = parse_text(
        '# A\n\nSome text\nmore <unit-scale\n  alt="x"\n  value="{{ ch90.nope }}"></unit-scale>\n', Path("decks/a.md")
    )
    bound, _ = bind_deck(deck, Results.read(FIXTURE / "results" / "results.md"))
    assert [(i.tag, i.line) for i in components.instances(bound)] == [("unit-scale", 4)]
