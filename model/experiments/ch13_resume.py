"""Chapter 13, running a job: checkpoints and resuming (``ch13.resume``).

A stack of three default Decoders (seeds 0-2) at deck 05's best rate trains in a child process that
saves a checkpoint at every evaluation; the parent SIGKILLs it at a random step (drawn from a seeded
generator), resumes from the checkpoint it left, and compares the final weights with an uninterrupted
run's, bit for bit. Then it resumes from copies of that checkpoint with one part left out at a time
(model/resume.py, `without`): Adam's moments, the update count that drives the schedule, the data
generator's state, or everything but the weights.

The runs are the default run except for the rate (deck 05's best, 2e-2), the length (1,000 steps
instead of 2,000, with the default 100 steps of warmup) and evaluations every 50 steps.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from model.experiments.common import exact, measured
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.resume import PARTS, kill_at, resume_without, runs_for, train_stack
from model.train import TrainResult, load_checkpoint, lr_at

SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Resume:
    steps: int = 1000
    lr: float = 2e-2  # deck 05's best rate (ch05.lr.best)
    eval_every: int = 50  # the checkpoint is saved at every evaluation
    kill_lo: int = 100  # the kill step is drawn uniformly from [kill_lo, kill_hi]
    kill_hi: int = 900
    kill_seed: int = 13
    after: int = 50  # "right after resuming": this many updates


def _theta(r: TrainResult) -> torch.Tensor:
    assert r.state_dict is not None
    return torch.cat([v.flatten() for v in r.state_dict.values()])


@experiment(
    "ch13.resume",
    config=Resume(),
    seeds=SEEDS,
    quick={"steps": 40, "eval_every": 10, "kill_lo": 12, "kill_hi": 28, "after": 5},
)
def resume(ctx: RunContext) -> Outcome:
    """Kill a real run, resume it bit for bit, and resume it without each part of its checkpoint."""
    cfg: Resume = ctx.config
    runs = runs_for(cfg.steps, cfg.lr, ctx.seeds, cfg.eval_every)
    kill = random.Random(cfg.kill_seed).randint(cfg.kill_lo, cfg.kill_hi)
    ctx.report_progress(0.0, "uninterrupted")
    whole = train_stack(runs)
    ref = [_theta(r) for r in whole]
    with tempfile.TemporaryDirectory(prefix="ch13-resume-") as tmp:
        work = Path(tmp)
        ck = work / "job.pt"
        ctx.report_progress(0.15, f"child, killed at step {kill}")
        reported = kill_at(ck, runs, kill)
        left = load_checkpoint(ck)
        saved, ahead = int(left["step"]), int(left["batches"]["starts"].shape[1])
        arms: dict[str, list[TrainResult]] = {}
        for i, part in enumerate((None, *PARTS)):
            ctx.report_progress(0.3 + 0.7 * i / (len(PARTS) + 1), f"resume without {part}")
            arms[part or "whole"] = resume_without(ck, part, runs, work)
    final_ref = np.array([r.val_loss_final for r in whole])
    loss_ref = np.array([r.step_losses for r in whole])  # (seeds, steps)
    m: dict[str, Measurement] = {
        "ch13.resume.steps": exact(cfg.steps, "steps", "steps of each resumed run"),
        "ch13.resume.lr": exact(cfg.lr, "", "their peak rate (deck 05's best)", 1),
        "ch13.resume.eval_every": exact(cfg.eval_every, "steps", "a checkpoint is saved every this many steps"),
        "ch13.resume.kill_step": exact(kill, "steps", "the random step at which the child was killed"),
        "ch13.resume.reported": exact(reported, "steps", "the last update the child reported before it died"),
        "ch13.resume.saved_step": exact(saved, "steps", "the step of the checkpoint the child left"),
        "ch13.resume.redone": exact(reported - saved, "steps", "updates lost with the child and done again"),
        "ch13.resume.after": exact(cfg.after, "steps", "the window right after resuming"),
        "ch13.resume.ahead": exact(ahead, "steps", "steps of windows the batch sampler draws at a time"),
        "ch13.resume.final_ref": measured(final_ref, "nats", "final validation loss, uninterrupted"),
    }
    series: dict = {"step": list(range(1, cfg.steps + 1)), "loss_ref": loss_ref, "saved": saved, "kill": kill}
    for name, res in arms.items():
        how = "from the whole checkpoint" if name == "whole" else f"without {name.replace('_', ' ')}"
        diff = max(float((_theta(r) - t).abs().max()) for r, t in zip(res, ref, strict=True))
        loss = np.array([r.step_losses for r in res])
        window = slice(saved, min(cfg.steps, saved + cfg.after))
        final = np.array([r.val_loss_final for r in res])
        m[f"ch13.resume.{name}.max_diff"] = exact(diff, "", f"resumed {how}: largest weight difference", 3)
        m[f"ch13.resume.{name}.equal"] = exact(
            sum(bool(torch.equal(_theta(r), t)) for r, t in zip(res, ref, strict=True)),
            "seeds",
            f"resumed {how}: seeds whose weights equal the uninterrupted run's bit for bit",
        )
        m[f"ch13.resume.{name}.final_diff"] = measured(
            final - final_ref, "nats", f"resumed {how} minus uninterrupted final loss, paired", 2
        )
        m[f"ch13.resume.{name}.spike"] = measured(
            (loss[:, window] - loss_ref[:, window]).max(axis=1),
            "nats",
            f"resumed {how}: largest excess training loss over the {cfg.after} steps after resuming",
            2,
        )
        series[f"loss_{name}"] = loss
    # what the schedule does when the update count restarts: the rate of the last update
    last = runs[0]
    m["ch13.resume.lr_last"] = exact(lr_at(cfg.steps - 1, last), "", "rate of the last update, uninterrupted", 2)
    m["ch13.resume.step.lr_last"] = exact(
        lr_at(cfg.steps - 1 - saved, last), "", "rate of the last update when the count restarted at resume", 2
    )
    return Outcome(measurements=m, series=series)
