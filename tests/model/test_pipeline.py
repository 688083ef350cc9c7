"""model/pipeline.py: the simulator equals the published bubble formulas where they apply, keeps
1F1B's activations at p, and rejects settings the schedules are not defined for."""

from __future__ import annotations

import itertools

import pytest

from model import pipeline as pl

GRID = list(itertools.product((1, 2, 3, 4, 8), (1, 2, 4, 8, 16, 32), (0.5, 1.0, 2.0, 3.0)))


@pytest.mark.parametrize("p, m, ratio", GRID)
def test_gpipe_and_1f1b_idle_share_is_huangs_formula(p, m, ratio):
    for name in ("gpipe", "1f1b"):
        s = pl.simulate(p, m, name, 1, ratio)
        assert abs(s.bubble - pl.gpipe_bubble(p, m)) <= 1e-12
        assert abs(s.bubble_over_work - (p - 1) / m) <= 1e-12


@pytest.mark.parametrize("p, m, ratio", [(p, m, r) for p, m, r in GRID if m % p == 0])
@pytest.mark.parametrize("v", (1, 2, 3, 4))
def test_interleaved_idle_over_work_is_narayanans_formula(p, m, ratio, v):
    s = pl.simulate(p, m, "interleaved", v, ratio)
    assert abs(s.bubble_over_work - pl.interleaved_bubble_over_work(p, m, v)) <= 1e-12


@pytest.mark.parametrize("p, m", [(p, m) for p, m, _ in GRID])
def test_peak_in_flight_is_m_for_gpipe_and_at_most_p_for_1f1b(p, m):
    assert pl.simulate(p, m, "gpipe").peak_in_flight == m
    assert pl.simulate(p, m, "1f1b").peak_in_flight == min(p, m)


def test_every_op_runs_once_in_dependency_order_and_devices_never_overlap():
    s = pl.simulate(4, 8, "interleaved", 2, 2.0)
    assert len(s.ops) == 2 * 4 * 8 * 2
    end = {(o.kind, o.mb, o.chunk * 4 + o.device): o.end for o in s.ops}
    for o in s.ops:
        stage = o.chunk * 4 + o.device
        if o.kind == "F" and stage > 0:
            assert o.start >= end[("F", o.mb, stage - 1)]
        if o.kind == "B":
            assert o.start >= end[("B", o.mb, stage + 1) if stage < 7 else ("F", o.mb, stage)]
    for d in range(4):
        mine = sorted((o for o in s.ops if o.device == d), key=lambda o: o.start)
        assert all(a.end <= b.start + 1e-12 for a, b in itertools.pairwise(mine))


def test_a_bad_setting_is_a_clear_error():
    with pytest.raises(ValueError, match="multiple of p"):
        pl.simulate(4, 6, "interleaved", 2)
    with pytest.raises(ValueError, match="only to the interleaved"):
        pl.simulate(4, 8, "1f1b", 2)
    with pytest.raises(ValueError, match="schedule must be one of"):
        pl.simulate(2, 2, "zero-bubble")
    with pytest.raises(ValueError, match="ratio"):
        pl.simulate(2, 2, "gpipe", 1, 0.0)
