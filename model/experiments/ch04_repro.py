"""Chapter 4, reproducibility: the optimiser sweep's AdamW stack against itself.

- ``ch04.repro``: ch04.sweep's AdamW stack (its learning-rate ladder times three seeds, one
  stack) trained again, on two threads, every run alone, and with other arithmetic
  (model/experiments/repro.py); per rung, how far other arithmetic moves a seed's final loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch04_optimisers import SEEDS, Sweep
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import arm_measurements, arm_series, run_arms, rung_measurements


@dataclass(frozen=True)
class Repro:
    sweep: Sweep = field(default_factory=Sweep)  # ch04.sweep's settings
    optimizer: str = "adamw"  # the stack of this optimiser's ladder


@experiment("ch04.repro", config=Repro(), seeds=SEEDS, quick={"sweep.train.steps": 20, "sweep.train.eval_every": 10})
def repro(ctx: RunContext) -> Outcome:
    """The optimiser sweep's AdamW stack against itself: trained again, on two threads, each run
    alone, and with other arithmetic."""
    cfg: Repro = ctx.config
    lrs = cfg.sweep.lrs[cfg.optimizer]
    runs = [replace(cfg.sweep.train, optimizer=cfg.optimizer, lr=lr, seed=s) for lr in lrs for s in ctx.seeds]
    arms = run_arms(ModelConfig(), runs, load_corpus(), report=ctx.report_progress)
    m = arm_measurements("ch04.repro", arms, f"the sweep's {cfg.optimizer} stack (ch04.sweep)")
    m |= rung_measurements("ch04.repro", arms, lrs)
    return Outcome(measurements=m, series=arm_series(arms))
