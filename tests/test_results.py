"""results.md: round trip, atomic writes, merge, and every malformed-file error with its line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from slidegen.errors import SlidegenError
from slidegen.record.results import PREAMBLE, Result, Results

HEADER = "| key | value | digits | sd | n | unit | what | source |\n|---|---|---|---|---|---|---|---|\n"

SAMPLE = (
    PREAMBLE
    + "## ch01 — The training loop\n\n"
    + HEADER
    + "| ch01.val_loss.final | 2.30341234 | 4 | 0.0121 | 3 | nats | validation loss after 2,000 steps "
    "| run ch01.default 9f3c2a1e |\n"
    + "| ch01.val_loss.init | 4.167 | 4 | 0.0004 | 3 | nats | validation loss at step 0 | run ch01.default 9f3c2a1e |\n"
    + "\n## ch07\n\n"
    + HEADER
    + "| ch07.palm.spikes | 20 | 2 | | | | loss spikes in PaLM 540B \\| 780B tokens "
    "| cited: Chowdhery et al. 2022, §5.1 |\n"
    + "| ch07.zloss | 0.0001 | 1 | | | | z-loss coefficient | cited: Chowdhery et al. 2022, §5 |\n"
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "results.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_round_trip_is_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path, SAMPLE)
    results = Results.read(path)
    out = tmp_path / "out.md"
    results.write(out)
    assert out.read_bytes() == SAMPLE.encode("utf-8")
    assert Results.read(out) == results


def test_rows_parse_into_results(tmp_path: Path) -> None:
    results = Results.read(write(tmp_path, SAMPLE))
    assert list(results) == ["ch01.val_loss.final", "ch01.val_loss.init", "ch07.palm.spikes", "ch07.zloss"]
    loss = results["ch01.val_loss.final"]
    assert (loss.value, loss.sd, loss.n, loss.unit, loss.digits) == (2.30341234, 0.0121, 3, "nats", 4)
    assert (loss.experiment, loss.fingerprint, loss.cited) == ("ch01.default", "9f3c2a1e", False)
    assert loss.line == PREAMBLE.count("\n") + 5
    spikes = results["ch07.palm.spikes"]
    assert (spikes.sd, spikes.n, spikes.experiment, spikes.fingerprint, spikes.cited) == (None, None, None, None, True)
    assert spikes.what == "loss spikes in PaLM 540B | 780B tokens"
    assert results.titles == {"ch01": "The training loop", "ch07": ""}
    assert results.get("ch01.nope") is None


def test_fresh_results_write_the_canonical_file(tmp_path: Path) -> None:
    results = Results(titles={"ch01": "The training loop"})
    rows = Results.parse(SAMPLE).values()
    assert results.merge(reversed(list(rows))) == [r.key for r in reversed(list(rows))]
    path = tmp_path / "results" / "results.md"
    results.write(path)
    assert path.read_text(encoding="utf-8") == SAMPLE
    assert [p.name for p in path.parent.iterdir()] == ["results.md"]  # no temp file left behind


def test_merge_reports_changed_keys_only() -> None:
    results = Results.parse(SAMPLE)
    same = results["ch01.val_loss.init"]
    moved = Result(
        "ch01.val_loss.final",
        2.31,
        0.01,
        3,
        "nats",
        "validation loss after 2,000 steps",
        "run ch01.default 0123abcd",
        4,
    )
    new = Result("ch01.a.first", 1.0, None, None, "", "a new key", "run ch01.other abcdef12", 3)
    assert results.merge([same, moved, new]) == ["ch01.val_loss.final", "ch01.a.first"]
    assert list(results)[:3] == ["ch01.a.first", "ch01.val_loss.final", "ch01.val_loss.init"]
    assert results["ch01.val_loss.final"].fingerprint == "0123abcd"
    assert results.remove(["ch01.a.first", "ch01.absent"]) == ["ch01.a.first"]


def test_interrupted_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, SAMPLE)
    results = Results.parse(SAMPLE)
    results.merge([Result("ch01.x.y", 1.0, source="cited: Someone 2020", digits=1)])

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        results.write(path)
    assert path.read_text(encoding="utf-8") == SAMPLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.md"]


ROW = "| ch01.val_loss.final | 2.3 | 4 | 0.01 | 3 | nats | loss | run ch01.default 9f3c2a1e |\n"
FIRST_ROW = PREAMBLE.count("\n") + 5  # line of the first row below "## ch01", blank, header, separator


@pytest.mark.parametrize(
    ("row", "col", "message"),
    [
        (ROW.replace(" 2.3 ", " 2.3x "), 25, "value '2.3x' of 'ch01.val_loss.final' is not a number"),
        (ROW.replace(" 0.01 ", " nan "), 35, "sd 'nan' of 'ch01.val_loss.final' is not a finite number"),
        (ROW.replace(" | 3 | ", " | 3.5 | "), 42, "n '3.5' of 'ch01.val_loss.final' must be a whole number >= 1"),
        (ROW.replace(" | 4 | ", " |  | "), 31, "digits '' of 'ch01.val_loss.final' must be a whole number >= 1"),
        (ROW.replace("| nats ", ""), 1, "row has 7 cells, expected 8 (key, value, digits, sd, n, unit, what, source)"),
        (
            ROW.replace("ch01.val_loss.final", "val_loss"),
            3,
            "bad result key 'val_loss': expected CHAPTER.name, e.g. 'ch01.val_loss'",
        ),
        (
            ROW.replace("ch01.val_loss.final", "ch02.val_loss"),
            3,
            "result key 'ch02.val_loss' is in section 'ch01': keys start with their chapter",
        ),
        (
            ROW.replace("run ch01.default 9f3c2a1e", "ch01.default"),
            60,
            "source 'ch01.default' of 'ch01.val_loss.final' must be 'run EXPERIMENT FINGERPRINT' "
            "or 'cited: PUBLICATION'",
        ),
        (ROW.rstrip("|\n") + "\n", 85, "table row must start and end with '|'"),
    ],
)
def test_malformed_row_is_an_error_at_its_line_and_column(tmp_path: Path, row: str, col: int, message: str) -> None:
    path = write(tmp_path, PREAMBLE + "## ch01\n\n" + HEADER + row)
    with pytest.raises(SlidegenError) as e:
        Results.read(path)
    d = e.value.diagnostic
    assert (d.line, d.col, d.message) == (FIRST_ROW, col, message)
    assert str(e.value).endswith(f"results.md:{FIRST_ROW}:{col}: error: {message}")


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        ("## ch01\n\n" + HEADER + ROW + ROW, 6, 3, "duplicate result key 'ch01.val_loss.final' (first at line 5)"),
        (
            "## ch01\n\n| key | value | sd | n | unit | what | source |\n",
            3,
            1,
            "expected the table header '| key | value | digits | sd | n | unit | what | source |'",
        ),
        (
            "## ch01\n\n" + HEADER.split("\n")[0] + "\n" + ROW,
            4,
            1,
            "expected the table separator row '|---|...' after the header",
        ),
        (
            "## ch01\n\n" + HEADER + ROW + "some words\n",
            6,
            1,
            "unexpected text in section 'ch01': results sections hold only a table",
        ),
        ("## ch01\n\n" + HEADER + ROW + "\n" + HEADER, 7, 1, "a second table in section 'ch01': one table per chapter"),
        ("## ch01\n\n" + HEADER + ROW + "\n## ch01\n", 7, 1, "duplicate section 'ch01'"),
        ("## ch 01 x\n", 1, 1, "malformed section heading: expected '## CHAPTER' or '## CHAPTER — Title'"),
    ],
)
def test_malformed_file_is_an_error_at_its_line(text: str, line: int, col: int, message: str) -> None:
    with pytest.raises(SlidegenError) as e:
        Results.parse(text, "results/results.md")
    assert str(e.value.diagnostic) == f"results/results.md:{line}:{col}: error: {message}"


def test_results_merge_into_results_and_crlf_files_read() -> None:
    other = Results.parse(SAMPLE.replace("\n", "\r\n"))
    assert list(other) == list(Results.parse(SAMPLE))
    fresh = Results(other)
    assert fresh == other and Results().merge(other) == list(other)
