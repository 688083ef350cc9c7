"""model/memory.py against the published counts it must reproduce (facts.md S09.zero16, S09.korth,
S09.korth_par, S09.ex_act, S10.zero_stages), and its arithmetic on shapes where a hand count is easy."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model import memory as mm

GPT2_XL = mm.Setup(layers=48, hidden=1600, heads=25, seq=1024, micro_batch=1, vocab=50257)


def formula_shape(**kw) -> mm.Setup:
    return mm.as_formula(replace(mm.LLAMA_7B, **kw))


def test_sixteen_bytes_per_parameter_in_mixed_precision_with_adam():  # S09.zero16
    assert mm.state_bytes_per_param("mixed", "adam") == (2, 2, 12)
    assert sum(mm.state_bytes_per_param("mixed", "adam")) == 16
    # GPT-2 1.5B: at least 24 GB of model states against 3 GB of 16-bit weights
    psi = 1.5e9
    assert 16 * psi / 1e9 == 24.0 and 2 * psi / 1e9 == 3.0
    m = mm.training_memory(GPT2_XL)
    assert m.states == 16 * m.n_params and m.params == 2 * m.n_params
    assert 1.5e9 < m.n_params < 1.7e9  # GPT-2 XL's shape: 1.5B, plus an untied head here


def test_other_precisions_and_optimisers():
    assert mm.state_bytes_per_param("fp32", "adam") == (4, 4, 8)
    assert mm.state_bytes_per_param("fp32", "momentum") == (4, 4, 4)
    assert mm.state_bytes_per_param("fp32", "sgd") == (4, 4, 0)
    assert mm.state_bytes_per_param("mixed", "sgd") == (2, 2, 4)
    assert mm.state_bytes_per_param("mixed", "momentum") == (2, 2, 8)


def test_korthikanti_per_layer_terms():  # S09.korth
    terms = mm.layer_terms(formula_shape())
    assert terms == {"attention": (11, 5), "mlp": (19, 0), "norms": (4, 0)}
    su = formula_shape(seq=512, micro_batch=3)
    s, b, h, a = su.seq, su.micro_batch, su.hidden, su.heads
    assert mm.layer_activation_bytes(su) == s * b * h * (34 + 5 * a * s / h)


@pytest.mark.parametrize("t", [1, 2, 4, 8])
def test_korthikanti_parallel_and_recompute(t):  # S09.korth_par
    su = formula_shape(tensor_parallel=t)
    s, b, h, a = su.seq, su.micro_batch, su.hidden, su.heads
    sbh = s * b * h
    assert mm.layer_activation_bytes(su) == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)), rel=1e-15)
    sp = replace(su, sequence_parallel=True)
    assert mm.layer_activation_bytes(sp) == pytest.approx(sbh / t * (34 + 5 * a * s / h), rel=1e-15)
    assert mm.layer_activation_bytes(replace(sp, checkpointing="selective")) == pytest.approx(34 * sbh / t, rel=1e-15)
    assert mm.layer_activation_bytes(replace(su, checkpointing="full")) == 2 * sbh
    if t == 1:
        assert mm.layer_activation_bytes(replace(su, checkpointing="selective")) == 34 * sbh


def test_llama7b_example():  # S09.ex_act, with the formula's assumptions
    su = formula_shape()
    assert 34 + 5 * su.heads * su.seq / su.hidden == 114
    assert round(mm.layer_activation_bytes(su) / 1e9, 2) == 0.96
    assert round(su.layers * mm.layer_activation_bytes(su) / 1e9, 1) == 30.6
    assert round(mm.layer_activation_bytes(replace(su, checkpointing="selective")) / 1e9, 2) == 0.29


def test_llama7b_as_built_swiglu_no_dropout():
    su = mm.LLAMA_7B
    terms = mm.layer_terms(su)
    f = su.ffn / su.hidden
    assert terms["mlp"] == (2 + 3 * 2 * f, 0) and terms["attention"] == (10, 2)
    # SwiGLU's MLP keeps more than the GELU MLP's 18 (without the mask), the layer less (no dropout)
    assert terms["mlp"][0] > 18
    assert mm.layer_activation_bytes(su) < mm.layer_activation_bytes(mm.as_formula(su))
    m = mm.training_memory(su)
    assert m.n_params == 6_738_415_616  # the released LLaMA-7B's count
    assert round(m.states / 1e9) == 108  # 6.7B x 16 B, S09.ex_states: about 107 GB


def test_zero_stages():  # S10.zero_stages: Ψ = 7.5B, N_d = 64 -> 120 / 31.4 / 16.6 / 1.9 GB
    psi = 7.5e9

    def per_gpu(stage: int) -> float:
        w, g, k = mm.state_bytes_per_param("mixed", "adam")
        nd = 64
        return (w * psi / (nd if stage >= 3 else 1) + g * psi / (nd if stage >= 2 else 1)
                + k * psi / (nd if stage >= 1 else 1)) / 1e9  # fmt: skip

    assert [round(per_gpu(z), 1) for z in range(4)] == [120.0, 31.4, 16.6, 1.9]
    su = replace(GPT2_XL, data_parallel=64)
    n = mm.parameters(su)
    for z, want in enumerate((16 * n, 4 * n + 12 * n / 64, 2 * n + 14 * n / 64, 16 * n / 64)):
        assert mm.training_memory(replace(su, zero=z)).states == pytest.approx(want, rel=1e-15)


def test_activations_do_not_split_over_data_parallel_ranks():
    one = mm.training_memory(GPT2_XL)
    many = mm.training_memory(replace(GPT2_XL, data_parallel=8, zero=3))
    assert many.activations == one.activations and many.states < one.states


def test_parameters_by_hand():
    su = mm.Setup(layers=2, hidden=8, heads=2, seq=4, micro_batch=1, vocab=10)
    assert mm.parameters(su) == 2 * (4 * 64 + 2 * 8 * 32 + 16) + 8 + 2 * 10 * 8
    assert mm.parameters(replace(su, norm_gains=False)) == 2 * (4 * 64 + 2 * 8 * 32) + 2 * 10 * 8


def test_fp32_activations_take_four_bytes_a_value():
    su = mm.Setup(layers=1, hidden=16, heads=2, seq=16, micro_batch=1, vocab=64, dropout=False, precision="fp32")
    assert mm.layer_terms(su) == {"attention": (20, 4), "mlp": (36, 0), "norms": (8, 0)}


@pytest.mark.parametrize("bad", [{"precision": "fp8"}, {"optimiser": "lion"}, {"checkpointing": "some"},
                                 {"zero": 4}, {"layers": 0}, {"mlp": "relu"}])  # fmt: skip
def test_bad_settings_are_named(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        replace(GPT2_XL, **bad)
