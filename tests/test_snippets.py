"""Slidev's snippet import: ``<<< @/path#region lang {steps}`` shows a file's code, kept current."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from slidegen.cli.main import main
from slidegen.deck import nodes as d
from slidegen.errors import SlidegenError
from slidegen.read.parse import parse_deck
from slidegen.write import html

CODE = '''"""A module."""

# #region forward
def forward(x):
    # #region inner
    y = x * 2
    # #endregion inner
    return y
# #endregion forward


class Box:
    # region method
    def size(self):
        return 3
    # endregion
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "decks").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "net.py").write_text(CODE, encoding="utf-8")
    (tmp_path / "decks" / "near.js").write_text("// #region one\nconst a = 1;\n// #endregion one\n", encoding="utf-8")
    return tmp_path


def deck_of(project: Path, body: str) -> d.Deck:
    path = project / "decks" / "01-s.md"
    path.write_text(f"# Code\n\n{body}\n", encoding="utf-8")
    return parse_deck(path)


def code_blocks(deck: d.Deck) -> list[d.CodeBlock]:
    return [b for b in deck.slides[0].blocks if isinstance(b, d.CodeBlock)]


def test_a_region_is_imported_dedented_without_its_inner_markers(project: Path):
    [block] = code_blocks(deck_of(project, "<<< @/model/net.py#forward"))
    assert block.code == "def forward(x):\n    y = x * 2\n    return y"
    assert (block.lang, block.steps, block.line) == ("py", (), 3)
    assert block.source == (project / "model" / "net.py").resolve()


def test_an_unnamed_endregion_closes_the_region_and_the_body_is_dedented(project: Path):
    [block] = code_blocks(deck_of(project, "<<< @/model/net.py#method"))
    assert block.code == "def size(self):\n    return 3"


def test_language_and_highlight_steps_follow_the_path(project: Path):
    [block] = code_blocks(deck_of(project, "<<< @/model/net.py#forward python {1|2-3}{lines:true}"))
    assert (block.lang, block.steps) == ("python", ((1,), (2, 3)))


def test_a_whole_file_drops_every_marker_and_a_relative_path_is_the_decks_folder(project: Path):
    [whole] = code_blocks(deck_of(project, "<<< @/model/net.py"))
    assert "region" not in whole.code and whole.code.startswith('"""A module."""')
    [near] = code_blocks(deck_of(project, "<<< ./near.js#one"))
    assert (near.code, near.lang) == ("const a = 1;", "js")


def test_the_html_shows_the_imported_code(project: Path):
    page = html.render_deck(deck_of(project, "<<< @/model/net.py#inner"), {})
    assert "y" in page and "<<<" not in page and "&lt;&lt;&lt;" not in page


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<<< @/model/nope.py", "snippet file '@/model/nope.py' not found"),
        ("<<< @/model/net.py#forwrd", "region 'forwrd' not found in '@/model/net.py'; did you mean 'forward'?"),
        (
            "<<< @/model/net.py#zzz",
            "region 'zzz' not found in '@/model/net.py'; its regions are forward, inner, method",
        ),
        ("<<< @/../outside.py", "outside the project"),
        ("<<< @/model/net.py#forward {9}", "bad highlight range '{9}'"),
    ],
)
def test_a_bad_snippet_is_an_error_at_its_line(project: Path, body: str, message: str):
    (project.parent / "outside.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(SlidegenError) as caught:
        deck_of(project, body)
    diagnostic = caught.value.diagnostic
    assert message in diagnostic.message
    assert (diagnostic.line, diagnostic.col) == (3, 1 if "{9}" not in body else body.index("{") + 1)


def test_check_reports_a_missing_region_with_file_and_line(project: Path, monkeypatch: pytest.MonkeyPatch):
    text = "# Code\n\nText first.\n\n<<< @/model/net.py#nothere\n"
    (project / "decks" / "01-s.md").write_text(text, encoding="utf-8")
    (project / "results").mkdir()
    (project / "results" / "results.md").write_text("# Results\n", encoding="utf-8")
    monkeypatch.chdir(project)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["check"]) == 1
    assert "decks/01-s.md:5:1: error: region 'nothere' not found in '@/model/net.py'" in err.getvalue()


def test_inside_a_fence_the_line_is_code(project: Path):
    [block] = code_blocks(deck_of(project, "```md\n<<< @/model/net.py\n```"))
    assert block.code == "<<< @/model/net.py" and block.source is None


def test_a_line_range_of_a_region_splits_long_code_over_slides(tmp_path) -> None:
    """``#name:3-4``: lines 3 to 4 of the region, dedented; a range past its end is a clear error."""
    from slidegen.read.snippets import SnippetError, load_snippet

    (tmp_path / "decks").mkdir()
    (tmp_path / "code.py").write_text(
        "def f():\n    # #region body\n    a = 1\n    if a:\n        b = 2\n        c = 3\n    # #endregion body\n",
        encoding="utf-8",
    )
    deck = tmp_path / "decks" / "01-x.md"
    deck.write_text("# x\n", encoding="utf-8")
    assert load_snippet("@/code.py", "body:2-4", deck, 1, 1).code == "if a:\n    b = 2\n    c = 3"
    assert load_snippet("@/code.py", "body", deck, 1, 1).code.startswith("a = 1\nif a:")
    with pytest.raises(SnippetError, match="has 4 lines, not 9"):
        load_snippet("@/code.py", "body:2-9", deck, 1, 1)
    with pytest.raises(SnippetError, match="not a range"):
        load_snippet("@/code.py", "body:4-2", deck, 1, 1)
