"""Results and the environment (issue 16): a fingerprint covers the project's own files, config and seeds; the
Python, NumPy and torch versions are recorded beside each run and only warned about.

A fingerprint is the same on every machine: a config's floats one ulp apart, the locale, the time zone, the
working directory and the project's path leave it as it is.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import fake_project
import numpy as np
import pytest

from slidegen.check.project import check_project
from slidegen.project import Project
from slidegen.record.discover import current_fingerprints, discover, environment, library_versions, same_config
from slidegen.record.results import Result, Results
from slidegen.record.runstore import RunRecord, run_path
from slidegen.run.runner import Store, is_current, run_experiments

REPO = fake_project.REPO
IDS = ["ch99.alpha", "ch99.beta", "ch99.slow"]
MODULE = "model/experiments/ch99_fake.py"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The fake project, run once for the module."""
    project = fake_project.make_fake_project(tmp_path_factory.mktemp("stale") / "proj")
    figures = project.root / "figures" / "ch99.py"  # its broken figure (on purpose, for other tests) is not ours
    figures.write_text(figures.read_text(encoding="utf-8").split('@figure("ch99.broken"')[0], encoding="utf-8")
    report = run_experiments(project, jobs=1)
    assert sorted(report.ran) == IDS and not report.failed
    return project


@pytest.fixture
def project(ran: Project, tmp_path: Path) -> Project:
    """A copy of the run project for one test to change."""
    shutil.copytree(ran.root, tmp_path / "proj", ignore=shutil.ignore_patterns("__pycache__"))
    return Project(tmp_path / "proj")


def check(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slidegen", "check", *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def env_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "rerun to confirm" in line]


def test_a_run_records_its_environment_in_results_md_and_its_json(project: Project) -> None:
    results = Results.read(project.results_path)
    infos = discover(project)
    assert sorted(results.runs) == IDS
    for exp_id in IDS:
        run = results.runs[exp_id]
        assert run.fingerprint == infos[exp_id].fingerprint
        assert run.versions["python"] == environment()["python"]
        assert run.versions["numpy"] == library_versions()["numpy"]
        record = RunRecord.read(run_path(project.runs_dir, exp_id))
        assert record is not None and record.fingerprint == infos[exp_id].fingerprint
        assert record.versions["numpy"] == library_versions()["numpy"]
    text = project.results_path.read_text(encoding="utf-8")
    assert "## runs — the environment each experiment last ran in" in text
    assert Results.parse(text).dumps() == text  # read then written: byte for byte
    done = check(project)
    assert done.returncode == 0 and not env_lines(done.stdout + done.stderr), done.stdout + done.stderr


def test_another_numpy_is_one_warning_per_experiment_and_an_error_with_strict_env(project: Project) -> None:
    numpy = library_versions()["numpy"]
    text = project.results_path.read_text(encoding="utf-8")
    project.results_path.write_text(re.sub(rf"\| {re.escape(numpy)} \|", "| 1.26.4 |", text), encoding="utf-8")
    done = check(project)
    assert done.returncode == 0, done.stderr
    warnings = env_lines(done.stdout)
    assert len(warnings) == 3, done.stdout
    alpha = next(line for line in warnings if "ch99.alpha ran under" in line)
    assert re.fullmatch(
        r"results/results\.md:\d+:1: warning: ch99\.alpha ran under Python \S+ / NumPy 1\.26\.4 / torch \S+; "
        rf"this environment has Python \S+ / NumPy {re.escape(numpy)} / torch \S+; rerun to confirm "
        r"\(`slidegen run ch99\.alpha --force`; 1 key\(s\)\)",
        alpha,
    )
    assert "stale" not in done.stdout + done.stderr
    strict = check(project, "--strict-env")
    assert strict.returncode == 1
    assert len([line for line in strict.stderr.splitlines() if ": error: " in line and "rerun to confirm" in line]) == 3
    assert is_current(discover(project)["ch99.alpha"], Store.of(project), Results.read(project.results_path))


def test_a_library_not_installed_here_is_no_environment_warning(project: Project) -> None:
    """Building decks needs no torch: a checker without it cannot rerun anything to confirm, so it says nothing."""
    text = project.results_path.read_text(encoding="utf-8")
    project.results_path.write_text(re.sub(r"\| [0-9][^ |]*\+?[a-z]* \|\n", "| 2.13.0+cpu |\n", text), encoding="utf-8")
    here = {**environment(), "torch": "none"}
    today = current_fingerprints(project)
    out = check_project(project.root, fingerprints=today, environment=here)
    assert [str(d) for d in out if "rerun to confirm" in d.message] == []
    out = check_project(project.root, fingerprints=today, environment={**here, "torch": "2.1.0"})
    assert len([d for d in out if "rerun to confirm" in d.message]) == 3


def test_editing_an_experiment_is_one_stale_error_for_that_experiment(project: Project) -> None:
    edit(project.root / MODULE, '{"x": [1.0, 2.0]}', '{"x": [1.0, 2.0 + 0.0]}')
    done = check(project)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "stale result 'ch99.beta.total': recorded by ch99.beta" in errors[0], errors
    assert f"({MODULE}:beta changed since it ran); run `slidegen run ch99.beta`" in errors[0]


def test_editing_shared_model_code_is_one_stale_error_per_experiment_with_its_key_count(project: Project) -> None:
    edit(project.root / "model" / "helper.py", "0.01 *", "0.02 *")
    results = Results.read(project.results_path)
    results.merge([Result("ch99.alpha.extra", 1.0, None, None, "", "extra", results["ch99.alpha.mean"].source, 2)])
    results.write(project.results_path)
    errors = [d for d in check_project(project.root, fingerprints=dict(discover(project))) if d.severity == "error"]
    alpha = [str(d) for d in errors if "ch99.alpha" in d.message]
    assert len(alpha) == 1 and "2 stale results of ch99.alpha ('ch99.alpha.extra', ...)" in alpha[0], alpha


def _nudged(data: object, toward: float) -> tuple[object, int]:
    """``data`` (a canonical config) with every float moved one ulp toward ``toward``; and how many moved."""
    if isinstance(data, float):
        return float(np.nextafter(data, toward)), 1
    if isinstance(data, dict):
        pairs = {key: _nudged(value, toward) for key, value in data.items()}
        return {key: value for key, (value, _) in pairs.items()}, sum(n for _, n in pairs.values())
    if isinstance(data, list):
        items = [_nudged(value, toward) for value in data]
        return [value for value, _ in items], sum(n for _, n in items)
    return data, 0


def test_a_float_one_ulp_away_is_the_same_config_for_every_experiment() -> None:
    """Another CPU may compute a ladder (np.geomspace) a last bit apart: the fingerprint, read from the
    source, cannot see it, and ``slidegen run``'s comparison of the recorded config lets it pass."""
    infos = discover(Project(REPO))
    floats = 0
    for info in infos.values():
        for toward in (math.inf, -math.inf):
            config, moved = _nudged(info.config, toward)
            assert config != info.config or moved == 0
            assert same_config(config, info.config), info.id
        floats += moved
    assert floats > 500  # the ladders of ch04.valley alone hold 523 floats


def test_a_setting_that_changes_is_another_config_and_another_fingerprint(tmp_path: Path) -> None:
    info = discover(Project(REPO))["ch04.valley"]
    config = dict(info.config)
    config["adam_lrs"] = [config["adam_lrs"][0] * (1 + 1e-9), *config["adam_lrs"][1:]]
    assert not same_config(config, info.config)
    assert not same_config({**info.config, "tol": info.config["tol"] * (1 + 1e-9)}, info.config)
    for folder in ("model", "components"):  # components: a file ch01.browser declares
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    before = current_fingerprints(Project(tmp_path))
    module = tmp_path / "model" / "experiments" / "ch05_lr.py"
    edit(module, "\nSEEDS = (0, 1, 2)\n", "\nSEEDS = (0, 1)\n")  # one seed fewer: the code says so
    after = current_fingerprints(Project(tmp_path))
    changed = {exp_id for exp_id in before if before[exp_id] != after[exp_id]}
    assert changed and all(exp_id.startswith("ch05.") for exp_id in changed), changed


FINGERPRINTS = (
    "import json, sys; from pathlib import Path; from slidegen.record.discover import current_fingerprints; "
    "from slidegen.project import Project; "
    "print(json.dumps(current_fingerprints(Project(Path(sys.argv[1])))))"
)


def _fingerprints_of(root: Path, cwd: Path, **env: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", FINGERPRINTS, str(root)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_fingerprints_depend_on_no_locale_time_zone_folder_or_path(tmp_path: Path) -> None:
    """The project's fingerprints under LANG=C, in Tokyo, from another folder and from a copy at an odd path."""
    here = current_fingerprints(Project(REPO))
    assert _fingerprints_of(REPO, REPO) == here
    assert _fingerprints_of(REPO, tmp_path, LANG="C", LC_ALL="C", TZ="Asia/Tokyo") == here
    copy = tmp_path / "a folder with späce" / "proj"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "__pycache__"))
    assert _fingerprints_of(copy, tmp_path, LANG="C.UTF-8", TZ="America/St_Johns") == here


def test_the_results_on_main_are_current_under_this_format(tmp_path: Path) -> None:
    """results.md as main recorded it, copied beside the decks: nothing stale."""
    root = tmp_path / "copy"
    for folder in ("decks", "results", "styles"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, root / folder)
    if (REPO / "references.bib").is_file():
        shutil.copy(REPO / "references.bib", root / "references.bib")
    infos = discover(Project(REPO))
    assert current_fingerprints(Project(REPO)) == {exp_id: info.fingerprint for exp_id, info in infos.items()}
    results = Results.read(root / "results" / "results.md")
    measured = [row for row in results.values() if row.experiment]
    assert measured
    out = check_project(root, fingerprints=dict(infos), environment=environment())
    problems = [
        str(d)
        for d in out
        if d.path == "results/results.md"
        and ("stale" in d.message or "no longer exists" in d.message or d.severity == "error")
    ]
    assert problems == []
    for row in measured:
        assert row.fingerprint == infos[row.experiment or ""].fingerprint
