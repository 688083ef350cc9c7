"""`slidegen serve` patches slides in place: which saves patch and which reload, the patch is the writer's
own HTML, the page (and the speaker view) keep their slide and click in Chromium, and a save of a file
decks import rebuilds only the decks that import it. Small temporary projects, ephemeral ports."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest
from sse import Events

from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.serve import Preview
from slidegen.serve.patch import Patch, slide_patch, split_page

DECK = """\
---
title: Patched deck
---

# First slide

Intro $a^2$.

<!-- First notes. -->

---

# Second slide

<v-clicks>

- one
- two
- three

</v-clicks>

Original text $x^2 + y^2$.

<!-- Original notes. -->

---

# Third slide

Last.
"""

EDITED = DECK.replace("Original text", "Edited text").replace("Original notes", "New notes")

IMPORTER = "---\ntitle: Importer\n---\n\n# Importer\n\nOwn slide.\n\n---\nsrc: ./parts/part.md\n---\n"
PART = "# Part slide\n\nPart text.\n"
PLAIN = "---\ntitle: Plain\n---\n\n# Plain\n\nNo imports.\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    decks = tmp_path / "decks"
    (decks / "parts").mkdir(parents=True)
    (decks / "01-patched.md").write_text(DECK, encoding="utf-8")
    (decks / "02-importer.md").write_text(IMPORTER, encoding="utf-8")
    (decks / "03-plain.md").write_text(PLAIN, encoding="utf-8")
    (decks / "parts" / "part.md").write_text(PART, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)


@pytest.fixture
def preview(project: Project) -> Iterator[Preview]:
    with Preview(project, port=0, log=open(os.devnull, "w"), interval=3600) as running:
        running.watch_in_background()
        assert running.watching.wait(10)
        yield running


# --------------------------------------------------------------------------- which changes patch


def page_of(project: Project, text: str, tmp: Path) -> str:
    (project.decks_dir / "01-patched.md").write_text(text, encoding="utf-8")
    build(project, [project.decks_dir / "01-patched.md"], BuildOptions(formats=("html",), out=tmp, force=True))
    return (tmp / "html" / "01-patched.html").read_text(encoding="utf-8")


def test_a_text_edit_patches_that_slide_only(project: Project, tmp_path: Path) -> None:
    before, after = page_of(project, DECK, tmp_path / "a"), page_of(project, EDITED, tmp_path / "b")
    patch = slide_patch(before, after)
    assert isinstance(patch, Patch) and patch.total == 3
    assert [i for i, _ in patch.slides] == [1]
    inner = patch.slides[0][1]
    assert "Edited text" in inner and "New notes" in inner and "Original" not in inner
    assert inner in after  # the writer's own bytes
    parts = split_page(after)
    assert parts is not None and after.startswith(parts.head) and after.endswith(parts.tail)
    assert len(parts.slides) == 3 and all(s.tag + s.inner + "</section>" in after for s in parts.slides)
    assert slide_patch(after, after) == Patch(3, ())


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda d: d + "\n---\n\n# Added\n", id="a slide added"),
        pytest.param(lambda d: d.replace("\n---\n\n# Third slide\n\nLast.\n", "\n"), id="a slide removed"),
        pytest.param(lambda d: d.replace("title: Patched deck", "title: Renamed deck"), id="the headmatter"),
        pytest.param(
            lambda d: d.replace("---\n\n# Second slide", "---\nlayout: center\n---\n\n# Second slide"),
            id="a slide's layout",
        ),
        pytest.param(lambda d: d + "\n<style>\nh1 { color: red; }\n</style>\n", id="a style block"),
    ],
)
def test_anything_but_slide_contents_reloads(project: Project, tmp_path: Path, edit: object) -> None:
    assert callable(edit)
    before, after = page_of(project, DECK, tmp_path / "a"), page_of(project, edit(DECK), tmp_path / "b")
    assert before != after
    assert slide_patch(before, after) is None


def test_pages_that_are_not_deck_pages_reload() -> None:
    deck = '<html><body><div class="slides">\n<section>\n<p>a</p>\n</section>\n</div>\n</div>\n</body></html>'
    assert slide_patch("<html><body>error page</body></html>", deck) is None
    assert slide_patch(deck, "<html><body>error page</body></html>") is None
    nested = deck.replace("<p>a</p>", "<section><p>b</p></section>")  # raw HTML may hold a section
    patch = slide_patch(deck, nested)
    assert patch == Patch(1, ((0, "\n<section><p>b</p></section>\n"),))
    assert slide_patch(deck, deck.replace("</section>\n</div>", "</div>")) is None  # unbalanced
    scripted = deck.replace("<p>a</p>", "<p>b</p><SCRIPT>window.x = 1</SCRIPT>")  # runs only on a load
    assert slide_patch(deck, scripted) is None


# --------------------------------------------------------------------------- what serve sends


def test_a_save_sends_the_new_slide_and_writes_a_full_builds_bytes(
    preview: Preview, project: Project, tmp_path: Path
) -> None:
    events = Events(preview.port)
    try:
        (project.decks_dir / "01-patched.md").write_text(EDITED, encoding="utf-8")
        got = events.until_reload()
        patches = [data for name, data in got if name == "patch"]
        assert len(patches) == 1 and patches[0]["page"] == "01-patched.html" and patches[0]["total"] == 3
        assert [i for i, _ in patches[0]["slides"]] == [1]
        reload = got[-1][1]
        assert reload["patched"] == ["01-patched.html"] and "01-patched.html" in reload["pages"]
        served = (preview.html_dir / "01-patched.html").read_bytes()
        build(project, None, BuildOptions(formats=("html",), out=tmp_path / "full", force=True))
        assert served == (tmp_path / "full" / "html" / "01-patched.html").read_bytes()
        assert patches[0]["slides"][0][1].encode() in served
        assert preview.last is not None and preview.last.build > 0
    finally:
        events.close()


def test_adding_a_slide_reloads_instead(preview: Preview, project: Project) -> None:
    events = Events(preview.port)
    try:
        (project.decks_dir / "01-patched.md").write_text(DECK + "\n---\n\n# Added\n", encoding="utf-8")
        got = events.until_reload()
        assert [name for name, _ in got] == ["reload"]
        assert got[-1][1]["patched"] == [] and "01-patched.html" in got[-1][1]["pages"]
    finally:
        events.close()


def test_a_part_file_save_seen_by_events_rebuilds_only_its_importers(preview: Preview, project: Project) -> None:
    assert preview.watcher == "events"
    html = preview.html_dir
    stamps = {name: (html / name).stat().st_mtime_ns for name in ("01-patched.html", "03-plain.html")}
    events = Events(preview.port)
    try:
        (project.decks_dir / "parts" / "part.md").write_text(PART.replace("Part text", "Part edited"), "utf-8")
        got = events.until_reload()
        assert got[-1][1]["pages"] == ["02-importer.html", "index.html"]
        assert [(data["page"], [i for i, _ in data["slides"]]) for name, data in got if name == "patch"] == [
            ("02-importer.html", [1])
        ]
        assert "Part edited" in (html / "02-importer.html").read_text(encoding="utf-8")
        assert {name: (html / name).stat().st_mtime_ns for name in stamps} == stamps
    finally:
        events.close()


def test_the_decks_a_file_touches_come_from_the_manifest(preview: Preview, project: Project) -> None:
    decks = project.decks_dir
    assert preview.decks_touched([decks / "parts" / "part.md"]) == [(decks / "02-importer.md").resolve()]
    assert preview.decks_touched([decks / "03-plain.md"]) == [decks / "03-plain.md"]
    assert preview.decks_touched([project.root / "results" / "results.md"]) is None  # any deck may cite a row
    assert preview.decks_touched([decks / "parts" / "unused.md"]) is None  # the manifest decides
    assert preview.decks_touched([project.root / "model" / "snippet.py"]) is None  # figure code too
    assert preview.decks_touched([decks / "parts" / "part.md", decks / "03-plain.md"]) == sorted(
        [(decks / "02-importer.md").resolve(), decks / "03-plain.md"]
    )
    assert preview.decks_touched([decks / "parts" / "part.md", decks / "02-importer.md"]) == [
        (decks / "02-importer.md").resolve()
    ]  # once, however it is named


# --------------------------------------------------------------------------- in Chromium

_NOTES = "document.querySelector('.speaker-controls-notes .value')"


@pytest.mark.browser
def test_the_open_page_and_the_speaker_view_are_patched_in_place(preview: Preview, project: Project) -> None:
    with needs.browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(preview.url + "01-patched.html#/1")
        page.wait_for_function("window.Reveal && Reveal.isReady() && window.__slidegenLive === true")
        page.evaluate("Reveal.configure({transition: 'none'})")
        with page.expect_popup() as opened:
            page.evaluate("Reveal.getPlugin('notes').open()")
        notes = opened.value
        notes.wait_for_function(f"{_NOTES} && {_NOTES}.innerHTML.includes('Original notes')", timeout=10000)
        page.evaluate("Reveal.next(); Reveal.next()")  # two clicks shown on slide 2
        assert page.evaluate("Reveal.getIndices()") == {"h": 1, "v": 0, "f": 1}
        deadline = time.monotonic() + 10
        while preview.hub.listeners < 3 and time.monotonic() < deadline:  # the page and both previews
            time.sleep(0.05)
        page.evaluate("window.__marker = 'not reloaded'")
        (project.decks_dir / "01-patched.md").write_text(EDITED, encoding="utf-8")
        page.wait_for_function("window.__slidegenPatches === 1", timeout=8000)
        assert page.evaluate("window.__marker") == "not reloaded"
        assert page.evaluate("Reveal.getIndices()") == {"h": 1, "v": 0, "f": 1}
        text = page.evaluate("Reveal.getCurrentSlide().innerText")
        assert "Edited text" in text and "Original" not in text
        assert page.evaluate(
            "Array.from(Reveal.getCurrentSlide().querySelectorAll('.fragment'))"
            ".map(f => f.classList.contains('visible'))"
        ) == [True, True, False]
        assert page.evaluate("Reveal.getCurrentSlide().querySelectorAll('.slide-body .katex').length") == 1
        # the speaker view: its notes, and its current and next previews (frames of the same page)
        notes.wait_for_function(f"{_NOTES}.innerHTML.includes('New notes')", timeout=8000)
        previews = [frame for frame in notes.frames if "receiver" in frame.url]
        assert len(previews) == 2
        for frame in previews:
            frame.wait_for_function("window.__slidegenPatches === 1", timeout=8000)
            assert "Edited text" in frame.evaluate("Reveal.getCurrentSlide().innerText")
        # the patched slide is what a fresh load of the rebuilt page shows, at the same click
        patched = page.evaluate("Reveal.getCurrentSlide().innerHTML")
        fresh = browser.new_page(viewport={"width": 1280, "height": 720})
        fresh.goto(preview.url + "01-patched.html#/1/0/1")
        fresh.wait_for_function("window.Reveal && Reveal.isReady()")
        assert fresh.evaluate("Reveal.getIndices()") == {"h": 1, "v": 0, "f": 1}
        assert fresh.evaluate("Reveal.getCurrentSlide().innerHTML") == patched
        assert not problems


@pytest.mark.browser
def test_adding_a_slide_reloads_the_page_at_the_same_slide(preview: Preview, project: Project) -> None:
    with needs.browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(preview.url + "01-patched.html#/2")
        page.wait_for_function("window.Reveal && Reveal.isReady() && window.__slidegenLive === true")
        deadline = time.monotonic() + 10
        while preview.hub.listeners < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        page.evaluate("window.__marker = 'before'")
        (project.decks_dir / "01-patched.md").write_text(EDITED + "\n---\n\n# Added slide\n", encoding="utf-8")
        page.wait_for_function("window.__marker === undefined && window.Reveal && Reveal.isReady()", timeout=8000)
        assert page.evaluate("Reveal.getIndices().h") == 2
        assert page.evaluate("Reveal.getTotalSlides()") == 4
        assert "Third slide" in page.evaluate("Reveal.getCurrentSlide().innerText")


RICH = """\
---
title: Rich deck
---

# Kept slide

Kept $k^2$.

---

# Rich slide

Text before.

```mermaid
graph LR
  A --> B
```

<x-double n="21" alt="twice 21"></x-double>

```python {2|3}
a = 1
b = 2
c = 3
```
"""

DOUBLE = """customElements.define("x-double", class extends HTMLElement {
  static get observedAttributes() { return ["n"]; }
  connectedCallback() { this.render(); }
  attributeChangedCallback() { this.render(); }
  render() { this.textContent = "twice: " + 2 * Number(this.getAttribute("n")); }
});
"""


@pytest.mark.browser
def test_diagrams_components_and_code_steps_run_again_on_the_patched_slide_only(
    preview: Preview, project: Project
) -> None:
    (project.root / "components").mkdir()
    (project.root / "components" / "x-double.js").write_text(DOUBLE, encoding="utf-8")
    deck = project.decks_dir / "04-rich.md"
    deck.write_text(RICH, encoding="utf-8")
    preview.rebuild([deck])  # built now (or by the watcher just before: either way on disk when this returns)
    assert (preview.html_dir / "04-rich.html").is_file()
    with needs.browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(preview.url + "04-rich.html#/1")
        page.wait_for_function(
            "window.Reveal && Reveal.isReady() && window.__slidegenLive === true"
            " && document.querySelector('.mermaid-diagram.drawn svg')"
        )
        page.evaluate("Reveal.configure({transition: 'none'}); Reveal.next()")  # code step 2: line 3 lit
        assert page.evaluate("Reveal.getIndices().f") == 0
        page.evaluate("document.querySelector('.reveal .slides > section .katex').__kept = true")
        deadline = time.monotonic() + 10
        while preview.hub.listeners < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        deck.write_text(RICH.replace("Text before.", "Text after.").replace('n="21"', 'n="5"'), encoding="utf-8")
        page.wait_for_function("window.__slidegenPatches === 1", timeout=8000)
        slide = "Reveal.getCurrentSlide()"
        assert "Text after." in page.evaluate(f"{slide}.innerText")
        assert page.evaluate(f"{slide}.querySelectorAll('.mermaid-diagram.drawn svg').length") == 1
        assert page.evaluate(f"{slide}.querySelector('x-double').textContent") == "twice: 10"
        assert page.evaluate(
            f"Array.from({slide}.querySelectorAll('.code .line.hl')).map(l => l.getAttribute('data-line'))"
        ) == ["3"]
        assert page.evaluate("Reveal.getIndices()") == {"h": 1, "v": 0, "f": 0}
        assert page.evaluate("document.querySelector('.reveal .slides > section .katex').__kept") is True
        assert not problems


def test_a_components_script_or_a_save_that_changes_no_slide_reloads(preview: Preview, project: Project) -> None:
    folder = project.root / "components"
    folder.mkdir()
    (folder / "x-double.js").write_text(DOUBLE, encoding="utf-8")
    deck = project.decks_dir / "04-rich.md"
    deck.write_text(RICH.replace("```mermaid\ngraph LR\n  A --> B\n```\n", ""), encoding="utf-8")
    preview.rebuild([deck])
    events = Events(preview.port)
    try:
        (folder / "x-double.js").write_text(DOUBLE.replace("twice: ", "double: "), encoding="utf-8")
        got = events.until_reload()
        assert [name for name, _ in got] == ["reload"]  # the page's bytes are the same: only a reload shows it
        assert "04-rich.html" in got[-1][1]["pages"] and got[-1][1]["patched"] == []
        assert preview.decks_touched([folder / "x-double.js"]) == [deck.resolve()]
    finally:
        events.close()


def test_a_results_row_or_a_snippet_saved_rebuilds_exactly_the_decks_using_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen through file-system events (polling once an hour); the manifest knows who cites and who shows what."""
    from slidegen.record.results import Result, Results

    def results(value: float) -> None:
        Results(
            [
                Result("ch01.loss", value, digits=3, what="a loss", source="run ch01.default 0123456789ab"),
                Result("ch01.acc", 0.5, digits=2, what="an accuracy", source="run ch01.default 0123456789ab"),
            ]
        ).write(tmp_path / "results" / "results.md")

    (tmp_path / "decks").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "snippet.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    results(2.5)
    decks = tmp_path / "decks"
    (decks / "01-cites.md").write_text("# Cites\n\nLoss {{ ch01.loss }}.\n", encoding="utf-8")
    (decks / "02-shows.md").write_text("# Shows\n\n<<< @/model/snippet.py\n", encoding="utf-8")
    (decks / "03-other.md").write_text("# Other\n\nAccuracy {{ ch01.acc }}.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with Preview(Project(tmp_path), port=0, log=open(os.devnull, "w"), interval=3600) as running:
        running.watch_in_background()
        assert running.watching.wait(10) and running.watcher == "events"
        events = Events(running.port)
        try:
            results(3.5)
            got = events.until_reload()
            assert got[-1][1]["pages"] == ["01-cites.html", "index.html"]
            assert "3.50" in (running.html_dir / "01-cites.html").read_text(encoding="utf-8")
            (tmp_path / "model" / "snippet.py").write_text("x = 1\ny = 3\n", encoding="utf-8")
            got = events.until_reload()
            assert got[-1][1]["pages"] == ["02-shows.html", "index.html"]
            assert [data["page"] for name, data in got if name == "patch"] == ["02-shows.html"]
        finally:
            events.close()


def test_a_save_parses_only_the_saved_deck(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other decks' state (their index entries, what they depend on) is the manifest's: not parsed again."""
    from slidegen.read import parse

    parsed: list[str] = []
    real = parse.parse_text

    def counting(text: str, path: Path) -> object:
        parsed.append(Path(path).name)
        return real(text, path)

    with Preview(project, port=0, log=open(os.devnull, "w")) as running:  # not watching: rebuilds called here
        monkeypatch.setattr(parse, "parse_text", counting)
        deck = project.decks_dir / "03-plain.md"
        assert running.rebuild([deck]) == []  # unchanged: nothing parsed or sent
        deck.write_text(PLAIN.replace("No imports", "Still none"), encoding="utf-8")
        assert running.changed({deck}) == ["03-plain.html", "index.html"]
        assert parsed == ["03-plain.md"]
