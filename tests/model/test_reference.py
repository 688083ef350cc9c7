"""model/reference.py against PyTorch: the NumPy float64 forward/backward must
match autograd within 1e-12 for every config variant, central differences
must converge to it at the O(h^2) rate, and each optimiser must match
torch.optim step for step."""

import math

import numpy as np
import pytest
import torch

from model.decoder import Decoder, ModelConfig
from model.reference import (
    adam_step,
    adamw_step,
    clip_by_global_norm,
    erf,
    gelu,
    loss_and_grads,
    momentum_step,
    sgd_step,
)

VARIANTS = {
    "default": {},
    "4 heads": dict(n_heads=4),
    "post-LN": dict(norm="post"),
    "no norm": dict(norm="none"),
    "attention-blind": dict(attention="self"),
    "RMSNorm": dict(norm_kind="rms"),
    "QK-norm": dict(qk_norm=True),
    "QK-norm RMS post": dict(qk_norm=True, norm_kind="rms", norm="post"),
    "z-loss": dict(z_loss=1e-2),
    "2 layers": dict(n_layers=2),
    "muP wide": dict(param="mup", d_model=32),
    "tied": dict(tie_embeddings=True),
    "everything": dict(n_layers=2, n_heads=4, norm="post", qk_norm=True, z_loss=0.1),
}


def torch_model(cfg, seed=0, std=None):
    torch.manual_seed(seed)
    model = Decoder(cfg).double()
    if std is not None:  # perturbed weights: far from init, every nonlinearity active
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, std)
    return model


def batch(seed=0, B=4, T=16):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 64, (B, T), generator=g), torch.randint(0, 64, (B, T), generator=g)


def numpy_state(model):
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("std", [None, 0.3], ids=["init", "perturbed"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_loss_and_grads_match_autograd(name, std):
    cfg = ModelConfig(**VARIANTS[name])
    model = torch_model(cfg, std=std)
    x, y = batch()
    loss = model.loss(x, y)
    loss.backward()
    ref_loss, grads = loss_and_grads(numpy_state(model), x.numpy(), y.numpy(), cfg)
    assert abs(ref_loss - loss.item()) < 1e-12
    params = dict(model.named_parameters(remove_duplicate=False))
    assert set(grads) == set(params)
    for k, p in params.items():
        assert grads[k].shape == p.shape
        assert np.abs(grads[k] - p.grad.numpy()).max() < 1e-12, k


def test_short_sequences_leave_unused_positions_at_zero_gradient():
    cfg = ModelConfig()
    model = torch_model(cfg, std=0.3)
    x, y = batch(T=5)
    model.loss(x, y).backward()
    _, grads = loss_and_grads(numpy_state(model), x.numpy(), y.numpy(), cfg)
    assert np.abs(grads["wpe.weight"] - model.wpe.weight.grad.numpy()).max() < 1e-12
    assert not grads["wpe.weight"][5:].any()


@pytest.mark.parametrize("name", ["default", "everything"])
def test_central_differences_converge_at_second_order(name):
    cfg = ModelConfig(**VARIANTS[name])
    state = numpy_state(torch_model(cfg, std=0.3))
    x, y = (t.numpy() for t in batch())
    _, grads = loss_and_grads(state, x, y, cfg)
    rng = np.random.default_rng(0)
    for key in ["wte.weight", "blocks.0.attn.w_q.weight", "blocks.0.mlp.w_in.weight", "lm_head.weight"]:
        idx = tuple(rng.integers(0, n) for n in state[key].shape)
        if key == "wte.weight":
            idx = (int(x[0, 0]),) + idx[1:]  # a row that is used
        errors = []
        for h in (0.02, 0.01, 0.005):
            plus = {**state, key: state[key].copy()}
            minus = {**state, key: state[key].copy()}
            plus[key][idx] += h
            minus[key][idx] -= h
            fd = (loss_and_grads(plus, x, y, cfg)[0] - loss_and_grads(minus, x, y, cfg)[0]) / (2 * h)
            errors.append(abs(fd - grads[key][idx]))
        # the error is c h^2 + O(h^4): halving h divides it by about 4
        assert errors[2] < 2e-5, (key, errors)
        ratios = [errors[0] / errors[1], errors[1] / errors[2]]
        assert all(3.8 < r < 4.2 for r in ratios), (key, errors, ratios)


def test_erf_and_gelu_to_float64_accuracy():
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 0.5, -0.5, 4.0, -4.0, 30.0, -np.inf, np.inf]])
    exact = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - exact).max() <= 2.3e-16
    assert np.isnan(erf(np.array([np.nan]))).all()
    t = torch.from_numpy(x[np.isfinite(x)])
    assert np.abs(gelu(t.numpy()) - torch.nn.functional.gelu(t).numpy()).max() < 1e-15


# -----------------------------------------------------------------------------
# optimisers: every step starts both sides from the same parameters and gradients
# (Adam amplifies last-bit differences, so trajectories are compared per step)

OPTIMISERS = {
    "sgd": (sgd_step, torch.optim.SGD, dict(lr=0.1, weight_decay=0.01)),
    "momentum": (momentum_step, torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    "momentum dampened": (momentum_step, torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.5)),
    "nesterov": (momentum_step, torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    "adam": (adam_step, torch.optim.Adam, dict(lr=1e-2, betas=(0.9, 0.99), weight_decay=0.01)),
    "adamw": (adamw_step, torch.optim.AdamW, dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-6, weight_decay=0.1)),
    "adamw defaults": (adamw_step, torch.optim.AdamW, dict(lr=3e-2)),
}


@pytest.mark.parametrize("name", list(OPTIMISERS))
def test_optimiser_matches_torch_step_for_step(name):
    ref_step, torch_cls, kw = OPTIMISERS[name]
    cfg = ModelConfig()
    model = torch_model(cfg)
    params = numpy_state(model)
    opt = torch_cls(model.parameters(), **kw)
    state = None
    for step in range(10):  # a real trajectory: reference gradients of the training loss
        x, y = (t.numpy() for t in batch(seed=step))
        _, grads = loss_and_grads(params, x, y, cfg)
        with torch.no_grad():
            for k, p in model.named_parameters():
                p.copy_(torch.from_numpy(params[k]))
                p.grad = torch.from_numpy(grads[k].copy())
        opt.step()
        params, state = ref_step(params, grads, state, **kw)
        for k, p in model.named_parameters():
            assert np.abs(params[k] - p.detach().numpy()).max() < 1e-12, (step, k)
            if "exp_avg" in opt.state[p]:
                assert np.abs(state["exp_avg"][k] - opt.state[p]["exp_avg"].numpy()).max() < 1e-12
                assert np.abs(state["exp_avg_sq"][k] - opt.state[p]["exp_avg_sq"].numpy()).max() < 1e-12
            if "momentum_buffer" in opt.state[p]:
                assert np.abs(state["momentum_buffer"][k] - opt.state[p]["momentum_buffer"].numpy()).max() < 1e-12


def test_optimiser_does_not_modify_its_inputs():
    params = {"w": np.ones(3)}
    grads = {"w": np.full(3, 0.5)}
    new, state = adamw_step(params, grads, None, lr=0.1)
    new2, _ = momentum_step(params, grads, None, lr=0.1)
    assert (params["w"] == 1).all() and (grads["w"] == 0.5).all()
    assert state["step"] == 1 and not np.array_equal(new["w"], params["w"])


@pytest.mark.parametrize("max_norm", [0.1, 1.0, 100.0])
def test_clip_by_global_norm_matches_torch(max_norm):
    rng = np.random.default_rng(1)
    grads = {"a": rng.standard_normal((4, 5)), "b": rng.standard_normal(7)}
    tensors = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads.values()]
    for t, g in zip(tensors, grads.values(), strict=True):
        t.grad = torch.from_numpy(g.copy())
    total = torch.nn.utils.clip_grad_norm_(tensors, max_norm)
    clipped, ref_total = clip_by_global_norm(grads, max_norm)
    assert abs(ref_total - total.item()) < 1e-12
    for t, k in zip(tensors, grads, strict=True):
        assert np.abs(clipped[k] - t.grad.numpy()).max() < 1e-12
    expected = min(1.0, max_norm / (ref_total + 1e-6))  # the epsilon is torch's
    assert np.allclose(clipped["b"], grads["b"] * expected, rtol=0, atol=1e-15)
