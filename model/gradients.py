"""Per-example gradients of the readable Decoder, and the gradient noise scale.

An "example" is one training window of `context` characters; its loss is the mean
over the window's positions, as in a batch of one. The gradients come flat, in the
Decoder's named_parameters() order (the layout of model/stacked.py):

    g = per_example_grads(model, x, y)       # (N, P)
    noise = noise_scale(g)                    # tr(Σ), |G|² and B_simple = tr(Σ) / |G|²

B_simple is McCandlish et al.'s simple noise scale (arXiv:1812.06162): the batch
size, in examples, at which the gradient's noise and its signal are about equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.func import functional_call, grad, vmap

from model.decoder import Decoder, cross_entropy


def per_example_grads(model: Decoder, x: torch.Tensor, y: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """The gradient of each window's mean loss, (N, P) float32, for windows x, y (N, T).

    The model is not changed and its .grad fields are not touched."""
    params = {k: v.detach() for k, v in model.named_parameters()}  # tied weights once, as the layout has them

    def window_loss(p: dict[str, torch.Tensor], xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
        logits = functional_call(model, p, (xi[None],))  # (1, T, V)
        return cross_entropy(logits, yi[None], model.cfg.z_loss)

    # #region per-window
    one = vmap(grad(window_loss), in_dims=(None, 0, 0))  # grad of one window's loss, mapped over windows
    rows = []
    for start in range(0, len(x), chunk):
        g = one(params, x[start : start + chunk], y[start : start + chunk])
        rows.append(torch.cat([g[k].reshape(g[k].shape[0], -1) for k in params], dim=1))
    # #endregion per-window
    return torch.cat(rows)


@dataclass(frozen=True)
class NoiseScale:
    """Unbiased estimates from N per-example gradients g_i with mean ḡ."""

    trace_sigma: float  # tr(Σ) = Σ_i |g_i - ḡ|² / (N - 1): the per-example gradient's total variance
    grad_sq: float  # |G|² = |ḡ|² - tr(Σ) / N: the true gradient's squared norm
    n: int

    @property
    def b_simple(self) -> float:
        """tr(Σ) / |G|², in examples (inf when |G|² is not positive)."""
        return self.trace_sigma / self.grad_sq if self.grad_sq > 0 else float("inf")


def noise_scale(g: torch.Tensor) -> NoiseScale:
    """tr(Σ), |G|² and B_simple from per-example gradients g (N, P), N >= 2, in float64."""
    g = g.double()
    n = g.shape[0]
    if n < 2:
        raise ValueError(f"need at least two per-example gradients, got {n}")
    # #region noise-scale
    # ḡ: the batch gradient of N windows
    mean = g.mean(dim=0)
    # tr(Σ): the summed variance of one window's gradient
    trace = float((g - mean).square().sum()) / (n - 1)
    # |G|²: |ḡ|² less the noise it carries
    grad_sq = float(mean.square().sum()) - trace / n
    # #endregion noise-scale
    return NoiseScale(trace_sigma=trace, grad_sq=grad_sq, n=n)
