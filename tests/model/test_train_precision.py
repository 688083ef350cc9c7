"""TrainConfig's precision switches: weights stored in BF16 after every update, and gradients quantised
before it. Quick runs: each switch changes the run, in the way it should, and off it changes nothing."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from model.data import load_corpus
from model.decoder import Linear, ModelConfig
from model.precision import e4m3
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


def test_a_run_quantised_stochastically_does_not_depend_on_its_stack_mates(corpus):
    run = replace(BASE, grad_bits=4, grad_rounding="stochastic")
    alone = train_many(ModelConfig(), [run], corpus, workers=1)[0]
    stacked = train_many(ModelConfig(), [replace(run, seed=5), run], corpus, workers=1)[1]
    assert alone.step_losses == stacked.step_losses


def test_fp8_linear_casts_input_and_weight_and_passes_gradients_straight_through():
    torch.manual_seed(0)
    lin = Linear(16, 64, fp8="tensor")
    x = torch.randn(3, 5, 16, requires_grad=True)
    y = lin(x)
    x8 = e4m3(x.detach().reshape(-1, 16), "tensor").reshape(3, 5, 16)
    w8 = e4m3(lin.weight.detach(), "tensor")
    assert torch.equal(y.detach(), x8 @ w8.T)
    assert not torch.equal(y.detach(), x.detach() @ lin.weight.detach().T)
    y.sum().backward()
    # straight through: the gradients are the FP32 product's rules applied to the cast operands
    assert torch.allclose(x.grad, torch.ones(3, 5, 64) @ w8)
    assert torch.allclose(lin.weight.grad, torch.ones(15, 64).T @ x8.reshape(15, 16))
    plain = Linear(16, 64)
    assert torch.equal(plain(x.detach()), x.detach() @ plain.weight.detach().T)


def test_fp8_models_train_on_the_autograd_path_and_the_scalings_differ(corpus):
    runs = [BASE]
    res = {k: train_many(ModelConfig(fp8=k), runs, corpus, workers=1)[0] for k in (None, "none", "tensor", "tile")}
    losses = {k: r.step_losses for k, r in res.items()}
    assert losses[None] != losses["none"] != losses["tensor"] != losses["tile"]
    assert all(r.val_loss_final < r.val_loss_init for r in res.values())
    with pytest.raises(ValueError, match="fp8"):
        ModelConfig(fp8="block")


def test_gradients_are_quantised_per_weight_tensor():
    """A tensor of tiny gradients keeps its own full scale: quantised with the whole gradient's, it would
    round to zero at 4 bits."""
    from model.decoder import Decoder
    from model.precision import quantise
    from model.stacked import Layout

    layout = Layout(Decoder(ModelConfig()))
    spans = layout.spans()
    assert sum(n for _, n in spans) == 5376 and spans[0] == (0, 64 * 16)
    g = torch.ones(5376)
    o, n = spans[1]
    g[o : o + n] = 1e-3
    assert torch.all(quantise(g, 4, False)[o : o + n] == 0)  # one scale for everything flushes it
    assert torch.allclose(quantise(g[o : o + n], 4, False), g[o : o + n])  # its own scale keeps it


def test_a_stochastically_quantised_run_resumes_bit_for_bit(corpus, tmp_path):
    run = replace(BASE, grad_bits=4, grad_rounding="stochastic")
    whole = train_many(ModelConfig(), [run], corpus, workers=1)[0]
    path = tmp_path / "ck.pt"
    train_many(ModelConfig(), [run], corpus, workers=1, checkpoint=path, stop_at=13)
    resumed = train_many(ModelConfig(), [run], corpus, workers=1, checkpoint=path)[0]
    assert resumed.step_losses == whole.step_losses
