"""Kill a training job, resume it from its checkpoint, and see what each part of the checkpoint is for.

`python -m model.resume CHECKPOINT --steps N --lr R --seeds 0,1,2` trains a stack of default
Decoders on one torch thread with train_many's checkpoint (saved at every evaluation, atomically)
and prints "step k" after every update, so a parent can SIGKILL it at a step of its choosing
(`kill_at`). `resume` trains the same stack from whatever checkpoint the killed job left.

A checkpoint (model/train.py) holds the weights ("theta"), the optimiser's state ("optimizer": the
moments exp_avg and exp_avg_sq, and t, the update count, which also indexes the learning-rate
schedule), the batches' state ("batches": each run's generator and the window starts it drew
ahead; the trainer has no other randomness after initialisation) and the loop's progress.
`without(state, part)` returns a copy of a checkpoint with one part reset to what a fresh run
would hold, for the ablations.
"""

from __future__ import annotations

import argparse
import copy
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from model.decoder import ModelConfig
from model.train import TrainConfig, TrainResult, load_checkpoint, save_checkpoint, train_many

#: What an ablation leaves out of the checkpoint, in the order the deck shows them.
PARTS = ("moments", "step", "data", "position", "rng", "all_but_weights")


def runs_for(steps: int, lr: float, seeds: Sequence[int], eval_every: int) -> list[TrainConfig]:
    return [TrainConfig(steps=steps, lr=lr, seed=s, eval_every=eval_every, threads=1) for s in seeds]


def train_stack(
    runs: list[TrainConfig], checkpoint: str | os.PathLike | None = None, on_step=None
) -> list[TrainResult]:
    """The stack every arm trains: the default Decoder, one torch thread, one stack."""
    return train_many(ModelConfig(), runs, checkpoint=checkpoint, threads=1, workers=1, on_step=on_step)


def kill_at(checkpoint: Path, runs: list[TrainConfig], step: int, timeout: float = 600.0) -> int:
    """Train `runs` in a child process and SIGKILL it once it reports update `step`; the update
    count it had reported last (it may be a step or two past `step` when the signal lands)."""
    seeds = ",".join(str(r.seed) for r in runs)
    cmd = [sys.executable, "-m", "model.resume", str(checkpoint), "--steps", str(runs[0].steps)]
    cmd += ["--lr", repr(runs[0].lr), "--seeds", seeds, "--eval-every", str(runs[0].eval_every)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    last = -1
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("step "):
                last = int(line.split()[1])
                if last >= step:
                    os.kill(child.pid, signal.SIGKILL)
                    break
        child.wait(timeout)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if child.returncode != -signal.SIGKILL:
        err = child.stderr.read() if child.stderr else ""
        raise RuntimeError(f"the child training job ended with {child.returncode}, not SIGKILL:\n{err}")
    return last


def without(state: dict, part: str, runs: Sequence[TrainConfig]) -> dict:
    """A copy of checkpoint `state` with `part` reset to what a fresh run holds.

    moments: Adam's exp_avg and exp_avg_sq become zeros (the update count stays);
    step: the update count t becomes 0, so the schedule starts again from warmup (and so does
        Adam's bias correction), the moments stay;
    data: every run's batch generator is seeded afresh and its drawn-ahead windows dropped, so
        the run sees its first batches again;
    position: only the drawn-ahead windows are dropped (the generator goes on from its state), so
        the run skips the rest of the current block of windows and never repeats one;
    rng: only the generators are seeded afresh (the drawn-ahead windows are kept), so the run
        finishes its current block, then draws its first blocks again;
    all_but_weights: moments, step and data at once (what saving only the model's weights keeps)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    out = copy.deepcopy(state)
    opt = out["optimizer"]
    if part in ("moments", "all_but_weights"):
        for k in ("exp_avg", "exp_avg_sq"):
            opt[k] = torch.zeros_like(opt[k])
    if part in ("step", "all_but_weights"):
        opt["t"] = 0
    b = out["batches"]
    if part in ("data", "rng", "all_but_weights"):
        b["gens"] = [torch.Generator().manual_seed(r.data_seed_value).get_state() for r in runs]
    if part in ("data", "position", "all_but_weights"):
        b["k"] = b["starts"].shape[1]  # nothing drawn ahead: the next step draws from the generator
    return out


def resume_without(source: Path, part: str | None, runs: list[TrainConfig], work: Path) -> list[TrainResult]:
    """Resume `runs` from a copy of the checkpoint at `source` (with `part` left out, or whole)."""
    state = load_checkpoint(source)
    path = work / f"resume-{part or 'whole'}.pt"
    save_checkpoint(path, state if part is None else without(state, part, runs))
    return train_stack(runs, checkpoint=path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m model.resume", description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", type=Path)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--seeds", required=True, help="comma-separated weight seeds")
    ap.add_argument("--eval-every", type=int, default=50)
    args = ap.parse_args(argv)
    runs = runs_for(args.steps, args.lr, [int(s) for s in args.seeds.split(",")], args.eval_every)

    def report(step) -> None:
        print(f"step {step.step}", flush=True)

    train_stack(runs, checkpoint=args.checkpoint, on_step=report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
