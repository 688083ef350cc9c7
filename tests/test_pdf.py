"""`slidegen build --to pdf`: one page per slide, 1280x720 CSS px = 960x540 pt, fragments shown.

What is measured: each page's /MediaBox read straight from the PDF (Chromium writes one per
page object, uncompressed), cross-checked with poppler's `pdfinfo`, and the page count both ways.
Skipped with a reason when Chromium, Playwright or poppler-utils is missing, unless CI is set: then
that is a failure (the checks that need only the PDF run first, poppler's last).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import needs
import pytest

from slidegen.cli.main import main
from slidegen.read.parse import parse_deck
from slidegen.write import pdf

FIXTURES = Path(__file__).parent / "fixtures" / "decks"
SMALL = """\
---
title: A small deck
chapter: 2
summary: Three slides.
---

# A small deck

---

# Clicks

<v-clicks>

- first
- second

</v-clicks>

<!-- Say the second point slowly. -->

---
layout: end
---

# The end
"""


@pytest.fixture(scope="module")
def chromium() -> Path:
    return needs.chromium()


def make_project(root: Path) -> Path:
    decks = root / "decks"
    decks.mkdir(parents=True)
    shutil.copy(FIXTURES / "sample.md", decks / "01-sample.md")
    shutil.copytree(FIXTURES / "img", decks / "img")
    (decks / "02-small.md").write_text(SMALL, encoding="utf-8")
    return root


def media_boxes(path: Path) -> list[tuple[float, float]]:
    """(width, height) in pt of every page, from the /MediaBox of each /Type /Page object."""
    data = path.read_bytes()
    boxes = []
    for match in re.finditer(rb"/Type\s*/Page(?![a-zA-Z])", data):
        start = data.rfind(b"obj", 0, match.start())
        end = data.find(b"endobj", match.end())
        box = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", data[start:end])
        assert box, f"page object without a MediaBox in {path}"
        x0, y0, x1, y1 = (float(v) for v in box.groups())
        boxes.append((x1 - x0, y1 - y0))
    return boxes


def pdfinfo_sizes(path: Path) -> list[tuple[float, float]]:
    """Page sizes as poppler reports them (skips without pdfinfo, fails under CI)."""
    pdfinfo = needs.tool("pdfinfo", "poppler-utils")
    out = subprocess.run([pdfinfo, "-f", "1", "-l", "9999", str(path)], capture_output=True, text=True, check=True)
    return [(float(w), float(h)) for w, h in re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts", out.stdout)]


def page_text(path: Path, page: int) -> str:
    """The text of one page (skips without pdftotext, fails under CI)."""
    pdftotext = needs.tool("pdftotext", "poppler-utils")
    out = subprocess.run(
        [pdftotext, "-f", str(page), "-l", str(page), str(path), "-"], capture_output=True, text=True, check=True
    )
    return out.stdout


@pytest.fixture(scope="module")
def built(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """html and pdf in one build (one browser for both decks)."""
    root = make_project(tmp_path_factory.mktemp("pdfproject"))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main(["build", "--to", "html,pdf"]) == 0
    finally:
        os.chdir(cwd)
    return root


@pytest.mark.browser
def test_one_page_per_slide_each_960_by_540_pt(built: Path) -> None:
    slides = {slug: len(parse_deck(built / "decks" / f"{slug}.md").slides) for slug in ("01-sample", "02-small")}
    for slug, count in slides.items():
        boxes = media_boxes(built / "build" / "pdf" / f"{slug}.pdf")
        assert len(boxes) == count, slug
        assert set(boxes) == {(960.0, 540.0)}, slug  # 1280x720 CSS px at 96 px per inch, in pt
    assert slides["01-sample"] == 13
    # html was asked for too: the PDF was printed from build/html, which stays
    assert (built / "build" / "html" / "01-sample.html").is_file()
    assert not list((built / "build" / "pdf").glob(".*.tmp"))  # written atomically, nothing left over
    for slug, count in slides.items():  # poppler agrees (last: the checks above need no poppler)
        assert pdfinfo_sizes(built / "build" / "pdf" / f"{slug}.pdf") == [(960.0, 540.0)] * count, slug


@pytest.mark.browser
def test_fragments_print_in_their_final_state(built: Path) -> None:
    text = page_text(built / "build" / "pdf" / "02-small.pdf", 2)
    assert "first" in text and "second" in text
    watch = page_text(built / "build" / "pdf" / "01-sample.pdf", 8)
    assert "tokens per second" in watch and "cosine decay" in watch
    assert re.search(r"2\s*/\s*3", text) and "A small deck" in text and "Chapter 2" in text  # the footer prints


@pytest.mark.browser
def test_pdf_alone_with_notes_uses_a_temporary_html_folder(
    chromium: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    (root / "decks").mkdir(parents=True)
    (root / "decks" / "02-small.md").write_text(SMALL, encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["build", "--to", "pdf", "--notes"]) == 0
    plain, target = root / "build" / "pdf" / "02-small.pdf", root / "build" / "pdf" / "02-small.notes.pdf"
    width, height = pdf.SLIDE_WIDTH_PX * 0.75, (pdf.SLIDE_HEIGHT_PX + pdf.NOTES_HEIGHT_PX) * 0.75
    assert media_boxes(target) == [(width, height)] * 3  # 960x810 pt: the slide, then its notes
    assert media_boxes(plain) == [(width, pdf.SLIDE_HEIGHT_PX * 0.75)] * 3  # beside it, the plain one (issue 16)
    assert not (root / "build" / "html").exists()
    assert "Say the second point slowly." in page_text(target, 2)


def test_missing_chromium_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No browser needed: the check runs before anything is built."""
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "02-small.md").write_text(SMALL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLIDEGEN_CHROMIUM", raising=False)
    monkeypatch.setattr(pdf, "CHROMIUM_NAMES", ())
    monkeypatch.setattr(pdf, "CHROMIUM_PATHS", ())
    assert main(["build", "--to", "html,pdf"]) == 2
    err = capsys.readouterr().err
    assert "apt-get install chromium" in err and "Traceback" not in err
    assert not (tmp_path / "build").exists()
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert main(["build", "--to", "pdf"]) == 2
    assert "SLIDEGEN_CHROMIUM" in capsys.readouterr().err


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_find_chromium_looks_at_the_variable_then_path_then_the_usual_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lookup the PDF writer and the browser tests share; no browser needed."""
    on_path = _executable(tmp_path / "bin" / "chromium-browser")
    usual = _executable(tmp_path / "usr" / "lib" / "chromium" / "chromium")
    configured = _executable(tmp_path / "mine" / "chrome")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(pdf, "CHROMIUM_PATHS", (tmp_path / "nothing-here", usual))
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(configured))
    assert pdf.find_chromium() == configured
    assert pdf.check_available() == configured
    monkeypatch.delenv("SLIDEGEN_CHROMIUM")
    assert pdf.find_chromium() == on_path
    on_path.unlink()
    assert pdf.find_chromium() == usual
    usual.chmod(0o644)  # not executable: not a browser
    assert pdf.find_chromium() is None
    with pytest.raises(pdf.ChromiumMissing, match="Chromium not found.*apt-get install chromium"):
        pdf.require_chromium()


def test_a_set_variable_that_is_no_browser_is_not_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _executable(tmp_path / "bin" / "chromium")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert pdf.find_chromium() is None  # the setting wins: no silent fall-back to another browser
    with pytest.raises(pdf.ChromiumMissing, match=r"SLIDEGEN_CHROMIUM=.*no-such-browser is not an executable file"):
        pdf.require_chromium()
