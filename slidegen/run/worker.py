"""Run one experiment inside a worker: a process of the local pool or a Dask worker.

:func:`execute` is what the runner submits. It imports the project's experiment module
from the project root, checks what it gets against :mod:`slidegen.record.contracts`, runs the
experiment and returns plain data (no project classes cross the process boundary, so
the parent never imports project code to unpickle).
Kept light: a pool worker imports this module before anything else.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slidegen.paths import in_project

if TYPE_CHECKING:
    from slidegen.record.contracts import Site

_QUEUE: Any = None
_THREADS: int | None = None  # set in pool workers only: a Dask worker keeps its own settings
_LAST_SENT: dict[str, float] = {}


class ExperimentFailed(Exception):
    """An experiment failed: why, where (a path relative to the project root, a line), and any traceback.

    Plain strings and an int only, so it crosses any process boundary.
    """

    def __init__(self, message: str, path: str = "", line: int = 1, detail: str = "") -> None:
        super().__init__(message, path, line, detail)
        self.message, self.path, self.line, self.detail = message, path, line, detail

    def __str__(self) -> str:
        return self.message


def init_worker(queue: Any, threads: int = 1) -> None:
    """Pool initializer: remember the progress queue and limit math libraries to ``threads``."""
    global _QUEUE, _THREADS
    _QUEUE, _THREADS = queue, threads
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    exit_with_parent()


#: Seconds between a pool worker's checks that the process that started it is alive.
PARENT_POLL_SECONDS = 0.5


def exit_with_parent(poll: float = PARENT_POLL_SECONDS) -> None:
    """Exit this process soon after its parent dies (``slidegen run`` killed, even by SIGKILL): a
    daemon thread exits when the parent process id changes. (Linux's ``PR_SET_PDEATHSIG`` would
    follow the thread that started the worker, not the process, and a pool may start workers
    from a passing thread.)
    """
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="slidegen-parent-watch", daemon=True).start()


def execute(
    root: str,
    module: str,
    exp_id: str,
    quick: bool,
    bundle: bytes | None = None,
    *,
    registry: str,
    packages: tuple[str, ...],
) -> dict[str, Any]:
    """Run experiment ``exp_id`` of ``module`` in the project at ``root``; return its outcome as data.

    ``registry`` names the module holding ``REGISTRY`` and ``packages`` the project's
    top-level packages (the project's ``[tool.slidegen]`` layout). With ``bundle`` (a zip
    of those packages, see :func:`make_bundle`), the code comes from the bundle instead, so
    a worker on another machine needs only slidegen's environment, not a checkout.

    A project that breaks a contract of :mod:`slidegen.record.contracts` (an experiment returning
    something that is not an outcome, say) fails with a one-line :class:`ExperimentFailed`;
    an experiment that raises fails with its traceback as ``detail``.
    """
    from slidegen.record import contracts
    from slidegen.record.discover import canonical
    from slidegen.record.loader import project_imports

    project = Path(root) if bundle is None else unpack_bundle(bundle)
    with project_imports(project, packages):
        site: Site | None = None
        try:
            exp, site, context_site = _experiment(project, module, registry, exp_id)
            _limit_torch_threads()
            ctx = exp.context(quick, _progress(exp_id))
            contracts.check_context(exp_id, ctx, context_site)
            _send(exp_id, 0.0, "", force=True)
            start = time.perf_counter()
            outcome = exp.fn(ctx)
            duration = time.perf_counter() - start
            measurements, series = contracts.outcome_data(exp_id, outcome, site)
            config = canonical(ctx.config)
            seeds = list(ctx.seeds)
        except contracts.ContractError as error:
            where = in_project(error.site.path, project) or str(error.site.path)
            raise ExperimentFailed(error.problem, where, error.site.line) from None
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            path, line = _deepest_frame(error, project, site)
            text = "".join(traceback.format_exception(error)).rstrip()
            message = f"experiment '{exp_id}' failed: {type(error).__name__}: {error}"
            raise ExperimentFailed(message, path, line, text) from None
    return {
        "measurements": measurements,
        "series": series,
        "config": config,
        "seeds": seeds,
        "duration": duration,
        "versions": runtime_versions(),
    }


def _experiment(project: Path, module: str, registry_name: str, exp_id: str) -> tuple[Any, Site, Site]:
    """The registered experiment, where it is defined, and where its class defines ``context``."""
    from slidegen.record import contracts
    from slidegen.record.loader import import_project_module

    source = import_project_module(project, module)
    registry = import_project_module(project, registry_name)
    exp = contracts.registry_mapping(registry, "REGISTRY", "experiment").get(exp_id)
    if exp is None:
        raise contracts.module_site(source).error(f"experiment '{exp_id}' is no longer registered here: run again")
    contracts.check_experiment(exp_id, exp, registry)
    site = contracts.site_of(exp.fn) or contracts.module_site(source)
    context_site = contracts.site_of(getattr(type(exp), "context", None)) or contracts.module_site(registry)
    return exp, site, context_site


def _deepest_frame(error: BaseException, project: Path, site: Site | None) -> tuple[str, int]:
    """The deepest line of the project's code in ``error``'s traceback (else the experiment's definition)."""
    root = project.resolve()
    found = ("", 1) if site is None else (in_project(site.path, project) or str(site.path), site.line)
    for frame in traceback.extract_tb(error.__traceback__):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(root):
            found = (path.relative_to(root).as_posix(), frame.lineno or 1)
    return found


def make_bundle(root: Path, packages: tuple[str, ...]) -> bytes:
    """A zip of ``root``'s ``packages`` (without ``__pycache__``): the code a remote worker runs."""
    buffer = io.BytesIO()
    files = sorted(path for package in packages for path in (root / package).rglob("*"))
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            if path.is_file() and "__pycache__" not in path.parts:
                info = zipfile.ZipInfo(path.relative_to(root).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
                archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def unpack_bundle(bundle: bytes) -> Path:
    """Unpack ``bundle`` once per machine into a folder named by its hash; return that folder."""
    target = Path(tempfile.gettempdir()) / f"slidegen-bundle-{hashlib.sha256(bundle).hexdigest()[:16]}"
    if not target.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
            archive.extractall(staging)
        try:
            os.rename(staging, target)
        except OSError:  # another task unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    return target


def runtime_versions() -> dict[str, str]:
    """Python, NumPy and torch versions of this process (torch only if imported)."""
    versions = {"python": platform.python_version()}
    for name in ("numpy", "torch"):
        module = sys.modules.get(name)
        if module is not None:
            versions[name] = str(getattr(module, "__version__", "?"))
    return versions


def _limit_torch_threads() -> None:
    """In a pool worker, hold an already imported torch to the pool's thread count."""
    torch = sys.modules.get("torch")
    if _THREADS is not None and torch is not None and torch.get_num_threads() != _THREADS:
        torch.set_num_threads(_THREADS)


def _progress(exp_id: str) -> Callable[[float, str], None]:
    def report(fraction: float, note: str) -> None:
        _send(exp_id, fraction, note)

    return report


def _send(exp_id: str, fraction: float, note: str, force: bool = False) -> None:
    """Put ``(id, fraction, note)`` on the progress queue, at most ten times a second."""
    if _QUEUE is None:
        return
    now = time.monotonic()
    if not force and now - _LAST_SENT.get(exp_id, 0.0) < 0.1:
        return
    _LAST_SENT[exp_id] = now
    with contextlib.suppress(Exception):  # a full or closed queue must never fail an experiment
        _QUEUE.put_nowait((exp_id, fraction, note))
