"""ModelConfig(residual=False), the residual-highway ablation: the readable Decoder, the
NumPy reference and the stacked fast path compute the same network (each sublayer's
output replaces the stream), as the agreement tests in test_reference.py and
test_stacked.py hold them for the default."""

import math

import numpy as np
import pytest
import torch
from weights import perturbed

from model.decoder import Decoder, ModelConfig, cross_entropy
from model.reference import loss_and_grads
from model.stacked import StackedDecoder, init_stack

ABLATIONS = {
    "pre": ModelConfig(residual=False),
    "pre, 3 layers": ModelConfig(residual=False, n_layers=3),
    "post": ModelConfig(residual=False, norm="post", n_layers=2),
    "none": ModelConfig(residual=False, norm="none", n_layers=2),
    "pre, rms, qk-norm": ModelConfig(residual=False, norm_kind="rms", qk_norm=True, n_layers=2),
}


def _batch(cfg: ModelConfig, B: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randint(0, cfg.vocab, (B, cfg.context), generator=g) for _ in range(2))  # type: ignore[return-value]


def test_the_ablation_is_a_different_network_and_the_default_keeps_its_residuals():
    x, _ = _batch(ModelConfig())
    torch.manual_seed(0)
    with_res = Decoder(ModelConfig())
    torch.manual_seed(0)
    without = Decoder(ModelConfig(residual=False))
    assert ModelConfig().residual is True
    with torch.no_grad():
        block = with_res.blocks[0]
        h = with_res.wte(x) + with_res.wpe.weight[: x.shape[1]]
        a = block.attn(block.ln_1(h))
        assert torch.equal(without.blocks[0](h), block.mlp(block.ln_2(a)))
        assert torch.equal(block(h), h + a + block.mlp(block.ln_2(h + a)))


@pytest.mark.parametrize("name", list(ABLATIONS))
def test_reference_matches_autograd_without_residuals(name):
    cfg = ABLATIONS[name]
    model = perturbed(cfg)
    x, y = _batch(cfg)
    loss = model.loss(x, y)
    loss.backward()
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    ref_loss, grads = loss_and_grads(state, x.numpy(), y.numpy(), cfg)
    assert abs(ref_loss - loss.item()) < 1e-12
    for k, p in model.named_parameters():
        assert p.grad is not None
        assert np.abs(grads[k] - p.grad.numpy()).max() < 1e-12, k


@pytest.mark.parametrize("name", list(ABLATIONS))
def test_stacked_matches_autograd_without_residuals(name):
    cfg = ABLATIONS[name]
    M = 2
    layout, theta = init_stack(cfg, [0, 1])
    theta += 0.3 * torch.randn(theta.shape, generator=torch.Generator().manual_seed(9))
    grad = torch.full_like(theta, math.nan)
    net = StackedDecoder(cfg, layout, theta, grad)
    x, y = _batch(cfg, B=4 * M)
    x, y = x.view(M, 4, -1), y.view(M, 4, -1)
    loss = net.loss_and_grad(x, y)
    for m in range(M):
        model = Decoder(cfg).double()
        model.load_state_dict({k: v.double() for k, v in layout.state_dict(theta[m], cfg).items()})
        ref = cross_entropy(model(x[m]), y[m])
        ref.backward()
        ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
        assert loss[m].item() == pytest.approx(ref.item(), abs=2e-6)
        assert (grad[m].double() - ref_grad).abs().max() <= 2e-5 * ref_grad.abs().max()
