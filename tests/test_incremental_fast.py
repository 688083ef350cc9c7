"""Issue 17's fast paths: touched-but-unchanged decks, one-deck rebuilds that take the other decks from the
manifest, and the index those remembered entries make."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slidegen.pipeline import manifest
from slidegen.pipeline.bound import bind_project
from slidegen.pipeline.build import BuildOptions, build
from slidegen.pipeline.incremental import Todo
from slidegen.project import Project
from slidegen.record.results import Result, Results

REPO = Path(__file__).resolve().parents[1]

DECKS = {
    "01-a.md": "---\ntitle: Deck A\nchapter: 1\nsummary: The first one.\n---\n\n# Deck A\n\nLoss {{ ch01.a }}.\n\n"
    "---\nid: two\n---\n\n# Two\n\nSee [B](02-b.md#steps).\n",
    "02-b.md": "---\ntitle: Deck B\nchapter: 2\n---\n\n# Deck B\n\nText.\n\n---\nid: steps\n---\n\n# Steps\n\n"
    "Steps {{ ch01.b | int }}.\n",
    "03-c.md": "---\ntitle: Deck C\n---\n\n# Deck C\n\nBack to [A](01-a.md#two).\n",
}
HEAVY = (
    "pptx",
    "markdown_it",
    "jinja2",
    "matplotlib",
    "slidegen.read.parse",
    "slidegen.pipeline.build",
    "slidegen.write.html",
    "slidegen.write.pptx",
    "citeproc",
    "bibtexparser",
    "yaml",
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "p"
    (root / "decks").mkdir(parents=True)
    for name, text in DECKS.items():
        (root / "decks" / name).write_text(text, encoding="utf-8")
    Results(
        [
            Result("ch01.a", 2.5, digits=3, what="a loss", source="run ch01.x 0123456789ab"),
            Result("ch01.b", 2000, digits=4, what="steps", source="run ch01.x 0123456789ab"),
        ]
    ).write(root / "results" / "results.md")
    monkeypatch.chdir(root)
    return Project(root)


def run_build(project: Project, *args: str) -> tuple[str, list[str]]:
    """``slidegen build ARGS`` in a fresh interpreter: its stderr and the heavy modules it imported."""
    code = (
        "import sys\nfrom slidegen.cli.main import main\nrc = main(['build', *sys.argv[1:]])\n"
        f"print(rc, [m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=project.root, capture_output=True, text=True, env=env, timeout=120
    )
    rc, _, loaded = done.stdout.strip().partition(" ")
    assert rc == "0", done.stdout + done.stderr
    return done.stderr, eval(loaded)  # noqa: S307 (our own print of a list of names)


def stamps(folder: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def touch(paths: list[Path]) -> None:
    for path in paths:
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns + 10**9, info.st_mtime_ns + 10**9))


def test_a_touched_but_unchanged_deck_is_up_to_date_without_a_parser_or_writer(project: Project) -> None:
    assert not build(project, None, BuildOptions(formats=("html", "pptx"), jobs=1)).failed
    before = stamps(project.build_dir)
    touch(project.deck_paths())  # git checkout, an editor's save without changes, `touch`
    err, loaded = run_build(project)
    assert err.startswith("up to date (") and loaded == []
    err, loaded = run_build(project, "02")
    assert err.startswith("up to date (") and loaded == []
    assert stamps(project.build_dir) == before


def test_a_one_deck_build_into_a_new_folder_remembers_the_other_decks(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "only-b"
    report = build(project, [project.decks_dir / "02-b.md"], BuildOptions(formats=("html", "pptx"), out=out, jobs=1))
    assert not report.failed
    assert sorted(p.relative_to(out).as_posix() for p in report.written) == [
        "html/02-b.html",
        "html/index.html",
        "pptx/02-b.pptx",
    ]
    records = manifest.load(out).decks
    assert [Path(k).name for k in sorted(records)] == ["01-a.md", "02-b.md", "03-c.md"]
    assert records[manifest.deck_key(project.decks_dir / "01-a.md")].outputs == {}  # parsed for the index only
    assert records[manifest.deck_key(project.decks_dir / "01-a.md")].entry.title == "Deck A"
    # the other decks are known from the manifest now: nothing to parse, nothing to write
    err, loaded = run_build(project, "02", "--out", str(out))
    assert err.startswith("up to date (") and loaded == []
    # the deck parsed only for the index is still written when asked for
    report = build(project, [project.decks_dir / "01-a.md"], BuildOptions(formats=("html", "pptx"), out=out, jobs=1))
    # the index now shows its cover and links its PPTX: rewritten too
    assert sorted(p.relative_to(out).as_posix() for p in report.written) == [
        "html/01-a.html",
        "html/index.html",
        "pptx/01-a.pptx",
    ]


def test_another_decks_new_title_rewrites_the_index_once_and_is_then_remembered(
    project: Project, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    target = [project.decks_dir / "02-b.md"]
    assert not build(project, target, BuildOptions(formats=("html",), out=out, jobs=1)).failed
    other = project.decks_dir / "01-a.md"
    other.write_text(DECKS["01-a.md"].replace("title: Deck A", "title: Deck Ay"), encoding="utf-8")
    report = build(project, target, BuildOptions(formats=("html",), out=out, jobs=1))
    assert [p.name for p in report.written] == ["index.html"]
    assert "Deck Ay" in (out / "html" / "index.html").read_text(encoding="utf-8")
    err, loaded = run_build(project, "02", "--to", "html", "--out", str(out))
    assert err.startswith("up to date (") and loaded == []
    # its own outputs were made from its old bytes: built in full when it is a target
    report = build(project, [other], BuildOptions(formats=("html",), out=out, jobs=1))
    assert [p.name for p in report.written] == ["01-a.html", "index.html"]  # its page there: its cover shows


def entries(index: object) -> list[tuple[object, ...]]:
    """What the index page and links read of each deck."""
    return [
        (e.path.resolve(), e.title, e.headmatter.get("chapter"), e.headmatter.get("summary", ""), e.slides)
        for e in index.decks
    ]  # type: ignore[attr-defined]


def test_the_index_from_the_manifest_equals_the_index_from_parsing(project: Project) -> None:
    assert not build(project, None, BuildOptions(formats=("html", "md"), jobs=1)).failed
    todo = Todo.make(project, project.deck_paths(), ("html",), project.build_dir, project.build_dir / "html")
    assert todo.to_parse == []  # nothing changed: every entry is remembered
    remembered = todo.index()
    parsed = bind_project(project).index
    assert entries(remembered) == entries(parsed)
    assert [e.title for e in remembered.decks] == ["Deck A", "Deck B", "Deck C"]
    assert remembered.decks[1].slide("steps") is not None
    assert remembered.decks[1].slide("steps").number == 2  # type: ignore[union-attr]


def test_editing_a_part_another_deck_imports_renews_that_decks_remembered_entry(
    project: Project, tmp_path: Path
) -> None:
    """A deck's index entry is made from its `src:` parts too: a part's new slide id reaches the manifest
    (and the links that resolve through it) though the deck's own bytes did not change."""
    decks = project.decks_dir
    (decks / "parts").mkdir()
    part = decks / "parts" / "p.md"
    part.write_text("# Part\n\nText.\n", encoding="utf-8")
    (decks / "03-c.md").write_text(DECKS["03-c.md"] + "\n---\nsrc: ./parts/p.md\n---\n", encoding="utf-8")
    out = tmp_path / "out"
    key = manifest.deck_key(decks / "03-c.md")
    for target in (None, [decks / "02-b.md"]):  # a deck built, and a deck parsed for the index only
        assert not build(project, target, BuildOptions(formats=("html",), out=out, jobs=1, force=True)).failed
        ids = [slide_id for _, slide_id, _, _ in manifest.load(out).decks[key].entry.slides]
        part.write_text(
            "---\nid: fresh\n---\n\n# Part\n\nText.\n" if "fresh" not in ids else "# Part\n", encoding="utf-8"
        )
        assert not build(project, [decks / "02-b.md"], BuildOptions(formats=("html",), out=out, jobs=1)).failed
        now = [slide_id for _, slide_id, _, _ in manifest.load(out).decks[key].entry.slides]
        assert ("fresh" in now) != ("fresh" in ids), (ids, now)
    # and once nothing changes, the next build is a no-op again
    err, loaded = run_build(project, "02", "--to", "html", "--out", str(out))
    assert err.startswith("up to date (") and loaded == []


def test_a_build_in_one_process_reads_and_binds_the_project_once(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from slidegen.pipeline import build as build_module
    from slidegen.pipeline import decks as decks_module

    calls: list[tuple[Path, ...]] = []

    def counted(project: Project, extra: tuple[Path, ...] = (), only: list[Path] | None = None) -> object:
        calls.append(tuple(only or ()))
        return bind_project(project, extra, only)

    monkeypatch.setattr(build_module, "bind_project", counted)
    monkeypatch.setattr(decks_module, "bind_project", counted)
    report = build(project, None, BuildOptions(formats=("html", "pptx"), jobs=1, force=True))
    assert not report.failed
    assert len(calls) == 1 and {p.name for p in calls[0]} >= {p.name for p in project.deck_paths()}
