"""Incremental builds (build/.manifest.json): a build writes exactly the outputs whose inputs changed.

A no-op build writes nothing and says so without loading the writers; a deck, a results row, a
component or slidegen itself changing rebuilds exactly what depends on it; a killed build
leaves what a clean build would write; a parallel build writes the same bytes as a serial one.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slidegen.cli.main import main
from slidegen.digests import package_files
from slidegen.pipeline import manifest
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.record.results import Result, Results

REPO = Path(__file__).resolve().parents[1]

DECKS = {
    "01-a.md": "---\ntitle: Deck A\nchapter: 1\n---\n\n# Deck A\n\nLoss {{ ch01.a }}.\n\n---\n\n# Two\n\nText.\n",
    "02-b.md": "---\ntitle: Deck B\nchapter: 2\n---\n\n# Deck B\n\nSteps {{ ch01.b | int }}.\n",
    "03-c.md": '---\ntitle: Deck C\n---\n\n# Deck C\n\n<tally-box alt="a box"></tally-box>\n',
}
COMPONENT = (
    'customElements.define("tally-box", class extends HTMLElement {\n'
    '  connectedCallback() { this.textContent = "%s"; }\n});\n'
)


def write_results(root: Path, a: float = 2.5, b: float = 2000) -> None:
    Results(
        [
            Result("ch01.a", a, digits=3, what="a loss", source="run ch01.x 0123456789ab"),
            Result("ch01.b", b, digits=4, what="steps", source="run ch01.x 0123456789ab"),
        ]
    ).write(root / "results" / "results.md")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "p"
    (root / "decks").mkdir(parents=True)
    (root / "components").mkdir()
    for name, text in DECKS.items():
        (root / "decks" / name).write_text(text, encoding="utf-8")
    (root / "components" / "tally-box.js").write_text(COMPONENT % "one", encoding="utf-8")
    write_results(root)
    monkeypatch.chdir(root)
    return Project(root)


def stamps(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def outputs(folder: Path) -> dict[str, bytes]:
    """Every output file (HTML with its assets, PowerPoint, the index) by path, without the manifest."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.name != manifest.MANIFEST_NAME
        and "cache" not in p.relative_to(folder).parts
        and "figures" not in p.relative_to(folder).parts
    }


def written(project: Project, formats: tuple[str, ...] = ("html", "pptx"), **kwargs: object) -> set[str]:
    """The files one build wrote, relative to build/."""
    report = build(project, None, BuildOptions(formats=formats, **kwargs))  # type: ignore[arg-type]
    assert not report.failed, [str(d) for d in report.diagnostics]
    return {p.relative_to(project.build_dir).as_posix() for p in report.written}


ALL = {"html/01-a.html", "pptx/01-a.pptx", "html/02-b.html", "pptx/02-b.pptx", "html/index.html"}


def test_a_no_op_build_writes_no_file_and_says_up_to_date(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--to", "html", "-j", "1"]) == 0
    assert "built 3 file(s)" in capsys.readouterr().err
    before = stamps(project.build_dir)
    assert manifest.manifest_path(project.build_dir) in before
    time.sleep(0.01)
    assert main(["build", "--to", "html"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("up to date (") and "built" not in err
    assert stamps(project.build_dir) == before
    assert build(project, None, BuildOptions(formats=("html",))).written == []  # the library call too
    assert stamps(project.build_dir) == before
    assert main(["build", "--to", "html", "--force", "-j", "1"]) == 0
    assert "built 3 file(s)" in capsys.readouterr().err


def test_a_no_op_build_loads_neither_parser_nor_writers(project: Project) -> None:
    assert main(["build", "--to", "html", "-j", "1"]) == 0
    code = (
        "import sys\nfrom slidegen.cli.main import main\nrc = main(['build', '--to', 'html'])\n"
        "heavy = ('pptx', 'markdown_it', 'jinja2', 'matplotlib', 'slidegen.read.parse',\n"
        "         'slidegen.pipeline.build')\n"
        "print(rc, [m for m in heavy if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr
    assert "up to date" in done.stderr


def test_editing_a_deck_rebuilds_its_outputs_and_the_index_only_when_its_title_changes(project: Project) -> None:
    (project.decks_dir / "03-c.md").unlink()  # no component: PowerPoint without Chromium
    assert written(project, jobs=1) == ALL
    deck = project.decks_dir / "02-b.md"
    deck.write_text(DECKS["02-b.md"].replace("Steps", "Training steps"), encoding="utf-8")
    assert written(project, jobs=1) == {"html/02-b.html", "pptx/02-b.pptx"}
    deck.write_text(DECKS["02-b.md"].replace("title: Deck B", "title: Deck Bee"), encoding="utf-8")
    assert written(project, jobs=1) == {"html/02-b.html", "pptx/02-b.pptx", "html/index.html"}
    assert "Deck Bee" in (project.build_dir / "html" / "index.html").read_text(encoding="utf-8")
    assert written(project, jobs=1) == set()
    (project.build_dir / "pptx" / "01-a.pptx").unlink()  # an output gone is written again
    assert written(project, jobs=1) == {"pptx/01-a.pptx"}


def test_editing_a_results_row_rebuilds_exactly_the_decks_citing_it(project: Project) -> None:
    (project.decks_dir / "03-c.md").unlink()
    assert written(project, jobs=1) == ALL
    write_results(project.root, b=3000)
    assert written(project, jobs=1) == {"html/02-b.html", "pptx/02-b.pptx"}
    assert "3,000" in (project.build_dir / "html" / "02-b.html").read_text(encoding="utf-8")
    write_results(project.root, a=2.25, b=3000)
    assert written(project, jobs=1) == {"html/01-a.html", "pptx/01-a.pptx"}
    write_results(project.root, a=2.25, b=3000.2)  # the row changed (its value), the printed number did not
    assert written(project, jobs=1) == {"html/02-b.html", "pptx/02-b.pptx"}


def test_editing_a_component_rebuilds_every_deck_using_it(project: Project) -> None:
    (project.decks_dir / "04-d.md").write_text('# D\n\n<tally-box alt="again"></tally-box>\n', encoding="utf-8")
    assert written(project, ("html",)) == {f"html/{n}.html" for n in ("01-a", "02-b", "03-c", "04-d", "index")}
    (project.root / "components" / "tally-box.js").write_text(COMPONENT % "two", encoding="utf-8")
    assert written(project, ("html",)) == {"html/03-c.html", "html/04-d.html"}
    assert "two" in (project.build_dir / "html" / "assets" / "components" / "tally-box.js").read_text()
    (project.root / "components" / "tally-box.css").write_text("tally-box { color: var(--accent); }\n")
    assert written(project, ("html",)) == {"html/03-c.html", "html/04-d.html"}


def test_a_new_slidegen_or_theme_rebuilds_every_deck(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    names = {path.relative_to(REPO / "slidegen").as_posix() for path in package_files()}
    assert {"theme.py", "templates/deck.html.j2", "templates/theme.css.j2", "write/html.py"} <= names
    assert written(project, ("html",)) == {f"html/{n}.html" for n in ("01-a", "02-b", "03-c", "index")}
    monkeypatch.setattr(manifest, "package_digest", lambda: "another slidegen")
    assert written(project, ("html",)) == {f"html/{n}.html" for n in ("01-a", "02-b", "03-c")}


def test_markdown_outputs_follow_the_slide_ids_of_the_decks_they_link_to(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.decks_dir / "01-a.md").write_text(DECKS["01-a.md"] + "\nSee [B](02-b.md#steps).\n", encoding="utf-8")
    assert written(project, ("md",)) == {"md/01-a.md", "md/02-b.md", "md/03-c.md"}
    assert main(["build", "--to", "md"]) == 0
    assert capsys.readouterr().err.startswith("up to date")
    deck = project.decks_dir / "02-b.md"
    deck.write_text(
        DECKS["02-b.md"].replace("# Deck B", "# Deck B\n\n---\nid: steps\n---\n\n# Steps"), encoding="utf-8"
    )  # deck 01's link now has a slide to point at
    # a slide id moved: every Markdown output is written again (links resolve through the whole index)
    assert written(project, ("md",)) == {"md/01-a.md", "md/02-b.md", "md/03-c.md"}
    assert "02-b.md#" in (project.build_dir / "md" / "01-a.md").read_text(encoding="utf-8")
    deck.write_text(deck.read_text(encoding="utf-8").replace("Steps {{", "All steps {{"), encoding="utf-8")
    assert written(project, ("md",)) == {"md/02-b.md"}  # the ids stayed
    assert written(project, ("md",)) == set()


def test_a_deck_with_an_error_is_tried_and_reported_every_build(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--to", "html", "-j", "1"]) == 0
    (project.decks_dir / "02-b.md").write_text("# B\n\n{{ ch01.missing }}\n", encoding="utf-8")
    for _ in range(2):
        assert main(["build", "--to", "html", "-j", "1"]) == 1
        assert "decks/02-b.md:3:" in capsys.readouterr().err
    (project.decks_dir / "02-b.md").write_text(DECKS["02-b.md"], encoding="utf-8")
    assert main(["build", "--to", "html", "-j", "1"]) == 0
    assert "built 1 file(s)" in capsys.readouterr().err


def test_the_manifest_records_each_output_with_its_inputs(project: Project) -> None:
    written(project, ("html",))
    data = json.loads(manifest.manifest_path(project.build_dir).read_text(encoding="utf-8"))
    assert data["format"] == manifest.FORMAT
    record = data["decks"][(project.decks_dir / "02-b.md").resolve().as_posix()]
    assert record["deps"]["keys"] == ["ch01.b"]
    assert record["outputs"]["html"]["paths"] == ["html/02-b.html"]
    assert record["entry"]["title"] == "Deck B" and record["entry"]["chapter"] == 2
    assert data["decks"][(project.decks_dir / "03-c.md").resolve().as_posix()]["deps"]["components"] == ["tally-box"]


def many_decks(project: Project, count: int) -> None:
    (project.decks_dir / "03-c.md").unlink()
    body = "\n---\n\n".join(f"# Slide {i}\n\n- a point $x^{i}$\n- another\n\n<!-- notes {i} -->\n" for i in range(8))
    for n in range(4, 4 + count):
        (project.decks_dir / f"{n:02d}-gen.md").write_text(f"---\ntitle: Gen {n}\n---\n\n{body}", encoding="utf-8")


def test_a_parallel_build_equals_a_serial_one_byte_for_byte(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slidegen.pipeline import parallel

    many_decks(project, 4)
    assert not parallel.worth_it(6, 1) and parallel.worth_it(parallel.MIN_DECKS, 2)
    monkeypatch.setattr(parallel, "MIN_DECKS", 2)
    serial = build(project, None, BuildOptions(formats=("html", "pptx"), out=tmp_path / "serial", jobs=1))
    real, pids = parallel.build_parallel, set()

    def spy(*args: object) -> list:
        built = real(*args)  # type: ignore[arg-type]
        pids.update(deck.pid for deck in built)
        return built

    monkeypatch.setattr(parallel, "build_parallel", spy)
    parallel_report = build(project, None, BuildOptions(formats=("html", "pptx"), out=tmp_path / "parallel", jobs=2))
    assert len(pids) == 2 and os.getpid() in pids  # the main process and one worker wrote decks
    assert not serial.failed and not parallel_report.failed
    assert len(parallel_report.written) == len(serial.written) == 13
    one, two = outputs(tmp_path / "serial"), outputs(tmp_path / "parallel")
    assert sorted(one) == sorted(two) and len([n for n in one if n.endswith(".pptx")]) == 6
    assert [name for name in one if one[name] != two[name]] == []


def test_a_killed_build_then_a_rebuild_gives_a_clean_builds_bytes(project: Project, tmp_path: Path) -> None:
    many_decks(project, 6)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def slidegen(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "slidegen", "build", "-j", "1", *args],
            cwd=project.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done

    slidegen()
    out = project.build_dir
    first = (out / "pptx" / "05-gen.pptx").stat().st_mtime_ns
    for deck in project.decks_dir.glob("*-gen.md"):  # every deck changes
        deck.write_text(deck.read_text(encoding="utf-8").replace("another", "one more"), encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-m", "slidegen", "build", "-j", "1"],
        cwd=project.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while (out / "pptx" / "05-gen.pptx").stat().st_mtime_ns == first and time.monotonic() < deadline:
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, "the build ended before it could be killed"
    assert "one more" not in (out / "html" / "09-gen.html").read_text(encoding="utf-8")
    assert "built" in slidegen().stderr
    slidegen("--out", str(tmp_path / "clean"))
    mine, theirs = outputs(out), outputs(tmp_path / "clean")
    assert sorted(mine) == sorted(theirs)
    assert [name for name in mine if mine[name] != theirs[name]] == []
