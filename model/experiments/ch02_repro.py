"""Chapter 2, reproducibility: the context sweep's stack at the default context against itself.

- ``ch02.repro``: ch02.windows' stack at context 16 (its learning-rate ladder times three
  seeds, one stack) trained again, on two threads, every run alone, and with other arithmetic
  (model/experiments/repro.py); per rung, how far other arithmetic moves a seed's final loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch02_data import SEEDS, Windows, _ladder
from model.experiments.registry import Outcome, RunContext, experiment
from model.experiments.repro import arm_measurements, arm_series, run_arms, rung_measurements


@dataclass(frozen=True)
class Repro:
    windows: Windows = field(default_factory=Windows)  # ch02.windows' settings
    context: int = 16  # the stack of this context length (the default model's)


@experiment(
    "ch02.repro", config=Repro(), seeds=SEEDS, quick={"windows.train.steps": 20, "windows.train.eval_every": 10}
)
def repro(ctx: RunContext) -> Outcome:
    """The context sweep's stack at context 16 against itself: trained again, on two threads,
    each run alone, and with other arithmetic."""
    cfg: Repro = ctx.config
    w = cfg.windows
    runs = _ladder(w.train, ctx.seeds, w.lrs)  # rate-major, as ch02.windows stacks them
    arms = run_arms(ModelConfig(context=cfg.context), runs, load_corpus(), report=ctx.report_progress)
    m = arm_measurements("ch02.repro", arms, f"the context sweep's stack at context {cfg.context} (ch02.windows)")
    m |= rung_measurements("ch02.repro", arms, w.lrs)
    return Outcome(measurements=m, series=arm_series(arms))
