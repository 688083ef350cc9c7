"""Fingerprints by what an experiment reaches (format 5, :mod:`slidegen.record.reach`), on copies of this
project's model/: a helper moved to another module changes no fingerprint; reformatting, a comment
or a docstring edit changes none; an edit of an expression changes exactly
the fingerprints of the experiments that reach what was edited; an edit of a function nothing
reaches changes none; and staleness is told without importing anything (no torch, no model/),
from a cold build folder."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import fake_project
import pytest

from slidegen.project import Project
from slidegen.record.discover import current_fingerprints, fingerprints

REPO = fake_project.REPO
COMMON = "model/experiments/common.py"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A copy of this project's code and results, with no build folder."""
    for folder in ("model", "results", "components"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def definition(path: Path, name: str) -> str:
    """The text of top-level function ``name`` of ``path``."""
    text = path.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return "".join(text.splitlines(keepends=True)[node.lineno - 1 : node.end_lineno])


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def move(root: Path, source: str, name: str, dest: str, imports: str = "") -> None:
    """Move function ``name`` from module file ``source`` to the end of ``dest`` (``imports`` added on top)."""
    text = definition(root / source, name)
    replace(root / source, text, "")
    target = root / dest
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(
        n
        for n in ast.parse("".join(lines)).body
        if isinstance(n, (ast.Import, ast.ImportFrom)) and getattr(n, "module", None) != "__future__"
    )
    lines.insert(first.lineno - 1, imports)
    target.write_text("".join(lines) + "\n\n" + text, encoding="utf-8")


def test_moving_helpers_between_modules_leaves_every_fingerprint_unchanged(root: Path) -> None:
    before = current_fingerprints(Project(root))
    # a helper imported by name: common.first_step_below into model/data.py, its one caller re-pointed
    move(root, COMMON, "first_step_below", "model/data.py", "import math\n")
    replace(
        root / "model/experiments/ch01_training_loop.py",
        "from model.experiments.common import exact, first_step_below, measured, progress",
        "from model.data import first_step_below\nfrom model.experiments.common import exact, measured, progress",
    )
    # a chapter's own helper into the shared module
    move(root, "model/experiments/ch05_lr.py", "blowup_step", COMMON)
    replace(
        root / "model/experiments/ch05_lr.py",
        "from model.experiments.common import ",
        "from model.experiments.common import blowup_step, ",
    )
    # a helper called as module.name (vl.fastest): into model/optim.py, the caller now optim.fastest
    move(
        root,
        "model/valley.py",
        "fastest",
        "model/optim.py",
        "import math\n\nimport numpy as np\n\nfrom model.valley import Settings, Stepper, Valley, loss\n",
    )
    ch04 = root / "model/experiments/ch04_optimisers.py"
    ch04.write_text(
        ch04.read_text(encoding="utf-8")
        .replace("vl.fastest(", "optim.fastest(")
        .replace("from model import valley as vl", "from model import optim, valley as vl"),
        encoding="utf-8",
    )
    assert "def first_step_below" not in (root / COMMON).read_text(encoding="utf-8")
    assert "def fastest" in (root / "model/optim.py").read_text(encoding="utf-8")
    compile_all(root)
    assert current_fingerprints(Project(root)) == before


def compile_all(root: Path) -> None:
    """The edited copy is still Python (a move that broke the code would prove nothing)."""
    for path in (root / "model").rglob("*.py"):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize(
    ("module", "name"), [("model/train.py", "lr_at"), ("model/valley.py", "fastest"), ("model/data.py", "ngram_loss")]
)
def test_editing_a_reached_definition_changes_exactly_the_experiments_that_reach_it(
    root: Path, module: str, name: str
) -> None:
    before = fingerprints(Project(root))
    reaching = {exp_id for exp_id, fp in before.items() if f"{module}:{name}" in fp.files}
    assert reaching and reaching != set(before)
    text = definition(root / module, name)
    replace(root / module, text, text.rstrip("\n") + "\n    _edited = 1  # noqa\n")
    after = current_fingerprints(Project(root))
    assert {exp_id for exp_id in before if after[exp_id] != before[exp_id].fingerprint} == reaching


def test_formatting_comments_and_docstrings_leave_every_fingerprint_unchanged(root: Path) -> None:
    before = current_fingerprints(Project(root))
    train = root / "model/train.py"
    # a docstring edit (the module's and a reached function's), a comment, and a reformatting
    replace(train, "One loop serves one run and many.", "One loop serves one run and many (edited).")
    replace(train, '    """The learning rate of update `step` (0-based)', '    """The rate of update `step`')
    replace(train, "    if step < cfg.warmup:\n", "    # warmup first\n    if step < cfg.warmup:  # (linear)\n")
    replace(
        train,
        "        return cfg.lr * (step + 1) / cfg.warmup\n",
        "        return (\n            cfg.lr\n            * (step + 1)\n            / cfg.warmup\n        )\n",
    )
    replace(root / "model/valley.py", "def fastest(", "def fastest(  # a comment on the signature\n")
    compile_all(root)
    assert current_fingerprints(Project(root)) == before
    # but an expression is what a unit does: changing one makes the experiments that reach it stale
    replace(train, "            / cfg.warmup\n", "            / (cfg.warmup + 1)\n")
    after = current_fingerprints(Project(root))
    reaching = {exp_id for exp_id, fp in fingerprints(Project(root)).items() if "model/train.py:lr_at" in fp.files}
    assert reaching and {exp_id for exp_id in before if after[exp_id] != before[exp_id]} == reaching


def test_reformatting_the_whole_package_leaves_every_fingerprint_unchanged(root: Path) -> None:
    before = current_fingerprints(Project(root))
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--line-length", "60", "model"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "reformatted" in done.stdout, done.stdout + done.stderr
    compile_all(root)
    assert current_fingerprints(Project(root)) == before


def test_editing_a_function_no_experiment_reaches_changes_no_fingerprint(root: Path) -> None:
    before = fingerprints(Project(root))
    reached = {name for fp in before.values() for name in fp.files}
    tree = ast.parse((root / "model/train.py").read_text(encoding="utf-8"))
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    unreached = [name for name in functions if f"model/train.py:{name}" not in reached]
    assert unreached, "every function of model/train.py is reached: pick another module"
    text = definition(root / "model/train.py", unreached[0])
    replace(root / "model/train.py", text, text.rstrip("\n") + "\n    _edited = 1  # noqa\n")
    assert current_fingerprints(Project(root)) == {exp_id: fp.fingerprint for exp_id, fp in before.items()}


#: Tells staleness in a process where torch and the project's own packages cannot be imported.
NO_IMPORT = """
import importlib.abc, json, sys
from pathlib import Path

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "model", "figures"):
            raise ImportError(f"{name} may not be imported here")
        return None

sys.meta_path.insert(0, Refuse())
from slidegen.project import Project
from slidegen.record.results import Results
from slidegen.record.stale import fingerprints_or_problem, stale_keys

project = Project(Path(sys.argv[1]))
found, problem = fingerprints_or_problem(project)
rows = Results.read(project.results_path)
stale = stale_keys(found or {}, {key: row.source for key, row in rows.items()})
imported = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "model"))
measured = sum(bool(r.experiment) for r in rows.values())
print(json.dumps({"problem": problem and problem.message, "measured": measured, "stale": sorted(stale),
                  "imported": imported}))
"""


def tell(root: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", NO_IMPORT, str(root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_staleness_is_told_without_importing_torch_or_the_experiments_from_a_cold_build_folder(root: Path) -> None:
    assert not (root / "build").exists()
    told = tell(root)
    assert told["problem"] is None and told["imported"] == [] and told["stale"] == []
    assert isinstance(told["measured"], int) and told["measured"] > 900
    replace(root / "model/valley.py", "def fastest(", "def fastest(  # a comment changes nothing\n")
    assert tell(root)["stale"] == []
    text = definition(root / "model/valley.py", "fastest")
    replace(root / "model/valley.py", text, text.rstrip("\n") + "\n    _edited = 1  # noqa\n")
    stale = tell(root)["stale"]
    assert isinstance(stale, list) and stale and all(key.startswith("ch04.") for key in stale)
    shutil.rmtree(root / "build")
    assert tell(root)["stale"] == stale  # the same answer from a cold cache
