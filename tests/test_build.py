"""End to end: `slidegen build`, `check` and `inspect` through the CLI, in-process, on temporary projects."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pptx import Presentation

from slidegen.cli.main import main
from slidegen.record.results import Result, Results

ROOT = Path(__file__).resolve().parents[1]

DECK = """\
---
title: Bound numbers
chapter: 1
summary: A deck whose numbers come from results.md.
---

# Bound numbers

A cover.

---

# The loss

Validation loss ends at {{ ch01.val_loss.final | pm }} after {{ "2,000" }} steps.

$$
L = {{ ch01.val_loss.final }}
$$

<!-- The loss is {{ ch01.val_loss.final }} nats. -->
"""


def make_project(root: Path, deck: str = DECK) -> Path:
    (root / "decks").mkdir(parents=True)
    (root / "decks" / "01-bound.md").write_text(deck, encoding="utf-8")
    results = Results(
        [
            Result(
                "ch01.val_loss.final",
                2.27634,
                sd=0.00213,
                n=3,
                unit="nats",
                what="validation loss after 2,000 steps",
                source="cited: Example et al. 2024, Table 1",
                digits=4,
            )
        ]
    )
    (root / "results").mkdir()
    results.write(root / "results" / "results.md")
    return root


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_build_writes_both_outputs_with_bound_numbers(project: Path) -> None:
    assert main(["build"]) == 0
    page = (project / "build" / "html" / "01-bound.html").read_text(encoding="utf-8")
    assert 'data-key="ch01.val_loss.final"' in page
    assert 'data-sd="0.00213"' in page
    assert "2.276 ± 0.002" in page
    assert "{{" not in page
    prs = Presentation(str(project / "build" / "pptx" / "01-bound.pptx"))
    notes = prs.slides[1].notes_slide.notes_text_frame.text
    assert "The loss is 2.276 nats." in notes
    assert "ch01.val_loss.final: cited: Example et al. 2024, Table 1" in notes
    index = (project / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "Bound numbers" in index and "01-bound.html" in index


def test_build_one_deck_and_one_format(project: Path) -> None:
    assert main(["build", "decks/01-bound.md", "--to", "pptx"]) == 0
    assert (project / "build" / "pptx" / "01-bound.pptx").is_file()
    assert not (project / "build" / "html").exists()


def test_unknown_key_fails_the_build_with_a_location(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deck = project / "decks" / "01-bound.md"
    deck.write_text(DECK.replace("{{ ch01.val_loss.final | pm }}", "{{ ch01.val_los.final | pm }}"), encoding="utf-8")
    assert main(["build"]) == 1
    err = capsys.readouterr().err
    assert (
        "decks/01-bound.md:15:25: error: unknown result key 'ch01.val_los.final' "
        "(did you mean 'ch01.val_loss.final'?)" in err
    )
    assert "Traceback" not in err
    assert not (project / "build" / "pptx" / "01-bound.pptx").exists()


def test_bad_layout_is_an_error_not_a_traceback(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "decks" / "01-bound.md").write_text("# A\n\n---\nlayout: tow-cols\n---\n\n# B\n", encoding="utf-8")
    assert main(["build"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("decks/01-bound.md:4:")
    assert "unknown layout 'tow-cols'" in err


def test_usage_errors_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "decks/missing.md"]) == 2
    assert "no such deck: decks/missing.md" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit:
        main(["build", "--to", "docx"])
    assert exit.value.code == 2


def test_empty_decks_folder_builds_an_index_that_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "decks").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["build"]) == 0
    index = (tmp_path / "build" / "html" / "index.html").read_text(encoding="utf-8")
    assert "no decks" in index.lower()


def test_inspect_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "decks/01-bound.md", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["title"] == "Bound numbers"
    assert [s["layout"] for s in data["slides"]] == ["cover", "default"]
    assert data["slides"][1]["notes"] == "The loss is {{ ch01.val_loss.final }} nats."


def test_check_passes_then_fails_on_a_missing_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--strict"]) == 0
    deck = project / "decks" / "01-bound.md"
    deck.write_text(deck.read_text(encoding="utf-8") + "\n---\n\n# More\n\nIt took {{ ch01.seconds }} s.\n")
    capsys.readouterr()
    assert main(["check", "--strict"]) == 1
    err = capsys.readouterr().err
    assert "decks/01-bound.md:27:9: error: unknown result key 'ch01.seconds'" in err


@pytest.mark.slow
def test_real_project_passes_strict_check_and_a_copy_with_a_missing_key_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What CI runs: the real decks pass `check --strict`; citing a missing key turns it red."""
    monkeypatch.chdir(ROOT)
    assert main(["check", "--strict"]) == 0, capsys.readouterr().err
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "decks", copy / "decks")
    shutil.copytree(ROOT / "results", copy / "results")
    if (ROOT / "model").is_dir():
        shutil.copytree(ROOT / "model", copy / "model", ignore=shutil.ignore_patterns("__pycache__"))
    if (ROOT / "figures").is_dir():
        shutil.copytree(ROOT / "figures", copy / "figures", ignore=shutil.ignore_patterns("__pycache__"))
    if (ROOT / "components").is_dir():  # ch01.browser's fingerprint covers a component's script
        shutil.copytree(ROOT / "components", copy / "components")
    (copy / "decks" / "99-broken.md").write_text("# Broken\n\nThe loss is {{ ch01.no_such_key }}.\n", encoding="utf-8")
    monkeypatch.chdir(copy)
    capsys.readouterr()
    assert main(["check", "--strict"]) == 1
    assert "decks/99-broken.md:3:13: error: unknown result key 'ch01.no_such_key'" in capsys.readouterr().err


CITING = """\
---
title: Loss {{ ch01.val_loss.final }}
---

| run | loss |
|---|---|
| base | {{ ch01.val_loss.final | pm }} |

![Curve at {{ ch01.params | int }}](fig:ch01.loss "Caption {{ ch01.val_loss.init }}")

Inline $L = {{ ch01.val_loss.init }}$ and

$$
N = {{ ch01.params | int }}
$$

<!--
Say {{ ch01.val_loss.final }} and {{ "2,000" }}.
-->
"""


def test_every_reference_is_a_source_of_its_slide_with_its_position(tmp_path: Path) -> None:
    """Title, table cell, alt text, caption, inline and display math, notes: each key at its {{."""
    from slidegen.deck.nodes import Source
    from slidegen.pipeline.bound import load_deck
    from slidegen.write.pptx import write_deck

    run = "run ch01.default 9f3c2a1e"
    results = Results(
        [
            Result("ch01.val_loss.final", 2.27634, 0.00213, 3, "nats", "final loss", run, 4),
            Result("ch01.val_loss.init", 4.16719, 0.0004, 3, "nats", "initial loss", run, 4),
            Result("ch01.params", 5376, None, None, "", "parameters", "cited: Somebody 2020, p. 1", 4),
        ]
    )
    path = tmp_path / "01-citing.md"
    path.write_text(CITING, encoding="utf-8")
    deck, _ = load_deck(path, results)
    (slide,) = deck.slides
    final, init = (2.27634, 0.00213, 3, run), (4.16719, 0.0004, 3, run)
    params = (5376, None, None, "cited: Somebody 2020, p. 1")
    assert slide.sources == (
        Source("ch01.val_loss.final", 2, 13, *final),  # the frontmatter title
        Source("ch01.val_loss.final", 7, 10, *final),  # a table cell
        Source("ch01.params", 9, 12, *params),  # alt text
        Source("ch01.val_loss.init", 9, 60, *init),  # the caption
        Source("ch01.val_loss.init", 11, 13, *init),  # inline math
        Source("ch01.params", 14, 5, *params),  # display math
        Source("ch01.val_loss.final", 18, 5, *final),  # the notes; the literal is no source
    )
    assert slide.title == deck.title == "Loss 2.276"
    assert slide.notes == "Say 2.276 and 2,000."
    out = tmp_path / "01-citing.pptx"
    write_deck(deck, out, {})
    notes = Presentation(str(out)).slides[0].notes_slide.notes_text_frame.text
    assert notes.endswith(
        "Sources of the numbers on this slide:\n"
        f"ch01.val_loss.final: {run}\nch01.params: cited: Somebody 2020, p. 1\nch01.val_loss.init: {run}"
    )
