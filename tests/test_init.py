"""``slidegen init [DIR]``: a small working project from the package's ``starter/`` files, which ``build``,
``check --strict`` and ``serve`` accept at once; a folder holding anything is refused, untouched. And every
command's ``--help`` ends with examples and the way to the authoring guide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from slidegen.cli.init import init_project, starter_files
from slidegen.cli.main import GUIDE, Parsers, main

FILES = [
    ".gitignore",
    "README.md",
    "components/ema-window.css",
    "components/ema-window.js",
    "decks/01-first-talk.md",
    "references.bib",
    "results/results.md",
]


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_init_writes_the_starter_project_into_a_new_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "talk"]) == 0
    assert tree(tmp_path / "talk") == FILES
    out = capsys.readouterr().out
    assert out.startswith("wrote a slidegen project into talk/:\n  .gitignore\n")
    assert out.endswith("next: cd talk && slidegen serve   (or slidegen build, slidegen check --strict)\n")
    assert (tmp_path / "talk" / ".gitignore").read_text() == "build/\n"
    assert (tmp_path / "talk" / "decks" / "01-first-talk.md").read_bytes() == starter_files()["decks/01-first-talk.md"]


def test_the_starter_deck_shows_the_main_syntax() -> None:
    deck = starter_files()["decks/01-first-talk.md"].decode()
    for syntax in (
        "layout: two-cols",
        "::right::",
        "<v-clicks>",
        "```python {1|2}",
        "$$",
        "{{ adam.beta2 }}",
        "[@kingma2014]",
        "<ema-window",
        "```mermaid",
        "<!--",
        "[click]",
    ):
        assert syntax in deck, syntax
    assert "| adam.beta2 | 0.999 |" in starter_files()["results/results.md"].decode()
    assert "@misc{kingma2014," in starter_files()["references.bib"].decode()
    assert 'customElements.define("ema-window"' in starter_files()["components/ema-window.js"].decode()


def test_init_into_an_empty_folder_or_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert [p.relative_to(tmp_path / "empty").as_posix() for p in init_project(tmp_path / "empty")] == FILES
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert main(["init"]) == 0
    assert tree(tmp_path / "here") == FILES
    assert capsys.readouterr().out.endswith("next: slidegen serve   (or slidegen build, slidegen check --strict)\n")


def test_init_refuses_a_folder_holding_anything_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "talk").mkdir()
    (tmp_path / "talk" / ".keep").write_text("mine\n")
    assert main(["init", "talk"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "slidegen: error: talk is not empty: slidegen init writes a project only into a new "
        "or empty folder (nothing was written)\n"
    )
    assert tree(tmp_path / "talk") == [".keep"] and (tmp_path / "talk" / ".keep").read_text() == "mine\n"
    (tmp_path / "notes.txt").write_text("x")
    assert main(["init", "notes.txt"]) == 2
    assert capsys.readouterr().err == (
        "slidegen: error: notes.txt is a file: name a new or empty folder for the project\n"
    )


def test_the_starter_project_builds_and_passes_check_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """HTML and ``check --strict`` here; PowerPoint, PDF and PNG (which draw through Chromium) in the install test."""
    init_project(tmp_path / "talk")
    monkeypatch.chdir(tmp_path / "talk")
    assert main(["build", "--to", "html"]) == 0
    page = (tmp_path / "talk" / "build" / "html" / "01-first-talk.html").read_text(encoding="utf-8")
    assert "0.999" in page and "(Kingma and Ba, 2014)" in page and "<ema-window" in page
    assert "warning" not in capsys.readouterr().err
    assert main(["check", "--strict"]) == 0
    assert capsys.readouterr().out.endswith("1 deck(s) checked: 0 error(s), 0 warning(s)\n")


def test_serve_previews_the_starter_project_with_no_warning(tmp_path: Path) -> None:
    import signal
    import urllib.request

    from test_cli import _serve

    init_project(tmp_path / "talk")
    process, line = _serve(tmp_path / "talk")
    try:
        url = line.split()[1]
        with urllib.request.urlopen(url + "01-first-talk.html", timeout=30) as response:
            page = response.read().decode("utf-8")
        assert response.status == 200 and "<ema-window" in page and "(Kingma and Ba, 2014)" in page
        assert 'id="slidegen-banner"' not in page  # no warning to show
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


@pytest.mark.parametrize("name", ["", *Parsers().sub])
def test_every_commands_help_ends_with_examples_and_the_authoring_guide(name: str) -> None:
    parsers = Parsers()
    text = (parsers.sub[name] if name else parsers.top).format_help()
    assert text.endswith(f"\n\n{GUIDE}\n")
    examples = text[text.rindex("examples:\n") :].splitlines()[1:-2]
    assert 2 <= len(examples) <= 3 and all(re.match(r"  slidegen \S", line) for line in examples), examples
    if name:
        assert all(line.split()[1] == name.split()[0] for line in examples), examples
