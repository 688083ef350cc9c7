"""M autograd Decoders behind the stacked interface: the trainer's path for any variant.

model/train.py's loop drives a network with two methods, `loss_and_grad(x, y, doc)`
and `evaluate(x, y, doc)`, over an (M, P) weight buffer `theta` and its gradient
buffer `grad` laid out as model/stacked.py's `Layout` says. `StackedDecoder` is the
fast path, written out by hand for the variants sweeps need at speed; `Decoders`
is the same interface over M readable `Decoder`s of model/decoder.py, whatever
their variant: each model's parameters are views of its row of theta (so the
optimiser's in-place update is the model's), and after each backward pass its
gradients are copied into its row of grad. Slower, and the definition.

    layout, theta = init_stack(cfg, seeds=[0, 1])
    net = Decoders(cfg, layout, theta, grad=torch.zeros_like(theta))
    loss = net.loss_and_grad(x, y)      # (M,); x, y (M, B, T); gradients in grad
"""

from __future__ import annotations

import torch

from model.decoder import Decoder, ModelConfig, cross_entropy
from model.stacked import EVAL_CHUNK, Layout


class Decoders:
    """M autograd Decoders whose weights live in the rows of theta (M, P)."""

    def __init__(self, cfg: ModelConfig, layout: Layout, theta: torch.Tensor, grad: torch.Tensor):
        self.cfg, self.layout, self.theta, self.grad = cfg, layout, theta, grad
        self.M = theta.shape[0]
        self.loss_scale = torch.ones(self.M)  # (M,) the backward pass runs on loss * loss_scale (FP16 loss scaling)
        self.models = []
        for m in range(self.M):
            model = Decoder(cfg, generator=torch.Generator())  # its own draws are replaced by theta's row
            for name, p in model.named_parameters():
                o = layout.offsets[name]
                p.data = theta[m, o : o + p.numel()].view(p.shape)
            self.models.append(model)

    def loss_and_grad(self, idx: torch.Tensor, targets: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """Each model's training loss (M,) on its batch idx, targets (M, B, T); the gradients go to grad."""
        losses = []
        for m, model in enumerate(self.models):
            model.zero_grad(set_to_none=True)
            loss = model.loss(idx[m], targets[m], None if doc is None else doc[m])
            (loss * self.loss_scale[m]).backward()
            for name, p in model.named_parameters():
                o = self.layout.offsets[name]
                row = self.grad[m, o : o + p.numel()]
                if p.grad is None:
                    row.zero_()
                else:
                    row.copy_(p.grad.reshape(-1) / self.loss_scale[m])
            losses.append(loss.detach())
        return torch.stack(losses)

    @torch.no_grad()
    def evaluate(self, x: torch.Tensor, y: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """Each model's mean loss (z-loss excluded) over the windows x, y (n, T): (M,) float64."""
        out = torch.zeros(self.M, dtype=torch.float64)
        for m, model in enumerate(self.models):
            for s in range(0, len(x), EVAL_CHUNK):
                xc, yc = x[s : s + EVAL_CHUNK], y[s : s + EVAL_CHUNK]
                logits = model(xc, None if doc is None else doc[s : s + EVAL_CHUNK])
                out[m] += float(cross_entropy(logits, yc)) * yc.numel()
        return out / y.numel()
