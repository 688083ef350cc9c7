"""model/train.py: schedules, the loop (one run and a stack of runs, against
separate runs of the readable Decoder with autograd and torch.optim),
checkpoint/resume, divergence, the document mask, the per-step hooks, the
autograd path, the CLI."""

import dataclasses
import json
import math
from dataclasses import replace

import pytest
import torch
from eager import eager_train

from model.data import corpus_from_text, load_corpus
from model.decoder import ModelConfig
from model.stacked import COVERED, supports
from model.train import (
    Step,
    TrainConfig,
    load_checkpoint,
    lr_at,
    main,
    save_checkpoint,
    train,
    train_many,
)

# -- schedules ------------------------------------------------------------------


def test_cosine_schedule_values():
    cfg = TrainConfig(steps=2000, lr=2e-3, warmup=100, schedule="cosine")
    assert lr_at(0, cfg) == pytest.approx(2e-5, rel=1e-15)  # lr * 1/100
    assert lr_at(49, cfg) == pytest.approx(1e-3, rel=1e-15)
    assert lr_at(99, cfg) == 2e-3  # warmup ends at the peak
    assert lr_at(100, cfg) == 2e-3  # cosine starts at the peak
    assert lr_at(1050, cfg) == pytest.approx(1e-3, rel=1e-12)  # half way: cos(pi/2)
    assert lr_at(575, cfg) == pytest.approx(2e-3 * 0.5 * (1 + math.cos(math.pi / 4)), rel=1e-12)
    assert lr_at(1999, cfg) == pytest.approx(2e-3 * 0.5 * (1 + math.cos(math.pi * 1899 / 1900)), rel=1e-12)
    assert lr_at(2000, cfg) == 0.0


def test_constant_and_wsd_schedule_values():
    const = TrainConfig(steps=1000, lr=1e-2, warmup=10, schedule="constant")
    assert [lr_at(s, const) for s in (0, 4, 9, 10, 999)] == pytest.approx([1e-3, 5e-3, 1e-2, 1e-2, 1e-2], rel=1e-15)
    wsd = TrainConfig(steps=1000, lr=1e-2, warmup=10, schedule="wsd", decay_frac=0.2)  # decay over 800..1000
    assert lr_at(0, wsd) == pytest.approx(1e-3, rel=1e-15)
    assert lr_at(799, wsd) == 1e-2
    assert lr_at(800, wsd) == 1e-2
    assert lr_at(900, wsd) == pytest.approx(5e-3, rel=1e-15)
    assert lr_at(999, wsd) == pytest.approx(1e-2 / 200, rel=1e-15)
    assert lr_at(1000, wsd) == 0.0
    no_warmup = TrainConfig(steps=100, lr=1.0, warmup=0, schedule="wsd", decay_frac=0.0)
    assert lr_at(0, no_warmup) == lr_at(99, no_warmup) == 1.0


def test_config_is_checked():
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="linear")
    with pytest.raises(ValueError, match="optimizer"):
        TrainConfig(optimizer="lion")
    with pytest.raises(ValueError, match="clip"):
        TrainConfig(clip=0.0)
    assert TrainConfig(seed=3).data_seed_value != 3  # the data stream is seeded apart from the weights
    assert TrainConfig(seed=3, data_seed=7).data_seed_value == 7


# -- the loop: resume, divergence ---------------------------------------------------


def test_resume_from_checkpoint_is_bit_identical(tmp_path):
    mcfg, cfg = ModelConfig(), TrainConfig(steps=100, eval_every=20, seed=5)
    straight = train(mcfg, cfg)

    path = tmp_path / "run.pt"
    first = train(mcfg, cfg, checkpoint=path, stop_at=50)
    assert first.steps == 50 and path.exists()
    state = load_checkpoint(path)
    assert state["step"] == 50
    save_checkpoint(path, state)  # a save/load round trip changes nothing
    resumed = train(mcfg, cfg, checkpoint=path)

    assert resumed.steps == 100
    for k, v in straight.state_dict.items():
        assert torch.equal(v, resumed.state_dict[k]), k
    assert resumed.step_losses == straight.step_losses
    assert resumed.step_grad_norms == straight.step_grad_norms
    assert _nan_to_none(resumed.curves) == _nan_to_none(straight.curves)  # NaN: no train loss at step 0
    assert resumed.val_loss_final == straight.val_loss_final
    assert resumed.train_loss_final == straight.train_loss_final
    assert list(tmp_path.iterdir()) == [path]  # no temporary files left behind


def _nan_to_none(curves: dict) -> dict:
    return {k: [None if isinstance(v, float) and math.isnan(v) else v for v in vs] for k, vs in curves.items()}


def test_checkpoint_of_another_config_is_refused(tmp_path):
    path = tmp_path / "run.pt"
    train(ModelConfig(), TrainConfig(steps=10, eval_every=5), checkpoint=path)
    with pytest.raises(ValueError, match="lr"):
        train(ModelConfig(), TrainConfig(steps=10, eval_every=5, lr=1e-2), checkpoint=path)


def test_divergence_stops_the_run_and_reports_the_step():
    result = train(ModelConfig(), TrainConfig(steps=50, lr=1e3, warmup=0, schedule="constant", eval_every=10))
    assert result.diverged_at is not None and 2 <= result.diverged_at < 20  # losses ~1e4, 1e5, ... then inf
    assert result.steps == result.diverged_at == len(result.step_losses)
    assert all(math.isfinite(v) for v in result.step_losses)
    assert math.isnan(result.val_loss_final) and math.isnan(result.train_loss_final)
    assert result.to_dict()["val_loss_final"] is None  # JSON-safe


def test_injected_inf_is_reported_at_its_step(tmp_path):
    mcfg, cfg = ModelConfig(), TrainConfig(steps=40, eval_every=10)
    path = tmp_path / "run.pt"
    train(mcfg, cfg, checkpoint=path, stop_at=17)
    state = load_checkpoint(path)
    state["theta"][0, 3] = math.inf  # one weight of wte
    save_checkpoint(path, state)
    result = train(mcfg, cfg, checkpoint=path)
    assert result.diverged_at == 17 and result.steps == 17


def test_run_records_curves_and_config():
    result = train(ModelConfig(), TrainConfig(steps=30, eval_every=10, seed=2))
    assert result.curves["step"] == [0, 10, 20, 30]
    assert math.isnan(result.curves["train_loss"][0])
    assert result.val_loss_init == result.curves["val_loss"][0]
    assert abs(result.val_loss_init - math.log(64)) < 0.05
    assert result.val_loss_final < result.val_loss_init
    assert result.train_loss_final == pytest.approx(sum(result.step_losses[20:]) / 10)
    assert result.tokens_seen == 30 * 32 * 16
    assert result.train_config["seed"] == 2 and result.train_config["data_seed"] == TrainConfig(seed=2).data_seed_value
    assert result.model_config["d_model"] == 16
    json.dumps(result.to_dict())


# -- the CLI ------------------------------------------------------------------------


def test_cli_json_prints_one_line(capsys):
    assert main(["--seed", "1", "--steps", "20", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    data = json.loads(out)
    for key in ("val_loss_init", "val_loss_final", "train_loss_final", "steps", "seconds"):
        assert key in data
    assert data["steps"] == 20 and data["train_config"]["seed"] == 1


def test_cli_usage_error(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--steps", "x"])
    assert e.value.code == 2


# -- a stack of runs against separate readable runs -----------------------------------


def _assert_same_run(single, stacked, tol=1e-5):
    assert stacked.steps == single.steps
    assert stacked.diverged_at == single.diverged_at
    assert stacked.curves["step"] == single.curves["step"]
    assert stacked.curves["lr"] == single.curves["lr"]
    assert max(abs(a - b) for a, b in zip(single.step_losses, stacked.step_losses, strict=True)) < tol
    for k in ("val_loss", "train_loss", "grad_norm"):
        a, b = single.curves[k][1:], stacked.curves[k][1:]
        assert max((abs(u - v) for u, v in zip(a, b, strict=True)), default=0.0) < tol, k
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
    for run, result in zip(runs, stacked, strict=True):
        _assert_same_run(eager_train(ModelConfig(), run), result)


def test_one_run_is_a_stack_of_one():
    run = TrainConfig(steps=300, eval_every=100, lr=1e-2, seed=2)
    _assert_same_run(eager_train(ModelConfig(), run), train(ModelConfig(), run))


def test_runs_of_different_lengths():
    runs = [
        TrainConfig(steps=60, eval_every=25, lr=1e-2, seed=3),  # stops at 60, evaluated at 25, 50, 60
        TrainConfig(steps=80, eval_every=25, lr=3e-3, seed=4, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
    ]
    stacked = train_many(ModelConfig(), runs)
    assert stacked[0].curves["step"] == [0, 25, 50, 60] and stacked[1].curves["step"] == [0, 25, 50, 75, 80]
    for run, result in zip(runs, stacked, strict=True):
        _assert_same_run(eager_train(ModelConfig(), run), result)


def test_a_diverging_model_stops_and_the_others_go_on():
    sgd = {"steps": 40, "eval_every": 20, "optimizer": "sgd"}
    runs = [
        TrainConfig(**sgd, lr=0.3, seed=3),
        TrainConfig(**sgd, lr=1e4, warmup=0, schedule="constant", clip=None),  # losses 1e5, 1e7, 1e9, then inf
        TrainConfig(**sgd, lr=0.1, seed=5),
    ]
    stacked = train_many(ModelConfig(), runs)
    bad, alone = stacked[1], eager_train(ModelConfig(), runs[1])
    assert bad.diverged_at is not None and bad.steps == bad.diverged_at == len(bad.step_losses)
    assert math.isnan(bad.val_loss_final) and bad.curves["step"] == [0]
    # float32 overflows at ~1e38 in slightly different places in the two implementations, so at
    # absurd learning rates the first non-finite step may differ by one
    assert alone.diverged_at is not None and abs(bad.diverged_at - alone.diverged_at) <= 1
    for k, v in bad.state_dict.items():  # frozen where it stopped: finite weights
        assert torch.isfinite(v).all(), k
    for i in (0, 2):
        _assert_same_run(eager_train(ModelConfig(), runs[i]), stacked[i])


VARIANTS = [
    ModelConfig(norm="post"),
    ModelConfig(norm="none"),
    ModelConfig(norm_kind="rms"),
    ModelConfig(qk_norm=True),
    ModelConfig(z_loss=1e-2),
    ModelConfig(param="mup", d_model=32),
    ModelConfig(tie_embeddings=True),
    ModelConfig(n_layers=2, n_heads=4),
]


@pytest.mark.parametrize(
    "cfg",
    VARIANTS,
    ids=lambda c: (
        f"{c.norm}-{c.norm_kind}-qk{int(c.qk_norm)}-z{c.z_loss}-{c.param}-tie{int(c.tie_embeddings)}-L{c.n_layers}"
    ),
)
def test_variants_match_separate_runs(cfg):
    runs = [TrainConfig(steps=30, eval_every=15, lr=1e-2, seed=s) for s in (0, 1)]
    for run, result in zip(runs, train_many(cfg, runs), strict=True):
        _assert_same_run(eager_train(cfg, run), result)


@pytest.mark.parametrize("optimizer", ["adam", "sgd", "momentum"])
def test_other_optimisers_match_separate_runs(optimizer):
    lr = 0.3 if optimizer in ("sgd", "momentum") else 1e-2
    runs = [
        TrainConfig(steps=40, eval_every=20, optimizer=optimizer, lr=lr * f, seed=s) for s, f in ((0, 1.0), (1, 0.5))
    ]
    for run, result in zip(runs, train_many(ModelConfig(), runs), strict=True):
        _assert_same_run(eager_train(ModelConfig(), run), result)


def test_worker_stacks_give_the_same_results():
    runs = [TrainConfig(steps=8, eval_every=4, lr=1e-2, seed=s) for s in range(3)]
    here = train_many(ModelConfig(), runs)
    spread = train_many(ModelConfig(), runs, workers=2)  # runs 0 in one stack, runs 1-2 in another
    assert [r.train_config for r in spread] == [r.train_config for r in here]
    for a, b in zip(here, spread, strict=True):  # stacks of 3 and of 1 + 2 may round differently in the last bit
        assert a.curves["step"] == b.curves["step"]
        assert max(abs(u - v) for u, v in zip(a.step_losses, b.step_losses, strict=True)) < 1e-6


def test_runs_must_share_batch_and_optimizer():
    with pytest.raises(ValueError, match="batch"):
        train_many(ModelConfig(), [TrainConfig(batch=32), TrainConfig(batch=16)])
    with pytest.raises(ValueError, match="optimizer"):
        train_many(ModelConfig(), [TrainConfig(), TrainConfig(optimizer="sgd")])


def test_stacks_side_by_side_match_separate_runs_and_restore_threads():
    # threads=2 splits the runs into two stacks on two Python threads (the default with 2 threads);
    # each must still be its own run, and torch's thread setting must come back unchanged
    runs = [TrainConfig(steps=40, eval_every=20, lr=1e-2, seed=s) for s in range(3)]
    before = torch.get_num_threads()
    seen: list[tuple[int, int]] = []
    results = train_many(ModelConfig(), runs, threads=2, on_eval=lambda m, rec: seen.append((m, rec["step"])))
    assert torch.get_num_threads() == before
    assert sorted(seen) == [(m, s) for m in range(3) for s in (0, 20, 40)]
    for run, result in zip(runs, results, strict=True):
        _assert_same_run(eager_train(ModelConfig(), run), result)


def test_a_stack_resumes_from_its_checkpoint_bit_for_bit(tmp_path):
    runs = [TrainConfig(steps=60, eval_every=20, seed=s, lr=lr) for s, lr in ((0, 1e-2), (1, 3e-3))]
    straight = train_many(ModelConfig(), runs, workers=1)
    path = tmp_path / "stack.pt"
    first = train_many(ModelConfig(), runs, checkpoint=path, stop_at=30)
    assert [r.steps for r in first] == [30, 30]
    resumed = train_many(ModelConfig(), runs, checkpoint=path)
    for a, b in zip(straight, resumed, strict=True):
        assert a.step_losses == b.step_losses and _nan_to_none(a.curves) == _nan_to_none(b.curves)
        for k, v in a.state_dict.items():
            assert torch.equal(v, b.state_dict[k]), k
    with pytest.raises(ValueError, match="runs"):
        train_many(ModelConfig(), runs[:1], checkpoint=path)


# -- the document mask ------------------------------------------------------------


def _tiny_corpus():
    corpus = load_corpus()
    n = 4000
    return corpus_from_text(corpus.text[:n], 0.2)


@pytest.mark.parametrize("docs", ["none", "one document"])
def test_document_ids_of_one_document_change_nothing(docs):
    corpus = _tiny_corpus()
    cfg = ModelConfig()
    runs = [TrainConfig(steps=30, eval_every=10, seed=s, lr=2e-2) for s in (0, 1)]
    want = train_many(cfg, runs, corpus, workers=1)
    train_ids = None if docs == "none" else torch.zeros(len(corpus.train), dtype=torch.long)
    val_ids = None if docs == "none" else torch.zeros(len(corpus.val), dtype=torch.long)
    got = train_many(cfg, runs, corpus, workers=1, docs=train_ids, val_docs=val_ids)
    for w, g in zip(want, got, strict=True):
        assert g.step_losses == w.step_losses and g.step_grad_norms == w.step_grad_norms
        assert g.val_loss_final == w.val_loss_final
        assert all(torch.equal(g.state_dict[k], w.state_dict[k]) for k in w.state_dict)
        skip = {"seconds", "state_dict"}  # every other field, curves included, compared exactly (repr: NaN == NaN)
        assert repr({f.name: getattr(g, f.name) for f in dataclasses.fields(g) if f.name not in skip}) == repr(
            {f.name: getattr(w, f.name) for f in dataclasses.fields(w) if f.name not in skip}
        )


def test_training_with_documents_trains_a_different_network():
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=20, eval_every=10, seed=0, lr=2e-2)]
    plain = train_many(ModelConfig(), runs, corpus)[0]
    docs = torch.arange(len(corpus.train)) // 10  # a boundary every 10 characters: most windows cross one
    masked = train_many(ModelConfig(), runs, corpus, docs=docs)[0]
    assert masked.step_losses[0] != plain.step_losses[0]
    assert masked.curves["val_loss"][0] == plain.curves["val_loss"][0]  # the same initial weights


def test_document_ids_must_cover_the_text():
    corpus = _tiny_corpus()
    with pytest.raises(ValueError, match="document ids for"):
        train_many(ModelConfig(), [TrainConfig(steps=2)], corpus, docs=torch.zeros(3, dtype=torch.long))


# -- per-step hooks ---------------------------------------------------------------


def _same(a, b):
    """Two lists of TrainResults equal in every field but the wall time (repr: NaN == NaN)."""
    for x, y in zip(a, b, strict=True):
        assert all(torch.equal(x.state_dict[k], y.state_dict[k]) for k in x.state_dict)
        skip = {"seconds", "state_dict"}
        assert repr({f.name: getattr(x, f.name) for f in dataclasses.fields(x) if f.name not in skip}) == repr(
            {f.name: getattr(y, f.name) for f in dataclasses.fields(y) if f.name not in skip}
        )


def test_on_step_sees_what_a_checkpoint_would_hold_and_stops_where_stop_at_would(tmp_path):
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=40, eval_every=10, seed=s, lr=2e-2) for s in (0, 1)]
    seen: dict[int, tuple[torch.Tensor, dict]] = {}

    def look(step: Step) -> bool:
        if step.step in (0, 7, 25):
            seen[step.step] = (step.theta.clone(), {k: v.clone() for k, v in step.optimizer.state.items()})
        assert step.running == [0, 1] and step.curves[0]["step"][-1] == step.step - step.step % 10
        return step.step == 25

    stopped = train_many(ModelConfig(), runs, corpus, on_step=look)
    assert sorted(seen) == [0, 7, 25] and not seen[0][1]  # no optimiser state before the first update
    for k in (7, 25):
        path = tmp_path / f"at{k}.pt"
        resumed = train_many(ModelConfig(), runs, corpus, checkpoint=path, stop_at=k)
        ck = load_checkpoint(path)
        assert torch.equal(ck["theta"], seen[k][0])
        assert all(torch.equal(ck["optimizer"][name], v) for name, v in seen[k][1].items())
    _same(stopped, resumed)  # halted by the hook at 25 = stopped at 25
    assert stopped[0].steps == 25 and math.isnan(stopped[0].val_loss_final)


def test_on_step_weights_of_a_stopped_run_are_those_it_stopped_with():
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=10, eval_every=5, seed=0, lr=2e-2), TrainConfig(steps=20, eval_every=5, seed=1)]
    last: list[dict[str, torch.Tensor]] = []

    def look(step: Step) -> None:
        if step.step == 20:
            assert step.running == []
            last.append(step.weights(0, ModelConfig()))

    results = train_many(ModelConfig(), runs, corpus, on_step=look)
    assert all(torch.equal(last[0][k], v) for k, v in results[0].state_dict.items())


def test_skip_leaves_a_runs_weights_and_moments_and_the_others_go_on():
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=12, eval_every=4, seed=s, lr=2e-2) for s in (0, 1)]
    skip_at = {3, 4, 8}
    before: dict[int, torch.Tensor] = {}
    after: dict[int, torch.Tensor] = {}

    def veto(step: Step) -> torch.Tensor | None:
        if step.step not in skip_at:
            return None
        before[step.step] = step.theta[0].clone()
        return torch.tensor([True, False])

    def look(step: Step) -> None:
        if step.step - 1 in skip_at:
            after[step.step - 1] = step.theta[0].clone()
            if step.step - 1 == 3:  # the first skipped update leaves run 0's moments where update 3 left them
                assert step.optimizer.state["exp_avg"][0].abs().sum() > 0

    got = train_many(ModelConfig(), runs, corpus, skip=veto, on_step=look)
    plain = train_many(ModelConfig(), runs, corpus)
    assert all(torch.equal(before[k], after[k]) for k in skip_at)
    _same(got[1:], plain[1:])  # the run not skipped trains as it would alone
    assert got[0].step_losses[:4] == plain[0].step_losses[:4] and got[0].step_losses[4] != plain[0].step_losses[4]


# -- the network: stacked fast path or autograd Decoders --------------------------


def test_the_stacked_path_covers_every_variant_it_implements_and_nothing_else():
    assert supports(ModelConfig(norm="post", qk_norm=True, z_loss=1e-3, param="mup", d_model=32))
    autograd_only = {"fp8"}  # a new field must be added knowingly, to one side or the other
    assert {f.name for f in dataclasses.fields(ModelConfig)} == COVERED | autograd_only
    assert not supports(ModelConfig(fp8="tensor")) and supports(ModelConfig(fp8=None))
    with pytest.raises(ValueError, match="net must be one of"):
        train_many(ModelConfig(), [TrainConfig(steps=1)], _tiny_corpus(), net="fast")


@pytest.mark.parametrize(
    "cfg",
    [ModelConfig(), ModelConfig(norm="post", norm_kind="rms", qk_norm=True, z_loss=1e-3, tie_embeddings=True)],
    ids=["default", "post-rms-qk-z-tied"],
)
def test_the_autograd_path_trains_the_same_models_as_the_stacked_path(cfg):
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=30, eval_every=10, seed=s, lr=2e-2) for s in (0, 1)]
    docs = torch.arange(len(corpus.train)) // 50
    fast = train_many(cfg, runs, corpus, workers=1, docs=docs, net="stacked")
    slow = train_many(cfg, runs, corpus, workers=1, docs=docs, net="autograd")
    for f, s in zip(fast, slow, strict=True):
        assert f.curves["step"] == s.curves["step"]
        assert f.curves["val_loss"] == pytest.approx(s.curves["val_loss"], abs=2e-5)
        assert f.step_losses == pytest.approx(s.step_losses, abs=2e-5)
        assert all(torch.allclose(f.state_dict[k], s.state_dict[k], atol=1e-5) for k in f.state_dict)
    # one of its runs diverging stops it alone, as on the stacked path
    blow = train_many(cfg, [runs[0], replace(runs[1], lr=1e6, clip=None)], corpus, net="autograd")
    assert blow[1].diverged_at is not None and blow[0].diverged_at is None and blow[0].steps == 30
