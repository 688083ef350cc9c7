"""The measures chapter 9's experiments compute: bytes per parameter from the tensors, each layer's
saved bytes against the adapted formula, checkpointing applied from outside the Decoder (same loss and
gradients, fewer bytes held), and the calculator's LLaMA-7B shape against the cited rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from model import memory as mm
from model.decoder import Decoder, ModelConfig
from model.experiments.ch03_backprop import saved_tensors
from model.experiments.ch09_memory import (
    PARTS,
    adapted_terms,
    checkpointed,
    formula_layer,
    held_after_forward,
    per_layer,
    state_bytes,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
@pytest.mark.parametrize("optimiser", ["sgd", "momentum", "adam"])
def test_bytes_per_parameter_read_from_the_tensors_equal_the_count(precision, optimiser):
    cfg = ModelConfig(n_layers=2)
    sb = state_bytes(cfg, precision, optimiser, seed=0)
    n = sb.n_params
    assert (sb.params / n, sb.grads / n, sb.optimiser / n) == mm.state_bytes_per_param(precision, optimiser)
    assert sb.counters == (4 * len(list(Decoder(cfg).parameters())) if optimiser == "adam" else 0)


@pytest.mark.parametrize("dtype, v", [(torch.float32, 4), (torch.bfloat16, 2)])
@pytest.mark.parametrize("h, a, s, b", [(16, 2, 16, 3), (32, 4, 8, 1), (24, 3, 20, 2)])
def test_each_layer_saves_the_adapted_formula_term_by_term(dtype, v, h, a, s, b):
    cfg = ModelConfig(d_model=h, n_heads=a, context=s, n_layers=2)
    torch.manual_seed(0)
    model = Decoder(cfg).to(dtype)
    x = torch.randint(0, cfg.vocab, (b, s))
    layers = per_layer(saved_tensors(model, x, x), cfg.n_layers)
    want = adapted_terms(v, s, b, h, a)
    for layer in layers:
        assert layer == {p: want[p] for p in PARTS}


def test_the_adapted_formula_is_not_the_published_one():
    """Dropout's terms make the difference: the published count is larger, more so at long context."""
    h, a = 16, 2
    ours = {s: sum(adapted_terms(2, s, 1, h, a).values()) - 4 * 2 * s for s in (16, 128)}
    theirs = {s: s * h * (34 + 5 * a * s / h) for s in (16, 128)}
    assert theirs[16] > ours[16] and theirs[128] / ours[128] > theirs[16] / ours[16]


@pytest.mark.parametrize("mode", ["selective", "full"])
def test_checkpointing_keeps_the_loss_and_gradients(mode):
    cfg = ModelConfig(d_model=32, n_heads=4, context=32, n_layers=3)
    x, y = torch.randint(0, cfg.vocab, (2, 4, 32))
    grads = {}
    for m in ("none", mode):
        torch.manual_seed(1)
        model = checkpointed(Decoder(cfg), m)
        loss = model.loss(x, y)
        loss.backward()
        grads[m] = (float(loss.detach()), [p.grad.clone() for p in model.parameters()])
    assert grads[mode][0] == grads["none"][0]
    for g, r in zip(grads[mode][1], grads["none"][1], strict=True):
        assert torch.equal(g, r)


def test_checkpointing_holds_fewer_bytes_in_the_formula_order():
    cfg = ModelConfig(d_model=64, n_heads=4, context=64, n_layers=4)
    x, y = torch.randint(0, cfg.vocab, (2, 8, 64))
    held = {}
    for mode in ("none", "selective", "full"):
        torch.manual_seed(0)
        model = checkpointed(Decoder(cfg), mode)
        held_after_forward(model, x, y)  # warm the allocator
        held[mode] = min(held_after_forward(model, x, y) for _ in range(2))
    assert held["full"] < held["selective"] < held["none"]
    # within 10% of the formula over the layers (the part outside them is the same in every mode)
    outside = held["none"] - cfg.n_layers * formula_layer("none", 4, 64, 8, 64, 4)
    for mode in ("selective", "full"):
        want = cfg.n_layers * formula_layer(mode, 4, 64, 8, 64, 4) + outside
        assert abs(held[mode] / want - 1) < 0.1, (mode, held[mode], want)


def test_formula_modes():
    terms = adapted_terms(4, 16, 2, 32, 4)
    assert formula_layer("none", 4, 16, 2, 32, 4) == sum(terms.values())
    assert formula_layer("selective", 4, 16, 2, 32, 4) == sum(terms.values()) - terms["attention matrix"]
    assert formula_layer("full", 4, 16, 2, 32, 4) == 4 * 16 * 2 * 32


def test_unknown_checkpointing_mode_is_named():
    with pytest.raises(ValueError, match="some"):
        checkpointed(Decoder(ModelConfig()), "some")


def test_the_calculator_preset_is_the_cited_llama_7b():
    rows = {r["key"]: r["value"] for r in yaml.safe_load((ROOT / "results" / "cited.yaml").read_text())["numbers"]}
    su = mm.LLAMA_7B
    assert (su.layers, su.hidden, su.heads, su.ffn, su.vocab) == (
        rows["ch09.llama.layers"], rows["ch09.llama.hidden"], rows["ch09.llama.heads"], rows["ch09.llama.ffn"],
        rows["ch09.llama.vocab"],
    )  # fmt: skip
    assert su.seq == rows["ch03.korth.llama7b_seq"]
