"""Run the experiments whose code or settings changed; merge what they measure, as each finishes.

    report = run_experiments(project, ["ch05"], jobs=2)

Work goes through a :class:`concurrent.futures.Executor`: by default a pool of spawned
processes, one per core, one torch thread each; ``dask://HOST:PORT`` sends it to a Dask
cluster instead (``pip install slidegen[dask]``); any executor object works too.

Every finished experiment is written at once, ``runs/<id>.json`` then ``results.md``,
each atomically (temp file + rename). A crash or a kill at any moment therefore leaves
both files whole, every key of an unfinished experiment as it was, and at worst an
experiment whose json is newer than its rows: its fingerprint no longer matches, so the
next run simply runs it again.

A rerun that measures a number within a relative :data:`SAME_NUMBER` (1e-6) of its
recorded value, and its sd likewise, keeps the recorded value and sd (:func:`same_number`):
results.md and the run's json do not churn, and the key is not among the results that
moved; only its fingerprint is renewed. That is far below the 1-4 digits a slide shows and
above the last-bit differences of float arithmetic between machines, thread counts and
stack layouts.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue as queue_module
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from slidegen.errors import Diagnostic, SlidegenError, UsageError, display_path
from slidegen.project import Project
from slidegen.record.discover import ExperimentInfo, discover, environment, library_versions, same_config
from slidegen.record.results import KEY_RE, RUN_COLUMNS, Result, Results, RunEnvironment
from slidegen.record.runstore import RunRecord, run_path
from slidegen.run.worker import ExperimentFailed, execute, init_worker, make_bundle


@dataclass(frozen=True)
class Store:
    """Where a run's numbers go: the project's ``results/``, or ``build/quick/`` for ``--quick``."""

    results_path: Path
    runs_dir: Path

    @classmethod
    def of(cls, project: Project, quick: bool = False) -> Store:
        if quick:
            return cls(project.build_dir / "quick" / "results.md", project.build_dir / "quick" / "runs")
        return cls(project.results_path, project.runs_dir)

    def read_results(self) -> Results:
        """results.md, or an empty one when there is none yet."""
        try:
            return Results.read(self.results_path)
        except FileNotFoundError:
            return Results()

    def record(self, exp_id: str) -> RunRecord | None:
        return RunRecord.read(run_path(self.runs_dir, exp_id))


@dataclass(frozen=True)
class Change:
    """A result whose value moved, appeared or went away in this run."""

    key: str
    old: Result | None
    new: Result | None
    citations: tuple[tuple[str, int, int | None], ...] = ()
    """``(deck path, line, slide number)`` of every slide citing the key."""


@dataclass
class RunReport:
    """What one ``slidegen run`` did."""

    store: Store
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """Experiment id -> why it failed: ``file:line:col: error: ...``, then any traceback."""
    not_run: list[str] = field(default_factory=list)
    """Experiments cancelled by an interrupt."""
    changes: list[Change] = field(default_factory=list)
    remeasured: int = 0
    """Rows rewritten with a new fingerprint but the same value and sd."""
    interrupted: bool = False
    durations: dict[str, float] = field(default_factory=dict)


class Display(Protocol):
    """What the runner tells the screen (see :mod:`slidegen.cli.run`)."""

    def started(self, todo: Sequence[ExperimentInfo], expected: Mapping[str, float]) -> None: ...
    def progress(self, exp_id: str, fraction: float, note: str) -> None: ...
    def finished(self, exp_id: str, duration: float | None, error: str | None) -> None: ...
    def stopped(self) -> None: ...


class _Quiet:
    def started(self, todo: Sequence[ExperimentInfo], expected: Mapping[str, float]) -> None:
        pass

    def progress(self, exp_id: str, fraction: float, note: str) -> None:
        pass

    def finished(self, exp_id: str, duration: float | None, error: str | None) -> None:
        pass

    def stopped(self) -> None:
        pass


# ---------------------------------------------------------------------- planning


def select(infos: Mapping[str, ExperimentInfo], targets: Sequence[str]) -> list[ExperimentInfo]:
    """The experiments named by ``targets`` (ids or chapters such as ``ch05``); all when empty."""
    if not targets:
        return list(infos.values())
    chosen: dict[str, ExperimentInfo] = {}
    for target in targets:
        matches = [info for exp_id, info in infos.items() if exp_id == target or info.chapter == target]
        if not matches:
            import difflib

            names = sorted({*infos, *(info.chapter for info in infos.values())})
            close = difflib.get_close_matches(target, names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise UsageError(f"no experiment or chapter '{target}'{hint}; `slidegen run --list` shows them")
        chosen.update((info.id, info) for info in matches)
    return sorted(chosen.values(), key=lambda info: info.id)


def is_current(info: ExperimentInfo, store: Store, results: Results) -> bool:
    """True when the last run has today's fingerprint and config (at 12 significant digits: see
    :func:`~slidegen.record.discover.same_config`) and every row it measured carries the fingerprint."""
    record = store.record(info.id)
    if record is None or not info.accepts(record.fingerprint) or not same_config(record.config, info.config):
        return False
    sources = {f"run {info.id} {record.fingerprint}", f"run {info.id} {info.fingerprint}"}
    return all(key in results and results[key].source in sources for key in record.measurements)


# ---------------------------------------------------------------------- running


def run_experiments(
    project: Project,
    targets: Sequence[str] = (),
    *,
    jobs: int | None = None,
    force: bool = False,
    quick: bool = False,
    executor: Executor | str | None = None,
    display: Display | None = None,
) -> RunReport:
    """Run the selected experiments that are not current (all of them with ``force`` or ``quick``).

    ``quick`` runs with each experiment's quick overrides and writes to ``build/quick/``,
    never to ``results/``. A ``KeyboardInterrupt`` stops the run: finished experiments
    stay saved, the rest are listed in ``not_run``.
    """
    display = display or _Quiet()
    store = Store.of(project, quick)
    if quick:
        _clear_scratch(store)
    infos = discover(project)
    chosen = select(infos, targets)
    results = store.read_results()
    report = RunReport(store)
    todo = [info for info in chosen if force or quick or not is_current(info, store, results)]
    report.skipped = [info.id for info in chosen if info not in todo]
    if not todo:
        return report
    expected = {info.id: record.duration for info in todo if (record := store.record(info.id)) is not None}
    before = dict(results)
    merger = _Merger(project, store, results, quick)
    workers = max(1, min(jobs or _cores(), len(todo)))
    pool, progress_queue, close = _open_executor(executor, workers)
    layout = project.layout
    remote = not isinstance(pool, ProcessPoolExecutor)
    bundle = make_bundle(project.root, layout.experiment_packages) if remote else None  # remote: ship the code
    root = str(project.root.resolve())
    futures: dict[Future[Any], ExperimentInfo] = {}
    display.started(todo, expected)
    try:
        for info in todo:
            future = pool.submit(
                execute,
                root,
                info.module,
                info.id,
                quick,
                bundle,
                registry=layout.experiment_registry,
                packages=layout.packages,
            )
            futures[future] = info
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            _drain(progress_queue, display)
            for future in sorted(done, key=lambda f: futures[f].id):
                _collect(project, future, futures[future], merger, report, display)
    except KeyboardInterrupt:
        report.interrupted = True
        for future in futures:
            future.cancel()
        _terminate(pool)
        report.not_run = [info.id for info in todo if info.id not in report.ran and info.id not in report.failed]
    finally:
        display.stopped()
        close()
    report.changes, report.remeasured = _changes(before, merger.results, set(report.ran))
    return report


def _collect(
    project: Project, future: Future[Any], info: ExperimentInfo, merger: _Merger, report: RunReport, display: Display
) -> None:
    """Merge one finished experiment, or record why it failed (see :func:`failure`)."""
    try:
        payload = future.result()
        merger.merge(info, payload)
    except KeyboardInterrupt:
        raise
    except Exception as error:  # the experiment's own failure, a broken contract, or a broken worker
        message = failure(project, info, error)
        report.failed[info.id] = message
        display.finished(info.id, None, message)
        return
    report.ran.append(info.id)
    report.durations[info.id] = payload["duration"]
    display.finished(info.id, payload["duration"], None)


def failure(project: Project, info: ExperimentInfo, error: BaseException) -> str:
    """Why ``info`` failed, as ``file:line:col: error: ...`` (then a traceback, if the experiment raised)."""
    if isinstance(error, SlidegenError):
        return str(error.diagnostic)
    if isinstance(error, ExperimentFailed):
        path = project.root / (error.path or info.path)
        text = str(Diagnostic(display_path(path), error.line, 1, error.message))
        return f"{text}\n{error.detail}" if error.detail else text
    why = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__  # e.g. a worker that died
    where = display_path(project.root / info.path)
    return str(Diagnostic(where, info.line, 1, f"experiment '{info.id}' failed: {why}"))


class _Merger:
    """Writes each finished experiment into the store, the json first, then results.md.

    results.md is re-read under a lock before each merge, so two runs at once (say
    ``run ch01`` and ``run ch05`` in two terminals) never undo each other's rows.
    """

    def __init__(self, project: Project, store: Store, results: Results, quick: bool) -> None:
        self.project = project
        self.store = store
        self.results = results
        self.quick = quick

    def merge(self, info: ExperimentInfo, payload: Mapping[str, Any]) -> None:
        source = f"run {info.id} {info.fingerprint}"
        at = (self.project.root / info.path, info.line, 1)
        with _locked(self.store.results_path.parent):
            current = self.store.read_results()
            rows = []
            measurements = dict(payload["measurements"])
            for key, m in sorted(measurements.items()):
                if not KEY_RE.fullmatch(key) or key.split(".", 1)[0] != info.chapter:
                    rule = f"keys are '{info.chapter}.name' (letters, digits, _ and -)"
                    raise SlidegenError(*at, f"experiment '{info.id}' measures '{key}': {rule}")
                owner = current.get(key)
                if owner is not None and owner.experiment != info.id:
                    by = f"experiment {owner.experiment}" if owner.experiment else "a citation"
                    raise SlidegenError(*at, f"experiment '{info.id}' measures '{key}', which {by} already provides")
                if owner is not None and owner.n == m["n"] and same_number(owner, m["value"], m["sd"]):
                    m = measurements[key] = {**m, "value": owner.value, "sd": owner.sd}  # re-measured, not moved
                rows.append(Result(key, m["value"], m["sd"], m["n"], m["unit"], m["what"], source, m["digits"]))
            current.merge(rows)
            gone = [k for k, r in current.items() if r.experiment == info.id and k not in measurements]
            current.remove(gone)
            record = RunRecord(
                id=info.id,
                fingerprint=info.fingerprint,
                seeds=list(payload["seeds"]),
                config=payload["config"],
                duration=float(payload["duration"]),
                versions={**library_versions(), **payload["versions"]},
                files=info.files,
                measurements=measurements,
                series=dict(payload["series"]),
                quick=self.quick,
            )
            record.write(run_path(self.store.runs_dir, info.id))
            ran_under = {k: str(v) for k, v in payload["versions"].items() if k in RUN_COLUMNS}  # the worker's own
            current.runs[info.id] = RunEnvironment(info.id, info.fingerprint, {**environment(), **ran_under})
            current.write(self.store.results_path)
        self.results = current


#: Relative difference below which a rerun's number is the recorded one (see the module docstring).
SAME_NUMBER = 1e-6


def same_number(old: Result, value: float, sd: float | None) -> bool:
    """True when ``value`` is within a relative :data:`SAME_NUMBER` of ``old.value`` and ``sd`` of ``old.sd``
    (a difference of sds also counts as none when it is that small against the value: 0 and 1e-12 agree)."""
    if not math.isclose(value, old.value, rel_tol=SAME_NUMBER):
        return False
    if old.sd is None or sd is None:
        return old.sd is None and sd is None
    return math.isclose(sd, old.sd, rel_tol=SAME_NUMBER, abs_tol=SAME_NUMBER * abs(value))


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``folder`` (POSIX ``flock``; no lock where there is none)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _changes(before: Mapping[str, Result], after: Results, ran: set[str]) -> tuple[list[Change], int]:
    """Rows of the experiments that ran whose value or sd moved, and how many were only re-measured."""
    changes: list[Change] = []
    remeasured = 0
    for key in sorted({*before, *after}):
        old, new = before.get(key), after.get(key)
        if not any(r is not None and r.experiment in ran for r in (old, new)):
            continue
        if old is not None and new is not None and (old.value, old.sd) == (new.value, new.sd):
            remeasured += old.source != new.source
            continue
        changes.append(Change(key, old, new))
    return changes, remeasured


# ---------------------------------------------------------------------- executors


def _open_executor(spec: Executor | str | None, workers: int) -> tuple[Executor, Any, Callable[[], None]]:
    """The executor to submit to, its progress queue (local pools only) and how to close it."""
    if isinstance(spec, Executor):
        return spec, None, lambda: None
    if spec in (None, "", "local"):
        context = multiprocessing.get_context("spawn")  # a clean interpreter: no inherited imports
        progress_queue = context.Queue()
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=init_worker, initargs=(progress_queue, 1))

        def close_local() -> None:
            pool.shutdown(wait=True, cancel_futures=True)
            progress_queue.close()
            progress_queue.cancel_join_thread()

        return pool, progress_queue, close_local
    if isinstance(spec, str) and spec.startswith("dask://"):
        address = spec.removeprefix("dask://")
        if not address:
            raise UsageError("--executor dask:// needs the scheduler's HOST:PORT, e.g. dask://10.0.0.5:8786")
        try:
            from distributed import Client
        except ImportError:
            raise UsageError("--executor dask://... needs Dask: pip install 'slidegen[dask]'") from None
        try:
            client = Client(address if "://" in address else f"tcp://{address}", timeout="10s")
        except OSError as error:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: {error}") from None
        remote = client.get_executor(pure=False)

        def close_dask() -> None:
            remote.shutdown(wait=False)
            client.close()

        return remote, None, close_dask
    raise UsageError(f"unknown executor '{spec}': use 'local' or 'dask://HOST:PORT'")


def _cores() -> int:
    """The cores this process may use (its CPU affinity where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _drain(progress_queue: Any, display: Display) -> None:
    while progress_queue is not None:
        try:
            exp_id, fraction, note = progress_queue.get_nowait()
        except (queue_module.Empty, OSError, ValueError, EOFError):
            return
        display.progress(exp_id, fraction, note)


def _terminate(pool: Executor) -> None:
    """Stop a local pool's workers now (Ctrl-C): their experiments were not saved, so nothing is lost."""
    if isinstance(pool, ProcessPoolExecutor):
        for process in list(getattr(pool, "_processes", {}).values()):  # no public API before 3.14
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)


def _clear_scratch(store: Store) -> None:
    """Start ``--quick`` from an empty scratch folder, so it always runs everything afresh."""
    store.results_path.unlink(missing_ok=True)
    if store.runs_dir.is_dir():
        for path in store.runs_dir.glob("*.json"):
            path.unlink()
