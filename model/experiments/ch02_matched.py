"""Chapter 2, context length at matched characters per step (``ch02.matched``).

ch02.windows compares contexts 8 to 64 at the default batch of 32 windows, so a longer
context also reads more characters per step (256 at context 8, 2,048 at 64). Here every
arm reads the same characters per step, context x batch = 2,048 (8 x 256, 16 x 128,
32 x 64, 64 x 32), each on its own learning-rate ladder, on the same seeds and steps:
what is left of the gain is the context's own.

A second control for the BPE comparison of ch02.bpe: the character Decoder at context 32
and batch 32 (1,024 characters per step, a 32-character window), against BPE-256, whose
16-token window spans about 30 characters and reads about 964 characters per step.
This module stands apart so that the rest of chapter 2 keeps its fingerprints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch02_data import SEEDS, _finals, _ladder
from model.experiments.common import best_rung, exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, train_many


@dataclass(frozen=True)
class Matched:
    chars: int = 2048  # characters per step of every matched arm: context x batch
    contexts: tuple[int, ...] = (8, 16, 32, 64)
    lrs: tuple[float, ...] = (2e-2, 6e-2, 2e-1)  # about 3x apart; every arm's best, 6e-2, is inside it
    control: tuple[int, int] = (32, 32)  # (context, batch) of the BPE control: 1,024 characters per step
    control_lrs: tuple[float, ...] = (6e-3, 2e-2, 6e-2, 2e-1)  # ch02.windows' ladder at batch 32
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1000, eval_every=100))  # as ch02.windows


def _arm(ctx: RunContext, cfg: Matched, context: int, batch: int, lrs, done: float, share: float):
    """One arm on its ladder: (best rung, (rungs, seeds) finals, the best rung's val curves)."""
    train = replace(cfg.train, batch=batch)
    runs = train_many(
        ModelConfig(context=context),
        _ladder(train, ctx.seeds, lrs),
        load_corpus(),
        workers=1,
        on_eval=progress(ctx, train, done, share),
    )
    finals = _finals(runs, len(lrs))
    b = best_rung(finals)
    S = len(ctx.seeds)
    return b, finals, [r.curves["val_loss"] for r in runs[b * S : (b + 1) * S]], runs[0].curves["step"]


@experiment("ch02.matched", config=Matched(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def matched(ctx: RunContext) -> Outcome:
    """Context 8 to 64 at 2,048 characters per step (batch 256 to 32), each on its own ladder;
    and the character Decoder at context 32, batch 32, as a control for BPE."""
    cfg: Matched = ctx.config
    for c in cfg.contexts:
        if cfg.chars % c:
            raise ValueError(f"context {c} does not divide {cfg.chars} characters per step")
    n_arms = len(cfg.contexts) + 1
    m: dict[str, Measurement] = {
        "ch02.matched.chars": exact(cfg.chars, "characters", "characters per step of every matched arm"),
        "ch02.matched.steps": exact(cfg.train.steps, "steps", "steps of every matched run"),
        "ch02.matched.lr_low": exact(min(cfg.lrs), "", "lowest rate of the matched arms' ladder", 1),
        "ch02.matched.lr_high": exact(max(cfg.lrs), "", "highest rate of the matched arms' ladder", 1),
    }
    finals_best, curves, best_lr = [], [], []
    for k, c in enumerate(cfg.contexts):
        batch = cfg.chars // c
        b, finals, best_curves, steps = _arm(ctx, cfg, c, batch, cfg.lrs, k / n_arms, 1 / n_arms)
        finals_best.append(finals[b])
        curves.append(best_curves)
        best_lr.append(cfg.lrs[b])
        m |= {
            f"ch02.matched.c{c}.batch": exact(batch, "windows", f"batch at context {c}"),
            f"ch02.matched.c{c}.lr": exact(cfg.lrs[b], "", f"best learning rate at context {c}, batch {batch}", 1),
            f"ch02.matched.c{c}.edge": exact(
                int(b in (0, len(cfg.lrs) - 1)), "", f"1 if context {c}'s best rate is at its ladder's edge"
            ),
            f"ch02.matched.c{c}.val": measured(
                finals[b], "nats", f"validation loss at context {c}, batch {batch}, its best rate"
            ),
        }
    first, last = cfg.contexts[0], cfg.contexts[-1]
    m[f"ch02.matched.gain_{first}_{last}"] = measured(
        finals_best[0] - finals_best[-1],
        "nats",
        f"validation loss at context {first} minus at {last}, both at {cfg.chars} characters per step "
        "(same seeds, each at its best rate)",
        2,
    )
    for c, f in zip(cfg.contexts[1:-1], finals_best[1:-1], strict=True):
        m[f"ch02.matched.gain_{c}_{last}"] = measured(
            f - finals_best[-1], "nats", f"context {c} minus {last} at {cfg.chars} characters per step (same seeds)", 2
        )
    # the BPE control: characters at context 32, batch 32
    cc, cb = cfg.control
    b, finals, _, _ = _arm(ctx, cfg, cc, cb, cfg.control_lrs, len(cfg.contexts) / n_arms, 1 / n_arms)
    m |= {
        "ch02.matched.control.context": exact(cc, "characters", "context of the BPE control"),
        "ch02.matched.control.chars": exact(cc * cb, "characters", "characters per step of the BPE control"),
        "ch02.matched.control.seen": exact(
            cc * cb * cfg.train.steps, "characters", "characters the BPE control reads in training"
        ),
        "ch02.matched.control.lr": exact(cfg.control_lrs[b], "", "best learning rate of the BPE control", 1),
        "ch02.matched.control.edge": exact(
            int(b in (0, len(cfg.control_lrs) - 1)), "", "1 if the BPE control's best rate is at its ladder's edge"
        ),
        "ch02.matched.control.bpc": measured(
            finals[b] / math.log(2), "bits per character", f"character Decoder, context {cc}, batch {cb}, validation"
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "context": list(cfg.contexts),
            "batch": [cfg.chars // c for c in cfg.contexts],
            "step": steps,
            "val_loss": np.array(curves),  # (contexts, seeds, evals), each at its best rate
            "best_lr": best_lr,
        },
    )
