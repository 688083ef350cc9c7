"""``slidegen results diff``: keys whose values moved against a git revision, and the slides citing them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_check import DATA, LOOP, ROWS, RUN, project

from slidegen.cli.main import main
from slidegen.errors import UsageError
from slidegen.record.results import Result, Results
from slidegen.run.results_diff import results_diff


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_results_diff_against_a_revision(tmp_path: Path) -> None:
    root = project(tmp_path, {"02-data.md": DATA, "01-loop.md": LOOP})
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "results")
    results = Results.read(root / "results" / "results.md")
    results.merge(
        [
            Result("ch01.val_loss.final", 2.31, 0.002, 3, "nats", "validation loss", "run ch01.default 77777777", 4),
            Result("ch01.val_loss.init", 4.16719, 0.0004, 3, "nats", "initial loss", "run ch01.default 77777777", 4),
            Result("ch01.new", 1.0, None, None, "", "new", RUN, 2),
        ]
    )
    results.remove(["ch01.unused"])
    results.write(root / "results" / "results.md")
    changes = results_diff(root, "HEAD")
    assert [(c.key, c.kind, c.old_value, c.new_value, c.citations) for c in changes] == [
        ("ch01.unused", "removed", 1.5, None, ()),
        ("ch01.val_loss.final", "changed", 2.27634, 2.31, (("decks/02-data.md", 5),)),
        ("ch01.new", "added", None, 1.0, ()),
    ]  # ch01.val_loss.init: only its fingerprint moved, so its value did not change
    assert str(changes[0]) == "ch01.unused: 1.5 -> - (not cited)"
    assert str(changes[1]) == "ch01.val_loss.final: 2.27634 ± 0.00213 -> 2.31 ± 0.002 (decks/02-data.md:5)"
    with pytest.raises(UsageError, match="unknown revision 'nope'"):
        results_diff(root, "nope")


def test_results_diff_when_the_revision_has_no_results(tmp_path: Path) -> None:
    root = project(tmp_path, {}, ROWS[:1])
    (root / "README").write_text("x")
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "README")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    assert [(c.key, c.kind) for c in results_diff(root)] == [("ch01.val_loss.final", "added")]


def test_results_diff_command_prints_each_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, {"02-data.md": DATA})
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "results")
    monkeypatch.chdir(root)
    assert main(["results", "diff"]) == 0
    assert capsys.readouterr().out == "no result changed since HEAD\n"
    results = Results.read(root / "results" / "results.md")
    results.remove(["ch01.unused"])
    results.write(root / "results" / "results.md")
    assert main(["results", "diff", "HEAD"]) == 0
    assert capsys.readouterr().out == "ch01.unused: 1.5 -> - (not cited)\n"
    assert main(["results", "diff", "nope"]) == 2
    assert "unknown revision 'nope'" in capsys.readouterr().err
