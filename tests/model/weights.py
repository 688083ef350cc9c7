"""Test weights: a Decoder in float64 whose weights are far from their tiny initial values."""

from __future__ import annotations

import torch

from model.decoder import Decoder, ModelConfig


def perturbed(cfg: ModelConfig) -> Decoder:
    """The Decoder of ``cfg`` (seed 0) in float64, every weight redrawn from N(0, 0.3), so that
    differences between implementations are not hidden by near-zero activations."""
    torch.manual_seed(0)
    model = Decoder(cfg).double()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    return model
