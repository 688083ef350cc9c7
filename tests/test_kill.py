"""SIGKILL at seeded random moments: ``slidegen run`` leaves results.md parseable with every
untouched row byte for byte, ``slidegen build`` leaves every output whole, and killing only
the parent of ``slidegen run`` takes its workers with it.

KILL_CASES (default 3) moments are tried for each command; KILL_SEED picks them.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import fake_project
import pytest

from slidegen.project import Project
from slidegen.record.results import Result, Results
from slidegen.run.runner import run_experiments

CASES = int(os.environ.get("KILL_CASES", "3"))
SEED = int(os.environ.get("KILL_SEED", "12"))
MODULE = "model/experiments/ch99_fake.py"
CITED = Result("ch98.paper", 20, digits=2, what="a published number", source="cited: Someone 2020, §1")


def start(project: Project, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "slidegen", *args],
        cwd=project.root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill_all(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def row_of(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {key} |"))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_workers_exit_when_the_parent_of_run_is_killed(tmp_path: Path) -> None:
    project = fake_project.make_fake_project(tmp_path / "proj")
    process = start(project, "run", "--jobs", "2", env={"CH99_SLOW_SECONDS": "120"})
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2:  # the pool's workers (and multiprocessing's helpers)
            assert time.monotonic() < deadline, "no workers started"
            assert process.poll() is None
            workers = children(process.pid)
            time.sleep(0.1)
        time.sleep(1.0)
        workers = children(process.pid)
        process.send_signal(signal.SIGKILL)  # the parent only
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, f"workers {[p for p in workers if alive(p)]} outlived their parent"
            time.sleep(0.1)
    finally:
        kill_all(process)


@pytest.mark.slow
def test_sigkill_of_run_at_random_moments_keeps_results_whole(tmp_path: Path) -> None:
    r = random.Random(SEED)
    project = fake_project.make_fake_project(tmp_path / "proj")
    run_experiments(project, jobs=1)
    results = Results.read(project.results_path)
    results.merge([CITED])
    results.write(project.results_path)
    untouched = row_of(project.results_path.read_text(encoding="utf-8"), "ch98.paper")
    for case in range(CASES):
        text = (project.root / MODULE).read_text(encoding="utf-8")
        (project.root / MODULE).write_text(text + f"\n# edit {case}\n", encoding="utf-8")  # every row stale
        process = start(project, "run", "--jobs", str(r.choice([1, 2])), env={"CH99_SLOW_SECONDS": "0.5"})
        time.sleep(r.uniform(0.2, 4.0))
        kill_all(process)
        after = project.results_path.read_text(encoding="utf-8")
        parsed = Results.parse(after, project.results_path)  # whole: it parses
        assert row_of(after, "ch98.paper") == untouched
        assert parsed["ch98.paper"] == Results.parse(Results([CITED]).dumps())["ch98.paper"]
        for run in project.runs_dir.glob("*.json"):
            json.loads(run.read_text(encoding="utf-8"))  # whole
    assert not run_experiments(project).failed  # and the next run finishes the work


PAGE_END = "</html>"


@pytest.mark.slow
def test_sigkill_of_build_at_random_moments_leaves_outputs_whole(tmp_path: Path) -> None:
    r = random.Random(SEED + 1)
    project = fake_project.make_fake_project(tmp_path / "proj")
    (project.decks_dir / "99-fake.md").unlink()
    for i in range(4):
        body = "\n\n---\n\n".join(f"# Slide {n}\n\n- point {n}\n\n$$\nx_{n}^2 = {i}\n$$" for n in range(40))
        (project.decks_dir / f"0{i}-deck.md").write_text(f"---\ntitle: Deck {i}\n---\n\n{body}\n", encoding="utf-8")
    out = project.build_dir
    for case in range(CASES):
        for deck in project.decks_dir.glob("*.md"):  # each build writes new content
            deck.write_text(deck.read_text(encoding="utf-8") + f"\nedit {case}\n", encoding="utf-8")
        process = start(project, "build", "--to", "html,pptx,md")
        time.sleep(r.uniform(0.5, 5.0))
        kill_all(process)
        for page in (out / "html").glob("*.html"):
            assert page.read_text(encoding="utf-8").rstrip().endswith(PAGE_END), page
        for deck in (out / "pptx").glob("*.pptx"):
            with zipfile.ZipFile(deck) as archive:
                assert archive.testzip() is None, deck
        for md in (out / "md").glob("*.md"):
            assert md.read_text(encoding="utf-8").strip(), md
    process = start(project, "build", "--to", "html,pptx,md")
    assert process.wait(timeout=120) == 0
    assert not list(out.glob(".staging-*"))  # the killed builds' staging folders are gone
    assert sorted(p.name for p in (out / "pptx").iterdir()) == [f"0{i}-deck.pptx" for i in range(4)]
