"""Chapter 6's probes and ladders: model/init_probe.py and model/experiments/ch06_tuning.py."""

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.data import load_corpus, val_windows
from model.decoder import ModelConfig
from model.experiments.ch06_tuning import GRID, Ladder, blew_up, tune
from model.init_probe import (
    coordinates,
    init_probe,
    residual_factor,
    residual_scaled_start,
    scale_residual_,
    seeded_decoder,
)
from model.stacked import Layout
from model.train import Step, TrainConfig, TrainResult, train_many


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


@pytest.fixture(scope="module")
def windows(corpus):
    x, y = val_windows(corpus.val, 16)
    return x[:64], y[:64]


def test_tiny_init_starts_at_a_uniform_guess_and_large_init_does_not(windows):
    x, y = windows
    tiny = init_probe(ModelConfig(init_std=1e-4), 0, x, y)
    large = init_probe(ModelConfig(init_std=0.6), 0, x, y)
    assert abs(tiny.loss - math.log(64)) < 1e-3
    assert large.loss > math.log(64) + 0.5
    assert large.logit_rms > 100 * tiny.logit_rms


def test_post_ln_stream_sits_at_rms_one_and_pre_ln_stream_does_not(windows):
    x, y = windows
    post = init_probe(ModelConfig(n_layers=3, norm="post"), 1, x, y)
    pre = init_probe(ModelConfig(n_layers=3, norm="pre"), 1, x, y)
    assert len(post.stream_rms) == 4 and len(post.grad_norm) == 3
    assert all(abs(r - 1.0) < 1e-3 for r in post.stream_rms[1:])
    assert pre.stream_rms[-1] < 0.2


def test_probe_gradients_are_the_decoders_own(windows):
    x, y = windows
    cfg = ModelConfig(n_layers=2)
    probe = init_probe(cfg, 3, x, y)
    model = seeded_decoder(cfg, 3)
    F.cross_entropy(model(x).reshape(-1, 64), y.reshape(-1)).backward()
    block1 = torch.cat([p.grad.reshape(-1) for n, p in model.named_parameters() if n.startswith("blocks.1.")])
    assert probe.grad_norm[1] == pytest.approx(float(block1.norm()), rel=1e-5)


def test_residual_scaled_start_trains_from_the_scaled_weights(corpus, tmp_path):
    cfg = ModelConfig(n_layers=2)
    runs = [TrainConfig(steps=3, eval_every=3, seed=s) for s in (0, 5)]
    factor = residual_scaled_start(cfg, runs, corpus, tmp_path / "start.pt")
    assert factor == residual_factor(cfg) == 0.5
    seen: list[torch.Tensor] = []

    def look(s: Step) -> None:
        if s.step == 0:
            seen.append(s.theta.clone())

    out = train_many(cfg, runs, corpus, checkpoint=tmp_path / "start.pt", on_step=look)
    for m, r in enumerate(runs):
        model = seeded_decoder(cfg, r.seed)
        plain = Layout(model).flatten(model)
        scale_residual_(model, factor)
        scaled = Layout(model).flatten(model)
        assert torch.equal(seen[0][m], scaled)
        assert not torch.equal(seen[0][m], plain)
        xv, yv = val_windows(corpus.val, 16)
        with torch.no_grad():
            loss = float(F.cross_entropy(model(xv).reshape(-1, 64), yv.reshape(-1)))
        assert out[m].val_loss_init == pytest.approx(loss, abs=1e-5)
        assert out[m].steps == 3 and math.isfinite(out[m].val_loss_final)


def test_mup_at_its_base_width_has_the_standard_coordinates(windows):
    x, _ = windows
    sp, mup = ModelConfig(d_model=32), ModelConfig(d_model=32, param="mup", base_d_model=32)
    weights = seeded_decoder(sp, 0).state_dict()
    assert coordinates(sp, weights, x) == pytest.approx(coordinates(mup, weights, x))
    wider = ModelConfig(d_model=32, param="mup", base_d_model=16)  # logits / m = 2 (attention's scale moves too)
    assert coordinates(wider, weights, x)["logits"] == pytest.approx(
        coordinates(sp, weights, x)["logits"] / 2, rel=1e-3
    )


def _fake(losses: dict[float, float]):
    """A trainer whose final loss depends only on the rate (NaN where the dict says so)."""

    def run(cfg: ModelConfig, runs: list[TrainConfig]) -> list[TrainResult]:
        out = []
        for r in runs:
            v = losses[r.lr] + 0.001 * r.seed
            curves = {"step": [0, r.steps], "val_loss": [4.16, v]}
            out.append(TrainResult({}, {}, 4.16, v, v, r.steps, 0.0, 0, None, curves))
        return out

    return run


def test_a_ladder_grows_past_an_edge_best_until_it_is_inside():
    curve = {r: (math.log10(r) - math.log10(6e-4)) ** 2 + 2.0 for r in GRID}  # best at 6e-4
    lad = tune(ModelConfig(), [TrainConfig()], (6e-3, 2e-2, 6e-2), (0, 1, 2), None, 3, _fake(curve))[0]
    assert lad.best_rate == 6e-4 and not lad.at_edge
    assert lad.rates == [2e-4, 6e-4, 2e-3, 6e-3, 2e-2, 6e-2]
    short = tune(ModelConfig(), [TrainConfig()], (6e-3, 2e-2, 6e-2), (0, 1, 2), None, 1, _fake(curve))[0]
    assert short.at_edge and short.best_rate == 2e-3  # out of extensions: the ladder says so


def test_a_rate_off_the_grid_is_refused():
    with pytest.raises(ValueError, match="grid"):
        tune(ModelConfig(), [TrainConfig()], (1e-2,), (0,), None)


def test_blew_up_reads_a_rise_above_the_start_or_a_non_finite_run():
    base = TrainResult({}, {}, 4.0, 3.0, 3.0, 10, 0.0, 0, None, {"step": [0, 5, 10], "val_loss": [4.0, 3.5, 3.0]})
    assert not blew_up(base)
    assert blew_up(replace(base, curves={"step": [0, 5, 10], "val_loss": [4.0, 4.2, 3.0]}))
    assert blew_up(replace(base, diverged_at=7))
    lad = Ladder({6e-3: [base, base], 2e-2: [replace(base, val_loss_final=math.nan), base]})
    assert list(lad.blowups) == [0, 0]
    assert lad.best_rate == 6e-3  # a rung with a non-finite seed never wins
    assert np.isnan(lad.final[1, 0])


def test_blowup_step_is_the_first_evaluation_above_the_start():
    from model.experiments.ch06_depth_edge import blowup_step

    r = TrainResult(
        {}, {}, 4.0, 3.0, 3.0, 30, 0.0, 0, None, {"step": [0, 10, 20, 30], "val_loss": [4.0, 3.9, 4.5, 3.0]}
    )
    assert blowup_step(r) == 20
    assert math.isnan(blowup_step(replace(r, curves={"step": [0, 10], "val_loss": [4.0, 3.0]})))
    assert blowup_step(replace(r, curves={"step": [0, 10], "val_loss": [4.0, 3.0]}, diverged_at=13)) == 13
