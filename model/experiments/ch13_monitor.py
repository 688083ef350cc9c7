"""Chapter 13, running a job: what a training dashboard shows (``ch13.monitor``).

Deck 05's sweep settings at three of its rates (its too-low 2e-4, its best 2e-2 and its too-high
2.0), three seeds each, every run the default run (AdamW, clip 1.0, batch 32, 2,000 steps, warmup
100 + cosine). Beside the training and validation loss the loop already records (and the gradient
norm before clipping), an on_step hook reads every run's weights after each update and records the
update-to-weight ratio ‖θ_k − θ_{k−1}‖ / ‖θ_{k−1}‖.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.common import exact, measured, steps_to
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import Step, TrainConfig, lr_at, train_many

SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Monitor:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=50))
    rates: tuple[float, ...] = (2e-4, 2e-2, 2.0)  # deck 05's too-low, best and too-high rates
    names: tuple[str, ...] = ("low", "best", "high")
    early: int = 200  # the first steps, where the too-high rate's spike is looked for
    tail: int = 200  # the last steps of a run
    target: float = 2.4  # the validation loss of deck 05's steps-to-target runs (ch05.batch.target)


@experiment(
    "ch13.monitor",
    config=Monitor(),
    seeds=SEEDS,
    quick={"train.steps": 30, "train.eval_every": 10, "early": 10, "tail": 10},
)
def monitor(ctx: RunContext) -> Outcome:
    """Loss, gradient norm, update-to-weight ratio and learning rate along runs at three rates."""
    cfg: Monitor = ctx.config
    t = cfg.train
    runs = [replace(t, lr=r, seed=s) for r in cfg.rates for s in ctx.seeds]
    ratios: list[torch.Tensor] = []
    prev: list[torch.Tensor] = []

    def look(step: Step) -> None:
        theta = step.theta.detach()
        if prev:
            before = prev[0]
            ratios.append(((theta - before).norm(dim=1) / before.norm(dim=1)).clone())
            prev[0] = theta.clone()
        else:
            prev.append(theta.clone())
        if step.step % 100 == 0:
            ctx.report_progress(step.step / t.steps, f"step {step.step}")

    res = train_many(ModelConfig(), runs, load_corpus(), workers=1, on_step=look)
    R, S = len(cfg.rates), len(ctx.seeds)
    ratio = torch.stack(ratios, dim=1).numpy().reshape(R, S, -1)  # (rates, seeds, steps)
    loss = np.array([r.step_losses for r in res]).reshape(R, S, -1)
    gnorm = np.array([r.step_grad_norms for r in res]).reshape(R, S, -1)
    val = np.array([r.curves["val_loss"] for r in res]).reshape(R, S, -1)
    start = float(val[:, :, 0].mean())
    m: dict[str, Measurement] = {
        "ch13.mon.steps": exact(t.steps, "steps", "steps of each monitored run"),
        "ch13.mon.early": exact(cfg.early, "steps", "the early window"),
        "ch13.mon.tail": exact(cfg.tail, "steps", "the last steps of a run"),
        "ch13.mon.clip": exact(t.clip or 0.0, "", "gradient-norm clipping threshold", 2),
        "ch13.mon.start": exact(start, "nats", "validation loss at initialisation (mean)", 3),
        "ch13.mon.target": exact(cfg.target, "nats", "the target validation loss", 2),
    }
    vsteps = res[0].curves["step"]
    for i, (rate, name) in enumerate(zip(cfg.rates, cfg.names, strict=True)):
        e, tl = slice(0, cfg.early), slice(-cfg.tail, None)
        hit = np.array([steps_to(vsteps, v, cfg.target) for v in val[i]])
        m[f"ch13.mon.{name}.reached"] = exact(int(np.isfinite(hit).sum()), "seeds", f"{name} rate: seeds at the target")
        if np.isfinite(hit).all():
            m[f"ch13.mon.{name}.to_target"] = measured(hit, "steps", f"{name} rate: steps to the target", 2)
        m |= {
            f"ch13.mon.{name}.lr": exact(rate, "", f"the {name} rate", 1),
            f"ch13.mon.{name}.final": measured(val[i, :, -1], "nats", f"{name} rate: final validation loss", 3),
            f"ch13.mon.{name}.val_peak": measured(
                val[i].max(axis=1), "nats", f"{name} rate: highest validation loss", 3
            ),
            f"ch13.mon.{name}.ratio_early": measured(
                ratio[i, :, e].max(axis=1),
                "",
                f"{name} rate: largest update-to-weight ratio, first {cfg.early} steps",
                2,
            ),
            f"ch13.mon.{name}.ratio_tail": measured(
                np.median(ratio[i, :, tl], axis=1),
                "",
                f"{name} rate: median update-to-weight ratio, last {cfg.tail} steps",
                2,
            ),
            f"ch13.mon.{name}.gnorm_early": measured(
                gnorm[i, :, e].max(axis=1),
                "",
                f"{name} rate: largest gradient norm (before clipping), first {cfg.early} steps",
                2,
            ),
            f"ch13.mon.{name}.gnorm_tail": measured(
                np.median(gnorm[i, :, tl], axis=1), "", f"{name} rate: median gradient norm, last {cfg.tail} steps", 2
            ),
            f"ch13.mon.{name}.clipped": measured(
                (gnorm[i] > (t.clip or np.inf)).mean(axis=1), "", f"{name} rate: share of updates clipped", 2
            ),
            f"ch13.mon.{name}.loss_rise": measured(
                np.array([np.max(x[: cfg.early] - np.minimum.accumulate(x[: cfg.early])) for x in loss[i]]),
                "nats",
                f"{name} rate: largest rise of the training loss above its lowest so far, first {cfg.early} steps",
                2,
            ),
        }
    return Outcome(
        measurements=m,
        series={
            "rates": list(cfg.rates),
            "step": list(range(1, t.steps + 1)),
            "loss": loss,
            "grad_norm": gnorm,
            "ratio": ratio,
            "lr": [[lr_at(k, replace(t, lr=r)) for k in range(t.steps)] for r in cfg.rates],
            "val_step": res[0].curves["step"],
            "val_loss": val,
            "start": start,
        },
    )
