"""Train Decoders: the loop, its schedules, checkpoints and the command line.

One loop serves one run and many. `train_many` trains M runs of one
architecture together as one stacked model (model/stacked.py: each run its
own weights, batches, learning-rate schedule and optimiser settings, every
matmul batched over the M models); `train` is train_many with one run.
Everything that makes a run is seeded and written next to its results
(`TrainResult.to_dict()` holds both configs and the seeds):

    result = train(ModelConfig(), TrainConfig(seed=0))
    result.val_loss_init, result.val_loss_final     # about 4.17 -> 2.27 (ch01.trainer.val_loss.*)
    results = train_many(ModelConfig(), [TrainConfig(seed=s) for s in (0, 1, 2)])

    python -m model.train --seed 0 [--steps 2000] [--json]

The network is StackedDecoder (model/stacked.py, the fast path) where
`stacked.supports(cfg)`, else M autograd Decoders (model/decoders.py, any
variant); `net=` chooses explicitly. Experiments look inside the loop through
its hooks, never by copying it (see `Hooks` and `Step`):

    train_many(cfg, runs, docs=train_ids, val_docs=val_ids)    # the document mask
    train_many(cfg, runs, on_step=lambda s: s.step == 100)      # stop after 100 updates
    train_many(cfg, runs, on_step=look, skip=veto)              # read weights / skip updates

Each step: draw every run's batch, forward and backward through the stack,
check that every loss and gradient is finite (a run that is not records the
step, `diverged_at`, and keeps the weights it had; the others go on), clip
each run's gradient to its own global norm, update, and evaluate every
`eval_every` steps on all validation windows.

Steps count updates: "step k" is the state after k updates, update k (0-based)
uses learning rate `lr_at(k, cfg)`, and evaluations happen at steps
k = eval_every, 2 eval_every, ... and at each run's last step (plus step 0).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from model.data import Batches, Corpus, DocBatches, load_corpus, val_windows, window_docs
from model.decoder import ModelConfig
from model.decoders import Decoders
from model.optim import OPTIMIZERS, Optimizer, clip_
from model.precision import quantise
from model.stacked import Layout, StackedDecoder, init_stack, supports

SCHEDULES = ("constant", "cosine", "wsd")
DATA_SEED_OFFSET = 1_000_000  # data_seed = seed + this unless given: weights and data draw apart
CHECKPOINT_VERSION = 2
CURVES = ("step", "train_loss", "val_loss", "grad_norm", "lr")


@dataclass
class TrainConfig:
    steps: int = 2000  # number of updates; the schedules reach 0 at `steps`
    batch: int = 32  # windows per step, each `context` tokens long
    lr: float = 2e-3  # peak learning rate
    schedule: str = "cosine"  # "constant", "cosine" (to 0 at `steps`) or "wsd" (warmup-stable-decay)
    warmup: int = 100  # linear warmup: update k < warmup uses lr * (k + 1) / warmup
    decay_frac: float = 0.2  # wsd: linear decay to 0 over the last decay_frac * steps updates
    optimizer: str = "adamw"  # "adamw", "adam" (L2 decay in the gradient), "sgd", "momentum"
    betas: tuple[float, float] = (0.9, 0.999)  # Adam's (beta1, beta2); "momentum" uses beta1
    eps: float = 1e-8
    bias_correction: bool = True  # Adam types: divide m and v by (1 - beta^t); False: uncorrected moments
    weight_decay: float = 0.01  # on every weight (all are matrices: there are no biases or gains)
    clip: float | None = 1.0  # global gradient-norm threshold, None for no clipping
    eval_every: int = 100  # evaluate on every validation window every this many steps
    seed: int = 0  # torch.manual_seed(seed) right before the Decoder is built: the initial weights
    data_seed: int | None = None  # the batches' own generator; None: seed + DATA_SEED_OFFSET
    threads: int | None = None  # torch threads while training; None: torch's setting (all cores,
    #                              or 1 in slidegen's worker processes); the numbers do not depend on it
    weight_dtype: str = "float32"  # "bfloat16": the weights are stored in BF16 after every update (no FP32 master)
    grad_bits: int | None = None  # quantise the gradient to this many bits before the update, each weight
    #                               tensor on its own full scale (its max-abs)
    grad_rounding: str = "nearest"  # grad_bits' rounding: "nearest" or "stochastic" (unbiased)
    loss_scale: float | None = None  # multiply the loss by this before the backward pass, divide the gradient
    #                                  after (net="autograd", under FP16 autocast); None: no scaling
    dynamic_scale: bool = False  # with loss_scale: an overflow skips the step and halves the scale; 2000 clean
    #                              steps double it (torch.amp.GradScaler's rule)

    def __post_init__(self) -> None:
        self.betas = (float(self.betas[0]), float(self.betas[1]))
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.steps < 0 or self.batch < 1 or self.warmup < 0 or self.eval_every < 1 or (self.threads or 1) < 1:
            raise ValueError("steps and warmup must be >= 0; batch, eval_every and threads >= 1")
        if not 0.0 <= self.decay_frac <= 1.0:
            raise ValueError(f"decay_frac must be in [0, 1], got {self.decay_frac}")
        if self.clip is not None and not self.clip > 0:
            raise ValueError(f"clip must be positive or None, got {self.clip}")
        if self.weight_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"weight_dtype must be one of {WEIGHT_DTYPES}, got {self.weight_dtype!r}")
        if self.grad_bits is not None and not 2 <= self.grad_bits <= 16:
            raise ValueError(f"grad_bits must be None or 2 to 16, got {self.grad_bits}")
        if self.loss_scale is not None and not self.loss_scale > 0:
            raise ValueError(f"loss_scale must be positive or None, got {self.loss_scale}")
        if self.grad_rounding not in GRAD_ROUNDINGS:
            raise ValueError(f"grad_rounding must be one of {GRAD_ROUNDINGS}, got {self.grad_rounding!r}")

    @property
    def data_seed_value(self) -> int:
        return self.seed + DATA_SEED_OFFSET if self.data_seed is None else self.data_seed


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of update `step` (0-based): linear warmup over `warmup`
    updates, then constant, cosine (to 0 at `steps`) or warmup-stable-decay
    (constant, then linear to 0 over the last round(decay_frac * steps) updates)."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return cfg.lr
    if cfg.schedule == "cosine":
        progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
        return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * progress))
    decay_steps = round(cfg.decay_frac * cfg.steps)  # wsd
    if step < cfg.steps - decay_steps:
        return cfg.lr
    return cfg.lr * max(0.0, cfg.steps - step) / decay_steps


@dataclass
class TrainResult:
    """What a run measured. Losses are in nats per character. If the run
    diverged, `diverged_at` is the step whose loss or gradient was not finite
    (no update was made from it), `steps` equals it, and the final losses are
    NaN."""

    model_config: dict
    train_config: dict
    val_loss_init: float
    val_loss_final: float
    train_loss_final: float  # mean training loss over the last eval interval
    steps: int  # updates made
    seconds: float  # wall time (for train_many: the stacked job's time / number of runs)
    tokens_seen: int  # steps * batch * context
    diverged_at: int | None = None
    # one entry per evaluation: step, train_loss (mean since the previous
    # evaluation; NaN at step 0), val_loss, grad_norm and lr of the last update
    curves: dict[str, list[float]] = field(default_factory=dict)
    step_losses: list[float] = field(default_factory=list)  # training loss of every update
    step_grad_norms: list[float] = field(default_factory=list)  # its gradient norm, before clipping
    state_dict: dict[str, torch.Tensor] | None = field(default=None, repr=False)  # final weights

    def to_dict(self, per_step: bool = True) -> dict:
        """JSON-ready (no weights; NaN and inf become None)."""

        def clean(v):
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "state_dict"}
        if not per_step:
            del d["step_losses"], d["step_grad_norms"]
        return clean(d)


def keep_freed_memory() -> None:
    """Ask glibc's malloc to keep freed memory for reuse instead of handing it
    back to the kernel. A training step allocates and frees activations of 128 KB and
    more (tens of MB for a stack of models); by default such blocks are mapped
    afresh or trimmed off the heap, and every page faults again on first touch,
    which cost up to a quarter of the stacked step time on the 2-core VM these
    numbers come from. Harmless (a no-op) without glibc."""
    global _MALLOC_TUNED
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED = True
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # from glibc's malloc.h
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # blocks up to 32 MB come from the heap, not mmap
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)  # and free memory goes back to the kernel only beyond 1 GB
    libc.mallopt(M_TOP_PAD, 64 << 20)


_MALLOC_TUNED = False


# -----------------------------------------------------------------------------
# checkpoints


def save_checkpoint(path: str | os.PathLike, state: dict) -> None:
    """torch.save to a temporary file beside `path`, then rename over it: an
    interrupted save leaves the previous checkpoint whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | os.PathLike) -> dict:
    state = torch.load(path, weights_only=True)
    if state.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: checkpoint version {state.get('version')!r}, expected {CHECKPOINT_VERSION}")
    return state


def config_dict(cfg: Any) -> dict:
    d = dataclasses.asdict(cfg)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


# -----------------------------------------------------------------------------
# the loop


@dataclass
class Step:
    """What the loop's per-step hooks see (one stack of M runs; live tensors: read them, do not keep them).

    For `on_step`, the state after `step` updates (step 0: before the first, once); for
    `skip`, the state before update number `step` + 1, its gradient computed and clipped."""

    step: int
    theta: torch.Tensor  # (M, P) every run's weights, laid out as `layout` says
    grad: torch.Tensor  # (M, P) the last gradient, after clipping (zeros at step 0)
    loss: torch.Tensor  # (M,) the last training loss (NaN at step 0)
    norm: torch.Tensor  # (M,) the last gradient's norm, before clipping
    optimizer: Optimizer  # its state: optimizer.t, optimizer.state ("exp_avg", ... (M, P))
    layout: Layout
    curves: list[dict[str, list[float]]]  # per run, the evaluations so far (TrainResult.curves)
    running: list[int]  # the runs still training
    final: torch.Tensor  # (M, P) a stopped run's weights where it stopped (theta's row goes on moving)

    def row(self, m: int) -> torch.Tensor:
        """Run m's weights (P,): theta's row while it trains, then the weights it stopped with."""
        return self.theta[m] if m in self.running else self.final[m]

    def weights(self, m: int, cfg: ModelConfig) -> dict[str, torch.Tensor]:
        """Run m's weights under Decoder.state_dict()'s names (a copy), as its TrainResult would hold them."""
        return self.layout.state_dict(self.row(m), cfg)


@dataclass
class Hooks:
    """What an experiment may do inside the loop, beside reading its results.

    on_eval(m, record): each evaluation of run m (see TrainResult.curves).
    on_step(step): after every update (and once at step 0); returning True stops the
        training there, as stop_at would (every run; the results are those of the stop).
    skip(step): before every update; returning an (M,) bool tensor skips the update of
        the runs marked True: their weights and optimiser moments stay as they were (the
        schedule and the optimiser's step count go on), e.g. to skip a batch whose loss spikes.
    """

    on_eval: Callable[[int, dict], None] | None = None
    on_step: Callable[[Step], bool | None] | None = None
    skip: Callable[[Step], torch.Tensor | None] | None = None


def train(
    model_cfg: ModelConfig | None = None,
    train_cfg: TrainConfig | None = None,
    corpus: Corpus | None = None,
    checkpoint: str | os.PathLike | None = None,
    on_eval: Callable[[dict], None] | None = None,
    *,
    stop_at: int | None = None,
) -> TrainResult:
    """Train one Decoder and measure it: train_many with one run.

    checkpoint: a file path. If it exists the run resumes from it (same
        configs required) and continues bit for bit as if never stopped; the
        state is saved there at every evaluation and when the run ends or stops.
    on_eval: called with each evaluation record (a dict, see TrainResult.curves).
    stop_at: stop after this many updates (the schedule still ends at
        train_cfg.steps), e.g. to resume later from `checkpoint`.
    """
    cfg = train_cfg or TrainConfig()
    hook = None if on_eval is None else (lambda m, rec: on_eval(rec))
    return train_many(model_cfg, [cfg], corpus, checkpoint, hook, stop_at=stop_at, threads=cfg.threads)[0]


def train_many(
    model_cfg: ModelConfig | None,
    runs: list[TrainConfig],
    corpus: Corpus | None = None,
    checkpoint: str | os.PathLike | None = None,
    on_eval: Callable[[int, dict], None] | None = None,
    *,
    stop_at: int | None = None,
    threads: int | None = None,
    workers: int | None = None,
    on_step: Callable[[Step], bool | None] | None = None,
    skip: Callable[[Step], torch.Tensor | None] | None = None,
    docs: torch.Tensor | None = None,
    val_docs: torch.Tensor | None = None,
    net: str = "auto",
) -> list[TrainResult]:
    """Train len(runs) Decoders of one architecture together; one TrainResult
    per run. Runs must share batch, optimizer and eval_every; everything else
    (seed, data_seed, lr, schedule, warmup, decay_frac, steps, betas, eps,
    bias_correction, weight_decay, clip) may differ. `seconds` is the job's wall time divided
    by the number of runs.

    checkpoint, stop_at: as train()'s, for the whole stack (one stack then).
    on_eval: called with (run index, evaluation record).
    on_step, skip: per-step hooks (see Hooks); they see one stack (workers is 1 then).
    docs: the document id of every training token (corpus.train's shape): training
        then uses the document mask; val_docs, the same for corpus.val, masks the evaluations.
    net: "stacked" (model/stacked.py, the fast path), "autograd" (M readable Decoders,
        model/decoders.py: any variant), or "auto": stacked where it supports the config.
    threads: torch threads in all (None: torch's setting).
    workers: stacks trained side by side, the runs split evenly among them,
        each stack on its own Python thread with one torch thread (None: one
        stack per thread). The ops release the GIL, so the stacks run in
        parallel; ops this small scale poorly over OpenMP threads (each op is
        split and joined), so on 2 cores two 1-thread stacks ran about 25%
        faster than one stack on 2 threads (benchmarks/, README), and unlike worker processes they
        cost no start-up. workers=1: one stack, its ops spread over `threads`.
        Stacks of different sizes may round differently in the last bit."""
    cfg = model_cfg or ModelConfig()
    runs = list(runs)
    if not runs:
        raise ValueError("train_many needs at least one run")
    for name in ("batch", "optimizer", "eval_every"):
        values = {getattr(r, name) for r in runs}
        if len(values) > 1:
            raise ValueError(f"stacked runs must share {name}; got {sorted(values)}")
    if net not in NETS:
        raise ValueError(f"net must be one of {NETS}, got {net!r}")
    if net == "stacked" and not supports(cfg):
        raise ValueError("the stacked path does not implement this config; use net='autograd' or 'auto'")
    corpus = corpus or load_corpus()
    if docs is not None and len(docs) != len(corpus.train):
        raise ValueError(f"{len(docs)} document ids for {len(corpus.train)} training tokens")
    if val_docs is not None and len(val_docs) != len(corpus.val):
        raise ValueError(f"{len(val_docs)} document ids for {len(corpus.val)} validation tokens")
    scaled = any(r.loss_scale is not None for r in runs)
    job = Job(cfg, corpus, docs, val_docs, "stacked" if net == "auto" and supports(cfg) and not scaled else net)
    if scaled and job.net != "autograd":
        raise ValueError("loss_scale needs net='autograd' (the stacked path writes its own backward pass)")
    hooks = Hooks(on_eval, on_step, skip)
    threads = threads or torch.get_num_threads()
    one = checkpoint is not None or on_step is not None or skip is not None
    workers = 1 if one else max(1, min(workers or threads, len(runs)))
    threads_before = torch.get_num_threads()
    torch.set_num_threads(threads if workers == 1 else 1)  # (threads started later inherit the setting)
    keep_freed_memory()
    try:
        if workers == 1:
            return _train_stack(job, runs, checkpoint, hooks, stop_at)
        t_start = time.perf_counter()
        bounds = [round(len(runs) * k / workers) for k in range(workers + 1)]
        chunks = [(bounds[k], runs[bounds[k] : bounds[k + 1]]) for k in range(workers)]

        def stack(first: int, chunk: list[TrainConfig]) -> list[TrainResult]:
            hook = None if on_eval is None else (lambda m, rec: on_eval(first + m, rec))
            return _train_stack(job, chunk, None, Hooks(hook), stop_at)

        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(lambda c: stack(*c), chunks))
        results = [r for part in parts for r in part]
        for r in results:
            r.seconds = (time.perf_counter() - t_start) / len(runs)
        return results
    finally:
        torch.set_num_threads(threads_before)


NETS = ("auto", "stacked", "autograd")
WEIGHT_DTYPES = ("float32", "bfloat16", "float16")
GRAD_ROUNDINGS = ("nearest", "stochastic")


@dataclass(frozen=True)
class Job:
    """What every stack of a train_many call shares: the model, the data and the network kind."""

    cfg: ModelConfig
    corpus: Corpus
    docs: torch.Tensor | None  # (len(corpus.train),) document ids, or None: no document mask
    val_docs: torch.Tensor | None  # (len(corpus.val),)
    net: str  # "stacked" or "autograd"

    def network(self, layout: Layout, theta: torch.Tensor, grad: torch.Tensor) -> StackedDecoder | Decoders:
        kind = StackedDecoder if self.net == "stacked" else Decoders
        return kind(self.cfg, layout, theta, grad)

    def batches(self, runs: list[TrainConfig]) -> Batches:
        seeds, B, T = [r.data_seed_value for r in runs], runs[0].batch, self.cfg.context
        if self.docs is None:
            return Batches(self.corpus.train, seeds, B, T)
        return DocBatches(self.corpus.train, self.docs, seeds, B, T)


@dataclass
class Progress:
    """Everything a stack's run has done so far: what a checkpoint saves beside
    the weights, the optimiser and the batches. M runs; `steps` the longest."""

    step: int  # updates made (by every run still going)
    losses: torch.Tensor  # (steps, M): every update's training loss
    grad_norms: torch.Tensor  # (steps, M): its gradient norm, before clipping
    interval: torch.Tensor  # (M,) float64: loss sum since each run's last evaluation
    norm: torch.Tensor  # (M,): the last update's gradient norms
    curves: list[dict[str, list[float]]]  # per run, one entry per evaluation
    running: list[int]  # runs still training
    diverged_at: list[int | None]
    stopped_at: list[int]  # updates each run made when it stopped
    final: torch.Tensor  # (M, P): each run's weights when it stopped
    seconds: float = 0.0  # wall time before the latest resume


def _train_stack(
    job: Job,
    runs: list[TrainConfig],
    checkpoint: str | os.PathLike | None,
    hooks: Hooks,
    stop_at: int | None,
) -> list[TrainResult]:
    t_start = time.perf_counter()
    cfg = job.cfg
    M, T, B = len(runs), cfg.context, runs[0].batch
    steps = max(r.steps for r in runs)

    # the models, their optimiser and their batches, all seeded
    layout, theta = init_stack(cfg, [r.seed for r in runs])  # (M, P)
    grad = torch.zeros_like(theta)  # (M, P), written by every backward pass
    net = job.network(layout, theta, grad)
    lr = torch.zeros(steps, M, dtype=torch.float64)  # 0 past a run's own last step
    for m, r in enumerate(runs):
        lr[: r.steps, m] = torch.tensor([lr_at(k, r) for k in range(r.steps)], dtype=torch.float64)
    opt = Optimizer(
        runs[0].optimizer,
        lr,
        [r.betas for r in runs],
        [r.eps for r in runs],
        [r.weight_decay for r in runs],
        layout.lr_scales(cfg),
        [r.bias_correction for r in runs],
    )
    clip = torch.tensor([math.inf if r.clip is None else r.clip for r in runs])  # (M,); inf: never clips
    rounding = [torch.Generator().manual_seed(r.data_seed_value + 1) for r in runs]  # stochastic rounding, per run
    scale = torch.tensor([r.loss_scale or 1.0 for r in runs])  # (M,) each run's loss scale now
    clean = torch.zeros(len(runs), dtype=torch.long)  # steps since each run's last overflow
    dynamic = torch.tensor([r.loss_scale is not None and r.dynamic_scale for r in runs])
    batches = job.batches(runs)
    xv, yv = val_windows(job.corpus.val, T)
    dv = None if job.docs is None or job.val_docs is None else window_docs(job.val_docs, T)
    p = Progress(
        step=0,
        losses=torch.zeros(steps, M),
        grad_norms=torch.zeros(steps, M),
        interval=torch.zeros(M, dtype=torch.float64),
        norm=torch.full((M,), math.nan),
        curves=[{k: [] for k in CURVES} for _ in runs],
        running=list(range(M)),
        diverged_at=[None] * M,
        stopped_at=[r.steps for r in runs],
        final=theta.clone(),
    )

    def save() -> None:
        if checkpoint is not None:
            progress = dataclasses.asdict(p) | {"seconds": p.seconds + time.perf_counter() - t_start}
            state = {
                "version": CHECKPOINT_VERSION,
                "step": p.step,
                "model_config": config_dict(cfg),
                "train_configs": [config_dict(r) for r in runs],
                "theta": theta.clone(),
                "optimizer": opt.state_dict(),
                "batches": batches.state(),
                "progress": progress,
                "precision": {"scale": scale, "clean": clean, "rounding": [g.get_state() for g in rounding]},
            }
            save_checkpoint(checkpoint, state)

    if checkpoint is not None and Path(checkpoint).exists():
        ck = load_checkpoint(checkpoint)
        _check_same_configs(checkpoint, ck, cfg, runs)
        theta.copy_(ck["theta"])
        opt.load_state_dict(ck["optimizer"])
        batches.load_state(ck["batches"])
        p = Progress(**ck["progress"])
        if "precision" in ck:  # the loss scales and stochastic rounding's draws go on where they were
            scale, clean = ck["precision"]["scale"], ck["precision"]["clean"]
            for g, st in zip(rounding, ck["precision"]["rounding"], strict=True):
                g.set_state(st)
    active = torch.zeros(M, dtype=torch.bool)
    active[p.running] = True
    loss = torch.full((M,), math.nan)

    def record(step: int, due: list[int]) -> None:
        val = net.evaluate(xv, yv, dv).tolist()
        for m in due:
            c = p.curves[m]
            n = step - c["step"][-1] if c["step"] else 0  # updates since the last evaluation
            rec = {
                "step": step,
                "train_loss": float(p.interval[m]) / n if n else math.nan,
                "val_loss": val[m],
                "grad_norm": float(p.norm[m]),
                "lr": lr_at(max(step - 1, 0), runs[m]),
            }
            for k, v in rec.items():
                c[k].append(v)
            p.interval[m] = 0.0
            if hooks.on_eval is not None:
                hooks.on_eval(m, dict(rec))

    def stop(m: int, step: int) -> None:
        p.running.remove(m)
        active[m] = False
        p.final[m] = theta[m]
        p.stopped_at[m] = step

    def seen(step: int) -> Step:
        return Step(step, theta, grad, loss, p.norm, opt, layout, p.curves, list(p.running), p.final)

    if p.step == 0 and not p.curves[0]["step"]:
        record(0, p.running)
    end = steps if stop_at is None else min(steps, stop_at)
    halted = p.step == 0 and hooks.on_step is not None and bool(hooks.on_step(seen(0)))
    while p.step < end and p.running and not halted:
        step = p.step
        x, y, doc = batches.draw()  # (M, B, T) each; doc None without document ids
        if job.net == "autograd":
            net.loss_scale = scale  # type: ignore[union-attr]
        loss = net.loss_and_grad(x, y, doc)  # (M,), gradients in grad (M, P), unscaled
        overflow = dynamic & ~torch.isfinite(grad).all(dim=1)  # a scaled gradient overflowed: skip, halve
        grad[overflow] = 0.0
        clean = torch.where(overflow, 0, clean + 1)
        scale = torch.where(overflow, scale / 2, torch.where(dynamic & (clean == 2000), scale * 2, scale))
        clean = torch.where(clean == 2000, 0, clean)
        p.norm = torch.linalg.vector_norm(grad, dim=1)  # (M,)
        if not torch.isfinite(torch.where(active, loss + p.norm, 0.0).sum()).item():
            for m in (active & ~torch.isfinite(loss + p.norm)).nonzero().flatten().tolist():
                p.diverged_at[m] = step  # no update from a non-finite loss or gradient
                stop(m, step)
            grad[~active] = 0.0  # (a stopped run's weights are kept in p.final; its updates do not matter)
        clip_(grad, p.norm, clip)
        for m, r in enumerate(runs):  # low-precision gradients, one full scale per weight tensor
            if r.grad_bits is not None:
                for o, n in layout.spans():
                    g = grad[m, o : o + n]  # type: ignore[assignment]  # (mypy: g was a Generator above)
                    g.copy_(quantise(g, r.grad_bits, r.grad_rounding == "stochastic", rounding[m]))  # type: ignore
        p.losses[step] = loss
        p.grad_norms[step] = p.norm
        p.interval.add_(torch.where(active, loss, 0.0))
        skipped = None if hooks.skip is None else hooks.skip(seen(step))
        if overflow.any():
            skipped = overflow if skipped is None else skipped | overflow
        kept = None if skipped is None else (theta[skipped].clone(), opt.rows(skipped))
        opt.step(theta, grad)
        for m, r in enumerate(runs):  # weights kept in a narrow format: an update below half its spacing is lost
            if r.weight_dtype != "float32":
                theta[m] = theta[m].to(getattr(torch, r.weight_dtype)).float()
        if kept is not None and skipped is not None:
            theta[skipped] = kept[0]
            opt.restore_rows(skipped, kept[1])
        p.step = done = step + 1
        finishing = [m for m in p.running if runs[m].steps == done]
        due = [m for m in p.running if done % runs[m].eval_every == 0 or m in finishing]
        if due:
            record(done, due)
        for m in finishing:
            stop(m, done)
        if due:
            save()
        halted = hooks.on_step is not None and bool(hooks.on_step(seen(done)))
    save()

    seconds = (p.seconds + time.perf_counter() - t_start) / M
    results = []
    for m, r in enumerate(runs):
        n = p.stopped_at[m] if m not in p.running else p.step
        weights = theta[m] if m in p.running else p.final[m]
        finished = p.diverged_at[m] is None and n == r.steps
        curves = p.curves[m]
        results.append(
            TrainResult(
                model_config=config_dict(cfg),
                train_config={**config_dict(r), "data_seed": r.data_seed_value},
                val_loss_init=curves["val_loss"][0],
                val_loss_final=curves["val_loss"][-1] if finished else math.nan,
                train_loss_final=curves["train_loss"][-1] if finished else math.nan,
                steps=n,
                seconds=seconds,
                tokens_seen=n * B * T,
                diverged_at=p.diverged_at[m],
                curves=curves,
                step_losses=p.losses[:n, m].tolist(),
                step_grad_norms=p.grad_norms[:n, m].tolist(),
                state_dict=layout.state_dict(weights, cfg),
            )
        )
    return results


def _check_same_configs(path: str | os.PathLike, ck: dict, cfg: ModelConfig, runs: list[TrainConfig]) -> None:
    """A checkpoint resumes only the runs that wrote it."""
    if len(ck["train_configs"]) != len(runs):
        raise ValueError(f"{path}: the checkpoint holds {len(ck['train_configs'])} runs, not {len(runs)}")
    pairs = [("model_config", ck["model_config"], config_dict(cfg))]
    pairs += [("train_config", then, config_dict(r)) for then, r in zip(ck["train_configs"], runs, strict=True)]
    for name, then, now in pairs:
        if then != now:
            diff = sorted(k for k in now if then.get(k) != now[k])
            raise ValueError(f"{path}: {name} differs from the checkpoint's in {diff}")


# -----------------------------------------------------------------------------
# command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m model.train", description="Train the Decoder (the default run).")
    ap.add_argument("--seed", type=int, default=0, help="weights seed (data seed derived from it)")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps, help="number of updates")
    ap.add_argument("--lr", type=float, default=TrainConfig.lr, help="peak learning rate")
    ap.add_argument("--schedule", choices=SCHEDULES, default=TrainConfig.schedule)
    ap.add_argument(
        "--threads", type=int, default=TrainConfig.threads, help="torch threads (default: torch's, all cores)"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON line with the result, nothing else")
    ap.add_argument("--out", type=Path, help="also write the full result (configs, seeds, curves) as JSON here")
    args = ap.parse_args(argv)
    try:
        cfg = TrainConfig(seed=args.seed, steps=args.steps, lr=args.lr, schedule=args.schedule, threads=args.threads)
    except ValueError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2

    def progress(rec: dict) -> None:
        print(
            f"step {rec['step']:5d}  train {rec['train_loss']:.4f}  val {rec['val_loss']:.4f}  "
            f"grad norm {rec['grad_norm']:.3f}  lr {rec['lr']:.2e}",
            flush=True,
        )

    result = train(ModelConfig(), cfg, on_eval=None if args.json else progress)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result.to_dict(per_step=False)))
    else:
        print(
            f"seed {args.seed}: val loss {result.val_loss_init:.4f} -> {result.val_loss_final:.4f}, "
            f"train loss {result.train_loss_final:.4f}, {result.steps} steps in {result.seconds:.2f} s"
            + (f", diverged at step {result.diverged_at}" if result.diverged_at is not None else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
