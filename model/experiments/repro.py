"""Reproducibility measured: a chapter's stack of runs trained again, alone, on two threads
and with other arithmetic, and each run compared with itself in the chapter's stack.

Every chapter trains its seeds and settings stacked into one model (``train_many(...,
workers=1)``, one torch thread in slidegen's worker processes). Besides its seed, what a
run's numbers can depend on is the stack it was trained in, the thread count and the
machine's floating-point arithmetic. The ``chNN.repro`` experiments
(model/experiments/chNN_repro.py) train a chapter's real stack, the same runs in the same
order, and then these arms, each differing from it in one thing:

- ``same_stack``: the stack once more, one thread: does a rerun give the same bits?
- ``threads``: the stack on two torch threads;
- ``alone``: every run of the stack as a stack of its own (M = 1), one thread;
- ``kernels``: the stack in a child process with torch's portable kernels
  (``ATEN_CPU_CAPABILITY=default``: no AVX) and MKL's compatible code path
  (``MKL_CBWR=COMPATIBLE``): the same code, seeds and batches, with arithmetic that differs
  in the last bits, as another CPU's can. It is a probe of how far such differences grow,
  not a measurement of any particular other machine.

Each arm is compared run by run with the stack: the largest |difference| of the final
validation loss, and how many runs end with bit-identical weights.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from model.data import Corpus
from model.decoder import ModelConfig
from model.experiments.common import exact
from model.experiments.registry import Measurement
from model.train import TrainConfig, TrainResult, train_many

ARMS = ("same_stack", "threads", "alone", "kernels")
#: The arms in words, as the measurements' descriptions use them.
ARM_WHAT = {
    "same_stack": "the stack trained again (1 thread)",
    "threads": "the stack on 2 torch threads instead of 1",
    "alone": "each run trained alone (a stack of 1) instead of in the stack",
    "kernels": "the stack with torch's portable (non-AVX) kernels and MKL's compatible path",
}
#: The child process's environment for the ``kernels`` arm (one thread, as slidegen's workers).
OTHER_ARITHMETIC = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
TWO_THREADS = 2
Hook = Callable[[int, dict], None]


# --------------------------------------------------------------------------- comparisons (tested)


def max_abs_diff(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """The largest |a_i - b_i| over paired values. A pair that is non-finite on both sides (a run
    that diverged in both arms) counts as equal; one that is finite on one side only is an error,
    because no difference in nats describes it."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"cannot pair {x.shape} values with {y.shape}")
    fx, fy = np.isfinite(x), np.isfinite(y)
    if (fx != fy).any():
        i = int(np.argmax(fx != fy))
        raise ValueError(f"pair {i} is finite on one side only ({x[i]} against {y[i]})")
    both = fx & fy
    return float(np.abs(x[both] - y[both]).max()) if both.any() else 0.0


def identical(a: Sequence[TrainResult], b: Sequence[TrainResult]) -> int:
    """How many paired runs end with the same final weights, bit for bit."""

    def same(x: TrainResult, y: TrainResult) -> bool:
        sx, sy = x.state_dict or {}, y.state_dict or {}
        return bool(sx) and sx.keys() == sy.keys() and all(torch.equal(sx[k], sy[k]) for k in sx)

    return sum(same(x, y) for x, y in zip(a, b, strict=True))


def finals(results: Sequence[TrainResult]) -> np.ndarray:
    """Each run's final validation loss (NaN if it did not finish)."""
    return np.array([r.val_loss_final for r in results], dtype=np.float64)


# --------------------------------------------------------------------------- the arms


def train_stack(
    model_cfg: ModelConfig,
    runs: Sequence[TrainConfig],
    corpus: Corpus,
    *,
    threads: int = 1,
    chunk: int | None = None,
    on_eval: Hook | None = None,
) -> list[TrainResult]:
    """The runs as one stack on ``threads`` torch threads, as the chapters train them. With
    ``chunk``, the stack stops at steps 0, chunk, 2 chunk, ... and resumes each time from a
    checkpoint (ch01.arithmetic's scoring steps): resuming must give the uninterrupted run."""
    runs = list(runs)
    if chunk is None:
        return train_many(model_cfg, runs, corpus, on_eval=on_eval, threads=threads, workers=1)
    steps = max(r.steps for r in runs)
    stops = [*range(0, steps, chunk), steps]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stack.pt"
        for stop in stops:
            results = train_many(model_cfg, runs, corpus, path, on_eval=on_eval, stop_at=stop, threads=threads)
    return results


def train_elsewhere(
    model_cfg: ModelConfig,
    runs: Sequence[TrainConfig],
    corpus: Corpus,
    *,
    chunk: int | None = None,
    env: dict[str, str] | None = None,
) -> tuple[list[TrainResult], str]:
    """train_stack in a child Python with ``env`` added to its environment (by default
    OTHER_ARITHMETIC), one thread; returns its results and the CPU capability torch ran its
    kernels with there (``torch.backends.cpu.get_cpu_capability()``)."""
    root = Path(__file__).resolve().parents[2]  # the folder that holds the model package
    environ = {**os.environ, **(OTHER_ARITHMETIC if env is None else env)}
    environ["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp) / "job.pkl", Path(tmp) / "out.pkl"
        job.write_bytes(pickle.dumps((model_cfg, list(runs), corpus, chunk)))
        done = subprocess.run(
            [sys.executable, "-m", "model.experiments.repro", str(job), str(out)],
            cwd=root,
            env=environ,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the child training run failed ({done.returncode}):\n{done.stderr[-4000:]}")
        results, capability = pickle.loads(out.read_bytes())
    return results, capability


def _child(job: Path, out: Path) -> None:
    torch.set_num_threads(1)
    model_cfg, runs, corpus, chunk = pickle.loads(job.read_bytes())
    results = train_stack(model_cfg, runs, corpus, threads=1, chunk=chunk)
    out.write_bytes(pickle.dumps((results, torch.backends.cpu.get_cpu_capability())))


@dataclass
class Arms:
    """A stack and its arms: results per arm (runs in the stack's order), and the checks on them."""

    stack: list[TrainResult]
    arms: dict[str, list[TrainResult]]
    threads_used: int  # the torch thread count in effect while the ``threads`` arm trained (fewest seen)
    capability: str  # torch's CPU capability here
    capability_elsewhere: str  # and in the ``kernels`` arm's child process
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each arm and of the stack


def run_arms(
    model_cfg: ModelConfig,
    runs: Sequence[TrainConfig],
    corpus: Corpus,
    *,
    chunk: int | None = None,
    report: Callable[[float, str], None] | None = None,
) -> Arms:
    """Train the stack and every arm of ARMS (see the module's docstring)."""
    runs = list(runs)
    note = report or (lambda fraction, text: None)
    seen: set[int] = set()

    def probe(m: int, rec: dict) -> None:
        seen.add(torch.get_num_threads())

    seconds: dict[str, float] = {}
    out: dict[str, list[TrainResult]] = {}
    jobs: list[tuple[str, Callable[[], list[TrainResult]]]] = [
        ("stack", lambda: train_stack(model_cfg, runs, corpus, chunk=chunk)),
        ("same_stack", lambda: train_stack(model_cfg, runs, corpus, chunk=chunk)),
        ("threads", lambda: train_stack(model_cfg, runs, corpus, threads=TWO_THREADS, chunk=chunk, on_eval=probe)),
        ("alone", lambda: [train_stack(model_cfg, [r], corpus, chunk=chunk)[0] for r in runs]),
    ]
    elsewhere = ""
    for k, (name, job) in enumerate(jobs):
        note(k / (len(jobs) + 1), name)
        start = time.perf_counter()
        out[name] = job()
        seconds[name] = time.perf_counter() - start
    note(len(jobs) / (len(jobs) + 1), "kernels")
    start = time.perf_counter()
    out["kernels"], elsewhere = train_elsewhere(model_cfg, runs, corpus, chunk=chunk)
    seconds["kernels"] = time.perf_counter() - start
    here = torch.backends.cpu.get_cpu_capability()
    if elsewhere == here:
        raise AssertionError(f"the kernels arm ran with torch's {here} kernels, as here: it would compare nothing")
    return Arms(out.pop("stack"), out, min(seen) if seen else 0, here, elsewhere, seconds)


def arm_measurements(prefix: str, arms: Arms, what: str) -> dict[str, Measurement]:
    """The keys of one stack: its size and steps, and per arm the largest |Δ final validation
    loss| against the stack and the runs whose final weights are bit-identical to the stack's."""
    stack = finals(arms.stack)
    m = {
        f"{prefix}.runs": exact(len(arms.stack), "runs", f"runs stacked in {what}"),
        f"{prefix}.steps": exact(max(r.steps for r in arms.stack), "steps", f"steps compared, {what}"),
        f"{prefix}.threads_used": exact(
            arms.threads_used, "threads", f"torch threads in effect while the 2-thread arm trained, {what}"
        ),
    }
    for arm in ARMS:
        runs = arms.arms[arm]
        m[f"{prefix}.{arm}_max_diff"] = exact(
            max_abs_diff(stack, finals(runs)),
            "nats",
            f"largest |Δ final validation loss| of a run, {ARM_WHAT[arm]}, {what}",
            2,
        )
        m[f"{prefix}.{arm}_identical"] = exact(
            identical(arms.stack, runs), "runs", f"runs with bit-identical final weights, {ARM_WHAT[arm]}, {what}"
        )
    return m


def rung_measurements(prefix: str, arms: Arms, rates: Sequence[float], arm: str = "kernels") -> dict[str, Measurement]:
    """Per rung of a learning-rate ladder stacked rate-major (rates x seeds): the largest
    |Δ final validation loss| over its seeds in ``arm``."""
    stack = finals(arms.stack).reshape(len(rates), -1)
    other = finals(arms.arms[arm]).reshape(len(rates), -1)
    return {
        f"{prefix}.{arm}_max_diff.r{i}": exact(
            max_abs_diff(stack[i], other[i]),
            "nats",
            f"largest |Δ final validation loss| over the seeds at rate {rate:g}, {ARM_WHAT[arm]}",
            2,
        )
        for i, rate in enumerate(rates)
    }


def arm_series(arms: Arms) -> dict[str, list[float]]:
    """Every arm's final validation losses (runs in the stack's order) and wall times, for runs/*.json."""
    out: dict[str, list[float]] = {"final_stack": finals(arms.stack).tolist()}
    out |= {f"final_{arm}": finals(arms.arms[arm]).tolist() for arm in ARMS}
    out["seconds"] = [arms.seconds[k] for k in ("stack", *ARMS)]
    out["lr"] = [float(r.train_config["lr"]) for r in arms.stack]
    out["seed"] = [float(r.train_config["seed"]) for r in arms.stack]
    return out


if __name__ == "__main__":  # the kernels arm's child process: python -m model.experiments.repro JOB OUT
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m model.experiments.repro JOB OUT")
    _child(Path(sys.argv[1]), Path(sys.argv[2]))
