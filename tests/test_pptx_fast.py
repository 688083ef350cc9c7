"""The fast paths of the PowerPoint writer: one-pass XML, our package writer, the equation cache."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pptx_sample_deck as helper
import pytest
from pptx import Presentation

from slidegen.deck import nodes as d
from slidegen.write.pptx import cache, image_sizes, layout, render, write_deck
from slidegen.write.pptx.cache import MathCache


def test_save_writes_the_items_python_pptx_writes(tmp_path):
    deck, media = helper.every_feature_deck(tmp_path)
    cited = (d.Source("ch01.k", 1, 1, 1.0, source='a & <b> "c"'),)  # the notes footer is escaped too
    deck = replace(deck, slides=tuple(replace(s, sources=cited) if s.index == 2 else s for s in deck.slides))
    model, _ = layout.build(deck, image_sizes(media))
    prs = render.render(model, media)
    ours = zipfile.ZipFile(io.BytesIO(render.save(prs)))
    theirs_file = io.BytesIO()
    prs.save(theirs_file)
    theirs = zipfile.ZipFile(theirs_file)
    assert ours.namelist() == theirs.namelist()
    for name in theirs.namelist():
        assert ours.read(name) == theirs.read(name), name


def test_text_is_escaped_and_control_characters_kept_readable(tmp_path):
    text = 'a < b & c > "d" \x07 ok'
    slide = d.Slide(
        1, 1, "default", {}, "T & <t>", "", (d.Paragraph((d.Text(text),), 2),), notes="n & <m>", title_heading=None
    )
    out = tmp_path / "x.pptx"
    write_deck(d.Deck(Path("decks/x.md"), "x & y", {}, (slide,)), out, {})
    shown = Presentation(str(out)).slides[0]
    assert shown.shapes.title.text == "T & <t>"
    texts = [s.text_frame.text for s in shown.shapes if s.has_text_frame]
    assert 'a < b & c > "d" _x0007_ ok' in texts
    assert shown.notes_slide.notes_text_frame.text == "n & <m>"


def test_math_cache_keeps_files_by_content(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_memory", {})
    folder = tmp_path / "math"
    math = MathCache(folder)
    omml, png = math.omml(r"\frac{a}{b}"), math.png(r"\frac{a}{b}", 32.0, "#1f2933")
    assert omml.startswith("<m:oMath") and png.startswith(b"\x89PNG")
    assert sorted(p.suffix for p in folder.iterdir()) == [".png", ".xml"]
    math.png(r"\frac{a}{b}", 20.0, "#1f2933")  # another size is another picture
    assert len(list(folder.glob("*.png"))) == 2

    cache._memory.clear()
    for file in folder.glob("*.png"):
        file.write_bytes(b"not a png")  # a damaged file is drawn again
    again = MathCache(folder)
    assert again.omml(r"\frac{a}{b}") == omml and again.png(r"\frac{a}{b}", 32.0, "#1f2933") == png
    # results found in memory still land in a new folder
    other = MathCache(tmp_path / "other")
    other.omml(r"\frac{a}{b}")
    assert len(list((tmp_path / "other").glob("*.xml"))) == 1


def test_bad_latex_is_not_cached(tmp_path):
    with pytest.raises(ValueError):
        MathCache(tmp_path / "math").omml(r"\frac{1}{")
    assert not (tmp_path / "math").exists()


def test_a_warm_build_imports_neither_matplotlib_nor_latex2mathml(tmp_path):
    deck, media = helper.every_feature_deck(tmp_path)
    folder = tmp_path / "math"
    write_deck(deck, tmp_path / "cold.pptx", media, cache_dir=folder)
    helper_path = str(Path(__file__).with_name("pptx_sample_deck.py"))
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('pptx_sample_deck', {helper_path!r})\n"
        "helper = importlib.util.module_from_spec(spec); spec.loader.exec_module(helper)\n"
        "from pathlib import Path\n"
        "from slidegen.write.pptx import write_deck\n"
        f"tmp = Path({str(tmp_path)!r})\n"
        "deck, media = helper.every_feature_deck(tmp)\n"
        "write_deck(deck, tmp / 'warm.pptx', media, cache_dir=tmp / 'math')\n"
        "print(sorted(m for m in ('matplotlib', 'latex2mathml', 'mathml_to_omml', 'numpy') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "[]", done.stderr
    cold, warm = (Presentation(str(tmp_path / f"{n}.pptx")) for n in ("cold", "warm"))
    assert [s.shapes._spTree.xml.count("<m:oMath>") for s in cold.slides] == [
        s.shapes._spTree.xml.count("<m:oMath>") for s in warm.slides
    ]
