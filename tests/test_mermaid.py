"""Mermaid fences: drawn as SVG in the HTML page (offline, no console error), as pictures in PowerPoint,
printed in the PDF, and a diagram Mermaid cannot parse is a located ``check`` error.

The fixture project (tests/fixtures/components) has a flowchart and a sequence diagram.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import needs
import pytest
from pptx import Presentation

from slidegen.check.project import check_project
from slidegen.deck import elements
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.read.parse import parse_text
from slidegen.write import html, snapshot

FIXTURE = Path(__file__).parent / "fixtures" / "components"
DECK = "90-widgets"


def test_a_mermaid_fence_is_a_diagram_box_and_the_page_loads_mermaid_only_then(tmp_path):
    deck = parse_text('# A\n\n```mermaid\nflowchart LR\n  a --> b["<b>"]\n```\n', tmp_path / "a.md")
    page = html.render_deck(deck, {})
    assert (
        '<div class="mermaid-diagram" role="img"><pre class="mermaid-source">flowchart LR\n'
        "  a --&gt; b[&#34;&lt;b&gt;&#34;]</pre></div>"
    ) in page
    assert '<script src="assets/mermaid.min.js"></script>' in page
    plain = html.render_deck(parse_text("# A\n\n```python\nx = 1\n```\n", tmp_path / "b.md"), {})
    assert "mermaid.min.js" not in plain
    assert elements.diagram_key("flowchart LR") == elements.diagram_key("flowchart LR")
    assert elements.diagram_key("flowchart LR").startswith("mermaid:")


def test_a_diagrams_alt_text_is_its_accessible_description_else_its_kind():
    from slidegen.media import mermaid

    assert mermaid.alt_text("flowchart LR\n  accTitle: Data flow\n  accDescr: Data goes to the model\n  a --> b") == (
        "Data goes to the model"
    )
    assert mermaid.alt_text("%% a comment\nflowchart LR\n  accTitle: Data flow\n  a --> b") == "Data flow"
    assert mermaid.alt_text("%% a comment\nsequenceDiagram\n  A->>B: x") == "Diagram: sequenceDiagram"


def test_mermaid_is_copied_into_the_assets_only_when_a_page_draws_diagrams(tmp_path):
    html.copy_assets(tmp_path / "a")
    assert not (tmp_path / "a" / "assets" / "mermaid.min.js").exists()
    html.copy_assets(tmp_path / "b", mermaid=True)
    assert (tmp_path / "b" / "assets" / "mermaid.min.js").stat().st_size > 1_000_000


def test_mermaids_version_is_its_package_json_else_a_digest_of_the_script(tmp_path, monkeypatch):
    from slidegen.media import mermaid

    dist = tmp_path / "node_modules" / "mermaid" / "dist"
    dist.mkdir(parents=True)
    (dist / "mermaid.min.js").write_text("/* a stand-in */")
    monkeypatch.setattr(mermaid, "find_node_modules", lambda: tmp_path / "node_modules")
    assert mermaid.version().startswith("sha256:")  # a copy without package.json (an older wheel) still builds
    (dist.parent / "package.json").write_text('{"name": "mermaid", "version": "11.14.0"}')
    assert mermaid.version() == "11.14.0"
    from slidegen.media.assets import BUNDLED

    assert "mermaid/package.json" in BUNDLED  # what the wheel carries


def test_drawing_a_picture_without_playwright_is_a_one_line_setup_error(tmp_path, monkeypatch):
    import sys

    from slidegen.write.pdf import ChromiumMissing

    needs.chromium()
    monkeypatch.setitem(sys.modules, "playwright", None)  # installed with --no-deps: an ImportError, not exit 70
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    job = snapshot.diagram_job("mermaid:x", "flowchart LR\n  a --> b", "decks/a.md", 3)
    with pytest.raises(ChromiumMissing, match="pip install playwright"):
        snapshot.Pictures(tmp_path / "cache").draw([job])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    needs.chromium()
    root = tmp_path_factory.mktemp("mermaid") / "project"
    shutil.copytree(FIXTURE, root)
    report = build(Project(root), options=BuildOptions(formats=("html", "pptx", "pdf")))
    assert not report.diagnostics, [str(d) for d in report.diagnostics]
    return root


@pytest.mark.slow
@pytest.mark.browser
def test_an_unparseable_diagram_is_a_located_check_error(built, tmp_path):
    root = tmp_path / "p"
    shutil.copytree(FIXTURE, root)
    deck = root / "decks" / f"{DECK}.md"
    deck.write_text(deck.read_text() + "\n---\n\n## Broken\n\n```mermaid\nflowchart LR\n  a --> b\n  b -->> c((\n```\n")
    fence = deck.read_text().splitlines().index("  b -->> c((") + 1
    errors = [d for d in check_project(root) if d.severity == "error"]
    assert [(d.path, d.line) for d in errors] == [(f"decks/{DECK}.md", fence)]
    assert errors[0].message.startswith("Mermaid cannot parse this diagram: Parse error on line 3: Expecting ")
    deck.write_text(deck.read_text().replace("  b -->> c((\n", ""))
    check_project(root)
    before = snapshot.launches
    assert not [d for d in check_project(root) if d.severity == "error"]
    assert snapshot.launches == before  # everything parsed before: no browser


@pytest.mark.browser
def test_each_diagram_is_a_picture_in_powerpoint(built):
    prs = Presentation(str(built / "build" / "pptx" / f"{DECK}.pptx"))
    slides = list(prs.slides)
    for number, alt in ((4, "Diagram: flowchart LR"), (5, "Diagram: sequenceDiagram")):
        pictures = [s for s in slides[number - 1].shapes if s.shape_type == 13]
        assert [p._element.nvPicPr.cNvPr.get("descr") for p in pictures] == [alt]
        assert not [s for s in slides[number - 1].shapes if s.has_text_frame and "-->" in s.text_frame.text]


@pytest.mark.browser
def test_the_pdf_prints_the_drawn_diagrams(built):
    pdftotext = needs.tool("pdftotext", "poppler-utils")
    pdf = built / "build" / "pdf" / f"{DECK}.pdf"
    text = subprocess.run([pdftotext, str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    pages = text.split("\f")
    assert "Model" in pages[3] and "Loss" in pages[3] and "-->" not in pages[3]
    assert "Worker A" in pages[4] and "send gradient" in pages[4]


@pytest.fixture(scope="module")
def browser():
    with needs.browser() as chromium:
        yield chromium


@pytest.mark.browser
def test_diagrams_are_svg_in_the_page_offline_without_errors(built, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    problems: list[str] = []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: r.url.startswith(("file:", "data:")) or problems.append(f"network: {r.url}"))
    page.goto((built / "build" / "html" / f"{DECK}.html").as_uri() + "#/3")
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    assert page.evaluate("document.querySelectorAll('.mermaid-diagram.drawn > svg').length") == 2
    assert page.evaluate("document.querySelectorAll('.mermaid-diagram.failed').length") == 0
    assert page.evaluate("document.querySelectorAll('body > [id^=dslidegen]').length") == 0
    size = page.evaluate(
        "(() => { const r = Reveal.getCurrentSlide().querySelector('svg').getBoundingClientRect();"
        " return [r.width, r.height]; })()"
    )
    assert size[0] > 300 and size[1] > 30
    assert not problems, problems
    page.close()
