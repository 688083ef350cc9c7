"""model/ensemble.py: the stacked model against autograd, and train_many
against separate train() runs."""

import math

import pytest
import torch

from model.data import load_corpus, sample_batch
from model.decoder import Decoder, ModelConfig, cross_entropy
from model.ensemble import BATCH_DRAWS, StackedDecoder, _Batches, _stack_init, train_many
from model.train import FlatParams, TrainConfig, train

torch.set_num_threads(1)

VARIANTS = [
    ModelConfig(),
    ModelConfig(norm="post"),
    ModelConfig(norm="none"),
    ModelConfig(norm_kind="rms"),
    ModelConfig(qk_norm=True),
    ModelConfig(z_loss=1e-2),
    ModelConfig(param="mup", d_model=32),
    ModelConfig(tie_embeddings=True),
    ModelConfig(n_layers=2, n_heads=4),
]


def _ids(c: ModelConfig) -> str:
    return f"{c.norm}-{c.norm_kind}-qk{int(c.qk_norm)}-z{c.z_loss}-{c.param}{c.d_model}-tie{int(c.tie_embeddings)}-L{c.n_layers}H{c.n_heads}"


@pytest.mark.parametrize("cfg", VARIANTS, ids=_ids)
def test_stacked_loss_and_gradients_match_autograd(cfg):
    M = 3
    layout, theta = _stack_init(cfg, [0, 1, 2])
    theta += 0.3 * torch.randn(theta.shape, generator=torch.Generator().manual_seed(9))  # far from init
    grad = torch.full_like(theta, math.nan)  # every entry must be written
    net = StackedDecoder(cfg, layout, theta, grad)
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab, (M, 4, cfg.context), generator=gen)
    y = torch.randint(0, cfg.vocab, (M, 4, cfg.context), generator=gen)
    loss = net.loss_and_grad(x, y)
    for m in range(M):
        model = Decoder(cfg).double()  # float64 autograd as the reference
        FlatParams(model).data.copy_(theta[m])
        ref = cross_entropy(model(x[m]), y[m], cfg.z_loss)
        ref.backward()
        ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        assert loss[m].item() == pytest.approx(ref.item(), abs=2e-6)
        assert (grad[m].double() - ref_grad).abs().max() <= 2e-5 * ref_grad.abs().max()


def test_stacked_evaluation_matches_the_decoder():
    cfg = ModelConfig()
    layout, theta = _stack_init(cfg, [0, 1])
    net = StackedDecoder(cfg, layout, theta, torch.empty_like(theta))
    x = torch.randint(0, 64, (300, 16), generator=torch.Generator().manual_seed(0))  # more than one chunk
    y = torch.randint(0, 64, (300, 16), generator=torch.Generator().manual_seed(1))
    val = net.evaluate(x, y)
    for m in range(2):
        model = Decoder(cfg)
        FlatParams(model).data.copy_(theta[m])
        with torch.no_grad():
            assert val[m].item() == pytest.approx(cross_entropy(model(x), y).item(), abs=1e-6)


def test_batches_are_sample_batch_draws():
    data = load_corpus().train
    runs = [TrainConfig(seed=0), TrainConfig(seed=1, data_seed=123)]
    batches = _Batches(data, runs, 8, 16)
    gens = [torch.Generator().manual_seed(r.data_seed_value) for r in runs]
    for _ in range(BATCH_DRAWS + 5):  # across a refill
        x, y = batches.next()
        for m, g in enumerate(gens):
            xs, ys = sample_batch(data, 8, 16, g)
            assert torch.equal(x[m], xs) and torch.equal(y[m], ys)


def _assert_same_run(single, stacked, tol=1e-5):
    assert stacked.steps == single.steps
    assert stacked.diverged_at == single.diverged_at
    assert stacked.curves["step"] == single.curves["step"]
    assert stacked.curves["lr"] == single.curves["lr"]
    assert max(abs(a - b) for a, b in zip(single.step_losses, stacked.step_losses)) < tol
    for k in ("val_loss", "train_loss", "grad_norm"):
        a, b = single.curves[k][1:], stacked.curves[k][1:]
        assert max((abs(u - v) for u, v in zip(a, b)), default=0.0) < tol, k
    assert stacked.val_loss_init == pytest.approx(single.val_loss_init, abs=tol)
    if single.diverged_at is None:
        assert stacked.val_loss_final == pytest.approx(single.val_loss_final, abs=tol)
    for k, v in single.state_dict.items():
        assert torch.allclose(stacked.state_dict[k], v, atol=1e-4), k
    assert stacked.train_config == single.train_config


def test_train_many_matches_separate_runs():
    runs = [
        TrainConfig(steps=300, eval_every=100, lr=1e-3, seed=0),
        TrainConfig(steps=300, eval_every=100, lr=3e-3, seed=0),
        TrainConfig(steps=300, eval_every=100, lr=1e-2, seed=0),
        TrainConfig(steps=300, eval_every=100, lr=1e-2, seed=1, schedule="wsd", warmup=30, clip=None, weight_decay=0.1),
    ]
    stacked = train_many(ModelConfig(), runs)
    for run, result in zip(runs, stacked):
        _assert_same_run(train(ModelConfig(), run), result)


def test_runs_of_different_lengths():
    runs = [
        TrainConfig(steps=60, eval_every=25, lr=1e-2, seed=3),  # stops at 60, evaluated at 25, 50, 60
        TrainConfig(steps=80, eval_every=25, lr=3e-3, seed=4, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
    ]
    stacked = train_many(ModelConfig(), runs)
    assert stacked[0].curves["step"] == [0, 25, 50, 60] and stacked[1].curves["step"] == [0, 25, 50, 75, 80]
    for run, result in zip(runs, stacked):
        _assert_same_run(train(ModelConfig(), run), result)


def test_a_diverging_model_stops_and_the_others_go_on():
    sgd = {"steps": 40, "eval_every": 20, "optimizer": "sgd"}
    runs = [
        TrainConfig(**sgd, lr=0.3, seed=3),
        TrainConfig(**sgd, lr=1e4, warmup=0, schedule="constant", clip=None),  # losses 1e5, 1e7, 1e9, then inf
        TrainConfig(**sgd, lr=0.1, seed=5),
    ]
    stacked = train_many(ModelConfig(), runs)
    bad, alone = stacked[1], train(ModelConfig(), runs[1])
    assert bad.diverged_at is not None and bad.steps == bad.diverged_at == len(bad.step_losses)
    assert math.isnan(bad.val_loss_final) and bad.curves["step"] == [0]
    # float32 overflows at ~1e38 in slightly different places in the two implementations, so at
    # absurd learning rates the first non-finite step may differ by one
    assert abs(bad.diverged_at - alone.diverged_at) <= 1
    for k, v in bad.state_dict.items():  # frozen where it stopped: finite weights
        assert torch.isfinite(v).all(), k
    for i in (0, 2):
        _assert_same_run(train(ModelConfig(), runs[i]), stacked[i])


@pytest.mark.parametrize("cfg", VARIANTS[1:], ids=_ids)
def test_variants_match_separate_runs(cfg):
    runs = [TrainConfig(steps=30, eval_every=15, lr=1e-2, seed=s) for s in (0, 1)]
    for run, result in zip(runs, train_many(cfg, runs)):
        _assert_same_run(train(cfg, run), result)


@pytest.mark.parametrize("optimizer", ["adam", "sgd", "momentum"])
def test_other_optimisers_match_separate_runs(optimizer):
    lr = 0.3 if optimizer in ("sgd", "momentum") else 1e-2
    runs = [
        TrainConfig(steps=40, eval_every=20, optimizer=optimizer, lr=lr * f, seed=s) for s, f in ((0, 1.0), (1, 0.5))
    ]
    for run, result in zip(runs, train_many(ModelConfig(), runs)):
        _assert_same_run(train(ModelConfig(), run), result)


def test_worker_processes_give_the_same_results():
    runs = [TrainConfig(steps=8, eval_every=4, lr=1e-2, seed=s) for s in range(3)]
    here = train_many(ModelConfig(), runs)
    spread = train_many(ModelConfig(), runs, workers=2)  # runs 0 here, runs 1-2 in a worker stack
    assert [r.train_config for r in spread] == [r.train_config for r in here]
    for a, b in zip(here, spread):  # stacks of 3 and of 1 + 2 may round differently in the last bit
        assert a.curves["step"] == b.curves["step"]
        assert max(abs(u - v) for u, v in zip(a.step_losses, b.step_losses)) < 1e-6


def test_runs_must_share_batch_and_optimizer():
    with pytest.raises(ValueError, match="batch"):
        train_many(ModelConfig(), [TrainConfig(batch=32), TrainConfig(batch=16)])
    with pytest.raises(ValueError, match="optimizer"):
        train_many(ModelConfig(), [TrainConfig(), TrainConfig(optimizer="sgd")])


def test_stacks_side_by_side_match_separate_runs_and_restore_threads():
    # threads=2 splits the runs into two stacks on two Python threads (the default with 2 threads);
    # each must still be its own train() run, and torch's thread setting must come back unchanged
    runs = [TrainConfig(steps=40, eval_every=20, lr=1e-2, seed=s) for s in range(3)]
    before = torch.get_num_threads()
    results = train_many(ModelConfig(), runs, threads=2)
    assert torch.get_num_threads() == before
    for run, result in zip(runs, results):
        _assert_same_run(train(ModelConfig(), run), result)
