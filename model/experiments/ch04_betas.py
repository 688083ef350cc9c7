"""Chapter 4, the knob ch04.sweep left alone: momentum's beta and Adam's beta2.

- ``ch04.betas``: momentum, Adam (+ L2) and AdamW, each at its best (rate, decay) of ch04.sweep,
  over a few betas, each beta at the sweep's best rate and the rung either side of it (beta moves
  the effective step, so the rate moves with it); SGD (no beta) at its best cell too, so that the
  ranking of the four can be read again with the betas tuned, paired by seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch04_optimisers import NAMES, SEEDS, Sweep, best_cell
from model.experiments.common import best_rung, exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, train_many

TUNED = ("momentum", "adam", "adamw")  # the optimisers with a beta to tune
RANKING = ("adamw", "adam", "momentum", "sgd")  # ch04.sweep's order by final loss, lowest first

#: Each optimiser's best (rate, weight decay) in ch04.sweep: the values of the result keys
#: ch04.sweep.<name>.best_lr and ch04.sweep.<name>.best_wd (tests/model/test_ch04_betas.py
#: checks them against results/results.md). The rates must be rungs of Sweep().lrs[name].
SWEEP_BEST: dict[str, tuple[float, float]] = {
    "sgd": (3.0, 0.0),
    "momentum": (1.0, 0.0),
    "adam": (0.03, 1e-4),
    "adamw": (0.03, 0.03),
}


def neighbours(ladder: tuple[float, ...], rate: float) -> tuple[float, ...]:
    """``rate`` and the rung either side of it on ``ladder`` (one side only at an end)."""
    if rate not in ladder:
        raise ValueError(f"rate {rate:g} is not a rung of the ladder {ladder}")
    i = ladder.index(rate)
    return ladder[max(0, i - 1) : i + 2]


@dataclass(frozen=True)
class Betas:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the sweep's runs otherwise
    best: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(SWEEP_BEST))
    ladders: dict[str, tuple[float, ...]] = field(default_factory=lambda: dict(Sweep().lrs))  # ch04.sweep's rates
    momentum_betas: tuple[float, ...] = (0.8, 0.9, 0.95, 0.98)  # momentum's beta (beta1 of the runs)
    beta2s: tuple[float, ...] = (0.95, 0.99, 0.999)  # Adam's and AdamW's beta2, beta1 at train.betas[0]

    def grid(self, name: str) -> list[tuple[float, float]]:
        """The (beta1, beta2) pairs an optimiser is run at."""
        b1, b2 = self.train.betas
        if name == "momentum":
            return [(b, b2) for b in self.momentum_betas]
        return [(b1, b) for b in self.beta2s]

    def swept(self, name: str) -> int:
        """Which of the pair the grid varies: 0 for momentum (beta1), 1 for Adam's (beta2)."""
        return 0 if name == "momentum" else 1


@experiment(
    "ch04.betas",
    config=Betas(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "momentum_betas": (0.8, 0.9), "beta2s": (0.99, 0.999)},
)
def betas(ctx: RunContext) -> Outcome:
    """Momentum's beta and Adam's and AdamW's beta2, each optimiser at its best decay of ch04.sweep
    and its best rate there and one rung either side; SGD at its best cell. The same seeds in
    every cell; the four compared again at the tuned betas, paired by seed."""
    c: Betas = ctx.config
    corpus = load_corpus()
    S = len(ctx.seeds)
    t = c.train
    m: dict[str, Measurement] = {
        "ch04.betas.steps": exact(t.steps, "steps", "training steps of every betas run"),
        "ch04.betas.beta1": exact(t.betas[0], "", "Adam's beta1 in the beta2 runs (and the default beta)", 2),
        "ch04.betas.default_beta2": exact(t.betas[1], "", "Adam's default beta2 (the sweep's)", 3),
        "ch04.betas.momentum.beta_min": exact(min(c.momentum_betas), "", "smallest momentum beta tried", 2),
        "ch04.betas.momentum.beta_max": exact(max(c.momentum_betas), "", "largest momentum beta tried", 2),
        "ch04.betas.beta2_min": exact(min(c.beta2s), "", "smallest beta2 tried", 3),
        "ch04.betas.beta2_max": exact(max(c.beta2s), "", "largest beta2 tried", 3),
        "ch04.betas.runs": exact(
            S * (1 + sum(len(c.grid(n)) * len(neighbours(c.ladders[n], c.best[n][0])) for n in TUNED)),
            "runs",
            "training runs of the betas experiment",
        ),
    }
    series: dict = {"seeds": list(ctx.seeds)}
    tuned: dict[str, np.ndarray] = {}
    jobs = [*TUNED, "sgd"]
    for j, name in enumerate(jobs):
        N = NAMES[name]
        lr_best, wd = c.best[name]
        lrs = neighbours(c.ladders[name], lr_best) if name in TUNED else (lr_best,)  # SGD: its best cell only
        grid = c.grid(name) if name in TUNED else [t.betas]
        runs = [
            replace(t, optimizer=name, lr=lr, weight_decay=wd, betas=b, seed=s)
            for b in grid
            for lr in lrs
            for s in ctx.seeds
        ]
        on_eval = progress(ctx, t, j / len(jobs), 1 / len(jobs))
        results = train_many(ModelConfig(), runs, corpus, workers=1, on_eval=on_eval)
        finals = np.array([r.val_loss_final for r in results]).reshape(len(grid), len(lrs), S)
        k, b = best_cell(finals)
        tuned[name] = finals[k, b]
        diverged = sum(r.diverged_at is not None for r in results)
        key = f"ch04.betas.{name}"
        m[f"{key}.val_loss"] = measured(finals[k, b], "nats", f"{N}: final validation loss at its best (rate, beta)")
        m[f"{key}.best_lr"] = exact(lrs[b], "", f"{N}: learning rate of its best (rate, beta); SGD's is the sweep's", 1)
        m[f"{key}.wd"] = exact(wd, "", f"{N}: weight decay of every run (ch04.sweep's best)", 1)
        m[f"{key}.diverged"] = exact(diverged, "runs", f"{N}: runs of its betas grid that diverged")
        series |= {f"{name}_lrs": list(lrs), f"{name}_finals": finals}
        if name not in TUNED:
            continue
        which = c.swept(name)
        values = [pair[which] for pair in grid]
        default = values.index(t.betas[which])
        d = best_rung(finals[default])
        series[f"{name}_betas"] = values
        m |= {
            f"{key}.best_beta": exact(
                values[k], "", f"{N}: beta{'' if which == 0 else '2'} of its best (rate, beta)", 3
            ),
            f"{key}.best_at_edge": exact(
                float(b in (0, len(lrs) - 1)), "", f"{N}: 1 if its best rate is an end of the three rungs"
            ),
            f"{key}.beta_at_edge": exact(
                float(k in (0, len(values) - 1)), "", f"{N}: 1 if its best beta is an end of the betas tried"
            ),
            f"{key}.default.best_lr": exact(lrs[d], "", f"{N}: best of the three rates at the default beta", 1),
            f"{key}.default.val_loss": measured(
                finals[default, d], "nats", f"{N}: final validation loss at the default beta, its best rate"
            ),
            f"{key}.gain": measured(
                finals[default, d] - finals[k, b],
                "nats",
                f"{N}: default beta minus best beta, each at its best rate, paired by seed",
                2,
            ),
        }
        for i, v in enumerate(values):
            bi = best_rung(finals[i])
            m[f"{key}.b{i}.beta"] = exact(v, "", f"{N}: beta of grid row {i}", 3)
            m[f"{key}.b{i}.val_loss"] = measured(
                finals[i, bi], "nats", f"{N}, beta {v:g}: final validation loss at its best of the three rates"
            )
    means = {n: float(np.mean(tuned[n])) for n in RANKING}
    holds = all(means[a] < means[b] for a, b in zip(RANKING, RANKING[1:], strict=False))
    m["ch04.betas.ranking_holds"] = exact(
        float(holds), "", "1 if AdamW < Adam + L2 < momentum < SGD by mean final loss with the betas tuned"
    )
    for a, b_ in [("adamw", "momentum"), ("adamw", "adam"), ("adam", "momentum"), ("momentum", "sgd")]:
        m[f"ch04.betas.{a}_minus_{b_}"] = measured(
            tuned[a] - tuned[b_],
            "nats",
            f"{NAMES[a]} minus {NAMES[b_]}, each at its best (rate, beta), paired by seed",
            2,
        )
    return Outcome(measurements=m, series=series)
