"""The bytes each kind of model parallelism sends, counted from a layer's shapes.

Per process, per transformer layer, per training step (forward and backward unless said),
with degree t (the number of processes sharing the layer), activations s·b·h (sequence,
micro-batch, hidden) of ``bytes_per`` bytes. A ring all-reduce of n elements sends 2(t-1)/t·n
per process; an all-gather or a reduce-scatter (t-1)/t·n.

- TP: 2 all-reduces forward + 2 backward of s·b·h (Shoeybi et al. 2019);
- SP (with TP): each all-reduce becomes an all-gather + a reduce-scatter, the same volume
  (Korthikanti et al. 2022, §4.2);
- CP (ring attention), forward: each process passes its key and value chunks (s/t)·b·h each
  t-1 times around the ring;
- EP, forward: all-to-all dispatch of each token's h-vector to its k experts and the combine
  back; with uniform routing (t-1)/t of them live on another process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.decoder import Block, CausalSelfAttention, Decoder


@dataclass(frozen=True)
class Shape:
    """A layer's shape and the width of its numbers."""

    name: str
    hidden: int
    seq: int
    batch: int
    bytes_per: int


TOY = Shape("the Decoder", hidden=16, seq=16, batch=32, bytes_per=4)
"""The default Decoder, float32, the default batch of 32 windows."""
LLAMA7B = Shape("LLaMA-7B", hidden=4096, seq=2048, batch=1, bytes_per=2)
"""LLaMA-7B's width (Touvron et al. 2023a, Table 2), 16-bit, one sequence of a chosen 2,048 tokens."""


def activation_bytes(shape: Shape) -> float:
    """One layer's input, s·b·h numbers."""
    return float(shape.seq * shape.batch * shape.hidden * shape.bytes_per)


def tp_bytes(shape: Shape, t: int) -> float:
    """Four ring all-reduces of s·b·h per layer (2 forward, 2 backward)."""
    return 4 * 2 * (t - 1) / t * activation_bytes(shape)


def sp_bytes(shape: Shape, t: int) -> float:
    """Four all-gathers and four reduce-scatters of s·b·h: the same bytes as TP's all-reduces."""
    return 4 * 2 * (t - 1) / t * activation_bytes(shape)


def cp_bytes(shape: Shape, t: int) -> float:
    """Ring attention forward: keys and values, (s/t)·b·h each, sent t-1 times."""
    return (t - 1) * 2 * activation_bytes(shape) / t


def ep_bytes(shape: Shape, t: int, top_k: int) -> float:
    """All-to-all forward: dispatch and combine of k copies of each token, (t-1)/t of them remote."""
    return 2 * top_k * (t - 1) / t * activation_bytes(shape)


@torch.no_grad()
def qkv_and_attention(model: Decoder, idx: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The first block's queries, keys and values (B, H, T, Dh) on a batch, and its full causal
    attention output before w_o, computed in one process: what ring attention must reproduce."""
    block = model.blocks[0]
    assert isinstance(block, Block) and isinstance(block.attn, CausalSelfAttention)
    cfg, attn = model.cfg, block.attn
    B, T = idx.shape
    x = block.ln_1(model.wte(idx) + model.wpe.weight[:T])
    H, Dh = cfg.n_heads, cfg.d_head
    q, k, v = (w(x).view(B, T, H, Dh).transpose(1, 2).contiguous() for w in (attn.w_q, attn.w_k, attn.w_v))
    att = (q @ k.transpose(-2, -1)) * cfg.attn_scale
    att = torch.softmax(att.masked_fill(attn.mask[:T, :T], float("-inf")), dim=-1)
    return q, k, v, att @ v
