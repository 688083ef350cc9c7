"""The measures chapter 1's experiments compute from curves: plateaus, non-finite values."""

import math

import numpy as np
import pytest
import torch

from model.experiments.ch01_training_loop import _has_inf, _plateau


def test_a_pause_followed_by_a_renewed_fall_is_a_plateau():
    steps = list(range(0, 401, 10))
    # falls fast to step 100, barely moves to step 250, then falls 0.3 per 100 steps
    loss = [
        4 - 0.01 * s if s <= 100 else 3 - 0.0002 * (s - 100) if s <= 250 else 2.97 - 0.003 * (s - 250) for s in steps
    ]
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


def test_logit_growth_is_the_mean_factor_before_the_last_jump_and_the_jump_in_orders():
    from model.experiments.ch01_training_loop import _logit_growth

    # grows x2 a step for 5 steps (0.01 -> 0.32), jumps x1e7, then is not finite at step 7
    row = [0.01 * 2**k for k in range(6)] + [0.32 * 1e7, math.inf, math.nan]
    growth, jump = _logit_growth(np.array([row]), np.array([7.0]))
    assert growth[0] == pytest.approx(2.0) and jump[0] == pytest.approx(7.0)
    with pytest.raises(AssertionError, match="step 2"):
        _logit_growth(np.array([row]), np.array([2.0]))


def test_a_twin_is_the_commuted_sum_as_a_whole_training_line():
    from model.arithmetic import Problems
    from model.experiments.ch01_training_loop import _has_twin

    sums = Problems(np.array([12, 30, 44, 5]), np.array([34, 7, 44, 61]), padded=True)
    text = "34+12=046\n07+30=037x\n44+44=088\n61+05=066\n"  # 07+30 is not a whole line; 44+44 is its own twin
    assert _has_twin(sums, text).tolist() == [True, False, False, True]


def test_per_digit_accuracy_gives_partial_credit_column_by_column():
    from model.arithmetic import Problems, exact_match
    from model.data import Vocab
    from model.decoder import Decoder, ModelConfig
    from model.experiments.ch01_training_loop import _digit_accuracy

    vocab = Vocab.build("0123456789+=\n")
    sums = Problems(np.array([12, 30]), np.array([34, 7]), padded=True)  # answers 046, 037

    class Writes(Decoder):  # always predicts "0", then "4", then "7", whatever it reads
        def forward(self, idx):
            step = idx.shape[1] - len(sums.prompts[0])
            out = torch.full((*idx.shape, vocab.size), -1.0)
            out[:, -1, vocab.encode("047\n"[step])[0]] = 1.0
            return out

    model = Writes(ModelConfig(vocab=vocab.size))
    assert _digit_accuracy(model, vocab, sums) == pytest.approx(4 / 6)  # 0,4,_ and 0,_,7 right
    assert exact_match(model, vocab, sums) == 0.0
    with pytest.raises(ValueError, match="fixed-width"):
        _digit_accuracy(model, vocab, Problems(np.array([1, 12]), np.array([2, 30])))


def test_share_is_zero_where_the_whole_did_not_move():
    from model.experiments.ch01_training_loop import _share

    assert _share(np.array([0.5, 0.0]), np.array([2.0, 0.0])).tolist() == [0.25, 0.0]
