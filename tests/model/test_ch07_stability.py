"""Deck 07's measurements: the attention probe against the Decoder it reads, the near-epsilon share,
the bad batch landing on the step it is meant for, the skip rule and the recovery count."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.data import corpus_from_text
from model.decoder import Decoder, ModelConfig
from model.experiments.ch07_stability import Skipper, _recovery, blowup_step
from model.stability import (
    attention_logits,
    corrupted,
    decoder_from,
    max_entropy,
    near_eps_share,
    probe,
    touched,
    window_starts,
)
from model.train import TrainConfig, train_many


def _model(cfg: ModelConfig, seed: int = 0, scale: float = 1.0) -> Decoder:
    model = Decoder(cfg, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model


def test_the_probes_logits_give_the_decoders_own_attention_output():
    """softmax(logits) @ v through w_o must be what the block's attention layer returns."""
    for cfg in (ModelConfig(), ModelConfig(qk_norm=True), ModelConfig(n_layers=2, n_heads=4)):
        model = _model(cfg, scale=30.0)
        idx = torch.randint(0, cfg.vocab, (4, cfg.context), generator=torch.Generator().manual_seed(1))
        inputs = []
        hooks = [b.attn.register_forward_pre_hook(lambda m, a, seen=inputs: seen.append(a[0])) for b in model.blocks]
        with torch.no_grad():
            model(idx)
        for h in hooks:
            h.remove()
        for block, x, scores in zip(model.blocks, inputs, attention_logits(model, idx), strict=True):
            B, T, D = x.shape
            H = cfg.n_heads
            v = block.attn.w_v(x).view(B, T, H, D // H).transpose(1, 2)
            y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
            with torch.no_grad():
                assert torch.allclose(block.attn.w_o(y), block.attn(x), atol=1e-5)


def test_max_logit_grows_with_the_weights_and_qk_norm_caps_it():
    idx = torch.randint(0, 64, (8, 16), generator=torch.Generator().manual_seed(2))
    small = probe(_model(ModelConfig(), scale=10.0), idx).max_logit.max().item()
    large = probe(_model(ModelConfig(), scale=40.0), idx).max_logit.max().item()
    assert large == pytest.approx(16 * small, rel=1e-3)  # w_q and w_k both x4: logits x16 (pre-LN input)
    cfg = ModelConfig(qk_norm=True)
    capped = probe(_model(cfg, scale=100.0), idx).max_logit.max().item()
    assert capped <= math.sqrt(cfg.d_head) + 1e-4


def test_entropy_is_uniform_at_zero_logits_and_falls_as_attention_sharpens():
    idx = torch.randint(0, 64, (8, 16), generator=torch.Generator().manual_seed(3))
    flat = probe(_model(ModelConfig(), scale=1e-4), idx).entropy
    assert torch.allclose(flat, torch.full_like(flat, max_entropy(16)), atol=1e-4)
    sharp = probe(_model(ModelConfig(), scale=60.0), idx).entropy
    assert (sharp < 0.5 * max_entropy(16)).all()


def test_decoder_from_copies_the_weights():
    model = _model(ModelConfig())
    weights = dict(model.state_dict())
    copy = decoder_from(weights, ModelConfig())
    copy.wte.weight.data.add_(1.0)
    assert not torch.equal(copy.wte.weight, model.wte.weight)


def test_near_eps_share_counts_roots_below_the_factor():
    t, b2, eps = 10, 0.999, 1e-8
    corr = 1 - b2**t
    root = torch.tensor([[1e-9, 5e-8, 2e-7, 1.0]], dtype=torch.float64)  # sqrt(v_hat)
    v = (root.square() * corr).float()
    assert near_eps_share(v, t, b2, eps, 10.0).tolist() == [pytest.approx(0.5)]
    assert near_eps_share(v, t, b2, eps, 100.0).tolist() == [pytest.approx(0.75)]


def test_the_bad_batch_lands_on_its_step_and_nowhere_before():
    """Replaying the data generator finds the windows step k draws: corrupting them changes the
    training loss at step k and at no step before it that draws no corrupted character."""
    text = "".join(chr(97 + (i * 7 + i // 13) % 26) for i in range(6000))
    corpus = corpus_from_text(text)
    cfg = ModelConfig(vocab=corpus.vocab.size, context=8)
    run = TrainConfig(steps=12, batch=4, eval_every=6, seed=0)
    k = 9
    starts = window_starts(corpus.train, run.data_seed_value, run.batch, cfg.context, run.steps)
    fill = torch.zeros(run.batch, cfg.context + 1, dtype=torch.long)
    bad = corrupted(corpus, starts[k], fill)
    assert torch.equal(bad.val, corpus.val) and not torch.equal(bad.train, corpus.train)
    hits = touched(starts, starts[k], cfg.context)
    assert hits[k] == run.batch
    clean_loss = train_many(cfg, [run], corpus, workers=1)[0].step_losses
    bad_loss = train_many(cfg, [run], bad, workers=1)[0].step_losses
    first = int(np.flatnonzero(hits.numpy())[0])
    assert first <= k
    assert clean_loss[:first] == bad_loss[:first]
    assert clean_loss[k] != bad_loss[k]


def test_touched_counts_overlapping_windows():
    starts = torch.tensor([[0, 100], [5, 200], [40, 300]])
    bad = torch.tensor([10])
    # windows hold context + 1 = 9 tokens: [0, 9) stops short of [10, 19), [5, 14) overlaps it
    assert touched(starts, bad, 8).tolist() == [0, 1, 0]
    assert touched(torch.tensor([[1], [2], [18], [19]]), bad, 8).tolist() == [0, 1, 1, 0]


def test_the_skip_rule_drops_a_norm_above_k_times_the_running_median():
    sk = Skipper(torch.tensor([True, False]), k=3.0, window=4, keep=(0, 0))

    class S:
        def __init__(self, step, norm):
            self.step, self.norm = step, torch.tensor(norm)

    for i in range(4):
        assert not sk.skip(S(i, [1.0, 1.0])).any()  # not enough history yet
    assert sk.skip(S(4, [2.9, 5.0])).tolist() == [False, False]  # below 3x; the other run is not skipping
    assert sk.skip(S(5, [3.5, 5.0])).tolist() == [True, False]
    assert sk.skipped == [(5, 0)]


def test_recovery_counts_steps_until_the_difference_is_back_past_its_peak():
    assert _recovery(np.array([0.005, 0.0, 0.001]), 0.01) == 0.0  # never rose above the level
    assert _recovery(np.array([0.005, 0.5, 0.2, 0.02, 0.005, 0.0]), 0.01) == 5.0  # not the dip before the peak
    assert _recovery(np.array([0.5, 0.2, 0.02, 0.005, 0.0]), 0.05) == 3.0
    assert math.isnan(_recovery(np.array([0.5, 0.2, 0.05]), 0.01))


def test_blowup_step_ignores_the_start():
    assert blowup_step([0, 50, 100], [4.2, 3.0, 4.3], 4.17) == 100
    assert math.isnan(blowup_step([0, 50, 100], [4.2, 3.0, 2.9], 4.17))
