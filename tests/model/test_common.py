"""The measurement helpers every chapter's experiments share."""

from __future__ import annotations

import math

import pytest

from model.experiments.common import exact, first_step_below, mean_sd, spread


def test_mean_sd_over_seeds_and_of_one_seed() -> None:
    assert mean_sd([1.0, 2.0, 3.0]) == (2.0, 1.0, 3)
    mean, sd, n = mean_sd([4.5])
    assert (mean, sd, n) == (4.5, None, 1)


def test_spread_shows_the_sds_first_significant_digit() -> None:
    m = spread([1.0, 1.2, 1.4], "nats", "x")
    assert m.value == pytest.approx(1.2) and m.sd == pytest.approx(0.2) and m.n == 3
    assert m.digits == 2  # 1.2 ± 0.2
    assert spread([2.061, 2.063, 2.065], "nats", "x").digits == 4  # 2.063 ± 0.002
    assert spread([123.0, 125.0, 127.0], "", "x").digits == 3  # 125 ± 4
    assert spread([0.5, 0.5, 0.5], "", "x").digits == 3  # no spread: three places


def test_exact_and_first_step_below() -> None:
    assert exact(7, "rates", "x").sd is None
    assert first_step_below([0, 50, 100], [3.0, 2.5, 2.0], 2.6) == 50
    assert math.isnan(first_step_below([0, 50], [3.0, 2.9], 1.0))
