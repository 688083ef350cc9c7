"""Tensor parallelism (Megatron-LM's split): each process holds a slice of every block's matrices.

The MLP's first matrix is split by columns of its output (each process computes a slice of the 4D
hidden units, GELU applies elementwise, so no talk is needed), its second by the matching rows of
its input, so each process holds a partial sum of the output: one all-reduce adds them. Attention
is split by heads the same way (w_q, w_k, w_v by output rows, w_o by input columns). Two
conjugate operators mark the boundaries (Shoeybi et al. 2019):

- ``f``: identity forward, all-reduce of the gradient backward (where a block's input enters);
- ``g``: all-reduce forward, identity backward (where its output leaves).

So each layer all-reduces twice forward and twice backward. The embeddings, norms and head are
replicated. Weights are sliced from a full Decoder built outside; :data:`CALLS` counts the
all-reduces and their elements in this process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from model.decoder import MLP, Block, CausalSelfAttention, Decoder, ModelConfig, cross_entropy


@dataclass
class Calls:
    """All-reduces this process made, by direction, and the elements they carried."""

    forward: int = 0
    backward: int = 0
    elements: int = 0


CALLS = Calls()


def _all_reduce(x: torch.Tensor, direction: str) -> torch.Tensor:
    x = x.contiguous().clone()
    dist.all_reduce(x)
    if direction == "forward":
        CALLS.forward += 1
    else:
        CALLS.backward += 1
    CALLS.elements += x.numel()
    return x


class _F(torch.autograd.Function):
    """Identity forward; all-reduce the gradient backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return _all_reduce(grad, "backward")


class _G(torch.autograd.Function):
    """All-reduce forward; identity backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return _all_reduce(x, "forward")

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


def _rows(w: torch.Tensor, rank: int, world: int) -> nn.Parameter:
    """Output rows rank/world of an nn.Linear weight (out, in): a column split of y = x W^T."""
    n = w.shape[0] // world
    return nn.Parameter(w.detach()[rank * n : (rank + 1) * n].clone())


def _cols(w: torch.Tensor, rank: int, world: int) -> nn.Parameter:
    """Input columns rank/world of an nn.Linear weight (out, in): a row split of y = x W^T."""
    n = w.shape[1] // world
    return nn.Parameter(w.detach()[:, rank * n : (rank + 1) * n].clone())


class TPBlock(nn.Module):
    """One pre-LN block, this process's heads and hidden units."""

    def __init__(self, block: Block, cfg: ModelConfig, rank: int, world: int):
        super().__init__()
        if cfg.n_heads % world or (cfg.mlp_ratio * cfg.d_model) % world:
            raise ValueError(
                f"{cfg.n_heads} heads and {cfg.mlp_ratio * cfg.d_model} hidden units must split into {world}"
            )
        a, mlp = block.attn, block.mlp
        assert isinstance(a, CausalSelfAttention) and isinstance(mlp, MLP)
        self.cfg, self.heads = cfg, cfg.n_heads // world
        self.ln_1, self.ln_2 = block.ln_1, block.ln_2
        self.mask: torch.Tensor = a.mask
        self.w_q, self.w_k, self.w_v = (_rows(w.weight, rank, world) for w in (a.w_q, a.w_k, a.w_v))
        self.w_o = _cols(a.w_o.weight, rank, world)
        self.w_in, self.w_out = _rows(mlp.w_in.weight, rank, world), _cols(mlp.w_out.weight, rank, world)

    def attn(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        H, Dh = self.heads, self.cfg.d_head
        q, k, v = (F.linear(x, w).view(B, T, H, Dh).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))
        att = (q @ k.transpose(-2, -1)) * self.cfg.attn_scale  # (B, H/t, T, T)
        att = F.softmax(att.masked_fill(self.mask[:T, :T], float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, H * Dh)  # (B, T, D/t): this process's heads
        return F.linear(y, self.w_o)  # (B, T, D): a partial sum over heads

    # #region tp-block
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + _G.apply(self.attn(_F.apply(self.ln_1(x))))
        h = F.gelu(F.linear(_F.apply(self.ln_2(x)), self.w_in))  # (B, T, 4D/t)
        return x + _G.apply(F.linear(h, self.w_out))

    # #endregion tp-block


class TPDecoder(nn.Module):
    """The Decoder with every block tensor-parallel; embeddings, final norm and head replicated."""

    def __init__(self, model: Decoder, rank: int, world: int):
        super().__init__()
        cfg = model.cfg
        if cfg.norm != "pre" or not cfg.residual or cfg.qk_norm or cfg.tie_embeddings:
            raise ValueError("the tensor split follows the default Decoder: pre-LN, residual, no QK-norm, untied")
        self.cfg = cfg
        self.wte, self.wpe, self.ln_f, self.lm_head = model.wte, model.wpe, model.ln_f, model.lm_head
        self.blocks = nn.ModuleList(TPBlock(b, cfg, rank, world) for b in model.blocks if isinstance(b, Block))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx) + self.wpe.weight[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        assert self.ln_f is not None
        return self.lm_head(self.ln_f(x)) * self.cfg.logit_mult


def shard_grads(model: Decoder, rank: int, world: int) -> dict[str, torch.Tensor]:
    """The full Decoder's gradients cut the way TPDecoder cuts the weights, by parameter name."""
    out = {}
    for name, p in model.named_parameters():
        assert p.grad is not None
        g = p.grad
        if name.endswith(("w_q.weight", "w_k.weight", "w_v.weight", "w_in.weight")):
            g = _rows(g, rank, world).data
        elif name.endswith(("w_o.weight", "w_out.weight")):
            g = _cols(g, rank, world).data
        out[name] = g
    return out


def tp_grads(tp: TPDecoder) -> dict[str, torch.Tensor]:
    """TPDecoder's gradients under the full Decoder's parameter names."""
    out = {}
    for name in ("wte.weight", "wpe.weight", "lm_head.weight"):
        mod = getattr(tp, name.split(".")[0])
        out[name] = mod.weight.grad
    for i, b in enumerate(tp.blocks):
        for part, attrs in (("attn", ("w_q", "w_k", "w_v", "w_o")), ("mlp", ("w_in", "w_out"))):
            for a in attrs:
                out[f"blocks.{i}.{part}.{a}.weight"] = getattr(b, a).grad
    return out


def run_tp(rank: int, world: int, cfg: ModelConfig, seed: int, idx: torch.Tensor, targets: torch.Tensor) -> dict:
    """One process: the split model's logits, loss and gradients against the full Decoder's (built here
    from the same seed), and the all-reduces it made."""
    full = Decoder(cfg, torch.Generator().manual_seed(seed))
    tp = TPDecoder(Decoder(cfg, torch.Generator().manual_seed(seed)), rank, world)
    CALLS.forward = CALLS.backward = CALLS.elements = 0
    logits = tp(idx)
    loss = cross_entropy(logits, targets)
    loss.backward()
    ref_logits = full(idx)
    ref_loss = cross_entropy(ref_logits, targets)
    ref_loss.backward()
    want, got = shard_grads(full, rank, world), tp_grads(tp)
    grad_diff = max(float((got[n] - want[n]).abs().max()) for n in want)
    grad_scale = max(float(want[n].abs().max()) for n in want)
    return {
        "logit_diff": float((logits - ref_logits).detach().abs().max()),
        "loss_diff": float((loss - ref_loss).detach().abs()),
        "grad_diff": grad_diff,
        "grad_scale": grad_scale,
        "forward": CALLS.forward,
        "backward": CALLS.backward,
        "elements": CALLS.elements,
    }
