"""The citation style a deck is formatted with: slidegen's own author-date style (inside the package, so
a wheel has it) when the project has none; the project's ``styles/`` or ``[tool.slidegen] csl`` otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_cites import STYLE, cites, make_project

from slidegen.bind.citestyle import CitationStyle, Cluster
from slidegen.bind.library import DEFAULT_STYLE, load_library
from slidegen.check.project import check_project
from slidegen.errors import SlidegenError
from slidegen.pipeline.bound import bind_project
from slidegen.project import Project, read_layout

DECK = """\
# Works

Adam [@kingma2014], AdamW [@loshchilov2019, §2.1]; @kaplan2020 shows it [see @kingma2014; @loshchilov2019].

<!-- The notes. -->
"""
HARVARD_KINGMA = "Kingma, D.P. and Ba, J. (2014) “Adam: A Method for Stochastic Optimization”."


def first_cite(root: Path, deck: str = "01-cites.md") -> tuple[str, str]:
    """The first citation of the deck: its text and its full reference."""
    first = cites(bind_project(Project(root)).deck(root / "decks" / deck))[0]
    return first.text, first.reference


def without_styles(root: Path, deck: str = DECK) -> Path:
    make_project(root, {"01-cites.md": deck})
    shutil.rmtree(root / "styles")
    return root


def test_a_project_without_styles_cites_in_the_default_author_date_style(tmp_path: Path) -> None:
    root = without_styles(tmp_path)
    assert first_cite(root) == (
        "(Kingma and Ba, 2014)",
        "Kingma, D. P. and Ba, J. (2014). Adam: A Method for Stochastic Optimization. arXiv:1412.6980. "
        "https://arxiv.org/abs/1412.6980",
    )
    deck = bind_project(Project(root)).deck(root / "decks" / "01-cites.md")
    assert [c.text for c in cites(deck)][1:4] == [
        "(Loshchilov and Hutter, 2019, sec. 2.1)",
        "Kaplan et al. (2020)",
        "(see Kingma and Ba, 2014; Loshchilov and Hutter, 2019)",
    ]
    assert not [d for d in check_project(root) if d.severity == "error"]


def test_the_default_style_is_inside_the_package_and_formats_books_and_chapters() -> None:
    assert DEFAULT_STYLE.is_file() and DEFAULT_STYLE.parent.parent.name == "slidegen"
    from slidegen.bind.bibliography import parse_bibliography

    bib = parse_bibliography(
        "@book{b, author = {Lee, Kim and Park, Jo and Choi, Min}, title = {A Book},"
        " publisher = {Press}, year = {2020}}\n"
        "@article{j, author = {Ng, Andrew}, title = {A Paper}, journal = {Journal},"
        " volume = {3}, number = {2}, pages = {1--9}, year = {2011}, doi = {10.1/x}}\n"
    )
    formatted = CitationStyle(DEFAULT_STYLE, bib.entries).format(
        [Cluster((("b", "ch. 3", ""),)), Cluster((("j", "p. 4", ""),))]
    )
    assert formatted.texts == ("(Lee et al., 2020, chap. 3)", "(Ng, 2011, p. 4)")
    assert [r.html for r in formatted.references] == [
        "Lee, K., Park, J. and Choi, M. (2020). <i>A Book</i>. Press.",
        "Ng, A. (2011). A Paper. <i>Journal</i>, 3(2), 1–9. https://doi.org/10.1/x",
    ]


def test_a_style_in_styles_replaces_the_default(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-cites.md": DECK})  # styles/harvard-cite-them-right.csl
    assert first_cite(tmp_path)[1].startswith(HARVARD_KINGMA)


def test_tool_slidegen_csl_names_the_style_of_every_deck(tmp_path: Path) -> None:
    root = without_styles(tmp_path)
    (root / "vendor").mkdir()
    shutil.copy(STYLE, root / "vendor" / "house.csl")
    (root / "pyproject.toml").write_text('[tool.slidegen]\ncsl = "vendor/house.csl"\n', encoding="utf-8")
    assert first_cite(root)[1].startswith(HARVARD_KINGMA)
    # several styles in styles/: the table chooses among them by name, and a deck's own csl: wins
    (root / "styles").mkdir()
    shutil.copy(STYLE, root / "styles" / "harvard.csl")
    shutil.copy(DEFAULT_STYLE, root / "styles" / "plain.csl")
    (root / "pyproject.toml").write_text('[tool.slidegen]\ncsl = "harvard"\n', encoding="utf-8")
    assert first_cite(root)[1].startswith(HARVARD_KINGMA)
    (root / "decks" / "01-cites.md").write_text("---\ncsl: author-date\n---\n\n" + DECK, encoding="utf-8")
    assert first_cite(root)[1].startswith("Kingma, D. P. and Ba, J. (2014). Adam")


def test_a_tool_slidegen_csl_that_names_no_file_is_an_error_at_its_line(tmp_path: Path) -> None:
    root = without_styles(tmp_path)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "talk"\n\n[tool.slidegen]\ncsl = "styles/apa.csl"\n', encoding="utf-8"
    )
    errors = [str(d) for d in check_project(root) if d.path == "pyproject.toml"]
    assert errors == ["pyproject.toml:5:1: error: [tool.slidegen] csl names styles/apa.csl, which is not a file"]
    (root / "pyproject.toml").write_text('[tool.slidegen]\ncsl = "apa"\n', encoding="utf-8")
    errors = [str(d) for d in check_project(root) if d.path == "pyproject.toml"]
    assert errors == ["pyproject.toml:2:1: error: unknown CSL style 'apa'; the styles are author-date"]


@pytest.mark.parametrize("value", ["/etc/x.csl", "../x.csl", "styles/x"])
def test_a_csl_value_that_cannot_name_a_style_is_an_error_in_pyproject(tmp_path: Path, value: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.slidegen]\ncsl = "{value}"\n', encoding="utf-8")
    with pytest.raises(SlidegenError, match=r"\[tool.slidegen\] csl = "):
        read_layout(tmp_path / "pyproject.toml")
    with pytest.raises(SlidegenError):
        load_library(tmp_path)
