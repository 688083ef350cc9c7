"""Chapter 13, scaling laws: a toy IsoFLOP sweep (``ch13.isoflop``).

Decoders of several widths and depths, each trained at four fixed compute budgets C ≈ 6ND: steps are
chosen so that 6 × N × (steps × batch × context) hits the budget. Every (budget, size) cell gets its
own learning rate: a ladder about 3x apart, three seeds a rung, widened by one rung at a time while
the best rung is at its edge. Per budget, a parabola in log N through the mean losses at each size's
best rate gives the minimum N_opt; the exponent of N_opt against C is fitted on the three smaller
budgets, with a bootstrap over seeds, and the largest budget is held out to test the extrapolation.

Every run is the default run (AdamW, clip 1.0, batch 32, cosine to zero) except for its size, its
steps, its rate and its warmup (5% of its steps: the default's 100 of 2,000).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.common import best_rung, exact, measured
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.isoflop import bootstrap, frontier, n_params, power_law, steps_for
from model.train import TrainConfig, train_many

SEEDS = (0, 1, 2)
#: (d_model, n_layers) of the sizes; heads stay at 2.
SIZES = ((4, 1), (6, 1), (8, 1), (12, 1), (16, 1), (24, 1), (32, 1), (32, 2))
#: the ladder every cell may use (about 3x apart) and the rungs it starts from
LADDER = (6e-4, 2e-3, 6e-3, 2e-2, 6e-2, 2e-1, 6e-1)
START = (6e-3, 2e-2, 6e-2)


@dataclass(frozen=True)
class IsoFlop:
    train: TrainConfig = field(default_factory=TrainConfig)
    sizes: tuple[tuple[int, int], ...] = SIZES
    budgets: tuple[float, ...] = (1e9, 2e9, 4e9, 8e9)  # FLOPs; the last is held out of the fit
    min_steps: int = 60  # a cell trains at least this many steps ...
    max_steps: int = 2100  # ... and at most this many (about the default run's 2,000)
    ladder: tuple[float, ...] = LADDER
    start: tuple[float, ...] = START
    warmup_frac: float = 0.05
    reps: int = 2000  # bootstrap replicates


def _cell(cfg: IsoFlop, mcfg: ModelConfig, steps: int, seeds, corpus) -> tuple[list[float], np.ndarray]:
    """Train one (budget, size) cell along its ladder; the rates tried and their finals (rates, seeds)."""
    t = replace(cfg.train, steps=steps, warmup=max(1, round(cfg.warmup_frac * steps)), eval_every=steps)

    def train(rates: list[float]) -> np.ndarray:
        runs = [replace(t, lr=r, seed=s) for r in rates for s in seeds]
        res = train_many(mcfg, runs, corpus, workers=1)
        return np.array([r.val_loss_final for r in res]).reshape(len(rates), len(seeds))

    rates = list(cfg.start)
    finals = train(rates)
    while True:  # widen the ladder while its best rung is at an edge that the full ladder goes beyond
        b = best_rung(finals)
        i = cfg.ladder.index(rates[b])
        if b == 0 and i > 0:
            rates.insert(0, cfg.ladder[i - 1])
            finals = np.vstack([train([cfg.ladder[i - 1]]), finals])
        elif b == len(rates) - 1 and i < len(cfg.ladder) - 1:
            rates.append(cfg.ladder[i + 1])
            finals = np.vstack([finals, train([cfg.ladder[i + 1]])])
        else:
            return rates, finals


@experiment(
    "ch13.isoflop",
    config=IsoFlop(),
    seeds=SEEDS,
    quick={
        "budgets": (3e7, 6e7, 1.2e8, 2.4e8),
        "sizes": ((4, 1), (8, 1), (16, 1)),
        "min_steps": 3,
        "max_steps": 40,
        "reps": 50,
    },
)
def isoflop(ctx: RunContext) -> Outcome:
    """Loss against N at four compute budgets, each size at its own tuned rate; the minima's power law."""
    cfg: IsoFlop = ctx.config
    corpus = load_corpus()
    tokens = cfg.train.batch * ModelConfig().context
    models = [ModelConfig(d_model=d, n_layers=L) for d, L in cfg.sizes]
    counts = [n_params(m) for m in models]
    S = len(ctx.seeds)
    cells: list[list[dict]] = []
    every = [[(j, steps_for(c, counts[j], tokens)) for j in range(len(models))] for c in cfg.budgets]
    plan = [[(j, s) for j, s in budget if cfg.min_steps <= s <= cfg.max_steps] for budget in every]
    total = sum(s for budget in plan for _, s in budget)
    done = 0
    for b, budget in enumerate(plan):
        out = []
        for j, steps in budget:
            ctx.report_progress(done / total, f"C={cfg.budgets[b]:.0e} N={counts[j]}")
            rates, finals = _cell(cfg, models[j], steps, ctx.seeds, corpus)
            k = best_rung(finals)
            out.append({"size": j, "n": counts[j], "steps": steps, "rates": rates, "finals": finals, "best": k})
            done += steps
        cells.append(out)

    fit = list(range(len(cfg.budgets) - 1))
    held = len(cfg.budgets) - 1
    sizes = [[c["n"] for c in row] for row in cells]
    per_seed = [np.array([c["finals"][c["best"]] for c in row]) for row in cells]  # (sizes, seeds) per budget
    curves = frontier(sizes, [x.mean(axis=1) for x in per_seed])
    n_opt = np.array([p.n_opt for p in curves])
    l_opt = np.array([p.loss_min for p in curves])
    boot = bootstrap(sizes, per_seed, cfg.budgets, fit, cfg.reps, seed=13)
    exp_fit, k_fit = power_law([cfg.budgets[i] for i in fit], n_opt[fit])
    exp_all, _ = power_law(cfg.budgets, n_opt)
    predicted = k_fit * cfg.budgets[held] ** exp_fit
    l_exp, l_k = power_law([cfg.budgets[i] for i in fit], l_opt[fit])  # loss minimum ≈ k C^e (e < 0)
    l_pred = l_k * cfg.budgets[held] ** l_exp
    # the bootstrap's predictions for the held-out budget, replicate by replicate
    bc = np.log10(np.array([cfg.budgets[i] for i in fit]))
    pred_n, pred_l = [], []
    for r in range(cfg.reps):
        n_r, l_r = boot["n_opt"][r, fit], boot["loss_min"][r, fit]
        if np.isfinite(n_r).all() and (n_r > 0).all():
            e, lk = np.polyfit(bc, np.log10(n_r), 1)
            pred_n.append(10 ** (lk + e * math.log10(cfg.budgets[held])))
            e2, lk2 = np.polyfit(bc, np.log10(l_r), 1)
            pred_l.append(10 ** (lk2 + e2 * math.log10(cfg.budgets[held])))
    pred_n_a, pred_l_a = np.array(pred_n), np.array(pred_l)
    exps = boot["exponent"][np.isfinite(boot["exponent"])]

    m: dict[str, Measurement] = {
        "ch13.iso.n_budgets": exact(len(cfg.budgets), "budgets", "compute budgets of the IsoFLOP sweep"),
        "ch13.iso.n_sizes": exact(len(cfg.sizes), "sizes", "model sizes available to the sweep"),
        "ch13.iso.runs": exact(
            sum(len(c["rates"]) * S for row in cells for c in row), "runs", "training runs in the sweep"
        ),
        "ch13.iso.n_min": exact(min(counts), "parameters", "the smallest model's parameters"),
        "ch13.iso.n_max": exact(max(counts), "parameters", "the largest model's parameters"),
        "ch13.iso.c_min": exact(cfg.budgets[0], "FLOPs", "the smallest budget", 2),
        "ch13.iso.c_fit_max": exact(cfg.budgets[held - 1], "FLOPs", "the largest budget of the fit", 2),
        "ch13.iso.c_held": exact(cfg.budgets[held], "FLOPs", "the held-out budget", 2),
        "ch13.iso.min_steps": exact(cfg.min_steps, "steps", "fewest steps a cell may train"),
        "ch13.iso.max_steps": exact(cfg.max_steps, "steps", "most steps a cell may train"),
        "ch13.iso.warmup_frac": exact(cfg.warmup_frac, "", "warmup as a share of each run's steps", 2),
        "ch13.iso.tokens_per_step": exact(tokens, "characters", "characters per step (batch × context)"),
        "ch13.iso.inside": exact(
            sum(p.inside for p in curves), "budgets", "budgets whose parabola's minimum lies inside its sizes"
        ),
        "ch13.iso.edge_rates": exact(
            sum(c["best"] in (0, len(c["rates"]) - 1) for row in cells for c in row),
            "cells",
            "cells whose best rate is still at the edge of the whole ladder",
        ),
        "ch13.iso.cells": exact(sum(len(row) for row in cells), "cells", "(budget, size) cells trained"),
    }
    if len(exps) > 1 and len(pred_n_a) > 1 and np.isfinite([exp_fit, predicted, l_pred]).all():
        m |= {
            "ch13.iso.exponent": Measurement(
                exp_fit,
                float(exps.std(ddof=1)) if len(exps) > 1 else None,
                len(ctx.seeds),
                "",
                "exponent a of N_opt ∝ C^a over the fitted budgets (± bootstrap sd over seeds)",
                2,
            ),
            "ch13.iso.exponent_lo": exact(
                float(np.percentile(exps, 2.5)), "", "exponent: bootstrap 2.5th percentile", 2
            ),
            "ch13.iso.exponent_hi": exact(
                float(np.percentile(exps, 97.5)), "", "exponent: bootstrap 97.5th percentile", 2
            ),
            "ch13.iso.exponent_all": exact(exp_all, "", "exponent fitted on all four budgets", 2),
            "ch13.iso.boot_reps": exact(cfg.reps, "replicates", "bootstrap replicates (seeds resampled per cell)"),
            "ch13.extrap.n_pred": exact(predicted, "parameters", "N_opt at the held-out budget, predicted", 2),
            "ch13.extrap.n_pred_lo": exact(
                float(np.percentile(pred_n_a, 2.5)), "parameters", "prediction: 2.5th pct", 2
            ),
            "ch13.extrap.n_pred_hi": exact(
                float(np.percentile(pred_n_a, 97.5)), "parameters", "prediction: 97.5th pct", 2
            ),
            "ch13.extrap.n_meas": exact(n_opt[held], "parameters", "N_opt at the held-out budget, measured", 2),
            "ch13.extrap.n_ratio": exact(n_opt[held] / predicted, "", "measured over predicted N_opt", 2),
            "ch13.extrap.n_inside": exact(
                int(np.percentile(pred_n_a, 2.5) <= n_opt[held] <= np.percentile(pred_n_a, 97.5)),
                "",
                "1 if the measured N_opt lies inside the prediction's bootstrap interval, else 0",
            ),
            "ch13.extrap.l_inside": exact(
                int(np.percentile(pred_l_a, 2.5) <= l_opt[held] <= np.percentile(pred_l_a, 97.5)),
                "",
                "1 if the measured loss minimum lies inside the prediction's bootstrap interval, else 0",
            ),
            "ch13.extrap.l_pred": exact(l_pred, "nats", "loss minimum at the held-out budget, predicted", 3),
            "ch13.extrap.l_pred_lo": exact(
                float(np.percentile(pred_l_a, 2.5)), "nats", "loss prediction: 2.5th pct", 3
            ),
            "ch13.extrap.l_pred_hi": exact(
                float(np.percentile(pred_l_a, 97.5)), "nats", "loss prediction: 97.5th pct", 3
            ),
            "ch13.extrap.l_meas": exact(l_opt[held], "nats", "loss minimum at the held-out budget, measured", 3),
            "ch13.extrap.l_err": exact(l_opt[held] - l_pred, "nats", "measured minus predicted loss minimum", 2),
            "ch13.extrap.l_exponent": exact(l_exp, "", "exponent of the loss minimum against C (fitted budgets)", 2),
        }
    for b, (c, p, row) in enumerate(zip(cfg.budgets, curves, cells, strict=True)):
        m[f"ch13.iso.c{b}.budget"] = exact(c, "FLOPs", f"budget {b + 1}", 2)
        m[f"ch13.iso.c{b}.sizes"] = exact(len(row), "sizes", f"budget {c:.0e}: sizes trained")
        ns = boot["n_opt"][:, b]
        ns = ns[np.isfinite(ns)]
        if not (math.isfinite(p.n_opt) and len(ns) > 1):
            continue
        m[f"ch13.iso.c{b}.n_opt"] = exact(p.n_opt, "parameters", f"budget {c:.0e}: N at the parabola's minimum", 2)
        m[f"ch13.iso.c{b}.loss_min"] = exact(p.loss_min, "nats", f"budget {c:.0e}: the parabola's minimum loss", 3)
        m[f"ch13.iso.c{b}.tokens_per_param"] = exact(
            c / (6 * p.n_opt**2), "characters per parameter", f"budget {c:.0e}: D/N at the minimum", 2
        )
        m[f"ch13.iso.c{b}.n_opt_sd"] = exact(float(np.std(ns, ddof=1)), "parameters", "N_opt: bootstrap sd", 2)
        m[f"ch13.iso.c{b}.epochs"] = exact(
            c / (6 * p.n_opt) / len(corpus.train), "passes", f"budget {c:.0e}: passes over the book at the minimum", 2
        )
    # the overtrained arm: the smallest size at the held-out budget, against that budget's best size
    arm = cells[held]
    small = min(range(len(arm)), key=lambda i: arm[i]["n"])
    best = min(range(len(arm)), key=lambda i: arm[i]["finals"][arm[i]["best"]].mean())
    fs, fb = arm[small]["finals"][arm[small]["best"]], arm[best]["finals"][arm[best]["best"]]
    C = cfg.budgets[held]
    m |= {
        "ch13.over.n": exact(arm[small]["n"], "parameters", "the overtrained arm's parameters"),
        "ch13.over.steps": exact(arm[small]["steps"], "steps", "its steps"),
        "ch13.over.lr": exact(arm[small]["rates"][arm[small]["best"]], "", "its own best rate", 1),
        "ch13.over.tokens_per_param": exact(
            C / (6 * arm[small]["n"] ** 2), "characters per parameter", "its characters per parameter", 2
        ),
        "ch13.over.final": measured(fs, "nats", "its final validation loss", 4),
        "ch13.over.best_n": exact(arm[best]["n"], "parameters", "the held-out budget's best trained size"),
        "ch13.over.best_final": measured(fb, "nats", "that size's final validation loss", 4),
        "ch13.over.gap": measured(fs - fb, "nats", "overtrained minus best size, paired by seed", 2),
        "ch13.over.smaller": exact(arm[best]["n"] / arm[small]["n"], "", "best size over the overtrained size", 2),
    }
    return Outcome(
        measurements=m,
        series={
            "budgets": list(cfg.budgets),
            "counts": counts,
            "sizes": [[c["n"] for c in row] for row in cells],
            "steps": [[c["steps"] for c in row] for row in cells],
            "best_lr": [[c["rates"][c["best"]] for c in row] for row in cells],
            "final": [[c["finals"][c["best"]].tolist() for c in row] for row in cells],
            "ladders": [[c["rates"] for c in row] for row in cells],
            "ladder_finals": [[c["finals"].mean(axis=1).tolist() for c in row] for row in cells],
            "parabolas": [[p.a, p.b, p.c, p.lo, p.hi] for p in curves],
            "n_opt": n_opt,
            "loss_min": l_opt,
            "fit": fit,
            "held": held,
            "exponent": exp_fit,
            "prefactor": k_fit,
            "boot_exponent": exps,
            "pred_n": [float(np.percentile(pred_n_a, q)) for q in (2.5, 50, 97.5)],
        },
    )
