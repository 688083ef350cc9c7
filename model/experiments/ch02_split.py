"""Chapter 2, the held-out split checked where it matters (``ch02.split``): which characters
of the play the training batches actually read.

The default run's batches are drawn again, exactly as training draws them (model.data.Batches
with each seed's data seed), beside the same draw over the positions of the training text, so
that every window read is known by its place in the play. The training and validation tensors
are located in the encoded play, and the experiment counts the validation characters any
training window read; it fails if that count is not 0 (tests/model/test_ch02_split.py shows
it failing on a split that overlaps). This module stands apart so that the rest of chapter 2
keeps its fingerprints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from model.data import Batches, load_corpus
from model.decoder import ModelConfig
from model.experiments.ch02_data import SEEDS
from model.experiments.common import exact
from model.experiments.registry import Outcome, RunContext, experiment
from model.train import TrainConfig


def read_positions(data: torch.Tensor, data_seeds: list[int], batch: int, context: int, steps: int) -> torch.Tensor:
    """Which positions of ``data`` the batches of these data seeds read in ``steps`` steps (bool, len(data)):
    the draw over the positions checked against the draw over the data itself."""
    where = Batches(torch.arange(len(data)), data_seeds, batch, context)
    what = Batches(data, data_seeds, batch, context)
    read = torch.zeros(len(data), dtype=torch.bool)
    for _ in range(steps):
        (px, py), (x, y) = where.next(), what.next()
        if not (torch.equal(data[px], x) and torch.equal(data[py], y)):
            raise AssertionError("the positions drawn are not the windows training reads")
        read[px] = True
        read[py] = True
    return read


def heldout_reads(ids: torch.Tensor, train: torch.Tensor, val: torch.Tensor, read: torch.Tensor) -> tuple[int, int]:
    """(validation characters read in training, where validation starts in ids): the training
    tensor must be ids' prefix and the validation tensor its suffix; `read` marks the training
    tensor's positions read, which are then the play's positions."""
    val_start = len(ids) - len(val)
    if not torch.equal(ids[: len(train)], train) or not torch.equal(ids[val_start:], val):
        raise AssertionError("the training text is not the play's start or the validation text not its end")
    return int(read[val_start:].sum()) if val_start < len(read) else 0, val_start


@dataclass(frozen=True)
class Split:
    train: TrainConfig = field(default_factory=TrainConfig)  # the default run: its steps, batch and data seeds


@experiment("ch02.split", config=Split(), seeds=SEEDS, quick={"train.steps": 20})
def split(ctx: RunContext) -> Outcome:
    """The default run's training windows, located in the play: none reads a validation character."""
    cfg: Split = ctx.config
    corpus = load_corpus()
    T = ModelConfig().context
    ids = torch.from_numpy(corpus.vocab.encode(corpus.text))
    seeds = [TrainConfig(seed=s).data_seed_value for s in ctx.seeds]
    read = read_positions(corpus.train, seeds, cfg.train.batch, T, cfg.train.steps)
    overlap, val_start = heldout_reads(ids, corpus.train, corpus.val, read)
    if overlap:
        raise AssertionError(f"training windows read {overlap} validation characters")
    last = int(read.nonzero().max())
    m = {
        "ch02.split.windows": exact(
            len(seeds) * cfg.train.steps * cfg.train.batch,
            "windows",
            "training windows drawn and located (the default run's, every seed)",
        ),
        "ch02.split.read": exact(int(read.sum()), "characters", "characters of the play those windows read"),
        "ch02.split.last_read": exact(last, "", "the last position of the play any training window reads (from 0)"),
        "ch02.split.val_start": exact(val_start, "", "the first position of the validation text (from 0)"),
        "ch02.split.overlap": exact(overlap, "characters", "validation characters read by training windows"),
    }
    return Outcome(measurements=m)
