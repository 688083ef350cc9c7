"""The PowerPoint writer: the pure layout model first, then the file python-pptx reads back."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pptx_sample_deck as helper
import pytest
from pptx import Presentation
from pptx.enum.shapes import PP_PLACEHOLDER

from slidegen import theme
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.write.pptx import layout, omml, texmath, write_deck
from slidegen.write.pptx.model import Equation, Picture, Table, TextBox

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
FIXTURE = Path(__file__).parent / "fixtures" / "decks" / "sample.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The hand-built deck, its model and warnings, and the written file reopened."""
    tmp = tmp_path_factory.mktemp("pptx")
    deck, media = helper.every_feature_deck(tmp)
    model, warnings = layout.build(deck, {src: (320, 200) if src.startswith("fig") else (800, 200) for src in media})
    out = tmp / "out" / "01-training.pptx"
    cited = (
        d.Source("ch01.init", 9, 5, 4.17, 0.01, 3, "run ch01.default 9f3c2a1e"),
        d.Source("ch01.init", 10, 5, 4.17, 0.01, 3, "run ch01.default 9f3c2a1e"),
    )
    slides = tuple(replace(s, sources=cited) if s.index == 2 else s for s in deck.slides)
    written = write_deck(replace(deck, slides=slides), out, media)
    return deck, model, warnings, out, written


def _text(shape) -> str:
    return "\n".join(p.text for p in shape.paras) if isinstance(shape, TextBox) else ""


def _body(slide_model) -> list:
    return [s for s in slide_model.shapes if not (isinstance(s, TextBox) and s.name in ("Footer", "Slide number"))]


# --------------------------------------------------------------------------- the pure model


def test_every_deck_layout_has_a_kind():
    assert set(layout.KINDS) == set(d.LAYOUTS)


def test_model_picks_template_layouts_and_backgrounds(built):
    _, model, _, _, _ = built
    by_layout = {s.layout: s for s in model.slides}
    assert by_layout["cover"].template_layout == "Title Slide"
    assert by_layout["default"].template_layout == "Title Only"
    assert by_layout["quote"].template_layout == "Blank"  # no title at all
    for name in ("section", "fact", "statement", "end"):
        assert by_layout[name].background == theme.ACCENT_DARK_BG
        assert by_layout[name].title.paras[0].color == theme.TEXT_ON_DARK
    assert by_layout["default"].background is None
    assert (model.width, model.height) == (12192000, 6858000)


def test_every_shape_lies_on_the_slide(built):
    _, model, _, _, _ = built
    for slide in model.slides:
        for shape in slide.shapes:
            box = shape.box
            assert box.x >= 0 and box.right <= model.width, (slide.index, shape)
            assert box.y >= 0 and box.bottom <= model.height, (slide.index, shape)


def test_titles_go_to_the_placeholder_and_leave_the_body(built):
    _, model, _, _, _ = built
    slide = model.slides[1]
    assert slide.title.placeholder == "title" and slide.title.paras[0].text == "What we measure"
    assert slide.title.paras[0].size == layout.Pt(theme.TITLE_PT)
    assert not any("What we measure" in _text(s) for s in _body(slide) if s is not slide.title)
    # the cover's title stands flush left beside its accent bar, as in HTML (one master)
    cover = model.slides[0].title
    assert cover.box.x == layout.WIDE_MARGIN and cover.paras[0].align == "left"
    assert any(s.name == "Accent bar" and s.fill == theme.ACCENT for s in model.slides[0].shapes)


def test_cover_has_subtitle_and_author(built):
    _, model, _, _, _ = built
    subtitle = [s for s in model.slides[0].shapes if isinstance(s, TextBox) and s.placeholder == "subtitle"]
    assert [p.text for p in subtitle[0].paras] == ["From ln 64 to 2.3 nats", "A. Author"]


def test_lists_have_levels_bullets_and_numbers(built):
    _, model, _, _, _ = built
    paras = [p for s in _body(model.slides[1]) if isinstance(s, TextBox) and not s.placeholder for p in s.paras]
    marks = [(p.bullet, p.level, p.start) for p in paras]
    assert marks[0] == (None, 0, 1)
    assert ("bullet", 0, 1) in marks and ("bullet", 1, 1) in marks
    assert [m for m in marks if m[0] == "number"] == [("number", 0, 1), ("number", 0, 2), ("number", 0, 3)]


def test_runs_carry_styles_math_refs_and_links(built):
    _, model, _, _, _ = built
    runs = {r.text: r for s in _body(model.slides[1]) if isinstance(s, TextBox) for p in s.paras for r in p.runs}
    assert runs["emphasis"].italic and runs["strong"].bold and runs["struck"].strike
    assert runs["inline_code()"].font == theme.MONO
    assert (runs["α"].italic, runs["α"].baseline) == (True, 0)  # $\alpha_t^2$: letters italic, scripts moved
    assert (runs["t"].italic, runs["t"].baseline) == (True, -25000)
    assert (runs["2"].italic, runs["2"].baseline) == (False, 30000)
    number = next(r for text, r in runs.items() if "4.17" in text)  # a bound number reads as its sentence
    assert number.color != theme.ACCENT and "{{ ch01.final }}" in "".join(runs)
    assert runs["web link"].url == "https://example.org"
    assert runs["jump to the code"].slide == 3
    assert runs["chapter 2"].url == "02-attention.pptx"


def test_code_is_one_coloured_monospace_paragraph_per_line(built):
    _, model, _, _, _ = built
    (code,) = [s for s in model.slides[2].shapes if isinstance(s, TextBox) and s.name == "Code"]
    assert code.fill == theme.CODE_BACKGROUND
    assert [p.text for p in code.paras] == helper.CODE.rstrip("\n").split("\n")
    assert all(p.font == theme.MONO for p in code.paras)
    assert any(r.color for p in code.paras for r in p.runs)
    assert code.paras[0].size >= layout.Pt(theme.CODE_PT)  # little code: shown large


def test_two_cols_and_image_right_split_the_slide(built):
    _, model, _, _, _ = built
    half = model.width // 2
    shapes = _body(model.slides[3])
    (pic,) = [s for s in shapes if isinstance(s, Picture)]
    (table,) = [s for s in shapes if isinstance(s, Table)]
    assert pic.box.right <= half < table.box.x
    assert pic.alt == "Loss curve falling"
    side = _body(model.slides[6])
    (image,) = [s for s in side if isinstance(s, Picture)]
    assert image.box.x >= half and all(s.box.right <= half for s in side if isinstance(s, TextBox))
    assert abs(image.box.w / image.box.h - 4.0) < 0.01  # aspect kept


def test_missing_image_is_a_placeholder_and_a_warning(built):
    _, model, warnings, _, _ = built
    assert any("nope.png" in w.message and w.severity == "warning" for w in warnings)
    assert any("[missing image: nope.png]" in _text(s) for s in model.slides[7].shapes)


def test_equation_is_alone_and_sized_from_its_png(built):
    _, model, _, _, _ = built
    (eq,) = [s for s in model.slides[4].shapes if isinstance(s, Equation)]
    w, h = texmath.png_size(eq.png)
    assert abs(eq.box.w / eq.box.h - w / h) < 0.02
    assert "oMath" in eq.omml and eq.tex == helper.EQUATION


def test_footer_and_slide_number_on_every_slide(built):
    _, model, _, _, _ = built
    for slide in model.slides:
        names = {s.name: s for s in slide.shapes if isinstance(s, TextBox)}
        assert names["Footer"].paras[0].text == "Training a tiny decoder · Chapter 1"
        assert names["Slide number"].paras[0].runs[0].field == "slidenum"
        assert names["Footer"].paras[0].size == layout.Pt(theme.NOTE_PT)


def test_hand_deck_warns_only_about_the_missing_image(built):
    _, _, warnings, _, written = built
    assert [w.message for w in warnings] == [w.message for w in written]
    assert len(warnings) == 1, warnings


def _crowded(n: int) -> d.Deck:
    items = tuple(d.ListItem((d.Paragraph((d.Text(f"point number {i} with a few more words"),)),)) for i in range(n))
    slide = d.Slide(1, 3, "default", {}, "Crowded", "", (d.BulletList(items, line=5),))
    return d.Deck(Path("decks/x.md"), "x", {}, (slide,))


def test_text_shrinks_to_fit_then_warns():
    model, warnings = layout.build(_crowded(4), {})
    assert _body_size(model) == layout.Pt(theme.BODY_PT) and not warnings
    model, warnings = layout.build(_crowded(13), {})
    assert layout.Pt(theme.MIN_MAIN_PT) <= _body_size(model) < layout.Pt(theme.BODY_PT) and not warnings
    model, warnings = layout.build(_crowded(40), {})
    assert _body_size(model) == layout.Pt(theme.MIN_MAIN_PT)  # never under 18 pt as shown (issue 31)
    assert [w.message for w in warnings] == ["slide 1 does not fit even at 18 pt; split it or cut some content"]
    assert str(warnings[0]).startswith("decks/x.md:3:1: warning:")


def _body_size(model):
    return next(s for s in _body(model.slides[0]) if s.placeholder is None).paras[0].size


def test_long_code_lines_keep_the_code_size_and_wrap():
    code = "x = " + "a + " * 40 + "b\n"
    slide = d.Slide(1, 1, "default", {}, "", "", (d.CodeBlock(code, "python"),))
    model, _ = layout.build(d.Deck(Path("x.md"), "x", {}, (slide,)), {})
    (box,) = [s for s in model.slides[0].shapes if s.name == "Code"]
    chars = len(code.strip())
    assert box.paras[0].size == layout.Pt(theme.CODE_PT)  # never shrunk: 18 pt as shown
    assert box.paras[0].size.pt * 0.6 * chars > layout.Emu(box.box.w).pt  # the line wraps
    assert box.box.h >= 2 * layout.Pt(theme.CODE_PT)  # onto a second row


def test_bad_latex_is_an_input_error():
    slide = d.Slide(1, 1, "default", {}, "", "", (d.MathBlock(r"\frac{1}{", 7),))
    with pytest.raises(SlidegenError) as err:
        layout.build(d.Deck(Path("decks/x.md"), "x", {}, (slide,)), {})
    assert str(err.value).startswith("decks/x.md:7:1: error: cannot convert this LaTeX to an equation")


def test_unknown_command_and_unknown_slide_id():
    with pytest.raises(ValueError, match=r"\\foo"):
        omml.latex_to_omml(r"\foo{x}")
    para = d.Paragraph((d.Link((d.Text("x"),), "#nowhere"),), 4)
    slide = d.Slide(1, 1, "default", {}, "", "", (para,))
    _, warnings = layout.build(d.Deck(Path("x.md"), "x", {}, (slide,)), {})
    assert [w.line for w in warnings] == [4] and "nowhere" in warnings[0].message


@pytest.mark.parametrize(
    "tex, text",
    [
        (r"\alpha_t^2", "αₜ²"),
        (r"\frac{1}{\sqrt{d_k}}", "1/√dₖ"),
        (r"\eta \cdot \nabla L", "η · ∇ L"),
        (r"\hat{y} \le 10^{-3}", "ŷ ≤ 10⁻³"),
        (r"\ln 64 \approx 4.16", "ln 64 ≈ 4.16"),
        (r"\begin{x}", r"\begin{x}"),
    ],
)
def test_inline_math_reads_as_unicode(tex, text):
    assert texmath.tex_to_unicode(tex) == text


@pytest.mark.parametrize(
    "tex, pieces",
    [
        (r"1 - p_y", [("1 − ", False, 0), ("p", True, 0), ("y", True, -25000)]),
        (r"p = \mathrm{softmax}(z)", [("p", True, 0), (" = softmax(", False, 0), ("z", True, 0), (")", False, 0)]),
        (r"e^{-x^2}", [("e", True, 0), ("−", False, 30000), ("x", True, 30000), ("2", False, 60000)]),
        (r"W_{\text{out}} \Delta", [("W", True, 0), ("out", False, -25000), (" Δ", False, 0)]),
        (r"\begin{x}", [(r"\begin{x}", False, 0)]),
    ],
)
def test_inline_math_becomes_runs_set_as_tex_sets_them(tex, pieces):
    assert [(p.text, p.italic, p.baseline) for p in texmath.tex_to_runs(tex)] == pieces


def test_inline_math_nests_scripts_in_plain_text():
    assert texmath.tex_to_unicode(r"e^{-x^2}") == "e^(−x²)"
    assert texmath.tex_to_unicode(r"1 - p_y") == "1 − p_y"
    assert texmath.tex_to_unicode(r"\mathbf{W}_{q}") == "W_q"


def test_omml_fixes_roots_accents_sums_and_libreoffice_operators():
    xml = omml.latex_to_omml(r"\hat{y} = \sqrt{x} + \sum_j x_{<t}")
    assert '<m:degHide m:val="1"/>' in xml and "<m:deg/>" in xml
    assert "<m:acc>" in xml and "limUpp" not in xml
    assert '<m:supHide m:val="1"/>' in xml
    assert "<m:lit/>" in xml  # the '<' inside the subscript
    aligned = omml.latex_to_omml(r"\begin{aligned} a &= b \\ c &= d \end{aligned}")
    assert aligned.count("<m:mr>") == 2


# --------------------------------------------------------------------------- the written file


@pytest.fixture(scope="module")
def prs(built):
    return Presentation(str(built[3]))


def test_file_is_16_9_and_written_atomically(built, prs):
    out = built[3]
    assert (prs.slide_width, prs.slide_height) == (12192000, 6858000)
    assert [p.name for p in out.parent.iterdir()] == [out.name]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    assert len(prs.slides) == 13
    assert prs.core_properties.title == "Training a tiny decoder"


def test_titles_are_in_title_placeholders(prs):
    titles = [s.shapes.title.text if s.shapes.title is not None else None for s in prs.slides]
    assert titles[:3] == ["Training a tiny decoder", "What we measure", "The training step"]
    assert titles[10] is None
    assert prs.slides[0].shapes.title.placeholder_format.type == PP_PLACEHOLDER.CENTER_TITLE
    for slide in prs.slides:  # no empty "Click to add text" left behind
        assert all(ph.has_text_frame and ph.text_frame.text for ph in slide.placeholders)


def test_notes_and_notes_footer(prs):
    notes = prs.slides[1].notes_slide.notes_text_frame.text
    assert notes == (
        "Say hello.\n• point one\nSources of the numbers on this slide:\nch01.init: run ch01.default 9f3c2a1e"
    )


def test_table_cells_and_header_fill(prs):
    (frame,) = [s for s in prs.slides[3].shapes if s.has_table]
    table = frame.table
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["setting", "loss"],
        ["baseline", "2.30"],
        ["cosine", "2.06"],
    ]
    assert str(table.cell(0, 0).fill.fore_color.rgb) == theme.TABLE_HEADER_BACKGROUND.lstrip("#").upper()


def test_code_text_has_coloured_runs(prs):
    (code,) = [s for s in prs.slides[2].shapes if s.name == "Code"]
    assert code.text_frame.text == helper.CODE.rstrip("\n").replace("\n", "\n")
    colours = {str(r.font.color.rgb) for p in code.text_frame.paragraphs for r in p.runs}
    assert len(colours) >= 3
    assert {r.font.name for p in code.text_frame.paragraphs for r in p.runs} == {theme.MONO}


def test_equations_are_omml_with_a_picture_fallback(prs):
    slide = prs.slides[4]
    (alternate,) = [e for e in slide.shapes._spTree if e.tag == f"{{{omml.MC}}}AlternateContent"]
    assert alternate.xpath(".//a14:m/m:oMathPara/m:oMath", namespaces={"a14": omml.A14, "m": omml.M})
    (blip,) = alternate.xpath(".//mc:Fallback//a:blip", namespaces={"mc": omml.MC, "a": omml.A})
    r_id = blip.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed")
    assert slide.part.related_part(r_id).content_type == "image/png"


def test_pictures_have_alt_text(prs):
    (pic,) = [s for s in prs.slides[3].shapes if s.shape_type == 13]
    assert pic._element.xpath("./p:nvPicPr/p:cNvPr")[0].get("descr") == "Loss curve falling"


def test_links_jump_to_slides_and_open_urls(prs):
    slide = prs.slides[1]
    links = {r.text: r for s in slide.shapes if s.has_text_frame for p in s.text_frame.paragraphs for r in p.runs}
    assert links["web link"].hyperlink.address == "https://example.org"
    assert links["chapter 2"].hyperlink.address == "02-attention.pptx"
    click = links["jump to the code"]._r.xpath("./a:rPr/a:hlinkClick")[0]
    assert click.get("action") == "ppaction://hlinksldjump"
    target = slide.part.related_part(
        click.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id")
    )
    assert target is prs.slides[2].part


def test_slide_numbers_are_fields(prs):
    for i, slide in enumerate(prs.slides, 1):
        fields = slide.shapes._spTree.xpath(".//a:fld[@type='slidenum']")
        assert [f.xpath("string(./a:t)") for f in fields] == [str(i)]


def test_bullets_are_real_bullets(prs):
    paras = [p for s in prs.slides[1].shapes if s.has_text_frame for p in s.text_frame.paragraphs]
    bullet = next(p for p in paras if p.text.startswith("Plain"))
    assert bullet._p.xpath("./a:pPr/a:buChar/@char") == ["•"]
    nested = next(p for p in paras if p.text.startswith("nested"))
    assert nested.level == 1
    numbered = next(p for p in paras if p.text == "first")
    assert numbered._p.xpath("./a:pPr/a:buAutoNum/@type") == ["arabicPeriod"]


# --------------------------------------------------------------------------- the parser's fixture deck


def test_fixture_deck_from_the_parser(tmp_path):
    from slidegen.read import parse

    deck = parse.parse_deck(FIXTURE)
    media = {"img/loss.png": FIXTURE.parent / "img" / "loss.png"}
    warnings = write_deck(deck, tmp_path / f"{deck.slug}.pptx", media)
    assert warnings == []
    prs = Presentation(str(tmp_path / f"{deck.slug}.pptx"))
    assert len(prs.slides) == len(deck.slides)
    for slide, spec in zip(prs.slides, deck.slides, strict=True):
        if spec.title:
            assert slide.shapes.title.text == spec.title
        if spec.notes_blocks:
            assert slide.notes_slide.notes_text_frame.text
    xml = "".join(s.shapes._spTree.xml for s in prs.slides)
    assert xml.count("<m:oMath>") + xml.count("<m:oMath ") == sum(
        isinstance(b, d.MathBlock) for s in deck.slides for b in d.walk_blocks(s.blocks)
    )
    assert 'descr="A made-up loss curve"' in xml
    assert "ppaction://hlinksldjump" in xml


def test_a_slide_citing_nothing_has_no_notes_footer(tmp_path):
    deck, media = helper.every_feature_deck(tmp_path)
    deck = replace(deck, slides=deck.slides[:1])
    write_deck(deck, tmp_path / "one.pptx", media)
    assert Presentation(str(tmp_path / "one.pptx")).slides[0].notes_slide.notes_text_frame.text == ""


def test_a_frontmatter_title_names_the_slide_but_the_heading_is_drawn(tmp_path):
    """Slidev never draws a frontmatter ``title``: the title box shows the heading, once."""
    from slidegen.read.parse import parse_text

    deck = parse_text(
        "---\ntitle: Deck\n---\n\n# Cover\n\n---\ntitle: Keys by title\n---\n\n# Keys\n\nBody text\n", tmp_path / "d.md"
    )
    assert deck.slides[1].title == "Keys by title"
    model, _ = layout.build(deck, {})
    slide = model.slides[1]
    assert slide.title.paras[0].text == "Keys"
    texts = [_text(s) for s in _body(slide) if s is not slide.title]
    assert "Body text" in texts and not any("Keys" in t for t in texts)


def test_small_html_pictures_leave_the_text_at_full_size(tmp_path):
    """A picture drawn at a fixed scale (an HTML region) needs only its own height, not a figure's minimum:
    three one-line regions among four lines of text leave the text at the size it has without them."""
    from slidegen.read.parse import parse_text

    def sizes_of(with_regions: bool) -> tuple[list[float], list[d.Diagnostic], int]:
        region = '\n\n<div class="x">Region {}</div>' if with_regions else ""
        body = "\n\n".join(f"Line {i} of plain text" + region.format(i) for i in range(3))
        deck = parse_text(f"# Cover\n\n---\n\n# Title\n\n{body}\n\nLast line\n", tmp_path / "d.md")
        regions = [b for b in deck.slides[1].blocks if isinstance(b, d.HtmlRegion)]
        assert len(regions) == (3 if with_regions else 0)
        model, warnings = layout.build(deck, {b.picture_key: (2400, 80) for b in regions})
        shapes = model.slides[1].shapes
        texts = [p.size.pt for s in shapes if isinstance(s, TextBox) and s.name == "Text" for p in s.paras]
        return texts, warnings, sum(isinstance(s, Picture) for s in shapes)

    plain, _, none = sizes_of(False)
    texts, warnings, pictures = sizes_of(True)
    assert (none, pictures, warnings) == (0, 3, [])
    assert len(texts) == 4 and set(texts) == set(plain) == {float(theme.BODY_PT)}
