"""Chapter 5, the sweep's edges looked at again: what deck 05 claims about the top and the bottom rates.

- ``ch05.edges``: warmup 0, 100 and 500 steps at the sweep's top rates (0.2, 0.6 and 2), with
  blow-up counts; those rates in a second stack layout beside the sweep's own stack (trained
  again here), so the spread a slide gives for them covers the layout; and a matched too-low
  run: the sweep's lowest rate at a constant rate after the same warmup, against the cosine run;
- ``ch05.noise_path``: ch05.noise's runs and estimates again, with the path's shape measured: where
  the noise scale is lowest, and how often it falls between later points.

Every run is ch05.sweep's (the default run: AdamW, clip 1.0, batch 32, 2,000 steps, warmup 100
+ cosine) except where its config says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch05_lr import SEEDS, TAIL, Noise, Sweep, blowup_step, noise
from model.experiments.common import exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainResult, lr_at, train_many


@dataclass(frozen=True)
class Edges:
    sweep: Sweep = field(default_factory=Sweep)  # ch05.sweep's runs, trained again as its stack
    top: tuple[float, ...] = (0.2, 0.6, 2.0)  # the sweep's rungs above its good band
    warmups: tuple[int, ...] = (0, 100, 500)
    low: float = 2e-4  # the sweep's lowest rate, run again at a constant rate after warmup


def _finals(results: list[TrainResult]) -> np.ndarray:
    return np.array([r.val_loss_final for r in results])


def tail_drop(result: TrainResult, tail: int) -> float:
    """How far a run's validation loss fell over its last ``tail`` steps (evaluations every so often)."""
    steps, val = result.curves["step"], result.curves["val_loss"]
    k = max((i for i, s in enumerate(steps) if s <= steps[-1] - tail), default=0)  # a run shorter than tail: all of it
    return float(val[k] - val[-1])


@experiment(
    "ch05.edges",
    config=Edges(),
    seeds=SEEDS,
    quick={
        "sweep.train.steps": 30,
        "sweep.train.eval_every": 10,
        "sweep.train.warmup": 10,
        "warmups": (0, 10, 20),
        "sweep.rates": (0.2, 0.6, 2.0),
    },
)
def edges(ctx: RunContext) -> Outcome:
    """Warmup at the sweep's top rates with blow-up counts, the top rates in a second stack
    layout, and the lowest rate at a constant rate: the same seeds as ch05.sweep."""
    c: Edges = ctx.config
    t = c.sweep.train
    corpus = load_corpus()
    S, R, W = len(ctx.seeds), len(c.top), len(c.warmups)
    # the sweep's own stack, as ch05.sweep stacks it: this machine's numbers in its layout
    main = [replace(t, lr=r, seed=s) for r in c.sweep.rates for s in ctx.seeds]
    first = train_many(ModelConfig(), main, corpus, workers=1, on_eval=progress(ctx, t, 0.0, 0.5))
    # the second layout: the top rates x warmups, and the low rate at a constant rate, one stack
    grid = [replace(t, lr=r, warmup=w, seed=s) for r in c.top for w in c.warmups for s in ctx.seeds]
    low = [replace(t, lr=c.low, schedule=sch, seed=s) for sch in ("cosine", "constant") for s in ctx.seeds]
    second = train_many(ModelConfig(), grid + low, corpus, workers=1, on_eval=progress(ctx, t, 0.5, 0.5))
    level = float(np.mean([r.val_loss_init for r in first]))  # ch05.sweep's blow-up level
    steps = second[0].curves["step"]
    blown = np.array([np.isfinite(blowup_step(steps, r.curves["val_loss"], level)) for r in second[: len(grid)]])
    blown = blown.reshape(R, W, S)
    final = _finals(second[: len(grid)]).reshape(R, W, S)
    m: dict[str, Measurement] = {
        "ch05.edges.level": exact(level, "nats", "blow-up level: the runs' mean validation loss at step 0", 3),
        "ch05.edges.nonfinite": exact(
            sum(r.diverged_at is not None for r in first + second), "runs", "runs that became non-finite"
        ),
    }
    w_ref = c.warmups.index(t.warmup)
    for i, rate in enumerate(c.top):
        for j, w in enumerate(c.warmups):
            key = f"ch05.edges.r{i}.w{w}"
            m[f"{key}.blowups"] = exact(
                int(blown[i, j].sum()), "seeds", f"rate {rate:g}, warmup {w}: seeds that blow up"
            )
            if np.isfinite(final[i, j]).all():
                m[f"{key}.final"] = measured(final[i, j], "nats", f"rate {rate:g}, warmup {w}: final loss", 3)
            if j != w_ref and np.isfinite(final[i, j]).all() and np.isfinite(final[i, w_ref]).all():
                m[f"{key}.minus_w{t.warmup}"] = measured(
                    final[i, j] - final[i, w_ref],
                    "nats",
                    f"rate {rate:g}: warmup {w} minus warmup {t.warmup} final loss, paired by seed",
                    2,
                )
        m[f"ch05.edges.r{i}.lr"] = exact(rate, "", f"top rate {i + 1}", 1)
    m["ch05.edges.blowups"] = exact(int(blown.sum()), "runs", "runs of the warmup grid that blow up")
    m["ch05.edges.runs"] = exact(blown.size, "runs", "runs of the warmup grid")
    # the layouts: the top rates at the default warmup, in the sweep's stack and in this one
    moves, spreads = [], []
    for i, rate in enumerate(c.top):
        k = list(c.sweep.rates).index(rate)
        a = _finals(first[k * S : (k + 1) * S])
        b = final[i, w_ref]
        move = float(np.max(np.abs(a - b)))
        sd = max(float(np.std(a, ddof=1)), float(np.std(b, ddof=1)))
        moves.append(move)
        spreads.append(sd)
        m[f"ch05.edges.layout.r{i}.sweep"] = measured(a, "nats", f"rate {rate:g}: final loss in the sweep's stack", 3)
        m[f"ch05.edges.layout.r{i}.second"] = measured(b, "nats", f"rate {rate:g}: final loss in the second stack", 3)
        m[f"ch05.edges.layout.r{i}.move"] = exact(
            move, "nats", f"rate {rate:g}: largest per-seed move between stacks", 2
        )
        m[f"ch05.edges.layout.r{i}.sd"] = exact(sd, "nats", f"rate {rate:g}: the larger sd over seeds of the two", 2)
    m["ch05.edges.layout.move"] = exact(max(moves), "nats", "largest per-seed move between stacks, top rates", 2)
    k_best = int(np.argmin([_finals(first[k * S : (k + 1) * S]).mean() for k in range(len(c.sweep.rates))]))
    m["ch05.edges.layout.best_lr"] = exact(c.sweep.rates[k_best], "", "best rate of the sweep's stack, rerun here", 1)
    # the matched too-low run: cosine against constant, same seeds, warmup and steps
    cos, const = second[len(grid) : len(grid) + S], second[len(grid) + S :]
    m |= {
        "ch05.edges.low.lr": exact(c.low, "", "the too-low rate", 1),
        "ch05.edges.low.tail": exact(TAIL, "steps", "the end of a run, for the fall over its last steps"),
        "ch05.edges.low.cosine_drop": measured(
            [tail_drop(r, TAIL) for r in cos], "nats", f"too-low rate, cosine: fall over the last {TAIL} steps", 2
        ),
        "ch05.edges.low.constant_drop": measured(
            [tail_drop(r, TAIL) for r in const], "nats", f"too-low rate, constant: fall over the last {TAIL} steps", 2
        ),
        "ch05.edges.low.constant_final": measured(
            _finals(const), "nats", "too-low rate, constant after warmup: final loss", 3
        ),
        "ch05.edges.low.constant_minus_cosine": measured(
            _finals(const) - _finals(cos), "nats", "too-low rate: constant minus cosine final loss, paired by seed", 2
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "top": list(c.top),
            "warmups": list(c.warmups),
            "final": final,
            "blown": blown.astype(int),
            "step": steps,
            "val": np.array([r.curves["val_loss"] for r in second[: len(grid)]]).reshape(R, W, S, -1),
            "sweep_final": _finals(first).reshape(len(c.sweep.rates), S),
            "low_cosine": np.array([r.curves["val_loss"] for r in cos]),
            "low_constant": np.array([r.curves["val_loss"] for r in const]),
            "level": level,
        },
    )


@experiment(
    "ch05.noise_path",
    config=Noise(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "at": (0, 10, 20), "examples": 16},
)
def noise_path(ctx: RunContext) -> Outcome:
    """The shape of the simple noise scale's path along ch05.noise's runs: its lowest point, and
    how many later steps between measured points it falls rather than grows."""
    out = noise(ctx)
    bs = np.asarray(out.series["b_simple"])  # (seeds, points)
    at = list(out.series["step"])
    low = bs.mean(axis=0).argmin()
    falls = int((np.diff(bs[:, low:], axis=1) < 0).sum())
    c: Noise = ctx.config
    m: dict[str, Measurement] = {
        "ch05.noise_path.min": measured(bs[:, low], "windows", "B_simple at its lowest point (mean over seeds)", 2),
        "ch05.noise_path.min_step": exact(at[low], "steps", "the step of that lowest point"),
        "ch05.noise_path.start": measured(bs[:, 0], "windows", "B_simple at initialisation", 2),
        "ch05.noise_path.dip": measured(bs[:, 0] / bs[:, low], "", "B_simple at the start over at its lowest", 2),
        "ch05.noise_path.falls": exact(falls, "intervals", "later intervals (seed, point to point) where it falls"),
        "ch05.noise_path.intervals": exact(bs[:, low:].shape[1] - 1, "intervals", "later intervals per seed"),
        "ch05.noise_path.end_lr": exact(
            lr_at(at[-1] - 1, c.train), "", "learning rate of the update before the last estimate", 2
        ),
    }
    return Outcome(measurements=m, series={"step": at, "b_simple": bs})
