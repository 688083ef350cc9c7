"""Measure built decks as an audience sees them: type sizes as shown at 1280x720, figure labels, words.

:func:`measure_html` opens a deck's HTML in Chromium at 1280x720 (reveal.js' scale 1: one CSS px is 3/4 pt
of the 960 x 540 pt slide), shows every click of each slide, and reads the computed size of every visible
text: main text (paragraphs, lists, tables, code, components' controls and plots) and small text (footer,
captions, footnotes, the references slide); formulas and raised footnote marks are left out. A figure drawn
for its box (``img.drawn-figure``) is shown at ``smallest_pt`` of its drawn facts times the scale it is shown
at. :func:`measure_pptx` reads the same rules from the PPTX XML: every run's size, every drawn figure's placed
width against the width it was drawn. :func:`slide_words` is ``slidegen check``'s count.

Run as a script to print a table: ``python tests/readability.py build/html/*.html``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from slidegen import theme
from slidegen.check import words as check_words
from slidegen.media.figures import picture_facts

MAIN_PT = float(theme.MIN_MAIN_PT)
SMALL_PT = float(theme.MIN_SMALL_PT)
MAX_WORDS = check_words.MAX_WORDS
PT_PER_PX = 0.75

_SCRIPT = r"""
() => {
  const scale = (window.Reveal && Reveal.getScale) ? Reveal.getScale() : 1;
  const section = Reveal.getCurrentSlide();
  const out = {main: [], small: [], figures: []};
  const skip = '.katex, sup, sub, .footnote-ref, .slide-number, .click-step, .code-step, script, style, title';
  const small = '.slide-footer, .slide-footnotes, figcaption, .layout-references .slide-body, .frame-address';
  const walker = document.createTreeWalker(section, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    const el = node.parentElement;
    if (!text || !el || el.closest(skip)) continue;
    const rects = el.getClientRects();
    if (!rects.length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) continue;
    let px = parseFloat(style.fontSize) * scale;
    if (el instanceof SVGElement && el.getScreenCTM) {
      const m = el.getScreenCTM();
      px = parseFloat(style.fontSize) * Math.hypot(m.a, m.b);
    }
    const entry = {px: Math.round(px * 100) / 100, text: text.slice(0, 40),
                   where: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
                                                       ? '.' + el.className.split(' ')[0] : '')};
    (el.closest(small) ? out.small : out.main).push(entry);
  }
  for (const img of section.querySelectorAll('img.drawn-figure')) {
    const box = img.getBoundingClientRect();
    if (!box.width || !img.naturalWidth) continue;
    const shown = Math.min(1, box.width / img.naturalWidth, box.height / img.naturalHeight);
    out.figures.push({src: img.src, scale: shown * scale, width: box.width, height: box.height});
  }
  for (const img of section.querySelectorAll('.side-image img')) {
    if (!/@\d+x\d+/.test(decodeURIComponent(img.src))) continue;
    const box = img.getBoundingClientRect();
    const pad = 56;
    const shown = Math.min(1, (box.width - pad) / img.naturalWidth, (box.height - pad) / img.naturalHeight);
    out.figures.push({src: img.src, scale: shown * scale, width: box.width, height: box.height});
  }
  return out;
}
"""


@dataclass
class SlideSizes:
    """What one slide shows, as measured."""

    number: int
    main_pt: float | None = None
    """The smallest main text (points as shown); ``None``: no main text."""
    small_pt: float | None = None
    figure_pt: float | None = None
    """The smallest figure label as shown."""
    words: int = 0
    smallest: list[str] = field(default_factory=list)
    """Where the smallest main text is (for a failure message)."""

    def problems(self) -> list[str]:
        out = []
        if self.main_pt is not None and self.main_pt < MAIN_PT - 0.05:
            out.append(f"main text {self.main_pt:.1f} pt ({', '.join(self.smallest[:2])})")
        if self.small_pt is not None and self.small_pt < SMALL_PT - 0.05:
            out.append(f"small text {self.small_pt:.1f} pt")
        if self.figure_pt is not None and self.figure_pt < MAIN_PT - 0.05:
            out.append(f"figure labels {self.figure_pt:.1f} pt")
        if self.words > MAX_WORDS:
            out.append(f"{self.words} words")
        return out


def _file_of(url: str) -> Path:
    return Path(unquote(urlparse(url).path))


def measure_html(page: Any, html: Path) -> list[SlideSizes]:
    """Every slide of the deck at ``html``, with all its clicks shown (``page``: a 1280x720 Playwright page)."""
    page.goto(html.resolve().as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    page.evaluate("document.fonts.ready.then(() => true)")
    count = page.evaluate("Reveal.getTotalSlides()")
    out = []
    for index in range(count):
        page.evaluate(f"Reveal.slide({index}, 0); while (Reveal.nextFragment()) {{}}")
        page.wait_for_timeout(30)
        found = page.evaluate(_SCRIPT)
        sizes = SlideSizes(index + 1)
        main = sorted(found["main"], key=lambda e: e["px"])
        if main:
            sizes.main_pt = main[0]["px"] * PT_PER_PX
            sizes.smallest = [f"{e['where']} '{e['text']}'" for e in main if e["px"] == main[0]["px"]]
        if found["small"]:
            sizes.small_pt = min(e["px"] for e in found["small"]) * PT_PER_PX
        labels = []
        for figure in found["figures"]:
            facts = picture_facts(_file_of(figure["src"]))
            if facts and facts.get("smallest_pt"):
                labels.append(float(facts["smallest_pt"]) * float(figure["scale"]))
        sizes.figure_pt = min(labels) if labels else None
        out.append(sizes)
    return out


def measure_pptx(path: Path) -> list[SlideSizes]:
    """Every slide of a PPTX: its smallest run size by role (body, or footer/caption/notes-like small text) and
    its drawn figures' labels at the size they are placed."""
    import io

    from pptx import Presentation
    from pptx.util import Emu

    prs = Presentation(str(path))
    out = []
    for number, slide in enumerate(prs.slides, 1):
        sizes = SlideSizes(number)
        main: list[tuple[float, str]] = []
        small: list[float] = []
        labels: list[float] = []
        for shape in slide.shapes:
            role = _role(shape)
            for frame in _frames(shape):
                for para in frame.paragraphs:
                    for run in para.runs:
                        if not run.text.strip() or run.font.size is None:
                            continue
                        pt = run.font.size.pt
                        if role == "small":
                            small.append(pt)
                        elif role == "main":
                            main.append((pt, f"{shape.name} '{run.text.strip()[:30]}'"))
            if shape.shape_type == 13:  # a picture
                facts = _png_facts(io.BytesIO(shape.image.blob))
                if facts and facts.get("smallest_pt"):
                    placed_in = Emu(shape.width).inches
                    labels.append(float(facts["smallest_pt"]) * placed_in / float(facts["width_in"]))
        if main:
            least = min(pt for pt, _ in main)
            sizes.main_pt = least
            sizes.smallest = [where for pt, where in main if pt == least]
        sizes.small_pt = min(small) if small else None
        sizes.figure_pt = min(labels) if labels else None
        out.append(sizes)
    return out


def _role(shape: Any) -> str:
    """``small`` for footers, slide numbers, captions and footnotes; ``skip`` for equations; else ``main``."""
    name = shape.name.lower()
    if any(word in name for word in ("footer", "slide number", "caption", "footnote", "reference", "missing")):
        return "small"
    if "equation" in name or "math" in name:
        return "skip"
    return "main"


def _frames(shape: Any) -> list[Any]:
    if shape.has_text_frame:
        return [shape.text_frame]
    if getattr(shape, "has_table", False) and shape.has_table:
        return [cell.text_frame for row in shape.table.rows for cell in row.cells]
    if shape.shape_type == 6:  # a group
        return [f for inner in shape.shapes for f in _frames(inner)]
    return []


def _png_facts(stream: Any) -> dict[str, Any] | None:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".png") as f:
        f.write(stream.read())
        f.flush()
        return picture_facts(Path(f.name))


def slide_words(deck_path: Path) -> list[int]:
    """Words per shown slide of the deck as it is built (bound, its references slide in place), by
    ``slidegen check``'s count, in slide order."""
    from slidegen.pipeline.bound import bind_project
    from slidegen.project import Project
    from slidegen.read.frontmatter import visible

    project = Project(Path(deck_path).resolve().parents[1])
    deck = visible(bind_project(project, only=[deck_path]).deck(deck_path))
    return [
        0 if s.layout == "references" or check_words._mostly_code(s) else check_words.slide_words(s)
        for s in deck.slides
    ]


def report(rows: dict[str, list[SlideSizes]]) -> str:
    """One line per deck: the slides under each rule."""
    lines = []
    for name, slides in rows.items():

        def under(test: Any, slides: list[SlideSizes] = slides) -> list[int]:
            return [s.number for s in slides if test(s)]

        lines.append(
            json.dumps(
                {
                    "deck": name,
                    "slides": len(slides),
                    "main<18": under(lambda s: s.main_pt is not None and s.main_pt < MAIN_PT - 0.05),
                    "figure<18": under(lambda s: s.figure_pt is not None and s.figure_pt < MAIN_PT - 0.05),
                    "small<12": under(lambda s: s.small_pt is not None and s.small_pt < SMALL_PT - 0.05),
                    ">50 words": under(lambda s: s.words > MAX_WORDS),
                }
            )
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``readability.py [--pptx] FILE...``: print the measurements of built decks."""
    from playwright.sync_api import sync_playwright

    from slidegen.write.pdf import CHROMIUM_ARGS, find_chromium

    root = Path(__file__).resolve().parents[1]
    rows: dict[str, list[SlideSizes]] = {}
    files = [Path(a) for a in argv if not a.startswith("-")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(find_chromium()), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for file in files:
            slides = measure_pptx(file) if file.suffix == ".pptx" else measure_html(page, file)
            words = (
                slide_words(root / "decks" / f"{file.stem}.md")
                if (root / "decks" / f"{file.stem}.md").is_file()
                else []
            )
            for sizes, count in zip(slides, words, strict=False):
                sizes.words = count
            rows[f"{file.name}"] = slides
            for s in slides:
                if s.problems() and "-v" in argv:
                    print(f"  {file.name} slide {s.number}: {'; '.join(s.problems())}")
        browser.close()
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
