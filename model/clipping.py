"""Global-norm clipping read off recorded gradient norms: what deck 07's live slider shows.

    clip_summary(norms, 1.0)    # ClipSummary(clipped=..., share=..., mean_scale=...)

A step is clipped when model.optim.clip_ would scale it: by threshold / (norm + 1e-6), when that is
below 1; the summary counts those steps and the mean factor they are scaled by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NORM_EPS = 1e-6  # model.optim.clip_ divides by norm + this


@dataclass(frozen=True)
class ClipSummary:
    clipped: int  # steps whose norm exceeds the threshold
    share: float  # clipped / steps (0 for no steps)
    mean_scale: float  # mean of threshold / norm over the clipped steps (1 when none is clipped)
    largest: float  # the largest norm


def clip_summary(norms: Sequence[float], threshold: float) -> ClipSummary:
    """How many of the recorded norms a threshold clips, and by how much on average."""
    if not threshold > 0:
        raise ValueError(f"the threshold must be positive, got {threshold}")
    scales = [threshold / (n + NORM_EPS) for n in norms]
    over = [s for s in scales if s < 1.0]
    mean = sum(over) / len(over) if over else 1.0
    return ClipSummary(len(over), len(over) / len(norms) if norms else 0.0, mean, max(norms, default=0.0))
