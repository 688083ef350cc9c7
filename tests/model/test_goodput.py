"""model/goodput.py: the simulator agrees with its closed form, Young's interval with the exact optimum."""

from __future__ import annotations

import math

import pytest

from model import goodput as gp


def test_mulberry32_is_uniform_and_seeded():
    a = [gp.Mulberry32(3).uniform() for _ in range(1)]
    rng = gp.Mulberry32(3)
    draws = [rng.uniform() for _ in range(20000)]
    assert a[0] == draws[0]
    assert all(0.0 <= u < 1.0 for u in draws)
    assert abs(sum(draws) / len(draws) - 0.5) < 0.01
    assert draws != [gp.Mulberry32(4).uniform() for _ in range(20000)]


def test_without_failures_goodput_is_work_over_work_plus_saves():
    job = gp.Job(mtbf=1e12, delta=0.1, restart=1.0, work=10.0)
    run = gp.simulate(job, 1.0, seed=0)
    assert run.failures == 0 and run.elapsed == pytest.approx(10 * 1.1)


def test_long_simulations_match_the_expected_goodput():
    job = gp.Job(mtbf=3.0, delta=0.05, restart=0.2, work=20000.0)
    for tau in (0.1, 0.5, 1.5):
        sims = [gp.simulate(job, tau, s).goodput(job.work) for s in range(3)]
        assert sum(sims) / 3 == pytest.approx(gp.expected_goodput(job, tau), rel=0.01)


def test_young_is_near_the_exact_optimum_when_delta_is_small():
    job = gp.Job(mtbf=100.0, delta=0.01)
    assert gp.best_interval(job) == pytest.approx(gp.young_interval(0.01, 100.0), rel=0.02)
    far = gp.Job(mtbf=1.0, delta=0.3)  # delta not small against M: the first-order answer moves away
    assert abs(gp.best_interval(far) / gp.young_interval(0.3, 1.0) - 1) > 0.05


def test_bad_jobs_are_refused():
    with pytest.raises(ValueError):
        gp.Job(mtbf=0.0, delta=1.0)
    with pytest.raises(ValueError):
        gp.simulate(gp.Job(1.0, 0.1), 0.0, 0)
    assert math.isclose(gp.log_grid(1, 100, 3)[1], 10)
