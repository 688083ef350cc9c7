"""``slidegen run``: skipping, fingerprints, crash safety, --quick, the change table, Dask.

Every test runs on a temporary copy of ``tests/fixtures/fakeproject`` (cheap NumPy
experiments), except the one that runs this project's own experiments with ``--quick``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fake_project
import pytest

from slidegen.cli.run import add_run_parser, cmd_run, print_report
from slidegen.errors import UsageError
from slidegen.project import Project
from slidegen.record.discover import current_fingerprints, discover
from slidegen.record.results import Result, Results
from slidegen.record.runstore import RunRecord, compact
from slidegen.run.moved import add_citations
from slidegen.run.runner import Store, run_experiments, select


def _load_helper(name: str):  # tests run with --import-mode=importlib: helpers load by path
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPO, make_fake_project = fake_project.REPO, fake_project.make_fake_project
IDS = ["ch99.alpha", "ch99.beta", "ch99.slow"]
MODULE = "model/experiments/ch99_fake.py"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_fake_project(tmp_path / "proj")


def edit(project: Project, rel: str, old: str, new: str) -> None:
    path = project.root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def cli(
    project: Project, *args: str, env: dict[str, str] | None = None, start_new_session: bool = False
) -> subprocess.Popen[str]:
    """Start ``slidegen run ARGS`` in the project (the run command on its own, as the CLI wires it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "slidegen", "run", *args],
        cwd=project.root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=start_new_session,
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_second_run_with_nothing_changed_does_nothing(project: Project) -> None:
    report = run_experiments(project, jobs=2)
    assert sorted(report.ran) == IDS and not report.failed
    results = Results.read(project.results_path)
    assert results["ch99.alpha.mean"].source == f"run ch99.alpha {current_fingerprints(project)['ch99.alpha']}"
    assert sorted(p.name for p in project.runs_dir.iterdir()) == [f"{i}.json" for i in IDS]
    before = snapshot(project.root / "results")

    again = run_experiments(project)
    assert again.ran == [] and sorted(again.skipped) == IDS

    # ch99.slow would now sleep 10 minutes: a CLI run that reran anything could not finish (its speed is
    # a benchmark's business, not this test's)
    process = cli(project, env={"CH99_SLOW_SECONDS": "600"})
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "ran 0, 3 current" in err
    assert snapshot(project.root / "results") == before


def test_editing_one_experiment_reruns_only_that_experiment(project: Project) -> None:
    run_experiments(project, jobs=2)
    alpha_json = (project.runs_dir / "ch99.alpha.json").read_bytes()
    old = Results.read(project.results_path)

    edit(project, MODULE, '{"x": [1.0, 2.0]}', '{"x": [1.0, 2.0 + 0.0]}')
    report = run_experiments(project, jobs=2)
    assert report.ran == ["ch99.beta"] and sorted(report.skipped) == ["ch99.alpha", "ch99.slow"]
    new = Results.read(project.results_path)
    assert new["ch99.alpha.mean"] == old["ch99.alpha.mean"]
    assert new["ch99.beta.total"].fingerprint != old["ch99.beta.total"].fingerprint
    assert (project.runs_dir / "ch99.alpha.json").read_bytes() == alpha_json
    assert report.changes == [] and report.remeasured == 1  # same value, new fingerprint


def test_fingerprints_follow_imports_config_and_seeds(project: Project) -> None:
    first = current_fingerprints(project)
    (project.root / "model" / "unused.py").write_text("X = 1\n")  # imported by nothing
    assert current_fingerprints(project) == first
    edit(project, "model/helper.py", "0.01 *", "0.02 *")  # noisy_curve: reached by ch99.alpha alone
    second = current_fingerprints(project)
    assert [i for i in IDS if second[i] != first[i]] == ["ch99.alpha"]
    edit(project, MODULE, "seeds=(0, 1, 2)", "seeds=(0, 1, 2, 3)")
    third = current_fingerprints(project)
    assert third["ch99.alpha"] != second["ch99.alpha"] and third["ch99.beta"] == second["ch99.beta"]
    info = discover(project)["ch99.alpha"]
    assert info.seeds == (0, 1, 2, 3) and info.config == {"steps": 200}
    assert "model/helper.py:noisy_curve" in info.files
    assert not any(name.startswith("model/unused.py") for name in info.files)


def test_sigkill_mid_run_leaves_results_whole(project: Project) -> None:
    run_experiments(project, jobs=2)
    results = Results.read(project.results_path)
    results.merge([Result("ch98.paper", 20, digits=2, what="a published number", source="cited: Someone 2020, §1")])
    results.write(project.results_path)
    before = Results.read(project.results_path)

    edit(project, MODULE, "import numpy as np\n", 'import numpy as np\n\nnp.seterr(all="warn")\n')  # run at import:
    # every experiment of the module is stale now
    edit(project, MODULE, '{"count": 1000}', '{"count": 1200}')  # and beta's value moves
    process = cli(project, "--jobs", "1", env={"CH99_SLOW_SECONDS": "60"}, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # alpha and beta run first; slow sleeps
            current = Results.read(project.results_path)
            alpha_moved = current["ch99.alpha.mean"].source != before["ch99.alpha.mean"].source
            if current["ch99.beta.total"].value == 6000 and alpha_moved:
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("alpha and beta were not merged within 30 s")
        time.sleep(0.3)
        process.send_signal(signal.SIGKILL)  # the runner itself, mid-run
        process.wait(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # and its orphaned workers
        process.communicate()

    after = Results.read(project.results_path)  # whole and parseable
    assert after["ch98.paper"] == before["ch98.paper"]
    assert after["ch99.slow.n"] == before["ch99.slow.n"]  # killed before it finished
    assert after["ch99.beta.total"].value == 6000  # merged as it finished
    assert not [p.name for p in project.results_path.parent.rglob("*.tmp")]
    report = run_experiments(project)  # the next run picks up only what was lost
    assert report.ran == ["ch99.slow"]


def test_ctrl_c_stops_cleanly_and_keeps_finished_work(project: Project) -> None:
    process = cli(project, "--jobs", "1", env={"CH99_SLOW_SECONDS": "60"}, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (project.runs_dir / "ch99.beta.json").is_file():
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, err
    assert "not run (interrupted: ch99.slow)" in err and "Traceback" not in err
    assert set(Results.read(project.results_path)) == {"ch99.alpha.mean", "ch99.beta.total"}


def test_quick_runs_every_experiment_and_leaves_results_untouched(project: Project) -> None:
    results = Results([Result("ch98.paper", 20, digits=2, source="cited: Someone 2020")])
    results.write(project.results_path)
    before = snapshot(project.root / "results")
    report = run_experiments(project, quick=True, jobs=2)
    assert sorted(report.ran) == IDS and not report.failed
    assert snapshot(project.root / "results") == before
    store = Store.of(project, quick=True)
    assert store.results_path.is_relative_to(project.build_dir)
    alpha = RunRecord.read(store.runs_dir / "ch99.alpha.json")
    assert alpha is not None and alpha.quick and alpha.config == {"steps": 5}
    assert len(alpha.series["curve"][0]) == 5
    again = run_experiments(project, quick=True, jobs=2)  # --quick never skips
    assert sorted(again.ran) == IDS


@pytest.mark.slow
def test_quick_runs_every_registered_experiment_of_this_project(tmp_path: Path) -> None:
    """The real experiments, on a copy of this project (so nothing here is touched)."""
    root = tmp_path / "slidegen"
    for folder in ("decks", "model", "figures", "results", "components"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "decks").mkdir(exist_ok=True)
    project = Project(root)
    ids = sorted(discover(project))
    assert {"ch01.default", "ch01.arithmetic", "ch01.lr_extremes"} <= set(ids)
    report = run_experiments(project, quick=True)
    assert report.failed == {}
    assert sorted(report.ran) == ids


def test_end_of_run_table_names_keys_and_citing_slides(project: Project) -> None:
    run_experiments(project, jobs=2)
    edit(project, MODULE, '{"count": 1000}', '{"count": 1200}')
    report = run_experiments(project)
    assert report.ran == ["ch99.beta"]
    changes = add_citations(project, report.changes)
    assert [c.key for c in changes] == ["ch99.beta.total"]
    assert changes[0].citations == (("decks/99-fake.md", 17, 3),)
    from rich.console import Console

    out = Console(file=io.StringIO(), width=200)
    report.changes = changes
    print_report(report, out, Console(file=io.StringIO()), 1.0)
    table = out.file.getvalue()  # type: ignore[attr-defined]
    for text in ("ch99.beta.total", "5000", "6000", "+1000 (+20.0%)", "decks/99-fake.md:17 (slide 3)"):
        assert text in table


def test_a_failing_experiment_is_reported_and_the_others_still_run(project: Project) -> None:
    with (project.root / MODULE).open("a") as f:
        f.write('\n\n@experiment("ch99.bad")\ndef bad(ctx):\n    """Fails."""\n    raise RuntimeError("boom")\n')
    report = run_experiments(project, jobs=2)
    assert sorted(report.ran) == IDS
    assert list(report.failed) == ["ch99.bad"]
    assert "RuntimeError: boom" in report.failed["ch99.bad"] and "ch99_fake.py" in report.failed["ch99.bad"]


def test_list_and_selection(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project.root)
    parser = argparse.ArgumentParser()
    add_run_parser(parser.add_subparsers(dest="command"))
    assert cmd_run(parser.parse_args(["run", "--list"])) == 0
    listing = capsys.readouterr().out
    assert "ch99.alpha" in listing and "Mean final value of a noisy curve." in listing and "never run" in listing

    infos = discover(project)
    assert [i.id for i in select(infos, ["ch99"])] == IDS
    assert [i.id for i in select(infos, ["ch99.beta"])] == ["ch99.beta"]
    with pytest.raises(UsageError, match="did you mean 'ch99.alpha'"):
        select(infos, ["ch99.alpah"])


def test_run_json_is_compact_and_diff_friendly() -> None:
    record = RunRecord(
        id="ch99.x",
        fingerprint="0123abcd",
        seeds=[0, 1],
        config={"lr": 0.002, "steps": 10},
        duration=1.234,
        versions={"numpy": "2", "torch": "2"},
        measurements={"ch99.x.v": {"value": 1 / 3, "digits": 4}},
        series={"b": [1 / 3, 2.0, float("nan")], "a": [[1, 2], [3, 4]]},
    )
    text = record.dumps()
    assert text.endswith("}\n")
    lines = text.splitlines()
    assert '    "a": [[1,2],[3,4]],' in lines and '    "b": [0.333333,2.0,null]' in lines
    assert [line.split('"')[1] for line in lines if line.startswith('  "')] == sorted(
        ["config", "duration", "files", "fingerprint", "id", "measurements", "seeds", "series", "versions"]
    )
    assert json.loads(text)["measurements"]["ch99.x.v"]["value"] == 1 / 3  # measurements keep full precision
    assert RunRecord.loads(text).dumps() == text
    assert compact([123456789.0, 1e-9 / 3]) == [123457000.0, 3.33333e-10]


def test_two_quick_experiments_on_a_dask_local_cluster(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from needs import module  # skips locally, fails under CI (make setup installs the dask extra)

    distributed = module("distributed", "pip install -e '.[dask]'")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the worker unpacks the shipped code
    cluster_options = {"processes": False, "n_workers": 1, "threads_per_worker": 2, "dashboard_address": None}
    with distributed.LocalCluster(**cluster_options) as cluster:
        report = run_experiments(
            project, ["ch99.alpha", "ch99.beta"], quick=True, executor=f"dask://{cluster.scheduler_address}"
        )
    assert sorted(report.ran) == ["ch99.alpha", "ch99.beta"] and not report.failed
    record = RunRecord.read(Store.of(project, quick=True).runs_dir / "ch99.beta.json")
    assert record is not None and record.measurements["ch99.beta.total"]["value"] == 50
    assert "model" not in sys.modules or "proj" not in str(getattr(sys.modules["model"], "__file__", ""))
    assert [p.name[:16] for p in tmp_path.glob("slidegen-bundle-*")] == ["slidegen-bundle-"]


def _scale_row(project: Project, key: str, factor: float) -> float:
    """Multiply results.md's value of ``key`` by ``factor``, as a run on another machine might have recorded it."""
    results = Results.read(project.results_path)
    row = results[key]
    value = row.value * factor
    results.merge([Result(key, value, row.sd, row.n, row.unit, row.what, row.source, row.digits)])
    results.write(project.results_path)
    return value


def test_a_rerun_within_a_millionth_keeps_the_recorded_number_and_moves_nothing(project: Project) -> None:
    run_experiments(project, jobs=1)
    recorded = _scale_row(project, "ch99.alpha.mean", 1 + 1e-9)
    text = project.results_path.read_text(encoding="utf-8")
    report = run_experiments(project, ["ch99.alpha"], force=True, jobs=1)
    assert report.ran == ["ch99.alpha"] and report.changes == [] and report.remeasured == 0
    assert project.results_path.read_text(encoding="utf-8") == text  # not a byte churned
    record = RunRecord.read(project.runs_dir / "ch99.alpha.json")
    assert record is not None and record.measurements["ch99.alpha.mean"]["value"] == recorded


def test_a_rerun_that_moves_more_than_a_millionth_is_reported(project: Project) -> None:
    run_experiments(project, jobs=1)
    measured = Results.read(project.results_path)["ch99.alpha.mean"].value
    _scale_row(project, "ch99.alpha.mean", 1 + 1e-5)
    report = run_experiments(project, ["ch99.alpha"], force=True, jobs=1)
    assert [c.key for c in report.changes] == ["ch99.alpha.mean"]
    assert Results.read(project.results_path)["ch99.alpha.mean"].value == measured


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ((2.0, 0.1), (2.0 * (1 + 1e-9), 0.1), True),
        ((2.0, 0.1), (2.0 * (1 + 2e-6), 0.1), False),
        ((2.0, 0.0), (2.0, 1e-12), True),  # an sd of 0 and one of 1e-12, against a value of 2
        ((2.0, 0.1), (2.0, 0.1 * (1 + 1e-3)), False),
        ((0.0, None), (0.0, None), True),
        ((0.0, None), (1e-300, None), False),
        ((2.0, None), (2.0, 0.0), False),
        ((float("nan"), None), (3.0, None), False),
    ],
)
def test_same_number(old: tuple[float, float | None], new: tuple[float, float | None], same: bool) -> None:
    from slidegen.run.runner import same_number

    assert same_number(Result("ch99.x", old[0], old[1]), new[0], new[1]) is same
