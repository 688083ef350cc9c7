"""What deck 07 looks at inside a Decoder: attention logits, attention entropy and log Z.

The trainer's hooks hand out weights, read-only (`Step.weights(m, cfg)`); `probe` loads them
into an autograd Decoder and runs a fixed held-out batch through it, recording what each
attention head computes before its softmax:

    model = decoder_from(step.weights(m, cfg), cfg)
    stats = probe(model, xv)          # Probe: max_logit (L, H), entropy (L, H), log_z ...

Attention logits are the scaled scores q.k / sqrt(Dh) (after QK-norm when the config has it)
at the positions the causal mask lets through; entropy is of each query's attention row, in
nats, averaged over the batch and the positions that attend to at least two others (position
0 sees only itself). log Z is the output softmax's log-partition, logsumexp of the logits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.data import Batches, Corpus
from model.decoder import Block, Decoder, ModelConfig


@dataclass(frozen=True)
class Probe:
    """One model's attention and output statistics on a fixed batch."""

    max_logit: torch.Tensor  # (L, H) the largest |attention logit| of each head
    entropy: torch.Tensor  # (L, H) each head's mean attention entropy (nats)
    log_z_mean: float  # mean logsumexp of the output logits
    log_z_max: float  # largest |logsumexp| of the output logits
    loss: float  # cross-entropy on the batch (nats/char)


def decoder_from(weights: dict[str, torch.Tensor], cfg: ModelConfig) -> Decoder:
    """An autograd Decoder holding `weights` (a copy: the trainer's tensors are never touched)."""
    model = Decoder(cfg, torch.Generator().manual_seed(0))
    model.load_state_dict({k: v.detach().clone() for k, v in weights.items()})
    return model.eval()


def attention_logits(model: Decoder, idx: torch.Tensor) -> list[torch.Tensor]:
    """Each block's attention logits (B, H, T, T) for tokens idx (B, T), masked entries -inf.

    The input of each attention layer is captured by a forward pre-hook while the model runs,
    and the scores are recomputed from that layer's own w_q, w_k, QK-norm and scale."""
    layers = [block.attn for block in model.blocks if isinstance(block, Block)]
    inputs: list[torch.Tensor] = []
    handles = [attn.register_forward_pre_hook(lambda mod, args: inputs.append(args[0])) for attn in layers]
    try:
        with torch.no_grad():
            model(idx)
    finally:
        for h in handles:
            h.remove()
    out = []
    for attn, x in zip(layers, inputs, strict=True):
        B, T, D = x.shape
        H = attn.n_heads
        q = attn.w_q(x).view(B, T, H, D // H).transpose(1, 2)  # (B, H, T, Dh)
        k = attn.w_k(x).view(B, T, H, D // H).transpose(1, 2)
        if attn.qk_norm is not None:
            q, k = attn.qk_norm(q), attn.qk_norm(k)
        scores = (q @ k.transpose(-2, -1)) * attn.scale  # (B, H, T, T)
        out.append(scores.masked_fill(attn.mask[:T, :T], float("-inf")))
    return out


def probe(model: Decoder, idx: torch.Tensor, targets: torch.Tensor | None = None) -> Probe:
    """Attention max-logit and entropy per head, and log Z, of `model` on the batch idx (B, T)."""
    with torch.no_grad():
        logits = model(idx)  # (B, T, V)
        log_z = torch.logsumexp(logits.double(), dim=-1)  # (B, T)
        loss = math.nan if targets is None else float(F.cross_entropy(logits.flatten(0, 1), targets.flatten()))
        maxes, ents = [], []
        for scores in attention_logits(model, idx):
            T = scores.shape[-1]
            seen = torch.isfinite(scores)
            maxes.append(scores.abs().where(seen, 0.0).amax(dim=(0, 2, 3)))  # (H,)
            p = F.softmax(scores.double(), dim=-1)
            h = -(p * torch.log(p.clamp_min(1e-300))).where(seen, 0.0).sum(-1)  # (B, H, T)
            ents.append(h[:, :, 1:T].mean(dim=(0, 2)).float())  # rows with two or more choices
    return Probe(
        max_logit=torch.stack(maxes),
        entropy=torch.stack(ents),
        log_z_mean=float(log_z.mean()),
        log_z_max=float(log_z.abs().max()),
        loss=loss,
    )


def max_entropy(context: int) -> float:
    """Mean entropy of uniform causal attention over positions 1..T-1 (nats): the ceiling."""
    return sum(math.log(t + 1) for t in range(1, context)) / (context - 1)


def near_eps_share(exp_avg_sq: torch.Tensor, t: int, beta2: float, eps: float, factor: float) -> torch.Tensor:
    """Per model (M,), the share of second-moment entries whose bias-corrected root sqrt(v_hat)
    is below factor * eps: weights whose Adam denominator is set by eps, not by their gradient."""
    v_hat = exp_avg_sq.double() / (1.0 - beta2**t)
    return (v_hat.sqrt() < factor * eps).double().mean(dim=1)


# -----------------------------------------------------------------------------
# one bad batch: a stretch of corrupted text the sampler reaches at a chosen step


def window_starts(data: torch.Tensor, data_seed: int, batch: int, context: int, steps: int) -> torch.Tensor:
    """(steps, batch) the start of every window a run with this data seed draws, step by step:
    the trainer's own batch generator (model.data.Batches), replayed."""
    batches = Batches(data, [data_seed], batch, context)
    rows = []
    for _ in range(steps):
        batches.next()
        rows.append(batches.starts[0, batches.k - 1].clone())
    return torch.stack(rows)


def corrupted(corpus: Corpus, starts: torch.Tensor, fill: torch.Tensor) -> Corpus:
    """A copy of corpus whose training windows at `starts` (B,) hold `fill` (B, context + 1),
    the tokens each bad window is made of; validation is untouched."""
    train = corpus.train.clone()
    for s, tokens in zip(starts.tolist(), fill, strict=True):
        train[s : s + len(tokens)] = tokens
    return Corpus(text=corpus.text, vocab=corpus.vocab, train=train, val=corpus.val)


def touched(starts: torch.Tensor, bad: torch.Tensor, context: int) -> torch.Tensor:
    """(steps,) how many windows of each step's batch (starts (steps, B)) overlap a corrupted
    window (bad (B,) starts, each context + 1 tokens long)."""
    lo, hi = starts[..., None], starts[..., None] + context + 1  # (steps, B, 1)
    overlap = (lo < bad + context + 1) & (bad < hi)  # (steps, B, B_bad)
    return overlap.any(-1).sum(-1)
