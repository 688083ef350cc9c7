"""model/isoflop.py: parameter counts, steps for a budget, parabola minima, the power law and its bootstrap."""

from __future__ import annotations

import math

import numpy as np

from model.decoder import ModelConfig
from model.isoflop import bootstrap, fit_parabola, frontier, n_params, power_law, steps_for


def test_parameter_counts_match_the_decoder_docstring():
    assert n_params(ModelConfig()) == 5376  # wte 64*16 + wpe 16*16 + attn 4*16*16 + mlp 2*16*64 + lm_head 16*64
    assert n_params(ModelConfig(d_model=32, n_layers=2)) == 64 * 32 * 2 + 16 * 32 + 2 * 12 * 32 * 32


def test_steps_spend_the_budget():
    n = 5376
    steps = steps_for(6 * n * 512 * 777, n, 512)
    assert steps == 777


def test_parabola_finds_a_known_minimum_and_flags_an_edge():
    n = 10 ** np.linspace(3, 4, 6)
    loss = 2.0 + 0.5 * (np.log10(n) - 3.4) ** 2
    p = fit_parabola(n, loss)
    assert math.isclose(p.x_min, 3.4, abs_tol=1e-9) and p.inside and math.isclose(p.loss_min, 2.0, abs_tol=1e-9)
    edge = fit_parabola(n, 2.0 + 0.5 * (np.log10(n) - 4.5) ** 2)
    assert not edge.inside


def test_power_law_and_bootstrap_recover_a_planted_exponent():
    budgets = [1e9, 2e9, 4e9, 8e9]
    x_opt = [3.0 + 0.45 * math.log10(c / 1e9) for c in budgets]
    sizes, losses = [], []
    rng = np.random.default_rng(0)
    for x0 in x_opt:
        n = 10 ** np.linspace(x0 - 0.5, x0 + 0.5, 5)
        clean = 2.0 + 0.5 * (np.log10(n) - x0) ** 2
        sizes.append(list(n))
        losses.append(clean[:, None] + rng.normal(0, 0.002, (5, 3)))
    n_opt = [p.n_opt for p in frontier(sizes, [x.mean(axis=1) for x in losses])]
    e, _ = power_law(budgets, n_opt)
    assert abs(e - 0.45) < 0.05
    boot = bootstrap(sizes, losses, budgets, [0, 1, 2], reps=50, seed=1)
    assert boot["exponent"].shape == (50,) and abs(np.nanmedian(boot["exponent"]) - 0.45) < 0.1
    assert boot["n_opt"].shape == (50, 4)
