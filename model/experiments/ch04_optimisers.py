"""Chapter 4, optimisers from SGD to AdamW: the numbers deck 04 shows.

- ``ch04.valley``: SGD, momentum and Adam on a 2-D quadratic (model/valley.py): steps to a
  tolerance against the condition number, each at its best step size per kappa;
- ``ch04.bias``: Adam's bias correction on the Decoder: update sizes and loss, with and without;
- ``ch04.decay``: AdamW against Adam with L2 at three weight decays, each at its own tuned rate;
- ``ch04.sweep``: SGD, momentum, Adam and AdamW, each swept over learning rates 3x apart;
- ``ch04.state``: bytes of optimiser state per parameter, read from the optimisers' state.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from model import valley as vl
from model.data import Corpus, load_corpus
from model.decoder import Decoder, ModelConfig, num_params
from model.experiments.common import exact, measured, progress, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.optim import OPTIMIZERS, Optimizer
from model.stacked import init_stack
from model.train import TrainConfig, TrainResult, load_checkpoint, train_many

SEEDS = (0, 1, 2)
NAMES = {"sgd": "SGD", "momentum": "momentum", "adam": "Adam", "adamw": "AdamW"}


# --------------------------------------------------------------------------- shared measures


def best_index(finals: np.ndarray) -> int:
    """The rung of a sweep with the lowest mean final loss over seeds; finals (rates, seeds),
    NaN for a diverged run (a rung with any NaN is never best)."""
    means = finals.mean(axis=1)
    return int(np.argmin(np.where(np.isnan(means), np.inf, means)))


def band(lrs: Sequence[float], finals: np.ndarray, within: float) -> tuple[float, float]:
    """The contiguous run of rungs around the best whose mean final loss (no seed diverged) is
    within ``within`` nats of the best's: (lowest, highest) learning rate of it."""
    means = np.where(np.isnan(finals).any(axis=1), np.inf, finals.mean(axis=1))
    b = best_index(finals)
    ok = means <= means[b] + within
    lo = hi = b
    while lo > 0 and ok[lo - 1]:
        lo -= 1
    while hi < len(lrs) - 1 and ok[hi + 1]:
        hi += 1
    return float(lrs[lo]), float(lrs[hi])


def rms_updates(thetas: Sequence[torch.Tensor]) -> np.ndarray:
    """Root-mean-square change of the weights between consecutive snapshots: (steps, M)."""
    stack = torch.stack([t.double() for t in thetas])  # (steps + 1, M, P)
    return (stack[1:] - stack[:-1]).pow(2).mean(dim=2).sqrt().numpy()


def train_with_snapshots(
    model_cfg: ModelConfig,
    runs: list[TrainConfig],
    corpus: Corpus,
    at: Sequence[int],
    on_eval: Callable[[int, dict], None] | None = None,
) -> tuple[list[TrainResult], list[torch.Tensor]]:
    """train_many on one stack, stopped and resumed (bit for bit) from a checkpoint at each step
    of ``at``: the results and the stack's weights (M, P) at step 0 and at every step of ``at``."""
    _, theta0 = init_stack(model_cfg, [r.seed for r in runs])
    snapshots = [theta0.clone()]
    results: list[TrainResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stack.pt"
        for stop in at:
            results = train_many(model_cfg, runs, corpus, checkpoint=path, on_eval=on_eval, stop_at=stop)
            snapshots.append(load_checkpoint(path)["theta"].clone())
    return results, snapshots


def _finals(results: list[TrainResult], rates: int, seeds: int) -> np.ndarray:
    return np.array([r.val_loss_final for r in results]).reshape(rates, seeds)


def _lr(value: float, what: str) -> Measurement:
    return exact(value, "", what, 1)


# --------------------------------------------------------------------------- the narrow valley


@dataclass(frozen=True)
class ValleyConfig:
    kappas: tuple[float, ...] = tuple(10 ** (k / 2) for k in range(9))  # 1 to 10^4, half a decade apart
    tol: float = 1e-6  # reached when f(x_t) <= tol f(x_0)
    max_steps: int = 400_000
    sgd_lrs: tuple[float, ...] = tuple(np.geomspace(1e-2, 2.0, 241))  # SGD diverges above 2
    momentum_lrs: tuple[float, ...] = tuple(np.geomspace(1e-2, 4.0, 121))
    momentum_betas: tuple[float, ...] = (0.0, *(1 - 10 ** (-k / 8) for k in range(1, 25)))  # 0 to 0.999
    adam_lrs: tuple[float, ...] = tuple(np.geomspace(1e-3, 1e2, 161))
    angles: tuple[float, ...] = (0.0, 45.0)  # the flat axis along a coordinate, or diagonal
    fit_from: float = 10.0  # slopes fitted over kappa >= this
    show_kappa: float = 100.0  # the trajectories drawn (one valley, one start)
    show_steps: int = 60
    show_sgd_lr: float = 1.8
    show_momentum: tuple[float, float] = (0.5, 0.8)  # lr, beta
    show_adam_lr: float = 1.0


@experiment("ch04.valley", config=ValleyConfig(), quick={"kappas": (1.0, 10.0, 100.0), "max_steps": 5000})
def valley(ctx: RunContext) -> Outcome:
    """Steps to tolerance on a 2-D quadratic against its condition number: SGD, momentum and
    Adam, each at its best step size per kappa (momentum also at its best beta)."""
    c: ValleyConfig = ctx.config
    kappas = np.array(c.kappas)
    L, B = np.meshgrid(np.array(c.momentum_lrs), np.array(c.momentum_betas), indexing="ij")
    names = ["sgd", "momentum"] + [f"adam_{int(a)}" for a in c.angles]
    steps: dict[str, list[float]] = {n: [] for n in names}
    best: dict[str, list[float]] = {n: [] for n in names}
    best_beta: list[float] = []
    for k, kappa in enumerate(kappas):
        ctx.report_progress(k / len(kappas), f"kappa {kappa:.3g}")
        v = vl.Valley(float(kappa))
        n, i = vl.fastest(v, vl.Settings("sgd", np.array(c.sgd_lrs)), c.tol, c.max_steps)
        steps["sgd"].append(n)
        best["sgd"].append(math.nan if i is None else c.sgd_lrs[i])
        n, i = vl.fastest(v, vl.Settings("momentum", L, beta=B), c.tol, c.max_steps)
        steps["momentum"].append(n)
        best["momentum"].append(math.nan if i is None else float(L.flat[i]))
        best_beta.append(math.nan if i is None else float(B.flat[i]))
        for a in c.angles:
            name = f"adam_{int(a)}"
            n, i = vl.fastest(vl.Valley(float(kappa), a), vl.Settings("adam", np.array(c.adam_lrs)), c.tol, c.max_steps)
            steps[name].append(n)
            best[name].append(math.nan if i is None else c.adam_lrs[i])
    fit = kappas >= c.fit_from
    m: dict[str, Measurement] = {
        "ch04.valley.tol": exact(c.tol, "", "tolerance: reached when f(x) <= tol f(x0)", 1),
        "ch04.valley.kappa.min": exact(kappas.min(), "", "smallest condition number tried"),
        "ch04.valley.kappa.max": exact(kappas.max(), "", "largest condition number tried"),
        "ch04.valley.fit_from": exact(c.fit_from, "", "slopes fitted over condition numbers from this one"),
        "ch04.valley.grid.sgd": exact(len(c.sgd_lrs), "step sizes", "SGD step sizes tried per kappa"),
        "ch04.valley.grid.momentum": exact(L.size, "settings", "momentum (step size, beta) pairs tried per kappa"),
        "ch04.valley.grid.adam": exact(len(c.adam_lrs), "step sizes", "Adam step sizes tried per kappa"),
        "ch04.valley.show.kappa": exact(c.show_kappa, "", "condition number of the drawn trajectories"),
        "ch04.valley.show.steps": exact(c.show_steps, "steps", "steps drawn"),
        "ch04.valley.show.sgd_lr": exact(c.show_sgd_lr, "", "SGD step size drawn", 2),
        "ch04.valley.show.momentum_lr": exact(c.show_momentum[0], "", "momentum step size drawn", 2),
        "ch04.valley.show.momentum_beta": exact(c.show_momentum[1], "", "momentum beta drawn", 2),
        "ch04.valley.show.adam_lr": exact(c.show_adam_lr, "", "Adam step size drawn", 2),
    }
    theory = {"sgd": 1.0, "momentum": 0.5}
    for name in names:
        s = np.array(steps[name])
        if fit.sum() >= 2 and np.isfinite(s[fit]).all():
            m[f"ch04.valley.slope.{name}"] = exact(
                vl.log_slope(kappas[fit], s[fit]), "", f"{name}: slope of log steps against log kappa", 2
            )
        for k, kappa in enumerate(kappas):
            if kappa in (10.0, 100.0, 1e4) and math.isfinite(s[k]):
                m[f"ch04.valley.steps.{name}.k{int(kappa)}"] = exact(
                    s[k], "steps", f"{name}: fewest steps to tolerance, kappa {int(kappa)}"
                )
                m[f"ch04.valley.best_lr.{name}.k{int(kappa)}"] = exact(
                    best[name][k], "", f"{name}: its best step size, kappa {int(kappa)}", 3
                )
        if name in theory:
            m[f"ch04.valley.theory.{name}"] = exact(theory[name], "", f"{name}: slope the theory predicts", 1)
    for k, kappa in enumerate(kappas):
        if kappa in (100.0, 1e4) and math.isfinite(best_beta[k]):
            m[f"ch04.valley.best_beta.k{int(kappa)}"] = exact(
                best_beta[k], "", f"momentum's best beta, kappa {int(kappa)}", 3
            )
    shown = vl.Valley(c.show_kappa)
    paths = {
        "sgd": vl.trajectory(shown, vl.Settings("sgd", c.show_sgd_lr), c.show_steps),
        "momentum": vl.trajectory(
            shown, vl.Settings("momentum", c.show_momentum[0], beta=c.show_momentum[1]), c.show_steps
        ),
        "adam": vl.trajectory(shown, vl.Settings("adam", c.show_adam_lr), c.show_steps),
    }
    return Outcome(
        measurements=m,
        series={
            "kappa": kappas,
            **{f"steps_{n}": steps[n] for n in names},
            **{f"lr_{n}": best[n] for n in names},
            "beta_momentum": best_beta,
            **{f"path_{n}": p for n, p in paths.items()},
            "show_kappa": c.show_kappa,
        },
    )


# --------------------------------------------------------------------------- Adam's bias correction


@dataclass(frozen=True)
class Bias:
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(steps=300, lr=1e-2, schedule="constant", warmup=0, eval_every=10)
    )
    first: int = 50  # update sizes over the first this many steps
    warmup: int = 100  # the default run's warmup, for the second pair


@experiment("ch04.bias", config=Bias(), seeds=SEEDS, quick={"train.steps": 20, "first": 5})
def bias(ctx: RunContext) -> Outcome:
    """AdamW with and without bias correction: the first steps' update sizes and the loss over
    the first few hundred steps, at a constant learning rate with no warmup and with the
    default run's warmup, on the same seeds."""

    c: Bias = ctx.config
    corpus = load_corpus()
    settings = {
        "corrected": replace(c.train, bias_correction=True),
        "uncorrected": replace(c.train, bias_correction=False),
        "corrected_warmup": replace(c.train, bias_correction=True, warmup=c.warmup),
        "uncorrected_warmup": replace(c.train, bias_correction=False, warmup=c.warmup),
    }
    runs = [replace(s, seed=seed) for s in settings.values() for seed in ctx.seeds]
    S = len(ctx.seeds)
    _, snaps = train_with_snapshots(ModelConfig(), runs, corpus, range(1, c.first + 1))
    ctx.report_progress(0.3, "the loss curves")
    results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, c.train, 0.3, 0.7))
    rms = rms_updates(snaps)  # (first, M)
    upd = {n: rms[:, k * S : (k + 1) * S].T for k, n in enumerate(settings)}  # (seeds, first)
    val = {n: np.array([r.curves["val_loss"] for r in results[k * S : (k + 1) * S]]) for k, n in enumerate(settings)}
    step = results[0].curves["step"]
    b1, b2 = c.train.betas
    t = np.arange(1, c.first + 1)
    theory = (1 - b1**t) / np.sqrt(1 - b2**t)  # uncorrected over corrected step for a constant gradient
    ratio = upd["uncorrected"] / upd["corrected"]
    m: dict[str, Measurement] = {
        "ch04.bias.lr": _lr(c.train.lr, "AdamW learning rate of the bias-correction runs (constant)"),
        "ch04.bias.steps": exact(c.train.steps, "steps", "length of the bias-correction runs"),
        "ch04.bias.first": exact(c.first, "steps", "update sizes measured over the first steps"),
        "ch04.bias.warmup": exact(c.warmup, "steps", "warmup of the second pair of runs"),
        "ch04.bias.theory.t1": exact(
            theory[0], "", "uncorrected/corrected step at t = 1, constant gradient: (1-b1)/sqrt(1-b2)", 3
        ),
        "ch04.bias.theory.max": exact(theory.max(), "", "largest such ratio over the first steps", 3),
        "ch04.bias.theory.t_max": exact(float(t[np.argmax(theory)]), "steps", "the step where it peaks"),
        "ch04.bias.ratio.t1": spread(ratio[:, 0], "", "measured ratio of update sizes at step 1"),
        "ch04.bias.ratio.max": spread(ratio.max(axis=1), "", "largest measured ratio over the first steps"),
        "ch04.bias.ratio.last": spread(ratio[:, -1], "", "measured ratio at the last of the first steps"),
        "ch04.bias.update.corrected.t1": spread(upd["corrected"][:, 0], "", "RMS weight change of update 1, corrected"),
        "ch04.bias.update.uncorrected.t1": spread(
            upd["uncorrected"][:, 0], "", "RMS weight change of update 1, uncorrected"
        ),
    }
    at = [s for s in (50, 100, c.train.steps) if s in step]
    for n, v in val.items():
        for s in at:
            m[f"ch04.bias.val.{n}.step{s}"] = measured(v[:, step.index(s)], "nats", f"{n}: validation loss at step {s}")
        early = [i for i, s in enumerate(step) if 0 < s <= 100]
        if early:
            m[f"ch04.bias.val.{n}.peak100"] = measured(
                v[:, early].max(axis=1), "nats", f"{n}: highest validation loss in steps 10-100"
            )
    for s in at:
        i = step.index(s)
        m[f"ch04.bias.diff.step{s}"] = measured(
            val["uncorrected"][:, i] - val["corrected"][:, i],
            "nats",
            f"uncorrected minus corrected at step {s}, paired by seed",
            2,
        )
        m[f"ch04.bias.diff_warmup.step{s}"] = measured(
            val["uncorrected_warmup"][:, i] - val["corrected_warmup"][:, i],
            "nats",
            f"with warmup: uncorrected minus corrected at step {s}, paired by seed",
            2,
        )
    return Outcome(
        measurements=m,
        series={
            "t": t,
            "theory": theory,
            **{f"update_{n}": u for n, u in upd.items()},
            "step": step,
            **{f"val_{n}": v for n, v in val.items()},
            "seeds": list(ctx.seeds),
        },
    )


# --------------------------------------------------------------------------- AdamW against Adam with L2


@dataclass(frozen=True)
class Decay:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run otherwise
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
    decays: tuple[float, ...] = (0.0, 0.1, 0.3)
    snapshots: int = 10  # weight norms at this many evenly spaced steps


@experiment(
    "ch04.decay",
    config=Decay(lrs=(1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1)),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "snapshots": 2},
)
def decay(ctx: RunContext) -> Outcome:
    """AdamW against Adam with L2 decay at weight decays 0, 0.1 and 0.3, each swept over the
    learning rates and shown at its own best: final validation loss and the weights' norm."""

    c: Decay = ctx.config
    corpus = load_corpus()
    S, R = len(ctx.seeds), len(c.lrs)
    at = [round(c.train.steps * (k + 1) / c.snapshots) for k in range(c.snapshots)]
    m: dict[str, Measurement] = {
        "ch04.decay.steps": exact(c.train.steps, "steps", "training steps of the weight-decay runs"),
        "ch04.decay.rungs": exact(R, "learning rates", "learning rates swept per optimiser and decay"),
        "ch04.decay.lr.min": _lr(min(c.lrs), "lowest learning rate swept"),
        "ch04.decay.lr.max": _lr(max(c.lrs), "highest learning rate swept"),
    }
    series: dict = {"lrs": list(c.lrs), "decays": list(c.decays), "norm_step": [0, *at]}
    best_final = {}
    parts = [(k, wd) for k in ("adamw", "adam") for wd in c.decays if not (k == "adam" and wd == 0.0)]
    for j, (kind, wd) in enumerate(parts):
        name = f"{kind}_{wd:g}".replace(".", "")
        runs = [replace(c.train, optimizer=kind, weight_decay=wd, lr=lr, seed=s) for lr in c.lrs for s in ctx.seeds]
        results, snaps = train_with_snapshots(
            ModelConfig(), runs, corpus, at, progress(ctx, c.train, j / len(parts), 1 / len(parts))
        )
        finals = _finals(results, R, S)
        b = best_index(finals)
        norms = torch.stack([s.double().norm(dim=1) for s in snaps]).numpy()  # (snapshots + 1, runs)
        best_norms = norms[:, b * S : (b + 1) * S].T  # (seeds, snapshots + 1)
        best_final[name] = finals[b]
        label = f"{NAMES[kind]}, weight decay {wd:g}"
        m[f"ch04.decay.{name}.best_lr"] = _lr(c.lrs[b], f"{label}: best learning rate")
        m[f"ch04.decay.{name}.val_loss"] = spread(finals[b], "nats", f"{label}: final validation loss at its best rate")
        m[f"ch04.decay.{name}.norm"] = spread(best_norms[:, -1], "", f"{label}: weights' norm at the end, best rate")
        m[f"ch04.decay.{name}.best_at_edge"] = exact(
            float(b in (0, R - 1)), "", f"{label}: 1 if the best is an end of the ladder"
        )
        series |= {
            f"{name}_finals": finals,
            f"{name}_norms": best_norms,
            f"{name}_val": np.array([r.curves["val_loss"] for r in results[b * S : (b + 1) * S]]),
        }
        m.setdefault("ch04.decay.norm.init", spread(norms[0, :S], "", "weights' norm at initialisation"))
    for wd in c.decays:
        if wd > 0:
            k = f"{wd:g}".replace(".", "")
            m[f"ch04.decay.diff{k}"] = measured(
                best_final[f"adamw_{k}"] - best_final[f"adam_{k}"],
                "nats",
                f"AdamW minus Adam-L2 at weight decay {wd:g}, each at its best rate, paired by seed",
                2,
            )
    series["step"] = results[0].curves["step"]
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- the four optimisers


@dataclass(frozen=True)
class Sweep:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=50))  # the default run otherwise
    lrs: dict[str, tuple[float, ...]] = field(
        default_factory=lambda: {
            "sgd": (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
            "momentum": (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0),
            "adam": (3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1),
            "adamw": (3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1),
        }
    )
    within: float = 0.05  # the good band: rates within this many nats of the best
    untuned: tuple[str, float] = ("sgd", 3.0)  # the comparison at the default: SGD at 3, AdamW at 2e-3


@experiment("ch04.sweep", config=Sweep(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def sweep(ctx: RunContext) -> Outcome:
    """SGD, momentum, Adam and AdamW on the Decoder, each swept over learning rates about 3x
    apart (three seeds each) and shown at its own best; AdamW at the default rate for contrast."""
    c: Sweep = ctx.config
    corpus = load_corpus()
    S = len(ctx.seeds)
    t = c.train
    m: dict[str, Measurement] = {
        "ch04.sweep.steps": exact(t.steps, "steps", "training steps of every sweep run"),
        "ch04.sweep.within": exact(c.within, "nats", "good band: mean final loss within this of the best", 2),
        "ch04.sweep.momentum_beta": exact(t.betas[0], "", "momentum's beta in the sweep", 2),
        "ch04.sweep.weight_decay": exact(t.weight_decay, "", "weight decay of every sweep run (the default)", 2),
        "ch04.sweep.default_lr": _lr(t.lr, "the default run's learning rate"),
    }
    series: dict = {}
    bests: dict[str, np.ndarray] = {}
    jobs = [*c.lrs.items(), ("adamw_default", (t.lr,))]
    for j, (name, lrs) in enumerate(jobs):
        kind = "adamw" if name == "adamw_default" else name
        runs = [replace(t, optimizer=kind, lr=lr, seed=s) for lr in lrs for s in ctx.seeds]
        results = train_many(
            ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, t, j / len(jobs), 1 / len(jobs))
        )
        finals = _finals(results, len(lrs), S)
        series[f"{name}_lrs"], series[f"{name}_finals"] = list(lrs), finals
        if name == "adamw_default":
            m["ch04.sweep.adamw_default.val_loss"] = measured(
                finals[0], "nats", "AdamW at the default rate: final validation loss"
            )
            continue
        b = best_index(finals)
        lo, hi = band(lrs, finals, c.within)
        bests[name] = finals[b]
        curves = np.array([r.curves["val_loss"] for r in results[b * S : (b + 1) * S]])
        series[f"{name}_best_val"] = curves
        series["step"] = results[0].curves["step"]
        diverged = sum(r.diverged_at is not None for r in results)
        m |= {
            f"ch04.sweep.{name}.best_lr": _lr(lrs[b], f"{NAMES[name]}: best learning rate of the sweep"),
            f"ch04.sweep.{name}.val_loss": measured(
                finals[b], "nats", f"{NAMES[name]}: final validation loss at its best rate"
            ),
            f"ch04.sweep.{name}.band_lo": _lr(lo, f"{NAMES[name]}: lowest rate of the good band"),
            f"ch04.sweep.{name}.band_hi": _lr(hi, f"{NAMES[name]}: highest rate of the good band"),
            f"ch04.sweep.{name}.band": exact(
                hi / lo, "", f"{NAMES[name]}: width of the good band (highest / lowest rate)", 2
            ),
            f"ch04.sweep.{name}.lr_min": _lr(min(lrs), f"{NAMES[name]}: lowest rate swept"),
            f"ch04.sweep.{name}.lr_max": _lr(max(lrs), f"{NAMES[name]}: highest rate swept"),
            f"ch04.sweep.{name}.diverged": exact(diverged, "runs", f"{NAMES[name]}: runs of the sweep that diverged"),
            f"ch04.sweep.{name}.best_at_edge": exact(
                float(b in (0, len(lrs) - 1)), "", f"{NAMES[name]}: 1 if the best is an end of the ladder"
            ),
        }
        if c.untuned[0] == name:
            k = list(lrs).index(c.untuned[1])
            m["ch04.sweep.untuned.lr"] = _lr(c.untuned[1], f"{NAMES[name]} rate of the untuned comparison")
            m["ch04.sweep.untuned.val_loss"] = measured(
                finals[k], "nats", f"{NAMES[name]} at {c.untuned[1]:g}: final validation loss"
            )
    m["ch04.sweep.rungs"] = exact(min(len(v) for v in c.lrs.values()), "learning rates", "rates swept per optimiser")
    m["ch04.sweep.adamw_minus_adam"] = measured(
        bests["adamw"] - bests["adam"], "nats", "AdamW minus Adam, each at its best rate, paired by seed", 2
    )
    m["ch04.sweep.adamw_minus_sgd"] = measured(
        bests["adamw"] - bests["sgd"], "nats", "AdamW minus SGD, each at its best rate, paired by seed", 2
    )
    m["ch04.sweep.momentum_minus_sgd"] = measured(
        bests["momentum"] - bests["sgd"], "nats", "momentum minus SGD, each at its best rate, paired by seed", 2
    )
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- optimiser state


@experiment("ch04.state", config={"model": ModelConfig()})
def state(ctx: RunContext) -> Outcome:
    """Bytes of optimiser state per parameter for the Decoder, read from the state each optimiser
    keeps after one step (model/optim.py, the trainer's, and torch.optim's)."""
    cfg: ModelConfig = ctx.config["model"]
    P = num_params(Decoder(cfg))
    m: dict[str, Measurement] = {"ch04.state.params": exact(P, "parameters", "parameters of the Decoder")}
    for kind in OPTIMIZERS:
        layout, theta = init_stack(cfg, [0])
        opt = Optimizer(kind, torch.full((1, 1), 1e-3, dtype=torch.float64), [(0.9, 0.999)], [1e-8], [0.0])
        opt.step(theta, torch.ones_like(theta))
        ours = sum(v.numel() * v.element_size() for v in opt.state.values()) / theta.shape[1]
        torch.manual_seed(0)
        model = Decoder(cfg)
        params = list(model.parameters())
        ref = _torch_optimizer(kind, params)
        for p in params:
            p.grad = torch.ones_like(p)
        ref.step()
        theirs = (
            sum(
                v.numel() * v.element_size()
                for st in ref.state.values()
                for k, v in st.items()
                if isinstance(v, torch.Tensor) and k != "step"
            )
            / P
        )
        m[f"ch04.state.{kind}"] = exact(
            ours, "bytes per parameter", f"{NAMES[kind]}: float32 state per parameter (the trainer's)"
        )
        m[f"ch04.state.{kind}.torch"] = exact(
            theirs, "bytes per parameter", f"{NAMES[kind]}: the same read from torch.optim"
        )
        m[f"ch04.state.{kind}.total"] = exact(ours * P, "bytes", f"{NAMES[kind]}: state bytes for the whole Decoder")
        m[f"ch04.state.{kind}.buffers"] = exact(len(opt.state), "buffers", f"{NAMES[kind]}: state tensors per weight")
    return Outcome(measurements=m)


def _torch_optimizer(kind: str, params: list[torch.nn.Parameter]) -> torch.optim.Optimizer:
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=1e-3)
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-3)
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9 if kind == "momentum" else 0.0)
