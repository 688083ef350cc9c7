"""Raw ``<img src>`` as media, pictures of HTML regions in PowerPoint, ``--single-file``.

The fixture is tests/fixtures/slidev/c.md (with img/swatch.png). The browser tests build it as a
project in a temporary folder, through the CLI, with Debian's Chromium.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import needs
import pytest
from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

from slidegen.cli.main import main
from slidegen.deck import htmlkinds, rawimages
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.media import images as media
from slidegen.read.parse import parse_deck, parse_text
from slidegen.write import html, htmlpictures, singlefile, snapshot
from slidegen.write.pdf import CHROMIUM_ARGS, ChromiumMissing
from slidegen.write.pptx import write_deck

FIXTURE = Path(__file__).parent / "fixtures" / "slidev" / "c.md"
GRID_LINE, IFRAME_LINE, LAYOUT_URL_LINE, COLUMN_LINE = 27, 45, 51, 70
BLUE, ORANGE = (0x00, 0x72, 0xB2), (0xD5, 0x5E, 0x00)


def run(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        code = main(args)
    return code, err.getvalue()


def copy_project(root: Path) -> Path:
    """A project holding only the fixture deck and its picture."""
    (root / "decks").mkdir(parents=True)
    shutil.copy(FIXTURE, root / "decks" / "c.md")
    shutil.copytree(FIXTURE.parent / "img", root / "decks" / "img")
    return root


@pytest.fixture(scope="module")
def deck() -> d.Deck:
    return parse_deck(FIXTURE)


# --------------------------------------------------------------------------- parsed deck and media


def test_raw_img_tags_are_pictures_of_the_deck_at_their_lines(deck: d.Deck):
    assert sorted(media.image_refs(deck)) == [("img/swatch.png", 15), ("img/swatch.png", 17), ("img/swatch.png", 19)]
    found = media.resolve_media(deck, root=FIXTURE.parent)
    assert found.html["img/swatch.png"] == (FIXTURE.parent / "img" / "swatch.png").resolve()


def test_raw_img_src_is_refused_outside_the_project_and_when_its_bytes_lie(tmp_path: Path):
    (tmp_path / "decks").mkdir()
    (tmp_path / "outside.png").write_bytes(Image.new("RGB", (2, 2)).tobytes())
    (tmp_path / "decks" / "fake.png").write_bytes(b"not a picture")
    text = '# A\n\nText\n\n<img src="../outside.png" alt="x">\n'
    bad = parse_text(text, tmp_path / "decks" / "a.md")
    with pytest.raises(SlidegenError) as outside:
        media.resolve_media(bad, root=tmp_path / "decks")
    assert outside.value.diagnostic.line == 5 and "outside the project" in outside.value.diagnostic.message
    lying = parse_text('# A\n\nSee <img src="fake.png"> here\n', tmp_path / "decks" / "b.md")
    problems = media.picture_problems(lying, tmp_path)
    assert [(p.line, "does not hold a PNG picture" in p.message) for p in problems] == [(3, True)]
    remote = parse_text('# A\n\n<img src="https://example.org/x.png">\n', tmp_path / "decks" / "c.md")
    assert "is remote" in media.picture_problems(remote, tmp_path)[0].message


def test_rewrite_points_img_tags_at_media_and_keeps_the_rest():
    urls = {"img/a b.png": "media/a-b-123.png"}
    text = '<img alt="A" src="img/a b.png" width=40><img src=\'data:image/png;base64,AA\'><img src=other.png>'
    assert rawimages.rewrite(text, urls) == (
        '<img alt="A" src="media/a-b-123.png" width=40><img src=\'data:image/png;base64,AA\'><img src=other.png>'
    )
    assert list(rawimages.img_srcs(text)) == [("img/a b.png", 0), ("other.png", 0)]
    assert rawimages.only_images(' <img src="x.png" alt="X">\n<img src="y.png"> ') == [("x.png", "X"), ("y.png", "")]
    assert rawimages.only_images('<img src="x.png"> and text') == []


def test_the_blocks_powerpoint_cannot_draw_are_picture_jobs(deck: d.Deck):
    jobs = htmlpictures.deck_jobs(deck, FIXTURE.parent)
    assert [(job.kind, job.line) for job in jobs] == [("html", GRID_LINE), ("html", IFRAME_LINE), ("html", COLUMN_LINE)]
    grid, frame, column = jobs
    assert f"#stage {{ width: {snapshot.BODY_WIDTH_PX}px;" in grid.body
    assert f"#stage {{ width: {(snapshot.BODY_WIDTH_PX - 56) // 2}px;" in column.body  # one column of two-cols
    assert "data:image" not in grid.body and ".reveal .slide-style-3 {" in grid.body  # the slide's own style
    assert "default-src 'none'" in grid.body  # no script, no load
    assert "<iframe" not in frame.body and "https://example.org/demo" in frame.body and "width: 640px" in frame.body
    blocks = [b for b in d.walk_blocks(d.slide_blocks(deck.slides[2])) if isinstance(b, d.RawHtml)]
    assert [type(b) for b in blocks] == [d.HtmlRegion, d.RawHtml]  # the grid; not the <style>
    assert htmlpictures.alt_text(blocks[0]) == "Two boxes side by side"
    assert isinstance(blocks[0], d.HtmlRegion) and jobs[0].key == blocks[0].picture_key


def test_a_picture_inside_an_html_block_is_inlined_in_its_page(tmp_path: Path):
    root = copy_project(tmp_path / "p")
    text = '# A\n\n<div class="row">\n<img src="img/swatch.png" alt="s"> <b>x</b>\n</div>\n'
    one = parse_text(text, root / "decks" / "one.md")
    (job,) = htmlpictures.deck_jobs(one, root)
    assert 'src="data:image/png;base64,' in job.body and "img/swatch.png" not in job.body


def test_check_warns_that_raw_iframes_need_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(copy_project(tmp_path / "p"))
    code, err = run(["check"])
    assert code == 0, err
    assert (
        f"decks/c.md:{IFRAME_LINE}:1: warning: <iframe> shows the web page https://example.org/demo, which needs "
        "the network; PowerPoint shows its address"
    ) in err
    assert f"decks/c.md:{LAYOUT_URL_LINE}:1: warning: iframe-right slide shows the web page" in err


def test_single_file_needs_html_in_the_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(copy_project(tmp_path / "p"))
    code, err = run(["build", "--to", "pptx", "--single-file"])
    assert code == 2 and "--single-file" in err and "add html to --to" in err


# --------------------------------------------------------------------------- HTML


def test_html_shows_raw_pictures_from_media(deck: d.Deck, tmp_path: Path):
    found = media.resolve_media(deck, root=FIXTURE.parent)
    page = html.write_deck(deck, tmp_path, found.html).read_text(encoding="utf-8")
    (copied,) = (tmp_path / "media").iterdir()
    assert page.count(f'src="media/{copied.name}"') == 3 and "img/swatch.png" not in page
    assert f'<img src="media/{copied.name}" alt="Three coloured bars" width="240">' in page


def test_markdown_exports_point_raw_pictures_at_their_copies(deck: d.Deck):
    from slidegen.write import markdown as markdown_out

    text = markdown_out.writer(deck, {"img/swatch.png": "media/swatch-1.png"}, "md", d.DeckIndex()).deck_text()
    assert '<img src="media/swatch-1.png" alt="Three coloured bars" width="240">' in text
    assert "img/swatch.png" not in text


# --------------------------------------------------------------------------- PowerPoint without Chromium


def _pictures(slide) -> list:
    return [sh for sh in slide.shapes if sh.shape_type == MSO_SHAPE_TYPE.PICTURE]


def test_pptx_without_pictures_leaves_the_blocks_out_with_warnings(deck: d.Deck, tmp_path: Path):
    found = media.resolve_media(deck, root=FIXTURE.parent)
    target = tmp_path / "c.pptx"
    warnings = write_deck(deck, target, found.pptx)
    left_out = [
        (w.line, w.message.split("'")[1])
        for w in warnings
        if "is left out of PowerPoint" in w.message and w.message.startswith("HTML block")
    ]
    assert left_out == [
        (GRID_LINE, '<div class="swatches" title="Two boxes side by side">'[:40] + "..."),
        (IFRAME_LINE, '<iframe src="https://example.org/demo" w...'),
        (COLUMN_LINE, '<div style="display: grid; grid-template...'),
    ]
    prs = Presentation(str(target))
    assert len(_pictures(prs.slides[1])) == 2  # the raw <img> block and the Markdown picture
    assert [sh.name for sh in _pictures(prs.slides[2])] == []


def test_build_without_chromium_warns_and_leaves_the_blocks_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def no_browser():
        raise ChromiumMissing("no Chromium here")

    monkeypatch.setattr(snapshot, "check_available", no_browser)
    monkeypatch.chdir(copy_project(tmp_path / "p"))
    code, err = run(["build", "--to", "pptx"])
    assert code == 0, err
    assert f'decks/c.md:{GRID_LINE}:1: warning: HTML block \'<div class="swatches"' in err
    assert f"decks/c.md:{IFRAME_LINE}:1: warning: HTML block '<iframe" in err


# --------------------------------------------------------------------------- with Chromium


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    needs.chromium()
    root = copy_project(tmp_path_factory.mktemp("c"))
    here = Path.cwd()
    import os

    os.chdir(root)
    try:
        before = snapshot.launches
        code, err = run(["build", "--to", "html,pptx,pdf", "--single-file"])
        assert code == 0, err
        assert snapshot.launches == before + 1  # one Chromium for every picture
        code, again = run(["build", "--to", "pptx"])
        assert code == 0 and snapshot.launches == before + 1, again  # cached: no browser at all
    finally:
        os.chdir(here)
    return root, err


def _colours(path: Path) -> set[tuple[int, int, int]]:
    with Image.open(path) as img:
        data = img.convert("RGB").tobytes()
    return {(data[i], data[i + 1], data[i + 2]) for i in range(0, len(data), 3)}


@pytest.mark.slow
def test_pptx_shows_a_picture_of_each_region(built: tuple[Path, str], tmp_path: Path):
    root, err = built
    assert f"decks/c.md:{IFRAME_LINE}:1: warning: <iframe> shows the web page https://example.org/demo" in err
    assert "HTML block" not in err  # nothing left out
    prs = Presentation(str(root / "build" / "pptx" / "c.pptx"))
    (grid,) = _pictures(prs.slides[2])
    (frame,) = _pictures(prs.slides[3])
    (column,) = _pictures(prs.slides[5])
    alts = [sh._element.nvPicPr.cNvPr.get("descr") for sh in (grid, frame, column)]
    assert alts == ["Two boxes side by side", "A demo page", "A grid in the right column"]
    assert column.left > prs.slide_width // 2  # in the right column
    shot = tmp_path / "grid.png"
    shot.write_bytes(grid.image.blob)
    colours = _colours(shot)
    assert BLUE in colours and ORANGE in colours  # the slide's <style> applied to its own block
    with Image.open(shot) as img:
        assert img.width > 2 * img.height  # the grid spans the body's width, as on the slide
    assert not any("<" in sh.text_frame.text for s in prs.slides for sh in s.shapes if sh.has_text_frame)


def test_the_pdf_shows_the_iframe_layouts_address(built: tuple[Path, str]):
    import subprocess

    root, _err = built
    text = subprocess.run(
        [needs.tool("pdftotext", "poppler-utils"), "-f", "5", "-l", "5", str(root / "build" / "pdf" / "c.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "https://example.com/page" in text.stdout


def test_single_file_opens_alone_offline_with_the_speaker_view(built: tuple[Path, str], tmp_path: Path):
    root, _err = built
    page = root / "build" / "html" / "c.html"
    text = page.read_text(encoding="utf-8")
    for folder in ("assets/", "media/"):
        assert f'="{folder}' not in text and f"url({folder}" not in text
    alone = tmp_path / "elsewhere" / "c.html"
    alone.parent.mkdir()
    shutil.copy(page, alone)  # nothing beside it
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    web: list[str] = []

    def watch(target) -> None:
        def console(message) -> None:
            if message.type == "error":
                problems.append(f"console: {message.text}")

        target.on("console", console)
        target.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(needs.chromium()), args=list(CHROMIUM_ARGS), headless=True)
        try:
            context = chromium.new_context(viewport={"width": 1280, "height": 720})
            needs.cut_off(context, web)
            view = context.new_page()
            watch(view)
            view.goto(alone.as_uri())
            view.wait_for_function("window.Reveal && Reveal.isReady()")
            view.evaluate("document.fonts.ready.then(() => true)")
            assert view.evaluate("document.querySelectorAll('.katex .katex-html').length") == 1
            assert view.evaluate("document.fonts.check('1em KaTeX_Main')") is True
            assert (
                view.evaluate(
                    "Array.from(document.fonts).some(f => f.family.includes('KaTeX') && f.status === 'loaded')"
                )
                is True
            )
            view.evaluate("Reveal.slide(1)")
            sizes = view.evaluate(
                "Array.from(document.querySelectorAll('section')[1].querySelectorAll('img'))"
                ".map(i => [i.complete, i.naturalWidth])"
            )
            assert sizes == [[True, 240], [True, 240], [True, 240]]
            view.evaluate("Reveal.slide(4)")
            assert view.locator("section.present .frame-address").inner_text() == "https://example.com/page"
            view.evaluate("Reveal.slide(0)")
            with view.expect_popup() as opened:
                view.keyboard.press("s")
            speaker = opened.value
            watch(speaker)
            speaker.wait_for_function(
                "() => { const n = document.querySelector('.speaker-controls-notes');"
                " return n && n.textContent.includes('single-file page too'); }",
                timeout=20_000,
            )
            current = next(f for f in speaker.frames if "receiver" in f.url)  # this same file, reloaded
            assert current.url.startswith(alone.as_uri())
            current.wait_for_function("window.Reveal && Reveal.isReady()", timeout=20_000)
            assert current.evaluate("document.querySelectorAll('.katex .katex-html').length") == 1
        finally:
            chromium.close()
    assert problems == []
    assert sorted(set(web)) == ["https://example.com/page", "https://example.org/demo"]  # the iframes alone


def test_inlining_keeps_links_and_web_addresses(tmp_path: Path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.css").write_text("b { background: url(x.png) } i { background: url(#g) }")
    (tmp_path / "assets" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "p.html").write_text(
        '<link rel="stylesheet" href="assets/a.css"><a href="02-next.html#/x">next</a>'
        '<img src="https://example.org/y.png"><div style=\'background: url("assets/x.png")\'></div>'
        '<script src="assets/missing.js"></script>',
        encoding="utf-8",
    )
    whole = singlefile.inline_page(tmp_path / "p.html")
    assert '<a href="02-next.html#/x">' in whole.html and 'src="https://example.org/y.png"' in whole.html
    assert "style='background: url(data:image/png;base64,iVBORw0KGgo=)'" in whole.html
    assert 'href="data:text/css;base64,' in whole.html
    assert whole.missing == ["assets/missing.js"]


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ('<img src="../../outside.png" alt="x">', "outside the project"),
        ('Text <img src="img/x.png"> text', "does not hold a PNG picture"),
        ('<div>\n<img src="img/none.png">\n</div>', "not found"),
    ],
)
def test_check_reports_a_bad_raw_picture_where_build_stops(
    body: str, phrase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root = tmp_path / "proj"
    (root / "decks" / "img").mkdir(parents=True)
    (tmp_path / "outside.png").write_bytes((FIXTURE.parent / "img" / "swatch.png").read_bytes())
    (root / "decks" / "img" / "x.png").write_bytes(b"not a picture")
    (root / "decks" / "01-x.md").write_text(f"# Fine\n\n---\n\n# Bad\n\n{body}\n", encoding="utf-8")
    monkeypatch.chdir(root)
    code, checked = run(["check"])
    assert code == 1
    code, built = run(["build", "--to", "html"])
    assert code == 1
    errors = [line for line in built.splitlines() if ": error: " in line]
    line = 7 + body.count("\n", 0, body.index("<img"))
    assert len(errors) == 1 and errors[0].startswith(f"decks/01-x.md:{line}:1: error: ") and phrase in errors[0]
    assert errors[0] in checked


@pytest.mark.parametrize(
    ("html_block", "pictured"),
    [
        ("<br>", False),
        ("<script>alert(1)</script>", False),
        ("<!-- a -->\n<wbr>", False),
        ('<img src="x.png">', False),
        ("<div>", False),
        ("</div>", False),
        ("<style>p {}</style>", False),
        ("<hr>", True),
        ('<div class="a">x</div>', True),
        ("<iframe src=x></iframe>", True),
        ("<table><tr><td>1</td></tr></table>", True),
    ],
)
def test_which_blocks_are_pictures(html_block: str, pictured: bool, tmp_path: Path):
    """The reader decides: an HTML block PowerPoint shows as a picture is an HtmlRegion, any other a RawHtml."""
    assert htmlkinds.needs_picture(html_block) is pictured
    deck = parse_text(f"# T\n\n{html_block}\n\nafter\n", tmp_path / "d.md")
    raw = [b for b in deck.slides[0].blocks if isinstance(b, d.RawHtml)]
    assert [isinstance(b, d.HtmlRegion) for b in raw] == ([pictured] if raw else [])
