"""The measures chapter 4's experiments compute: best rung, good band, update sizes, snapshots."""

import math
from dataclasses import replace

import numpy as np
import torch

from model.decoder import ModelConfig
from model.experiments.ch04_optimisers import rms_updates, state, train_with_snapshots
from model.experiments.common import best_rung, contiguous_band
from model.experiments.registry import REGISTRY
from model.stacked import init_stack
from model.train import TrainConfig, train_many

NAN = math.nan


def test_the_best_rung_has_the_lowest_mean_and_a_diverged_rung_is_never_best():
    finals = np.array([[2.5, 2.6, 2.7], [2.1, 2.2, 2.3], [1.0, NAN, 1.0], [2.4, 2.4, 2.4]])
    assert best_rung(finals) == 1


def test_the_good_band_is_the_contiguous_run_of_rungs_near_the_best():
    lrs = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0]
    finals = np.array([[2.40] * 3, [2.24] * 3, [2.20] * 3, [2.23] * 3, [2.30] * 3, [2.21] * 3])
    # 0.3 and 3 are within 0.05 of 2.20; 10 is not, so 30 (2.21) is outside the band though close
    assert contiguous_band(lrs, finals, 0.05) == (0.3, 3.0)
    assert contiguous_band(lrs, finals, 0.001) == (1.0, 1.0)
    finals[3, 1] = NAN  # a diverged seed breaks the band there
    assert contiguous_band(lrs, finals, 0.05) == (0.3, 1.0)


def test_rms_updates_are_the_root_mean_square_change_between_snapshots():
    a = torch.zeros(2, 4)
    b = torch.tensor([[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 0.0]])
    c = b + torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 4.0]])
    assert np.allclose(rms_updates([a, b, c]), [[1.0, 1.0], [0.0, 2.5]])


def test_training_in_stopped_and_resumed_pieces_equals_one_run_and_snapshots_its_weights():
    cfg = ModelConfig()
    runs = [TrainConfig(steps=6, warmup=2, eval_every=3, seed=s) for s in (0, 1)]
    whole = train_many(cfg, runs, workers=1)
    pieces, snaps = train_with_snapshots(cfg, runs, None, [2, 4, 6])  # type: ignore[arg-type]
    assert len(snaps) == 4
    layout, theta0 = init_stack(cfg, [0, 1])
    assert torch.equal(snaps[0], theta0)
    for m, (w, p) in enumerate(zip(whole, pieces, strict=True)):
        for k in w.curves:
            np.testing.assert_array_equal(w.curves[k], p.curves[k])
        assert w.step_losses == p.step_losses
        got = layout.state_dict(snaps[-1][m], cfg)
        assert all(torch.equal(v, got[k]) for k, v in (w.state_dict or {}).items())
    # a stack resumed from step 2 matches a fresh 2-step stack's weights there
    two = train_with_snapshots(cfg, [replace(r, steps=6) for r in runs], None, [2])[1][1]  # type: ignore[arg-type]
    assert torch.equal(two, snaps[1])


def test_optimiser_state_bytes_per_parameter_are_read_from_the_optimisers():
    ctx = REGISTRY["ch04.state"].context(quick=True)
    m = state(ctx).measurements
    assert {k: m[f"ch04.state.{k}"].value for k in ("sgd", "momentum", "adam", "adamw")} == {
        "sgd": 0.0,
        "momentum": 4.0,
        "adam": 8.0,
        "adamw": 8.0,
    }
    assert all(m[f"ch04.state.{k}.torch"].value == m[f"ch04.state.{k}"].value for k in ("sgd", "momentum", "adam"))
    assert m["ch04.state.params"].value == 5376


def test_decay_keys_are_short_and_distinct():
    from model.experiments.ch04_optimisers import DECAYS, decay_key

    assert [decay_key(w) for w in (0.0, 1e-4, 3e-2, 0.1, 0.3)] == ["wd0", "wd1e-4", "wd3e-2", "wd1e-1", "wd3e-1"]
    for wds in DECAYS.values():
        assert len({decay_key(w) for w in wds}) == len(wds)


def test_the_best_cell_of_a_rate_by_decay_grid_is_the_lowest_mean_and_never_a_diverged_one():
    from model.experiments.ch04_optimisers import best_cell

    finals = np.full((3, 4, 2), 2.5)
    finals[1, 2] = [2.1, 2.2]
    finals[2, 0] = [1.0, NAN]  # lower, but a seed diverged
    assert best_cell(finals) == (1, 2)
    finals[0, 3] = [2.0, 2.0]
    assert best_cell(finals) == (0, 3)
