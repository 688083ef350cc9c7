"""model/stacked.py: the stacked Decoder's forward, loss, backward and
evaluation against the readable Decoder (float64 autograd), at M = 1 and
for a stack; the weights' layout."""

import math

import pytest
import torch

from model.data import Batches, load_corpus, sample_batch
from model.decoder import Decoder, ModelConfig, cross_entropy
from model.stacked import EVAL_CHUNK, Layout, StackedDecoder, init_stack
from model.train import TrainConfig

VARIANTS = [
    ModelConfig(),
    ModelConfig(norm="post"),
    ModelConfig(norm="none"),
    ModelConfig(attention="self"),
    ModelConfig(norm="none", attention="self"),
    ModelConfig(norm_kind="rms"),
    ModelConfig(qk_norm=True),
    ModelConfig(z_loss=1e-2),
    ModelConfig(param="mup", d_model=32),
    ModelConfig(tie_embeddings=True),
    ModelConfig(n_layers=2, n_heads=4),
    ModelConfig(norm_kind="rms", qk_norm=True),
    ModelConfig(n_layers=2, n_heads=4, tie_embeddings=True),
]


def _ids(c: ModelConfig) -> str:
    arch = f"{c.param}{c.d_model}-tie{int(c.tie_embeddings)}-L{c.n_layers}H{c.n_heads}"
    return f"{c.norm}-{c.norm_kind}-qk{int(c.qk_norm)}-z{c.z_loss}-{c.attention}-{arch}"


def _load(model: Decoder, layout: Layout, row: torch.Tensor) -> Decoder:
    model.load_state_dict(
        {k: v.to(next(model.parameters()).dtype) for k, v in layout.state_dict(row, model.cfg).items()}
    )
    return model


def _one(model: Decoder) -> tuple[Layout, torch.Tensor, StackedDecoder]:
    """A stack of one: the model's own weights."""
    layout = Layout(model)
    theta = layout.flatten(model)[None].clone()  # (1, P)
    return layout, theta, StackedDecoder(model.cfg, layout, theta, torch.full_like(theta, math.nan))


def _large_weights_model(cfg: ModelConfig) -> Decoder:
    """A seeded Decoder with its weights scaled up 20x (attention far from uniform)."""
    torch.manual_seed(0)
    model = Decoder(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0)
    return model


def _logits(net: StackedDecoder, x: torch.Tensor) -> torch.Tensor:
    """The stack's logits for the windows x (B, T) of its one model, as (B, T, V)."""
    B, T = x.shape
    with torch.no_grad():
        logits, _ = net.forward(x[None], keep=False)  # (1, V, B*T)
    return logits[0].T.reshape(B, T, -1)


# -- the layout -----------------------------------------------------------------------


def test_layout_round_trips_the_decoders_weights():
    cfg = ModelConfig(n_layers=2)
    torch.manual_seed(0)
    model = Decoder(cfg)
    layout = Layout(model)
    row = layout.flatten(model)
    assert row.shape == (layout.size,) == (5_376 + 3_072,)
    for k, v in layout.state_dict(row, cfg).items():
        assert torch.equal(v, model.state_dict()[k]), k
    tied = Decoder(ModelConfig(tie_embeddings=True))
    weights = Layout(tied).state_dict(Layout(tied).flatten(tied), tied.cfg)
    assert list(weights) == list(tied.state_dict()) and weights["lm_head.weight"] is weights["wte.weight"]


def test_init_stack_is_manual_seed_then_decoder_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    layout, theta = init_stack(ModelConfig(), [4, 7])
    assert torch.equal(torch.get_rng_state(), before)
    for m, seed in enumerate((4, 7)):
        torch.manual_seed(seed)
        assert torch.equal(theta[m], layout.flatten(Decoder(ModelConfig())))


# -- the forward pass (was train.py's fast_forward) -------------------------------------


@pytest.mark.parametrize("cfg", VARIANTS, ids=_ids)
def test_stacked_forward_matches_the_decoder(cfg):
    model = _large_weights_model(cfg)
    _, _, net = _one(model)
    x = torch.randint(0, cfg.vocab, (8, cfg.context), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours, theirs = _logits(net, x), model(x)
    assert (ours - theirs).abs().max().item() < 1e-6 * max(1.0, theirs.abs().max().item())


def test_stacked_forward_default_within_1e6():
    torch.manual_seed(0)
    model = Decoder(ModelConfig())
    _, _, net = _one(model)
    x = torch.randint(0, 64, (32, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        assert (_logits(net, x) - model(x)).abs().max().item() < 1e-6


def test_evaluation_in_chunks_is_the_decoders_mean_loss():
    torch.manual_seed(0)
    model = Decoder(ModelConfig())
    _, _, net = _one(model)
    n = 2 * EVAL_CHUNK + 7  # two whole chunks and a short one
    gen = torch.Generator().manual_seed(3)
    x, y = (torch.randint(0, 64, (n, 16), generator=gen) for _ in range(2))
    with torch.no_grad():
        expected = cross_entropy(model(x).double(), y).item()
    assert abs(net.evaluate(x, y)[0].item() - expected) < 1e-6


def test_stacked_evaluation_matches_the_decoder():
    cfg = ModelConfig()
    layout, theta = init_stack(cfg, [0, 1])
    net = StackedDecoder(cfg, layout, theta, torch.empty_like(theta))
    x = torch.randint(0, 64, (300, 16), generator=torch.Generator().manual_seed(0))  # more than one chunk
    y = torch.randint(0, 64, (300, 16), generator=torch.Generator().manual_seed(1))
    val = net.evaluate(x, y)
    for m in range(2):
        model = _load(Decoder(cfg), layout, theta[m])
        with torch.no_grad():
            assert val[m].item() == pytest.approx(cross_entropy(model(x), y).item(), abs=1e-6)


# -- loss and backward --------------------------------------------------------------------


@pytest.mark.parametrize("cfg", VARIANTS, ids=_ids)
def test_stacked_loss_and_gradients_match_autograd(cfg):
    M = 3
    layout, theta = init_stack(cfg, [0, 1, 2])
    theta += 0.3 * torch.randn(theta.shape, generator=torch.Generator().manual_seed(9))  # far from init
    grad = torch.full_like(theta, math.nan)  # every entry must be written
    net = StackedDecoder(cfg, layout, theta, grad)
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, cfg.vocab, (M, 4, cfg.context), generator=gen)
    y = torch.randint(0, cfg.vocab, (M, 4, cfg.context), generator=gen)
    loss = net.loss_and_grad(x, y)
    for m in range(M):
        model = _load(Decoder(cfg).double(), layout, theta[m])  # float64 autograd as the reference
        ref = cross_entropy(model(x[m]), y[m], cfg.z_loss)
        ref.backward()
        ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        assert loss[m].item() == pytest.approx(ref.item(), abs=2e-6)
        assert (grad[m].double() - ref_grad).abs().max() <= 2e-5 * ref_grad.abs().max()


def test_gradients_of_one_model_match_autograd():
    # (was: the flat buffer's gradients through the fused forward match the Decoder's own autograd)
    cfg = ModelConfig(n_layers=2)
    torch.manual_seed(0)
    model = Decoder(cfg)
    layout, theta, net = _one(model)
    x = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 64, (4, 16), generator=torch.Generator().manual_seed(2))
    net.loss_and_grad(x[None], y[None])
    cross_entropy(model(x), y).backward()
    expected = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    assert torch.allclose(net.grad[0], expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cfg", VARIANTS, ids=_ids)
@pytest.mark.parametrize("short", [False, True])  # T < context: wpe's unused rows get zero gradient
def test_written_backward_is_as_exact_as_autograd(cfg, short):
    # against float64 autograd (the true gradient to ~1e-16), the written-out float32 backward
    # must be as close as float32 autograd is: the same sums, only in another order
    model = _large_weights_model(cfg)
    _, _, net = _one(model)
    T = cfg.context - 3 if short else cfg.context
    gen = torch.Generator().manual_seed(1)
    x, y = (torch.randint(0, cfg.vocab, (32, T), generator=gen) for _ in range(2))

    def autograd(m: Decoder) -> tuple[torch.Tensor, torch.Tensor]:
        loss = cross_entropy(m(x), y, cfg.z_loss)
        return loss.detach(), torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(m.parameters()))])

    loss32, grad32 = autograd(model)
    loss64, grad64 = autograd(_large_weights_model(cfg).double())
    ours = net.loss_and_grad(x[None], y[None])[0]
    assert abs(ours.item() - loss64.item()) <= max(2 * abs(loss32.item() - loss64.item()), 1e-6)
    err_autograd = (grad32.double() - grad64).abs().max().item()
    err_ours = (net.grad[0].double() - grad64).abs().max().item()
    assert 0 < err_autograd < 1e-5 * grad64.abs().max().item()
    assert err_ours <= 2 * err_autograd, (err_ours, err_autograd)


# -- batches ---------------------------------------------------------------------------------


def test_batches_are_sample_batch_draws():
    data = load_corpus().train
    runs = [TrainConfig(seed=0), TrainConfig(seed=1, data_seed=123)]
    batches = Batches(data, [r.data_seed_value for r in runs], 8, 16)
    gens = [torch.Generator().manual_seed(r.data_seed_value) for r in runs]
    for _ in range(batches.ahead + 5):  # across a refill
        x, y = batches.next()
        for m, g in enumerate(gens):
            xs, ys = sample_batch(data, 8, 16, g)
            assert torch.equal(x[m], xs) and torch.equal(y[m], ys)
