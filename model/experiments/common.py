"""Helpers every chapter's experiments share: spreads over seeds, measurements, progress."""

from __future__ import annotations

import math
from collections.abc import Callable

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


def progress(ctx: RunContext, cfg: TrainConfig, done: float = 0.0, share: float = 1.0) -> Callable[[int, dict], None]:
    """An on_eval hook for train_many that reports how far the first run is (of a
    part `share` of the experiment that starts at `done`)."""

    def report(m: int, rec: dict) -> None:
        if m == 0:
            ctx.report_progress(done + share * rec["step"] / max(1, cfg.steps), f"step {rec['step']}")

    return report
