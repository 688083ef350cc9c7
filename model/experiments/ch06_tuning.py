"""Chapter 6's learning-rate ladders: every arm is compared at its own best rate.

A ladder starts from a few rungs of the project's grid (2 and 6 times powers of ten, about 3x
apart, ch05's) and, while an arm's best rung sits at an edge, trains the next rung beyond it,
so a best rate is never at the edge of what was tried (or the ladder says it is).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from model.decoder import ModelConfig
from model.experiments.common import best_rung
from model.train import TrainConfig, TrainResult, train_many

GRID = (2e-4, 6e-4, 2e-3, 6e-3, 2e-2, 6e-2, 2e-1, 6e-1, 2.0)

Trainer = Callable[[ModelConfig, list[TrainConfig]], list[TrainResult]]


def blew_up(r: TrainResult) -> bool:
    """The run went non-finite, or its validation loss rose above its step-0 value after step 0."""
    if r.diverged_at is not None:
        return True
    v = r.curves["val_loss"]
    return any(not (math.isfinite(x) and x <= v[0]) for x in v[1:])


@dataclass
class Ladder:
    """One arm's runs at every rung it tried, three seeds a rung."""

    results: dict[float, list[TrainResult]] = field(default_factory=dict)

    @property
    def rates(self) -> list[float]:
        return sorted(self.results)

    @property
    def final(self) -> np.ndarray:
        """(rungs, seeds) final validation loss, NaN where a run went non-finite."""
        return np.array([[r.val_loss_final for r in self.results[k]] for k in self.rates])

    @property
    def blowups(self) -> np.ndarray:
        """(rungs,) seeds that blew up at each rung (see blew_up)."""
        return np.array([sum(blew_up(r) for r in self.results[k]) for k in self.rates])

    @property
    def best(self) -> int:
        return best_rung(self.final)

    @property
    def best_rate(self) -> float:
        return self.rates[self.best]

    @property
    def best_final(self) -> np.ndarray:
        return self.final[self.best]

    @property
    def at_edge(self) -> bool:
        """The best rung is the lowest or the highest tried."""
        return self.best in (0, len(self.rates) - 1)

    def at(self, rate: float) -> np.ndarray:
        """Final losses (seeds,) at one rung it tried."""
        return np.array([r.val_loss_final for r in self.results[rate]])


def _beyond(ladder: Ladder) -> float | None:
    """The grid rung past the edge the best sits at, if the grid has one and it is untried."""
    rates, b = ladder.rates, ladder.best
    i = GRID.index(rates[b])
    if b == 0 and i > 0:
        return GRID[i - 1]
    if b == len(rates) - 1 and i + 1 < len(GRID):
        return GRID[i + 1]
    return None


def tune(
    cfg: ModelConfig,
    arms: Sequence[TrainConfig],
    rates: Sequence[float],
    seeds: Sequence[int],
    corpus,
    extend: int = 3,
    trainer: Trainer | None = None,
) -> list[Ladder]:
    """One ladder per arm (the arms share the model config): every arm at every start rung and
    seed in one stack, then up to `extend` rounds of one more rung for each arm whose best is
    at an edge."""
    for r in rates:
        if r not in GRID:
            raise ValueError(f"rate {r} is not on the ladder grid {GRID}")
    run = trainer or (lambda c, runs: train_many(c, runs, corpus, workers=1))
    ladders = [Ladder() for _ in arms]
    todo = [(a, r) for a in range(len(arms)) for r in rates]
    for _ in range(extend + 1):
        if not todo:
            break
        runs = [replace(arms[a], lr=r, seed=s) for a, r in todo for s in seeds]
        out = run(cfg, runs)
        for k, (a, r) in enumerate(todo):
            ladders[a].results[r] = out[k * len(seeds) : (k + 1) * len(seeds)]
        todo = [(a, nxt) for a, lad in enumerate(ladders) if (nxt := _beyond(lad)) is not None]
    return ladders
