"""model/valley.py: the narrow valley's optimisers against closed forms, step by step."""

import math

import numpy as np
import pytest

from model import valley as vl


def test_the_start_is_on_the_level_set_one_half_and_the_hessian_has_eigenvalues_1_over_kappa_and_1():
    for kappa, angle in ((1.0, 0.0), (100.0, 0.0), (100.0, 45.0), (1e4, 30.0)):
        v = vl.Valley(kappa, angle)
        x0, y0 = v.start()
        assert float(vl.loss(v, np.array(x0), np.array(y0))) == pytest.approx(0.5, rel=1e-12)
        h11, h12, h22 = v.hessian()
        assert np.linalg.eigvalsh([[h11, h12], [h12, h22]]) == pytest.approx([1 / kappa, 1.0], rel=1e-12)


def test_sgd_on_an_axis_aligned_valley_shrinks_each_coordinate_geometrically():
    v = vl.Valley(100.0)
    path = vl.trajectory(v, vl.Settings("sgd", 1.5), 30)
    t = np.arange(31)
    x0, y0 = v.start()
    assert np.allclose(path[:, 0], x0 * (1 - 1.5 / 100) ** t, rtol=1e-12, atol=0)
    assert np.allclose(path[:, 1], y0 * (1 - 1.5) ** t, rtol=1e-12, atol=1e-300)


def test_sgd_at_step_size_one_on_a_round_bowl_lands_on_the_minimum_in_one_step():
    path = vl.trajectory(vl.Valley(1.0), vl.Settings("sgd", 1.0), 1)
    assert path[1].tolist() == [0.0, 0.0]
    assert vl.steps_to_tolerance(vl.Valley(1.0), vl.Settings("sgd", np.array([1.0, 0.5])), 1e-6, 100).tolist() == [
        1.0,
        math.ceil(math.log(1e-6) / math.log(0.25)),  # f falls by (1 - 0.5)^2 per step
    ]


def test_momentum_is_sgd_on_the_first_step_then_adds_beta_times_the_buffer():
    v = vl.Valley(10.0, 30.0)
    lr, beta = 0.3, 0.8
    p = vl.trajectory(v, vl.Settings("momentum", lr, beta=beta), 2)
    s = vl.trajectory(v, vl.Settings("sgd", lr), 1)
    assert p[1].tolist() == s[1].tolist()
    h11, h12, h22 = v.hessian()

    def g(x):
        return np.array([h11 * x[0] + h12 * x[1], h12 * x[0] + h22 * x[1]])

    assert np.allclose(p[2], p[1] - lr * (beta * g(p[0]) + g(p[1])), rtol=1e-14, atol=0)
    # heavy ball: x2 - x1 = -lr g1 + beta (x1 - x0)
    assert np.allclose(p[2] - p[1], -lr * g(p[1]) + beta * (p[1] - p[0]), rtol=1e-12, atol=1e-15)


def test_adams_first_step_moves_every_coordinate_by_the_step_size():
    v = vl.Valley(1e4, 45.0)
    p = vl.trajectory(v, vl.Settings("adam", 0.01), 2)
    assert np.allclose(np.abs(p[1] - p[0]), 0.01, rtol=1e-6)
    # the second step by hand, Kingma & Ba's Alg. 1
    h11, h12, h22 = v.hessian()
    gs = [np.array([h11 * x[0] + h12 * x[1], h12 * x[0] + h22 * x[1]]) for x in p[:2]]
    m = 0.9 * (0.1 * gs[0]) + 0.1 * gs[1]
    w = 0.999 * (0.001 * gs[0] ** 2) + 0.001 * gs[1] ** 2
    step = 0.01 * (m / (1 - 0.9**2)) / (np.sqrt(w / (1 - 0.999**2)) + 1e-8)
    assert np.allclose(p[2], p[1] - step, rtol=1e-12, atol=1e-15)


def test_sgd_and_momentum_do_not_see_the_rotation_but_adam_does():
    tol, steps = 1e-6, 20000
    for kind, s in (("sgd", vl.Settings("sgd", 1.9)), ("momentum", vl.Settings("momentum", 1.5, beta=0.8))):
        a = vl.steps_to_tolerance(vl.Valley(100.0, 0.0), s, tol, steps)
        b = vl.steps_to_tolerance(vl.Valley(100.0, 45.0), s, tol, steps)
        assert abs(float(a) - float(b)) <= 1, kind
    a = vl.steps_to_tolerance(vl.Valley(100.0, 0.0), vl.Settings("adam", 0.3), tol, steps)
    b = vl.steps_to_tolerance(vl.Valley(100.0, 45.0), vl.Settings("adam", 0.3), tol, steps)
    assert float(a) != float(b)


def test_fastest_finds_the_best_step_size_of_a_grid_and_never_picks_a_diverging_one():
    v = vl.Valley(10.0)
    lrs = np.array([0.5, 1.0, 1.8, 2.5])  # 2.5 diverges (above 2)
    n, i = vl.fastest(v, vl.Settings("sgd", lrs), 1e-6, 10000)
    each = vl.steps_to_tolerance(v, vl.Settings("sgd", lrs[:3]), 1e-6, 10000)
    assert i == int(np.argmin(each)) and n == each.min()
    n, i = vl.fastest(v, vl.Settings("sgd", np.array([1e-6])), 1e-6, 100)
    assert math.isnan(n) and i is None


def test_steps_to_tolerance_is_nan_when_not_reached():
    assert np.isnan(vl.steps_to_tolerance(vl.Valley(10.0), vl.Settings("sgd", np.array([1e-4])), 1e-6, 50)).all()


def test_log_slope_of_a_power_law_is_its_exponent():
    x = np.array([10.0, 100.0, 1000.0])
    assert vl.log_slope(x, 3 * x**0.5) == pytest.approx(0.5, abs=1e-12)


def test_an_unknown_optimiser_is_an_error():
    with pytest.raises(ValueError, match="kind must be one of"):
        vl.Settings("lion", 0.1)
