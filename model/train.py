"""Train one Decoder: the loop, the schedules, the optimisers and checkpoints.

A flat loop in the manner of nanoGPT's train.py: sample a batch, forward,
backward, clip, step, evaluate every `eval_every` steps. Everything that makes
a run is seeded and written next to its results (`TrainResult.to_dict()`
holds both configs and the seeds):

    result = train(ModelConfig(), TrainConfig(seed=0))
    result.val_loss_init, result.val_loss_final     # about 4.17 -> 2.28

    python -m model.train --seed 0 [--steps 2000] [--json]

What keeps a 2,000-step run to a few seconds on a 2-core CPU:

- all weights live in one flat buffer (and their gradients in another), so
  clipping is three tensor ops per step and the optimiser one call of torch's
  fused Adam/AdamW kernel (what torch.optim.AdamW(fused=True) calls), not a
  dozen ops per parameter;
- `fast_forward` computes what `Decoder.forward` computes, from those same
  weights, with fewer ops: 2-D activations, one matmul for q, k and v together
  (w_q, w_k and w_v sit side by side in the flat buffer, so the fused weight is
  a view, not a copy), the causal mask added inside the score matmul;
- its backward pass is written out (`backward`): the kernels autograd would
  run, without recording and replaying a graph, except where fewer passes do
  the same sums (one exp pass serves the loss and its gradient; embedding rows
  are added up with index_add_), and each weight gradient is written straight
  into the flat gradient buffer; tests hold it to float64 autograd as tightly
  as float32 autograd itself (configs it does not cover, RMSNorm, qk-norm,
  z-loss, go through autograd);
- the written-out passes and evaluation run in inference mode (no autograd
  bookkeeping per op), evaluation 512 validation windows per pass (their
  activations stay in cache);
- threads: torch's setting unless `threads` is given (both cores of this
  machine: about 10% faster than one; the numbers are the same);
- batches are rows of a windows view of the text (`sample_batch`), one gather;
- malloc keeps freed memory (`keep_freed_memory`), so activations do not
  page-fault afresh every step.

Steps count updates: "step k" is the state after k updates, update k (0-based)
uses learning rate `lr_at(k, cfg)`, and `eval_every` evaluations happen at
steps k = eval_every, 2 eval_every, ... and at the last step (plus step 0).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import functools
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from model.data import Corpus, load_corpus, sample_batch, val_windows
from model.decoder import Decoder, ModelConfig, cross_entropy, mup_lr_scales

SCHEDULES = ("constant", "cosine", "wsd")
OPTIMIZERS = ("adamw", "adam", "sgd", "momentum")
DATA_SEED_OFFSET = 1_000_000  # data_seed = seed + this unless given: weights and data draw apart
CHECKPOINT_VERSION = 1


@dataclass
class TrainConfig:
    steps: int = 2000  # number of updates; the schedules reach 0 at `steps`
    batch: int = 32  # windows per step, each `context` tokens long
    lr: float = 2e-3  # peak learning rate
    schedule: str = "cosine"  # "constant", "cosine" (to 0 at `steps`) or "wsd" (warmup-stable-decay)
    warmup: int = 100  # linear warmup: update k < warmup uses lr * (k + 1) / warmup
    decay_frac: float = 0.2  # wsd: linear decay to 0 over the last decay_frac * steps updates
    optimizer: str = "adamw"  # "adamw", "adam" (L2 decay in the gradient), "sgd", "momentum"
    betas: tuple[float, float] = (0.9, 0.999)  # Adam's (beta1, beta2); "momentum" uses beta1
    eps: float = 1e-8
    weight_decay: float = 0.01  # on every weight (all are matrices: there are no biases or gains)
    clip: float | None = 1.0  # global gradient-norm threshold, None for no clipping
    eval_every: int = 100  # evaluate on every validation window every this many steps
    seed: int = 0  # torch.manual_seed(seed) right before the Decoder is built: the initial weights
    data_seed: int | None = None  # the batches' own generator; None: seed + DATA_SEED_OFFSET
    threads: int | None = None  # torch threads while training; None: torch's setting (all cores,
    #                              or 1 in slidegen's worker processes); the numbers do not depend on it

    def __post_init__(self) -> None:
        self.betas = (float(self.betas[0]), float(self.betas[1]))
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.steps < 0 or self.batch < 1 or self.warmup < 0 or self.eval_every < 1 or (self.threads or 1) < 1:
            raise ValueError("steps and warmup must be >= 0; batch, eval_every and threads >= 1")
        if not 0.0 <= self.decay_frac <= 1.0:
            raise ValueError(f"decay_frac must be in [0, 1], got {self.decay_frac}")
        if self.clip is not None and not self.clip > 0:
            raise ValueError(f"clip must be positive or None, got {self.clip}")

    @property
    def data_seed_value(self) -> int:
        return self.seed + DATA_SEED_OFFSET if self.data_seed is None else self.data_seed


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of update `step` (0-based): linear warmup over `warmup`
    updates, then constant, cosine (to 0 at `steps`) or warmup-stable-decay
    (constant, then linear to 0 over the last round(decay_frac * steps) updates)."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return cfg.lr
    if cfg.schedule == "cosine":
        progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
        return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * progress))
    decay_steps = round(cfg.decay_frac * cfg.steps)  # wsd
    if step < cfg.steps - decay_steps:
        return cfg.lr
    return cfg.lr * max(0.0, cfg.steps - step) / decay_steps


@dataclass
class TrainResult:
    """What a run measured. Losses are in nats per character. If the run
    diverged, `diverged_at` is the step whose loss or gradient was not finite
    (no update was made from it), `steps` equals it, and the final losses are
    NaN."""

    model_config: dict
    train_config: dict
    val_loss_init: float
    val_loss_final: float
    train_loss_final: float  # mean training loss over the last eval interval
    steps: int  # updates made
    seconds: float  # wall time (for train_many: the stacked job's time / number of runs)
    tokens_seen: int  # steps * batch * context
    diverged_at: int | None = None
    # one entry per evaluation: step, train_loss (mean since the previous
    # evaluation; NaN at step 0), val_loss, grad_norm and lr of the last update
    curves: dict[str, list[float]] = field(default_factory=dict)
    step_losses: list[float] = field(default_factory=list)  # training loss of every update
    step_grad_norms: list[float] = field(default_factory=list)  # its gradient norm, before clipping
    state_dict: dict[str, torch.Tensor] | None = field(default=None, repr=False)  # final weights

    def to_dict(self, per_step: bool = True) -> dict:
        """JSON-ready (no weights; NaN and inf become None)."""

        def clean(v):
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "state_dict"}
        if not per_step:
            del d["step_losses"], d["step_grad_norms"]
        return clean(d)


# -----------------------------------------------------------------------------
# weights in one flat buffer


class FlatParams:
    """A Decoder's weights in one flat float32 buffer `data` (P,), in
    named_parameters() order, with the module's parameters re-pointed at views
    of it, and a gradient buffer `grad` (P,) of the same layout.

    `leaves` are what the forward pass differentiates: views of `data`, one per
    parameter, except that each block's w_q, w_k, w_v (adjacent in the buffer)
    are one (3D, D) leaf `blocks.{i}.attn.w_qkv`; `grads` are the same views
    of `grad`."""

    def __init__(self, model: Decoder):
        named = list(model.named_parameters())  # a tied lm_head comes once, as wte
        self.names = [n for n, _ in named]
        self.shapes = {n: tuple(p.shape) for n, p in named}
        self.offsets: dict[str, int] = {}
        offset = 0
        for n, p in named:
            self.offsets[n] = offset
            offset += p.numel()
        self.size = offset
        self.data = torch.cat([p.detach().reshape(-1) for _, p in named])  # (P,)
        self.grad = torch.zeros_like(self.data)  # (P,)
        for n, p in named:
            p.data = self.view(n)  # the module now reads and writes the flat buffer
        self.leaves: dict[str, torch.Tensor] = {}
        for n in self.names:
            if ".attn.w_k." in n or ".attn.w_v." in n:
                continue
            if ".attn.w_q." in n:
                block = n.removesuffix(".attn.w_q.weight")
                k, v = f"{block}.attn.w_k.weight", f"{block}.attn.w_v.weight"
                D = self.shapes[n][1]
                if not self.offsets[k] == self.offsets[n] + D * D == self.offsets[v] - D * D:
                    raise RuntimeError("w_q, w_k, w_v are not adjacent in named_parameters()")
                leaf = self.data[self.offsets[n] : self.offsets[n] + 3 * D * D].view(3 * D, D)
                n = f"{block}.attn.w_qkv"
            else:
                leaf = self.view(n)
            self.leaves[n] = leaf.requires_grad_()
        # the same views of the gradient buffer: the written-out backward fills them in place
        self.grads = {n: self.grad[v.storage_offset() :][: v.numel()].view(v.shape) for n, v in self.leaves.items()}

    def view(self, name: str) -> torch.Tensor:
        o, shape = self.offsets[name], self.shapes[name]
        return self.data[o : o + math.prod(shape)].view(shape)

    def lr_scales(self, cfg: ModelConfig) -> torch.Tensor | None:
        """µP's per-element learning-rate multipliers (P,), or None if all are 1."""
        scales = mup_lr_scales(cfg)
        if all(s == 1.0 for s in scales.values()):
            return None
        out = torch.empty(self.size, dtype=torch.float64)
        for n in self.names:
            o = self.offsets[n]
            out[o : o + math.prod(self.shapes[n])] = scales[n]
        return out


# -----------------------------------------------------------------------------
# the forward pass, fused, and its backward pass written out


@functools.cache
def _mask_bias(T: int) -> torch.Tensor:
    """(T, T): 0 on and below the diagonal, -inf above it (no looking ahead)."""
    return torch.zeros(T, T).masked_fill_(torch.ones(T, T, dtype=torch.bool).triu_(1), float("-inf"))


def fast_forward(leaves: dict[str, torch.Tensor], idx: torch.Tensor, cfg: ModelConfig) -> torch.Tensor:
    """Decoder.forward from FlatParams.leaves in fewer ops: token ids (B, T) ->
    logits (B, T, V), equal to Decoder.forward to float32 rounding (~1e-7).
    Activations are kept 2-D, (B*T, D), so every linear layer is one mm; the
    heads go to the batch dimension with one copy of q, k and v together; the
    causal mask is added inside the score matmul.

    Attention is written out rather than calling scaled_dot_product_attention
    (about 10% faster here): at absurd learning rates that kernel's backward
    turns overflowing scores into NaN a few steps before the Decoder's own
    attention does, and a run should diverge at the same step whichever
    trainer (this one, model/ensemble.py) runs it."""
    B, T = idx.shape
    return _forward(leaves, idx, cfg)[0].view(B, T, -1)


def _forward(leaves: dict[str, torch.Tensor], idx: torch.Tensor, cfg: ModelConfig):
    """fast_forward's computation: logits (B*T, V) and the tape, the
    activations that backward() needs (differentiable by autograd as well)."""
    B, T = idx.shape
    D, H = cfg.d_model, cfg.n_heads
    Dh = D // H

    def norm(x: torch.Tensor):
        if cfg.norm_kind == "layer":  # F.layer_norm's own kernel, keeping its mean and 1/std for backward
            y, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, cfg.norm_eps)
            return y, (x, mean, rstd)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg.norm_eps), None

    def attn(x: torch.Tensor, resid: torch.Tensor, i: int):
        """resid + attention(x)."""
        qkv = torch.mm(x, leaves[f"blocks.{i}.attn.w_qkv"].t())  # (B*T, 3D)
        qkv = qkv.view(B, T, 3, H, Dh).permute(2, 0, 3, 1, 4).reshape(3, B * H, T, Dh)  # one copy
        q, k, v = qkv.unbind(0)  # (B*H, T, Dh) each
        if cfg.qk_norm:
            q, k = norm(q)[0], norm(k)[0]
        att = torch.baddbmm(_mask_bias(T).to(q.dtype), q, k.transpose(1, 2), alpha=cfg.attn_scale)  # (B*H, T, T)
        att = att.softmax(dim=-1)
        y = torch.bmm(att, v)  # (B*H, T, Dh)
        y = y.view(B, H, T, Dh).transpose(1, 2).reshape(B * T, D)  # heads side by side
        return torch.addmm(resid, y, leaves[f"blocks.{i}.attn.w_o.weight"].t()), (x, q, k, v, att, y)  # (B*T, D)

    def mlp(x: torch.Tensor, resid: torch.Tensor, i: int):
        """resid + mlp(x)."""
        u = torch.mm(x, leaves[f"blocks.{i}.mlp.w_in.weight"].t())  # (B*T, 4D)
        a = F.gelu(u)  # exact GELU
        return torch.addmm(resid, a, leaves[f"blocks.{i}.mlp.w_out.weight"].t()), (x, u, a)  # (B*T, D)

    x = (F.embedding(idx, leaves["wte.weight"]) + leaves["wpe.weight"][:T]).view(B * T, D)
    blocks = []
    for i in range(cfg.n_layers):
        n1 = n2 = None
        if cfg.norm == "pre":
            h, n1 = norm(x)
            x, at = attn(h, x, i)  # x + attn(ln_1(x))
            h, n2 = norm(x)
            x, ml = mlp(h, x, i)  # x + mlp(ln_2(x))
        elif cfg.norm == "post":
            x, at = attn(x, x, i)
            x, n1 = norm(x)
            x, ml = mlp(x, x, i)
            x, n2 = norm(x)
        else:
            x, at = attn(x, x, i)
            x, ml = mlp(x, x, i)
        blocks.append((n1, at, n2, ml))
    nf = None
    if cfg.norm == "pre":
        x, nf = norm(x)
    logits = torch.mm(x, leaves["wte.weight" if cfg.tie_embeddings else "lm_head.weight"].t())  # (B*T, V)
    if cfg.logit_mult != 1.0:
        logits = logits * cfg.logit_mult
    return logits, (idx, blocks, nf, x)


# What autograd would run for _forward and the loss, written out: mostly the same
# kernels (mm, bmm, native_layer_norm_backward, gelu_backward, ...) on tensors of
# the same shapes, in the order of torch's derivative formulas. What it saves is
# the engine: recording ~60 graph nodes in the forward pass and replaying them,
# each for a few microseconds of work at these sizes (about a quarter of the
# forward + backward time), and two passes: the loss keeps its exps for the
# softmax in the gradient, and the embedding gradient is one index_add_. It
# covers LayerNorm models without z-loss or qk-norm (the default and most
# variants); the rest go through autograd. test_train.py holds its gradients to
# float64 autograd as tightly as float32 autograd's own.


def has_written_backward(cfg: ModelConfig) -> bool:
    return cfg.norm_kind == "layer" and not cfg.qk_norm and not cfg.z_loss


@torch.inference_mode()
def loss_and_tape(leaves: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, cfg: ModelConfig):
    """The mean cross-entropy of the windows x, y (B, T) and the tape for
    backward(), recording nothing for autograd."""
    logits, tape = _forward(leaves, x, cfg)  # (N, V)
    # -log softmax at the targets, as log_softmax computes it (shift by the row maximum, log of
    # the sum of exps), with the exps kept: they are the softmax the gradient needs (one exp pass)
    tgt = y.reshape(-1, 1)  # (N, 1)
    z = logits.sub_(logits.amax(1, keepdim=True))
    tgt_logit = z.gather(1, tgt)  # (N, 1)
    exps = z.exp_()  # (N, V)
    total = exps.sum(1, keepdim=True)  # (N, 1)
    loss = (total.log() - tgt_logit).mean()
    return loss, (tape, exps, total, tgt)


_MINUS_ONE = torch.full((1, 1), -1.0)


@torch.inference_mode()
def backward(tape, leaves: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], cfg: ModelConfig) -> None:
    """Write d loss / d leaf into `grads` (FlatParams.grads: views of the flat
    gradient buffer, named as the leaves) from loss_and_tape's tape."""
    (idx, blocks, nf, xf), exps, total, tgt = tape
    B, T = idx.shape
    D, H = cfg.d_model, cfg.n_heads
    Dh, G = D // H, B * H

    def linear(dout: torch.Tensor, x: torch.Tensor, name: str) -> torch.Tensor:
        """out = x @ W.T: dW = dout^T x (written to grads), returns dx = dout W."""
        torch.mm(dout.t(), x, out=grads[name])
        return torch.mm(dout, leaves[name])

    def norm(dy: torch.Tensor, cache) -> torch.Tensor:
        x, mean, rstd = cache
        return torch.ops.aten.native_layer_norm_backward(dy, x, x.shape[-1:], mean, rstd, None, None, (True, False, False))[0]

    def attn(dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        x, q, k, v, att, y = cache
        dy = linear(dout, y, f"blocks.{i}.attn.w_o.weight")  # (B*T, D)
        dy = dy.view(B, T, H, Dh).transpose(1, 2).reshape(G, T, Dh)  # a copy, per head
        datt = torch.bmm(dy, v.transpose(1, 2))  # (G, T, T)
        dv = torch.bmm(att.transpose(1, 2), dy)  # (G, T, Dh)
        datt = torch._softmax_backward_data(datt, att, -1, att.dtype)  # 0 where masked
        dq = torch.bmm(datt, k) * cfg.attn_scale  # (G, T, Dh)
        dk = (torch.bmm(q.transpose(1, 2), datt) * cfg.attn_scale).transpose(1, 2)  # (G, T, Dh)
        dqkv = torch.stack((dq, dk, dv)).view(3, B, H, T, Dh).permute(1, 3, 0, 2, 4).reshape(B * T, 3 * D)
        return linear(dqkv, x, f"blocks.{i}.attn.w_qkv")  # (B*T, D)

    def mlp(dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        x, u, a = cache
        da = linear(dout, a, f"blocks.{i}.mlp.w_out.weight")  # (B*T, 4D)
        du = torch.ops.aten.gelu_backward(da, u)
        return linear(du, x, f"blocks.{i}.mlp.w_in.weight")  # (B*T, D)

    head = "wte.weight" if cfg.tie_embeddings else "lm_head.weight"
    dlogits = exps.div_(total).scatter_add_(1, tgt, _MINUS_ONE.expand(tgt.shape))  # softmax - onehot
    dlogits.mul_(cfg.logit_mult / tgt.numel())  # (B*T, V): the mean over tokens, the logit multiplier
    if cfg.tie_embeddings:
        dhead = torch.mm(dlogits.t(), xf)  # (V, D), added to the embedding's below
    else:
        torch.mm(dlogits.t(), xf, out=grads[head])
    dx = torch.mm(dlogits, leaves[head])  # (B*T, D)
    if nf is not None:
        dx = norm(dx, nf)
    for i in reversed(range(cfg.n_layers)):
        n1, at, n2, ml = blocks[i]
        if cfg.norm == "pre":
            dx = dx + norm(mlp(dx, ml, i), n2)
            dx = dx + norm(attn(dx, at, i), n1)
        elif cfg.norm == "post":
            dx = norm(dx, n2)
            dx = norm(dx + mlp(dx, ml, i), n1)
            dx = dx + attn(dx, at, i)
        else:
            dx = dx + mlp(dx, ml, i)
            dx = dx + attn(dx, at, i)
    dwte = grads["wte.weight"]  # each token's rows of dx, added up into its row
    if cfg.tie_embeddings:
        dwte.copy_(dhead)
    else:
        dwte.zero_()
    dwte.index_add_(0, idx.reshape(-1), dx)
    dwpe = grads["wpe.weight"]
    torch.sum(dx.view(B, T, D), 0, out=dwpe[:T])
    dwpe[T:].zero_()


EVAL_CHUNK = 512  # windows per forward pass: activations of 8,192 tokens stay in cache (about 15% faster)


@torch.inference_mode()
def evaluate(leaves: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, cfg: ModelConfig) -> float:
    """Mean loss over the windows (x, y) (the z-loss term excluded), summed in float64."""
    total = 0.0
    for s in range(0, len(x), EVAL_CHUNK):
        logits = _forward(leaves, x[s : s + EVAL_CHUNK], cfg)[0]  # (n*T, V)
        total += F.cross_entropy(logits, y[s : s + EVAL_CHUNK].reshape(-1), reduction="sum").item()
    return total / y.numel()


# -----------------------------------------------------------------------------
# the optimisers, written out over flat buffers
#
# The arithmetic is torch.optim's (single-tensor code path). The same functions
# serve a stack of M models (model/ensemble.py: hyperparameters are (M, 1)
# float32 tensors, buffers (M, P)) and one model under µP (per-element learning
# rates) or SGD. One model under Adam or AdamW takes torch's fused kernel
# instead, the same update in one pass (to float32 rounding).


def adam_coefficients(lr, t: int, beta1, beta2, eps, weight_decay, decoupled: bool) -> dict:
    """Per-step scalars of Adam/AdamW for update number t (1-based), computed in
    float64 from Python floats or float64 tensors (the caller casts tensors to
    float32, as torch.optim's Python floats are cast when they meet float32)."""
    bias_correction1 = 1 - beta1**t
    bias_correction2 = 1 - beta2**t
    return {
        "decay": 1 - lr * weight_decay if decoupled else 1.0,  # AdamW: p <- p (1 - lr wd)
        "l2": 0.0 if decoupled else weight_decay,  # Adam: g <- g + wd p
        "one_minus_beta1": 1 - beta1,
        "beta2": beta2,
        "one_minus_beta2": 1 - beta2,
        "step_size": lr / bias_correction1,
        "bias_correction2_sqrt": bias_correction2**0.5,
        "eps": eps,
    }


def adam_update_(p, g, exp_avg, exp_avg_sq, c: dict) -> None:
    """One Adam/AdamW update of p in place (g is not modified)."""
    if not isinstance(c["l2"], float) or c["l2"] != 0.0:
        g = g + p * c["l2"]
    if not isinstance(c["decay"], float) or c["decay"] != 1.0:
        p.mul_(c["decay"])
    exp_avg.lerp_(g, c["one_minus_beta1"])
    exp_avg_sq.mul_(c["beta2"]).add_(g.square().mul_(c["one_minus_beta2"]))
    denom = exp_avg_sq.sqrt().div_(c["bias_correction2_sqrt"]).add_(c["eps"])
    p.sub_(exp_avg.mul(c["step_size"]).div_(denom))


def sgd_update_(p, g, buf, lr, weight_decay, momentum, first: bool):
    """torch.optim.SGD: g <- g + wd p; with momentum, buf <- g on the first
    step, else momentum buf + g; p <- p - lr (buf or g). Returns buf."""
    if not isinstance(weight_decay, float) or weight_decay != 0.0:
        g = g + p * weight_decay
    if momentum is not None:
        if first:
            buf = g.clone()
        else:
            buf.mul_(momentum).add_(g)
        g = buf
    p.sub_(g * lr)
    return buf


class Optimizer:
    """The run's optimiser over a flat buffer: state and one `step(lr)`."""

    def __init__(self, cfg: TrainConfig, params: torch.Tensor, lr_scales: torch.Tensor | None = None):
        self.cfg = cfg
        self.lr_scales = lr_scales  # None, or per-element multipliers (float64) for µP
        if lr_scales is not None and cfg.optimizer in ("sgd", "momentum"):
            raise NotImplementedError("µP learning-rate scales are defined for Adam-type optimisers only")
        self.t = 0  # updates made
        names = {
            "adamw": ("exp_avg", "exp_avg_sq"),
            "adam": ("exp_avg", "exp_avg_sq"),
            "momentum": ("momentum_buffer",),
        }
        self.state = {k: torch.zeros_like(params) for k in names.get(cfg.optimizer, ())}
        self._step = torch.zeros(())  # the fused Adam kernels read the update count from a tensor

    def step(self, p: torch.Tensor, g: torch.Tensor, lr: float) -> None:
        cfg = self.cfg
        self.t += 1
        if cfg.optimizer in ("adamw", "adam") and self.lr_scales is None:
            self._step.fill_(self.t)
            fused = torch._fused_adamw_ if cfg.optimizer == "adamw" else torch._fused_adam_
            beta1, beta2 = cfg.betas
            fused([p], [g], [self.state["exp_avg"]], [self.state["exp_avg_sq"]], [], [self._step], lr=lr,
                  beta1=beta1, beta2=beta2, weight_decay=cfg.weight_decay, eps=cfg.eps, amsgrad=False, maximize=False)  # fmt: skip
        elif cfg.optimizer in ("adamw", "adam"):
            if self.lr_scales is not None:
                lr = lr * self.lr_scales  # (P,) float64
            c = adam_coefficients(lr, self.t, *cfg.betas, cfg.eps, cfg.weight_decay, cfg.optimizer == "adamw")
            c = {k: v.float() if torch.is_tensor(v) else float(v) for k, v in c.items()}
            adam_update_(p, g, self.state["exp_avg"], self.state["exp_avg_sq"], c)
        else:
            momentum = cfg.betas[0] if cfg.optimizer == "momentum" else None
            buf = self.state.get("momentum_buffer")
            buf = sgd_update_(p, g, buf, lr, cfg.weight_decay, momentum, first=self.t == 1)
            if momentum is not None:
                self.state["momentum_buffer"] = buf

    def state_dict(self) -> dict:
        return {"t": self.t, **{k: v.clone() for k, v in self.state.items()}}

    def load_state_dict(self, d: dict) -> None:
        self.t = int(d["t"])
        for k in self.state:
            self.state[k].copy_(d[k])


def clip_coefficient(grad_norm: torch.Tensor, clip: float | None) -> torch.Tensor | None:
    """What clip_grad_norm_ multiplies the gradients by: min(1, clip / (norm + 1e-6))."""
    if clip is None:
        return None
    return torch.clamp(clip / (grad_norm + 1e-6), max=1.0)


def keep_freed_memory() -> None:
    """Ask glibc's malloc to keep freed memory for reuse instead of handing it
    back to the kernel. A training step allocates and frees activations of 128 KB and
    more (tens of MB for a stack of models); by default such blocks are mapped
    afresh or trimmed off the heap, and every page faults again on first touch,
    which cost up to a quarter of the stacked step time on the 2-core VM these
    numbers come from. Harmless (a no-op) without glibc."""
    global _MALLOC_TUNED
    if _MALLOC_TUNED:
        return
    _MALLOC_TUNED = True
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # from glibc's malloc.h
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # blocks up to 32 MB come from the heap, not mmap
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)  # and free memory goes back to the kernel only beyond 1 GB
    libc.mallopt(M_TOP_PAD, 64 << 20)


_MALLOC_TUNED = False


# -----------------------------------------------------------------------------
# checkpoints


def save_checkpoint(path: str | os.PathLike, state: dict) -> None:
    """torch.save to a temporary file beside `path`, then rename over it: an
    interrupted save leaves the previous checkpoint whole."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | os.PathLike) -> dict:
    state = torch.load(path, weights_only=True)
    if state.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: checkpoint version {state.get('version')!r}, expected {CHECKPOINT_VERSION}")
    return state


def _config_dict(cfg) -> dict:
    d = dataclasses.asdict(cfg)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


# -----------------------------------------------------------------------------
# the loop


def train(
    model_cfg: ModelConfig | None = None,
    train_cfg: TrainConfig | None = None,
    corpus: Corpus | None = None,
    checkpoint: str | os.PathLike | None = None,
    on_eval: Callable[[dict], None] | None = None,
    *,
    stop_at: int | None = None,
) -> TrainResult:
    """Train one Decoder and measure it.

    checkpoint: a file path. If it exists the run resumes from it (same
        configs required) and continues bit for bit as if never stopped; the
        state is saved there at every evaluation and when the run ends or stops.
    on_eval: called with each evaluation record (a dict, see TrainResult.curves).
    stop_at: stop after this many updates (the schedule still ends at
        train_cfg.steps), e.g. to resume later from `checkpoint`.
    """
    mcfg = model_cfg or ModelConfig()
    cfg = train_cfg or TrainConfig()
    corpus = corpus or load_corpus()
    threads_before = torch.get_num_threads()
    torch.set_num_threads(cfg.threads or threads_before)
    keep_freed_memory()
    try:
        return _train(mcfg, cfg, corpus, checkpoint, on_eval, stop_at)
    finally:
        torch.set_num_threads(threads_before)


def _train(mcfg, cfg, corpus, checkpoint, on_eval, stop_at) -> TrainResult:
    t_start = time.perf_counter()
    T = mcfg.context

    # model, optimiser and data stream, all seeded
    torch.manual_seed(cfg.seed)
    model = Decoder(mcfg)
    params = FlatParams(model)
    opt = Optimizer(cfg, params.data, params.lr_scales(mcfg))
    gen = torch.Generator().manual_seed(cfg.data_seed_value)
    xv, yv = val_windows(corpus.val, T)
    written_backward = has_written_backward(mcfg)  # else autograd (same gradients, slower)

    step = 0
    curves: dict[str, list[float]] = {k: [] for k in ("step", "train_loss", "val_loss", "grad_norm", "lr")}
    step_losses: list[float] = []
    step_grad_norms: list[float] = []
    interval_loss, interval_n = 0.0, 0  # for the running mean between evaluations
    seconds_before = 0.0  # time spent before a resume
    diverged_at = None

    def state() -> dict:
        return {
            "version": CHECKPOINT_VERSION,
            "model_config": _config_dict(mcfg),
            "train_config": _config_dict(cfg),
            "step": step,
            "params": params.data.clone(),
            "optimizer": opt.state_dict(),
            "data_rng": gen.get_state(),
            "torch_rng": torch.get_rng_state(),
            "progress": {
                "curves": curves,
                "step_losses": step_losses,
                "step_grad_norms": step_grad_norms,
                "interval_loss": interval_loss,
                "interval_n": interval_n,
                "seconds": seconds_before + time.perf_counter() - t_start,
                "diverged_at": diverged_at,
            },
        }

    if checkpoint is not None and Path(checkpoint).exists():
        ck = load_checkpoint(checkpoint)
        for name, now in (("model_config", _config_dict(mcfg)), ("train_config", _config_dict(cfg))):
            if ck[name] != now:
                diff = sorted(k for k in now if ck[name].get(k) != now[k])
                raise ValueError(f"{checkpoint}: {name} differs from the checkpoint's in {diff}")
        step = ck["step"]
        params.data.copy_(ck["params"])
        opt.load_state_dict(ck["optimizer"])
        gen.set_state(ck["data_rng"])
        torch.set_rng_state(ck["torch_rng"])
        pr = ck["progress"]
        curves, step_losses, step_grad_norms = pr["curves"], pr["step_losses"], pr["step_grad_norms"]
        interval_loss, interval_n = pr["interval_loss"], pr["interval_n"]
        seconds_before, diverged_at = pr["seconds"], pr["diverged_at"]

    def record(train_loss: float, grad_norm: float, lr: float) -> None:
        val_loss = evaluate(params.leaves, xv, yv, mcfg)
        rec = {"step": step, "train_loss": train_loss, "val_loss": val_loss, "grad_norm": grad_norm, "lr": lr}
        for k, v in rec.items():
            curves[k].append(v)
        if on_eval is not None:
            on_eval(dict(rec))

    if step == 0 and not curves["step"]:
        record(math.nan, math.nan, lr_at(0, cfg))

    end = cfg.steps if stop_at is None else min(cfg.steps, stop_at)
    while step < end and diverged_at is None:
        lr = lr_at(step, cfg)
        x, y = sample_batch(corpus.train, cfg.batch, T, gen)  # (B, T), (B, T)
        if written_backward:
            loss, tape = loss_and_tape(params.leaves, x, y, mcfg)
        else:
            loss = cross_entropy(fast_forward(params.leaves, x, mcfg), y, mcfg.z_loss)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            diverged_at = step
            break
        if written_backward:
            backward(tape, params.leaves, params.grads, mcfg)  # fills params.grad
        else:
            grads = torch.autograd.grad(loss, list(params.leaves.values()))
            torch.cat([g.reshape(-1) for g in grads], out=params.grad)  # leaves are in buffer order
        grad_norm = torch.linalg.vector_norm(params.grad)
        grad_norm_value = grad_norm.item()
        if not math.isfinite(grad_norm_value):
            diverged_at = step
            break
        coef = clip_coefficient(grad_norm, cfg.clip)
        if coef is not None:
            params.grad.mul_(coef)
        opt.step(params.data, params.grad, lr)
        step += 1
        step_losses.append(loss_value)
        step_grad_norms.append(grad_norm_value)
        interval_loss += loss_value
        interval_n += 1
        if step % cfg.eval_every == 0 or step == cfg.steps:
            record(interval_loss / interval_n, grad_norm_value, lr)
            interval_loss, interval_n = 0.0, 0
            if checkpoint is not None:
                save_checkpoint(checkpoint, state())

    if checkpoint is not None and (diverged_at is not None or step == end):
        save_checkpoint(checkpoint, state())

    finished = diverged_at is None and step == cfg.steps
    return TrainResult(
        model_config=_config_dict(mcfg),
        train_config={**_config_dict(cfg), "data_seed": cfg.data_seed_value},
        val_loss_init=curves["val_loss"][0],
        val_loss_final=curves["val_loss"][-1] if finished else math.nan,
        train_loss_final=curves["train_loss"][-1] if finished else math.nan,
        steps=step,
        seconds=seconds_before + time.perf_counter() - t_start,
        tokens_seen=step * cfg.batch * T,
        diverged_at=diverged_at,
        curves=curves,
        step_losses=step_losses,
        step_grad_norms=step_grad_norms,
        state_dict={k: v.detach().clone() for k, v in model.state_dict().items()},
    )


# -----------------------------------------------------------------------------
# command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m model.train", description="Train the Decoder (the default run).")
    ap.add_argument("--seed", type=int, default=0, help="weights seed (data seed derived from it)")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps, help="number of updates")
    ap.add_argument("--lr", type=float, default=TrainConfig.lr, help="peak learning rate")
    ap.add_argument("--schedule", choices=SCHEDULES, default=TrainConfig.schedule)
    ap.add_argument("--threads", type=int, default=TrainConfig.threads, help="torch threads (default: torch's, all cores)")
    ap.add_argument("--json", action="store_true", help="print one JSON line with the result, nothing else")
    ap.add_argument("--out", type=Path, help="also write the full result (configs, seeds, curves) as JSON here")
    args = ap.parse_args(argv)
    try:
        cfg = TrainConfig(seed=args.seed, steps=args.steps, lr=args.lr, schedule=args.schedule, threads=args.threads)
    except ValueError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2

    def progress(rec: dict) -> None:
        print(
            f"step {rec['step']:5d}  train {rec['train_loss']:.4f}  val {rec['val_loss']:.4f}  "
            f"grad norm {rec['grad_norm']:.3f}  lr {rec['lr']:.2e}",
            flush=True,
        )

    result = train(ModelConfig(), cfg, on_eval=None if args.json else progress)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result.to_dict(per_step=False)))
    else:
        print(
            f"seed {args.seed}: val loss {result.val_loss_init:.4f} -> {result.val_loss_final:.4f}, "
            f"train loss {result.train_loss_final:.4f}, {result.steps} steps in {result.seconds:.2f} s"
            + (f", diverged at step {result.diverged_at}" if result.diverged_at is not None else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
