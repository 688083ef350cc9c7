"""``slidegen check``'s citation checks: each problem at its exact place, with its exact message."""

from __future__ import annotations

from pathlib import Path

from test_cites import BIB, CITED, make_project

from slidegen.bind.bibliography import parse_bibliography
from slidegen.bind.cited import parse_cited
from slidegen.check.project import check_project

SHOWN = "# Numbers\n\nGPT-2 reads {{ ch02.gpt2.vocab | int }} tokens; β₂ is {{ ch04.adam.beta2 }}.\n"
ALL_WORKS = "# Works\n\n[@kingma2014; @loshchilov2019; @kaplan2020; @hoffmann2022; @chowdhery2022; @radford2019]\n"


def cite_lines(root: Path) -> list[str]:
    """Every diagnostic of the project but results.md's own "not cited" warnings."""
    return [str(d) for d in check_project(root) if "is not cited by any slide" not in d.message]


def test_a_clean_project_has_no_citation_problem(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS.replace("# Works\n\n", "")})
    assert cite_lines(tmp_path) == []


def test_unknown_citation_key_is_located_with_a_suggestion(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": SHOWN + "\nAdam [@kingma2041] and @loshchilov2091.\n" + "\n" + ALL_WORKS[9:]})
    assert cite_lines(tmp_path) == [
        "decks/01-a.md:5:7: error: unknown citation key 'kingma2041' (did you mean 'kingma2014'?)",
        "decks/01-a.md:5:24: error: unknown citation key 'loshchilov2091' (did you mean 'loshchilov2019'?)",
    ]


def test_cited_number_whose_work_is_missing(tmp_path: Path) -> None:
    cited = CITED.replace("cite: kingma2014", "cite: kingma2041")
    make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]}, cited=cited)
    assert cite_lines(tmp_path) == [
        "results/cited.yaml:19:11: error: cited number 'ch04.adam.beta2' cites 'kingma2041', which is not in "
        "references.bib (did you mean 'kingma2014'?)",
    ]


def test_malformed_and_duplicate_bibtex_entries_at_their_lines() -> None:
    text = BIB + "\n@misc{broken,\n  title = {no end\n\n@misc{kaplan2020,\n  title = {again},\n}\n"
    bib = parse_bibliography(text)
    first = BIB.count("\n", 0, BIB.index("@misc{kaplan2020")) + 1
    end = BIB.count("\n") + 1
    assert [str(e) for e in bib.errors] == [
        f"references.bib:{end + 1}:1: error: malformed BibTeX entry: unexpected block start: `@misc`. "
        "Was still looking for field-value closing `}`",
        f"references.bib:{end + 4}:1: error: duplicate BibTeX key 'kaplan2020' (first at line {first})",
    ]
    assert list(bib.entries) == [
        "kingma2014",
        "loshchilov2019",
        "kaplan2020",
        "hoffmann2022",
        "chowdhery2022",
        "radford2019",
    ]


def test_check_reports_the_bibtex_problems(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]}, bib=BIB + "\n@misc{kingma2014, title = {x}}\n")
    line = BIB.count("\n") + 2
    assert cite_lines(tmp_path) == [
        f"references.bib:{line}:1: error: duplicate BibTeX key 'kingma2014' (first at line 1)"
    ]


def test_cited_number_on_an_unknown_fact_or_an_unverified_one(tmp_path: Path) -> None:
    cited = CITED.replace("fact: S04.adam", "fact: S04.adma").replace("  S02.gpt2_vocab: P", "  S02.gpt2_vocab: U")
    make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]}, cited=cited)
    assert cite_lines(tmp_path) == [
        "results/cited.yaml:2:3: error: fact 'S02.gpt2_vocab' has status 'U': only P, S or D items may be cited",
        "results/cited.yaml:12:11: error: cited number 'ch02.gpt2.vocab' rests on fact 'S02.gpt2_vocab' of status "
        "'U': only P, S or D items may be cited",
        "results/cited.yaml:21:11: error: cited number 'ch04.adam.beta2' rests on unknown fact 'S04.adma' "
        "(did you mean 'S04.adam'?); list it under 'facts:' with its status",
    ]


def test_a_status_that_differs_from_the_facts_list(tmp_path: Path) -> None:
    make_project(
        tmp_path,
        {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]},
        cited=CITED.replace("status: P\n  - key: ch04", "status: S\n  - key: ch04"),
    )
    assert cite_lines(tmp_path) == [
        "results/cited.yaml:13:13: error: status 'S' of cited number 'ch02.gpt2.vocab' differs from fact "
        "'S02.gpt2_vocab', which has 'P'",
    ]


def test_works_never_cited_and_numbers_never_shown_are_warnings(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": "# A\n\nAdam [@kingma2014] and {{ ch02.gpt2.vocab }}.\n"})
    assert cite_lines(tmp_path) == [
        "references.bib:9:1: warning: work 'loshchilov2019' is never cited",
        "references.bib:16:1: warning: work 'kaplan2020' is never cited",
        "references.bib:22:1: warning: work 'hoffmann2022' is never cited",
        "references.bib:28:1: warning: work 'chowdhery2022' is never cited",
        "results/cited.yaml:14:10: warning: cited number 'ch04.adam.beta2' is not shown on any slide",
    ]
    not_cited = [str(d) for d in check_project(tmp_path) if "is not cited by any slide" in d.message]
    assert not [line for line in not_cited if "ch04.adam.beta2" in line]  # said once, in cited.yaml


def test_a_cited_row_not_from_the_cited_numbers_file_is_an_error(tmp_path: Path) -> None:
    project = make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]})
    text = project.results_path.read_text(encoding="utf-8")
    text = text.replace("cited: Kingma and Ba, 2014, Alg. 1", "cited: Kingma & Ba 2014")
    project.results_path.write_text(text, encoding="utf-8")
    line = text.split("\n").index(next(t for t in text.split("\n") if t.startswith("| ch04.adam.beta2"))) + 1
    assert cite_lines(tmp_path) == [
        f"results/results.md:{line}:1: error: cited row 'ch04.adam.beta2' differs from results/cited.yaml; "
        "run `slidegen run` to rewrite it",
    ]


def test_malformed_cited_numbers_file_is_located() -> None:
    bad = parse_cited(
        "numbers:\n  - key: ch01.x\n    value: lots\n    digits: 0\n    what: x\n    cite: a\n"
        "    fact: F\n    status: P\n    colour: red\n  - key: ch01.y\n"
    )
    assert [str(e) for e in bad.errors] == [
        "results/cited.yaml:9:5: error: unknown field 'colour' of a cited number; the fields are key, value, "
        "digits, unit, what, cite, locator, fact, status",
        "results/cited.yaml:10:5: error: cited number without 'value', 'digits', 'what', 'cite', 'fact', 'status'",
    ]
    assert [
        str(e)
        for e in parse_cited(
            "numbers:\n  - key: ch01.x\n    value: lots\n    digits: 1\n    what: x\n"
            "    cite: a\n    fact: F\n    status: P\n"
        ).errors
    ] == ["results/cited.yaml:3:12: error: value 'lots' of 'ch01.x' is not a number"]
    assert [str(e) for e in parse_cited("numbers: [\n").errors] == [
        "results/cited.yaml:2:1: error: malformed YAML: expected the node content, but found '<stream end>'"
    ]


def test_an_unknown_style_is_an_error_at_the_headmatter(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": "---\ncsl: harvard\n---\n\n" + SHOWN + "\n" + ALL_WORKS[9:]})
    assert cite_lines(tmp_path) == [
        "decks/01-a.md:2:6: error: unknown CSL style 'harvard' (did you mean 'harvard-cite-them-right'?); "
        "the styles are harvard-cite-them-right, author-date",
    ]


def test_a_malformed_style_is_an_error_at_its_line(tmp_path: Path) -> None:
    make_project(tmp_path, {"01-a.md": SHOWN + "\n" + ALL_WORKS[9:]})
    (tmp_path / "styles" / "harvard-cite-them-right.csl").write_text(
        '<?xml version="1.0"?>\n<style>\n  <info>\n</style>\n', encoding="utf-8"
    )
    assert [line for line in cite_lines(tmp_path) if "error" in line] == [
        "styles/harvard-cite-them-right.csl:4:10: error: malformed CSL style: Opening and ending tag mismatch: "
        "info line 3 and style, line 4, column 9",
    ]
