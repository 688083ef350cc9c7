"""model/optim.py: the stacked optimisers against torch.optim, step for step,
and clipping against clip_grad_norm_."""

import math

import pytest
import torch

from model.optim import Optimizer, clip_


@pytest.mark.parametrize(
    "kind, make",
    [
        ("adamw", lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
        ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
        ("sgd", lambda ps: torch.optim.SGD(ps, lr=1e-1, weight_decay=0.1)),
        ("momentum", lambda ps: torch.optim.SGD(ps, lr=1e-1, momentum=0.9, weight_decay=0.1)),
    ],
)
def test_flat_optimisers_match_torch_optim(kind, make):
    lr = 1e-1 if kind in ("sgd", "momentum") else 1e-2
    gen = torch.Generator().manual_seed(0)
    p_ours = torch.randn(1, 300, generator=gen)  # a stack of one model of 300 weights
    p_torch = torch.nn.Parameter(p_ours[0].clone())
    table = torch.full((5, 1), lr, dtype=torch.float64)
    opt_ours, opt_torch = Optimizer(kind, table, [(0.9, 0.95)], [1e-8], [0.1]), make([p_torch])
    for _ in range(5):
        g = torch.randn(300, generator=gen)
        opt_ours.step(p_ours, g[None].clone())
        p_torch.grad = g.clone()
        opt_torch.step()
        assert torch.allclose(p_ours[0], p_torch.detach(), rtol=1e-6, atol=1e-7)


def test_each_model_of_a_stack_has_its_own_settings():
    # two models, two learning-rate schedules, betas, eps and weight decays: each is its own torch.optim.AdamW
    gen = torch.Generator().manual_seed(1)
    p_ours = torch.randn(2, 50, generator=gen)
    settings = [
        dict(betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1),
        dict(betas=(0.8, 0.99), eps=1e-6, weight_decay=0.0),
    ]
    table = torch.tensor([[1e-2, 3e-3], [5e-3, 3e-3], [1e-3, 0.0]], dtype=torch.float64)  # (steps, M)
    opt = Optimizer(
        "adamw",
        table,
        [s["betas"] for s in settings],
        [s["eps"] for s in settings],
        [s["weight_decay"] for s in settings],
    )
    ps = [torch.nn.Parameter(p_ours[m].clone()) for m in range(2)]
    torch_opts = [torch.optim.AdamW([p], lr=1.0, **s) for p, s in zip(ps, settings, strict=True)]
    for step in range(3):
        g = torch.randn(2, 50, generator=gen)
        opt.step(p_ours, g.clone())
        for m, (p, o) in enumerate(zip(ps, torch_opts, strict=True)):
            o.param_groups[0]["lr"] = float(table[step, m])
            p.grad = g[m].clone()
            o.step()
            assert torch.allclose(p_ours[m], p.detach(), rtol=1e-6, atol=1e-7)


def test_state_dict_round_trip_continues_identically():
    table = torch.full((6, 1), 1e-2, dtype=torch.float64)
    gen = torch.Generator().manual_seed(2)
    grads = [torch.randn(1, 20, generator=gen) for _ in range(6)]
    a, b = (
        Optimizer("adamw", table, [(0.9, 0.999)], [1e-8], [0.01]),
        Optimizer("adamw", table, [(0.9, 0.999)], [1e-8], [0.01]),
    )
    pa, pb = torch.ones(1, 20), torch.ones(1, 20)
    for g in grads[:3]:
        a.step(pa, g.clone())
        b.step(pb, g.clone())
    c = Optimizer("adamw", table, [(0.9, 0.999)], [1e-8], [0.01])
    c.load_state_dict(b.state_dict())
    for g in grads[3:]:
        a.step(pa, g.clone())
        c.step(pb, g.clone())
    assert torch.equal(pa, pb) and c.t == 6


def test_clip_is_clip_grad_norm_per_model():
    gen = torch.Generator().manual_seed(3)
    grad = torch.randn(3, 40, generator=gen)
    clip = torch.tensor([0.5, math.inf, 100.0])
    expected = []
    for m in range(3):
        t = torch.zeros(40, requires_grad=True)
        t.grad = grad[m].clone()
        torch.nn.utils.clip_grad_norm_([t], clip[m].item())
        expected.append(t.grad)
    clip_(grad, torch.linalg.vector_norm(grad, dim=1), clip)
    assert torch.allclose(grad, torch.stack(expected), rtol=1e-6, atol=0)


def test_adam_without_bias_correction_uses_the_raw_moments_and_the_default_is_unchanged():
    # first update, uncorrected: m = (1 - b1) g, v = (1 - b2) g^2, p <- p - lr m / (sqrt(v) + eps)
    gen = torch.Generator().manual_seed(3)
    p0, g = torch.randn(2, 40, generator=gen), torch.randn(2, 40, generator=gen)
    table = torch.full((3, 2), 1e-2, dtype=torch.float64)
    p = p0.clone()
    opt = Optimizer("adam", table, [(0.9, 0.999)] * 2, [1e-8] * 2, [0.0] * 2, bias_correction=[False, True])
    opt.step(p, g.clone())
    raw = 1e-2 * (0.1 * g[0].double()) / ((0.001 * g[0].double() ** 2).sqrt() + 1e-8)
    assert torch.allclose((p0[0] - p[0]).double(), raw, rtol=1e-5, atol=1e-9)
    assert torch.allclose((p0[0] - p[0]).abs().max(), torch.tensor(1e-2 * 0.1 / 0.001**0.5), rtol=1e-4)
    # the corrected model of the same stack, and a stack given no flags, equal torch.optim.Adam bit for bit
    q, q_default = p0[1:].clone(), p0[1:].clone()
    ref = torch.nn.Parameter(p0[1].clone())
    torch_opt = torch.optim.Adam([ref], lr=1e-2, betas=(0.9, 0.999), eps=1e-8)
    mine = Optimizer("adam", table[:, :1], [(0.9, 0.999)], [1e-8], [0.0], bias_correction=[True])
    default = Optimizer("adam", table[:, :1], [(0.9, 0.999)], [1e-8], [0.0])
    for _ in range(3):
        h = torch.randn(40, generator=gen)
        mine.step(q, h[None].clone())
        default.step(q_default, h[None].clone())
        ref.grad = h.clone()
        torch_opt.step()
    assert torch.equal(q, q_default)
    assert torch.allclose(q[0], ref.detach(), rtol=1e-6, atol=1e-7)
