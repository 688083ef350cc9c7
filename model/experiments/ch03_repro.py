"""Chapter 3, reproducibility: the nudged Decoders' stack against itself.

- ``ch03.repro``: ch03.gradient's stack (the default run, three seeds, one stack) trained
  again, on two threads, every run alone, and with other arithmetic (model/experiments/repro.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from model.data import load_corpus
from model.experiments.ch03_backprop import SEEDS, Gradient
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import arm_measurements, arm_series, run_arms


@dataclass(frozen=True)
class Repro:
    gradient: Gradient = field(default_factory=Gradient)  # ch03.gradient's settings


@experiment("ch03.repro", config=Repro(), seeds=SEEDS, quick={"gradient.train.steps": 20})
def repro(ctx: RunContext) -> Outcome:
    """The stack ch03.gradient nudges against itself: trained again, on two threads, each run alone,
    and with other arithmetic."""
    g = ctx.config.gradient
    runs = [replace(g.train, seed=s) for s in ctx.seeds]
    arms = run_arms(g.model, runs, load_corpus(), report=ctx.report_progress)
    m = arm_measurements("ch03.repro", arms, "the stack of trained Decoders ch03.gradient nudges")
    return Outcome(measurements=m, series=arm_series(arms))
