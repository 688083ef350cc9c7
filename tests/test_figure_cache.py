"""The figure registry kept in build/cache/figures.json: equal to discovering it, found without importing the
figure modules, and found again (by importing them) when any of their code changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fake_project
import pytest

from slidegen.media import figure_cache
from slidegen.media.figures import FigureInfo, discover_figures
from slidegen.project import Project

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return fake_project.make_fake_project(tmp_path / "proj")


def test_the_kept_registry_equals_the_discovered_one(project: Project, tmp_path: Path) -> None:
    found = discover_figures(project)
    assert figure_cache.cached_figures(project, tmp_path / "cache") == found  # discovered, then kept
    assert (tmp_path / "cache" / figure_cache.CACHE_NAME).is_file()
    assert figure_cache.cached_figures(project, tmp_path / "cache") == found  # read back


def test_a_kept_registry_imports_no_figure_module(project: Project, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    figure_cache.cached_figures(project, cache)
    code = (
        "import sys; from pathlib import Path; from slidegen.media.figure_cache import cached_figures; "
        "from slidegen.project import Project; "
        f"found = cached_figures(Project(Path({str(project.root)!r})), Path({str(cache)!r})); "
        "print(sorted(found), sorted(m for m in sys.modules if m.split('.')[0] in ('figures', 'model', 'numpy')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.strip() == "['ch99.broken', 'ch99.curve'] []"


def test_changed_figure_code_is_discovered_again(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    figure_cache.cached_figures(project, cache)
    calls: list[Project] = []

    def counted(p: Project) -> dict[str, FigureInfo]:
        calls.append(p)
        return discover_figures(p)

    monkeypatch.setattr(figure_cache, "discover_figures", counted)
    figure_cache.cached_figures(project, cache)
    assert calls == []
    module = next(project.root.glob("figures/ch*.py"))
    module.write_text(module.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = figure_cache.cached_figures(project, cache)
    assert len(calls) == 1 and again == discover_figures(project)
    helper = project.root / "model" / "helper_for_figures.py"  # any Python file of the packages figures import
    helper.write_text("X = 1\n", encoding="utf-8")
    figure_cache.cached_figures(project, cache)
    assert len(calls) == 2
    (cache / figure_cache.CACHE_NAME).write_text("{not json", encoding="utf-8")
    assert figure_cache.cached_figures(project, cache) == discover_figures(project)
    assert len(calls) == 3
