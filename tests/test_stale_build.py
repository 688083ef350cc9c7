"""A build tells the presenter which stale results its decks cite (issue 29): a warning at each citing
slide, the same warning when nothing needed rebuilding, an error under ``--strict``, and a banner on the
page ``serve`` shows."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import fake_project
import pytest

from slidegen.project import Project
from slidegen.run.runner import run_experiments
from slidegen.serve import Preview

MODULE = "model/experiments/ch99_fake.py"
#: The fake deck cites ch99.beta.total on its line 17, at column 13.
WARNING = (
    "decks/99-fake.md:17:13: warning: stale result 'ch99.beta.total': ch99.beta changed since it ran; "
    "run `slidegen run ch99.beta`"
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = fake_project.make_fake_project(tmp_path_factory.mktemp("stalebuild") / "proj")
    figures = project.root / "figures" / "ch99.py"  # its broken figure (on purpose, for other tests) is not ours
    figures.write_text(figures.read_text(encoding="utf-8").split('@figure("ch99.broken"')[0], encoding="utf-8")
    assert not run_experiments(project, jobs=1).failed
    return project


@pytest.fixture
def project(ran: Project, tmp_path: Path) -> Project:
    shutil.copytree(ran.root, tmp_path / "proj", ignore=shutil.ignore_patterns("__pycache__", "build"))
    return Project(tmp_path / "proj")


def build(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slidegen", "build", "--to", "html", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def edit_beta(project: Project) -> None:
    path = project.root / MODULE
    text = path.read_text(encoding="utf-8")
    assert '{"x": [1.0, 2.0]}' in text
    path.write_text(text.replace('{"x": [1.0, 2.0]}', '{"x": [1.0, 2.0 + 0.0]}'), encoding="utf-8")


def stale_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "stale result" in line]


def test_current_results_build_without_a_word_of_staleness(project: Project) -> None:
    done = build(project)
    assert done.returncode == 0 and stale_lines(done.stderr) == [], done.stderr
    assert build(project, "--strict").returncode == 0


def test_a_deck_citing_a_stale_result_builds_with_a_warning_at_the_citing_slide(project: Project) -> None:
    assert build(project).returncode == 0
    edit_beta(project)
    done = build(project)
    assert done.returncode == 0, done.stderr
    assert stale_lines(done.stderr) == [WARNING]
    again = build(project)  # nothing to write: the warning is shown all the same
    assert again.returncode == 0 and "up to date" in again.stderr
    assert stale_lines(again.stderr) == [WARNING]


def test_build_strict_fails_on_a_stale_result_built_or_up_to_date(project: Project) -> None:
    edit_beta(project)
    strict = build(project, "--strict")
    assert strict.returncode == 1
    assert stale_lines(strict.stderr) == [WARNING.replace(": warning: ", ": error: ")]
    assert build(project).returncode == 0  # written, with the warning
    strict = build(project, "--strict")  # up to date, and still a failure
    assert strict.returncode == 1 and stale_lines(strict.stderr) == [WARNING.replace(": warning: ", ": error: ")]


def test_rerunning_the_experiment_clears_the_warning(project: Project) -> None:
    edit_beta(project)
    assert stale_lines(build(project).stderr) == [WARNING]
    assert run_experiments(project, ["ch99.beta"], jobs=1).ran == ["ch99.beta"]
    done = build(project)
    assert done.returncode == 0 and stale_lines(done.stderr) == []


def served_page(project: Project) -> str:
    """The fake deck's page as ``serve`` sends it."""
    with (
        Preview(project, port=0, log=open(os.devnull, "w")) as running,
        urllib.request.urlopen(running.url + "99-fake.html", timeout=30) as response,
    ):
        return str(response.read().decode("utf-8"))


def test_serve_shows_the_stale_result_in_the_pages_banner(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    edit_beta(project)
    page = served_page(project)
    banner = page[page.index('<div id="slidegen-banner"') :]
    banner = banner[: banner.index("</div>")]
    assert "stale result &#x27;ch99.beta.total&#x27;: ch99.beta changed since it ran" in banner
    assert "decks/99-fake.md:17:13" in banner and "`slidegen run ch99.beta`" in banner
    assert page.index("slidegen-banner") < page.rindex("</body>")


def test_a_current_page_has_no_banner(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    assert "slidegen-banner" not in served_page(project)


def test_a_library_the_experiments_import_is_not_needed_to_tell_a_stale_result(project: Project) -> None:
    """Staleness is read from the source: a missing library (torch, here another) changes nothing."""
    path = project.root / MODULE
    path.write_text("import a_library_not_installed  # noqa\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    edit_beta(project)
    done = build(project, "--force")
    assert done.returncode == 0, done.stderr
    assert "not checked for staleness" not in done.stderr
    assert stale_lines(done.stderr) == [WARNING], done.stderr


def test_experiments_whose_source_does_not_parse_are_one_warning_and_the_decks_build(project: Project) -> None:
    path = project.root / MODULE
    path.write_text(path.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    done = build(project, "--force")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "not checked for staleness" in line]
    assert len(lines) == 1 and "syntax error" in lines[0] and MODULE in lines[0], done.stderr
    assert (project.root / "build" / "html" / "99-fake.html").is_file()
