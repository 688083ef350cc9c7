"""The critical-batch fit, its bootstrap over seeds and the stopping rule of ch05.batch_target."""

import math

import numpy as np
import pytest

from model.experiments.ch05_batch_target import _done, bootstrap_bcrit, fit_bcrit, interval

BATCHES = [8, 16, 32, 64, 128]


def _trade_off(s_min: float, b_crit: float) -> list[float]:
    return [s_min * (1 + b_crit / b) for b in BATCHES]  # S = S_min (1 + B_crit / B)


@pytest.mark.parametrize("relative", [True, False])
def test_the_fit_recovers_the_trade_off_it_was_made_from(relative):
    s_min, b_crit = fit_bcrit(BATCHES, _trade_off(150.0, 40.0), relative)
    assert s_min == pytest.approx(150.0)
    assert b_crit == pytest.approx(40.0)


def test_the_two_weightings_differ_on_noisy_points():
    steps = np.array(_trade_off(150.0, 40.0)) * np.array([1.1, 0.95, 1.0, 1.05, 0.9])
    assert fit_bcrit(BATCHES, steps, True)[1] != pytest.approx(fit_bcrit(BATCHES, steps, False)[1], rel=1e-3)


def test_steps_that_do_not_level_off_have_no_finite_critical_batch():
    steps = [1000 / b for b in BATCHES]  # perfect scaling all the way: S_min = 0
    steps[-1] *= 0.9  # and a little better than perfect at the end: the intercept goes negative
    assert fit_bcrit(BATCHES, steps)[1] == math.inf


def test_the_fit_refuses_too_few_points():
    with pytest.raises(ValueError, match="two or more"):
        fit_bcrit([8], [100.0])


def test_seeds_that_agree_leave_no_interval_and_seeds_that_differ_do():
    exact = [[s] * 3 for s in _trade_off(150.0, 40.0)]
    boot = bootstrap_bcrit(BATCHES, exact, n=50)
    assert boot == pytest.approx(np.full(50, 40.0))
    noisy = [[0.8 * s, s, 1.2 * s] for s in _trade_off(150.0, 40.0)]
    lo, hi = interval(bootstrap_bcrit(BATCHES, noisy, n=400, seed=1))
    assert lo < 40.0 < hi
    assert hi - lo > 5.0
    assert interval(bootstrap_bcrit(BATCHES, noisy, n=400, seed=1)) == (lo, hi)  # seeded: repeatable


def test_the_interval_keeps_an_infinite_end():
    assert interval(np.array([10.0] * 90 + [math.inf] * 10)) == (10.0, math.inf)


def test_training_stops_only_when_every_rate_is_finished_or_beaten():
    group = np.array([0.02, 0.02, 0.06, 0.06])
    nan = math.nan
    assert not _done(np.array([100.0, 120.0, 90.0, nan]), group, 130, math.inf)  # 0.06 could still win
    assert _done(np.array([100.0, 120.0, 90.0, nan]), group, 200, 110.0)  # (90 + 200) / 2 > 110: beaten
    assert _done(np.array([100.0, 120.0, 90.0, 95.0]), group, 130, math.inf)  # all there
    assert not _done(np.array([nan, nan, nan, nan]), group, 500, math.inf)  # nobody there: go on to the cap
