"""The command line as Slidev, Marp, Quarto and click users expect it (issue 16), the year rule of
``check --strict``, and ``check`` finding every error ``build`` can stop on."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import fake_project
import pytest

from slidegen.check.project import hand_typed_numbers
from slidegen.cli import run as cmd_run
from slidegen.cli.main import main, version
from slidegen.errors import UsageError
from slidegen.record.results import Result, Results

REPO = fake_project.REPO
SOURCE = "cited: Example 2020, p. 1"

ONE = """\
---
title: One
---

# One

It has {{ ch01.params | int }} parameters.

<!-- Say the number. -->

---
id: two
---

# Two

Loss {{ ch01.loss }}.
"""

TWO = "# Second deck\n\nThe loss is {{ ch01.loss }}.\n"


def make(root: Path, decks: dict[str, str], rows: list[Result] | None = None) -> Path:
    (root / "decks").mkdir(parents=True)
    for name, text in decks.items():
        (root / "decks" / name).write_text(text, encoding="utf-8")
    rows = (
        rows
        if rows is not None
        else [
            Result("ch01.params", 5376, None, None, "", "parameters", SOURCE, 4),
            Result("ch01.loss", 2.27634, 0.00213, 3, "nats", "loss", SOURCE, 4),
            Result("ch01.unused_a", 1.5, None, None, "", "nobody cites it", SOURCE, 2),
            Result("ch01.unused_b", 2.5, None, None, "", "nobody cites it", SOURCE, 2),
        ]
    )
    (root / "results").mkdir()
    Results(rows).write(root / "results" / "results.md")
    return root


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make(tmp_path / "p", {"01-one.md": ONE, "02-two.md": TWO})
    monkeypatch.chdir(root)
    return root


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slidegen", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )


# ---------------------------------------------------------------------- conventions


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"slidegen {version()}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*|0\+unknown", version())


def test_an_unknown_flag_prints_its_subcommands_usage(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, usage in (
        (["build", "--bogus"], "usage: slidegen build "),
        (["check", "--nope"], "usage: slidegen check "),
        (["list", "keys", "--x"], "usage: slidegen list keys "),
        (["results", "diff", "--y"], "usage: slidegen results diff "),
    ):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith(usage), err
        assert "unrecognized arguments: --" in err


def test_decks_by_path_file_name_or_number_each_built_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "01", "decks/01-one.md", "01-one.md", "1", "01-one", "--to", "html"]) == 0
    assert "built 1 file(s)" in capsys.readouterr().err
    assert sorted(p.name for p in (project / "build" / "html").glob("*.html")) == ["01-one.html", "index.html"]
    assert main(["build", "2", "-o", "elsewhere", "--to", "pptx"]) == 0
    assert (project / "elsewhere" / "pptx" / "02-two.pptx").is_file()
    assert main(["build", "3"]) == 2
    assert "no such deck: 3" in capsys.readouterr().err
    assert main(["build", "01-onee"]) == 2
    assert "did you mean '01-one'?" in capsys.readouterr().err
    assert main(["inspect", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "Second deck"


def test_several_decks_show_progress_as_plain_lines_off_a_terminal(project: Path) -> None:
    done = cli(project, "build")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.startswith("decks/")] == [
        "decks/01-one.md: html",
        "decks/01-one.md: pptx",
        "decks/02-two.md: html",
        "decks/02-two.md: pptx",
    ]
    assert lines[-1].startswith("built 4 file(s) in ")
    one = cli(project, "build", "01")  # one deck, no PDF: no progress
    assert [line for line in one.stderr.splitlines() if line.startswith("decks/")] == []
    quiet = cli(project, "-q", "build")
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_notes_without_pdf_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--notes"]) == 2
    assert "--notes writes the PDF with speaker notes: add pdf to --to" in capsys.readouterr().err
    assert not (project / "build").exists()


def test_quiet_and_verbose_check(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (project / "results" / "results.md").read_text(encoding="utf-8").splitlines()
    a, b = (
        next(i for i, line in enumerate(lines, 1) if line.startswith(f"| {k} "))
        for k in ("ch01.unused_a", "ch01.unused_b")
    )
    assert main(["check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"results/results.md:{a}:1: warning: 2 results are not cited by any slide (ch01.unused_a, ch01.unused_b); "
        "`slidegen check -v` lists them",
        "2 deck(s) checked: 0 error(s), 1 warning(s)",
    ]
    assert main(["check", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if "not cited" in line] == [
        f"results/results.md:{a}:1: warning: result 'ch01.unused_a' is not cited by any slide",
        f"results/results.md:{b}:1: warning: result 'ch01.unused_b' is not cited by any slide",
    ]
    assert main(["-q", "check"]) == 0 and capsys.readouterr() == ("", "")
    assert main(["check", "--quiet"]) == 0 and capsys.readouterr() == ("", "")


def test_no_color_is_honoured_by_every_command(tmp_path: Path) -> None:
    root = fake_project.make_fake_project(tmp_path / "fake").root
    color = re.compile(r"\x1b\[[0-9;]*m")
    env = {"NO_COLOR": "1", "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    forced = cli(root, "run", "--list", env={"FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert color.search(forced.stdout + forced.stderr)  # rich colours when forced ...
    for args in (
        ["run", "--list"],
        ["run", "ch99.beta", "--jobs", "1"],
        ["check"],
        ["build", "--to", "html"],
        ["list", "keys"],
        ["list", "decks"],
        ["list", "figures"],
        ["inspect", "99"],
        ["--help"],
    ):
        done = cli(root, *args, env=env)
        assert not re.search(r"\x1b\[[0-9;]*(?:3[0-9]|4[0-9]|9[0-7]|38;)[0-9;]*m", done.stdout + done.stderr), args
    # ... and not with NO_COLOR (styles such as bold are not colour, and rich keeps them)


def test_inspect_prints_a_summary_and_json_with_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "01"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "decks/01-one.md: One: 2 slide(s); headmatter: title"
    assert re.fullmatch(r"  1  line \d+\s+cover\s+One  \[1 key\(s\): ch01\.params; notes\]", out[1])
    assert re.fullmatch(r"  2  line \d+\s+default\s+Two  \[id two; 1 key\(s\): ch01\.loss\]", out[2])
    assert main(["inspect", "decks/01-one.md", "--json"]) == 0
    assert [s["layout"] for s in json.loads(capsys.readouterr().out)["slides"]] == ["cover", "default"]


def test_list_decks_keys_and_figures(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "decks"]) == 0
    assert capsys.readouterr().out == ("decks/01-one.md  2 slides  One\ndecks/02-two.md  1 slide   Second deck\n")
    assert main(["list", "keys"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "ch01.loss",
        "2.276",
        "±",
        "0.002",
        "nats",
        "cited:",
        "Example",
        "2020,",
        "p.",
        "1",
        "decks/01-one.md",
        "slide",
        "2;",
        "decks/02-two.md",
        "slide",
        "1",
    ]
    assert lines[1].split()[:2] == ["ch01.params", "5376"] and lines[1].endswith("decks/01-one.md slide 1")
    assert lines[2].endswith("not cited")
    assert main(["list", "keys", "ch01.unused_*"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["ch01.unused_a", "ch01.unused_b"]
    assert main(["list", "keys", "param"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["ch01.params"]
    assert main(["list", "keys", "nothing"]) == 0
    assert capsys.readouterr().out == "no result key matches 'nothing'\n"
    assert main(["list", "figures"]) == 0
    assert capsys.readouterr().out == "no figures registered\n"


def test_list_figures_names_their_code_and_slides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fake_project.make_fake_project(tmp_path / "fake")
    monkeypatch.chdir(root.root)  # a Project
    assert main(["list", "figures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["ch99.broken", "ch99.curve"]
    assert re.fullmatch(r"ch99\.curve\s+figures/ch99\.py:\d+\s+decks/99-fake\.md:19 \(slide 3\)", lines[1])
    assert lines[0].endswith("not shown")


def test_results_diff_shows_only_printed_changes_and_counts_the_rest(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True, capture_output=True
        )

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "results")
    results = Results.read(project / "results" / "results.md")
    results.merge(
        [
            Result("ch01.loss", 2.27636, 0.00214, 3, "nats", "loss", SOURCE, 4),  # prints 2.276 ± 0.002 still
            Result("ch01.params", 5377, None, None, "", "parameters", SOURCE, 4),  # prints 5377 now
        ]
    )
    results.write(project / "results" / "results.md")
    assert main(["results", "diff"]) == 0
    assert capsys.readouterr().out == (
        "ch01.params: 5376 -> 5377 (decks/01-one.md:7)\n"
        "1 more value(s) changed below the precision slides show (`-v` lists them)\n"
    )
    assert main(["results", "diff", "-v"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_run_without_torch_says_what_to_install_in_one_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    monkeypatch.setattr(cmd_run, "EXPERIMENT_NEEDS", (("torch", "no-such-dist-xyz", "training"),))
    with pytest.raises(UsageError, match=r"needs no-such-dist-xyz \(training\): pip install 'slidegen\[experiments\]'"):
        cmd_run.require_experiments()
    fake_project.make_fake_project(project / "lab")  # a project with experiments
    monkeypatch.chdir(project / "lab")
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("slidegen: error: running experiments needs")
    module = project / "lab" / "model" / "experiments" / "ch99_fake.py"  # importing it needs what is missing
    module.write_text("import torch_that_is_not_installed\n" + module.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["run", "--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("slidegen: error: running experiments needs")


def test_run_list_and_run_in_a_project_without_experiments_never_ask_for_torch(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def asked() -> None:
        raise AssertionError("asked for torch")

    monkeypatch.setattr(cmd_run, "require_experiments", asked)
    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "no experiments: no module matches [tool.slidegen] experiments = 'model/experiments/ch[0-9][0-9]*.py'\n"
    )
    assert main(["run"]) == 0  # it brings the cited rows in line with results/cited.yaml, which needs no torch
    assert "ran 0, 0 current" in capsys.readouterr().err


# ---------------------------------------------------------------------- serve


def _serve(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "slidegen", "serve", "--port", "0", *args],
        cwd=root,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    line = ""
    while time.monotonic() < deadline and not line.startswith("serving "):
        line = process.stderr.readline()
    assert line.startswith("serving "), line
    return process, line


def test_serve_removes_its_folder_on_sigterm_as_on_ctrl_c(project: Path) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        process, line = _serve(project)
        folder = Path(re.search(r"\(from (.*?)\);", line).group(1))  # type: ignore[union-attr]
        assert folder.is_dir()
        process.send_signal(sig)
        assert process.wait(timeout=30) == 0
        temporary = next(p for p in (folder, *folder.parents) if p.name.startswith("slidegen-serve-"))
        assert not temporary.exists(), sig


def test_serve_open_starts_the_browser_on_the_index(project: Path, tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    process, line = _serve(project, "--open", env={"BROWSER": str(browser)})
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not opened.exists():
            time.sleep(0.1)
        url = line.split()[1]
        assert opened.read_text().strip() == url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


# ---------------------------------------------------------------------- the year rule


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("2000 steps", ["2000"]),
        ("in 2000 steps", ["2000"]),  # a counted word makes it a count
        ("about 2048 tokens", ["2048"]),
        ("batch 2048", ["2048"]),
        ("the run took 2020 of them", ["2020"]),
        ("Kaplan et al. 2020 found it", []),
        ("Kaplan et al., 2020", []),
        ("(Kaplan 2020)", []),
        ("(Kaplan and McCandlish, 2020)", []),
        ("Vaswani (2017)", []),
        ("in 2017", []),
        ("In 2017 the paper", []),
        ("since 2019", []),
        ("before 2012, after 2015, until 2020, by 2030, from 2019 to 2021", []),
        ("in March 2020", []),
        ("3 March 2020", []),
        ("March 3, 2020", []),
        ("released 2020-06-11", []),
        ("in 2017 and 2019", []),
        ("since 2019–2021", []),
    ],
)
def test_a_four_digit_number_is_a_year_only_where_it_reads_as_one(text: str, flagged: list[str]) -> None:
    assert [number for _, number in hand_typed_numbers(text)] == flagged


def test_strict_check_flags_2000_steps_and_keeps_a_citation_year(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = "# The **2017** paper, 2018\n\nWe train for 2000 steps, as Kaplan et al. 2020 did in 2019.\n"
    root = make(tmp_path / "y", {"01-y.md": deck}, [])
    monkeypatch.chdir(root)
    assert main(["check", "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "decks/01-y.md:3:14: error: hand-typed number '2000' in slide text: cite a result "
        '({{ key }}) or mark it as a literal ({{ "2000" }})'
    ]


# ---------------------------------------------------------------------- check covers build


PNG = (REPO / "tests" / "fixtures" / "decks" / "img" / "loss.png").read_bytes()

#: Each error the writers and media raise for a deck: (a phrase of the message, the deck, files beside it).
CASES = {
    "is remote": ("![x](https://example.org/x.png)", {}),
    "not found": ("![x](img/missing.png)", {}),
    "outside the project": ("![x](../../outside.png)", {}),
    "is not PNG, JPEG, GIF, SVG or WebP": ("![x](img/x.bmp)", {"img/x.bmp": b"BM fake"}),
    "has no raster twin for PowerPoint": ("![x](img/x.svg)", {"img/x.svg": b"<svg xmlns='x'></svg>"}),
    "does not hold a": ("![x](img/x.png)", {"img/x.png": b"not a picture"}),
    "cannot convert this LaTeX to an equation": ("$$\n\\notacommand{x}\n$$", {}),
    "unknown figure": ("![x](fig:ch01.nothing)", {}),
    "component data: ": (
        '<run-reader run="ch90.none" alt="x"></run-reader>',
        {"../components/run-reader.js": b'customElements.define("run-reader", class extends HTMLElement {});\n'},
    ),
}
#: Raised by the writers and media but not reachable for a deck through `slidegen build`, and why.
UNREACHABLE = {
    "cannot be drawn: no figures are registered": "build always passes a figure renderer",
    "cannot be read": "a picture the process cannot read (root reads every file here)",
}


def _raised_messages() -> list[str]:
    """The message of every ``raise SlidegenError(...)`` in media/images.py and the writers (html, pptx, markdown)."""
    package = REPO / "slidegen"
    files = [
        package / "media" / "images.py",
        package / "write" / "html.py",
        *sorted((package / "write" / "pptx").glob("*.py")),
        *sorted((package / "write" / "markdown").glob("*.py")),
    ]
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                if isinstance(func, ast.Name) and func.id == "SlidegenError":
                    found.append(ast.unparse(node.exc.args[-1]))
    return found


def test_every_error_kind_of_build_has_a_case() -> None:
    kinds = _raised_messages()
    assert kinds
    covered = [*CASES, *UNREACHABLE, "MATH_ADVICE"]
    assert [kind for kind in kinds if not any(phrase in kind for phrase in covered)] == []


@pytest.mark.parametrize("phrase", sorted(CASES))
def test_check_reports_what_build_stops_on_at_the_same_place_without_writing(
    phrase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body, files = CASES[phrase]
    root = make(tmp_path / "proj", {"01-x.md": f"# Fine\n\nText.\n\n---\n\n# Bad\n\n{body}\n"}, [])
    (tmp_path / "outside.png").write_bytes(PNG)
    for rel, data in files.items():
        (root / "decks" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "decks" / rel).write_bytes(data)
    monkeypatch.chdir(root)
    assert main(["check"]) == 1
    checked = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert not (root / "build" / "html").exists() and not (root / "build" / "pptx").exists()
    assert main(["build"]) == 1
    built = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(built) == 1 and phrase in built[0], built
    where = built[0].split(": error: ")[0].rsplit(":", 1)[0]  # path:line
    assert [line for line in checked if line.startswith(where + ":") and phrase in line], (checked, built)
    if phrase != "unknown figure":  # the same message, from the same function
        assert built[0] in checked


def test_check_reports_a_figure_whose_function_raises_where_build_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fake_project.make_fake_project(tmp_path / "fake").root
    (root / "decks" / "98-broken.md").write_text("# Broken\n\n![b](fig:ch99.broken)\n", encoding="utf-8")
    monkeypatch.chdir(root)
    assert main(["check"]) == 1
    checked = capsys.readouterr().err.splitlines()
    assert main(["build", "98"]) == 1
    built = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(built) == 1 and built[0].startswith("figures/ch99.py:") and built[0] in checked
