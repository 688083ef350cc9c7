"""Bad and hostile input: each input that once crashed, hung or leaked (issue 12) is now a located error or a build."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.cli.main import main
from slidegen.write.highlight import highlighted
from slidegen.write.pptx.texmath import tex_to_unicode
from slidegen.xmlchars import xml_safe


def write_project(root: Path, decks: dict[str, str | bytes], results: str | None = None) -> Path:
    (root / "decks").mkdir(parents=True)
    for name, text in decks.items():
        target = root / "decks" / name
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
    if results is not None:
        (root / "results").mkdir()
        (root / "results" / "results.md").write_text(results, encoding="utf-8")
    return root


@pytest.fixture
def at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def build(root: Path, decks: dict[str, str | bytes], *args: str) -> int:
    write_project(root, decks)
    return main(["build", *args])


# ------------------------------------------------------------------ the PowerPoint writer


def test_a_slide_with_text_and_no_heading_builds(at: Path) -> None:
    assert build(at, {"01-x.md": "hello\n"}) == 0
    prs = Presentation(str(at / "build" / "pptx" / "01-x.pptx"))
    assert "hello" in [shape.text_frame.text for shape in prs.slides[0].shapes if shape.has_text_frame]


@pytest.mark.parametrize("lang", ["yaml", "postgresql", "prolog", "nixos", "gdscript", "solidity"])
def test_lexers_with_token_types_of_their_own_colour_pptx_code(at: Path, lang: str) -> None:
    deck = f"# Code\n\n```{lang}\na: 1\nb: [x, 'y']  # c\nselect * from t;\n```\n"
    assert build(at, {"01-x.md": deck}) == 0
    assert (at / "build" / "pptx" / "01-x.pptx").is_file()


def test_a_title_and_author_over_255_characters_are_cut_in_core_properties(at: Path) -> None:
    deck = f"---\ntitle: {'t' * 300}\nauthor: {'a' * 400}\n---\n\n# Cover\n"
    assert build(at, {"01-x.md": deck}) == 0
    props = Presentation(str(at / "build" / "pptx" / "01-x.pptx")).core_properties
    assert props.title == "t" * 254 + "…"
    assert props.author == "a" * 254 + "…"


def test_xml_invalid_characters_are_replaced_the_same_way_in_every_writer(at: Path) -> None:
    deck = "# T\ufffe\n\nhello \ufffe \uffff \x01 \x0b end\n\n<!-- note \uffff\x02 -->\n"
    assert build(at, {"01-x.md": deck}, "--to", "html,pptx,md") == 0
    prs = Presentation(str(at / "build" / "pptx" / "01-x.pptx"))
    texts = [shape.text_frame.text for shape in prs.slides[0].shapes if shape.has_text_frame]
    assert "hello \ufffd \ufffd \ufffd \ufffd end" in texts
    assert prs.slides[0].notes_slide.notes_text_frame.text.startswith("note \ufffd\ufffd")
    page = (at / "build" / "html" / "01-x.html").read_text(encoding="utf-8")
    assert "hello \ufffd \ufffd \ufffd \ufffd end" in page and "\ufffe" not in page
    assert "hello \ufffd \ufffd \ufffd \ufffd end" in (at / "build" / "md" / "01-x.md").read_text(encoding="utf-8")


def test_xml_invalid_characters_from_yaml_escapes_do_not_break_the_pptx(at: Path) -> None:
    deck = '---\ntitle: "a\\x01b\\uFFFEc"\nauthor: "\\x02"\n---\n\n# "x"\n'
    assert build(at, {"01-x.md": deck}) == 0
    with zipfile.ZipFile(at / "build" / "pptx" / "01-x.pptx") as archive:
        assert archive.testzip() is None


def test_xml_safe() -> None:
    assert xml_safe("a\tb\nc\rd") == "a\tb\nc\rd"
    assert xml_safe("\x00\x08\x0b\x0c\x0e\x1f\ufffe\uffff\ud800") == "\ufffd" * 9
    assert xml_safe("é😀\u2028") == "é😀\u2028"


def test_inline_math_nested_250_levels_is_left_as_its_source() -> None:
    tex = "\\sqrt{" * 250 + "x" + "}" * 250
    assert tex_to_unicode(tex) == tex
    assert tex_to_unicode("x^{" * 250 + "}" * 250).startswith("x^{x^{")
    assert tex_to_unicode("^" * 600 + "x") == "^" * 600 + "x"
    assert tex_to_unicode("\\alpha_t^2") == "αₜ²"


def test_deeply_nested_inline_math_builds(at: Path) -> None:
    deck = "# T\n\n$" + "\\sqrt{" * 250 + "x" + "}" * 250 + "$\n"
    assert build(at, {"01-x.md": deck}) == 0


def test_deeply_nested_display_math_is_a_located_error(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deck = "# T\n\n$$\n" + "\\sqrt{" * 250 + "x" + "}" * 250 + "\n$$\n"
    assert build(at, {"01-x.md": deck}) == 1
    assert "decks/01-x.md:3:1: error: cannot convert this LaTeX to an equation" in capsys.readouterr().err


# ------------------------------------------------------------------ nesting, highlighting


def test_emphasis_nested_1200_levels_is_a_located_error(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deck = "# T\n\n" + "*a " * 1200 + "b" + " a*" * 1200 + "\n"
    assert build(at, {"01-x.md": deck}) == 1
    err = capsys.readouterr().err
    assert "decks/01-x.md:3:151: error: emphasis, links and strikethrough nest more than 50 levels deep" in err
    assert "Traceback" not in err


def test_emphasis_nested_50_levels_builds(at: Path) -> None:
    deck = "# T\n\n" + "*a " * 50 + "b" + " a*" * 50 + "\n"
    assert build(at, {"01-x.md": deck}) == 0


def test_a_highlighter_past_its_time_limit_gives_plain_text_and_a_warning(
    at: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pygments.lexers.python import PythonLexer

    def crawl(self: object, text: str, unfiltered: bool = False) -> object:
        while True:
            time.sleep(0.001)
            yield from [(None, "")] * 64

    monkeypatch.setattr(PythonLexer, "get_tokens", crawl)
    monkeypatch.setattr("slidegen.write.highlight.TIME_LIMIT", 0.2)
    highlighted.cache_clear()
    assert build(at, {"01-x.md": "# T\n\n```python\nx = 1\n```\n"}) == 0
    highlighted.cache_clear()
    err = capsys.readouterr().err
    assert "decks/01-x.md:3:1: warning: the 'python' highlighter failed or took over 0.2 s on this block" in err
    assert "x = 1" in (at / "build" / "html" / "01-x.html").read_text(encoding="utf-8")


def test_a_code_block_in_a_lexer_slow_to_load_builds(at: Path) -> None:  # its time: benchmarks/parse_speed.py
    assert build(at, {"01-x.md": '# T\n\n```mcschema\n{"a": [1, 2], "b": "c"}\n```\n'}) == 0


# ------------------------------------------------------------------ one bad deck, outputs whole


GOOD = "---\ntitle: Good\n---\n\n# Good\n\ntext\n"


def test_a_broken_deck_does_not_stop_the_others_or_the_index(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decks = {"01-a.md": GOOD, "02-bad.md": "# Bad\n\n{{ nope.key }}\n", "03-c.md": GOOD.replace("Good", "Third")}
    assert build(at, decks) == 1
    html = at / "build" / "html"
    assert (html / "01-a.html").is_file() and (html / "03-c.html").is_file() and (html / "index.html").is_file()
    assert not (html / "02-bad.html").exists() and not (at / "build" / "pptx" / "02-bad.pptx").exists()
    assert "decks/02-bad.md:3:" in capsys.readouterr().err


def test_a_failing_deck_into_a_new_output_folder_is_a_located_error(
    at: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(at, {"01-bad.md": "# Bad\n\n{{ nope.key }}\n"}, "--to", "md", "-o", "fresh/out") == 1
    err = capsys.readouterr().err
    assert "decks/01-bad.md:3:" in err and "internal error" not in err


def test_a_deck_whose_pptx_fails_keeps_no_fresh_html(at: Path) -> None:
    deck = "# T\n\n$$\n" + "\\sqrt{" * 250 + "x" + "}" * 250 + "\n$$\n"
    assert build(at, {"01-a.md": GOOD, "02-bad.md": deck}) == 1
    assert not (at / "build" / "html" / "02-bad.html").exists()
    assert (at / "build" / "html" / "01-a.html").is_file() and (at / "build" / "pptx" / "01-a.pptx").is_file()
    assert not [p for p in (at / "build").iterdir() if p.name.startswith(".staging-")]


def test_a_deck_that_fails_keeps_its_previous_outputs(at: Path) -> None:
    assert build(at, {"01-a.md": GOOD}) == 0
    before = (at / "build" / "html" / "01-a.html").read_bytes()
    deck = "# T\n\n$$\n" + "\\sqrt{" * 250 + "x" + "}" * 250 + "\n$$\n"
    (at / "decks" / "01-a.md").write_text(deck, encoding="utf-8")
    assert main(["build"]) == 1
    assert (at / "build" / "html" / "01-a.html").read_bytes() == before


def test_a_bug_on_one_deck_exits_70_and_the_others_are_built(
    at: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from slidegen.write.pptx import layout

    real = layout.build

    def buggy(deck, *args, **kwargs):  # type: ignore[no-untyped-def]
        if deck.slug == "02-bug":
            raise ZeroDivisionError("division by zero")
        return real(deck, *args, **kwargs)

    monkeypatch.setattr(layout, "build", buggy)
    assert build(at, {"01-a.md": GOOD, "02-bug.md": GOOD, "03-c.md": GOOD}) == 70
    err = capsys.readouterr().err
    assert "slidegen: internal error, please report: ZeroDivisionError: division by zero at " in err
    assert "test_bad_input.py:" in err and "in buggy" in err
    assert "Traceback" not in err
    assert (at / "build" / "pptx" / "03-c.pptx").is_file() and not (at / "build" / "html" / "02-bug.html").exists()


def test_a_bug_outside_a_deck_exits_70_with_its_location(
    at: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object) -> None:
        raise KeyError("x")

    write_project(at, {"01-a.md": GOOD})
    monkeypatch.setattr("slidegen.pipeline.build.bind_project", broken)
    assert main(["build"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("slidegen: internal error, please report: KeyError: 'x' at ")
    assert "in broken" in err


# ------------------------------------------------------------------ bounded work


def test_fmt_widths_and_precisions_are_bounded(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from slidegen.bind.numbers import FilterError, format_result
    from slidegen.record.results import Result

    result = Result("ch01.x", 2.5, source="cited: A 2024", digits=3)
    for spec in (".999999999f", ">2000000000", "0>101", "." + "9" * 5000 + "f"):
        with pytest.raises(FilterError, match="asks for a width or precision over 100"):
            format_result(result, (f'fmt("{spec}")',))
    assert format_result(result, ('fmt(">100.2f")',)) == " " * 96 + "2.50"
    write_project(at, {"01-x.md": '# T\n\n{{ ch01.x | fmt(".999999999f") }}\n'})
    write_results(at, [result])
    assert main(["build"]) == 1
    assert "decks/01-x.md:3:" in capsys.readouterr().err
    assert not (at / "build" / "html" / "01-x.html").exists()


def write_results(root: Path, rows: list) -> None:
    from slidegen.record.results import Results

    (root / "results").mkdir(exist_ok=True)
    Results(rows).write(root / "results" / "results.md")


def test_a_deck_named_index_is_refused(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build(at, {"01-a.md": GOOD, "index.md": "# Mine\n"}) == 1
    assert (
        "decks/index.md:1:1: error: a deck cannot be named index.md: its page would overwrite the index "
        "page index.html; rename the deck"
    ) in capsys.readouterr().err
    assert "01-a.html" in (at / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert main(["check"]) == 1


# ------------------------------------------------------------------ results.md

HEAD = "| key | value | digits | sd | n | unit | what | source |\n|---|---|---|---|---|---|---|---|\n"
ROW = "| ch01.x | {value} | {digits} | {sd} | {n} | u | w | {source} |\n"


def results_text(
    value: str = "2.5", digits: str = "3", sd: str = "0.1", n: str = "3", source: str = "run ch01.default 9f3c2a1e"
) -> str:
    return "# Results\n\n## ch01\n\n" + HEAD + ROW.format(value=value, digits=digits, sd=sd, n=n, source=source)


def located(text: str) -> tuple[int, int, str]:
    from slidegen.errors import SlidegenError
    from slidegen.record.results import Results

    with pytest.raises(SlidegenError) as caught:
        Results.parse(text)
    d = caught.value.diagnostic
    return d.line, d.col, d.message


@pytest.mark.parametrize(
    ("cells", "col", "message"),
    [
        ({"n": "9" * 5000}, 28, "n '99999999999999999999...' of 'ch01.x' is too large: at most 1000000000"),
        ({"digits": "9" * 5000}, 18, "digits '99999999999999999999...' of 'ch01.x' is too large: at most 17"),
        ({"digits": "401", "source": "cited: A 2024"}, 18, "digits '401' of 'ch01.x' is too large: at most 17"),
        ({"value": "1_000"}, 12, "value '1_000' of 'ch01.x' is not a number as results.md writes one (2.5, -3, 1e-08)"),
        ({"sd": "-0.1"}, 22, "sd '-0.1' of 'ch01.x' is negative: a standard deviation is 0 or more"),
        (
            {"source": "cited:  "},
            40,
            "source of 'ch01.x' says 'cited:' but names no publication: write 'cited: PUBLICATION'",
        ),
    ],
)
def test_bad_results_cells_are_located(cells: dict[str, str], col: int, message: str) -> None:
    assert located(results_text(**cells)) == (7, col, message)


def test_a_row_before_the_first_section_is_located() -> None:
    text = "# Results\n\n" + ROW.format(value=1, digits=3, sd="", n="", source="cited: A") + "\n## ch01\n\n" + HEAD
    assert located(text) == (3, 1, "a table row before the first section: rows go under '## CHAPTER'")


def test_a_heading_without_its_space_is_located() -> None:
    text = results_text().replace("## ch01", "##ch01")
    assert located(text) == (3, 1, "malformed section heading: expected '## CHAPTER' or '## CHAPTER — Title'")


@pytest.mark.parametrize("variant", ["\ufeff{}", "{}"])
def test_a_byte_order_mark_and_cr_line_endings_are_accepted(variant: str) -> None:
    from slidegen.record.results import Results

    plain = results_text()
    for text in (
        variant.format(plain),
        variant.format(plain.replace("\n", "\r")),
        variant.format(plain.replace("\n", "\r\n")),
    ):
        results = Results.parse(text)
        assert results["ch01.x"].value == 2.5 and results["ch01.x"].line == 7
        assert results.dumps() == Results.parse(plain).dumps()


def test_results_md_as_a_folder_is_a_located_error(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(at, {"01-a.md": GOOD})
    (at / "results" / "results.md").mkdir(parents=True)
    assert main(["check"]) == 1
    assert "results/results.md:1:1: error: the results file is a folder, not a file" in capsys.readouterr().err
    assert main(["build"]) == 1
    assert "results/results.md:1:1: error: the results file is a folder, not a file" in capsys.readouterr().err


def test_results_md_as_a_symlink_loop_is_a_located_error(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(at, {"01-a.md": GOOD})
    (at / "results").mkdir()
    (at / "results" / "results.md").symlink_to(at / "results" / "results.md")
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert "results/results.md:1:1: error: the results file cannot be read: Too many levels of symbolic links" in err
    assert main(["build"]) == 1


def test_digits_of_17_on_a_tiny_cited_value_formats(at: Path) -> None:
    from slidegen.bind.numbers import format_result
    from slidegen.record.results import Result

    assert format_result(Result("ch01.x", 5e-324, source="cited: A", digits=17)).startswith("0.000")


# ------------------------------------------------------------------ media

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.png").write_bytes(PNG)
    return folder


def outside_refused(at: Path, deck: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["build"]) == 1
    err = capsys.readouterr().err
    assert "outside the project" in err
    media = at / "proj" / "build" / "html" / "media"
    assert not media.exists() or not list(media.iterdir())
    return err


@pytest.mark.parametrize("how", ["absolute", "dotdot", "frontmatter"])
def test_pictures_outside_the_project_are_refused(
    at: Path, outside: Path, how: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = {
        "absolute": str(outside / "secret.png"),
        "dotdot": "../../elsewhere/secret.png",
        "frontmatter": "../../elsewhere/secret.png",
    }[how]
    deck = f"---\nlayout: image-right\nimage: {src}\n---\n\n# T\n" if how == "frontmatter" else f"# T\n\n![x]({src})\n"
    write_project(at / "proj", {"01-x.md": deck})
    monkeypatch.chdir(at / "proj")
    err = outside_refused(at, deck, capsys)
    assert f"decks/01-x.md:{3 if how != 'frontmatter' else 5}:1: error: image '{src}' resolves to " in err


@pytest.mark.parametrize("link", ["file", "folder"])
def test_symlinks_out_of_the_project_are_refused(
    at: Path, outside: Path, link: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(at / "proj", {"01-x.md": "# T\n\n![x](img/secret.png)\n"})
    img = at / "proj" / "decks" / "img"
    if link == "file":
        img.mkdir()
        (img / "secret.png").symlink_to(outside / "secret.png")
    else:
        img.symlink_to(outside)
    monkeypatch.chdir(at / "proj")
    outside_refused(at, "", capsys)


def test_a_picture_inside_the_project_is_copied(at: Path) -> None:
    write_project(at, {"01-x.md": "# T\n\n![x](../shared/dot.png)\n"})
    (at / "shared").mkdir()
    (at / "shared" / "dot.png").write_bytes(PNG)
    assert main(["build"]) == 0
    assert [p.read_bytes() for p in (at / "build" / "html" / "media").iterdir()] == [PNG]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("secret.png", b"password=hunter2\n"),
        ("photo.jpg", PNG),
        ("anim.gif", b"GIF00a"),
        ("pic.webp", b"RIFF\x00\x00\x00\x00WAVE"),
        ("draw.svg", b"<html>not a drawing</html>"),
    ],
)
def test_a_picture_whose_bytes_are_not_its_format_is_refused(
    at: Path, name: str, data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(at, {"01-x.md": f"# T\n\n![x]({name})\n"})
    (at / "decks" / name).write_bytes(data)
    (at / "decks" / (Path(name).stem + ".png")).write_bytes(PNG) if not name.endswith(".png") else None
    assert main(["build"]) == 1
    kind = Path(name).suffix.lstrip(".").upper()
    assert (
        f"decks/01-x.md:3:1: error: image '{name}' ({name}) does not hold a {kind} picture; its bytes are not "
        "what its extension says"
    ) in capsys.readouterr().err
    assert not (at / "build" / "html" / "media").exists()


def test_an_image_src_with_a_nul_or_a_huge_name_is_not_found(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(at, {"01-x.md": "# T\n\n![x](a%00b.png)\n\n![y](" + "n" * 5000 + ".png)\n"})
    assert main(["build"]) == 1
    assert "decks/01-x.md:3:1: error: image " in capsys.readouterr().err


def test_display_math_nested_past_mathtext_falls_back_to_its_source(at: Path) -> None:
    from slidegen.write.pptx.texmath import render_png

    deck = "# T\n\n$$\n" + "\\sqrt{" * 30 + "x" + "}" * 30 + "\n$$\n"
    assert build(at, {"01-x.md": deck}) == 0  # found by the fuzz test: pyparsing's RecursionError
    assert render_png("\\sqrt{" * 30 + "x" + "}" * 30, 20.0).startswith(b"\x89PNG")


# ------------------------------------------------------------------ the index page


def test_a_deck_that_is_not_utf8_does_not_stop_another_deck_or_the_index(
    at: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert build(at, {"01-a.md": GOOD, "02-latin1.md": "# Caf\xe9\n".encode("latin-1")}) == 1
    assert "decks/02-latin1.md:1:1: error: the deck is not UTF-8 text; save it as UTF-8" in capsys.readouterr().err
    assert (at / "build" / "html" / "01-a.html").is_file()
    assert "01-a.html" in (at / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert main(["build", "decks/01-a.md"]) == 0  # building only the good deck is not broken either


def test_a_yaml_escaped_surrogate_pair_in_a_summary_is_located(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deck = '---\ntitle: T\nsummary: "\\ud83d\\ude00 x"\n---\n\n# T\n'
    assert build(at, {"01-a.md": GOOD, "02-s.md": deck}) == 1
    err = capsys.readouterr().err
    assert "decks/02-s.md:3:" in err and "Traceback" not in err
    assert "01-a.html" in (at / "build" / "html" / "index.html").read_text(encoding="utf-8")


def test_a_summary_with_odd_characters_reaches_the_index(at: Path) -> None:
    deck = '---\ntitle: T\nsummary: "😀 \\x01 \\uFFFE é"\n---\n\n# T\n'
    assert build(at, {"01-s.md": deck}) == 0
    index = (at / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "😀 \ufffd \ufffd é" in index and "\x01" not in index  # as every writer replaces them


def test_frontmatter_nested_990_levels_is_a_located_error(at: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_project(at, {"01-x.md": "---\nx: " + "[" * 990 + "]" * 990 + "\n---\n\n# T\n"})
    assert main(["inspect", "decks/01-x.md"]) == 1  # was RecursionError in json
    assert (
        "decks/01-x.md:2:1: error: frontmatter nests lists and mappings more than 20 levels deep"
        in capsys.readouterr().err
    )
    write_project(at / "ok", {"01-x.md": "---\nx: " + "[" * 20 + "]" * 20 + "\n---\n\n# T\n"})


LAUGHS = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("x: &a [*a, 1]\n", "frontmatter holds itself (a YAML alias inside its own anchor)"),
        ("l0: &l0 [lol]\n" + LAUGHS, "frontmatter holds more than 10,000 values once its YAML aliases are expanded"),
    ],
)
def test_yaml_aliases_that_loop_or_explode_are_located(
    at: Path, yaml: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project(at, {"01-x.md": f"---\n{yaml}---\n\n# T\n"})
    assert main(["inspect", "decks/01-x.md"]) == 1
    assert main(["build"]) == 1
    assert f"decks/01-x.md:2:1: error: {message}" in capsys.readouterr().err


def test_shared_yaml_aliases_within_bounds_build(at: Path) -> None:
    assert build(at, {"01-x.md": "---\na: &a [1, 2]\nb: *a\n---\n\n# T\n"}) == 0
