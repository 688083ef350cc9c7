"""The Decoder: a tiny character-level decoder-only transformer.

Written the way nanoGPT's model.py is (one small module per idea, shape
comments), and small enough to train in seconds on a CPU. The default config
has 5,376 parameters:

    wte 64*16 + wpe 16*16 + attn 4*16*16 + mlp 2*16*64 + lm_head 16*64

Parameter names (state_dict keys) are part of the API: the NumPy reference
(model/reference.py) and the stacked fast path (model/stacked.py) use them.

    wte.weight                   (V, D)   token embedding
    wpe.weight                   (T, D)   learned positions
    blocks.{i}.attn.w_q.weight   (D, D)   nn.Linear weights are (out, in): y = x @ W.T
    blocks.{i}.attn.w_k.weight   (D, D)
    blocks.{i}.attn.w_v.weight   (D, D)
    blocks.{i}.attn.w_o.weight   (D, D)
    blocks.{i}.mlp.w_in.weight   (4D, D)
    blocks.{i}.mlp.w_out.weight  (D, 4D)
    lm_head.weight               (V, D)   the same tensor as wte.weight when tied

Norms have no gain or bias, so they own no parameters, and there are no
biases anywhere. Symbols in comments: B batch, T time, D d_model, H heads,
Dh = D / H, V vocab.

Document masking (an ablation, off unless asked for): forward(idx, doc) takes a
(B, T) integer tensor of document ids beside the tokens, and position t then
attends to s only when s <= t and doc[s] == doc[t], so packed documents do not
see each other. Positions are not reset at a boundary: a document that starts
mid-window keeps the window's positions (as in Llama 3's description, which
masks attention and says nothing of positions). With doc=None, or every id
equal, the Decoder computes exactly what it computes without it.

µP (param="mup"), relative to a base width `base_d_model`, with
m = d_model / base_d_model (everything below is the identity when m == 1):

- the logits are multiplied by 1/m (the readout's "output multiplier");
- attention scores are scaled by sqrt(base_Dh) / Dh, i.e. 1/Dh up to the constant
  that makes it 1/sqrt(Dh) at the base width (base_Dh = base_d_model / n_heads);
- hidden matrices (w_q, w_k, w_v, w_o, w_in, w_out) are initialised with
  std init_std / sqrt(m) (variance ~ 1/fan_in); wte, wpe and lm_head keep init_std;
- with Adam-type optimisers, hidden matrices take learning rate lr / m and
  everything else lr: `mup_lr_scales(cfg)` gives the multiplier per name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.precision import ACT_TILE, FP8_SCALINGS, WEIGHT_TILE, e4m3

NORMS = ("pre", "post", "none")
ATTENTIONS = ("causal", "self")
NORM_KINDS = ("layer", "rms")
PARAMS = ("standard", "mup")


@dataclass
class ModelConfig:
    vocab: int = 64  # 63 most frequent characters of the book + one unknown symbol
    d_model: int = 16
    context: int = 16  # T: the longest input; wpe has one row per position
    n_layers: int = 1
    n_heads: int = 2  # Dh = d_model / n_heads = 8
    mlp_ratio: int = 4  # MLP hidden width = mlp_ratio * d_model
    norm: str = "pre"  # "pre": x + f(norm(x)), final norm before the head;
    #                    "post": norm(x + f(x)), no final norm; "none": no norms at all
    norm_kind: str = "layer"  # "layer": LayerNorm, "rms": RMSNorm; never a gain or a bias
    norm_eps: float = 1e-5  # as torch.nn.LayerNorm's default
    qk_norm: bool = False  # normalise each head's queries and keys (same kind) before q.k
    attention: str = "causal"  # "causal": position t attends to every s <= t; "self": only to t itself,
    #                            so no information moves between positions (an attention-blind baseline)
    z_loss: float = 0.0  # weight of mean(logsumexp(logits)^2) added to the loss (PaLM)
    param: str = "standard"  # "standard" or "mup" (see the module docstring)
    base_d_model: int = 16  # µP's base width: at d_model == base_d_model, mup == standard
    init_std: float = 0.02  # every weight starts N(0, init_std) (µP rescales hidden matrices)
    tie_embeddings: bool = False  # lm_head.weight is wte.weight
    residual: bool = True  # False: each sublayer's output replaces the stream instead of adding to it
    #                        (x = f(norm(x)) under pre-LN), the residual-highway ablation
    fp8: str | None = None  # simulated FP8 forward: every block matmul's input and weight cast to E4M3
    #                         and back, the product in FP32 ("none": unscaled, "tensor": one scale each,
    #                         "tile": DeepSeek-V3's 1x128 / 128x128 tiles); None: FP32. Head stays FP32.

    def __post_init__(self) -> None:
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if self.norm_kind not in NORM_KINDS:
            raise ValueError(f"norm_kind must be one of {NORM_KINDS}, got {self.norm_kind!r}")
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        if self.param not in PARAMS:
            raise ValueError(f"param must be one of {PARAMS}, got {self.param!r}")
        if self.fp8 is not None and self.fp8 not in FP8_SCALINGS:
            raise ValueError(f"fp8 must be None or one of {FP8_SCALINGS}, got {self.fp8!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        if self.param == "mup" and self.base_d_model % self.n_heads:
            raise ValueError(f"base_d_model {self.base_d_model} is not divisible by n_heads {self.n_heads}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def width_mult(self) -> float:
        """µP's m = d_model / base_d_model (1.0 under standard parametrisation)."""
        return self.d_model / self.base_d_model if self.param == "mup" else 1.0

    @property
    def attn_scale(self) -> float:
        """What q.k is multiplied by: 1/sqrt(Dh), or sqrt(base_Dh)/Dh under µP."""
        if self.param == "mup":
            return math.sqrt(self.base_d_model / self.n_heads) / self.d_head
        return 1.0 / math.sqrt(self.d_head)

    @property
    def logit_mult(self) -> float:
        """What the head's output is multiplied by: 1, or 1/m under µP."""
        return 1.0 / self.width_mult


class Linear(nn.Linear):
    """A bias-free nn.Linear; with ``fp8`` set, a simulated FP8 matmul: the input and the weight are
    cast to E4M3 and back (see model/precision.py), the product runs in FP32, and the backward pass
    treats the casts as the identity (gradients in FP32, as the straight-through estimator)."""

    def __init__(self, d_in: int, d_out: int, fp8: str | None = None):
        super().__init__(d_in, d_out, bias=False)
        self.fp8 = fp8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fp8 is None:
            return super().forward(x)
        x8 = e4m3(x.reshape(-1, x.shape[-1]), self.fp8, ACT_TILE).reshape(x.shape)
        w8 = e4m3(self.weight, self.fp8, WEIGHT_TILE)
        return F.linear(x + (x8 - x).detach(), self.weight + (w8 - self.weight).detach())


HIDDEN = ("attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o", "mlp.w_in", "mlp.w_out")


def is_hidden(name: str) -> bool:
    """Whether a parameter is a hidden matrix (both dimensions grow with width)."""
    return name.startswith("blocks.") and name.removesuffix(".weight").split(".", 2)[2] in HIDDEN


def mup_lr_scales(cfg: ModelConfig) -> dict[str, float]:
    """Learning-rate multiplier per parameter name for Adam-type optimisers:
    1/m for hidden matrices under µP, 1 for everything else (and for all
    parameters under standard parametrisation). Tied weights appear once, as wte."""
    m = cfg.width_mult
    names = ["wte.weight", "wpe.weight"]
    for i in range(cfg.n_layers):
        names += [f"blocks.{i}.{h}.weight" for h in HIDDEN]
    if not cfg.tie_embeddings:
        names.append("lm_head.weight")
    return {name: (1.0 / m if is_hidden(name) else 1.0) for name in names}


class Norm(nn.Module):
    """LayerNorm or RMSNorm over the last dimension, with no gain and no bias."""

    def __init__(self, kind: str, eps: float):
        super().__init__()
        self.kind = kind
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "layer":
            return F.layer_norm(x, x.shape[-1:], eps=self.eps)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


def attention_mask(cfg: ModelConfig) -> torch.Tensor:
    """(context, context) bool, True where position t may not look at s: above the
    diagonal (s > t) for causal attention, everywhere off the diagonal for "self"."""
    T = cfg.context
    if cfg.attention == "self":
        return ~torch.eye(T, dtype=torch.bool)
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)


def document_mask(doc: torch.Tensor) -> torch.Tensor:
    """(..., T, T) bool from document ids (..., T): True where position t may not look
    at s because s lies in another document (doc[s] != doc[t]). The diagonal is never
    masked, so every row keeps at least one position."""
    return doc[..., :, None] != doc[..., None, :]


def check_doc(doc: torch.Tensor | None, idx: torch.Tensor) -> None:
    """Document ids must be integers of the tokens' shape."""
    if doc is None:
        return
    if doc.shape != idx.shape:
        raise ValueError(f"document ids have shape {tuple(doc.shape)}, the tokens {tuple(idx.shape)}")
    if doc.is_floating_point() or doc.is_complex():
        raise ValueError(f"document ids must be integers, got {doc.dtype}")


class CausalSelfAttention(nn.Module):
    mask: torch.Tensor  # (context, context) bool, a buffer

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        D = cfg.d_model
        self.n_heads = cfg.n_heads
        self.scale = cfg.attn_scale
        self.w_q = Linear(D, D, cfg.fp8)
        self.w_k = Linear(D, D, cfg.fp8)
        self.w_v = Linear(D, D, cfg.fp8)
        self.w_o = Linear(D, D, cfg.fp8)
        self.qk_norm = Norm(cfg.norm_kind, cfg.norm_eps) if cfg.qk_norm else None
        mask = attention_mask(cfg)
        self.register_buffer("mask", mask, persistent=False)  # not in state_dict

    def forward(self, x: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, D); doc: optional document ids (B, T), attention stays inside a document."""
        B, T, D = x.shape
        H = self.n_heads
        q = self.w_q(x).view(B, T, H, D // H).transpose(1, 2)  # (B, H, T, Dh)
        k = self.w_k(x).view(B, T, H, D // H).transpose(1, 2)  # (B, H, T, Dh)
        v = self.w_v(x).view(B, T, H, D // H).transpose(1, 2)  # (B, H, T, Dh)
        if self.qk_norm is not None:
            q, k = self.qk_norm(q), self.qk_norm(k)
        att = (q @ k.transpose(-2, -1)) * self.scale  # (B, H, T, T)
        mask = self.mask[:T, :T]  # (T, T)
        if doc is not None:  # the document mask: also no s in another document than t's
            mask = mask | document_mask(doc)[:, None]  # (B, 1, T, T)
        att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)  # (B, H, T, T)
        y = att @ v  # (B, H, T, Dh)
        y = y.transpose(1, 2).reshape(B, T, D)  # (B, T, D): heads side by side
        return self.w_o(y)


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        D = cfg.d_model
        self.w_in = Linear(D, cfg.mlp_ratio * D, cfg.fp8)
        self.w_out = Linear(cfg.mlp_ratio * D, D, cfg.fp8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.w_in(x))  # (B, T, 4D), exact (erf) GELU
        return self.w_out(h)  # (B, T, D)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.norm = cfg.norm
        self.residual = cfg.residual
        self.ln_1 = Norm(cfg.norm_kind, cfg.norm_eps)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = Norm(cfg.norm_kind, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        if not self.residual:  # the ablation: no highway, each sublayer replaces the stream
            if self.norm == "pre":
                return self.mlp(self.ln_2(self.attn(self.ln_1(x), doc)))
            if self.norm == "post":
                return self.ln_2(self.mlp(self.ln_1(self.attn(x, doc))))
            return self.mlp(self.attn(x, doc))
        if self.norm == "pre":
            x = x + self.attn(self.ln_1(x), doc)
            x = x + self.mlp(self.ln_2(x))
        elif self.norm == "post":
            x = self.ln_1(x + self.attn(x, doc))
            x = self.ln_2(x + self.mlp(x))
        else:
            x = x + self.attn(x, doc)
            x = x + self.mlp(x)
        return x


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig, generator: torch.Generator | None = None):
        """Weights are drawn from `generator` (torch's global RNG if None), one
        parameter after another in named_parameters() order."""
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.d_model)
        self.wpe = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.ln_f = Norm(cfg.norm_kind, cfg.norm_eps) if cfg.norm == "pre" else None
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.wte.weight
        self.init_weights(generator)

    @torch.no_grad()
    def init_weights(self, generator: torch.Generator | None = None) -> None:
        for name, p in self.named_parameters():  # tied weights come once, as wte
            std = self.cfg.init_std
            if is_hidden(name):
                std /= math.sqrt(self.cfg.width_mult)
            p.normal_(0.0, std, generator=generator)

    def forward(self, idx: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """Token ids (B, T) with T <= context -> logits (B, T, V). doc: optional
        document ids (B, T); attention then stays inside each document (positions
        are not reset at a boundary: see the module docstring)."""
        B, T = idx.shape
        if self.cfg.context < T:
            raise ValueError(f"sequence length {T} exceeds the context {self.cfg.context}")
        check_doc(doc, idx)
        x = self.wte(idx) + self.wpe.weight[:T]  # (B, T, D)
        for block in self.blocks:
            x = block(x, doc)  # (B, T, D)
        if self.ln_f is not None:
            x = self.ln_f(x)
        logits = self.lm_head(x)  # (B, T, V)
        if self.cfg.logit_mult != 1.0:
            logits = logits * self.cfg.logit_mult
        return logits

    def loss(self, idx: torch.Tensor, targets: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        return cross_entropy(self(idx, doc), targets, self.cfg.z_loss)

    @torch.no_grad()
    def generate(
        self, idx: torch.Tensor, n_new: int, temperature: float = 1.0, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Append `n_new` sampled tokens to each row of `idx` (B, T0)."""
        for _ in range(n_new):
            logits = self(idx[:, -self.cfg.context :])[:, -1, :]  # (B, V)
            probs = F.softmax(logits / temperature, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, z_loss: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy of logits (..., V) against targets (...), plus
    z_loss * mean(logsumexp(logits)^2) when z_loss > 0."""
    V = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    if z_loss:
        loss = loss + z_loss * torch.logsumexp(logits, dim=-1).pow(2).mean()
    return loss


def num_params(model: nn.Module) -> int:
    """Number of distinct parameter values (a tied matrix counts once)."""
    return sum(p.numel() for p in model.parameters())
