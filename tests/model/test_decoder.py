"""model/decoder.py: parameter count, names, shapes, config variants, µP."""

import math

import pytest
import torch

from model.decoder import Decoder, ModelConfig, cross_entropy, mup_lr_scales, num_params

NAMES = [
    "wte.weight",
    "wpe.weight",
    "blocks.0.attn.w_q.weight",
    "blocks.0.attn.w_k.weight",
    "blocks.0.attn.w_v.weight",
    "blocks.0.attn.w_o.weight",
    "blocks.0.mlp.w_in.weight",
    "blocks.0.mlp.w_out.weight",
    "lm_head.weight",
]


def test_default_config_has_5376_parameters_with_stable_names():
    model = Decoder(ModelConfig())
    assert num_params(model) == 5_376 == 64 * 16 + 16 * 16 + 4 * 16 * 16 + 2 * 16 * 64 + 16 * 64
    assert list(model.state_dict()) == NAMES
    assert num_params(Decoder(ModelConfig(n_heads=4))) == 5_376
    assert num_params(Decoder(ModelConfig(n_layers=2))) == 5_376 + 3_072
    assert num_params(Decoder(ModelConfig(tie_embeddings=True))) == 5_376 - 1_024


def test_logits_shape_and_short_inputs():
    model = Decoder(ModelConfig())
    x = torch.randint(0, 64, (3, 16))
    assert model(x).shape == (3, 16, 64)
    assert torch.allclose(model(x[:, :5]), model(x)[:, :5], atol=1e-6)  # causal
    with pytest.raises(ValueError, match="exceeds the context"):
        model(torch.zeros(1, 17, dtype=torch.long))


def test_attention_is_causal():
    model = Decoder(ModelConfig(n_layers=2, init_std=0.3))
    x = torch.randint(0, 64, (2, 16))
    x2 = x.clone()
    x2[:, 9] = (x2[:, 9] + 1) % 64
    a, b = model(x), model(x2)
    assert torch.equal(a[:, :9], b[:, :9])
    assert not torch.allclose(a[:, 9:], b[:, 9:])


def test_init_is_seeded_and_normal():
    a = Decoder(ModelConfig(), torch.Generator().manual_seed(0))
    b = Decoder(ModelConfig(), torch.Generator().manual_seed(0))
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in NAMES)
    w = torch.cat([p.reshape(-1) for p in a.parameters()])
    assert abs(w.std().item() - 0.02) < 0.001 and abs(w.mean().item()) < 0.001


def test_loss_at_init_is_near_ln_vocab():
    model = Decoder(ModelConfig(), torch.Generator().manual_seed(0))
    x = torch.randint(0, 64, (64, 16), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 64, (64, 16), generator=torch.Generator().manual_seed(2))
    assert abs(model.loss(x, y).item() - math.log(64)) < 0.02


def test_cross_entropy_z_loss():
    logits = torch.randn(2, 3, 5, dtype=torch.float64)
    y = torch.randint(0, 5, (2, 3))
    lse = torch.logsumexp(logits, -1)
    ce = (lse - logits.gather(-1, y[..., None])[..., 0]).mean()
    assert torch.allclose(cross_entropy(logits, y), ce)
    assert torch.allclose(cross_entropy(logits, y, 0.1), ce + 0.1 * (lse**2).mean())


@pytest.mark.parametrize(
    "kw",
    [
        dict(norm="post"),
        dict(norm="none"),
        dict(norm_kind="rms"),
        dict(qk_norm=True),
        dict(z_loss=1e-4),
        dict(tie_embeddings=True),
        dict(param="mup", d_model=32),
    ],
)
def test_variants_run_and_backpropagate(kw):
    model = Decoder(ModelConfig(**kw))
    x = torch.randint(0, 64, (2, 16))
    loss = model.loss(x, x)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None for p in model.parameters())


def test_bad_config_raises():
    with pytest.raises(ValueError, match="norm must be"):
        ModelConfig(norm="sandwich")
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(n_heads=3)


def test_mup_is_standard_at_base_width():
    std = Decoder(ModelConfig(), torch.Generator().manual_seed(0))
    mup = Decoder(ModelConfig(param="mup"), torch.Generator().manual_seed(0))
    x = torch.randint(0, 64, (2, 16))
    assert torch.equal(std(x), mup(x))
    assert set(mup_lr_scales(ModelConfig(param="mup")).values()) == {1.0}


def test_mup_scales():
    cfg = ModelConfig(param="mup", d_model=64, base_d_model=16, n_heads=2)
    assert cfg.width_mult == 4.0 and cfg.logit_mult == 0.25
    assert cfg.attn_scale == pytest.approx(math.sqrt(8) / 32)
    scales = mup_lr_scales(cfg)
    assert scales["wte.weight"] == scales["wpe.weight"] == scales["lm_head.weight"] == 1.0
    assert scales["blocks.0.attn.w_q.weight"] == scales["blocks.0.mlp.w_out.weight"] == 0.25
    model = Decoder(cfg, torch.Generator().manual_seed(0))
    assert set(scales) == {n for n, _ in model.named_parameters()}
    hidden = model.blocks[0].mlp.w_in.weight
    assert abs(hidden.std().item() - 0.01) < 0.001  # 0.02 / sqrt(4)
    assert abs(model.wte.weight.std().item() - 0.02) < 0.002


def test_attention_blind_model_sees_only_its_own_position():
    """attention="self": changing an earlier character leaves later predictions unchanged
    (the causal model's change), because nothing moves between positions."""
    torch.manual_seed(0)
    blind = Decoder(ModelConfig(attention="self"))
    torch.manual_seed(0)
    causal = Decoder(ModelConfig())
    x = torch.randint(0, 64, (2, 16))
    x2 = x.clone()
    x2[:, 0] = (x[:, 0] + 1) % 64
    with torch.no_grad():
        assert torch.equal(blind(x)[:, 1:], blind(x2)[:, 1:])
        assert not torch.allclose(causal(x)[:, 1:], causal(x2)[:, 1:])
    with pytest.raises(ValueError, match="attention"):
        ModelConfig(attention="full")
