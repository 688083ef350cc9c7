"""Helpers every chapter's experiments share: spreads over seeds, measurements, progress, and the
sweep helpers (the best rung of a ladder, the bands of rates near it, when a curve crosses a level)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from model.experiments.registry import Measurement, RunContext
from model.train import TrainConfig


def mean_sd(values) -> tuple[float, float | None, int]:
    """Mean, sample standard deviation (None for one value) and count."""
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), (float(a.std(ddof=1)) if len(a) > 1 else None), len(a)


def measured(values, unit: str, what: str, digits: int = 4) -> Measurement:
    """A measurement over seeds: mean ± sd of ``values``."""
    mean, sd, n = mean_sd(values)
    return Measurement(mean, sd, n, unit, what, digits)


def spread(values, unit: str, what: str) -> Measurement:
    """mean ± sd over seeds, with as many digits as put the sd's first significant one on show."""
    a = np.asarray(values, dtype=np.float64)
    sd = float(a.std(ddof=1))
    places = max(0, -math.floor(math.log10(sd))) if sd > 0 else 3
    lead = math.floor(math.log10(abs(float(a.mean())))) + 1 if a.mean() != 0 else 1
    return measured(a, unit, what, max(2, lead + places))


def exact(value: float, unit: str, what: str, digits: int | None = None) -> Measurement:
    """A number that does not vary across seeds (a count, a setting, a closed form).

    A whole number shows all its digits by default, anything else four significant ones.
    """
    if digits is None:
        digits = len(str(abs(int(value)))) if float(value).is_integer() else 4
    return Measurement(float(value), None, None, unit, what, digits)


def first_step_below(steps, losses, level: float) -> float:
    """The first evaluated step whose loss is below ``level`` (NaN if none)."""
    for step, loss in zip(steps, losses, strict=True):
        if loss < level:
            return float(step)
    return math.nan


def best_rung(finals: np.ndarray) -> int:
    """The ladder rung (axis 0) with the lowest mean over seeds (axis 1); NaN (diverged) loses."""
    means = np.where(np.isnan(finals).any(axis=1), np.inf, finals.mean(axis=1))
    return int(np.argmin(means))


def contiguous_band(lrs: Sequence[float], finals: np.ndarray, within: float) -> tuple[float, float]:
    """The contiguous run of rungs around the best whose mean final loss (no seed diverged) is
    within ``within`` nats of the best's: (lowest, highest) learning rate of it."""
    means = np.where(np.isnan(finals).any(axis=1), np.inf, finals.mean(axis=1))
    b = best_rung(finals)
    ok = means <= means[b] + within
    lo = hi = b
    while lo > 0 and ok[lo - 1]:
        lo -= 1
    while hi < len(lrs) - 1 and ok[hi + 1]:
        hi += 1
    return float(lrs[lo]), float(lrs[hi])


def band(rates: Sequence[float], means: Sequence[float] | np.ndarray, margin: float) -> tuple[float, float, int]:
    """The stable band: the lowest and highest rates whose mean loss is within ``margin`` of the
    lowest mean (NaN means are never in it), and how many rates that is."""
    m = np.asarray(means, dtype=float)
    best = np.nanmin(m)
    inside = [r for r, v in zip(rates, m, strict=True) if math.isfinite(v) and v <= best + margin]
    return min(inside), max(inside), len(inside)


def steps_to(steps: Sequence[float], losses: Sequence[float], target: float) -> float:
    """The step at which the loss first reaches ``target``, linearly interpolated between the
    evaluations around the crossing (NaN if it never does)."""
    for k, (s, v) in enumerate(zip(steps, losses, strict=True)):
        if v <= target:
            if k == 0:
                return float(s)
            s0, v0 = steps[k - 1], losses[k - 1]
            return float(s0 + (s - s0) * (v0 - target) / (v0 - v))
    return math.nan


def progress(ctx: RunContext, cfg: TrainConfig, done: float = 0.0, share: float = 1.0) -> Callable[[int, dict], None]:
    """An on_eval hook for train_many that reports how far the first run is (of a
    part `share` of the experiment that starts at `done`)."""

    def report(m: int, rec: dict) -> None:
        if m == 0:
            ctx.report_progress(done + share * rec["step"] / max(1, cfg.steps), f"step {rec['step']}")

    return report
