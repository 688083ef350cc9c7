"""IsoFLOP profiles on the toy: compute C ≈ 6ND, a parabola in log N per budget, its minimum, and the
power law of the minima against C (Hoffmann et al. 2022, §3.2), with a bootstrap over seeds.

N counts every weight of a Decoder (embeddings included); D counts the characters a run trains on
(steps × batch × context). The 6ND rule (2 FLOPs per weight per token forward, 4 backward) counts the
embedding tables, which a lookup does not multiply, and leaves out attention's context-length term;
``ch13.flops`` measures both against 6N for every size, so the budgets are nominal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.decoder import Decoder, ModelConfig


def n_params(cfg: ModelConfig) -> int:
    """Every weight of a Decoder with this config (tied embeddings counted once)."""
    return sum(p.numel() for p in Decoder(cfg).parameters())


def steps_for(budget: float, n: int, tokens_per_step: int) -> int:
    """Training steps that spend `budget` FLOPs at 6 N D (rounded to the nearest step)."""
    return max(1, round(budget / (6.0 * n * tokens_per_step)))


@dataclass(frozen=True)
class Parabola:
    """loss ≈ a x² + b x + c in x = log10 N, and its minimum."""

    a: float
    b: float
    c: float
    lo: float  # the smallest and largest log10 N fitted
    hi: float

    @property
    def x_min(self) -> float:
        return -self.b / (2.0 * self.a) if self.a > 0 else math.nan

    @property
    def n_opt(self) -> float:
        return 10.0**self.x_min

    @property
    def loss_min(self) -> float:
        x = self.x_min
        return self.a * x * x + self.b * x + self.c

    @property
    def inside(self) -> bool:
        """The minimum lies within the sizes that were trained (not an extrapolated edge)."""
        return self.a > 0 and self.lo <= self.x_min <= self.hi


def fit_parabola(n: Sequence[float] | np.ndarray, loss: Sequence[float] | np.ndarray) -> Parabola:
    x = np.log10(np.asarray(n, dtype=float))
    a, b, c = np.polyfit(x, np.asarray(loss, dtype=float), 2)
    return Parabola(float(a), float(b), float(c), float(x.min()), float(x.max()))


def power_law(c: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Exponent and prefactor of y = k C^e, fitted by least squares in log-log."""
    e, logk = np.polyfit(np.log10(np.asarray(c, dtype=float)), np.log10(np.asarray(y, dtype=float)), 1)
    return float(e), float(10.0**logk)


def frontier(sizes: Sequence[Sequence[float]], losses: Sequence[np.ndarray]) -> list[Parabola]:
    """One parabola per budget: sizes[b] the N of its runs, losses[b] their mean losses (len(sizes[b]),)."""
    return [fit_parabola(n, loss) for n, loss in zip(sizes, losses, strict=True)]


def bootstrap(
    sizes: Sequence[Sequence[float]],
    losses: Sequence[np.ndarray],
    budgets: Sequence[float],
    fit: Sequence[int],
    reps: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Resample the seeds of every (budget, size) cell with replacement and refit everything.

    losses[b]: (sizes, seeds) final losses at each size's chosen rate. Returns per replicate the
    exponent of N_opt against C over the budgets `fit`, and every budget's N_opt and loss minimum."""
    rng = np.random.default_rng(seed)
    exps, nopt, lmin = [], [], []
    for _ in range(reps):
        means = []
        for loss in losses:
            pick = rng.integers(0, loss.shape[1], size=loss.shape)
            means.append(np.take_along_axis(loss, pick, axis=1).mean(axis=1))
        curves = frontier(sizes, means)
        n = np.array([p.n_opt for p in curves])
        nopt.append(n)
        lmin.append([p.loss_min for p in curves])
        ok = np.isfinite(n[list(fit)])
        exps.append(power_law([budgets[i] for i in fit], n[list(fit)])[0] if ok.all() else math.nan)
    return {"exponent": np.array(exps), "n_opt": np.array(nopt), "loss_min": np.array(lmin)}
