"""Chapter 5, reproducibility: the learning-rate sweep's stack against itself.

- ``ch05.repro``: ch05.sweep's stack (nine rates times three seeds, one stack) trained again,
  on two threads, every run alone, and with other arithmetic (model/experiments/repro.py);
  per rung, how far other arithmetic moves a seed's final loss: at the highest rates the runs
  are chaotic, and a last-bit change in the arithmetic ends them elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch05_lr import SEEDS, Sweep
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import arm_measurements, arm_series, run_arms, rung_measurements


@dataclass(frozen=True)
class Repro:
    sweep: Sweep = field(default_factory=Sweep)  # ch05.sweep's settings


@experiment("ch05.repro", config=Repro(), seeds=SEEDS, quick={"sweep.train.steps": 30, "sweep.train.eval_every": 10})
def repro(ctx: RunContext) -> Outcome:
    """The learning-rate sweep's stack against itself: trained again, on two threads, each run
    alone, and with other arithmetic."""
    s = ctx.config.sweep
    runs = [replace(s.train, lr=r, seed=seed) for r in s.rates for seed in ctx.seeds]  # as ch05.sweep stacks them
    arms = run_arms(ModelConfig(), runs, load_corpus(), report=ctx.report_progress)
    m = arm_measurements("ch05.repro", arms, "the learning-rate sweep's stack (ch05.sweep)")
    m |= rung_measurements("ch05.repro", arms, s.rates)
    return Outcome(measurements=m, series=arm_series(arms))
