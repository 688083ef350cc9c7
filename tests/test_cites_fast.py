"""Citations read and formatted fast: cited.yaml through libyaml with PyYAML's own nodes and marks, and each
deck's formatted citations kept on disk, formatted again only when what they are made from changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from slidegen.bind import cited, citestyle
from slidegen.bind.bibliography import parse_bibliography
from slidegen.bind.citestyle import CitationStyle, Cluster
from tests.test_cites import BIB, CITED, DECK, make_project

REPO = Path(__file__).resolve().parents[1]
STYLE = REPO / "styles" / "harvard-cite-them-right.csl"


def slow_parse(text: str, monkeypatch: pytest.MonkeyPatch) -> cited.CitedNumbers:
    """What the pure-Python parser and a YAML round trip per value give (slidegen before libyaml)."""
    with monkeypatch.context() as patch:
        patch.setattr(cited, "_FAST_LOADER", None)
        patch.setattr(cited, "_value", lambda node: yaml.safe_load(yaml.serialize(node)))
        return cited.parse_cited(text)


ODD = [
    CITED,
    CITED.replace("value: 0.999", "value: 9.99e-1").replace("digits: 3", "digits: 03"),
    CITED.replace('unit: ""', "unit: 'β₂ ünits'").replace("what: Adam default β₂", "what: >\n      folded\n      text"),
    CITED.replace("locator: §2.3", "locator: !!str 2.3").replace("status: P", "status: ~", 1),
    CITED.replace("value: 50257", "value: [1, 2]"),
    CITED.replace("  - key: ch04.adam.beta2", "  - kee: ch04.adam.beta2"),
    CITED.replace("digits: 5", "digits: yes").replace("value: 0.999", "value: 2014-01-02"),
    "facts: {S: P}\nnumbers:\n  - {key: a.b, value: 1, digits: 1, what: w, cite: c, fact: S, status: P}\n",
    "\tfacts: x\n",  # a tab: malformed
    "numbers:\n  - key: [unclosed\n",
    "facts:\n  a: P\n  a: S\nnumbers: []\n",
    "just a string\n",
    "",
]


@pytest.mark.parametrize("text", ODD)
def test_cited_numbers_read_by_libyaml_equal_pure_pythons_with_every_position(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = cited.parse_cited(text), slow_parse(text, monkeypatch)
    assert fast == slow
    assert [(n.line, dict(n.at)) for n in fast.numbers] == [(n.line, dict(n.at)) for n in slow.numbers]
    assert [str(e) for e in fast.errors] == [str(e) for e in slow.errors]


def test_the_projects_cited_numbers_read_the_same_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO / "results" / "cited.yaml").read_text(encoding="utf-8")
    fast, slow = cited.parse_cited(text), slow_parse(text, monkeypatch)
    assert fast == slow and fast.numbers
    assert [(n.line, dict(n.at)) for n in fast.numbers] == [(n.line, dict(n.at)) for n in slow.numbers]
    assert dict(fast.fact_at) == dict(slow.fact_at)


class Counting:
    """Counts the times citeproc formats (the cache missed)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.real = real = CitationStyle._format

        def counted(style: CitationStyle, *args: object) -> citestyle.Formatted:
            self.calls += 1
            return real(style, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(CitationStyle, "_format", counted)


def style(tmp_path: Path, bib: str = BIB, csl: Path = STYLE) -> CitationStyle:
    return CitationStyle(csl, parse_bibliography(bib).entries, tmp_path / "cache")


CLUSTERS = [
    Cluster((("kingma2014", "§2", ""),)),
    Cluster((("kaplan2020", "", "see"), ("loshchilov2019", "p. 3", ""))),
    Cluster((("kaplan2020", "", ""),), in_text=True),
]


def test_formatted_citations_are_kept_and_found_again_with_the_same_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uncached = CitationStyle(STYLE, parse_bibliography(BIB).entries).format(CLUSTERS, ["radford2019"])
    count = Counting(monkeypatch)
    first = style(tmp_path).format(CLUSTERS, ["radford2019"])
    assert count.calls == 1 and first == uncached
    again = style(tmp_path).format(CLUSTERS, ["radford2019"])
    assert count.calls == 1 and again == uncached  # from the cache: citeproc did not run
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1


def test_each_input_of_the_formatted_citations_misses_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = Counting(monkeypatch)
    style(tmp_path).format(CLUSTERS, ["radford2019"])
    assert count.calls == 1
    changes = [
        (style(tmp_path), [Cluster((("kingma2014", "§3", ""),)), *CLUSTERS[1:]], ["radford2019"]),  # a locator
        (style(tmp_path), [*CLUSTERS[:2], Cluster((("hoffmann2022", "", ""),), True)], ["radford2019"]),  # a key
        (style(tmp_path), CLUSTERS, []),  # a cited number's work
        (style(tmp_path), [Cluster((("kingma2014", "§2", "cf."),)), *CLUSTERS[1:]], ["radford2019"]),  # a prefix
        (style(tmp_path), [*CLUSTERS[:2], Cluster((("kaplan2020", "", ""),))], ["radford2019"]),  # not in-text
        (style(tmp_path, BIB.replace("Scaling Laws", "Scaling laws")), CLUSTERS, ["radford2019"]),  # a work's text
    ]
    for number, (changed, clusters, extra) in enumerate(changes, start=2):
        formatted = changed.format(clusters, extra)
        assert count.calls == number
        assert formatted == count.real(CitationStyle(STYLE, changed.entries), clusters, extra)
    other = tmp_path / "other.csl"  # the style file's bytes
    other.write_text(STYLE.read_text(encoding="utf-8").replace("</style>", "<!-- edited --></style>"), encoding="utf-8")
    style(tmp_path, csl=other).format(CLUSTERS, ["radford2019"])
    assert count.calls == len(changes) + 2
    # a work no citation names does not matter
    style(tmp_path, BIB.replace("Language Models are Unsupervised", "LMs are unsupervised")).format([CLUSTERS[0]], [])
    calls = count.calls
    style(tmp_path).format([CLUSTERS[0]], [])
    assert count.calls == calls


def test_a_build_formats_a_decks_citations_once_while_its_citations_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slidegen.pipeline.build import BuildOptions, build

    project = make_project(tmp_path / "p", {"01-cites.md": DECK})
    (project.root / "decks" / "box.png").write_bytes(_png())
    monkeypatch.chdir(project.root)
    count = Counting(monkeypatch)
    assert not build(project, None, BuildOptions(formats=("html",), jobs=1)).failed
    assert count.calls == 1
    page = (project.build_dir / "html" / "01-cites.html").read_bytes()
    deck = project.root / "decks" / "01-cites.md"
    deck.write_text(DECK.replace("# Cover", "# The cover"), encoding="utf-8")  # no citation changed
    assert not build(project, None, BuildOptions(formats=("html",), jobs=1)).failed
    assert count.calls == 1
    deck.write_text(DECK, encoding="utf-8")
    shutil.rmtree(project.build_dir / "html")
    assert not build(project, None, BuildOptions(formats=("html",), jobs=1)).failed
    assert count.calls == 1 and (project.build_dir / "html" / "01-cites.html").read_bytes() == page
    deck.write_text(DECK.replace("§2.1]", "§2.2]"), encoding="utf-8")  # a locator moved
    assert not build(project, None, BuildOptions(formats=("html",), jobs=1)).failed
    assert count.calls == 2


def _png() -> bytes:
    import base64

    return base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    )
