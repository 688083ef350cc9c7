"""The measures chapter 5's experiments compute: blow-ups, the stable band, steps to a
target, the critical batch and Adam's normalised step."""

import math

import numpy as np
import pytest
import torch

from model.experiments.ch05_lr import blowup_step, critical_batch, normalised_step_rms
from model.experiments.common import band, steps_to


def test_blowup_is_the_first_step_after_the_start_above_the_level():
    steps = [0, 50, 100, 150]
    assert blowup_step(steps, [4.2, 3.0, 4.3, 2.5], level=4.17) == 100
    assert math.isnan(blowup_step(steps, [4.2, 3.0, 2.9, 2.5], level=4.17))  # step 0 itself never counts
    assert blowup_step(steps, [4.1, 3.0, math.nan, 2.5], level=4.17) == 100  # not finite is a blow-up


def test_the_band_holds_the_rates_within_the_margin_of_the_best():
    rates = [1e-3, 3e-3, 1e-2, 3e-2, 1e-1]
    means = [2.5, 2.18, 2.10, 2.16, math.nan]  # the last rate blew up
    assert band(rates, means, 0.1) == (3e-3, 3e-2, 3)
    assert band(rates, means, 0.05) == (1e-2, 1e-2, 1)
    assert band(rates, means, 0.5) == (1e-3, 3e-2, 4)


def test_steps_to_interpolates_between_the_evaluations_around_the_crossing():
    steps = [0, 100, 200, 300]
    assert steps_to(steps, [4.0, 3.0, 2.0, 1.5], 2.5) == pytest.approx(150.0)
    assert steps_to(steps, [4.0, 3.0, 2.0, 1.5], 3.0) == 100.0
    assert math.isnan(steps_to(steps, [4.0, 3.0, 2.0, 1.5], 1.0))
    assert steps_to(steps, [1.0, 0.9, 0.8, 0.7], 2.0) == 0.0


def test_critical_batch_recovers_the_trade_off_it_was_made_from():
    s_min, b_crit = 200.0, 48.0
    batches = [8, 16, 32, 64, 128]
    steps = [s_min * (1 + b_crit / b) for b in batches]  # S = S_min (1 + B_crit / B)
    got = critical_batch(batches, steps)
    assert got[0] == pytest.approx(s_min, rel=1e-9) and got[1] == pytest.approx(b_crit, rel=1e-9)
    # and on that curve, (S/S_min - 1)(E/E_min - 1) = 1 with E = S B, E_min = S_min B_crit
    for b, s in zip(batches, steps, strict=True):
        assert (s / s_min - 1) * (s * b / (s_min * b_crit) - 1) == pytest.approx(1.0, rel=1e-9)


def test_adams_first_normalised_step_is_one_in_every_moving_coordinate():
    g = torch.tensor([[0.5, -2.0, 1e-3, 0.0]])
    b1, b2 = 0.9, 0.999
    m, v = (1 - b1) * g, (1 - b2) * g.square()  # the state after update 1
    rms = normalised_step_rms(m, v, 1, (b1, b2), 0.0 + 1e-12)
    assert rms.item() == pytest.approx(math.sqrt(3 / 4), rel=1e-6)  # three coordinates at ±1, one at 0
    # a steady gradient keeps it at 1; a gradient that flips sign every step shrinks it
    for t in range(2, 50):
        gt = g * (-1) ** t
        m, v = b1 * m + (1 - b1) * gt, b2 * v + (1 - b2) * gt.square()
    assert normalised_step_rms(m, v, 49, (b1, b2), 1e-12).item() < 0.2
    steady = np.full(3, 0.7)
    mt = torch.from_numpy((1 - b1**5) * steady)[None]
    vt = torch.from_numpy((1 - b2**5) * steady**2)[None]
    assert normalised_step_rms(mt, vt, 5, (b1, b2), 0.0).item() == pytest.approx(1.0, rel=1e-12)


def test_tail_drop_is_the_fall_over_the_last_steps_and_a_short_run_uses_all_of_it():
    from model.experiments.ch05_edges import tail_drop
    from model.train import TrainResult

    def run(steps, val):
        return TrainResult({}, {}, val[0], val[-1], val[-1], steps[-1], 0.0, 0, curves={"step": steps, "val_loss": val})

    assert tail_drop(run([0, 100, 200, 300, 400], [4.0, 3.0, 2.8, 2.7, 2.5]), 200) == pytest.approx(0.3)
    assert tail_drop(run([0, 10, 20], [4.0, 3.5, 3.0]), 200) == pytest.approx(1.0)
