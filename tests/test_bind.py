"""Binding references: every filter's exact output, substitution outside text, and each error at its position."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from slidegen.bind.numbers import FilterError, bind_deck, format_result
from slidegen.deck.nodes import Deck, Math, Paragraph, Ref, Slide, Source, Text
from slidegen.read.parse import parse_deck
from slidegen.record.results import Result, Results

LOSS = Result(
    "ch01.val_loss.final",
    2.27634,
    0.00213,
    3,
    "nats",
    "validation loss after 2,000 steps",
    "run ch01.default 9f3c2a1e",
    4,
)
INIT = Result(
    "ch01.val_loss.init", 4.16719, 0.0004, 3, "nats", "validation loss at step 0", "run ch01.default 9f3c2a1e", 4
)
FRACTION = Result("ch01.frac", 0.371, None, None, "", "a fraction", "run ch01.default 9f3c2a1e", 3)
PARAMS = Result("ch01.params", 5376, None, None, "", "parameters", "run ch01.default 9f3c2a1e", 3)
AVOGADRO = Result("ch01.big", 6.02214e23, None, None, "", "a big number", "cited: Somebody 1909, p. 1", 3)
EPS = Result("ch04.adam.eps", 1e-8, None, None, "", "Adam default ε", "cited: Kingma & Ba 2014, Alg. 1", 1)
RESULTS = Results([LOSS, INIT, FRACTION, PARAMS, AVOGADRO, EPS])


@pytest.mark.parametrize(
    ("result", "filters", "text", "tex"),
    [
        (LOSS, (), "2.276", "2.276"),
        (PARAMS, (), "5376", "5376"),  # the integer part is never rounded away
        (FRACTION, (), "0.371", "0.371"),
        (replace(LOSS, value=2.3, digits=4), (), "2.300", "2.300"),  # significant zeros stay
        (replace(LOSS, value=-0.00001, digits=2), (), "-0.000010", "-0.000010"),
        (replace(LOSS, value=-0.0001, digits=1), ("fmt('.2f')",), "-0.00", "-0.00"),
        (LOSS, ("pm",), "2.276 ± 0.002", r"2.276 \pm 0.002"),
        (FRACTION, ("pct",), "37.1%", r"37.1\%"),
        (replace(FRACTION, value=0.0121), ("pct",), "1.21%", r"1.21\%"),
        (AVOGADRO, ("sci",), "6.02 × 10²³", r"6.02 \times 10^{23}"),
        (EPS, ("sci",), "1 × 10⁻⁸", r"1 \times 10^{-8}"),
        (replace(EPS, value=9.996e-5, digits=3), ("sci",), "1.00 × 10⁻⁴", r"1.00 \times 10^{-4}"),
        (PARAMS, ("int",), "5,376", "5{,}376"),
        (replace(PARAMS, value=1234567.5), ("int",), "1,234,568", "1{,}234{,}568"),
        (AVOGADRO, ("int",), "602,214,000,000,000,000,000,000", "602{,}214{,}000{,}000{,}000{,}000{,}000{,}000"),
        (AVOGADRO, (), "602214000000000000000000", "602214000000000000000000"),  # no float noise
        (replace(LOSS, value=2.665, digits=3), (), "2.67", "2.67"),  # half up, as written in results.md
        (replace(LOSS, value=0.0), (), "0.000", "0.000"),
        (replace(PARAMS, value=-5376.4), ("int",), "-5,376", "-5{,}376"),
        (LOSS, ('fmt(".3g")',), "2.28", "2.28"),
        (FRACTION, ("fmt('.1%')",), "37.1%", r"37.1\%"),
        (PARAMS, ('fmt(",.1f")',), "5,376.0", "5{,}376.0"),
    ],
)
def test_each_filter_formats_exactly(result: Result, filters: tuple[str, ...], text: str, tex: str) -> None:
    assert format_result(result, filters) == text
    assert format_result(result, filters, math_mode=True) == tex


@pytest.mark.parametrize(
    ("result", "filters", "message"),
    [
        (LOSS, ("pmm",), "unknown filter 'pmm' (did you mean 'pm'?); known filters: pm, pct, sci, int, fmt(\".3g\")"),
        (LOSS, ("round",), "unknown filter 'round'; known filters: pm, pct, sci, int, fmt(\".3g\")"),
        (PARAMS, ("pm",), "filter 'pm' needs an sd, and 'ch01.params' has none"),
        (LOSS, ("pm(2)",), "filter 'pm' takes no arguments"),
        (LOSS, ("fmt",), 'malformed arguments to fmt: expected one quoted format spec, as in fmt(".3g")'),
        (LOSS, ("fmt(.3g)",), 'malformed arguments to fmt: expected one quoted format spec, as in fmt(".3g")'),
        (LOSS, ("fmt('.3q')",), "invalid format spec '.3q' in fmt: Unknown format code 'q' for object of type 'float'"),
        (LOSS, ("pm", "pct"), "one filter per reference, got pm | pct"),
    ],
)
def test_filter_errors(result: Result, filters: tuple[str, ...], message: str) -> None:
    with pytest.raises(FilterError) as e:
        format_result(result, filters)
    assert str(e.value) == message


DECK = """\
---
title: Loss {{ ch01.val_loss.final }} and \\{{ braces }}
---

# Loss reaches {{ ch01.val_loss.final | pm }}

From {{ ch01.val_loss.init }} to {{ ch01.val_los.final }} in $L = {{ ch01.val_loss.final }} + x^{{2}} + \\{{ a }}$.

| what | loss |
|---|---|
| final | {{ ch01.val_loss.final | pmm }} |

$$
\\ell = {{ ch01.frac | pct }}
$$

![Parameters: {{ ch01.params | int }}](fig:ch01.loss)

---

## Second {{ ch01.params | fmt(.3g) }}

$ {{ ch01.nope }} $

<!--
Say {{ ch01.frac | pct }} out loud.
-->
"""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decks live in ``decks/`` under a temporary working directory, so paths print as ``decks/x.md``."""
    (tmp_path / "decks").mkdir()
    monkeypatch.chdir(tmp_path)


def parsed(text: str = DECK) -> Deck:
    path = Path("decks/01-loop.md")
    path.write_text(text, encoding="utf-8")
    return parse_deck(path)


def cited(deck: Deck) -> list[tuple[str, int, int]]:
    """Every result key the bound deck's slides cite, as ``(key, line, col)`` in source order."""
    return [(s.key, s.line, s.col) for slide in deck.slides for s in slide.sources]


def footer_keys(slide: Slide) -> list[tuple[str, str]]:
    """``(key, source)`` of every known result a slide cites, once each, in order."""
    return list({s.key: s.source for s in slide.sources if s.source}.items())


def bound(text: str = DECK) -> tuple[Deck, list[str]]:
    out, diagnostics = bind_deck(parsed(text), RESULTS)
    return out, [str(d) for d in diagnostics]


def test_bind_fills_refs_and_substitutes_math_titles_captions_and_notes() -> None:
    deck, _ = bound()
    one, two = deck.slides
    assert deck.title == "Loss 2.276 and {{ braces }}"
    assert deck.headmatter["title"] == one.frontmatter["title"] == one.title == "Loss 2.276 and {{ braces }}"
    heading, para, table, math_block, figure = one.blocks
    assert [n.text for n in heading.children if isinstance(n, Ref)] == ["2.276 ± 0.002"]
    refs = [n for n in para.children if isinstance(n, Ref)]
    assert [(r.key, r.text) for r in refs] == [("ch01.val_loss.init", "4.167"), ("ch01.val_los.final", None)]
    assert dict(refs[0].info) == {
        "label": "4.167 ± 0.0004 nats (3 seeds) · validation loss at step 0 · run ch01.default",
        "key": "ch01.val_loss.init",
        "value": "4.16719",
        "sd": "0.0004",
        "n": "3",
        "unit": "nats",
        "source": "run ch01.default 9f3c2a1e",
        "what": "validation loss at step 0",
    }
    assert [n.tex for n in para.children if isinstance(n, Math)] == [r"L = 2.276 + x^{{2}} + \{{ a }}"]
    assert math_block.tex == r"\ell = 37.1\%"
    assert figure.alt == "Parameters: 5,376"
    assert two.notes == "Say 37.1% out loud."
    assert [n.text for n in two.notes_blocks[0].children if isinstance(n, Ref)] == ["37.1%"]


def test_bind_reports_each_problem_at_its_reference() -> None:
    _, diagnostics = bound()
    assert diagnostics == [
        "decks/01-loop.md:7:34: error: unknown result key 'ch01.val_los.final' (did you mean 'ch01.val_loss.final'?)",
        "decks/01-loop.md:11:11: error: unknown filter 'pmm' (did you mean 'pm'?); "
        'known filters: pm, pct, sci, int, fmt(".3g")',
        'decks/01-loop.md:21:11: error: malformed arguments to fmt: expected one quoted format spec, as in fmt(".3g")',
        "decks/01-loop.md:23:3: error: unknown result key 'ch01.nope'",
    ]


def test_bind_locates_references_in_frontmatter_and_math() -> None:
    text = "---\ntitle: A {{ ch01.nope }}\n---\n\n# Hi\n\n$$\nx = 1\n+ {{ ch01.val_loss.fnal }}\n$$\n"
    _, diagnostics = bound(text)
    assert diagnostics == [
        "decks/01-loop.md:2:10: error: unknown result key 'ch01.nope'",
        "decks/01-loop.md:9:3: error: unknown result key 'ch01.val_loss.fnal' (did you mean 'ch01.val_loss.final'?)",
    ]


def test_malformed_reference_in_math_and_title() -> None:
    text = "---\ntitle: A {{ ch01.x | }}\n---\n\n# Hi\n\n$x = {{ ch01.x | pm | }}$\n"
    _, diagnostics = bound(text)
    # as the parser says
    message = "malformed result reference '{}': write {{{{ chNN.key }}}} or {{{{ chNN.key | filter }}}}"
    assert diagnostics == [
        "decks/01-loop.md:2:10: error: " + message.format("{{ ch01.x | }}"),
        "decks/01-loop.md:7:6: error: " + message.format("{{ ch01.x | pm | }}"),
    ]


def test_binding_leaves_the_parsed_deck_alone() -> None:
    deck = parsed()
    before = repr(deck)
    bind_deck(deck, RESULTS)
    assert repr(deck) == before


def test_literal_reference_prints_its_text() -> None:
    text = (Text("About "), Ref('"2,000"', (), 1, 7), Text(" steps"))
    slide = Slide(1, 1, "default", {}, "", "", (Paragraph(text, 1),))
    deck = Deck(Path("decks/01-loop.md"), "", {}, (slide,))
    out, diagnostics = bind_deck(deck, RESULTS)
    ref = out.slides[0].blocks[0].children[1]
    assert (ref.text, ref.info, diagnostics) == ("2,000", (), [])
    assert cited(out) == []
    slide = replace(slide, blocks=(Paragraph((Ref('"2,000"', ("int",), 1, 7),), 1),))
    _, diagnostics = bind_deck(replace(deck, slides=(slide,)), RESULTS)
    assert [str(d) for d in diagnostics] == [
        'decks/01-loop.md:1:7: error: a quoted literal takes no filters: {{ "2,000" }}'
    ]


def test_each_slide_records_its_sources() -> None:
    deck = parsed()
    bound_deck, _ = bind_deck(deck, RESULTS)
    assert (
        cited(bound_deck)
        == cited(bind_deck(deck, Results())[0])
        == [
            ("ch01.val_loss.final", 2, 13),
            ("ch01.val_loss.final", 5, 16),
            ("ch01.val_loss.init", 7, 6),
            ("ch01.val_los.final", 7, 34),
            ("ch01.val_loss.final", 7, 67),
            ("ch01.val_loss.final", 11, 11),
            ("ch01.frac", 14, 8),
            ("ch01.params", 17, 15),
            ("ch01.params", 21, 11),
            ("ch01.nope", 23, 3),
            ("ch01.frac", 26, 5),
        ]
    )
    run = "run ch01.default 9f3c2a1e"
    # the bound slide knows the sources of every reference: inline, in math, captions and the title
    assert footer_keys(bound_deck.slides[0]) == [
        ("ch01.val_loss.final", run),
        ("ch01.val_loss.init", run),
        ("ch01.frac", run),
        ("ch01.params", run),
    ]
    # as the PowerPoint footer always listed them: a known key is cited even where its filter fails
    assert footer_keys(bound_deck.slides[1]) == [("ch01.params", run), ("ch01.frac", run)]
    first = bound_deck.slides[0].sources
    assert first[0] == Source("ch01.val_loss.final", 2, 13, 2.27634, 0.00213, 3, run)
    assert first[3] == Source("ch01.val_los.final", 7, 34)  # unknown: cited, without a value
    assert deck.slides[0].sources == ()  # only binding fills them in


def test_the_tooltip_of_a_bound_number_reads_like_a_footnote() -> None:
    from slidegen.bind.numbers import ref_label

    measured = Result(
        "ch01.loss", 2.27136, 0.0041, 3, "nats", "validation loss at the end", "run ch01.default 87bf0015"
    )
    assert ref_label(measured) == "2.271 ± 0.004 nats (3 seeds) · validation loss at the end · run ch01.default"
    cited = Result("ch07.size", 540e9, None, None, "parameters", "PaLM's size", "cited: Chowdhery et al. 2022", 2)
    assert ref_label(cited) == "540,000,000,000 parameters · PaLM's size · cited: Chowdhery et al. 2022"
    assert ref_label(Result("ch01.n", 3.0, digits=1)) == "3"
