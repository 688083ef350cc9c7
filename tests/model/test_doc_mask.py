"""The document mask: attention from position t to s only when s <= t and both lie in
the same document. The readable Decoder, the NumPy reference and the stacked fast path
compute the same masked network (float64, loss and gradients); with every id equal
each computes exactly what it computes without ids; and a document's tokens get the
same outputs whatever document precedes them in the window (positions are not reset)."""

import math

import numpy as np
import pytest
import torch
from weights import perturbed

from model.decoder import Decoder, ModelConfig, cross_entropy, document_mask
from model.reference import forward as ref_forward
from model.reference import loss_and_grads
from model.stacked import StackedDecoder, init_stack

VARIANTS = {
    "default": ModelConfig(),
    "3 layers, 4 heads": ModelConfig(n_layers=3, n_heads=4),
    "post": ModelConfig(norm="post", n_layers=2),
    "none": ModelConfig(norm="none", n_layers=2),
    "rms, qk-norm": ModelConfig(norm_kind="rms", qk_norm=True, n_layers=2),
    "self": ModelConfig(attention="self"),
    "no residual": ModelConfig(residual=False, n_layers=2),
    "mup, tied, z-loss": ModelConfig(param="mup", d_model=32, tie_embeddings=True, z_loss=1e-2),
}


def _batch(cfg: ModelConfig, B: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random tokens and targets (B, T), and document ids that change at random places
    (every row holds one to four documents, ids increasing along the row)."""
    g = torch.Generator().manual_seed(seed)
    T = cfg.context
    x, y = (torch.randint(0, cfg.vocab, (B, T), generator=g) for _ in range(2))
    starts = torch.rand(B, T, generator=g) < 0.2
    starts[:, 0] = False
    doc = torch.cumsum(starts.long(), dim=1) + 7 * torch.arange(B)[:, None]  # any integers will do
    return x, y, doc


@pytest.fixture
def float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def test_document_mask_blocks_exactly_the_other_documents():
    doc = torch.tensor([[0, 0, 1, 1, 1, 5]])
    want = torch.tensor([[a != b for b in (0, 0, 1, 1, 1, 5)] for a in (0, 0, 1, 1, 1, 5)])
    assert torch.equal(document_mask(doc), want[None])
    cfg = ModelConfig(context=6)
    att = Decoder(cfg).blocks[0].attn
    assert int((~(att.mask | document_mask(doc)[0])).sum()) == 3 + 6 + 1  # pairs s <= t in one document


def test_the_batch_really_crosses_documents():
    _, _, doc = _batch(ModelConfig())
    assert all(len(set(row.tolist())) > 1 for row in doc)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_reference_matches_autograd_with_the_mask(name):
    cfg = VARIANTS[name]
    model = perturbed(cfg)
    x, y, doc = _batch(cfg)
    loss = model.loss(x, y, doc)
    loss.backward()
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    ref_loss, grads = loss_and_grads(state, x.numpy(), y.numpy(), cfg, doc.numpy())
    assert abs(ref_loss - loss.item()) < 1e-12
    unmasked, _ = loss_and_grads(state, x.numpy(), y.numpy(), cfg)
    if cfg.attention == "causal":
        assert abs(unmasked - ref_loss) > 1e-3  # the mask changes the network
    for k, p in model.named_parameters():
        assert p.grad is not None
        assert np.abs(grads[k] - p.grad.numpy()).max() < 1e-12, k


@pytest.mark.parametrize("name", list(VARIANTS))
def test_stacked_matches_autograd_with_the_mask_in_float64(name, float64_default):
    cfg = VARIANTS[name]
    M = 2
    layout, theta = init_stack(cfg, [0, 1])
    theta = theta.double() + 0.3 * torch.randn(theta.shape, generator=torch.Generator().manual_seed(9))
    grad = torch.full_like(theta, math.nan)
    net = StackedDecoder(cfg, layout, theta, grad)
    x, y, doc = _batch(cfg, B=4 * M)
    x, y, doc = x.view(M, 4, -1), y.view(M, 4, -1), doc.view(M, 4, -1)
    loss = net.loss_and_grad(x, y, doc)
    assert grad.dtype == torch.float64
    for m in range(M):
        model = Decoder(cfg).double()
        model.load_state_dict(layout.state_dict(theta[m], cfg))
        ref = cross_entropy(model(x[m], doc[m]), y[m], cfg.z_loss)
        ref.backward()
        ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
        assert abs(loss[m].item() - ref.item()) < 1e-12
        assert (grad[m] - ref_grad).abs().max() <= 1e-12 * max(1.0, ref_grad.abs().max().item())


def test_stacked_float32_with_the_mask_stays_close_to_float64():
    cfg = ModelConfig()
    layout, theta = init_stack(cfg, [0, 1])
    grad = torch.zeros_like(theta)
    net = StackedDecoder(cfg, layout, theta, grad)
    x, y, doc = _batch(cfg, B=8)
    x, y, doc = x.view(2, 4, -1), y.view(2, 4, -1), doc.view(2, 4, -1)
    loss = net.loss_and_grad(x, y, doc)
    for m in range(2):
        model = Decoder(cfg).double()
        model.load_state_dict({k: v.double() for k, v in layout.state_dict(theta[m], cfg).items()})
        ref = cross_entropy(model(x[m], doc[m]), y[m])
        ref.backward()
        ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
        assert loss[m].item() == pytest.approx(ref.item(), abs=2e-6)
        assert (grad[m].double() - ref_grad).abs().max() <= 2e-5 * ref_grad.abs().max()


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_id_equal_is_the_unmasked_network_bit_for_bit(name):
    cfg = VARIANTS[name]
    x, y, _ = _batch(cfg)
    same = torch.full_like(x, 3)
    torch.manual_seed(0)
    model = Decoder(cfg)
    with torch.no_grad():
        assert torch.equal(model(x, same), model(x))
    state = {k: v.detach().double().numpy() for k, v in model.state_dict().items()}
    assert np.array_equal(ref_forward(state, x.numpy(), cfg, same.numpy())[0], ref_forward(state, x.numpy(), cfg)[0])
    a, grads_a = loss_and_grads(state, x.numpy(), y.numpy(), cfg, same.numpy())
    b, grads_b = loss_and_grads(state, x.numpy(), y.numpy(), cfg)
    assert a == b and all(np.array_equal(grads_a[k], grads_b[k]) for k in grads_a)
    layout, theta = init_stack(cfg, [0, 1])
    grad = torch.zeros_like(theta)
    net = StackedDecoder(cfg, layout, theta, grad)
    xs, ys = x.repeat(2, 1).view(2, 4, -1), y.repeat(2, 1).view(2, 4, -1)
    plain = net.loss_and_grad(xs, ys)
    plain_grad = grad.clone()
    masked = net.loss_and_grad(xs, ys, torch.full_like(xs, -1))
    assert torch.equal(plain, masked) and torch.equal(plain_grad, grad)
    assert torch.equal(net.evaluate(x, y), net.evaluate(x, y, same))


@pytest.mark.parametrize("name", ["default", "3 layers, 4 heads", "post", "rms, qk-norm"])
def test_a_document_sees_nothing_of_the_document_before_it(name):
    """The tokens of a document that starts at position j get the same outputs (logits)
    whatever the previous document holds, in all three implementations."""
    cfg = VARIANTS[name]
    T, j = cfg.context, 6
    g = torch.Generator().manual_seed(1)
    tail = torch.randint(0, cfg.vocab, (T - j,), generator=g)
    heads = torch.randint(0, cfg.vocab, (3, j), generator=g)  # three different previous documents
    x = torch.cat([heads, tail.expand(3, -1)], dim=1)  # (3, T)
    doc = (torch.arange(T) >= j).long().expand(3, -1)
    model = perturbed(cfg)
    with torch.no_grad():
        out = model(x, doc)
        unmasked = model(x)
    for b in (1, 2):
        assert torch.equal(out[b, j:], out[0, j:])
        assert not torch.equal(out[b, :j], out[0, :j])
        assert not torch.allclose(unmasked[b, j:], unmasked[0, j:])  # without the mask they differ
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    ref = ref_forward(state, x.numpy(), cfg, doc.numpy())[0]
    assert np.array_equal(ref[1, j:], ref[0, j:]) and np.array_equal(ref[2, j:], ref[0, j:])
    # the fast path, float32: the same up to rounding (a matmul's columns may round
    # differently by where they sit), while without the mask the rows differ by far more
    layout, theta = init_stack(cfg, [0])
    theta = layout.flatten(model)[None].clone()
    net = StackedDecoder(cfg, layout, theta, torch.zeros_like(theta))
    with torch.no_grad():
        logits = net.forward(x[None], keep=False, doc=doc[None])[0][0].view(cfg.vocab, 3, T)  # (V, 3, T)
        plain = net.forward(x[None], keep=False)[0][0].view(cfg.vocab, 3, T)
    for b in (1, 2):
        assert (logits[:, b, j:] - logits[:, 0, j:]).abs().max() < 1e-5
        assert (plain[:, b, j:] - plain[:, 0, j:]).abs().max() > 1e-2


def test_document_ids_of_the_wrong_shape_or_type_are_refused():
    cfg = ModelConfig()
    x, _, doc = _batch(cfg)
    model = Decoder(cfg)
    with pytest.raises(ValueError, match="document ids have shape"):
        model(x, doc[:, :-1])
    with pytest.raises(ValueError, match="integers"):
        model(x, doc.double())
    layout, theta = init_stack(cfg, [0])
    net = StackedDecoder(cfg, layout, theta, torch.zeros_like(theta))
    with pytest.raises(ValueError, match="document ids have shape"):
        net.forward(x[None], doc=doc)
    with pytest.raises(ValueError, match="document ids have shape"):
        ref_forward({k: v.detach().numpy() for k, v in model.state_dict().items()}, x.numpy(), cfg, doc[:2].numpy())
