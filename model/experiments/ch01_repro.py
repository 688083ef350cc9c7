"""Chapter 1, reproducibility: what "the same seed gives the same numbers" means here.

- ``ch01.repro``: the default run's stack (ch01.default: three seeds, one stack) and the
  arithmetic stack (ch01.arithmetic: three seeds, stopped and resumed every scoring
  interval), each trained again, on two threads, every run alone, and with other arithmetic
  (model/experiments/repro.py); the arithmetic runs are also compared in two-digit exact
  match, and against the same stack trained without stopping.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from model.arithmetic import arithmetic_corpus, exact_match, held_out
from model.data import load_corpus
from model.decoder import Decoder
from model.experiments.ch01_training_loop import SEEDS, Arithmetic, DefaultRun
from model.experiments.common import exact
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import (
    ARM_WHAT,
    ARMS,
    arm_measurements,
    arm_series,
    identical,
    max_abs_diff,
    run_arms,
    train_stack,
)
from model.train import TrainResult


@dataclass(frozen=True)
class Repro:
    default: DefaultRun = field(default_factory=DefaultRun)  # ch01.default's settings
    arith: Arithmetic = field(default_factory=Arithmetic)  # ch01.arithmetic's settings


@experiment(
    "ch01.repro",
    config=Repro(),
    seeds=SEEDS,
    quick={
        "default.train.steps": 30,
        "arith.lines": 2000,
        "arith.train.steps": 40,
        "arith.train.eval_every": 20,
        "arith.score_every": 20,
        "arith.two_digit_problems": 20,
    },
)
def repro(ctx: RunContext) -> Outcome:
    """The default run's and the arithmetic runs' stacks against themselves: trained again, on
    two threads, each run alone, and with other arithmetic; arithmetic also in exact match."""
    cfg: Repro = ctx.config
    d, a = cfg.default, cfg.arith
    seeds = list(ctx.seeds)
    default = run_arms(
        d.model,
        [replace(d.train, seed=s) for s in seeds],
        load_corpus(),
        report=lambda f, note: ctx.report_progress(0.4 * f, f"default run: {note}"),
    )
    # the arithmetic stack exactly as ch01.arithmetic builds and trains it
    two = held_out(np.random.default_rng(a.test_seed), a.two_digit_problems, a.padded)
    corpus = arithmetic_corpus(a.lines, a.corpus_seed, a.padded, exclude=two)
    model_cfg = replace(a.model, vocab=corpus.vocab.size)
    runs = [replace(a.train, seed=s) for s in seeds]
    arith = run_arms(
        model_cfg,
        runs,
        corpus,
        chunk=a.score_every,
        report=lambda f, note: ctx.report_progress(0.4 + 0.5 * f, f"arithmetic: {note}"),
    )
    ctx.report_progress(0.9, "arithmetic without stopping")
    whole = train_stack(model_cfg, runs, corpus)

    def acc2(results: list[TrainResult]) -> np.ndarray:
        out = []
        for r in results:
            model = Decoder(model_cfg)
            model.load_state_dict(r.state_dict or {})
            out.append(exact_match(model, corpus.vocab, two))
        return np.array(out)

    base = acc2(arith.stack)
    m = arm_measurements("ch01.repro", default, "the default run's stack (ch01.default)")
    m |= arm_measurements("ch01.repro.arith", arith, "the arithmetic stack (ch01.arithmetic)")
    series = {f"default_{k}": v for k, v in arm_series(default).items()}
    series |= {f"arith_{k}": v for k, v in arm_series(arith).items()}
    series["arith_acc2_stack"] = base.tolist()
    for arm in ARMS:
        other = acc2(arith.arms[arm])
        series[f"arith_acc2_{arm}"] = other.tolist()
        m[f"ch01.repro.arith.acc2_{arm}_max_diff"] = exact(
            max_abs_diff(base, other),
            "",
            f"largest |Δ two-digit exact match| of a seed at the end, {ARM_WHAT[arm]}, arithmetic stack",
            2,
        )
    m["ch01.repro.arith.resume_max_diff"] = exact(
        max_abs_diff([r.val_loss_final for r in arith.stack], [r.val_loss_final for r in whole]),
        "nats",
        f"largest |Δ final validation loss|, the arithmetic stack stopped and resumed every {a.score_every} "
        "steps against trained without stopping",
        2,
    )
    m["ch01.repro.arith.resume_identical"] = exact(
        identical(arith.stack, whole), "runs", "arithmetic runs with bit-identical final weights, resumed or not"
    )
    m["ch01.repro.arith.resume_acc2_max_diff"] = exact(
        max_abs_diff(base, acc2(whole)), "", "largest |Δ two-digit exact match|, stopped and resumed against not", 2
    )
    return Outcome(measurements=m, series=series)
