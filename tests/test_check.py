"""``slidegen check`` on small projects in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from slidegen.check.project import check_project, hand_typed_numbers
from slidegen.record.results import Result, Results

RUN = "run ch01.default 9f3c2a1e"
ROWS = [
    Result("ch01.val_loss.final", 2.27634, 0.00213, 3, "nats", "validation loss", RUN, 4),
    Result("ch01.val_loss.init", 4.16719, 0.0004, 3, "nats", "initial loss", RUN, 4),
    Result("ch01.params", 5376, None, None, "", "parameters", "run ch01.count 0badc0de", 4),
    Result("ch01.unused", 1.5, None, None, "", "cited by nobody", "cited: Nobody 2020, p. 1", 2),
]

LOOP = """\
---
title: The training loop
id: loop
---

# 01 The loop

Loss falls from {{ ch01.val_loss.init }} to {{ ch01.val_los.final }}.

Model has {{ ch01.params | pmm }} weights. See [data](02-data.md#split) and [gloss](glossary.md#adam).

![Loss](fig:ch01.los)

---
id: more
layout: image-right
image: fig:ch01.curve
---

## More

Bad [link](02-data.md#splt), [deck](03-nope.md) and [here](#mor); fine: [web](https://example.org), [top](#loop).
"""

DATA = """\
---
id: split
---

# 02 Data {{ ch01.val_loss.final | pm }}

[back](01-loop.md#more)
"""

BROKEN = "# 03 Broken\n\nA {{ ch01.val_loss.final | }} reference.\n"

GLOSSARY = """\
---
id: adam
---

# Glossary

Adam ([loop](01-loop.md)).
"""


def project(tmp_path: Path, decks: dict[str, str], rows: list[Result] = ROWS) -> Path:
    (tmp_path / "decks").mkdir()
    for name, text in decks.items():
        (tmp_path / "decks" / name).write_text(text, encoding="utf-8")
    Results(rows).write(tmp_path / "results" / "results.md")
    return tmp_path


def lines(diagnostics: list) -> list[str]:
    return [str(d) for d in diagnostics]


def row_line(root: Path, key: str) -> int:
    return Results.read(root / "results" / "results.md")[key].line


def test_check_reports_every_problem_sorted_with_its_location(tmp_path: Path) -> None:
    root = project(tmp_path, {"01-loop.md": LOOP, "02-data.md": DATA, "03-broken.md": BROKEN, "glossary.md": GLOSSARY})
    out = check_project(root, strict=False, fingerprints=None, figure_names=["ch01.loss"])
    assert lines(out) == [
        "decks/01-loop.md:8:45: error: unknown result key 'ch01.val_los.final' (did you mean 'ch01.val_loss.final'?)",
        "decks/01-loop.md:10:11: error: unknown filter 'pmm' (did you mean 'pm'?); "
        'known filters: pm, pct, sci, int, fmt(".3g")',
        "decks/01-loop.md:12:9: error: unknown figure 'ch01.los' (did you mean 'ch01.loss'?)",
        "decks/01-loop.md:17:8: error: unknown figure 'ch01.curve'",
        "decks/01-loop.md:22:12: error: link to unknown slide id 'splt' in 02-data.md (did you mean 'split'?)",
        "decks/01-loop.md:22:37: error: link to unknown deck '03-nope.md' (did you mean '03-broken.md'?)",
        "decks/01-loop.md:22:60: error: link to unknown slide id 'mor' in 01-loop.md (did you mean 'more'?)",
        "decks/03-broken.md:3:3: error: malformed result reference '{{ ch01.val_loss.final | }}': "
        "write {{ chNN.key }} or {{ chNN.key | filter }}",
    ]
    assert all(d.severity == "error" for d in out)


def test_uncited_results_are_warnings_once_every_deck_parses(tmp_path: Path) -> None:
    root = project(tmp_path, {"01-loop.md": LOOP, "02-data.md": DATA, "glossary.md": GLOSSARY})
    warnings = [d for d in check_project(root) if d.severity == "warning"]
    assert lines(warnings) == [
        f"results/results.md:{row_line(root, 'ch01.unused')}:1: warning: result 'ch01.unused' is not cited by any slide"
    ]
    assert all("figure" not in d.message for d in check_project(root))  # figure_names=None skips figures


def test_stale_and_orphaned_results_are_reported_at_their_row(tmp_path: Path) -> None:
    root = project(tmp_path, {"02-data.md": DATA})
    fresh = {"ch01.default": "9f3c2a1e77aa", "ch01.count": "0badc0de"}
    fine = check_project(root, fingerprints=fresh)
    assert [d for d in fine if d.path == "results/results.md" and d.severity == "error"] == []
    out = check_project(root, fingerprints={"ch01.default": "1234abcd5678", "ch01.counts": "0badc0de"})
    errors = [d for d in out if d.severity == "error" and d.path == "results/results.md"]
    final, params = row_line(root, "ch01.val_loss.final"), row_line(root, "ch01.params")
    assert lines(errors) == [  # once per experiment (issue 16), at its first stale row, with its count and site
        f"results/results.md:{params}:1: error: result 'ch01.params' comes from experiment 'ch01.count', "
        "which no longer exists (did you mean 'ch01.counts'?)",
        f"results/results.md:{final}:1: error: 2 stale results of ch01.default ('ch01.val_loss.final', ...): "
        "recorded by ch01.default 9f3c2a1e, whose fingerprint is now 1234abcd; run `slidegen run ch01.default` "
        "(cited by decks/02-data.md:5, slide 1)",
    ]
    out = check_project(root, fingerprints={"ch01.default": "9f3c2a1e", "ch01.count": "1234abcd"})
    assert lines([d for d in out if d.severity == "error" and d.path == "results/results.md"]) == [
        f"results/results.md:{params}:1: error: stale result 'ch01.params': recorded by ch01.count 0badc0de, "
        "whose fingerprint is now 1234abcd; run `slidegen run ch01.count` (cited by no slide)",
    ]


def test_malformed_results_file_is_one_error_and_decks_are_still_checked(tmp_path: Path) -> None:
    decks = {"02-data.md": DATA.replace("#more", "#nothing"), "01-loop.md": "# 01\n\n---\nid: more\n---\n\nx\n"}
    root = project(tmp_path, decks)
    path = root / "results" / "results.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("| 4 | 0.00213 |", "| four | 0.00213 |"), encoding="utf-8")
    out = lines(check_project(root))
    bad = row_line_of(text, "ch01.val_loss.final")
    assert out == [
        "decks/02-data.md:7:8: error: link to unknown slide id 'nothing' in 01-loop.md",
        f"results/results.md:{bad}:35: error: digits 'four' of 'ch01.val_loss.final' must be a whole number >= 1",
    ]


def row_line_of(text: str, key: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if line.startswith(f"| {key} "))


STRICT = """\
# 01 The loop: 2017 and GPT-3

Loss 2.31, accuracy 37% after 42 steps; FP8, 7B, H100, GPT-3.5 and 16-bit are names.
Code `2.31` and math $x = 0.5 + 42$ and {{ ch01.params | int }} are fine; so is a 5.

| run | loss |
|---|---|
| baseline | 3.14 |

- an item with 2,000 steps

```
loss = 2.31
```

$$
y = 42
$$

<!--
The notes say 12.5 too.
-->
"""


def test_strict_flags_hand_typed_numbers_only(tmp_path: Path) -> None:
    root = project(tmp_path, {"01-loop.md": STRICT}, ROWS[2:3])
    assert check_project(root, strict=False) == []
    hint = 'cite a result ({{ key }}) or mark it as a literal ({{ "%s" }})'
    assert lines(check_project(root, strict=True)) == [
        "decks/01-loop.md:3:6: error: hand-typed number '2.31' in slide text: " + hint % "2.31",
        "decks/01-loop.md:3:21: error: hand-typed number '37%' in slide text: " + hint % "37%",
        "decks/01-loop.md:3:31: error: hand-typed number '42' in slide text: " + hint % "42",
        "decks/01-loop.md:8:14: error: hand-typed number '3.14' in slide text: " + hint % "3.14",
        "decks/01-loop.md:10:16: error: hand-typed number '2,000' in slide text: " + hint % "2,000",
        "decks/01-loop.md:21:15: error: hand-typed number '12.5' in speaker notes: " + hint % "12.5",
    ]


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("loss 2.31 and 37% after 42 steps", ["2.31", "37%", "42"]),
        ("5% more, 10x faster, 2.5x, 1e-3, 2,000 steps, 10–20", ["5%", "10", "2.5", "1e-3", "2,000", "10", "20"]),
        ("FP8 GPT-3 7B H100 1F1B 16-bit x86 arXiv:1412.6980 §5.1 GPT-3.5 in 2017 and 1999, step 3", []),
    ],
)
def test_hand_typed_numbers(text: str, flagged: list[str]) -> None:
    assert [n for _, n in hand_typed_numbers(text)] == flagged


def test_heading_chapter_number_is_not_flagged() -> None:
    assert hand_typed_numbers("01 Training loop", heading=True) == []
    assert hand_typed_numbers("Chapter 12: 42 tricks", heading=True) == [(12, "42")]
    assert hand_typed_numbers("01 Training loop") == [(0, "01")]


def test_strict_accepts_quoted_literals(tmp_path: Path) -> None:
    root = project(tmp_path, {"01-loop.md": '# Loop\n\nAbout {{ "2,000" }} steps, {{ "37%" | int }}.\n'}, [])
    assert lines(check_project(root, strict=True)) == [
        'decks/01-loop.md:3:28: error: a quoted literal takes no filters: {{ "37%" }}'
    ]


def test_a_link_to_a_hidden_slide_is_an_error(tmp_path: Path) -> None:
    decks = {
        "01-a.md": "# A\n\nSee [the draft](02-b.md#draft) and [the end](02-b.md#end).\n",
        "02-b.md": "# B\n\n---\nid: draft\nhide: true\n---\n\n# Draft\n\n---\nid: end\n---\n\n# End\n",
    }
    root = project(tmp_path, decks)
    errors = [str(d) for d in check_project(root) if d.severity == "error"]
    assert errors == [
        "decks/01-a.md:3:17: error: link to slide 'draft' in 02-b.md, which is hidden (hide: true) and not in any "
        "output; show it or drop the link",
    ]
