"""Citations: Pandoc's syntax parsed into Cite nodes, formatted by the project's CSL style in every
writer, the references slide, cited numbers that pull their work in, and results.md's cited rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.bind.cited import update_cited
from slidegen.bind.library import cited_rows, load_library
from slidegen.deck import nodes as d
from slidegen.pipeline.bound import bind_project
from slidegen.project import Project
from slidegen.read.parse import parse_text
from slidegen.record.results import Result, Results
from slidegen.run.moved import write_cited
from slidegen.write import html, pptx
from slidegen.write import markdown as markdown_out

REPO = Path(__file__).resolve().parents[1]
STYLE = REPO / "styles" / "harvard-cite-them-right.csl"

BIB = """\
@misc{kingma2014,
  author = {Kingma, Diederik P. and Ba, Jimmy},
  title = {{Adam}: A Method for Stochastic Optimization},
  year = {2014},
  eprint = {1412.6980},
  archiveprefix = {arXiv},
}

@inproceedings{loshchilov2019,
  author = {Loshchilov, Ilya and Hutter, Frank},
  title = {Decoupled Weight Decay Regularization},
  booktitle = {ICLR},
  year = {2019},
}

@misc{kaplan2020,
  author = {Kaplan, Jared and McCandlish, Sam and Henighan, Tom and Brown, Tom B.},
  title = {Scaling Laws for Neural Language Models},
  year = {2020},
}

@misc{hoffmann2022,
  author = {Hoffmann, Jordan and Borgeaud, Sebastian and Mensch, Arthur and Buchatskaya, Elena and others},
  title = {Training Compute-Optimal Large Language Models},
  year = {2022},
}

@misc{chowdhery2022,
  author = {Chowdhery, Aakanksha and Narang, Sharan and Devlin, Jacob and Bosma, Maarten and others},
  title = {{PaLM}: Scaling Language Modeling with Pathways},
  year = {2022},
}

@techreport{radford2019,
  author = {Radford, Alec and Wu, Jeffrey and Child, Rewon and Luan, David},
  title = {Language Models are Unsupervised Multitask Learners},
  institution = {OpenAI},
  year = {2019},
}
"""

CITED = """\
facts:
  S02.gpt2_vocab: P
  S04.adam: P
numbers:
  - key: ch02.gpt2.vocab
    value: 50257
    digits: 5
    unit: tokens
    what: GPT-2 vocabulary
    cite: radford2019
    locator: §2.3
    fact: S02.gpt2_vocab
    status: P
  - key: ch04.adam.beta2
    value: 0.999
    digits: 3
    unit: ""
    what: Adam default β₂
    cite: kingma2014
    locator: Alg. 1
    fact: S04.adam
    status: P
"""

MEASURED = Result("ch01.loss", 2.5, 0.1, 3, "nats", "loss", "run ch01.default 9f3c2a1e", 3)

DECK = """\
---
title: Cites
---

# Cover

---

# Prose and lists

Adam [@kingma2014] and AdamW [@loshchilov2019, §2.1]. @kaplan2020 shows the rule.

- Both [see @kingma2014; @loshchilov2019]
- GPT-2 reads {{ ch02.gpt2.vocab | int }} tokens

| work | where |
|---|---|
| Adam | [@kingma2014, p. 2] |

<!--
Notes cite [@hoffmann2022] and [@chowdhery2022].
-->

---

# Caption

![A box](box.png "After [@kaplan2020]")

<!--
A figure.
-->
"""

#: The works of DECK in the style's order (author, then year).
ORDER = ["chowdhery2022", "hoffmann2022", "kaplan2020", "kingma2014", "loshchilov2019", "radford2019"]


def make_project(root: Path, decks: dict[str, str], bib: str = BIB, cited: str = CITED) -> Project:
    (root / "decks").mkdir(parents=True)
    (root / "styles").mkdir()
    (root / "results").mkdir()
    shutil.copy(STYLE, root / "styles" / STYLE.name)
    (root / "references.bib").write_text(bib, encoding="utf-8")
    (root / "results" / "cited.yaml").write_text(cited, encoding="utf-8")
    for name, text in decks.items():
        (root / "decks" / name).write_text(text, encoding="utf-8")
    Results([MEASURED]).write(root / "results" / "results.md")
    project = Project(root)
    write_cited(project)
    return project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("cites"), {"01-cites.md": DECK})


@pytest.fixture(scope="module")
def cited_deck(project: Project) -> d.Deck:
    return bind_project(project).deck(project.root / "decks" / "01-cites.md")


def cites(deck: d.Deck) -> list[d.Cite]:
    return [c for s in deck.slides for c in d.slide_cites(s)]


# ---------------------------------------------------------------------- parsing


def test_each_citation_form_is_a_positioned_node() -> None:
    slide = parse_text(DECK, Path("x.md")).slides[1]
    found = [
        (c.in_text, [(i.prefix, i.key, i.locator, i.line, i.col) for i in c.items], c.line, c.col)
        for c in d.slide_cites(slide)
    ]
    assert found == [
        (False, [("", "kingma2014", "", 11, 7)], 11, 6),
        (False, [("", "loshchilov2019", "§2.1", 11, 31)], 11, 30),
        (True, [("", "kaplan2020", "", 11, 55)], 11, 55),
        (False, [("see", "kingma2014", "", 13, 13), ("", "loshchilov2019", "", 13, 26)], 13, 8),
        (False, [("", "kingma2014", "p. 2", 18, 11)], 18, 10),
        (False, [("", "hoffmann2022", "", 21, 13)], 21, 12),
        (False, [("", "chowdhery2022", "", 21, 33)], 21, 32),
    ]


@pytest.mark.parametrize("text", ["me@example.org", "[@x](https://x.org)", "\\@x", "`[@x]`", "[see @]"])
def test_what_is_not_a_citation(text: str) -> None:
    slide = parse_text(f"# A\n\n{text}\n", Path("x.md")).slides[0]
    assert list(d.slide_cites(slide)) == []


# ---------------------------------------------------------------------- formatting


def test_every_form_is_formatted_by_the_style(cited_deck: d.Deck) -> None:
    assert [(c.text, c.target) for c in cites(cited_deck)] == [
        ("(Kingma and Ba, 2014)", "references"),
        ("(Loshchilov and Hutter, 2019, sec. 2.1)", "references"),
        ("Kaplan et al. (2020)", "references"),
        ("(see Kingma and Ba, 2014; Loshchilov and Hutter, 2019)", "references"),
        ("(Kingma and Ba, 2014, p. 2)", "references"),
        ("(Hoffmann et al., 2022)", "references"),
        ("(Chowdhery et al., 2022)", "references"),
    ]
    first = cites(cited_deck)[0]
    assert first.reference == (
        "Kingma, D.P. and Ba, J. (2014) “Adam: A Method for Stochastic Optimization”. "
        "arXiv. Available at: https://arxiv.org/abs/1412.6980."
    )
    caption = cited_deck.slides[2].blocks[1]
    assert isinstance(caption, d.Figure) and caption.title == "After (Kaplan et al., 2020)"


def test_html_links_each_citation_to_the_references_slide_with_the_full_reference(cited_deck: d.Deck) -> None:
    page = html.render_deck(cited_deck, {})
    assert (
        '<a class="cite" href="#/references" data-cites="kingma2014" title="Kingma, D.P. and Ba, J. (2014) '
        '“Adam: A Method for Stochastic Optimization”. arXiv. Available at: https://arxiv.org/abs/1412.6980.">'
        "(Kingma and Ba, 2014)</a>"
    ) in page
    assert (
        '<a class="cite" href="#/references" data-cites="loshchilov2019" title="Loshchilov, I. and Hutter, F. '
        '(2019) “Decoupled Weight Decay Regularization”, ICLR.">'
        "(Loshchilov and Hutter, 2019, sec. 2.1)</a>"
    ) in page
    assert (
        'data-cites="kaplan2020" title="Kaplan, J. et al. (2020) “Scaling Laws for Neural Language Models”.">'
        "Kaplan et al. (2020)</a> shows" in page
    )
    assert 'data-cites="kingma2014 loshchilov2019" title="Kingma, D.P.' in page
    assert (
        '<td><a class="cite" href="#/references" data-cites="kingma2014" title="Kingma, D.P. and Ba, J. (2014) '
        '“Adam: A Method for Stochastic Optimization”. arXiv. Available at: https://arxiv.org/abs/1412.6980.">'
        "(Kingma and Ba, 2014, p. 2)</a></td>"
    ) in page
    assert 'Notes cite <a class="cite" href="#/references" data-cites="hoffmann2022"' in page
    assert "<figcaption>After (Kaplan et al., 2020)</figcaption>" in page
    assert '<section id="references"' in page and '<section id="references-2"' in page


def test_a_title_with_quotes_is_escaped_in_the_tooltip(tmp_path: Path) -> None:
    bib = '@misc{q2020, author = {O\'Brien, Pat}, title = {A "quoted" <b>title</b> & more}, year = {2020}}\n'
    project = make_project(tmp_path, {"01-q.md": "# Q\n\nSee [@q2020].\n"}, bib, "")
    deck = bind_project(project).deck(project.root / "decks" / "01-q.md")
    page = html.render_deck(deck, {})
    assert (
        '<a class="cite" href="#/references" data-cites="q2020" title="O&#39;Brien, P. (2020) “A &#34;quoted&#34; '
        '&lt;b&gt;title&lt;/b&gt; &amp; more”.">(O&#39;Brien, 2020)</a>'
    ) in page
    assert "<p>O&#39;Brien, P. (2020) “A &#34;quoted&#34; &lt;b&gt;title&lt;/b&gt; &amp; more”.</p>" in page


def test_pptx_shows_the_citation_text_and_the_full_references_in_the_notes(cited_deck: d.Deck, tmp_path: Path) -> None:
    target = tmp_path / "deck.pptx"
    pptx.write_deck(cited_deck, target, {})
    prs = Presentation(str(target))
    slide = prs.slides[1]
    text = "\n".join(shape.text_frame.text for shape in slide.shapes if shape.has_text_frame)
    assert (
        "Adam (Kingma and Ba, 2014) and AdamW (Loshchilov and Hutter, 2019, sec. 2.1). "
        "Kaplan et al. (2020) shows the rule."
    ) in text
    assert "Both (see Kingma and Ba, 2014; Loshchilov and Hutter, 2019)" in text
    cells = [cell.text for shape in slide.shapes if shape.has_table for row in shape.table.rows for cell in row.cells]
    assert "(Kingma and Ba, 2014, p. 2)" in cells
    notes = slide.notes_slide.notes_text_frame.text.split("\n")
    at = notes.index("References:")
    assert notes[at + 1 :] == [
        "Kingma, D.P. and Ba, J. (2014) “Adam: A Method for Stochastic Optimization”. arXiv. "
        "Available at: https://arxiv.org/abs/1412.6980.",
        "Loshchilov, I. and Hutter, F. (2019) “Decoupled Weight Decay Regularization”, ICLR.",
        "Kaplan, J. et al. (2020) “Scaling Laws for Neural Language Models”.",
        "Hoffmann, J. et al. (2022) “Training Compute-Optimal Large Language Models”.",
        "Chowdhery, A. et al. (2022) “PaLM: Scaling Language Modeling with Pathways”.",
        "Radford, A. et al. (2019) Language Models are Unsupervised Multitask Learners. OpenAI.",
    ]
    assert "Notes cite (Hoffmann et al., 2022) and (Chowdhery et al., 2022)." in notes


# ---------------------------------------------------------------------- the references slide


def _listed(slide: d.Slide) -> list[str]:
    return [d.plain_text(b.children) for b in slide.blocks if isinstance(b, d.Paragraph)]


def test_the_references_slides_list_exactly_the_decks_works_in_the_styles_order(cited_deck: d.Deck) -> None:
    first, second = cited_deck.slides[-2:]
    assert (first.layout, first.id, first.title, first.index) == ("references", "references", "References", 4)
    assert (second.layout, second.id, second.title, second.index) == (
        "references",
        "references-2",
        "References (2/2)",
        5,
    )
    listed = _listed(first) + _listed(second)
    assert [text.split(" ")[0].rstrip(",") for text in listed] == [
        "Chowdhery",
        "Hoffmann",
        "Kaplan",
        "Kingma",
        "Loshchilov",
        "Radford",
    ]
    assert listed[3] == (
        "Kingma, D.P. and Ba, J. (2014) “Adam: A Method for Stochastic Optimization”. arXiv. "
        "Available at: https://arxiv.org/abs/1412.6980."
    )


def test_every_output_lists_the_references_in_order(cited_deck: d.Deck, project: Project, tmp_path: Path) -> None:
    names = ["Chowdhery, A.", "Hoffmann, J.", "Kaplan, J.", "Kingma, D.P.", "Loshchilov, I.", "Radford, A."]

    def in_order(text: str) -> bool:
        at = [text.find(name) for name in names]
        return -1 not in at and at == sorted(at)

    page = html.render_deck(cited_deck, {})
    assert in_order(page[page.index('<section id="references"') :])
    target = tmp_path / "deck.pptx"
    pptx.write_deck(cited_deck, target, {})
    prs = Presentation(str(target))
    shown = "\n".join(
        shape.text_frame.text for slide in list(prs.slides)[-2:] for shape in slide.shapes if shape.has_text_frame
    )
    assert in_order(shown) and len(prs.slides) == 5
    index = bind_project(project).index
    for flavor in ("md", "marp"):
        written = markdown_out.write_deck(cited_deck, tmp_path / flavor, {}, flavor, index).read_text()
        assert in_order(written[written.index("# References") :]), flavor
        assert "Adam (Kingma and Ba, 2014) and AdamW (Loshchilov and Hutter, 2019, sec. 2.1)." in written
        assert "Kaplan et al. (2020) shows the rule." in written


def test_a_cited_number_pulls_its_work_into_the_references_and_the_notes(cited_deck: d.Deck) -> None:
    prose = cited_deck.slides[1]
    assert [w.key for w in prose.works] == [
        "kingma2014",
        "loshchilov2019",
        "kaplan2020",
        "hoffmann2022",
        "chowdhery2022",
        "radford2019",
    ]
    only_number = "# N\n\nGPT-2 reads {{ ch02.gpt2.vocab | int }} tokens.\n"
    assert "[@" not in only_number


def test_a_number_alone_brings_in_its_work(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"01-n.md": "# N\n\nGPT-2 reads {{ ch02.gpt2.vocab | int }} tokens.\n"})
    deck = bind_project(project).deck(project.root / "decks" / "01-n.md")
    assert [w.key for w in deck.slides[0].works] == ["radford2019"]
    assert [s.layout for s in deck.slides] == ["cover", "references"]
    assert _listed(deck.slides[1]) == [
        "Radford, A. et al. (2019) Language Models are Unsupervised Multitask Learners. OpenAI."
    ]
    target = tmp_path / "n.pptx"
    pptx.write_deck(deck, target, {})
    notes = Presentation(str(target)).slides[0].notes_slide.notes_text_frame.text.split("\n")
    assert notes[-3:] == [
        "ch02.gpt2.vocab: cited: Radford et al., 2019, sec. 2.3",
        "References:",
        "Radford, A. et al. (2019) Language Models are Unsupervised Multitask Learners. OpenAI.",
    ]


def test_layout_references_places_the_slide_and_the_headmatter_turns_it_off(tmp_path: Path) -> None:
    placed = (
        "# A\n\nSee [@kingma2014].\n\n---\nlayout: references\nid: works\n---\n\n# Works\n\n"
        "---\nlayout: end\n---\n\n# End\n"
    )
    off = "---\nreferences: false\n---\n\n# A\n\nSee [@kingma2014].\n"
    project = make_project(tmp_path, {"01-placed.md": placed, "02-off.md": off})
    every = bind_project(project)
    deck = every.deck(project.root / "decks" / "01-placed.md")
    assert [(s.layout, s.id, s.title) for s in deck.slides] == [
        ("cover", None, "A"),
        ("references", "works", "Works"),
        ("end", None, "End"),
    ]
    assert _listed(deck.slides[1])[0].startswith("Kingma, D.P. and Ba, J. (2014)")
    assert cites(deck)[0].target == "works"
    assert 'href="#/works"' in html.render_deck(deck, {})
    quiet = every.deck(project.root / "decks" / "02-off.md")
    assert [s.layout for s in quiet.slides] == ["cover"]
    assert (
        '<span class="cite" data-cites="kingma2014" title="Kingma, D.P. and Ba, J. (2014) “Adam: A Method for '
        'Stochastic Optimization”. arXiv. Available at: https://arxiv.org/abs/1412.6980.">(Kingma and Ba, 2014)'
        "</span>"
    ) in html.render_deck(quiet, {})


def test_a_deck_that_cites_nothing_is_unchanged(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"01-plain.md": "# A\n\nNo citations, {{ ch01.loss }} nats.\n"})
    deck = bind_project(project).deck(project.root / "decks" / "01-plain.md")
    assert [s.layout for s in deck.slides] == ["cover"] and deck.slides[0].works == ()


# ---------------------------------------------------------------------- cited rows of results.md


def test_results_cited_rows_come_only_from_the_cited_numbers_file(project: Project) -> None:
    text = project.results_path.read_text(encoding="utf-8")
    results = Results.parse(text)
    assert results.dumps() == text  # round trip, byte for byte
    assert [(r.key, r.value, r.digits, r.unit, r.what, r.source) for r in results.values() if r.cited] == [
        ("ch02.gpt2.vocab", 50257, 5, "tokens", "GPT-2 vocabulary", "cited: Radford et al., 2019, sec. 2.3"),
        ("ch04.adam.beta2", 0.999, 3, "", "Adam default β₂", "cited: Kingma and Ba, 2014, Alg. 1"),
    ]
    assert results["ch01.loss"] == MEASURED
    assert write_cited(project) == []  # nothing moves a second time
    assert project.results_path.read_text(encoding="utf-8") == text


def test_update_cited_adds_changes_and_removes_cited_rows(project: Project) -> None:
    stale = Result("ch07.zloss", 1e-4, None, None, "", "z-loss", "cited: Chowdhery et al. 2022, §5", 1)
    old = Result("ch04.adam.beta2", 0.99, None, None, "", "Adam default β₂", "cited: someone", 3)
    results = Results([MEASURED, old, stale])
    rows = cited_rows(load_library(project.root))
    assert update_cited(results, rows) == ["ch02.gpt2.vocab", "ch04.adam.beta2", "ch07.zloss"]
    assert "ch07.zloss" not in results and results["ch01.loss"] == MEASURED
    assert update_cited(results, rows) == []
    text = results.dumps()
    assert Results.parse(text).dumps() == text


def test_the_projects_cited_rows_are_those_of_its_cited_numbers_file() -> None:
    library = load_library(REPO)
    results = Results.read(REPO / "results" / "results.md")
    assert {k: r for k, r in results.items() if r.cited} == {r.key: r for r in cited_rows(library)}
    assert all(set(n.status.split("/")) <= set("PSD") for n in library.cited.numbers)
    keys = [n.key for n in library.cited.numbers]
    assert len(keys) == len(set(keys)) and any(k.startswith("ch01.") for k in keys)
    assert all(n.cite in library.bibliography.entries for n in library.cited.numbers)


def test_slidegen_holds_no_result_key_or_work_of_this_project() -> None:
    import ast

    results = Results.read(REPO / "results" / "results.md")
    words = [*results, *load_library(REPO).bibliography.entries]
    for path in sorted((REPO / "slidegen").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):  # docstrings (of modules, classes, functions and fields) may hold examples
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                node.value.value = "" if isinstance(node.value.value, str) else node.value.value
        code = ast.unparse(tree)
        held = [word for word in words if word in code]
        assert not held, f"{path.relative_to(REPO)} holds {held}"


def test_the_added_references_slide_comes_before_a_closing_end_slide(tmp_path: Path) -> None:
    ending = "# A\n\nSee [@kingma2014].\n\n---\nlayout: end\nid: next\n---\n\n# Next\n"
    plain = "# A\n\nSee [@kingma2014].\n\n---\n\n# B\n"
    project = make_project(tmp_path, {"01-end.md": ending, "02-plain.md": plain})
    every = bind_project(project)
    deck = every.deck(project.root / "decks" / "01-end.md")
    assert [(s.index, s.layout, s.title) for s in deck.slides] == [
        (1, "cover", "A"),
        (2, "references", "References"),
        (3, "end", "Next"),
    ]
    assert every.index.slide_number("01-end.md", "next") == 3
    other = every.deck(project.root / "decks" / "02-plain.md")
    assert [(s.index, s.layout) for s in other.slides] == [(1, "cover"), (2, "default"), (3, "references")]


def test_a_new_wording_is_written_but_only_a_new_number_is_listed_as_moved(project: Project, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project.root, copy)
    moved = Project(copy)
    cited = copy / "results" / "cited.yaml"
    text = cited.read_text(encoding="utf-8")
    cited.write_text(text.replace("what: GPT-2 vocabulary", "what: the GPT-2 vocabulary"), encoding="utf-8")
    assert write_cited(moved) == []
    assert Results.read(moved.results_path)["ch02.gpt2.vocab"].what == "the GPT-2 vocabulary"
    cited.write_text(text.replace("value: 50257", "value: 50000"), encoding="utf-8")
    assert [(c.key, c.old.value if c.old else None, c.new.value if c.new else None) for c in write_cited(moved)] == [
        ("ch02.gpt2.vocab", 50257, 50000)
    ]
