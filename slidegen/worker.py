"""Run one experiment inside a worker: a process of the local pool or a Dask worker.

:func:`execute` is what the runner submits. It imports the project's chapter module
from the project root, runs the experiment and returns plain data (no project classes
cross the process boundary, so the parent never imports project code to unpickle).
Kept light: a pool worker imports this module before anything else.
"""

from __future__ import annotations

import hashlib
import io
import math
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
from typing import Any

_QUEUE: Any = None
_THREADS: int | None = None  # set in pool workers only: a Dask worker keeps its own settings
_LAST_SENT: dict[str, float] = {}


class ExperimentFailed(Exception):
    """An experiment raised; the message carries its traceback as text (always picklable)."""


def init_worker(queue: Any, threads: int = 1) -> None:
    """Pool initializer: remember the progress queue and limit math libraries to ``threads``."""
    global _QUEUE, _THREADS
    _QUEUE, _THREADS = queue, threads
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)


def execute(root: str, module: str, exp_id: str, quick: bool, bundle: bytes | None = None) -> dict[str, Any]:
    """Run experiment ``exp_id`` of ``module`` in the project at ``root``; return its outcome as data.

    With ``bundle`` (a zip of the project's ``model/`` package, see :func:`make_bundle`),
    the code comes from the bundle instead, so a worker on another machine needs only
    slidegen's environment, not a checkout.
    """
    from .discover import canonical
    from .loader import import_project_module, project_imports
    from .runstore import compact

    project = Path(root) if bundle is None else unpack_bundle(bundle)
    with project_imports(project):
        try:
            import_project_module(project, module)
            registry = sys.modules["model.experiments.registry"]
            exp = registry.REGISTRY[exp_id]  # type: ignore[attr-defined]
            _limit_torch_threads()
            ctx = exp.context(quick, _progress(exp_id))
            _send(exp_id, 0.0, "", force=True)
            start = time.perf_counter()
            outcome = exp.fn(ctx)
            duration = time.perf_counter() - start
            if not hasattr(outcome, "measurements") or not hasattr(outcome, "series"):
                raise TypeError(f"{exp_id} returned {type(outcome).__name__}, not an Outcome")
            measurements = {str(key): _measurement(exp_id, key, m) for key, m in dict(outcome.measurements).items()}
            series = {str(name): compact(values) for name, values in dict(outcome.series).items()}
            config = canonical(ctx.config)
            seeds = list(ctx.seeds)
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt):
                raise
            text = "".join(traceback.format_exception(error)).rstrip()
            raise ExperimentFailed(f"{exp_id} failed:\n{text}") from None
    return {
        "measurements": measurements,
        "series": series,
        "config": config,
        "seeds": seeds,
        "duration": duration,
        "versions": runtime_versions(),
    }


def make_bundle(root: Path) -> bytes:
    """A zip of ``root/model`` (without ``__pycache__``): the code a remote worker runs."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((root / "model").rglob("*")):
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


def _measurement(exp_id: str, key: str, m: Any) -> dict[str, Any]:
    """One measurement as a checked dict: finite value and sd, whole n and digits."""
    value = float(m.value)
    sd = None if m.sd is None else float(m.sd)
    if not math.isfinite(value) or (sd is not None and not math.isfinite(sd)):
        raise ValueError(f"{exp_id}: measurement {key} is not finite (value {value!r}, sd {sd!r})")
    n = None if m.n is None else int(m.n)
    digits = int(m.digits)
    if digits < 1:
        raise ValueError(f"{exp_id}: measurement {key} asks for {digits} digits; at least 1")
    return {"value": value, "sd": sd, "n": n, "unit": str(m.unit), "what": str(m.what), "digits": digits}


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
    try:
        _QUEUE.put_nowait((exp_id, fraction, note))
    except Exception:  # a full or closed queue must never fail an experiment
        pass
