"""The measures chapter 3's experiments compute: slopes and best steps of the finite-difference
V, the difference quotients, each op's backward check, the layer-input gradient norms, the
saved-tensor count against the hand count, and the FLOPs counted from shapes."""

import math

import numpy as np
import pytest
import torch

from model.decoder import Decoder, ModelConfig
from model.experiments.ch03_backprop import (
    best_step,
    differences,
    geo_mean,
    hand_count,
    layer_input_grad_norms,
    layer_profile,
    loglog_slope,
    matmul_flops,
    op_diffs,
    part_of,
    saved_tensors,
)


def test_loglog_slope_reads_the_power_of_a_power_law_inside_its_window():
    h = 10.0 ** -np.arange(0, 13, 0.5)
    err = 3e-2 * h**2 + 1e-16 / h  # truncation O(h^2) on the right, round-off O(1/h) on the left
    assert loglog_slope(h, err, 1e-4, 1e-1) == pytest.approx(2.0, abs=1e-3)  # round-off is 1e-8 of it there
    assert loglog_slope(h, err, 1e-12, 1e-8) == pytest.approx(-1.0, abs=1e-3)
    assert loglog_slope(h, 7 * h**2, 1e-4, 1e-1) == pytest.approx(2.0, abs=1e-12)
    assert loglog_slope(h, 5 * h, 1e-3, 1.0) == pytest.approx(1.0, abs=1e-12)
    assert math.isnan(loglog_slope(h, err, 0.2, 0.5))  # fewer than three points


def test_best_step_is_the_bottom_of_the_v():
    h = np.array([1e-1, 1e-2, 1e-3, 1e-4])
    assert best_step(h, [4e-3, 5e-5, 2e-4, 3e-3]) == (1e-2, 5e-5)


def test_differences_of_a_cubic_have_the_textbook_errors():
    # f(h) = 2h + 3h^2 + 5h^3 at 0: f'(0) = 2; central error 5 h^2, one-sided error 3 h + 5 h^2
    def f(h: float) -> float:
        return 2 * h + 3 * h * h + 5 * h**3

    central, one_sided = differences(f, 0.1, f(0.0))
    assert central == pytest.approx(2 + 5 * 0.01, rel=1e-12)
    assert one_sided == pytest.approx(2 + 3 * 0.1 + 5 * 0.01, rel=1e-12)
    assert geo_mean([1e-2, 1e-4]) == pytest.approx(1e-3)


def test_every_ops_backward_matches_float64_autograd():
    diffs = op_diffs(0)
    assert set(diffs) == {"linear", "gelu", "softmax", "attention", "layernorm"}
    for op, (diff, largest) in diffs.items():
        assert 0 <= diff < 1e-13, op
        assert largest > 0.1, op


def test_layer_input_gradient_norms_are_the_blocks_input_gradients():
    cfg = ModelConfig(n_layers=2)
    torch.manual_seed(0)
    model = Decoder(cfg).double()
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randint(0, 64, (4, 16), generator=g) for _ in range(2))
    norms = layer_input_grad_norms(model, x, y)
    # by hand: the stream entering block 0 is the embedding sum; entering block 1, block 0's output
    h0 = (model.wte(x) + model.wpe.weight[:16]).detach().requires_grad_()
    h1 = model.blocks[0](h0)
    h1.retain_grad()
    out = model.blocks[1](h1)
    logits = model.lm_head(model.ln_f(out))
    torch.nn.functional.cross_entropy(logits.reshape(-1, 64), y.reshape(-1)).backward()
    assert norms == pytest.approx([float(h0.grad.norm()), float(h1.grad.norm())], rel=1e-12)
    assert len(layer_input_grad_norms(Decoder(ModelConfig(n_layers=3, residual=False)), x, y)) == 3
    # the scale-free measures: the gradient times its input's norm, and each block's weight
    # gradient over its weights, from the same backward pass
    prof = layer_profile(model, x, y)
    assert prof.grad == pytest.approx(norms, rel=1e-12)
    assert prof.act == pytest.approx([float(h0.detach().norm()), float(h1.detach().norm())], rel=1e-12)
    assert prof.scaled == pytest.approx([a * b for a, b in zip(prof.grad, prof.act, strict=True)], rel=1e-12)
    for block, rel in zip(model.blocks, prof.weight_rel, strict=True):
        w = torch.cat([p.reshape(-1) for p in block.parameters()])
        gw = torch.cat([p.grad.reshape(-1) for p in block.parameters()])
        assert rel == pytest.approx(float(gw.norm() / w.norm()), rel=1e-12)
    # without residuals, embeddings 10x larger: the first block's input gradient shrinks 10x (its
    # norm divides by the scale), the product does not, and nothing after the first norm changes
    torch.manual_seed(0)
    plain = Decoder(ModelConfig(n_layers=2, residual=False)).double()
    small, big = layer_profile(plain, x, y), layer_profile(_scaled_embeddings(plain, 10.0), x, y)
    assert big.grad[0] == pytest.approx(small.grad[0] / 10, rel=2e-2)  # (up to the norm's eps)
    assert big.scaled[0] == pytest.approx(small.scaled[0], rel=2e-2)
    assert big.grad[1] == pytest.approx(small.grad[1], rel=2e-2)


def _scaled_embeddings(model, factor):
    import copy

    other = copy.deepcopy(model)
    with torch.no_grad():
        other.wte.weight.mul_(factor)
        other.wpe.weight.mul_(factor)
    return other


@pytest.mark.parametrize(
    "cfg, B, T",
    [
        (ModelConfig(), 32, 16),
        (ModelConfig(), 3, 5),
        (ModelConfig(n_layers=2, n_heads=4), 2, 16),
        (ModelConfig(context=40), 4, 40),
    ],
)
def test_saved_tensors_equal_the_hand_count(cfg, B, T):
    torch.manual_seed(0)
    model = Decoder(cfg)
    x, y = torch.randint(0, cfg.vocab, (B, T)), torch.randint(0, cfg.vocab, (B, T))
    saved = saved_tensors(model, x, y)
    hand = hand_count(cfg, B, T)
    by_part = dict.fromkeys(hand, 0)
    for s in saved:
        by_part[part_of(s)] += s.nbytes
    assert by_part == hand
    # a step with no backward pass saves nothing
    with torch.no_grad():
        assert saved_tensors(model, x, y) == []


def test_the_default_step_saves_16d_plus_4_plus_ht_values_per_token_per_block():
    cfg = ModelConfig()
    one, two = hand_count(cfg, 1, 16), hand_count(ModelConfig(n_layers=2), 1, 16)
    per_block = sum(two.values()) - sum(one.values())
    assert per_block == 4 * 16 * (16 * cfg.d_model + 4 + cfg.n_heads * 16)


@pytest.mark.parametrize("cfg", [ModelConfig(), ModelConfig(n_layers=2, n_heads=4, d_model=32)])
def test_flops_from_shapes_match_the_counter_and_the_backward_is_twice_the_forward(cfg):
    from torch.utils.flop_counter import FlopCounterMode

    B, T = 4, cfg.context
    torch.manual_seed(0)
    model = Decoder(cfg)
    x = torch.randint(0, cfg.vocab, (B, T))
    with FlopCounterMode(display=False) as fwd:
        loss = model.loss(x, x)
    with FlopCounterMode(display=False) as bwd:
        loss.backward()
    per_token = sum(matmul_flops(cfg, T).values())
    assert fwd.get_total_flops() == per_token * B * T
    assert bwd.get_total_flops() == 2 * per_token * B * T
    # 6 N' + 12 L D T, with N' the weights in matrix products (everything but wte and wpe)
    n_matmul = sum(p.numel() for n, p in model.named_parameters() if n not in ("wte.weight", "wpe.weight"))
    assert 3 * per_token == 6 * n_matmul + 12 * cfg.n_layers * cfg.d_model * T
