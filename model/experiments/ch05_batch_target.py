"""Chapter 5, batch size measured to a target: what deck 05's batch-size slides show.

- ``ch05.batch_target``: batches 8 to 256 at a constant rate after a warmup fixed in characters,
  each trained until its validation loss first reaches ch05.batch's target (with a cap), each at
  its own best rate (the rate that reaches the target in the fewest characters, from a ladder 3x
  apart, extended by a rung when the best sits at an end); seeds reached, steps and characters to
  the target, their ratios to the smallest batch, and the critical batch with a bootstrap interval.

A constant rate makes "trained until it reaches the target" the same as a longer run read at its
first crossing: nothing before the crossing depends on where the run ends. Every other setting is
the default run's (AdamW, clip 1.0, weight decay 0.01).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from model.data import Corpus, load_corpus
from model.decoder import ModelConfig
from model.experiments.ch05_lr import RATES, SEEDS, Batch
from model.experiments.common import exact, measured, spread, steps_to
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import Step, TrainConfig, TrainResult, train_many

#: Each batch size's ladder, 3x apart (ch05.sweep's rungs); a best rate at an end adds the next rung.
LADDERS = {
    8: (6e-3, 2e-2, 6e-2),
    16: (6e-3, 2e-2, 6e-2),
    32: (6e-3, 2e-2, 6e-2),
    64: (2e-2, 6e-2, 2e-1),
    128: (2e-2, 6e-2, 2e-1),
    256: (2e-2, 6e-2, 2e-1),
}


# --------------------------------------------------------------------------- the fit and its interval


def fit_bcrit(batches: Sequence[float], steps: Sequence[float], relative: bool = True) -> tuple[float, float]:
    """S_min and B_crit from S(B) = S_min (1 + B_crit / B) (McCandlish et al.), least squares
    in 1/B: S is a line in 1/B with intercept S_min and slope S_min B_crit. ``relative``
    weights each point by 1/S (relative errors; seed spreads grow with S), else plain
    absolute errors. A fit whose S_min is not positive has no finite B_crit (inf)."""
    b = np.asarray(batches, dtype=float)
    s = np.asarray(steps, dtype=float)
    if len(b) < 2 or len(b) != len(s):
        raise ValueError(f"the fit needs two or more (batch, steps) pairs of equal length, got {len(b)} and {len(s)}")
    slope, s_min = np.polyfit(1.0 / b, s, 1, w=1.0 / s if relative else None)
    return float(s_min), (float(slope / s_min) if s_min > 0 else math.inf)


def bootstrap_bcrit(
    batches: Sequence[float], per_seed: Sequence[Sequence[float]], n: int, seed: int = 0, relative: bool = True
) -> np.ndarray:
    """B_crit refitted ``n`` times, each time on the means of the seeds resampled with
    replacement within every batch size: the spread the seeds leave in the fit."""
    rng = np.random.default_rng(seed)
    values = [np.asarray(v, dtype=float) for v in per_seed]
    out = np.empty(n)
    for k in range(n):
        means = [v[rng.integers(0, len(v), len(v))].mean() for v in values]
        out[k] = fit_bcrit(batches, means, relative)[1]
    return out


def interval(values: np.ndarray, low: float = 2.5, high: float = 97.5) -> tuple[float, float]:
    """The percentile interval of bootstrap values (no interpolation, so an inf stays inf)."""
    v = np.sort(np.asarray(values, dtype=float))
    return float(np.percentile(v, low, method="lower")), float(np.percentile(v, high, method="higher"))


# --------------------------------------------------------------------------- training to the target


@dataclass(frozen=True)
class BatchTarget:
    ladders: tuple[tuple[int, tuple[float, ...]], ...] = tuple(LADDERS.items())
    target: float = Batch.target  # ch05.batch's target, read by the same steps_to
    warmup_chars: int = 16_384  # linear warmup, the same characters for every batch size
    cap_chars: int = 524_288  # a run that has not reached the target by here has not reached it
    eval_chars: int = 8_192  # evaluate every this many characters (at least every step)
    chunk_chars: int = 32_768  # train this far, check who has reached the target, go on
    boot: int = 2000  # bootstrap resamples of the seeds
    pct: tuple[float, float] = (2.5, 97.5)  # the bootstrap interval's percentile points


def _crossings(results: Sequence[TrainResult], target: float) -> np.ndarray:
    """Each run's step at its first evaluation at or below the target, interpolated (NaN: not yet)."""
    return np.array([steps_to(r.curves["step"], r.curves["val_loss"], target) for r in results])


def _done(cross: np.ndarray, group: np.ndarray, step: int, best_mean: float) -> bool:
    """Whether training can stop: every rate either has all its seeds at the target, or cannot
    beat the best finished rate any more (its mean, counting a seed not there yet at ``step``,
    is already above the best's)."""
    for g in np.unique(group):
        c = cross[group == g]
        if np.isfinite(c).all():
            continue
        if not math.isfinite(best_mean) or np.where(np.isfinite(c), c, step).mean() <= best_mean:
            return False
    return True


def train_to_target(
    mcfg: ModelConfig, runs: list[TrainConfig], corpus: Corpus, target: float, chunk: int, best_mean: float = math.inf
) -> list[TrainResult]:
    """Train the runs (one batch size) in chunks of ``chunk`` steps until each rate has all its
    seeds at the target or is beaten by a finished rate (or ``best_mean``), or the cap (their steps)."""
    group = np.array([r.lr for r in runs])
    steps = runs[0].steps

    def check(at: Step) -> bool:
        if at.step == 0 or (at.step % chunk and at.step < steps):  # checked every chunk steps, and at the cap
            return False
        cross = np.array([steps_to(c["step"], c["val_loss"], target) for c in at.curves])
        finished = [cross[group == g].mean() for g in np.unique(group) if np.isfinite(cross[group == g]).all()]
        return at.step >= steps or _done(cross, group, at.step, min([best_mean, *finished]))

    return train_many(mcfg, runs, corpus, workers=1, on_step=check)


def _rank(cross: np.ndarray) -> tuple[int, float]:
    """Sort key of one rate's seeds: most seeds at the target first, then fewest steps."""
    ok = cross[np.isfinite(cross)]
    return -len(ok), (float(ok.mean()) if len(ok) else math.inf)


@experiment(
    "ch05.batch_target",
    config=BatchTarget(),
    seeds=SEEDS,
    quick={
        "ladders": ((8, (2e-2, 6e-2)), (16, (2e-2, 6e-2)), (32, (2e-2, 6e-2))),
        "target": 3.0,
        "cap_chars": 8_192,
        "eval_chars": 512,
        "chunk_chars": 4_096,
        "warmup_chars": 1_024,
        "boot": 50,
    },
)
def batch_target(ctx: RunContext) -> Outcome:
    """Batch sizes trained at a constant rate until they reach the target, each at its own best
    rate: seeds reached, steps and characters to the target, and the critical batch with its interval."""
    cfg: BatchTarget = ctx.config
    corpus = load_corpus()
    mcfg = ModelConfig()
    T, S = mcfg.context, len(ctx.seeds)
    rows: list[dict[str, Any]] = []
    for k, (B, ladder) in enumerate(cfg.ladders):
        per_step = B * T
        t = TrainConfig(
            steps=cfg.cap_chars // per_step,
            batch=B,
            schedule="constant",
            warmup=max(1, cfg.warmup_chars // per_step),
            eval_every=max(1, cfg.eval_chars // per_step),
        )
        chunk = max(1, cfg.chunk_chars // per_step)
        rates = list(ladder)
        res = train_to_target(
            mcfg, [replace(t, lr=r, seed=s) for r in rates for s in ctx.seeds], corpus, cfg.target, chunk
        )
        cross = list(_crossings(res, cfg.target).reshape(len(rates), S))
        curves = [[r.curves for r in res[i * S : (i + 1) * S]] for i in range(len(rates))]
        # a best rate at an end of the ladder is not tuned: add ch05.sweep's next rung beyond it (once)
        i = min(range(len(rates)), key=lambda j: _rank(cross[j]))
        if rates[i] in (min(rates), max(rates)):
            beyond = [r for r in RATES if (r < rates[i] if rates[i] == min(rates) else r > rates[i])]
            if beyond:
                new = max(beyond) if rates[i] == min(rates) else min(beyond)
                known = float(cross[i].mean())  # NaN unless every seed of the best rate got there: no bound
                more = train_to_target(
                    mcfg,
                    [replace(t, lr=new, seed=s) for s in ctx.seeds],
                    corpus,
                    cfg.target,
                    chunk,
                    known if math.isfinite(known) else math.inf,
                )
                rates.append(new)
                cross.append(_crossings(more, cfg.target))
                curves.append([r.curves for r in more])
                i = min(range(len(rates)), key=lambda j: _rank(cross[j]))
        c = cross[i]
        rows.append(
            {
                "batch": B,
                "rates": rates,
                "best": i,
                "cross": c,
                "reached": int(np.isfinite(c).sum()),
                "cap": t.steps,
                "warmup": t.warmup,
                "eval_every": t.eval_every,
                "edge": rates[i] in (min(rates), max(rates)),
                "curves": curves[i],
                "rank": [_rank(x)[1] for x in cross],
            }
        )
        ctx.report_progress((k + 1) / len(cfg.ladders), f"batch {B}")
    base = rows[0]
    m: dict[str, Measurement] = {
        "ch05.bt.target": exact(cfg.target, "nats", "the validation loss each batch size trains to (ch05.batch's)", 2),
        "ch05.bt.warmup_chars": exact(cfg.warmup_chars, "characters", "linear warmup, the same for every batch"),
        "ch05.bt.cap_chars": exact(cfg.cap_chars, "characters", "a run stops here if it has not reached the target"),
        "ch05.bt.eval_chars": exact(cfg.eval_chars, "characters", "evaluation interval (at least every step)"),
        "ch05.bt.min": exact(base["batch"], "windows", "smallest batch"),
        "ch05.bt.max": exact(rows[-1]["batch"], "windows", "largest batch"),
        "ch05.bt.seeds": exact(S, "seeds", "seeds per rate and batch"),
        "ch05.bt.edges": exact(sum(r["edge"] for r in rows), "batch sizes", "best rate at the end of its ladder"),
        "ch05.bt.all_reached": exact(
            sum(r["reached"] == S for r in rows),
            "batch sizes",
            "batch sizes whose every seed reached the target at its best rate",
        ),
        "ch05.bt.boot": exact(cfg.boot, "resamples", "bootstrap resamples of the seeds"),
        "ch05.bt.pct_low": exact(cfg.pct[0], "%", "the bootstrap interval's lower percentile point", 2),
        "ch05.bt.pct_high": exact(cfg.pct[1], "%", "the bootstrap interval's upper percentile point", 3),
    }
    for r in rows:
        B, c = r["batch"], r["cross"]
        p = f"ch05.bt.b{B}"
        m[f"{p}.size"] = exact(B, "windows", f"batch size of the batch-{B} runs")
        m[f"{p}.lr"] = exact(r["rates"][r["best"]], "", f"batch {B}: the rate that reaches the target soonest", 1)
        m[f"{p}.reached"] = exact(r["reached"], "seeds", f"batch {B}: seeds at the target within the cap")
        m[f"{p}.cap"] = exact(r["cap"], "steps", f"batch {B}: the step cap")
        m[f"{p}.warmup"] = exact(r["warmup"], "steps", f"batch {B}: warmup steps")
        if r["reached"] == S:
            m[f"{p}.steps"] = measured(c, "steps", f"batch {B}: steps to the target", 2)
            m[f"{p}.chars"] = measured(c * B * T, "characters", f"batch {B}: characters to the target", 2)
            if base["reached"] == S and r is not base:
                ratio = (c * B) / (base["cross"] * base["batch"])  # paired by seed
                m[f"{p}.chars_ratio"] = spread(
                    ratio, "", f"batch {B}: characters to the target over batch {base['batch']}'s (same seed)"
                )
    fitted = [r for r in rows if r["reached"] == S]
    m["ch05.bt.fitted"] = exact(len(fitted), "batch sizes", "batch sizes in the critical-batch fit")
    if len(fitted) >= 3:
        sizes = [float(r["batch"]) for r in fitted]
        need = [r["cross"] for r in fitted]
        for name, rel, what in (("bcrit", True, "relative errors"), ("bcrit_abs", False, "absolute errors")):
            s_min, b_crit = fit_bcrit(sizes, [float(x.mean()) for x in need], rel)
            lo, hi = interval(bootstrap_bcrit(sizes, need, cfg.boot, seed=0, relative=rel), *cfg.pct)
            m[f"ch05.bt.{name}"] = exact(b_crit, "windows", f"B_crit from S = S_min (1 + B_crit / B), {what}", 2)
            m[f"ch05.bt.{name}.lo"] = exact(lo, "windows", f"its bootstrap 2.5% point ({what})", 2)
            m[f"ch05.bt.{name}.hi"] = exact(hi, "windows", f"its bootstrap 97.5% point ({what})", 2)
            m[f"ch05.bt.{name}.s_min"] = exact(s_min, "steps", f"S_min, steps at an infinite batch ({what})", 2)
        m["ch05.bt.bcrit.chars"] = exact(m["ch05.bt.bcrit"].value * T, "characters", "B_crit in characters", 2)
    return Outcome(
        measurements=m,
        series={
            "batch": [r["batch"] for r in rows],
            "best_lr": [r["rates"][r["best"]] for r in rows],
            "rates": [r["rates"] for r in rows],
            "rate_mean_steps": [r["rank"] for r in rows],
            "steps": [r["cross"].tolist() for r in rows],
            "chars": [(r["cross"] * r["batch"] * T).tolist() for r in rows],
            "reached": [r["reached"] for r in rows],
            "context": T,
            "target": cfg.target,
            "curves_chars": [[[s * r["batch"] * T for s in cv["step"]] for cv in r["curves"]] for r in rows],
            "curves_val": [[cv["val_loss"] for cv in r["curves"]] for r in rows],
        },
    )
