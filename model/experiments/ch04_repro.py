"""Chapter 4, reproducibility: AdamW's learning-rate ladder from the optimiser sweep against itself.

- ``ch04.repro``: ch04.sweep's AdamW runs at one weight decay (its learning-rate ladder times
  three seeds, one stack) trained again, on two threads, every run alone, and with other
  arithmetic (model/experiments/repro.py); per rung, how far other arithmetic moves a seed's
  final loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch04_optimisers import SEEDS, Sweep
from model.experiments.common import exact
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import arm_measurements, arm_series, run_arms, rung_measurements


@dataclass(frozen=True)
class Repro:
    sweep: Sweep = field(default_factory=Sweep)  # ch04.sweep's settings
    optimizer: str = "adamw"  # the stack of this optimiser's ladder
    weight_decay: float = 0.1  # at this decay of its grid (AdamW's best in ch04.sweep)


@experiment("ch04.repro", config=Repro(), seeds=SEEDS, quick={"sweep.train.steps": 20, "sweep.train.eval_every": 10})
def repro(ctx: RunContext) -> Outcome:
    """AdamW's ladder at one weight decay of the optimiser sweep against itself: trained again, on
    two threads, each run alone, and with other arithmetic."""
    cfg: Repro = ctx.config
    lrs = cfg.sweep.lrs[cfg.optimizer]
    runs = [
        replace(cfg.sweep.train, optimizer=cfg.optimizer, lr=lr, weight_decay=cfg.weight_decay, seed=s)
        for lr in lrs
        for s in ctx.seeds
    ]
    what = f"the sweep's {cfg.optimizer} runs at weight decay {cfg.weight_decay:g} (ch04.sweep), one stack"
    arms = run_arms(ModelConfig(), runs, load_corpus(), report=ctx.report_progress)
    m = arm_measurements("ch04.repro", arms, what)
    m |= rung_measurements("ch04.repro", arms, lrs)
    m["ch04.repro.weight_decay"] = exact(cfg.weight_decay, "", "weight decay of the AdamW runs probed", 1)
    return Outcome(measurements=m, series=arm_series(arms))
