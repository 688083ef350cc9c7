"""The contracts between slidegen and a project (slidegen/record/contracts.py) and ``[tool.slidegen]``.

A broken registry is a located error, one line, never a traceback: every test here breaks
a temporary copy of ``tests/fixtures/fakeproject`` and looks at what the CLI user sees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import replace
from io import BytesIO
from pathlib import Path

import fake_project
import pytest

from slidegen.cli.main import main
from slidegen.errors import SlidegenError
from slidegen.media.figures import FigureRenderer, figure_names
from slidegen.project import CodeLayout, Project, read_layout
from slidegen.record import contracts
from slidegen.record.contracts import ContractError, Site
from slidegen.record.discover import discover
from slidegen.record.results import Result, Results
from slidegen.record.runstore import RunRecord, run_path
from slidegen.run.runner import run_experiments
from slidegen.run.worker import make_bundle

REPO = fake_project.REPO
IDS = ["ch99.alpha", "ch99.beta", "ch99.slow"]
REGISTRY = "model/experiments/registry.py"
MODULE = "model/experiments/ch99_fake.py"
FIGURE_REGISTRY = "figures/registry.py"
FIGURES = "figures/ch99.py"
DECK = "decks/99-fake.md"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    project = fake_project.make_fake_project(tmp_path / "proj")
    monkeypatch.chdir(project.root)  # diagnostics name files relative to here, as the CLI user sees them
    return project


def append(project: Project, rel: str, code: str) -> None:
    path = project.root / rel
    path.write_text(path.read_text().rstrip("\n") + "\n\n\n" + textwrap.dedent(code).lstrip("\n"))


def edit(project: Project, rel: str, old: str, new: str) -> None:
    path = project.root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def line_of(project: Project, rel: str, text: str) -> int:
    """The number of the last line of ``rel`` that contains ``text``."""
    lines = (project.root / rel).read_text().splitlines()
    return max(i for i, line in enumerate(lines, 1) if text in line)


def assignment_line(project: Project, rel: str, name: str) -> int:
    """The last line of ``rel`` that binds ``name`` at the top level (``NAME = ...`` or ``NAME: T = ...``)."""
    lines = (project.root / rel).read_text().splitlines()
    return max(i for i, line in enumerate(lines, 1) if line.startswith((f"{name} =", f"{name}: ")))


def slidegen(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``slidegen ARGS`` in-process in the working directory: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def give_results(project: Project) -> None:
    """The rows the fake deck cites and ch99.alpha's run data, so a build gets as far as the figures."""
    Results(
        [
            Result("ch99.alpha.mean", 2.5, 0.01, 3, "nats", "final value", "cited: a test", 4),
            Result("ch99.beta.total", 5000, what="a count", source="cited: a test", digits=3),
        ]
    ).write(project.results_path)
    steps = list(range(5))
    record = RunRecord("ch99.alpha", "0123abcd", [0], {}, 0.1, {}, series={"step": steps, "curve": [steps]})
    record.write(run_path(project.runs_dir, "ch99.alpha"))


# ---------------------------------------------------------------------- a broken experiment registry

NOT_A_MAPPING = '''
class Table:
    """Keeps experiments by id, but is no mapping."""

    def __init__(self):
        self.rows = {}

    def __setitem__(self, key, value):
        self.rows[key] = value

    def __contains__(self, key):
        return key in self.rows


REGISTRY = Table()
'''

BARE_EXPERIMENT = '''
from model.experiments.registry import REGISTRY


class Bare:
    """An experiment registered by hand, without seeds."""

    id = "ch99.bare"
    description = "no seeds"
    config = None
    uses = ()
    module = __name__

    def fn(self, ctx):
        return None

    def context(self, quick, progress=None):
        return None


REGISTRY["ch99.bare"] = Bare()
'''


def broken_experiments(project: Project, how: str) -> str:
    """Break the project's experiment registry ``how``; return the one line that must be reported."""
    if how == "not a mapping":
        append(project, REGISTRY, NOT_A_MAPPING)
        line = line_of(project, REGISTRY, "REGISTRY = Table()")
        return (
            f"{REGISTRY}:{line}:1: error: REGISTRY is a Table, not a mapping: "
            "make it a dict from experiment id to experiment"
        )
    if how == "no REGISTRY":
        edit(project, REGISTRY, "REGISTRY", "EXPERIMENTS")
        return (
            f"{REGISTRY}:1:1: error: model.experiments.registry defines no REGISTRY: define REGISTRY, a mapping from "
            "experiment id to experiment (see slidegen.record.contracts.Experiment)"
        )
    if how == "no context":
        append(project, REGISTRY, "del Experiment.context\n")
        line = line_of(project, REGISTRY, "class Experiment:")
        return (
            f"{REGISTRY}:{line}:1: error: experiment 'ch99.alpha' is an Experiment without 'context': an experiment "
            "registry entry needs id, description, fn, config, seeds, uses, module, context "
            "(see slidegen.record.contracts.Experiment)"
        )
    if how == "no seeds":
        append(project, MODULE, BARE_EXPERIMENT)
        line = line_of(project, MODULE, "class Bare:")
        return (
            f"{MODULE}:{line}:1: error: experiment 'ch99.bare' is a Bare without 'seeds': an experiment registry "
            "entry needs id, description, fn, config, seeds, uses, module, context "
            "(see slidegen.record.contracts.Experiment)"
        )
    if how == "uses not strings":
        edit(project, MODULE, 'quick={"count": 10})', 'quick={"count": 10}, uses=[42])')
        line = line_of(project, MODULE, '@experiment("ch99.beta"')
        return f"{MODULE}:{line}:1: error: experiment 'ch99.beta': uses is (42,) (a tuple), not a sequence of strings"
    if how == "a key that is not its id":
        append(project, MODULE, "from model.experiments.registry import REGISTRY\n")
        append(project, MODULE, 'REGISTRY["ch99.gamma"] = REGISTRY["ch99.beta"]\n')
        line = assignment_line(project, REGISTRY, "REGISTRY")
        return (
            f"{REGISTRY}:{line}:1: error: REGISTRY holds experiment 'ch99.beta' under the key 'ch99.gamma': "
            "register each under its own id"
        )
    raise AssertionError(how)


BREAKS = ["not a mapping", "no REGISTRY", "no context", "no seeds", "uses not strings", "a key that is not its id"]


@pytest.mark.parametrize("how", BREAKS)
def test_a_broken_experiment_registry_is_one_located_line_from_run(
    project: Project, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    expected = broken_experiments(project, how)
    for command in (["run"], ["run", "--list"]):
        code, out, err = slidegen(capsys, *command)
        assert (code, err.splitlines(), out) == (1, [expected], ""), command
    # check reads the experiments' source and imports nothing: the registry's live objects are run's to judge,
    # but a uses= it cannot read is its error too
    code, out, err = slidegen(capsys, "check")
    assert "Traceback" not in err
    if how == "uses not strings":
        line = line_of(project, MODULE, '@experiment("ch99.beta"')
        assert err.splitlines() == [
            f"{MODULE}:{line}:1: error: experiment 'ch99.beta': uses= must be a tuple of "
            "string literals (paths or model.* modules), so that it is fingerprinted "
            "without importing"
        ]
    with pytest.raises(ContractError) as caught:
        discover(project)
    assert str(caught.value.diagnostic) == expected


def test_a_missing_registry_module_is_a_usage_error_naming_the_file(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / REGISTRY).unlink()
    code, out, err = slidegen(capsys, "run")
    where = project.root / REGISTRY
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"slidegen: error: the experiment registry model.experiments.registry is missing: create {where}, "
        "or name another module in [tool.slidegen] of pyproject.toml"
    ]


def test_the_cli_user_sees_one_line_and_no_traceback(project: Project) -> None:
    """The real command in a fresh interpreter, as typed in a terminal."""
    expected = broken_experiments(project, "no context")
    for command in (["run"], ["run", "--list"]):
        done = subprocess.run(
            [sys.executable, "-m", "slidegen", *command], cwd=project.root, capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stderr.splitlines(), done.stdout) == (1, [expected], ""), command


# ---------------------------------------------------------------------- what an experiment returns

WRONG_RETURNS = {
    "a dict": (
        '{"ch99.wrong.x": 1.0}',
        "experiment 'ch99.wrong' returned a dict, not an outcome: return an object with measurements "
        "(result key -> measurement) and series (name -> numbers) (see slidegen.record.contracts.Outcome)",
    ),
    "a float as a measurement": (
        'Outcome({"ch99.wrong.x": 1.0})',
        "experiment 'ch99.wrong' measured 'ch99.wrong.x' as a float, not a measurement (it lacks value, sd, n, unit, "
        "what, digits): give value, sd, n, unit, what and digits (see slidegen.record.contracts.Measurement)",
    ),
    "words as a series": (
        'Outcome({}, {"labels": ["a", "b"]})',
        "experiment 'ch99.wrong' returned series 'labels' that is not numbers: a series holds numbers, not str",
    ),
    "a list of measurements": (
        "Outcome([Measurement(1.0)])",
        "experiment 'ch99.wrong' returned measurements that are a list, not a mapping by name",
    ),
    "an infinite value": (
        'Outcome({"ch99.wrong.x": Measurement(float("inf"))})',
        "experiment 'ch99.wrong': measurement ch99.wrong.x is not finite (value inf, sd None)",
    ),
    "no digits to show": (
        'Outcome({"ch99.wrong.x": Measurement(1.0, digits=0)})',
        "experiment 'ch99.wrong': measurement ch99.wrong.x asks for 0 digits; at least 1",
    ),
}


def add_wrong_experiment(project: Project, returned: str) -> int:
    append(project, MODULE, f'@experiment("ch99.wrong")\ndef wrong(ctx):\n    return {returned}\n')
    return line_of(project, MODULE, '@experiment("ch99.wrong")')


@pytest.mark.parametrize("case", list(WRONG_RETURNS))
def test_an_experiment_returning_no_outcome_fails_at_its_definition(project: Project, case: str) -> None:
    returned, message = WRONG_RETURNS[case]
    line = add_wrong_experiment(project, returned)
    report = run_experiments(project, ["ch99.wrong"], jobs=1)
    assert report.ran == [] and report.failed == {"ch99.wrong": f"{MODULE}:{line}:1: error: {message}"}
    assert not project.results_path.exists()


def test_a_wrong_return_through_slidegen_run_is_one_error_line(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    returned, message = WRONG_RETURNS["a dict"]
    line = add_wrong_experiment(project, returned)
    code, out, err = slidegen(capsys, "run", "ch99.wrong", "--jobs", "1")
    assert code == 1 and out == ""
    assert [text for text in err.splitlines() if "error" in text] == [f"{MODULE}:{line}:1: error: {message}"]
    assert "Traceback" not in err and "ran 0, 0 current, 1 failed" in err


def test_a_context_that_is_no_run_context_fails_where_context_is_defined(project: Project) -> None:
    append(project, REGISTRY, "def _no_context(self, quick, progress=None):\n    return None\n\n\n")
    append(project, REGISTRY, "Experiment.context = _no_context\n")
    line = line_of(project, REGISTRY, "def _no_context")
    report = run_experiments(project, ["ch99.beta"], jobs=1)
    assert report.failed == {
        "ch99.beta": f"{REGISTRY}:{line}:1: error: experiment 'ch99.beta': context() returned None, which has no "
        "'quick': return an object with quick, seeds and config (see slidegen.record.contracts.RunContext)"
    }


def test_an_experiment_that_raises_is_located_at_the_raise_and_keeps_its_traceback(project: Project) -> None:
    append(project, MODULE, '@experiment("ch99.bad")\ndef bad(ctx):\n    """Fails."""\n    raise RuntimeError("boom")')
    line = line_of(project, MODULE, 'raise RuntimeError("boom")')
    report = run_experiments(project, ["ch99.bad"], jobs=1)
    first, _, detail = report.failed["ch99.bad"].partition("\n")
    assert first == f"{MODULE}:{line}:1: error: experiment 'ch99.bad' failed: RuntimeError: boom"
    assert detail.startswith("Traceback") and detail.endswith("RuntimeError: boom")


def test_a_measurement_key_outside_the_chapter_is_located_at_the_experiment(project: Project) -> None:
    edit(project, MODULE, '{"ch99.beta.total": Measurement', '{"ch98.beta.total": Measurement')
    line = line_of(project, MODULE, '@experiment("ch99.beta"')
    report = run_experiments(project, ["ch99.beta"], jobs=1)
    assert report.failed == {
        "ch99.beta": f"{MODULE}:{line}:1: error: experiment 'ch99.beta' measures 'ch98.beta.total': keys are "
        "'ch99.name' (letters, digits, _ and -)"
    }


# ---------------------------------------------------------------------- a broken figure registry

BARE_FIGURE = '''
from figures.registry import FIGURES


class BareFigure:
    """A figure registered by hand, without a line."""

    name = "ch99.bare"
    runs = None
    module = __name__

    def fn(self, runs):
        return None


FIGURES["ch99.bare"] = BareFigure()
'''


def test_a_figure_returning_no_figure_is_one_located_line_from_build_and_check(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    give_results(project)
    append(project, FIGURES, '@figure("ch99.nothing", runs=("ch99.alpha",))\ndef nothing(runs):\n    new_figure()\n')
    (project.root / DECK).write_text((project.root / DECK).read_text() + "\n![Nothing](fig:ch99.nothing)\n")
    line = line_of(project, FIGURES, '@figure("ch99.nothing"')
    expected = (
        f"{FIGURES}:{line}:1: error: figure 'ch99.nothing' returned None, not a matplotlib Figure: "
        "end the function with 'return fig'"
    )
    code, out, err = slidegen(capsys, "build", "--to", "html")
    assert code == 1 and out == "" and err.splitlines()[0] == expected and "Traceback" not in err
    code, out, err = slidegen(capsys, "check")
    assert code == 1 and expected in err.splitlines() and "Traceback" not in err


def broken_figures(project: Project, how: str) -> str:
    if how == "not a mapping":
        append(project, FIGURE_REGISTRY, NOT_A_MAPPING.replace("REGISTRY", "FIGURES"))
        line = line_of(project, FIGURE_REGISTRY, "FIGURES = Table()")
        return (
            f"{FIGURE_REGISTRY}:{line}:1: error: FIGURES is a Table, not a mapping: "
            "make it a dict from figure name to figure"
        )
    if how == "no line":
        append(project, FIGURES, BARE_FIGURE)
        line = line_of(project, FIGURES, "class BareFigure:")
        return (
            f"{FIGURES}:{line}:1: error: figure 'ch99.bare' is a BareFigure without 'line': a figure registry entry "
            "needs name, fn, runs, module, line (see slidegen.record.contracts.FigureSpec)"
        )
    if how == "runs not ids":
        edit(project, FIGURES, '@figure("ch99.curve", runs=("ch99.alpha",))', '@figure("ch99.curve", runs=(1,))')
        line = line_of(project, FIGURES, '@figure("ch99.curve"')
        return (
            f"{FIGURES}:{line}:1: error: figure 'ch99.curve': runs is (1,) (a tuple), "
            "not None or a sequence of experiment ids"
        )
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["not a mapping", "no line", "runs not ids"])
def test_a_broken_figure_registry_is_one_located_line_from_check_and_build(
    project: Project, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    give_results(project)
    expected = broken_figures(project, how)
    code, out, err = slidegen(capsys, "check")
    assert (code, err.splitlines(), out) == (1, [expected], "")
    code, out, err = slidegen(capsys, "build", "--to", "html")
    assert code == 1 and out == "" and err.splitlines()[0] == expected and "Traceback" not in err


def test_a_style_without_rc_is_located_and_a_project_without_style_uses_matplotlibs(project: Project) -> None:
    give_results(project)
    style = project.root / "figures" / "style.py"
    style.write_text(style.read_text() + "\n\ndel rc\n")
    with pytest.raises(ContractError) as caught:
        FigureRenderer(project)("ch99.curve")
    assert str(caught.value.diagnostic) == (
        "figures/style.py:1:1: error: figures.style has no function rc(): define rc() returning matplotlib rc "
        "settings (see slidegen.record.contracts.FigureStyle)"
    )
    style.write_text(style.read_text() + "\n\ndef rc():\n    return ['font.size', 18]\n")
    line = line_of(project, "figures/style.py", "def rc():")
    with pytest.raises(ContractError) as caught:
        FigureRenderer(project)("ch99.curve")
    assert str(caught.value.diagnostic) == (
        f"figures/style.py:{line}:1: error: figures.style.rc() returned a list, not a mapping of matplotlib rc settings"
    )
    style.unlink()
    (project.root / FIGURES).write_text(
        "from matplotlib.figure import Figure\n\nfrom figures.registry import figure\n\n\n"
        '@figure("ch99.plain", runs=("ch99.alpha",))\ndef plain(runs):\n    fig = Figure()\n'
        '    fig.add_subplot().plot(runs["ch99.alpha"]["step"])\n    return fig\n'
    )
    renderer = FigureRenderer(project)
    svg, png = renderer("ch99.plain")
    assert renderer.drawn == ["ch99.plain"] and svg.is_file() and png.is_file()


# ---------------------------------------------------------------------- [tool.slidegen]

LAYOUT = """\
[project]
name = "elsewhere"

[tool.slidegen]
experiments = "lab/runs/ch*.py"
experiment-registry = "lab.registry"
figures = "plots/ch*.py"
figure-registry = "plots.registry"
figure-style = "plots.style"
"""


def relocate(project: Project) -> None:
    """Move the fake project's code to ``lab/`` and ``plots/`` as ``LAYOUT`` says (no ``model/``, no ``figures/``)."""
    root = project.root
    (root / "lab" / "runs").mkdir(parents=True)
    (root / "lab" / "__init__.py").write_text("")
    (root / "lab" / "runs" / "__init__.py").write_text("")
    shutil.copy(root / REGISTRY, root / "lab" / "registry.py")
    shutil.copy(root / "model" / "helper.py", root / "lab" / "helper.py")
    text = (root / MODULE).read_text().replace("model.experiments.registry", "lab.registry")
    text = text.replace("model.helper", "lab.helper")
    (root / "lab" / "runs" / "ch99_fake.py").write_text(text)
    shutil.copytree(root / "figures", root / "plots")
    figures = (root / "plots" / "ch99.py").read_text()
    figures = figures.replace("figures.registry", "plots.registry").replace("figures.style", "plots.style")
    (root / "plots" / "ch99.py").write_text(figures)
    shutil.rmtree(root / "model")
    shutil.rmtree(root / "figures")
    (root / "pyproject.toml").write_text(LAYOUT)


CODE = ["lab/__init__.py", "lab/helper.py", "lab/registry.py", "lab/runs/__init__.py", "lab/runs/ch99_fake.py"]


def test_tool_slidegen_patterns_are_honoured(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    relocate(project)
    infos = discover(project)
    assert sorted(infos) == IDS
    alpha = infos["ch99.alpha"]
    assert (alpha.module, alpha.path) == ("lab.runs.ch99_fake", "lab/runs/ch99_fake.py")
    assert sorted({name.split(":")[0] for name in alpha.files}) == [CODE[1], CODE[2], CODE[4]]  # what it reaches

    report = run_experiments(project, jobs=2)
    assert sorted(report.ran) == IDS and report.failed == {}
    assert Results.read(project.results_path)["ch99.beta.total"].value == 5000

    assert figure_names(project) == {"ch99.curve", "ch99.broken"}
    renderer = FigureRenderer(project)
    renderer("ch99.curve")
    assert renderer.drawn == ["ch99.curve"] and "plots/style.py" in renderer.figures["ch99.curve"].code

    code, out, err = slidegen(capsys, "run", "--list")
    assert code == 0 and "ch99.alpha" in out and "current" in out

    with zipfile.ZipFile(BytesIO(make_bundle(project.root, project.layout.experiment_packages))) as bundle:
        assert sorted(bundle.namelist()) == CODE  # what a remote worker receives


def test_the_default_layout_is_todays_and_this_project_states_it() -> None:
    assert CodeLayout() == CodeLayout(
        experiments="model/experiments/ch[0-9][0-9]*.py",
        experiment_registry="model.experiments.registry",
        figures="figures/ch[0-9][0-9]*.py",
        figure_registry="figures.registry",
        figure_style="figures.style",
    )
    assert (CodeLayout().experiment_packages, CodeLayout().figure_packages, CodeLayout().packages) == (
        ("model",),
        ("figures", "model"),
        ("figures", "model"),
    )
    # the project states the layout's defaults; its title names the series (the index page's heading)
    assert replace(read_layout(REPO / "pyproject.toml"), title="") == CodeLayout()
    assert Project(REPO).layout.title and replace(Project(REPO).layout, title="") == CodeLayout()


BAD_TABLES = {
    "unknown key": (
        '[tool.slidegen]\nfigures = "figures/ch*.py"\nexperiment = "lab/ch*.py"\n',
        "pyproject.toml:3:1: error: unknown key 'experiment' in [tool.slidegen] (did you mean 'experiments'?)",
    ),
    "not a string": (
        "[tool.slidegen]\nexperiments = 3\n",
        "pyproject.toml:2:1: error: [tool.slidegen] experiments must be a non-empty string, not 3 (an int)",
    ),
    "a path outside": (
        '[tool.slidegen]\nexperiments = "../elsewhere/ch*.py"\n',
        "pyproject.toml:2:1: error: [tool.slidegen] experiments = '../elsewhere/ch*.py': write a glob relative to "
        "the project root with '/' between folders, e.g. 'model/experiments/ch*.py'",
    ),
    "no package folder": (
        '[tool.slidegen]\nfigures = "ch*.py"\n',
        "pyproject.toml:2:1: error: [tool.slidegen] figures = 'ch*.py': the modules must lie in a package folder "
        "named plainly, e.g. 'model/experiments/ch*.py'",
    ),
    "not python": (
        '[tool.slidegen]\n"figures" = "figures/ch*"\n',
        "pyproject.toml:2:1: error: [tool.slidegen] figures = 'figures/ch*': the pattern must match Python files: "
        "end it with '.py'",
    ),
    "not a module": (
        '[project]\nname = "x"\n\n[tool.slidegen]\nfigure-registry = "figures/registry.py"\n',
        "pyproject.toml:5:1: error: [tool.slidegen] figure-registry = 'figures/registry.py': write a dotted module "
        "name inside a package, e.g. 'model.experiments.registry'",
    ),
    "not a table": (
        '[tool]\nslidegen = "model"\n',
        "pyproject.toml:2:1: error: tool.slidegen must be a table: write [tool.slidegen] and its keys below it",
    ),
    "invalid toml": (
        "[tool.slidegen]\nexperiments = model\n",
        "pyproject.toml:2:15: error: invalid TOML: Invalid value",
    ),
}


@pytest.mark.parametrize("case", list(BAD_TABLES))
def test_a_bad_tool_slidegen_table_is_a_located_error(
    project: Project, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, expected = BAD_TABLES[case]
    (project.root / "pyproject.toml").write_text(text)
    with pytest.raises(SlidegenError) as caught:
        read_layout(project.root / "pyproject.toml")
    assert str(caught.value.diagnostic) == expected
    code, out, err = slidegen(capsys, "run", "--list")
    assert (code, err.splitlines(), out) == (1, [expected], "")


def test_no_pyproject_or_no_table_means_the_defaults(tmp_path: Path) -> None:
    assert read_layout(tmp_path / "pyproject.toml") == CodeLayout()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.other]\nexperiments = 1\n')
    assert read_layout(tmp_path / "pyproject.toml") == CodeLayout()


# ---------------------------------------------------------------------- the protocols themselves


def test_the_runtime_checks_ask_for_exactly_the_protocols_members() -> None:
    def members(protocol: type) -> list[str]:
        return [name for name in vars(protocol) if not name.startswith("_")]

    assert sorted(m.name for m in contracts.EXPERIMENT_MEMBERS) == sorted(members(contracts.Experiment))
    assert sorted(m.name for m in contracts.FIGURE_MEMBERS) == sorted(members(contracts.FigureSpec))
    assert sorted(m.name for m in contracts.CONTEXT_MEMBERS) == sorted(members(contracts.RunContext))
    assert sorted(contracts.MEASUREMENT_MEMBERS) == sorted(members(contracts.Measurement))


def test_outcome_data_is_plain_checked_data() -> None:
    from types import SimpleNamespace as Obj

    m = Obj(value=2, sd=None, n=3.0, unit="nats", what="loss", digits=4)
    outcome = Obj(measurements={"ch99.x": m}, series={"curve": [1 / 3, float("nan")]})
    data, series = contracts.outcome_data("ch99.e", outcome, Site(Path("e.py"), 7))
    assert data == {"ch99.x": {"value": 2.0, "sd": None, "n": 3, "unit": "nats", "what": "loss", "digits": 4}}
    assert series == {"curve": [0.333333, None]}
    many = Obj(measurements={"ch99.x": Obj(**{**vars(m), "value": "many"})}, series={})
    with pytest.raises(ContractError) as caught:
        contracts.outcome_data("ch99.e", many, Site(Path("e.py"), 7))
    assert (caught.value.site, caught.value.problem) == (
        Site(Path("e.py"), 7),
        "experiment 'ch99.e' measured 'ch99.x' with a value that is not a number: "
        "could not convert string to float: 'many'",
    )


CONFORMING = """\
import figures.registry
import figures.style
import model.experiments.registry
from slidegen.record import contracts

experiments: contracts.ExperimentRegistry = model.experiments.registry
figure_registry: contracts.FigureRegistry = figures.registry
style: contracts.FigureStyle = figures.style
"""

NOT_CONFORMING = """\
from dataclasses import dataclass

from slidegen.record import contracts


@dataclass(frozen=True)
class NoContext:
    id: str
    description: str
    config: object
    seeds: tuple[int, ...]
    uses: tuple[str, ...]
    module: str

    def fn(self, ctx: object) -> None:
        return None


entry: contracts.Experiment = NoContext("ch99.x", "", None, (0,), (), "m")
"""


def test_the_projects_registries_satisfy_the_protocols_statically(tmp_path: Path) -> None:
    """mypy: this project's registries are the protocols' shape (without importing slidegen); a wrong one is not."""
    (tmp_path / "conforming.py").write_text(CONFORMING)
    (tmp_path / "not_conforming.py").write_text(NOT_CONFORMING)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--no-error-summary",
            "--hide-error-context",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(tmp_path / "conforming.py"),
            str(tmp_path / "not_conforming.py"),
        ],
        cwd=REPO,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [Path(line.split(":", 1)[0]).name for line in errors] == ["not_conforming.py"], done.stdout + done.stderr
    line = next(i for i, text in enumerate(NOT_CONFORMING.splitlines(), 1) if text.startswith("entry:"))
    assert f":{line}: error: Incompatible types in assignment" in errors[0]
