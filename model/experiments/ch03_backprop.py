"""Chapter 3, backpropagation through a transformer: the numbers deck 03 shows.

- ``ch03.gradient``: what a gradient is (nudge one weight of the trained Decoder by ±h) and
  how it is checked (central and one-sided differences against h, float64 and float32);
- ``ch03.ops``: each op's backward in the NumPy reference against float64 autograd;
- ``ch03.residual``: gradient norm at each layer's input, with and without the residual stream;
- ``ch03.memory``: the tensors the backward pass needs, captured with saved-tensor hooks,
  against the count derived by hand, over batch and context;
- ``ch03.flops``: forward and backward FLOPs of the matrix products, from their shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.flop_counter import FlopCounterMode

from model import reference
from model.data import load_corpus, ngram_loss, sample_batch, val_windows
from model.decoder import CausalSelfAttention, Decoder, ModelConfig, num_params
from model.experiments.common import exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, train_many

SEEDS = (0, 1, 2)

# the weights nudged: one entry of each kind (the entry with the largest |gradient| in its matrix)
NUDGED = {
    "wte": "wte.weight",
    "w_q": "blocks.0.attn.w_q.weight",
    "w_o": "blocks.0.attn.w_o.weight",
    "w_in": "blocks.0.mlp.w_in.weight",
    "head": "lm_head.weight",
}


# --------------------------------------------------------------------------- measures


def loglog_slope(h, err, lo: float, hi: float) -> float:
    """Least-squares slope of log10(err) against log10(h) over lo <= h <= hi (NaN if under 3 points)."""
    h, err = np.asarray(h, dtype=np.float64), np.asarray(err, dtype=np.float64)
    keep = (h >= lo) & (h <= hi) & (err > 0) & np.isfinite(err)
    if keep.sum() < 3:
        return math.nan
    return float(np.polyfit(np.log10(h[keep]), np.log10(err[keep]), 1)[0])


def best_step(h, err) -> tuple[float, float]:
    """The step h with the smallest error, and that error."""
    i = int(np.nanargmin(np.asarray(err, dtype=np.float64)))
    return float(h[i]), float(err[i])


def differences(loss: Callable[[float], float], h: float, base: float) -> tuple[float, float]:
    """(central, one-sided) difference quotients of ``loss`` at 0 with step h; base = loss(0)."""
    plus, minus = loss(h), loss(-h)
    return (plus - minus) / (2 * h), (plus - base) / h


def geo_mean(values) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=np.float64)))))


# --------------------------------------------------------------------------- what a gradient is; checking


def _h_grid() -> tuple[float, ...]:
    return tuple(10.0 ** (-k / 2) for k in range(0, 25))  # 1 down to 1e-12, half a decade apart


@dataclass(frozen=True)
class Gradient:
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run
    batch: int = 8  # windows in the one batch every nudge is measured on
    batch_seed: int = 0
    h: float = 1e-3  # the nudge of the table
    grid: tuple[float, ...] = field(default_factory=_h_grid)  # the steps of the V


FIT = {  # (dtype, side) -> the h range of each log-log fit: truncation on the right, round-off on the left
    ("f64", "right"): (10**-3.5, 10**-1.5),
    ("f64", "left"): (1e-12, 1e-7),
    ("f32", "right"): (10**-1.0, 1.0),
    ("f32", "left"): (10**-6.0, 10**-3.0),
}


@experiment("ch03.gradient", config=Gradient(), seeds=SEEDS, quick={"train.steps": 20})
def gradient(ctx: RunContext) -> Outcome:
    """What a gradient is, and how it is checked: the trained Decoder's loss nudged weight by weight."""
    cfg: Gradient = ctx.config
    corpus = load_corpus()
    runs = train_many(
        cfg.model,
        [replace(cfg.train, seed=s) for s in ctx.seeds],
        corpus,
        workers=1,
        on_eval=progress(ctx, cfg.train, 0.0, 0.6),
    )
    x, y = sample_batch(corpus.train, cfg.batch, cfg.model.context, torch.Generator().manual_seed(cfg.batch_seed))
    grid = np.array(cfg.grid)
    table: dict[str, list[tuple[float, float, float]]] = {k: [] for k in NUDGED}  # kind -> per seed (g, fd, rel)
    errors = {(d, m): np.zeros((len(runs), len(grid))) for d in ("f64", "f32") for m in ("central", "one_sided")}
    for s, run in enumerate(runs):
        ctx.report_progress(0.6 + 0.4 * s / len(runs), f"finite differences, seed {ctx.seeds[s]}")
        model = Decoder(cfg.model).double()
        model.load_state_dict({k: v.double() for k, v in (run.state_dict or {}).items()})
        loss = model.loss(x, y)
        loss.backward()
        params = dict(model.named_parameters())
        per_h = {key: np.zeros((len(NUDGED), len(grid))) for key in errors}
        for j, (kind, name) in enumerate(NUDGED.items()):
            g_all = params[name].grad
            assert g_all is not None
            idx = np.unravel_index(int(g_all.abs().argmax()), tuple(g_all.shape))
            g = float(g_all[idx])
            for dtype, d in (("f64", torch.float64), ("f32", torch.float32)):
                f = _nudged_loss(cfg.model, run.state_dict or {}, name, idx, x, y, d)
                base = f(0.0)
                if dtype == "f64":
                    central, _ = differences(f, cfg.h, base)
                    table[kind].append((g, central, abs(central - g) / abs(g)))
                for i, h in enumerate(grid):
                    central, one_sided = differences(f, float(h), base)
                    per_h[(dtype, "central")][j, i] = abs(central - g) / abs(g)
                    per_h[(dtype, "one_sided")][j, i] = abs(one_sided - g) / abs(g)
        for key in errors:  # the geometric mean over the nudged weights, per h
            errors[key][s] = np.exp(np.log(np.maximum(per_h[key], 1e-300)).mean(axis=0))
    m: dict[str, Measurement] = {
        "ch03.nudge.h": exact(cfg.h, "", "the nudge h of the table (float64)", 1),
        "ch03.nudge.batch": exact(cfg.batch, "windows", "windows in the batch every nudge is measured on"),
        "ch03.nudge.steps": exact(cfg.train.steps, "steps", "training steps of the nudged Decoder (the default run)"),
        "ch03.nudge.rel_diff.max": measured(
            [max(table[k][s][2] for k in NUDGED) for s in range(len(runs))],
            "",
            "largest relative |central difference - gradient| of the nudged weights at h (per seed)",
            2,
        ),
    }
    for kind in NUDGED:
        g, fd, rel = table[kind][0]
        m[f"ch03.nudge.{kind}.grad"] = exact(g, "nats per unit", f"seed 0: dL/dw of the nudged {kind} entry", 4)
        m[f"ch03.nudge.{kind}.fd"] = exact(fd, "nats per unit", f"seed 0: (L(w+h) - L(w-h)) / 2h, {kind} entry", 4)
        m[f"ch03.nudge.{kind}.rel"] = exact(rel, "", f"seed 0: relative difference, {kind} entry", 2)
    for (dtype, method), err in errors.items():
        name = f"ch03.fd.{dtype}.{method}"
        best = [best_step(grid, e) for e in err]
        m[f"{name}.best_h"] = measured([b[0] for b in best], "", f"{dtype} {method}: the h with the smallest error", 2)
        m[f"{name}.min_err"] = measured(
            [b[1] for b in best], "", f"{dtype} {method}: smallest relative error (geometric mean over weights)", 2
        )
        for side in ("right", "left"):
            lo, hi = FIT[(dtype, side)]
            m[f"{name}.slope_{side}"] = measured(
                [loglog_slope(grid, e, lo, hi) for e in err],
                "",
                f"{dtype} {method}: log-log slope of the error for {lo:.0e} <= h <= {hi:.0e}",
                3,
            )
    for (dtype, side), (lo, hi) in FIT.items():
        m[f"ch03.fd.{dtype}.{side}.lo"] = exact(lo, "", f"{dtype}: the {side} fit's smallest h", 1)
        m[f"ch03.fd.{dtype}.{side}.hi"] = exact(hi, "", f"{dtype}: the {side} fit's largest h", 1)
    series = {"h": grid, "seeds": list(ctx.seeds)}
    series |= {f"{d}_{meth}": e for (d, meth), e in errors.items()}
    return Outcome(measurements=m, series=series)


def _nudged_loss(cfg: ModelConfig, state: dict, name: str, idx, x, y, dtype) -> Callable[[float], float]:
    """h -> the loss with one weight moved by h, in ``dtype`` (the weights rounded to it first)."""
    model = Decoder(cfg).to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    w = dict(model.named_parameters())[name]
    w0 = w.detach()[idx].clone()

    @torch.no_grad()
    def f(h: float) -> float:
        w[idx] = w0 + h  # in dtype: a tiny h may round away
        out = float(model.loss(x, y))
        w[idx] = w0
        return out

    return f


# --------------------------------------------------------------------------- each op's backward


@dataclass(frozen=True)
class Ops:
    batch: int = 4
    input_seeds: tuple[int, ...] = (0, 1, 2)  # random inputs and upstream gradients, N(0, 1)


def op_diffs(seed: int) -> dict[str, tuple[float, float]]:
    """For each op, (largest |reference backward - float64 autograd|, largest |autograd gradient|)
    on random inputs and upstream gradients drawn from ``seed``."""
    cfg = ModelConfig()
    B, T, D, H, V = 4, cfg.context, cfg.d_model, cfg.n_heads, cfg.vocab
    g = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    def compare(ours: list[np.ndarray], grads: list[torch.Tensor | None]) -> tuple[float, float]:
        theirs = [b for b in grads if b is not None]
        assert len(theirs) == len(ours), "an autograd gradient is missing"
        diff = max(float(np.abs(a - b.numpy()).max()) for a, b in zip(ours, theirs, strict=True))
        return diff, max(float(b.abs().max()) for b in theirs)

    out = {}
    # linear: y = x W^T
    x, w, dy = randn(B, T, D).requires_grad_(), randn(V, D).requires_grad_(), randn(B, T, V)
    F.linear(x, w).backward(dy)
    grads: dict = {}
    dx = reference.linear_backward(dy.numpy(), x.detach().numpy(), w.detach().numpy(), "w", grads)
    out["linear"] = compare([dx, grads["w"]], [x.grad, w.grad])
    # GELU (exact, erf)
    u, du = (2 * randn(B, T, 4 * D)).requires_grad_(), randn(B, T, 4 * D)
    F.gelu(u).backward(du)
    out["gelu"] = compare([du.numpy() * reference.gelu_grad(u.detach().numpy())], [u.grad])
    # softmax over a causal row: masked scores get probability 0 and gradient 0
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    s, dp = randn(B, H, T, T).requires_grad_(), randn(B, H, T, T)
    p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    p.backward(dp)
    out["softmax"] = compare([reference.softmax_backward(dp.numpy(), p.detach().numpy())], [s.grad])
    # attention: projections, scores, mask, softmax, values, output projection
    attn = CausalSelfAttention(cfg).double()
    with torch.no_grad():
        for prm in attn.parameters():
            prm.copy_(randn(*prm.shape) / math.sqrt(D))
    xa, da = randn(B, T, D).requires_grad_(), randn(B, T, D)
    attn(xa).backward(da)
    state = {f"a.{n}": prm.detach().numpy() for n, prm in attn.named_parameters()}
    _, cache = reference.attn_forward(xa.detach().numpy(), state, "a", cfg)
    grads = {}
    dxa = reference.attn_backward(da.numpy(), cache, state, "a", cfg, grads)
    ours = [dxa] + [grads[f"a.{n}"] for n, _ in attn.named_parameters()]
    out["attention"] = compare(ours, [xa.grad] + [prm.grad for _, prm in attn.named_parameters()])
    # LayerNorm, no gain or bias
    xn, dn = randn(B, T, D).requires_grad_(), randn(B, T, D)
    F.layer_norm(xn, (D,), eps=cfg.norm_eps).backward(dn)
    _, ncache = reference.norm_forward(xn.detach().numpy(), "layer", cfg.norm_eps)
    out["layernorm"] = compare([reference.norm_backward(dn.numpy(), ncache)], [xn.grad])
    return out


def whole_model_diff(seed: int, batch: int) -> tuple[float, float, float]:
    """The whole Decoder (default config, weights drawn from ``seed``) on a random batch:
    (|reference loss - autograd loss|, largest |reference gradient - float64 autograd| over every
    weight, the largest |autograd gradient|)."""
    cfg = ModelConfig()
    torch.manual_seed(seed)
    model = Decoder(cfg).double()
    g = torch.Generator().manual_seed(seed)
    x, y = (torch.randint(0, cfg.vocab, (batch, cfg.context), generator=g) for _ in range(2))
    loss = model.loss(x, y)
    loss.backward()
    state = {n: p.detach().numpy() for n, p in model.named_parameters()}
    ref_loss, grads = reference.loss_and_grads(state, x.numpy(), y.numpy(), cfg)
    theirs = {n: p.grad.numpy() for n, p in model.named_parameters() if p.grad is not None}
    if set(theirs) != set(grads):
        raise AssertionError("the reference and autograd give gradients for different weights")
    diff = max(float(np.abs(grads[n] - theirs[n]).max()) for n in theirs)
    return abs(ref_loss - float(loss.detach())), diff, max(float(np.abs(t).max()) for t in theirs.values())


@experiment("ch03.ops", config=Ops())
def ops(ctx: RunContext) -> Outcome:
    """Each op's backward in the NumPy reference against float64 autograd, on the same random inputs."""
    cfg: Ops = ctx.config
    per_seed = [op_diffs(s) for s in cfg.input_seeds]
    m = {"ch03.ops.inputs": exact(len(cfg.input_seeds), "", "random input sets each op is checked on")}
    for op in per_seed[0]:
        m[f"ch03.ops.{op}.diff"] = exact(
            max(d[op][0] for d in per_seed), "", f"{op}: largest |reference backward - float64 autograd|", 2
        )
        m[f"ch03.ops.{op}.rel"] = exact(
            max(d[op][0] / d[op][1] for d in per_seed), "", f"{op}: that difference over the largest |gradient|", 2
        )
    whole = [whole_model_diff(s, cfg.batch) for s in cfg.input_seeds]
    m["ch03.ops.model.loss_diff"] = exact(
        max(w[0] for w in whole), "nats", "whole Decoder: largest |reference loss - autograd loss|", 2
    )
    m["ch03.ops.model.diff"] = exact(
        max(w[1] for w in whole),
        "",
        "whole Decoder: largest |reference gradient - float64 autograd| over every weight and input set",
        2,
    )
    m["ch03.ops.model.rel"] = exact(
        max(w[1] / w[2] for w in whole), "", "whole Decoder: that difference over the largest |gradient|", 2
    )
    m["ch03.ops.worst"] = exact(
        max(d[op][0] for d in per_seed for op in d), "", "largest difference over every op and input", 2
    )
    return Outcome(measurements=m)


# --------------------------------------------------------------------------- the residual highway


@dataclass(frozen=True)
class Residual:
    depths: tuple[int, ...] = (2, 4, 8)
    lrs: tuple[float, ...] = (2e-3, 6e-3, 2e-2, 6e-2)  # with residuals: each arm's ladder, about 3x apart
    nores_lrs: tuple[float, ...] = (6e-4, 2e-3, 6e-3, 2e-2, 6e-2, 2e-1)  # without: wider, to find one that learns
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=600, eval_every=100))
    windows: int = 64  # validation windows the gradient norms are measured on
    margin: float = 0.1  # an arm learned if every seed ends this far below the unigram model's loss


@dataclass(frozen=True)
class LayerProfile:
    """Per block l (its input x_l, the stream entering it): ||dL/dx_l||, ||x_l||, and
    ||dL/dW_l|| / ||W_l|| over the block's weights."""

    grad: list[float]
    act: list[float]
    weight_rel: list[float]

    @property
    def scaled(self) -> list[float]:
        """||dL/dx_l|| * ||x_l||: the gradient with the input's scale taken out (a norm's
        backward divides by its input's scale, so a large input alone makes a small gradient)."""
        return [g * a for g, a in zip(self.grad, self.act, strict=True)]


def layer_profile(model: Decoder, x: torch.Tensor, y: torch.Tensor) -> LayerProfile:
    """The gradient's path through the blocks of ``model`` on the windows x, y (one backward pass)."""
    inputs: list[torch.Tensor] = []

    def keep(module, args) -> None:
        args[0].retain_grad()
        inputs.append(args[0])

    handles = [b.register_forward_pre_hook(keep) for b in model.blocks]
    try:
        model.zero_grad(set_to_none=True)
        model.loss(x, y).backward()
    finally:
        for handle in handles:
            handle.remove()
    grad = [float(t.grad.norm()) if t.grad is not None else math.nan for t in inputs]
    rel = []
    for block in model.blocks:
        w = torch.cat([p.detach().reshape(-1) for p in block.parameters()])
        g = torch.cat([p.grad.reshape(-1) for p in block.parameters() if p.grad is not None])
        rel.append(float(g.norm() / w.norm()))
    return LayerProfile(grad, [float(t.detach().norm()) for t in inputs], rel)


def layer_input_grad_norms(model: Decoder, x: torch.Tensor, y: torch.Tensor) -> list[float]:
    """||dL/dx_i|| for the input x_i of every block i (the residual stream entering it)."""
    return layer_profile(model, x, y).grad


def _profiles(model_cfg: ModelConfig, seeds, states, x, y) -> dict[str, np.ndarray]:
    """Each measure of layer_profile, (seeds, depth), in float64: from each seed's initial
    weights (states None) or from the given state dicts."""
    out: dict[str, list[list[float]]] = {"grad": [], "act": [], "scaled": [], "weight_rel": []}
    for i, s in enumerate(seeds):
        torch.manual_seed(s)
        model = Decoder(model_cfg).double()  # the run's initial weights: manual_seed then Decoder
        if states is not None:
            model.load_state_dict({n: v.double() for n, v in states[i].items()})
        p = layer_profile(model, x, y)
        for key in out:
            out[key].append(getattr(p, key))
    return {k: np.array(v) for k, v in out.items()}


RESIDUAL_QUICK = {"train.steps": 10, "train.eval_every": 5, "depths": (2,), "lrs": (2e-3,), "nores_lrs": (2e-3, 2e-2)}


@experiment("ch03.residual", config=Residual(), seeds=SEEDS, quick=RESIDUAL_QUICK)
def residual(ctx: RunContext) -> Outcome:
    """The residual highway: per-layer gradient norm, the same times the input's norm (scale-free),
    and weight-gradient over weight norm, at depths 2 to 8, pre-LN, with and without the residual
    connections; at initialisation, and after training at each arm's own best learning rate
    (only in arms that learned: an arm at the unigram level is reported as collapsed)."""
    cfg: Residual = ctx.config
    corpus = load_corpus()
    xv, yv = val_windows(corpus.val, ModelConfig().context)
    xv, yv = xv[: cfg.windows], yv[: cfg.windows]
    unigram = ngram_loss(corpus.train, corpus.val, n=1, vocab_size=ModelConfig().vocab)
    m: dict[str, Measurement] = {
        "ch03.residual.steps": exact(cfg.train.steps, "steps", "training steps of every run"),
        "ch03.residual.lr_low": exact(min(cfg.lrs), "", "lowest rate of the ladder with residuals", 1),
        "ch03.residual.lr_high": exact(max(cfg.lrs), "", "highest rate of the ladder with residuals", 1),
        "ch03.residual.rates": exact(len(cfg.lrs), "rates", "learning rates each arm with residuals is trained at"),
        "ch03.residual.nores_lr_low": exact(min(cfg.nores_lrs), "", "lowest rate of the ladder without", 1),
        "ch03.residual.nores_lr_high": exact(max(cfg.nores_lrs), "", "highest rate of the ladder without", 1),
        "ch03.residual.nores_rates": exact(len(cfg.nores_lrs), "rates", "rates each arm without is trained at"),
        "ch03.residual.windows": exact(cfg.windows, "windows", "validation windows the gradient norms use"),
        "ch03.residual.unigram": exact(unigram, "nats", "validation loss of the unigram model (training counts)", 3),
        "ch03.residual.margin": exact(cfg.margin, "nats", "an arm learned if every seed ends this far below it", 1),
    }
    series: dict = {
        "depths": list(cfg.depths),
        "seeds": list(ctx.seeds),
        "lrs": list(cfg.lrs),
        "nores_lrs": list(cfg.nores_lrs),
    }
    settings = [(d, r) for d in cfg.depths for r in (True, False)]
    S = len(ctx.seeds)
    collapsed = 0
    for k, (depth, res) in enumerate(settings):
        model_cfg = ModelConfig(n_layers=depth, residual=res)
        lrs = cfg.lrs if res else cfg.nores_lrs
        ladder = [replace(cfg.train, lr=lr, seed=s) for lr in lrs for s in ctx.seeds]
        runs = train_many(
            model_cfg, ladder, corpus, workers=1, on_eval=progress(ctx, cfg.train, k / len(settings), 1 / len(settings))
        )
        finals = np.array([r.val_loss_final for r in runs]).reshape(len(lrs), S)
        means = np.where(np.isnan(finals).any(axis=1), np.inf, finals.mean(axis=1))
        b = int(np.argmin(means))
        best = runs[b * S : (b + 1) * S]
        learned = bool(np.all(finals[b] < unigram - cfg.margin))
        collapsed += not learned
        tag = f"L{depth}.{'res' if res else 'nores'}"
        what = f"depth {depth}, {'with' if res else 'without'} residuals"
        series[f"{tag}.sweep"] = finals
        m |= {
            f"ch03.residual.{tag}.lr": exact(lrs[b], "", f"{what}: best learning rate of its ladder", 1),
            f"ch03.residual.{tag}.edge": exact(
                int(b in (0, len(lrs) - 1)), "", f"{what}: 1 if the best rate is at the ladder's edge"
            ),
            f"ch03.residual.{tag}.val_loss": measured(finals[b], "nats", f"{what}: validation loss at its best rate"),
            f"ch03.residual.{tag}.learned": exact(
                int(learned),
                "",
                f"{what}: 1 if it learned (below the unigram level by the margin on every seed), 0 if it collapsed",
            ),
            f"ch03.residual.{tag}.best_rung_min": exact(
                float(np.nanmin(finals)), "nats", f"{what}: lowest final loss of any rung and seed", 3
            ),
        }
        whens = [("init", None)] + ([("trained", [r.state_dict or {} for r in best])] if learned else [])
        for when, states in whens:
            prof = _profiles(model_cfg, ctx.seeds, states, xv, yv)
            for key, a in prof.items():
                series[f"{tag}.{when}.{key}"] = a
            g, sc, wr = prof["grad"], prof["scaled"], prof["weight_rel"]
            m |= {
                f"ch03.residual.{tag}.{when}.ratio": measured(
                    g[:, 0] / g[:, -1],
                    "",
                    f"{what}, {when}: ||dL/dx|| at the first layer's input over the last layer's",
                    3,
                ),
                f"ch03.residual.{tag}.{when}.ratio2": measured(
                    g[:, 1] / g[:, -1],
                    "",
                    f"{what}, {when}: ||dL/dx|| at the second layer's input over the last layer's",
                    3,
                ),
                f"ch03.residual.{tag}.{when}.act_ratio": measured(
                    prof["act"][:, 0] / prof["act"][:, 1],
                    "",
                    f"{what}, {when}: ||x|| entering the first layer over entering the second",
                    3,
                ),
                f"ch03.residual.{tag}.{when}.scaled_ratio": measured(
                    sc[:, 0] / sc[:, -1], "", f"{what}, {when}: ||dL/dx||·||x|| at the first layer over the last", 3
                ),
                f"ch03.residual.{tag}.{when}.weight_ratio": measured(
                    wr[:, 0] / wr[:, -1], "", f"{what}, {when}: ||dL/dW||/||W|| of the first block over the last", 3
                ),
            }
    m["ch03.residual.collapsed"] = exact(collapsed, "arms", "arms that ended at the unigram level at every rate")
    m["ch03.residual.arms"] = exact(len(settings), "arms", "arms trained (depth x with/without residuals)")
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- what must be saved


class _OpTag(TorchFunctionMode):
    """Names the torch function being run (the outermost one) in ``self.op``."""

    def __init__(self) -> None:
        super().__init__()
        self.op = "?"

    def __torch_function__(self, func, types, args=(), kwargs=None):
        before, self.op = self.op, getattr(func, "__name__", str(func))
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self.op = before


@dataclass(frozen=True)
class Saved:
    """One tensor the backward pass keeps (counted once however many ops save it)."""

    module: str  # "blocks.0.attn", "ln_f", "loss", ...
    op: str  # the torch function that saved it first: "linear", "softmax", ...
    shape: tuple[int, ...]
    nbytes: int


def saved_tensors(model: Decoder, x: torch.Tensor, y: torch.Tensor) -> list[Saved]:
    """What autograd saves for the backward pass of model.loss(x, y), captured by
    saved_tensors_hooks: distinct storages only, the weights and buffers left out
    (they exist whether or not a backward pass follows)."""
    tag = _OpTag()
    where = ["loss"]
    handles = []
    for name, sub in model.named_modules():
        if name and name.count(".") <= 2:  # wte, blocks.0.attn, ln_f, lm_head, ...

            def enter(module, args, name=name) -> None:
                where.append(name)

            def leave(module, args, output) -> None:
                where.pop()

            handles += [sub.register_forward_pre_hook(enter), sub.register_forward_hook(leave)]
    own = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers()]}
    seen: set[int] = set()
    found: list[Saved] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in own and ptr not in seen:
            seen.add(ptr)
            found.append(Saved(where[-1], tag.op, tuple(t.shape), t.untyped_storage().nbytes()))
        return t

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), tag:
            model.loss(x, y)
    finally:
        for handle in handles:
            handle.remove()
    return found


def hand_count(cfg: ModelConfig, B: int, T: int) -> dict[str, int]:
    """Bytes the backward pass must keep, by part, derived by hand (float32 values, int64 ids).
    Per block and token: the two norms' inputs (2D) and statistics (4), the attention input (D),
    q and k (2D), v (D), the heads' output (D), the attention matrix (H T), the MLP input (D),
    the GELU's input and output (4D each): 16 D + 4 + H T values."""
    D, H, V, L = cfg.d_model, cfg.n_heads, cfg.vocab, cfg.n_layers
    N = B * T
    return {
        "token ids": 8 * N,
        "norms (inputs, mean, 1/std)": 4 * (L * 2 + 1) * N * (D + 2),
        "attention: input, q, k, v, output": 4 * L * 5 * N * D,
        "attention matrix": 4 * L * B * H * T * T,
        "MLP: input, GELU in and out": 4 * L * 9 * N * D,
        "head input": 4 * N * D,
        "loss: log-probabilities, targets": 4 * N * V + 8 * N + 4,
    }


def part_of(s: Saved) -> str:
    """The hand count's part a captured tensor belongs to."""
    if s.module == "wte":
        return "token ids"
    if s.op == "layer_norm":
        return "norms (inputs, mean, 1/std)"
    if s.module.endswith(".attn"):
        return "attention matrix" if s.op == "softmax" else "attention: input, q, k, v, output"
    if s.module.endswith(".mlp"):
        return "MLP: input, GELU in and out"
    if s.module == "lm_head":
        return "head input"
    return "loss: log-probabilities, targets"


@dataclass(frozen=True)
class Shape:
    """A transformer's shape, for Korthikanti et al.'s activation count (16-bit values)."""

    h: int  # width
    a: int  # heads
    ffn: int  # the feed-forward's hidden width
    layers: int
    vocab: int
    mlp: str = "gelu"  # "gelu": GELU, two matrices; "swiglu": SiLU-gated, three matrices
    dropout: bool = True


def layer_activation_terms(shape: Shape) -> tuple[float, float]:
    """Korthikanti et al.'s per-layer activation bytes (16-bit) as (x, y) in s b h x + a s^2 b y,
    counted tensor by tensor. Attention: its input, q, k, v, and the output projection's input
    (10 sbh), the softmax output (2 as^2 b); with dropout also the attention dropout's mask and output
    (3 as^2 b) and the output dropout's mask (1 sbh). MLP: its input (2 sbh) and, for GELU, the
    GELU's input and output (2 each per ffn/h); for SwiGLU, the gate's and the up projection's
    outputs and their product (2 each per ffn/h; the SiLU recomputed from the gate); with dropout
    its mask (1 sbh). The two norms' inputs: 4 sbh."""
    f = shape.ffn / shape.h
    attn_sbh, attn_as2b = 10.0, 2.0
    mlp_sbh = 2 + (4 * f if shape.mlp == "gelu" else 6 * f)
    if shape.dropout:
        attn_sbh, attn_as2b, mlp_sbh = attn_sbh + 1, attn_as2b + 3, mlp_sbh + 1
    return attn_sbh + mlp_sbh + 4, attn_as2b


def layer_activation_bytes(shape: Shape, s: int, b: int) -> float:
    x, y = layer_activation_terms(shape)
    return s * b * shape.h * x + shape.a * s * s * b * y


def shape_params(shape: Shape) -> int:
    """Parameters of a pre-norm decoder of this shape: attention 4 h^2, the feed-forward's
    2 or 3 matrices h x ffn, two norm gains per layer and a final one, untied embedding and head."""
    mats = 2 if shape.mlp == "gelu" else 3
    per_layer = 4 * shape.h * shape.h + mats * shape.h * shape.ffn + 2 * shape.h
    return shape.layers * per_layer + shape.h + 2 * shape.vocab * shape.h


# LLaMA-7B (Touvron et al. 2023, Table 2; ffn and vocabulary from its released config): SwiGLU, no dropout
LLAMA_7B = Shape(h=4096, a=32, ffn=11008, layers=32, vocab=32000, mlp="swiglu", dropout=False)


@dataclass(frozen=True)
class Memory:
    batch: int = 32  # the default run's
    batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    contexts: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    big: Shape = LLAMA_7B  # a large model's shape for the formula, and one sequence of `big_seq` tokens
    big_seq: int = 2048


def _measure(cfg: ModelConfig, B: int, T: int) -> list[Saved]:
    torch.manual_seed(0)
    model = Decoder(cfg)
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randint(0, cfg.vocab, (B, T), generator=g) for _ in range(2))
    return saved_tensors(model, x, y)


@experiment("ch03.memory", config=Memory())
def memory(ctx: RunContext) -> Outcome:
    """What must be saved: the Decoder's saved tensors by part (saved-tensor hooks) against the
    hand count, and how they grow with batch and context against the weights' own bytes."""
    cfg: Memory = ctx.config
    model_cfg = ModelConfig()
    T = model_cfg.context
    found = _measure(model_cfg, cfg.batch, T)
    hand = hand_count(model_cfg, cfg.batch, T)
    by_part = {part: 0 for part in hand}
    for s in found:
        by_part[part_of(s)] += s.nbytes
    total = sum(by_part.values())
    weights = 4 * num_params(Decoder(model_cfg))
    batch_bytes, context_bytes, context_weights, mismatch = [], [], [], 0
    for B in cfg.batches:
        n = sum(s.nbytes for s in _measure(model_cfg, B, T))
        mismatch = max(mismatch, abs(n - sum(hand_count(model_cfg, B, T).values())))
        batch_bytes.append(n)
    for ctx_len in cfg.contexts:
        c = replace(model_cfg, context=ctx_len)
        n = sum(s.nbytes for s in _measure(c, cfg.batch, ctx_len))
        mismatch = max(mismatch, abs(n - sum(hand_count(c, cfg.batch, ctx_len).values())))
        context_bytes.append(n)
        context_weights.append(4 * num_params(Decoder(c)))
    D, H = model_cfg.d_model, model_cfg.n_heads
    per_window = total / cfg.batch
    m = {
        "ch03.mem.batch": exact(cfg.batch, "windows", "batch of the counted step"),
        "ch03.mem.saved": exact(total, "bytes", "bytes saved for the backward pass (hooks), default step"),
        "ch03.mem.hand": exact(sum(hand.values()), "bytes", "the same, counted by hand"),
        "ch03.mem.tensors": exact(len(found), "tensors", "distinct saved tensors (weights and buffers left out)"),
        "ch03.mem.mismatch": exact(mismatch, "bytes", "largest |hooks - hand count| over every batch and context"),
        "ch03.mem.weights": exact(weights, "bytes", "the weights' own bytes (float32)"),
        "ch03.mem.ratio": exact(total / weights, "", "saved bytes over the weights' bytes, default step", 3),
        "ch03.mem.per_window": exact(per_window, "bytes", "saved bytes per window of the batch", 4),
        "ch03.mem.batch_equal": exact(weights / per_window, "windows", "batch whose saved bytes equal the weights'", 2),
        "ch03.mem.per_token_d": exact(16, "values per token per d_model", "per block: 16 D values per token", 2),
        "ch03.mem.per_token_stats": exact(4, "values per token", "per block: 4 norm statistics per token", 1),
        "ch03.mem.per_token_att": exact(H * T, "values per token", "per block: H T attention values per token", 2),
        "ch03.mem.per_token_block": exact(16 * D + 4 + H * T, "values", "values saved per token per block", 3),
        # the same count in Korthikanti et al.'s units: 16-bit bytes per layer, per s b h and per a s^2 b
        "ch03.mem.k16.attn_sbh": exact(2 * 5, "", "attention's input, q, k, v, output: 16-bit bytes per sbh"),
        "ch03.mem.k16.attn_as2b": exact(2 * 1, "", "the attention matrix: 16-bit bytes per as^2 b"),
        "ch03.mem.k16.mlp_sbh": exact(2 * 9, "", "MLP input, GELU in and out: 16-bit bytes per sbh"),
        "ch03.mem.k16.ln_sbh": exact(2 * 2, "", "the two norms' inputs: 16-bit bytes per sbh"),
        "ch03.mem.k16.sbh": exact(2 * 16, "", "all of them: 16-bit bytes per sbh"),
        "ch03.mem.att_share": exact(by_part["attention matrix"] / total, "", "share of the attention matrix", 2),
        "ch03.mem.mlp_share": exact(by_part["MLP: input, GELU in and out"] / total, "", "share of the MLP", 2),
        "ch03.mem.loss_share": exact(
            by_part["loss: log-probabilities, targets"] / total, "", "share of the loss (log-probabilities)", 2
        ),
        "ch03.mem.batch_max": exact(cfg.batches[-1], "windows", "largest batch counted"),
        "ch03.mem.at_batch_max": exact(batch_bytes[-1] / weights, "", "saved over weights at the largest batch", 3),
        "ch03.mem.context_max": exact(cfg.contexts[-1], "characters", "longest context counted"),
        "ch03.mem.at_context_max": exact(
            context_bytes[-1] / context_weights[-1], "", "saved over weights at the longest context", 3
        ),
        "ch03.mem.att_share_context_max": exact(
            hand_count(replace(model_cfg, context=cfg.contexts[-1]), cfg.batch, cfg.contexts[-1])["attention matrix"]
            / context_bytes[-1],
            "",
            "share of the attention matrix at the longest context",
            2,
        ),
    }
    # the published formula assumes GELU with a 4h hidden layer and dropout: check the tensor-by-tensor
    # count gives its 34 and 5 for that shape, then count the large shape as it is
    assumed = replace(cfg.big, ffn=4 * cfg.big.h, mlp="gelu", dropout=True)
    if layer_activation_terms(assumed) != (34.0, 5.0):
        raise AssertionError(f"the count gives {layer_activation_terms(assumed)} for the formula's shape, not (34, 5)")
    GB = 1e9
    own_sbh, own_as2b = layer_activation_terms(cfg.big)
    as_formula = layer_activation_bytes(assumed, cfg.big_seq, 1)
    as_built = layer_activation_bytes(cfg.big, cfg.big_seq, 1)
    weights16 = 2 * shape_params(cfg.big)
    m |= {
        "ch03.mem.big.sbh": exact(own_sbh, "bytes per s·b·h", "the large shape's own count: sbh term", 4),
        "ch03.mem.big.as2b": exact(own_as2b, "bytes per a·s²·b", "the large shape's own count: as²b term", 1),
        "ch03.mem.big.formula_gb": exact(as_formula / GB, "GB", "per layer by sbh(34 + 5as/h), the formula's shape", 2),
        "ch03.mem.big.layer_gb": exact(as_built / GB, "GB", "per layer, counted for SwiGLU and no dropout", 2),
        "ch03.mem.big.total_gb": exact(cfg.big.layers * as_built / GB, "GB", "all layers, SwiGLU, no dropout", 3),
        "ch03.mem.big.formula_total_gb": exact(cfg.big.layers * as_formula / GB, "GB", "all layers, the formula", 3),
        "ch03.mem.big.params": exact(
            shape_params(cfg.big) / 1e9, "billion parameters", "parameters of the large shape, counted from it", 3
        ),
        "ch03.mem.big.weights_gb": exact(weights16 / GB, "GB", "the large shape's weights in 16 bits", 3),
        "ch03.mem.big.ratio": exact(
            cfg.big.layers * as_built / weights16, "", "activations of one sequence over the 16-bit weights", 2
        ),
        "ch03.mem.big.seq": exact(cfg.big_seq, "tokens", "the one sequence's length in that count"),
        "ch03.mem.big.ffn": exact(cfg.big.ffn, "", "the large shape's feed-forward width"),
    }
    return Outcome(
        measurements=m,
        series={
            "part_bytes": list(by_part.values()),
            "batches": list(cfg.batches),  # parts in hand_count's order
            "batch_bytes": batch_bytes,
            "contexts": list(cfg.contexts),
            "context_bytes": context_bytes,
            "context_weights": context_weights,
            "weights": weights,
        },
    )


# --------------------------------------------------------------------------- the cost of the backward pass


def matmul_flops(cfg: ModelConfig, T: int) -> dict[str, int]:
    """Forward FLOPs per token of each matrix product, from its shapes: a product of
    (m x k) by (k x n) costs 2 m k n, shared over the m tokens it serves."""
    D, V, L = cfg.d_model, cfg.vocab, cfg.n_layers
    F_ = cfg.mlp_ratio * D
    return {
        "attention projections": L * 4 * 2 * D * D,
        "attention scores and values": L * 2 * 2 * T * D,
        "MLP": L * 2 * 2 * D * F_,
        "head": 2 * D * V,
    }


@dataclass(frozen=True)
class Flops:
    batch: int = 32


@experiment("ch03.flops", config=Flops())
def flops(ctx: RunContext) -> Outcome:
    """The cost of the backward pass: FLOPs of the forward and backward matrix products, counted
    from their shapes by hand and by torch's FlopCounterMode, against the 6N rule."""
    cfg = ModelConfig()
    B, T = ctx.config.batch, cfg.context
    hand = matmul_flops(cfg, T)
    fwd_hand = sum(hand.values())
    torch.manual_seed(0)
    model = Decoder(cfg)
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randint(0, cfg.vocab, (B, T), generator=g) for _ in range(2))
    with FlopCounterMode(display=False) as fwd_counter:
        loss = model.loss(x, y)
    with FlopCounterMode(display=False) as bwd_counter:
        loss.backward()
    tokens = B * T
    fwd, bwd = fwd_counter.get_total_flops() / tokens, bwd_counter.get_total_flops() / tokens
    n = num_params(model)
    matmul_params = n - cfg.vocab * cfg.d_model - cfg.context * cfg.d_model  # wte and wpe are looked up
    m = {
        "ch03.flops.forward": exact(fwd_hand, "FLOPs per token", "forward matrix products, counted from shapes"),
        "ch03.flops.forward_counter": exact(fwd, "FLOPs per token", "forward, counted by torch's FlopCounterMode"),
        "ch03.flops.backward_counter": exact(bwd, "FLOPs per token", "backward, counted by FlopCounterMode"),
        "ch03.flops.ratio": exact(bwd / fwd, "", "backward over forward FLOPs", 3),
        "ch03.flops.train": exact(fwd + bwd, "FLOPs per token", "forward plus backward"),
        "ch03.flops.attention": exact(
            hand["attention scores and values"], "FLOPs per token", "forward: attention's scores and values (4 T D)"
        ),
        "ch03.flops.matmul_params": exact(matmul_params, "parameters", "weights in matrix products (not wte, wpe)"),
        "ch03.flops.palm": exact(
            6 * matmul_params + 12 * cfg.n_layers * cfg.d_model * T,
            "FLOPs per token",
            "6 N' + 12 L H Q T with N' the weights in matrix products",
        ),
        "ch03.flops.six_n": exact(6 * n, "FLOPs per token", "6 N with N every parameter"),
        "ch03.flops.vs_six_n": exact((fwd + bwd) / (6 * n), "", "counted training FLOPs over 6 N", 3),
        "ch03.flops.attention_share": exact(
            3 * hand["attention scores and values"] / (fwd + bwd), "", "attention's share of the training FLOPs", 2
        ),
    }
    return Outcome(measurements=m, series={"forward": list(hand.values())})  # in matmul_flops' order
