"""`slidegen build --to png`: one picture per slide, in its final state, at the asked scale."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import needs
import pytest
from PIL import Image

from slidegen.cli.main import main
from slidegen.write import png

DECK = """\
---
title: Pictures
---

# Pictures

---

# A click

<v-click>

<div style="position: absolute; left: 200px; top: 250px; width: 400px; height: 200px; background: #000"></div>

</v-click>
"""


def run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs.chromium()
    root = tmp_path_factory.mktemp("png")
    (root / "decks").mkdir()
    (root / "decks" / "01-pics.md").write_text(DECK, encoding="utf-8")
    return root


def test_each_slide_is_one_picture_in_its_final_state(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(project)
    stale = project / "build" / "png" / "01-pics" / "09.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left from an older build")
    code, err = run(["build", "--to", "png", "--scale", "1"])
    assert code == 0, err
    folder = project / "build" / "png" / "01-pics"
    assert sorted(p.name for p in folder.iterdir()) == ["01.png", "02.png"]  # the old set is replaced whole
    assert not (project / "build" / "html").exists()  # HTML was only a means
    with Image.open(folder / "02.png") as picture:
        assert picture.size == (1280, 720)
        rgb = picture.convert("RGB")
        box = rgb.getpixel((400, 350))  # inside the box the click reveals, wherever the body starts
        assert isinstance(box, tuple) and max(box) < 40
        assert rgb.getpixel((1200, 150)) == (255, 255, 255)  # no controls or progress bar drawn


def test_the_default_scale_gives_1920_by_1080(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(project)
    code, err = run(["build", "--to", "png"])
    assert code == 0, err
    with Image.open(project / "build" / "png" / "01-pics" / "01.png") as picture:
        assert picture.size == (1920, 1080)


def test_a_scale_out_of_range_is_a_usage_error(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(project)
    code, err = run(["build", "--to", "png", "--scale", "40"])
    assert code == 2 and "--scale 40 is out of range: give a number from 0.25 to 4" in err


def test_names_sort_in_slide_order():
    assert png.file_names(3) == ["01.png", "02.png", "03.png"]
    assert png.file_names(120)[:2] == ["001.png", "002.png"] and png.file_names(120)[-1] == "120.png"
