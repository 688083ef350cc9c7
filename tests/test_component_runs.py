"""A component reads an experiment's run record: ``run="ID"`` puts ``results/runs/ID.json`` in
``window.SLIDEGEN_RUNS`` before any component script runs; a missing record is a located error."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import needs
import pytest

from slidegen.cli.main import main

SCRIPT = """customElements.define("run-reader", class extends HTMLElement {
  connectedCallback() {
    const record = window.SLIDEGEN_RUNS[this.getAttribute("run")];
    this.textContent = "steps " + record.series.step.length + " last " + record.series.loss.at(-1);
  }
});
"""
RECORD = {
    "config": {},
    "duration": 1.0,
    "files": {},
    "fingerprint": "abc",
    "id": "ch90.demo",
    "measurements": {},
    "seeds": [0],
    "series": {"step": [0, 1, 2], "loss": [4.0, 3.5, 0.1 + 0.2]},
    "versions": {},
}


def make(root: Path, run: str = "ch90.demo") -> Path:
    (root / "decks").mkdir(parents=True)
    (root / "components").mkdir()
    (root / "components" / "run-reader.js").write_text(SCRIPT, encoding="utf-8")
    (root / "results" / "runs").mkdir(parents=True)
    (root / "results" / "results.md").write_text("# Results\n", encoding="utf-8")
    (root / "results" / "runs" / "ch90.demo.json").write_text(json.dumps(RECORD), encoding="utf-8")
    (root / "decks" / "01-r.md").write_text(
        f'# Reader\n\n<run-reader run="{run}" alt="What the run recorded"></run-reader>\n', encoding="utf-8"
    )
    return root


def run(root: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(root)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        code = main(args)
    return code, err.getvalue()


def test_the_page_defines_the_record_before_the_component_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    chromium = needs.chromium()
    root = make(tmp_path)
    code, out = run(root, ["build", "--to", "html"], monkeypatch)
    assert code == 0, out
    page = (root / "build" / "html" / "01-r.html").read_text(encoding="utf-8")
    [script] = [p for p in (root / "build" / "html" / "media" / "runs").iterdir()]
    assert script.name.startswith("ch90.demo-") and f"media/runs/{script.name}" in page
    assert page.index(f"media/runs/{script.name}") < page.index("components/run-reader.js")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto((root / "build" / "html" / "01-r.html").as_uri())
        tab.wait_for_function("document.querySelector('run-reader').textContent.length > 0")
        text = tab.evaluate("document.querySelector('run-reader').textContent")
        browser.close()
    assert text == "steps 3 last 0.30000000000000004"  # the record exactly as written


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("ch90.nothere", "run 'ch90.nothere' has no record"),
        ("Not An Id", "run='Not An Id' must name an experiment"),
    ],
)
def test_a_run_without_a_record_is_an_error_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str, message: str
):
    root = make(tmp_path, written)
    code, out = run(root, ["check"], monkeypatch)
    assert code == 1 and f"decks/01-r.md:3:1: error: component data: {message}" in out
    code, out = run(root, ["build", "--to", "html"], monkeypatch)
    assert code == 1 and f"01-r.md:3:1: error: component data: {message}" in out
    assert not (root / "build" / "html" / "01-r.html").exists()


def test_the_powerpoint_picture_is_drawn_with_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The component throws without its record (``record.series`` of undefined), which would be a located
    build error: a built picture shows the page held the record."""
    needs.chromium()
    root = make(tmp_path)
    code, out = run(root, ["build", "--to", "pptx"], monkeypatch)
    assert code == 0, out
    from pptx import Presentation

    slide = Presentation(str(root / "build" / "pptx" / "01-r.pptx")).slides[0]
    assert any(shape.shape_type == 13 for shape in slide.shapes)  # a picture
    cached = list((root / "build" / "cache" / "pictures").glob("*.png"))
    record = root / "results" / "runs" / "ch90.demo.json"
    record.write_text(json.dumps({**RECORD, "series": {"step": [0], "loss": [1.0]}}), encoding="utf-8")
    code, out = run(root, ["build", "--to", "pptx"], monkeypatch)
    assert code == 0, out
    assert len(list((root / "build" / "cache" / "pictures").glob("*.png"))) == len(cached) + 1  # redrawn
