"""Deck 08's training experiments: the ladder rule, the unchanged-weights hook and the tail drop."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch08_precision import LADDER, quantise_tensors, tuned
from model.experiments.ch08_training import Unchanged, _tail_drop
from model.train import TrainConfig, train_many


def _fake(loss_of_rate):
    """A train function for tuned(): each rate's S = 2 'runs' end at loss_of_rate(rate)."""
    calls = []

    def train(rates):
        calls.append(list(rates))
        return [SimpleNamespace(val_loss_final=loss_of_rate(r)) for r in rates for _ in range(2)]

    return train, calls


def test_tuned_adds_rungs_beyond_a_best_at_the_edge_and_stops_inside():
    train, calls = _fake(lambda r: abs(np.log(r) - np.log(0.2)))  # best at 0.2, above the ladder (6e-3..6e-2)
    rates, res = tuned(train, [6e-3, 2e-2, 6e-2], 2)
    assert rates == [6e-3, 2e-2, 6e-2, 0.2, 0.6] and calls[1:] == [[0.2], [0.6]]
    assert len(res) == 2 * len(rates)
    train, calls = _fake(lambda r: abs(np.log(r) - np.log(2e-2)))  # best inside: nothing added
    assert tuned(train, [6e-3, 2e-2, 6e-2], 2)[0] == [6e-3, 2e-2, 6e-2] and len(calls) == 1
    train, calls = _fake(lambda r: r)  # best at the bottom: the rungs below, at most two
    assert tuned(train, [6e-3, 2e-2, 6e-2], 2)[0] == [LADDER[0], 6e-3, 2e-2, 6e-2]  # the ladder ends at 2e-3


def test_the_hook_counts_weights_stored_in_bf16_that_did_not_move():
    base = TrainConfig(steps=12, warmup=2, eval_every=6, lr=1e-4)
    runs = [base, replace(base, weight_dtype="bfloat16")]
    hook = Unchanged()
    train_many(ModelConfig(), runs, load_corpus(), workers=1, on_step=hook)
    shares = np.array(hook.shares)
    assert shares.shape == (12, 2)
    assert (shares[:, 0] < 0.01).all()  # FP32: an update is lost only as the cosine nears 0 at the end
    # BF16 at a small rate: after the first update (which rounds the FP32 initial weights) many updates
    # are below half a spacing, and nearly all once the cosine has decayed
    assert shares[0, 1] == 0 and (shares[1:, 1] > 0.2).all() and shares[-1, 1] > 0.9


def test_tail_drop_reads_the_evaluation_nearest_the_tail_start():
    r = SimpleNamespace(curves={"step": [0, 100, 200, 300, 400], "val_loss": [4.0, 3.0, 2.6, 2.5, 2.45]})
    assert _tail_drop(r, 0.25) == 2.5 - 2.45  # 75% of 400 = step 300
    assert _tail_drop(r, 0.5) == 2.6 - 2.45


def test_quantise_tensors_gives_each_slice_its_own_scale():
    import torch

    g = torch.cat([torch.ones(4), torch.full((4,), 1e-3)])
    q = quantise_tensors(g, [(0, 4), (4, 4)], 4, False, torch.Generator())
    assert torch.allclose(q, g)
