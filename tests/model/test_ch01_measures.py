"""The measures chapter 1's experiments compute from curves: plateaus, non-finite values."""

import math

import numpy as np
import torch

from model.experiments.ch01_training_loop import _has_inf, _plateau


def test_a_pause_followed_by_a_renewed_fall_is_a_plateau():
    steps = list(range(0, 401, 10))
    # falls fast to step 100, barely moves to step 250, then falls 0.3 per 100 steps
    loss = [4 - 0.01 * s if s <= 100 else 3 - 0.0002 * (s - 100) if s <= 250 else 2.97 - 0.003 * (s - 250)
            for s in steps]  # fmt: skip
    start, end = _plateau(steps, loss, flat=0.06, span=50, resume=0.12, after=100)
    assert 100 <= start <= 110 and 200 <= end <= 250


def test_a_curve_that_only_slows_down_has_no_plateau():
    steps = list(range(0, 2001, 10))
    loss = [2.3 + 1.9 * math.exp(-s / 150) for s in steps]
    assert _plateau(steps, loss, flat=0.06, span=50, resume=0.12, after=100) == (0, 0)


def test_has_inf_finds_each_models_inf_in_nested_m_major_tensors():
    M = 3
    a = torch.zeros(M, 4)
    att = torch.zeros(M * 2 * 2, 5, 5)  # G = M*B*H, M outermost
    att[2 * 2 * 2] = math.inf  # model 2
    ids = torch.zeros(M, 4, dtype=torch.long)
    assert _has_inf((a, [att, ids, None], (2, 3)), M).tolist() == [False, False, True]
    a[0, 1] = -math.inf
    assert _has_inf((a, att), M).tolist() == [True, False, True]


def test_the_cascade_run_goes_nan_without_layernorm_and_stays_finite_with_it():
    from model.data import load_corpus
    from model.decoder import ModelConfig
    from model.experiments.ch01_training_loop import EXP_OVERFLOW, _instrumented_sgd

    corpus = load_corpus()
    blow = _instrumented_sgd(ModelConfig(norm="none"), [2], 10.0, 14, corpus)
    nan_at = int(np.argmax(np.isnan(blow["loss"][0])))
    assert np.isnan(blow["loss"][0]).any() and blow["max_logit"][0, :nan_at].max() > EXP_OVERFLOW
    assert blow["nan_share"][0, nan_at - 1] == 0.0 and blow["nan_share"][0, nan_at] > 0.9
    assert blow["nan_share_rest"][0, nan_at] == 1.0
    calm = _instrumented_sgd(ModelConfig(), [2], 10.0, 14, corpus)
    assert np.isfinite(calm["loss"]).all() and (calm["nan_share"] == 0).all()
