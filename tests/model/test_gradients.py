"""Per-example gradients and the noise scale (model/gradients.py)."""

import math

import pytest
import torch

from model.decoder import Decoder, ModelConfig
from model.gradients import noise_scale, per_example_grads
from model.stacked import Layout


def _windows(n: int, cfg: ModelConfig, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg.vocab, (n, cfg.context + 1), generator=g)
    return ids[:, :-1], ids[:, 1:]


@pytest.mark.parametrize("tie", [False, True])
def test_each_row_is_that_windows_autograd_gradient_in_layout_order(tie):
    cfg = ModelConfig(tie_embeddings=tie)
    torch.manual_seed(3)
    model = Decoder(cfg)
    x, y = _windows(5, cfg)
    g = per_example_grads(model, x, y, chunk=2)  # chunks of 2, 2 and 1
    assert g.shape == (5, Layout(model).size)
    for i in range(5):
        model.zero_grad()
        model.loss(x[i : i + 1], y[i : i + 1]).backward()
        want = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        torch.testing.assert_close(g[i], want, rtol=1e-5, atol=1e-7)


def test_the_mean_of_the_rows_is_the_batch_gradient():
    cfg = ModelConfig()
    torch.manual_seed(0)
    model = Decoder(cfg)
    x, y = _windows(8, cfg, seed=1)
    g = per_example_grads(model, x, y)
    model.zero_grad()
    model.loss(x, y).backward()
    torch.testing.assert_close(
        g.mean(0), torch.cat([p.grad.reshape(-1) for p in model.parameters()]), rtol=1e-5, atol=1e-7
    )


def test_noise_scale_on_hand_made_gradients():
    # rows (1, 0), (3, 0), (2, 2), (2, -2): mean (2, 0); deviations squared 1, 1, 4, 4 -> tr = 10 / 3
    g = torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 2.0], [2.0, -2.0]])
    ns = noise_scale(g)
    assert ns.n == 4
    assert ns.trace_sigma == pytest.approx(10 / 3, rel=1e-12)
    assert ns.grad_sq == pytest.approx(4 - 10 / 12, rel=1e-12)
    assert ns.b_simple == pytest.approx((10 / 3) / (4 - 10 / 12), rel=1e-12)


def test_identical_gradients_have_no_noise_and_pure_noise_has_no_signal():
    assert noise_scale(torch.ones(3, 4)).b_simple == 0.0
    assert noise_scale(torch.tensor([[1.0], [-1.0]])).b_simple == math.inf  # |ḡ|² = 0, so |G|² < 0
    with pytest.raises(ValueError, match="at least two"):
        noise_scale(torch.ones(1, 4))
