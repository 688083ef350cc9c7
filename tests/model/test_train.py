"""model/train.py: schedules, the fused forward, the flat optimisers,
checkpoint/resume, divergence, the CLI."""

import json
import math

import pytest
import torch

from model.decoder import Decoder, ModelConfig, cross_entropy
from model.train import (
    EVAL_CHUNK,
    FlatParams,
    Optimizer,
    TrainConfig,
    backward,
    evaluate,
    fast_forward,
    has_written_backward,
    load_checkpoint,
    loss_and_tape,
    lr_at,
    main,
    save_checkpoint,
    train,
)

torch.set_num_threads(1)

VARIANTS = [
    ModelConfig(),
    ModelConfig(norm="post"),
    ModelConfig(norm="none"),
    ModelConfig(norm_kind="rms", qk_norm=True),
    ModelConfig(n_layers=2, n_heads=4, tie_embeddings=True),
    ModelConfig(param="mup", d_model=32),
]


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


# -- the fused forward and the flat buffers ----------------------------------------


def _large_weights_model(cfg: ModelConfig) -> tuple[Decoder, FlatParams]:
    """A seeded Decoder with its weights scaled up 20x (attention far from uniform) and its flat buffer."""
    torch.manual_seed(0)
    model = Decoder(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0)
    return model, FlatParams(model)


@pytest.mark.parametrize(
    "cfg", VARIANTS, ids=lambda c: f"{c.norm}-{c.norm_kind}-qk{int(c.qk_norm)}-L{c.n_layers}-{c.param}"
)
def test_fast_forward_matches_the_decoder(cfg):
    model, params = _large_weights_model(cfg)
    x = torch.randint(0, cfg.vocab, (8, cfg.context), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours, theirs = fast_forward(params.leaves, x, cfg), model(x)
    assert (ours - theirs).abs().max().item() < 1e-6 * max(1.0, theirs.abs().max().item())


def test_fast_forward_default_within_1e6():
    torch.manual_seed(0)
    model = Decoder(ModelConfig())
    params = FlatParams(model)
    x = torch.randint(0, 64, (32, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert (fast_forward(params.leaves, x, model.cfg) - model(x)).abs().max().item() < 1e-6


def test_evaluation_in_chunks_is_the_decoders_mean_loss():
    torch.manual_seed(0)
    model = Decoder(ModelConfig())
    params = FlatParams(model)
    n = 2 * EVAL_CHUNK + 7  # two whole chunks and a short one
    gen = torch.Generator().manual_seed(3)
    x, y = (torch.randint(0, 64, (n, 16), generator=gen) for _ in range(2))
    with torch.no_grad():
        expected = cross_entropy(model(x).double(), y).item()
    assert abs(evaluate(params.leaves, x, y, model.cfg) - expected) < 1e-6


def test_flat_buffer_is_the_models_weights_and_gradients_match_autograd():
    cfg = ModelConfig(n_layers=2)
    torch.manual_seed(0)
    model = Decoder(cfg)
    reference = {k: v.clone() for k, v in model.state_dict().items()}
    params = FlatParams(model)
    for k, v in model.state_dict().items():
        assert torch.equal(v, reference[k])
    params.data.add_(1.0)  # the module reads the flat buffer
    assert torch.equal(model.state_dict()["wte.weight"], reference["wte.weight"] + 1.0)
    params.data.sub_(1.0)

    x = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(2))
    grads = torch.autograd.grad(cross_entropy(fast_forward(params.leaves, x, cfg), y), list(params.leaves.values()))
    flat = torch.cat([g.reshape(-1) for g in grads])
    cross_entropy(model(x), y).backward()
    expected = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    assert torch.allclose(flat, expected, rtol=1e-5, atol=1e-7)


WRITTEN = [c for c in VARIANTS if has_written_backward(c)]


@pytest.mark.parametrize("cfg", WRITTEN, ids=lambda c: f"{c.norm}-L{c.n_layers}-tie{int(c.tie_embeddings)}-{c.param}")
@pytest.mark.parametrize("short", [False, True])  # T < context: wpe's unused rows get zero gradient
def test_written_backward_is_as_exact_as_autograd(cfg, short):
    # against float64 autograd (the true gradient to ~1e-16), the written-out float32 backward
    # must be as close as float32 autograd is: the same sums, only in another order
    assert len(WRITTEN) >= 4
    model, params = _large_weights_model(cfg)
    T = cfg.context - 3 if short else cfg.context
    gen = torch.Generator().manual_seed(1)
    x, y = (torch.randint(0, cfg.vocab, (32, T), generator=gen) for _ in range(2))

    def autograd(leaves):
        loss = cross_entropy(fast_forward(leaves, x, cfg), y)
        return loss.detach(), torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(leaves.values()))])

    loss32, grad32 = autograd(params.leaves)
    loss64, grad64 = autograd({k: v.detach().double().requires_grad_() for k, v in params.leaves.items()})
    params.grad.fill_(math.nan)  # every entry must be written
    ours, tape = loss_and_tape(params.leaves, x, y, cfg)
    backward(tape, params.leaves, params.grads, cfg)
    assert abs(ours.item() - loss64.item()) <= max(2 * abs(loss32.item() - loss64.item()), 1e-6)
    err_autograd = (grad32.double() - grad64).abs().max().item()
    err_ours = (params.grad.double() - grad64).abs().max().item()
    assert 0 < err_autograd < 1e-5 * grad64.abs().max().item()
    assert err_ours <= 2 * err_autograd, (err_ours, err_autograd)


@pytest.mark.parametrize(
    "kind, make",
    [
        ("adamw", lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
        ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
        ("sgd", lambda ps: torch.optim.SGD(ps, lr=1e-1, weight_decay=0.1)),
        ("momentum", lambda ps: torch.optim.SGD(ps, lr=1e-1, momentum=0.9, weight_decay=0.1)),
    ],
)
def test_flat_optimisers_match_torch_optim(kind, make):
    lr = 1e-1 if kind in ("sgd", "momentum") else 1e-2
    cfg = TrainConfig(optimizer=kind, lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    gen = torch.Generator().manual_seed(0)
    p_ours = torch.randn(300, generator=gen)
    p_torch = torch.nn.Parameter(p_ours.clone())
    opt_ours, opt_torch = Optimizer(cfg, p_ours), make([p_torch])
    for _ in range(5):
        g = torch.randn(300, generator=gen)
        opt_ours.step(p_ours, g, lr)
        p_torch.grad = g.clone()
        opt_torch.step()
        assert torch.allclose(p_ours, p_torch.detach(), rtol=1e-6, atol=1e-7)


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
    state["params"][3] = math.inf  # one weight of wte
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
