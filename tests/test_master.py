"""One master: each layout looks the same in HTML (Chromium) and in PPTX (LibreOffice), within a tolerance.

A deck with a cover, section, default, two-cols and end slide is written both ways. Each HTML slide is shot in
Chromium at 1280x720; the PPTX goes through LibreOffice and pdftoppm at the same size. On both pictures the
test finds the master's marks: the cover's accent bar at the left edge, the rule under the title (accent on
light slides, white on dark ones), the title's text box (the ink above the rule) and the rule over the footer;
each must be in both and at the same place within :data:`TOLERANCE` of the slide's width or height.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import needs
import pytest

from slidegen import theme
from slidegen.read.parse import parse_deck
from slidegen.write import html
from slidegen.write.pptx import write_deck

pytestmark = [pytest.mark.browser, pytest.mark.office, pytest.mark.slow]

W, H = theme.WIDTH_PX, theme.HEIGHT_PX
#: How far a mark may sit from its place in the other output, as a share of the slide's width (x) or height (y).
TOLERANCE = 0.03

DECK = """---
title: Master
chapter: 9
---

# The one master

A subtitle under the title.

<!-- cover -->

---
layout: section
---

# A part of the talk

What the part is about.

<!-- section -->

---

# A content slide

- One point
- Another point

<!-- default -->

---
layout: two-cols
---

# Two columns

- Left

::right::

- Right

<!-- two-cols -->

---
layout: end
---

# Thank you

Questions.

<!-- end -->
"""
LAYOUTS = ("cover", "section", "default", "two-cols", "end")


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _near(a: tuple[int, ...], b: tuple[int, int, int], tol: int) -> bool:
    return all(abs(int(x) - y) <= tol for x, y in zip(a, b, strict=False))


def marks(path: Path, dark: bool) -> dict[str, tuple[int, int, int, int]]:
    """The master's marks on one slide picture: name -> (x0, y0, x1, y1) in px of the 1280x720 slide."""
    from PIL import Image

    image = Image.open(path).convert("RGB").resize((W, H))
    px = image.load()
    rule_colour = _hex(theme.TEXT_ON_DARK if dark else theme.ACCENT)
    found: dict[str, tuple[int, int, int, int]] = {}
    accent = _hex(theme.ACCENT)
    bar = [x for x in range(0, 40) if sum(_near(px[x, y], accent, 40) for y in range(0, H, 8)) > H / 8 * 0.9]
    if bar:
        found["accent bar"] = (min(bar), 0, max(bar), H)
    # the title rule: a row whose rule-coloured pixels are one run 40-140 px long, a few rows tall
    rows = []
    for y in range(40, H - 80):
        xs = [x for x in range(45, W - 40) if _near(px[x, y], rule_colour, 40)]
        if 40 <= len(xs) <= 140 and xs[-1] - xs[0] + 1 == len(xs):
            rows.append((y, xs[0], xs[-1]))
    if rows:
        first = rows[0]
        band = [r for r in rows if r[0] - first[0] < 10 and abs(r[1] - first[1]) <= 2]
        found["title rule"] = (first[1], first[0], first[2], band[-1][0])
        top = first[0]
        ink = [
            (x, y)
            for y in range(10, top - 2)
            for x in range(45, W - 40, 2)
            if (sum(px[x, y]) > 600 if dark else sum(px[x, y]) < 300)
        ]
        if ink:
            found["title"] = (
                min(x for x, _ in ink),
                min(y for _, y in ink),
                max(x for x, _ in ink),
                max(y for _, y in ink),
            )
    line = (0x57, 0x5E, 0x66) if dark else _hex(theme.TABLE_HEADER_BACKGROUND)
    for y in range(640, 690):
        xs = [x for x in range(0, W, 2) if _near(px[x, y], line, 14)]
        if len(xs) > 400:
            found["footer rule"] = (min(xs), y, max(xs), y)
            break
    return found


@pytest.fixture(scope="module")
def pictures(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Each layout's slide as Chromium shows the HTML and LibreOffice the PPTX: layout -> (html png, pptx png)."""
    chromium = needs.chromium()
    soffice = needs.tool("soffice", "libreoffice-impress")
    pdftoppm = needs.tool("pdftoppm", "poppler-utils")
    tmp = tmp_path_factory.mktemp("master")
    (tmp / "decks").mkdir()
    source = tmp / "decks" / "09-master.md"
    source.write_text(DECK, encoding="utf-8")
    deck = parse_deck(source)
    out = tmp / "html"
    html.copy_assets(out)
    page_file = html.write_deck(deck, out, {})
    pptx = tmp / "master.pptx"
    write_deck(deck, pptx, {})
    subprocess.run(
        [
            soffice,
            f"-env:UserInstallation=file://{tmp / 'profile'}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp),
            str(pptx),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )
    subprocess.run(
        [pdftoppm, "-png", "-scale-to-x", str(W), "-scale-to-y", str(H), str(tmp / "master.pdf"), str(tmp / "office")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    from playwright.sync_api import sync_playwright

    from slidegen.write.pdf import CHROMIUM_ARGS

    shots = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": W, "height": H})
        page.goto(page_file.resolve().as_uri() + "?transition=none")
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        page.evaluate("document.fonts.ready.then(() => true)")
        page.add_style_tag(content=".reveal .controls, .reveal .progress { display: none !important; }")
        for index, name in enumerate(LAYOUTS):
            page.evaluate(f"Reveal.configure({{transition: 'none'}}); Reveal.slide({index}, 0)")
            page.wait_for_timeout(300)
            shot = tmp / f"html-{index + 1}.png"
            page.screenshot(path=str(shot))
            office = sorted(tmp.glob("office-*.png"))[index]
            shots[name] = (shot, office)
        browser.close()
    return shots


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layout_looks_the_same_in_html_and_pptx(pictures, layout: str) -> None:
    dark = layout in ("section", "end")
    in_html, in_pptx = (marks(path, dark) for path in pictures[layout])
    expected = {"title rule", "title", "footer rule"} | ({"accent bar"} if layout == "cover" else set())
    assert expected <= set(in_html), f"HTML {layout}: found only {sorted(in_html)}"
    assert set(in_html) == set(in_pptx), f"{layout}: HTML has {sorted(in_html)}, PPTX {sorted(in_pptx)}"
    far = []
    for name, (hx0, hy0, hx1, hy1) in in_html.items():
        px0, py0, px1, py1 = in_pptx[name]
        dx = max(abs(hx0 - px0), abs(hx1 - px1) if name != "title" else 0) / W
        dy = max(abs(hy0 - py0), abs(hy1 - py1)) / H
        if dx > TOLERANCE or dy > TOLERANCE:
            far.append(f"{name}: HTML {in_html[name]}, PPTX {in_pptx[name]} ({dx:.1%} across, {dy:.1%} down)")
    assert not far, f"{layout} differs between HTML and PPTX:\n" + "\n".join(far)


def test_marks_finds_what_is_there_and_not_what_is_not(pictures) -> None:
    """The measure can fail: the default slide has no accent bar, the cover has one."""
    assert "accent bar" in marks(pictures["cover"][0], dark=False)
    assert "accent bar" not in marks(pictures["default"][0], dark=False)
    assert "accent bar" not in marks(pictures["default"][1], dark=False)
