"""Chapter 5, learning rate, schedules and batch size: the numbers deck 05 shows.

- ``ch05.sweep``: final validation loss against the peak rate (a ladder about 3x apart),
  the best rate, the stable band, the divergence edge and the two failure shapes;
- ``ch05.warmup``: warmup 0, 100 and 500 steps at the best rate and one rung above, and
  Adam's normalised step over the first updates (its second-moment estimate is young);
- ``ch05.schedules``: constant, warmup + cosine and warmup-stable-decay (10% and 20%
  decay), each at its own tuned rate, and a WSD decay branched from the stable phase;
- ``ch05.batch``: batches 8 to 512 at a fixed token budget, each at its own tuned rate:
  steps and tokens to a target loss, the critical batch, and the linear scaling rule;
- ``ch05.noise``: the simple gradient noise scale tr(Σ)/|G|² along a run at the best rate.

Every run is the default run (AdamW, clip 1.0, batch 32, 2,000 steps, warmup 100 + cosine)
except where its config says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from model.data import load_corpus, val_windows
from model.decoder import Decoder, ModelConfig
from model.experiments.common import band, exact, measured, progress, steps_to
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.gradients import noise_scale, per_example_grads
from model.train import Step, TrainConfig, TrainResult, lr_at, train_many

SEEDS = (0, 1, 2)
#: The sweep's ladder: 2 and 6 times powers of ten, about 3x apart, from far too low to far too high.
RATES = (2e-4, 6e-4, 2e-3, 6e-3, 2e-2, 6e-2, 2e-1, 6e-1, 2.0)
#: The rate the sweep found best (ch05.lr.best), and the rung above it: the other experiments' rates.
BEST = 2e-2
ABOVE = 6e-2
MARGIN = 0.1  # the stable band: rates whose mean final loss is within this many nats of the best's
TAIL = 200  # "the end of a run": its last this many steps


def _val(runs: Sequence[TrainResult]) -> np.ndarray:
    """Validation curves (runs, evaluations); a run that stopped early is padded with NaN."""
    n = max(len(r.curves["val_loss"]) for r in runs)
    return np.array([r.curves["val_loss"] + [math.nan] * (n - len(r.curves["val_loss"])) for r in runs])


def _final(runs: Sequence[TrainResult]) -> np.ndarray:
    """Each run's last validation loss (NaN if it went non-finite)."""
    return np.array([r.val_loss_final for r in runs])


# --------------------------------------------------------------------------- measures


def blowup_step(steps: Sequence[float], losses: Sequence[float], level: float) -> float:
    """The first evaluated step after step 0 whose loss is above ``level`` or not finite (NaN if none)."""
    for step, loss in zip(steps, losses, strict=True):
        if step > 0 and not (math.isfinite(loss) and loss <= level):
            return float(step)
    return math.nan


def critical_batch(batches: Sequence[float], steps: Sequence[float]) -> tuple[float, float]:
    """S_min and B_crit from S(B) = S_min (1 + B_crit / B), the steps-batch trade-off of
    McCandlish et al. ((S/S_min - 1)(E/E_min - 1) = 1), fitted by least squares in 1/B."""
    inv = 1.0 / np.asarray(batches, dtype=float)
    b, a = np.polyfit(inv, np.asarray(steps, dtype=float), 1)
    return float(a), float(b / a)


def normalised_step_rms(exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, t: int, betas, eps: float) -> torch.Tensor:
    """Root mean square of Adam's step before the learning rate, m̂ / (√v̂ + eps), per model (M,)."""
    # #region adam-step
    # the gradient's running mean, bias-corrected
    m_hat = exp_avg.double() / (1 - betas[0] ** t)
    # its running mean square: after t updates, t samples
    v_hat = exp_avg_sq.double() / (1 - betas[1] ** t)
    # what AdamW multiplies by the learning rate
    step = m_hat / (v_hat.sqrt() + eps)
    # #endregion adam-step
    return step.square().mean(dim=1).sqrt()


def _paired(a: np.ndarray, b: np.ndarray, unit: str, what: str) -> Measurement:
    return measured(a - b, unit, what, 2)


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class Sweep:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=50))
    rates: tuple[float, ...] = RATES
    margin: float = MARGIN


@experiment("ch05.sweep", config=Sweep(), seeds=SEEDS, quick={"train.steps": 30, "train.eval_every": 10})
def sweep(ctx: RunContext) -> Outcome:
    """Final validation loss against the peak learning rate, three seeds a rate, the default schedule."""
    cfg: Sweep = ctx.config
    corpus = load_corpus()
    runs = [replace(cfg.train, lr=r, seed=s) for r in cfg.rates for s in ctx.seeds]
    results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, cfg.train))
    n, S = len(cfg.rates), len(ctx.seeds)
    steps = results[0].curves["step"]
    val = _val(results).reshape(n, S, -1)  # (rates, seeds, evals)
    final = _final(results).reshape(n, S)
    init = float(np.nanmean(val[:, :, 0]))
    blow = np.array([[blowup_step(steps, v, init) for v in val[i]] for i in range(n)])  # (rates, seeds)
    means = np.where(np.isnan(blow).all(axis=1), final.mean(axis=1), np.nan)  # a rate that blows up has no mean
    i_best = int(np.nanargmin(means))
    low, high, count = band(cfg.rates, means, cfg.margin)
    i_def = cfg.rates.index(TrainConfig.lr) if TrainConfig.lr in cfg.rates else None
    t = cfg.train
    m = {
        "ch05.sweep.n_rates": exact(n, "rates", "learning rates in the sweep"),
        "ch05.sweep.lr_min": exact(cfg.rates[0], "", "lowest rate of the sweep", 1),
        "ch05.sweep.lr_max": exact(cfg.rates[-1], "", "highest rate of the sweep", 1),
        "ch05.steps": exact(t.steps, "steps", "training steps of each run (the default run's)"),
        "ch05.batch": exact(t.batch, "windows", "windows per batch (the default run's)"),
        "ch05.warmup": exact(t.warmup, "steps", "linear warmup steps of the default schedule"),
        "ch05.clip": exact(t.clip or math.inf, "", "gradient-norm clipping threshold", 2),
        "ch05.lr.best": exact(cfg.rates[i_best], "", "the sweep's best peak rate (lowest mean final loss)", 1),
        "ch05.lr.best.final": measured(final[i_best], "nats", "final validation loss at the best rate"),
        "ch05.band.margin": exact(cfg.margin, "nats", "good band: mean final loss within this of the best", 2),
        "ch05.band.low": exact(low, "", "lowest rate in the good band", 1),
        "ch05.band.high": exact(high, "", "highest rate in the good band", 1),
        "ch05.band.count": exact(count, "rates", "rates in the good band"),
        "ch05.band.width": exact(high / low, "", "highest over lowest rate in the good band", 2),
        "ch05.blowup.level": exact(init, "nats", "a run blows up when validation loss exceeds its start (mean)", 3),
    }
    for i, rate in enumerate(cfg.rates):
        m[f"ch05.sweep.lr.r{i}"] = exact(rate, "", f"rate {i + 1} of the sweep", 1)
        if np.isfinite(final[i]).all():
            m[f"ch05.sweep.final.r{i}"] = measured(final[i], "nats", f"final validation loss at rate {rate:g}", 3)
        m[f"ch05.sweep.blowups.r{i}"] = exact(
            int(np.isfinite(blow[i]).sum()), "seeds", f"seeds whose loss exceeds its start at rate {rate:g}"
        )
    if i_def is not None:
        m |= {
            "ch05.lr.default": exact(TrainConfig.lr, "", "the default run's peak rate", 1),
            "ch05.lr.default.final": measured(final[i_def], "nats", "final validation loss at the default rate"),
            "ch05.lr.best_over_default": exact(cfg.rates[i_best] / TrainConfig.lr, "", "best over default rate", 2),
            "ch05.lr.best.gain": _paired(
                final[i_def], final[i_best], "nats", "default-rate minus best-rate final loss, paired by seed"
            ),
        }
    edge = [i for i in range(n) if np.isfinite(blow[i]).any()]
    if edge:
        e = edge[0]
        m |= {
            "ch05.diverge.lr": exact(cfg.rates[e], "", "lowest rate at which a seed's loss exceeds its start", 1),
            "ch05.diverge.seeds": exact(int(np.isfinite(blow[e]).sum()), "seeds", "seeds that blow up at that rate"),
            "ch05.diverge.step": exact(
                float(np.nanmin(blow[e])), "steps", "first evaluated step above the start, at that rate"
            ),
            "ch05.diverge.over_best": exact(cfg.rates[e] / cfg.rates[i_best], "", "edge over best rate", 2),
        }
    m["ch05.diverge.nonfinite"] = exact(
        sum(r.diverged_at is not None for r in results), "runs", "runs whose loss or gradient became non-finite"
    )
    # the failure shapes: the lowest rate, and the highest rate (peak and end)
    last = max(0, len(steps) - 1 - TAIL // t.eval_every)
    lo, hi = val[0], val[-1]
    m |= {
        "ch05.fail.low.lr": exact(cfg.rates[0], "", "the too-low rate", 1),
        "ch05.fail.low.final": measured(lo[:, -1], "nats", "final validation loss at the too-low rate", 3),
        "ch05.fail.low.tail_drop": measured(
            lo[:, last] - lo[:, -1], "nats", f"too-low rate: loss fall over the last {TAIL} steps", 2
        ),
        "ch05.fail.best.tail_drop": measured(
            val[i_best][:, last] - val[i_best][:, -1], "nats", f"best rate: loss fall over the last {TAIL} steps", 2
        ),
        "ch05.tail": exact(TAIL, "steps", "the end of a run, for the loss fall over its last steps"),
        "ch05.fail.high.lr": exact(cfg.rates[-1], "", "the too-high rate", 1),
        "ch05.fail.high.peak": measured(np.nanmax(hi, axis=1), "nats", "too-high rate: highest validation loss", 3),
        "ch05.fail.high.final": measured(hi[:, -1], "nats", "too-high rate: final validation loss", 3),
        "ch05.fail.high.first_min": measured(
            np.nanmin(hi[:, 1 : 1 + 200 // t.eval_every], axis=1),
            "nats",
            "too-high rate: lowest validation loss in the first 200 steps",
            3,
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "rates": list(cfg.rates),
            "step": steps,
            "val_loss": val,
            "final": final,
            "blowup_step": blow,
            "best": i_best,
            "margin": cfg.margin,
            "init": init,
            "seeds": list(ctx.seeds),
        },
    )


# --------------------------------------------------------------------------- warmup


@dataclass(frozen=True)
class Warmup:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))
    rates: tuple[float, ...] = (BEST, ABOVE)  # the best rate and the rung above it
    warmups: tuple[int, ...] = (0, 100, 500)
    adam_steps: tuple[int, ...] = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500)  # where Adam's state is read
    early: int = 300  # the early part of a run, where an early spike is looked for
    smooth: int = 10  # training losses averaged per point of the early curve


@experiment(
    "ch05.warmup",
    config=Warmup(),
    seeds=SEEDS,
    quick={"train.steps": 30, "train.eval_every": 10, "adam_steps": (1, 2, 5), "early": 20, "smooth": 5},
)
def warmup(ctx: RunContext) -> Outcome:
    """Warmup 0, 100 and 500 steps at the best rate and the rung above; Adam's early normalised step."""
    cfg: Warmup = ctx.config
    corpus = load_corpus()
    t = cfg.train
    runs = [replace(t, lr=r, warmup=w, seed=s) for r in cfg.rates for w in cfg.warmups for s in ctx.seeds]
    results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, t, 0.0, 0.8))
    R, W, S = len(cfg.rates), len(cfg.warmups), len(ctx.seeds)
    final = _final(results).reshape(R, W, S)
    losses = np.array([r.step_losses[: cfg.early] for r in results])  # (runs, early)
    k = cfg.smooth
    early = losses[:, : cfg.early // k * k].reshape(len(results), -1, k).mean(axis=2).reshape(R, W, S, -1)
    m: dict[str, Measurement] = {
        "ch05.warmup.early": exact(cfg.early, "steps", "the early part of a run, where a spike is looked for"),
        "ch05.warmup.smooth": exact(k, "steps", "training losses averaged per point of the early curve"),
    }
    names = ("best", "above")
    w_ref = cfg.warmups.index(100) if 100 in cfg.warmups else 0
    for i, name in enumerate(names[:R]):
        m[f"ch05.warmup.{name}.lr"] = exact(cfg.rates[i], "", f"rate of the {name} warmup runs", 1)
        for j, w in enumerate(cfg.warmups):
            f = final[i, j]
            if np.isfinite(f).all():
                what = f"final loss, warmup {w}, rate {cfg.rates[i]:g}"
                m[f"ch05.warmup.{name}.w{w}.final"] = measured(f, "nats", what)
            # the early spike: how far the smoothed training loss climbs above its lowest point so far
            e = early[i, j]
            rise = np.array([np.max(x - np.minimum.accumulate(x)) for x in e])
            m[f"ch05.warmup.{name}.w{w}.early_rise"] = measured(
                rise, "nats", f"warmup {w}, rate {cfg.rates[i]:g}: largest early rise of the training loss", 2
            )
            if j != w_ref and np.isfinite(f).all() and np.isfinite(final[i, w_ref]).all():
                m[f"ch05.warmup.{name}.w{w}.minus_w100"] = _paired(
                    f, final[i, w_ref], "nats", f"warmup {w} minus warmup 100 final loss, rate {cfg.rates[i]:g}, paired"
                )
    for j, w in enumerate(cfg.warmups):
        m[f"ch05.warmup.w{w}"] = exact(w, "steps", f"warmup steps of setting {j + 1}")
    # Adam's second-moment estimate over the first updates, warmup 0 and 100, at the best rate
    adam = _adam_early(
        corpus, [replace(t, lr=cfg.rates[0], warmup=w, seed=s) for w in (0, 100) for s in ctx.seeds], cfg.adam_steps
    )
    rms0, rms100 = adam[:, :S], adam[:, S:]  # (points, seeds)
    ctx.report_progress(1.0, "adam")
    steps_at = list(cfg.adam_steps)
    for pt in (1, 10, 100, steps_at[-1]):
        if pt in steps_at:
            q = steps_at.index(pt)
            m[f"ch05.adam.rms.step{pt}"] = measured(rms0[q], "", f"Adam's normalised step RMS at update {pt}", 2)
    sizes0 = np.array([[lr_at(p - 1, replace(t, lr=cfg.rates[0], warmup=0)) for _ in ctx.seeds] for p in steps_at])
    sizes100 = np.array([[lr_at(p - 1, replace(t, lr=cfg.rates[0], warmup=100)) for _ in ctx.seeds] for p in steps_at])
    return Outcome(
        measurements=m,
        series={
            "rates": list(cfg.rates),
            "warmups": list(cfg.warmups),
            "step": results[0].curves["step"],
            "val_loss": _val(results).reshape(R, W, S, -1),
            "final": final,
            "early_step": [k * (q + 1) for q in range(early.shape[-1])],
            "early_loss": early,
            "adam_step": steps_at,
            "adam_rms_w0": rms0,
            "adam_rms_w100": rms100,
            "update_w0": rms0 * sizes0,
            "update_w100": rms100 * sizes100,
        },
    )


def _adam_early(corpus, runs: list[TrainConfig], at: Sequence[int]) -> np.ndarray:
    """Adam's normalised step RMS after each update count in ``at``, (len(at), runs), read from
    the optimiser's moments as the runs train (training stops at the last)."""
    r = runs[0]
    seen: dict[int, np.ndarray] = {}

    def read(step: Step) -> bool:
        if step.step in at:
            state = step.optimizer.state
            seen[step.step] = normalised_step_rms(
                state["exp_avg"], state["exp_avg_sq"], step.optimizer.t, r.betas, r.eps
            ).numpy()
        return step.step >= max(at)

    train_many(ModelConfig(), runs, corpus, workers=1, on_step=read)
    return np.array([seen[k] for k in at])


# --------------------------------------------------------------------------- schedules


@dataclass(frozen=True)
class Schedules:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))
    rates: tuple[float, ...] = (6e-3, BEST, ABOVE)  # each schedule's own ladder, around the sweep's best
    decay_fracs: tuple[float, ...] = (0.1, 0.2)
    branch_steps: int = 1000  # a WSD decay branched off the stable phase, ending here


SCHEDULE_NAMES = ("constant", "cosine", "wsd10", "wsd20")


@experiment(
    "ch05.schedules",
    config=Schedules(),
    seeds=SEEDS,
    quick={"train.steps": 40, "train.eval_every": 10, "branch_steps": 20},
)
def schedules(ctx: RunContext) -> Outcome:
    """Constant, warmup + cosine, WSD with 10% and 20% decay, each at its own tuned rate; a WSD branch."""
    cfg: Schedules = ctx.config
    corpus = load_corpus()
    t = cfg.train
    kinds = [replace(t, schedule="constant"), replace(t, schedule="cosine")]
    kinds += [replace(t, schedule="wsd", decay_frac=d) for d in cfg.decay_fracs]
    runs = [replace(k, lr=r, seed=s) for k in kinds for r in cfg.rates for s in ctx.seeds]
    results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, t, 0.0, 0.8))
    K, R, S = len(kinds), len(cfg.rates), len(ctx.seeds)
    final = _final(results).reshape(K, R, S)
    val = _val(results).reshape(K, R, S, -1)
    means = np.where(np.isfinite(final).all(axis=2), final.mean(axis=2), np.inf)
    best = means.argmin(axis=1)  # each schedule's own best rate
    names = SCHEDULE_NAMES[:K]
    m: dict[str, Measurement] = {
        f"ch05.sched.decay{round(100 * d)}": exact(d, "", "WSD: share of the steps spent decaying", 1)
        for d in cfg.decay_fracs
    }
    for k, name in enumerate(names):
        m[f"ch05.sched.{name}.lr"] = exact(cfg.rates[best[k]], "", f"{name}: its own best rate", 1)
        m[f"ch05.sched.{name}.final"] = measured(final[k, best[k]], "nats", f"{name} at its best rate: final loss")
        m[f"ch05.sched.{name}.edge"] = exact(
            int(best[k] in (0, R - 1)), "", f"{name}: 1 if its best rate is at the end of its ladder"
        )
        if name != "cosine":
            m[f"ch05.sched.{name}.minus_cosine"] = _paired(
                final[k, best[k]], final[1, best[1]], "nats", f"{name} minus cosine final loss, each tuned, paired"
            )
    # WSD's stable phase is a constant run: a decay can branch off it at any step
    r = cfg.rates[best[names.index("wsd20")]] if "wsd20" in names else cfg.rates[best[0]]
    rc = cfg.rates[best[1]]
    b = cfg.branch_steps
    trunk = [replace(t, schedule="constant", lr=r, seed=s) for s in ctx.seeds]
    branch = [replace(t, schedule="wsd", decay_frac=0.2, lr=r, steps=b, seed=s) for s in ctx.seeds]
    short = [replace(t, schedule="cosine", lr=rc, steps=b, seed=s) for s in ctx.seeds]
    more = train_many(ModelConfig(), trunk + branch + short, corpus, workers=1, on_eval=progress(ctx, t, 0.8, 0.2))
    tv, bv = _val(more[:S]), _val(more[S : 2 * S])
    steps = more[0].curves["step"]
    split = b - round(0.2 * b)  # the branch's decay starts here
    n_split = sum(s <= split for s in steps)  # evaluations before the branch point (step 0 at least)
    at_b = sum(s <= b for s in steps) - 1  # the trunk's last evaluation at or before step b
    m |= {
        "ch05.branch.steps": exact(b, "steps", "the branched run's length"),
        "ch05.branch.start": exact(split, "steps", "step at which the branch leaves the stable phase"),
        "ch05.branch.lr": exact(r, "", "rate of the trunk and the branch (WSD 20%'s best)", 1),
        "ch05.branch.shared_diff": exact(
            float(np.nanmax(np.abs(tv[:, :n_split] - bv[:, :n_split]))),
            "nats",
            "largest trunk-branch validation difference before the branch point",
            2,
        ),
        "ch05.branch.final": measured(_final(more[S : 2 * S]), "nats", f"WSD branch decayed to step {b}: final loss"),
        "ch05.branch.cosine_final": measured(
            _final(more[2 * S :]), "nats", f"cosine run of {b} steps from scratch at cosine's best rate"
        ),
        "ch05.branch.minus_cosine": _paired(
            _final(more[S : 2 * S]), _final(more[2 * S :]), "nats", "branch minus the short cosine run, paired"
        ),
        "ch05.branch.trunk_at_end": measured(
            tv[:, at_b], "nats", f"the constant trunk's loss at step {steps[at_b]}, before any decay"
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "rates": list(cfg.rates),
            "best": best.tolist(),
            "step": results[0].curves["step"],
            "val_loss": val,
            "final": final,
            "lr": [[lr_at(i, replace(kinds[k], lr=1.0)) for i in range(t.steps)] for k in range(K)],
            "branch_step": more[S].curves["step"],
            "trunk_val": tv,
            "branch_val": bv,
            "short_val": _val(more[2 * S :]),
        },
    )


# --------------------------------------------------------------------------- batch size


TOKEN_BUDGET = 512_000  # characters each batch size's run sees: 1,000 steps at batch 32
#: Each batch size's own ladder, 3x apart; the linear rule's rate is added to each.
BATCH_RATES = {
    8: (2e-3, 6e-3, 2e-2),
    16: (2e-3, 6e-3, 2e-2),
    32: (6e-3, 2e-2, 6e-2),
    64: (6e-3, 2e-2, 6e-2),
    128: (2e-2, 6e-2, 2e-1),
    256: (2e-2, 6e-2, 2e-1),
    512: (6e-2, 2e-1, 6e-1),
}


@dataclass(frozen=True)
class Batch:
    budget: int = TOKEN_BUDGET
    ladders: tuple[tuple[int, tuple[float, ...]], ...] = tuple(BATCH_RATES.items())
    target: float = 2.4  # the validation loss to reach, fixed before the runs
    evals: int = 40  # evaluations per run
    warmup_frac: float = 0.05  # the default run's 100 of 2,000 steps
    margin: float = MARGIN  # the linear rule holds while its loss is within this of the tuned best


@experiment(
    "ch05.batch",
    config=Batch(),
    seeds=SEEDS,
    quick={"budget": 16 * 8 * 40, "ladders": ((8, (2e-3, 6e-3)), (16, (6e-3, 2e-2))), "evals": 4},
)
def batch(ctx: RunContext) -> Outcome:
    """Batch sizes at a fixed token budget, each at its own tuned rate: steps to a target loss, the
    critical batch, and the linear scaling rule from the smallest batch's tuned rate."""
    cfg: Batch = ctx.config
    corpus = load_corpus()
    T = ModelConfig().context
    S = len(ctx.seeds)
    rows: list[dict[str, Any]] = []
    base_b, base_lr = 1, None  # the smallest batch and its tuned rate, once trained
    linear: float | None
    for k, (B, ladder) in enumerate(cfg.ladders):
        steps = cfg.budget // (B * T)
        every = max(1, steps // cfg.evals)
        t = TrainConfig(steps=steps, batch=B, warmup=round(cfg.warmup_frac * steps), eval_every=every)
        rates = list(ladder)
        linear = None if base_lr is None else base_lr * B / base_b
        if linear is not None:
            rates.append(linear)
        runs = [replace(t, lr=r, seed=s) for r in rates for s in ctx.seeds]
        done = k / len(cfg.ladders)
        res = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=progress(ctx, t, done, 1 / len(cfg.ladders)))
        final = list(_final(res).reshape(len(rates), S))
        val = list(_val(res).reshape(len(rates), S, -1))
        # a best rate at either end of the rates tried is not tuned: add the sweep's next rung beyond it
        for _ in range(2):
            means = [f.mean() if np.isfinite(f).all() else np.inf for f in final]
            best = rates[int(np.argmin(means))]
            if min(rates) < best < max(rates):
                break
            beyond = [r for r in RATES if (r < best if best == min(rates) else r > best)]
            if not beyond:
                break
            new = max(beyond) if best == min(rates) else min(beyond)
            more = train_many(ModelConfig(), [replace(t, lr=new, seed=s) for s in ctx.seeds], corpus, workers=1)
            rates.append(new)
            final.append(_final(more))
            val.append(_val(more))
        if linear is not None:  # the linear rule's rate goes last
            j = rates.index(linear)
            rates.append(rates.pop(j))
            final.append(final.pop(j))
            val.append(val.pop(j))
        means = [f.mean() if np.isfinite(f).all() else np.inf for f in final]
        i = int(np.argmin(means))
        if base_lr is None:
            base_b, base_lr = B, float(rates[i])
        st = res[0].curves["step"]
        rows.append(
            {
                "batch": B,
                "steps": steps,
                "rates": rates,
                "best": i,
                "final": np.array(final),
                "val": np.array(val),
                "step": st,
                "to_target": np.array([steps_to(st, v, cfg.target) for v in val[i]]),
                "linear": linear,
                "edge": rates[i] in (min(rates), max(rates)),
            }
        )
    m: dict[str, Measurement] = {
        "ch05.batch.budget": exact(cfg.budget, "characters", "training characters of every batch size's run"),
        "ch05.batch.target": exact(cfg.target, "nats", "the validation loss each batch size must reach", 2),
        "ch05.batch.min": exact(rows[0]["batch"], "windows", "smallest batch"),
        "ch05.batch.max": exact(rows[-1]["batch"], "windows", "largest batch"),
        "ch05.batch.warmup_frac": exact(cfg.warmup_frac, "", "warmup as a share of each run's steps", 2),
        "ch05.batch.edges": exact(sum(r["edge"] for r in rows), "batch sizes", "best rate at a ladder's end"),
        "ch05.linear.base_batch": exact(base_b, "windows", "the linear rule's starting batch"),
        "ch05.linear.base_lr": exact(base_lr or 0, "", "its tuned rate", 1),
        "ch05.linear.margin": exact(cfg.margin, "nats", "the rule holds within this of the tuned loss", 2),
    }
    reached = []
    breaks = None
    for r in rows:
        B, i = r["batch"], r["best"]
        m[f"ch05.batch.b{B}.size"] = exact(B, "windows", f"batch size of the batch-{B} runs")
        m[f"ch05.batch.b{B}.steps"] = exact(r["steps"], "steps", f"steps of the batch-{B} runs")
        m[f"ch05.batch.b{B}.lr"] = exact(r["rates"][i], "", f"batch {B}: its own best rate", 1)
        m[f"ch05.batch.b{B}.final"] = measured(r["final"][i], "nats", f"batch {B} at its best rate: final loss", 3)
        if np.isfinite(r["to_target"]).all():
            reached.append(r)
            m[f"ch05.batch.b{B}.to_target"] = measured(r["to_target"], "steps", f"batch {B}: steps to the target", 2)
            m[f"ch05.batch.b{B}.tokens_to_target"] = measured(
                r["to_target"] * B * T, "characters", f"batch {B}: characters seen at the target", 2
            )
        if r["linear"] is not None:
            f = r["final"][-1]
            gap = f - r["final"][i]
            m[f"ch05.linear.b{B}.lr"] = exact(r["linear"], "", f"batch {B}: the linear rule's rate", 2)
            if np.isfinite(f).all():
                m[f"ch05.linear.b{B}.minus_tuned"] = measured(gap, "nats", f"batch {B}: rule minus tuned loss", 2)
            if breaks is None and not (np.isfinite(gap).all() and gap.mean() <= cfg.margin):
                breaks = B
    m["ch05.batch.reached"] = exact(len(reached), "batch sizes", "batch sizes whose best run reaches the target")
    if breaks is not None:
        m["ch05.linear.breaks_at"] = exact(breaks, "windows", "first batch where the linear rule misses the margin")
    stop = 0.75  # doubling "stops halving the steps" once it saves less than a quarter of them
    m["ch05.bcrit.stop_ratio"] = exact(stop, "", "a doubling that keeps more than this share of the steps", 2)
    for a, b in zip(reached, reached[1:], strict=False):
        ratio = b["to_target"] / a["to_target"]
        m[f"ch05.batch.b{b['batch']}.step_ratio"] = measured(
            ratio, "", f"steps to target at batch {b['batch']} over batch {a['batch']} (0.5: perfect scaling)", 2
        )
        if "ch05.bcrit.doubling" not in m and ratio.mean() > stop:
            m["ch05.bcrit.doubling"] = exact(a["batch"], "windows", "last batch before a doubling stops paying")
    if len(reached) >= 3:
        sizes = [float(r["batch"]) for r in reached]
        need = [float(r["to_target"].mean()) for r in reached]
        slope, s_min = np.polyfit(1 / np.array(sizes), need, 1, w=1 / np.array(need))  # relative errors
        b_crit = slope / s_min
        m |= {
            "ch05.bcrit.windows": exact(b_crit, "windows", "critical batch B_crit from S = S_min (1 + B_crit / B)", 2),
            "ch05.bcrit.chars": exact(b_crit * T, "characters", "the critical batch in characters", 2),
            "ch05.bcrit.s_min": exact(s_min, "steps", "S_min: steps to target at an infinite batch (fit)", 2),
            "ch05.bcrit.unweighted": exact(
                critical_batch(sizes, need)[1], "windows", "the same fit by absolute rather than relative errors", 2
            ),
        }
    return Outcome(
        measurements=m,
        series={
            "batch": [r["batch"] for r in rows],
            "steps": [r["steps"] for r in rows],
            "best_lr": [r["rates"][r["best"]] for r in rows],
            "to_target": [r["to_target"].tolist() for r in rows],
            "final_best": [r["final"][r["best"]].tolist() for r in rows],
            "final_linear": [r["final"][-1].tolist() if r["linear"] is not None else [] for r in rows],
            "linear_lr": [r["linear"] or 0.0 for r in rows],
            "ladders": [r["rates"] for r in rows],
            "finals": [r["final"].tolist() for r in rows],
            "target": cfg.target,
            "curves_step": [r["step"] for r in rows],
            "curves_best": [np.nanmean(r["val"][r["best"]], axis=0).tolist() for r in rows],
        },
    )


# --------------------------------------------------------------------------- the gradient noise scale


@dataclass(frozen=True)
class Noise:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(lr=BEST, eval_every=100))
    at: tuple[int, ...] = (0, 10, 25, 50, 100, 200, 400, 700, 1000, 1500, 2000)
    examples: int = 1024  # training windows per estimate
    target: float = Batch.target


@experiment(
    "ch05.noise",
    config=Noise(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "at": (0, 10, 20), "examples": 16},
)
def noise(ctx: RunContext) -> Outcome:
    """The simple gradient noise scale tr(Σ)/|G|² from per-window gradients along runs at the best rate."""
    cfg: Noise = ctx.config
    corpus = load_corpus()
    mcfg = ModelConfig()
    runs = [replace(cfg.train, seed=s) for s in ctx.seeds]
    xv, yv = val_windows(corpus.val, mcfg.context)
    b_simple, trace, gsq, val = [], [], [], []

    def estimate(at: Step) -> bool:
        """The noise scale of every seed's weights at each point of cfg.at (training stops at the last)."""
        if at.step not in cfg.at:
            return False
        q = cfg.at.index(at.step)
        row_b, row_t, row_g, row_v = [], [], [], []
        for m_, s in enumerate(ctx.seeds):
            model = Decoder(mcfg)
            model.load_state_dict(at.layout.state_dict(at.theta[m_], mcfg))
            gen = torch.Generator().manual_seed(10_000 + 100 * s + q)  # fresh windows at every point
            starts = torch.randint(0, len(corpus.train) - mcfg.context, (cfg.examples,), generator=gen)
            win = corpus.train[starts[:, None] + torch.arange(mcfg.context + 1)]
            ns = noise_scale(per_example_grads(model, win[:, :-1], win[:, 1:]))
            row_b.append(ns.b_simple)
            row_t.append(ns.trace_sigma)
            row_g.append(ns.grad_sq)
            with torch.no_grad():
                row_v.append(float(model.loss(xv, yv)))
        b_simple.append(row_b)
        trace.append(row_t)
        gsq.append(row_g)
        val.append(row_v)
        ctx.report_progress((q + 1) / len(cfg.at), f"step {at.step}")
        return at.step >= max(cfg.at)

    train_many(mcfg, runs, corpus, workers=1, on_step=estimate)
    bs, vl = np.array(b_simple).T, np.array(val).T  # (seeds, points)
    at = list(cfg.at)
    m: dict[str, Measurement] = {
        "ch05.noise.examples": exact(cfg.examples, "windows", "training windows behind each estimate"),
        "ch05.noise.lr": exact(cfg.train.lr, "", "rate of the runs whose noise scale is measured", 1),
        "ch05.noise.start": measured(bs[:, 0], "windows", "B_simple at initialisation", 2),
        "ch05.noise.end": measured(bs[:, -1], "windows", f"B_simple after {at[-1]} steps", 2),
        "ch05.noise.growth": measured(bs[:, -1] / bs[:, 0], "", "B_simple at the end over at the start", 2),
        "ch05.noise.val_end": measured(vl[:, -1], "nats", "validation loss where the last estimate is taken", 3),
    }
    if 1000 in at:
        m["ch05.noise.step1000"] = measured(bs[:, at.index(1000)], "windows", "B_simple after 1,000 steps", 2)
    # B_simple where the loss reaches the batch experiment's target: the first point at or below it
    hit = [next((q for q in range(len(at)) if vl[s, q] <= cfg.target), -1) for s in range(len(ctx.seeds))]
    if min(hit) >= 0:
        m["ch05.noise.at_target"] = measured(
            [bs[s, h] for s, h in enumerate(hit)], "windows", "B_simple at the first point at or below the target", 2
        )
        m["ch05.noise.at_target_step"] = measured([at[h] for h in hit], "steps", "that point's step", 2)
    return Outcome(
        measurements=m,
        series={
            "step": at,
            "b_simple": bs,
            "trace_sigma": np.array(trace).T,
            "grad_sq": np.array(gsq).T,
            "val_loss": vl,
            "target": cfg.target,
        },
    )
