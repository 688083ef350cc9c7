"""TrainConfig's precision switches: weights stored in BF16 after every update, and gradients quantised
before it. Quick runs: each switch changes the run, in the way it should, and off it changes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from model.data import load_corpus
from model.decoder import ModelConfig
from model.train import TrainConfig, train_many


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


BASE = TrainConfig(steps=30, warmup=3, eval_every=30, lr=2e-2)


def _final_weights(results) -> list[torch.Tensor]:
    return [torch.cat([t.flatten() for t in r.state_dict.values()]) for r in results]


def test_defaults_change_nothing(corpus):
    a, b = train_many(ModelConfig(), [BASE, replace(BASE, weight_dtype="float32", grad_bits=None)], corpus, workers=1)
    assert a.step_losses == b.step_losses


def test_bf16_weights_are_bf16_and_lose_small_updates(corpus):
    runs = [
        BASE,
        replace(BASE, weight_dtype="bfloat16"),
        replace(BASE, lr=1e-5),
        replace(BASE, lr=1e-5, weight_dtype="bfloat16"),
    ]
    res = train_many(ModelConfig(), runs, corpus, workers=1)
    w = _final_weights(res)
    assert torch.equal(w[1], w[1].bfloat16().float())  # every stored weight is a BF16 value
    assert not torch.equal(w[0], w[0].bfloat16().float())
    assert res[1].step_losses != res[0].step_losses
    # at a small rate most updates are below half a BF16 spacing: the BF16 run moves far less
    init = _final_weights(train_many(ModelConfig(), [replace(BASE, steps=0)], corpus, workers=1))[0]
    assert (w[3] - init.bfloat16().float()).abs().sum() < 0.5 * (w[2] - init).abs().sum()


def test_quantised_gradients_train_and_differ(corpus):
    runs = [BASE, replace(BASE, grad_bits=8), replace(BASE, grad_bits=4, grad_rounding="stochastic")]
    res = train_many(ModelConfig(), runs, corpus, workers=1)
    assert res[1].step_losses != res[0].step_losses and res[2].step_losses != res[0].step_losses
    assert all(r.val_loss_final < r.val_loss_init for r in res)


@pytest.mark.parametrize("bad", [{"weight_dtype": "float8"}, {"grad_bits": 1}, {"grad_rounding": "up"}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        replace(BASE, **bad)


def test_a_power_of_two_loss_scale_is_exact_in_fp32(corpus):
    a, b = train_many(ModelConfig(), [BASE, replace(BASE, loss_scale=2.0**10)], corpus, workers=1, net="autograd")
    assert a.step_losses == b.step_losses


def test_dynamic_scale_backs_off_from_overflow_under_fp16(corpus):
    """Under FP16 autocast a scale of 2^40 overflows; the dynamic rule skips those steps and halves the
    scale until it fits, and the run trains; a static 2^40 would leave the run's gradients non-finite."""
    runs = [replace(BASE, loss_scale=2.0**40, dynamic_scale=True), replace(BASE, loss_scale=2.0**40)]
    with torch.autocast("cpu", dtype=torch.float16, cache_enabled=False):
        dyn, static = train_many(ModelConfig(), runs, corpus, workers=1, net="autograd")
    assert dyn.diverged_at is None and dyn.val_loss_final < dyn.val_loss_init
    assert static.diverged_at == 0


def test_loss_scale_needs_the_autograd_path(corpus):
    with pytest.raises(ValueError, match="autograd"):
        train_many(ModelConfig(), [replace(BASE, loss_scale=8.0)], corpus, workers=1, net="stacked")
