"""The fast paths write the bytes of the slow ones: a small project with citations, cited numbers, a figure and
links between decks, built without any cache or remembered entry, then with cold caches, warm caches, and one
deck at a time (the other decks' entries taken from the manifest)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import fake_project
import pytest
import yaml

from slidegen.bind import cited
from slidegen.bind.library import load_library
from slidegen.media.figures import FigureRenderer
from slidegen.pipeline import bound as bound_module
from slidegen.pipeline import decks as decks_module
from slidegen.pipeline import manifest
from slidegen.pipeline.build import BuildOptions, build
from slidegen.project import Project
from slidegen.record.results import Result, Results
from slidegen.record.runstore import RunRecord, run_path
from slidegen.run.moved import write_cited
from tests.test_cites import BIB, CITED, DECK, STYLE

FORMATS = ("html", "pptx", "md")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005050200"
    "5fc8f1d20000000049454e44ae426082"
)
LINKS = """\
---
title: Links
---

# Links

See [the prose](01-cites.md#prose) and [Beta](99-fake.md#beta); Adam again [@kingma2014, p. 3].
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    project = fake_project.make_fake_project(tmp_path / "p")
    root = project.root
    fake = root / "decks" / "99-fake.md"
    fake.write_text(
        fake.read_text(encoding="utf-8")
        .replace("## Beta", "---\nid: beta\n---\n\n## Beta")
        .replace("---\n\n---\nid", "---\nid"),
        encoding="utf-8",
    )
    (root / "decks" / "01-cites.md").write_text(
        DECK.replace("# Prose and lists", "---\nid: prose\n---\n\n# Prose and lists").replace(
            "---\n\n---\nid", "---\nid"
        ),
        encoding="utf-8",
    )
    (root / "decks" / "02-links.md").write_text(LINKS, encoding="utf-8")
    (root / "decks" / "box.png").write_bytes(PNG)
    (root / "styles").mkdir()
    shutil.copy(STYLE, root / "styles" / STYLE.name)
    (root / "references.bib").write_text(BIB, encoding="utf-8")
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "cited.yaml").write_text(CITED, encoding="utf-8")
    Results(
        [
            Result("ch99.alpha.mean", 3.5, 0.1, 3, "", "the mean", "run ch99.alpha 0123abcd", 3),
            Result("ch99.beta.total", 42, digits=2, what="a total", source="run ch99.beta 0123abcd"),
        ]
    ).write(root / "results" / "results.md")
    write_cited(project)
    steps = list(range(10))
    RunRecord(
        "ch99.alpha",
        "0123abcd",
        [0, 1],
        {"steps": 10},
        0.1,
        {},
        series={"step": steps, "curve": [[4.0 - 0.1 * t - s for t in steps] for s in (0, 1)]},
    ).write(run_path(project.runs_dir, "ch99.alpha"))
    monkeypatch.chdir(root)
    return project


def outputs(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != manifest.MANIFEST_NAME
    }


def built(project: Project, out: Path, paths: list[Path] | None = None, force: bool = False) -> dict[str, bytes]:
    report = build(project, paths, BuildOptions(formats=FORMATS, out=out, force=force, jobs=1))
    assert not report.failed, [str(d) for d in report.diagnostics]
    return outputs(out)


def test_caches_and_remembered_entries_write_the_bytes_of_a_build_without_them(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as slow:  # slidegen before: no cache of any kind, PyYAML's pure-Python parser
        slow.setattr(
            decks_module, "CachedFigureRenderer", lambda project, out_dir=None: FigureRenderer(project, out_dir=out_dir)
        )
        slow.setattr(bound_module, "load_library", lambda root, cache_dir=None: load_library(root))
        slow.setattr(cited, "_FAST_LOADER", None)
        slow.setattr(cited, "_value", lambda node: yaml.safe_load(yaml.serialize(node)))
        reference = built(project, tmp_path / "reference")
    cache = project.build_dir / "cache"
    assert not (cache / "citations").exists() and not (cache / "figures.json").exists()
    assert {
        "html/01-cites.html",
        "pptx/01-cites.pptx",
        "md/02-links.md",
        "html/99-fake.html",
        "html/index.html",
    } <= set(reference)
    assert built(project, tmp_path / "cold") == reference  # the caches filled
    assert any((cache / "citations").glob("*.json")) and (cache / "figures.json").is_file()
    assert built(project, tmp_path / "cold", force=True) == reference  # every output again, from the caches
    decks = project.deck_paths()
    piecewise = tmp_path / "piecewise"
    for deck in (decks[1], decks[2], decks[0]):  # one deck at a time: the others' entries come from the manifest
        built(project, piecewise, [deck])
    assert outputs(piecewise) == reference
    assert built(project, piecewise) == reference  # and nothing left to do


def test_a_one_deck_rebuild_imports_only_what_its_edit_needs(project: Project) -> None:
    built(project, project.build_dir)
    code = (
        "import sys\nfrom slidegen.cli.main import main\nrc = main(['build', sys.argv[1], '-q'])\n"
        "print(rc, sorted(m for m in ('citeproc', 'matplotlib', 'numpy', 'figures', 'model', 'multiprocessing')"
        " if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for name, old, new in (("01-cites.md", "# Cover", "# The cover"), ("99-fake.md", "## Alpha", "## Alpha, again")):
        deck = project.root / "decks" / name
        deck.write_text(deck.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        page = project.build_dir / "html" / f"{deck.stem}.html"
        before = page.stat().st_mtime_ns
        done = subprocess.run(
            [sys.executable, "-c", code, deck.stem[:2]],
            cwd=project.root,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.stdout.strip() == "0 []", done.stdout + done.stderr  # citations and figures from their caches
        assert page.stat().st_mtime_ns != before and new.lstrip("# ") in page.read_text(encoding="utf-8")
