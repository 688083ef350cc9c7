"""Look inside a Decoder at initialisation and early in training: what chapter 6 measures.

- `init_probe(cfg, seed, x, y)`: the model torch.manual_seed(seed) then Decoder(cfg) builds (as
  the trainer does), one forward and backward pass on windows (x, y): the loss, the
  residual stream's RMS after the embedding and after every block, each block's gradient
  norm, and the logits' RMS;
- `coordinates(cfg, weights, x)`: the µP coordinate check's numbers, mean |activation| of the
  embedding, each block's attention and MLP outputs and the logits, for given weights;
- `residual_scaled(...)`: GPT-2's 1/sqrt(N_res) scaling of the residual branches' output
  matrices (w_o, w_out), N_res = 2 * n_layers, as a start the trainer resumes from.

ModelConfig has no field for GPT-2's scaling, and the trainer draws its own initial weights.
`residual_scaled_start` therefore uses the trainer's checkpoint, its documented way to start
from given weights: it lets train_many write its step-0 checkpoint (stop_at=0), multiplies
the two matrices of every block in that file by the factor, clears the step-0 evaluation
(so the scaled weights are evaluated), and train_many then resumes from it. The hooks'
tensors are never written.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.decoder import Decoder, ModelConfig
from model.stacked import Layout
from model.train import TrainConfig, TrainResult, load_checkpoint, save_checkpoint, train_many

RESIDUAL_OUT = ("attn.w_o", "mlp.w_out")  # the matrices whose output is added to the stream


def seeded_decoder(cfg: ModelConfig, seed: int) -> Decoder:
    """The Decoder the trainer starts from for `seed` (torch's global generator left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Decoder(cfg)


def residual_factor(cfg: ModelConfig) -> float:
    """GPT-2's factor 1/sqrt(N_res), N_res = 2 residual branches per block."""
    return 1.0 / math.sqrt(2 * cfg.n_layers)


@torch.no_grad()
def scale_residual_(model: Decoder, factor: float) -> None:
    """Multiply every block's w_o and w_out by `factor` (in place: the model is the caller's own)."""
    for name, p in model.named_parameters():
        if name.startswith("blocks.") and name.removesuffix(".weight").split(".", 2)[2] in RESIDUAL_OUT:
            p.mul_(factor)


def _embedding(model: Decoder, x: torch.Tensor) -> torch.Tensor:
    """What the first block reads: token plus position embeddings (B, T, D)."""
    wte, wpe = model.get_parameter("wte.weight"), model.get_parameter("wpe.weight")
    return wte[x] + wpe[: x.shape[1]]


@dataclass
class InitProbe:
    """One model at initialisation, on one set of windows."""

    loss: float  # mean cross-entropy, nats
    stream_rms: list[float]  # RMS of the residual stream: after the embedding, then after each block
    grad_norm: list[float]  # each block's gradient norm (all its weights), in block order
    head_grad_norm: float  # lm_head's gradient norm
    logit_rms: float  # RMS of the logits


def init_probe(cfg: ModelConfig, seed: int, x: torch.Tensor, y: torch.Tensor, residual: float = 1.0) -> InitProbe:
    """Forward and backward once through the seeded Decoder (w_o, w_out scaled by `residual`)."""
    model = seeded_decoder(cfg, seed)
    if residual != 1.0:
        scale_residual_(model, residual)
    streams: list[torch.Tensor] = []
    blocks = [model.get_submodule(f"blocks.{i}") for i in range(cfg.n_layers)]
    handles = [b.register_forward_hook(lambda mod, inp, out: streams.append(out.detach())) for b in blocks]
    emb = _embedding(model, x)
    logits = model(x)
    for h in handles:
        h.remove()
    loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), y.reshape(-1))
    loss.backward()

    def rms(t: torch.Tensor) -> float:
        return float(t.pow(2).mean().sqrt())

    def gnorm(module: torch.nn.Module) -> float:
        grads = [p.grad.reshape(-1) for p in module.parameters() if p.grad is not None]
        return float(torch.linalg.vector_norm(torch.cat(grads)))

    return InitProbe(
        loss=float(loss.detach()),
        stream_rms=[rms(emb.detach())] + [rms(s) for s in streams],
        grad_norm=[gnorm(b) for b in blocks],
        head_grad_norm=gnorm(model.get_submodule("lm_head")),
        logit_rms=rms(logits.detach()),
    )


@torch.no_grad()
def coordinates(cfg: ModelConfig, weights: dict[str, torch.Tensor], x: torch.Tensor) -> dict[str, float]:
    """Mean |activation| of the embedding, each block's attention and MLP outputs, and the logits."""
    model = Decoder(cfg)
    model.load_state_dict(weights)
    acts: dict[str, torch.Tensor] = {}
    handles = []
    for i in range(cfg.n_layers):
        for name in ("attn", "mlp"):
            mod = model.get_submodule(f"blocks.{i}.{name}")
            handles.append(mod.register_forward_hook(lambda m, inp, o, k=f"{name}{i}": acts.__setitem__(k, o)))
    emb = _embedding(model, x)
    logits = model(x)
    for h in handles:
        h.remove()
    coords = {"embedding": float(emb.abs().mean())}
    coords |= {k: float(v.abs().mean()) for k, v in acts.items()}
    coords["logits"] = float(logits.abs().mean())
    return coords


def residual_offsets(layout: Layout, cfg: ModelConfig) -> list[tuple[int, int]]:
    """(start, end) of every block's w_o and w_out in a stack's flat weight row."""
    spans = []
    for i in range(cfg.n_layers):
        for name in RESIDUAL_OUT:
            n = f"blocks.{i}.{name}.weight"
            start = layout.offsets[n]
            spans.append((start, start + math.prod(layout.shapes[n])))
    return spans


def residual_scaled_start(cfg: ModelConfig, runs: list[TrainConfig], corpus, path: str | os.PathLike) -> float:
    """Write a step-0 checkpoint at `path` whose w_o and w_out are GPT-2-scaled; returns the factor.

    train_many(cfg, runs, corpus, checkpoint=path) then trains from it."""
    train_many(cfg, runs, corpus, checkpoint=path, stop_at=0)
    state = load_checkpoint(path)
    layout = Layout(seeded_decoder(cfg, runs[0].seed))
    factor = residual_factor(cfg)
    theta = state["theta"]
    for start, end in residual_offsets(layout, cfg):
        theta[:, start:end] *= factor
    for curve in state["progress"]["curves"]:  # evaluate the scaled weights at step 0
        for values in curve.values():
            values.clear()
    save_checkpoint(path, state)
    return factor


def train_residual_scaled(
    cfg: ModelConfig, runs: list[TrainConfig], corpus, path: str | os.PathLike, **kw
) -> list[TrainResult]:
    """train_many from GPT-2-scaled initial weights (see residual_scaled_start)."""
    residual_scaled_start(cfg, runs, corpus, path)
    return train_many(cfg, runs, corpus, checkpoint=path, **kw)
