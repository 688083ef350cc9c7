"""Chapter 4, optimisers from SGD to AdamW: the numbers deck 04 shows.

- ``ch04.valley``: SGD, momentum and Adam on a 2-D quadratic (model/valley.py): steps to a
  tolerance against the condition number, each at its best step size per kappa;
- ``ch04.bias``: Adam's bias correction on the Decoder: update sizes (and Adam's step over the
  learning rate), and the loss with and without it at constant rates 3x apart, with and without
  warmup, each arm at its own best rate;
- ``ch04.sweep``: SGD, momentum, Adam (+ L2) and AdamW, each over learning rates 3x apart times
  weight decays, compared at its own best (rate, decay); the AdamW and Adam grids are also the
  weight-decay heat map;
- ``ch04.state``: bytes of optimiser state per parameter, read from the optimisers' state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model import valley as vl
from model.data import Corpus, load_corpus
from model.decoder import Decoder, ModelConfig, num_params
from model.experiments.common import best_rung, contiguous_band, exact, measured, progress, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.optim import OPTIMIZERS, Optimizer
from model.stacked import init_stack
from model.train import Step, TrainConfig, TrainResult, train_many

SEEDS = (0, 1, 2)
NAMES = {"sgd": "SGD", "momentum": "momentum", "adam": "Adam", "adamw": "AdamW"}


# --------------------------------------------------------------------------- shared measures


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
    """train_many on one stack, its weights (M, P) copied at step 0 and at every step of ``at``
    (training stops at the last): the results and the snapshots."""
    snapshots: list[torch.Tensor] = []

    def snap(step: Step) -> bool:
        copies = (step.step == 0) + list(at).count(step.step)
        snapshots.extend(step.theta.clone() for _ in range(copies))
        return step.step >= max(at)

    results = train_many(model_cfg, runs, corpus, on_eval=on_eval, workers=1, on_step=snap)
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
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)  # each arm at its own best of these (constant rate)
    warmups: tuple[int, ...] = (0, 100)  # no warmup, and the default run's
    first: int = 50  # update sizes over the first this many steps (at train.lr, no warmup)


ARMS = ("corrected", "uncorrected")


@experiment("ch04.bias", config=Bias(), seeds=SEEDS, quick={"train.steps": 20, "first": 5, "warmups": (0, 5)})
def bias(ctx: RunContext) -> Outcome:
    """AdamW with and without bias correction: the first steps' update sizes (at one rate, no
    warmup), and the loss after a few hundred steps at constant rates 3x apart, with and
    without warmup, each arm at its own best rate; the same seeds in every cell."""

    c: Bias = ctx.config
    corpus = load_corpus()
    S, R = len(ctx.seeds), len(c.lrs)
    # update sizes: the corrected and uncorrected pair at train.lr, no warmup, snapshotted
    pair = [replace(c.train, bias_correction=a == "corrected", seed=s) for a in ARMS for s in ctx.seeds]
    at = [*range(1, c.first + 1), c.train.steps - 1, c.train.steps]
    _, snaps = train_with_snapshots(ModelConfig(), pair, corpus, at)
    rms = rms_updates(snaps)  # (len(at), 2 S)
    upd = {a: rms[: c.first, k * S : (k + 1) * S].T for k, a in enumerate(ARMS)}  # (seeds, first)
    late = rms[-1, :S]  # corrected: the last update's RMS size
    ctx.report_progress(0.3, "the loss grid")
    # the loss grid: warmup x arm x rate x seed, one stack
    cells = [(w, a, lr) for w in c.warmups for a in ARMS for lr in c.lrs]
    runs = [
        replace(c.train, warmup=w, bias_correction=a == "corrected", lr=lr, seed=s)
        for w, a, lr in cells
        for s in ctx.seeds
    ]
    results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, c.train, 0.3, 0.7))
    step = results[0].curves["step"]
    val = np.array([r.curves["val_loss"] for r in results]).reshape(len(c.warmups), 2, R, S, len(step))
    finals = val[..., -1]  # (warmups, arms, rates, seeds)
    b1, b2 = c.train.betas
    t = np.arange(1, c.first + 1)
    theory = (1 - b1**t) / np.sqrt(1 - b2**t)  # uncorrected over corrected step for a constant gradient
    ratio = upd["uncorrected"] / upd["corrected"]
    m: dict[str, Measurement] = {
        "ch04.bias.lr": _lr(c.train.lr, "AdamW rate of the update-size runs (constant, no warmup)"),
        "ch04.bias.lr_min": _lr(min(c.lrs), "lowest constant rate of the loss grid"),
        "ch04.bias.lr_max": _lr(max(c.lrs), "highest constant rate of the loss grid"),
        "ch04.bias.rungs": exact(len(c.lrs), "rates", "rungs of the constant-rate ladder"),
        "ch04.bias.steps": exact(c.train.steps, "steps", "length of the bias-correction runs"),
        "ch04.bias.first": exact(c.first, "steps", "update sizes measured over the first steps"),
        "ch04.bias.warmup": exact(max(c.warmups), "steps", "warmup of the runs with warmup"),
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
        "ch04.bias.step_rms.t1": spread(
            upd["corrected"][:, 0] / c.train.lr, "", "corrected Adam: RMS weight change of update 1 / learning rate"
        ),
        "ch04.bias.step_rms.first": spread(
            upd["corrected"][:, -1] / c.train.lr,
            "",
            f"corrected Adam: RMS weight change of update {c.first} / learning rate",
        ),
        "ch04.bias.step_rms.last": spread(
            late / c.train.lr, "", f"corrected Adam: RMS weight change of update {c.train.steps} / learning rate"
        ),
    }
    series: dict = {
        "t": t,
        "theory": theory,
        **{f"update_{a}": u for a, u in upd.items()},
        "step": step,
        "lrs": list(c.lrs),
        "warmups": list(c.warmups),
        "finals": finals,
        "seeds": list(ctx.seeds),
    }
    for i, w in enumerate(c.warmups):
        tag = "" if w == 0 else "_warmup"
        best = {}
        for k, a in enumerate(ARMS):
            b = best_rung(finals[i, k])
            best[a] = finals[i, k, b]
            series[f"val_{a}{tag}"] = val[i, k, b]
            series[f"lr_{a}{tag}"] = c.lrs[b]
            m[f"ch04.bias.{a}{tag}.best_lr"] = _lr(c.lrs[b], f"{a}, warmup {w}: best constant rate")
            m[f"ch04.bias.{a}{tag}.best_at_edge"] = exact(
                float(b in (0, R - 1)), "", f"{a}, warmup {w}: 1 if the best rate is an end of the ladder"
            )
            m[f"ch04.bias.{a}{tag}.val_loss"] = measured(
                finals[i, k, b], "nats", f"{a}, warmup {w}: validation loss at step {c.train.steps}, its best rate"
            )
        m[f"ch04.bias.diff{tag}.best"] = measured(
            best["uncorrected"] - best["corrected"],
            "nats",
            f"warmup {w}: uncorrected minus corrected at step {c.train.steps}, each at its best rate, paired by seed",
            2,
        )
        for j, lr in enumerate(c.lrs):
            m[f"ch04.bias.lr.r{j}"] = _lr(lr, f"rung {j} of the constant-rate ladder")
            m[f"ch04.bias.diff{tag}.r{j}"] = measured(
                finals[i, 1, j] - finals[i, 0, j],
                "nats",
                f"warmup {w}, rate {lr:g}: uncorrected minus corrected at step {c.train.steps}, paired by seed",
                2,
            )
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- the four optimisers, lr x weight decay


#: Weight decays of each optimiser's grid. SGD's and momentum's decay is L2 in the gradient
#: (torch.optim.SGD's), Adam's too ("Adam + L2"); AdamW's is decoupled. With decay 0 Adam and
#: AdamW are the same arithmetic: the sweep runs both, and counts the runs that end bit-identical.
DECAYS: dict[str, tuple[float, ...]] = {
    "sgd": (0.0, 1e-3, 1e-2),
    "momentum": (0.0, 1e-3, 1e-2),
    "adam": (0.0, 1e-4, 1e-3, 1e-2, 1e-1),
    "adamw": (0.0, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1),
}


def decay_key(wd: float) -> str:
    """A weight decay as a key part: 0 -> "wd0", 1e-4 -> "wd1e-4", 0.03 -> "wd3e-2"."""
    if wd == 0:
        return "wd0"
    mant, exp = f"{wd:.0e}".split("e")
    return f"wd{mant}e{int(exp)}"


def best_cell(finals: np.ndarray) -> tuple[int, int]:
    """The (decay, rate) cell of a grid with the lowest mean final loss over seeds; finals
    (decays, rates, seeds), NaN for a diverged run (a cell with any NaN is never best)."""
    D, R, S = finals.shape
    k = best_rung(finals.reshape(D * R, S))
    return k // R, k % R


def weight_norm(result: TrainResult) -> float:
    """The Euclidean norm of a run's final weights, all matrices together."""
    squares = (v.double().pow(2).sum() for v in (result.state_dict or {}).values())
    return float(torch.sqrt(sum(squares, torch.zeros((), dtype=torch.float64))))  # summed in order, as before


@dataclass(frozen=True)
class Sweep:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run otherwise
    lrs: dict[str, tuple[float, ...]] = field(
        default_factory=lambda: {
            "sgd": (1.0, 3.0, 10.0, 30.0),
            "momentum": (0.03, 0.1, 0.3, 1.0, 3.0, 10.0),
            "adam": (3e-3, 1e-2, 3e-2, 1e-1),
            "adamw": (3e-3, 1e-2, 3e-2, 1e-1),
        }
    )
    decays: dict[str, tuple[float, ...]] = field(default_factory=lambda: dict(DECAYS))
    within: float = 0.1  # the good band: rates within this many nats of the best (ch05.sweep's margin too)


QUICK_DECAYS = {k: (0.0, 1e-2) for k in DECAYS}


@experiment(
    "ch04.sweep",
    config=Sweep(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "decays": QUICK_DECAYS},
)
def sweep(ctx: RunContext) -> Outcome:
    """SGD, momentum, Adam (+ L2) and AdamW on the Decoder, each over a grid of learning rates
    about 3x apart times weight decays (three seeds per cell, the same seeds everywhere) and
    compared at its own best (rate, decay); AdamW at the default run's settings for contrast."""
    c: Sweep = ctx.config
    corpus = load_corpus()
    S = len(ctx.seeds)
    t = c.train
    m: dict[str, Measurement] = {
        "ch04.sweep.steps": exact(t.steps, "steps", "training steps of every sweep run"),
        "ch04.sweep.within": exact(c.within, "nats", "good band: mean final loss within this of the best", 2),
        "ch04.sweep.momentum_beta": exact(t.betas[0], "", "momentum's beta in the sweep", 2),
        "ch04.sweep.default_wd": exact(t.weight_decay, "", "the default run's weight decay", 2),
        "ch04.sweep.default_lr": _lr(t.lr, "the default run's learning rate"),
    }
    series: dict = {}
    bests: dict[str, np.ndarray] = {}
    at_default: dict[str, np.ndarray] = {}
    results_of: dict[str, list[TrainResult]] = {}
    jobs = [*c.lrs, "adamw_default"]
    for j, name in enumerate(jobs):
        kind = "adamw" if name == "adamw_default" else name
        lrs, wds = ((t.lr,), (t.weight_decay,)) if name == "adamw_default" else (c.lrs[name], c.decays[name])
        runs = [
            replace(t, optimizer=kind, lr=lr, weight_decay=wd, seed=s) for wd in wds for lr in lrs for s in ctx.seeds
        ]
        results = train_many(
            ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, t, j / len(jobs), 1 / len(jobs))
        )
        finals = np.array([r.val_loss_final for r in results]).reshape(len(wds), len(lrs), S)
        if name == "adamw_default":
            m["ch04.sweep.adamw_default.val_loss"] = measured(
                finals[0, 0], "nats", "AdamW at the default run's rate and decay: final validation loss"
            )
            continue
        results_of[name] = results
        N = NAMES[name]
        d, b = best_cell(finals)
        lo, hi = contiguous_band(lrs, finals[d], c.within)
        bests[name] = finals[d, b]
        first = (d * len(lrs) + b) * S
        norms = np.array([weight_norm(r) for r in results]).reshape(len(wds), len(lrs), S)
        series |= {
            f"{name}_lrs": list(lrs),
            f"{name}_decays": list(wds),
            f"{name}_finals": finals,
            f"{name}_norms": norms,
            f"{name}_best_val": np.array([r.curves["val_loss"] for r in results[first : first + S]]),
            "step": results[0].curves["step"],
        }
        diverged = sum(r.diverged_at is not None for r in results)
        m |= {
            f"ch04.sweep.{name}.best_lr": _lr(lrs[b], f"{N}: learning rate of its best cell"),
            f"ch04.sweep.{name}.best_wd": exact(wds[d], "", f"{N}: weight decay of its best cell", 1),
            f"ch04.sweep.{name}.val_loss": measured(
                finals[d, b], "nats", f"{N}: final validation loss at its best (rate, decay)"
            ),
            f"ch04.sweep.{name}.norm": spread(norms[d, b], "", f"{N}: norm of the final weights at its best cell"),
            f"ch04.sweep.{name}.band_lo": _lr(lo, f"{N}: lowest rate of the good band, at its best decay"),
            f"ch04.sweep.{name}.band_hi": _lr(hi, f"{N}: highest rate of the good band, at its best decay"),
            f"ch04.sweep.{name}.band": exact(hi / lo, "", f"{N}: width of the good band (highest / lowest rate)", 2),
            f"ch04.sweep.{name}.lr_min": _lr(min(lrs), f"{N}: lowest rate swept"),
            f"ch04.sweep.{name}.lr_max": _lr(max(lrs), f"{N}: highest rate swept"),
            f"ch04.sweep.{name}.rungs": exact(len(lrs), "learning rates", f"{N}: rates swept per decay"),
            f"ch04.sweep.{name}.decays": exact(len(wds), "weight decays", f"{N}: weight decays swept"),
            f"ch04.sweep.{name}.wd_max": exact(max(wds), "", f"{N}: largest weight decay swept", 1),
            f"ch04.sweep.{name}.diverged": exact(diverged, "runs", f"{N}: runs of the grid that diverged"),
            f"ch04.sweep.{name}.best_at_edge": exact(
                float(b in (0, len(lrs) - 1)), "", f"{N}: 1 if its best rate is an end of the ladder"
            ),
            f"ch04.sweep.{name}.wd_at_edge": exact(
                float(d == len(wds) - 1), "", f"{N}: 1 if its best decay is the largest swept"
            ),
        }
        for k, wd in enumerate(wds):  # each decay at its own best rate
            bk = best_rung(finals[k])
            key = f"ch04.sweep.{name}.{decay_key(wd)}"
            m[f"{key}.best_lr"] = _lr(lrs[bk], f"{N}, weight decay {wd:g}: best learning rate")
            m[f"{key}.val_loss"] = measured(
                finals[k, bk], "nats", f"{N}, weight decay {wd:g}: final validation loss at its best rate"
            )
            m[f"{key}.norm"] = spread(norms[k, bk], "", f"{N}, weight decay {wd:g}: final weights' norm, best rate")
            if wd == t.weight_decay:
                at_default[name] = finals[k, bk]
                m[f"{key}.gain"] = measured(
                    finals[k, bk] - finals[d, b],
                    "nats",
                    f"{N}: default decay minus best decay, each at its best rate, paired by seed",
                    2,
                )
        m.setdefault(
            "ch04.sweep.norm_init", spread([init_norm(s) for s in ctx.seeds], "", "norm of the initial weights")
        )
    pairs = [("adamw", "sgd"), ("adamw", "momentum"), ("adamw", "adam"), ("momentum", "sgd"), ("adam", "sgd")]
    for a, b_ in pairs:
        m[f"ch04.sweep.{a}_minus_{b_}"] = measured(
            bests[a] - bests[b_],
            "nats",
            f"{NAMES[a]} minus {NAMES[b_]}, each at its best (rate, decay), paired by seed",
            2,
        )
        m[f"ch04.sweep.{a}_minus_{b_}.at_default_wd"] = measured(
            at_default[a] - at_default[b_],
            "nats",
            f"{NAMES[a]} minus {NAMES[b_]}, both at the default decay, each at its best rate, paired by seed",
            2,
        )
    zero_w, zero_a = c.decays["adamw"].index(0.0), c.decays["adam"].index(0.0)
    if c.lrs["adam"] == c.lrs["adamw"]:
        R, Sx = len(c.lrs["adam"]), S
        w0 = results_of["adamw"][zero_w * R * Sx : (zero_w + 1) * R * Sx]
        a0 = results_of["adam"][zero_a * R * Sx : (zero_a + 1) * R * Sx]
        same = sum(
            all(torch.equal(v, (y.state_dict or {})[k]) for k, v in (x.state_dict or {}).items())
            for x, y in zip(w0, a0, strict=True)
        )
        m["ch04.sweep.zero_decay_identical"] = exact(
            same, "runs", "runs of Adam and AdamW at decay 0 ending with bit-identical weights"
        )
        m["ch04.sweep.zero_decay_runs"] = exact(len(w0), "runs", "runs compared at decay 0")
    return Outcome(measurements=m, series=series)


def init_norm(seed: int) -> float:
    """The Euclidean norm of a seed's initial weights."""
    _, theta = init_stack(ModelConfig(), [seed])
    return float(theta.double().norm())


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
