"""Low-precision arithmetic: the casts deck 08 measures, on recorded tensors and (E4M3) inside the Decoder.

Everything here reads tensors and returns new ones (or numbers); nothing writes to its inputs.

- exponent histograms (where a tensor's values sit against a format's range);
- the share of entries a cast flushes to zero, with a loss scale, and a dynamic loss scaler run
  over a sequence of recorded gradients (torch.amp.GradScaler's rule);
- updates lost when weights are stored in a narrow format (w + dw rounds back to w);
- FP8 casts with no scaling, one scale per tensor or one per tile (DeepSeek-V3's 1x128 / 128x128);
- a long dot product accumulated in BF16 or FP32, against float64;
- gradients quantised to a few bits at a per-tensor full scale, rounded to nearest or stochastically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max  # 448
E4M3_SATURATES = E4M3_MAX + 16  # beyond 448 + half the top spacing (32) the cast saturates instead of rounding
FP8_SCALINGS = ("none", "tensor", "tile")
ACT_TILE = (1, 128)  # DeepSeek-V3's activation tiles: one scale per 128 values of a row
WEIGHT_TILE = (128, 128)  # and its weight blocks


def exponent_histogram(x: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    """Counts of floor(log2 |x|) over the nonzero entries, one bin per exponent lo..hi (ends clamp)."""
    a = x.detach().double().abs().flatten()
    a = a[a > 0]
    e = torch.floor(torch.log2(a)).clamp(lo, hi).long() - lo
    return torch.bincount(e, minlength=hi - lo + 1)


def flushed_share(x: torch.Tensor, dtype: torch.dtype, scale: float = 1.0) -> float:
    """Share of the nonzero entries of ``x`` that become 0 when ``x * scale`` is cast to ``dtype``."""
    nz = x != 0
    n = int(nz.sum())
    if n == 0:
        return 0.0
    return int(((x * scale).to(dtype) == 0)[nz].sum()) / n


def overflows(x: torch.Tensor, dtype: torch.dtype, scale: float = 1.0) -> bool:
    """True if any entry of ``x * scale`` is not finite once cast to ``dtype``."""
    return not bool(torch.isfinite((x * scale).to(dtype)).all())


@dataclass
class DynamicScaler:
    """torch.amp.GradScaler's rule: halve the scale (and skip the step) when the scaled gradients
    overflow; double it after ``interval`` steps in a row without an overflow."""

    scale: float = 2.0**16
    growth: float = 2.0
    backoff: float = 0.5
    interval: int = 2000
    good: int = 0  # steps since the last overflow
    skipped: int = 0

    def update(self, grad: torch.Tensor, dtype: torch.dtype) -> float:
        """The scale this step's gradient is cast with (then the rule moves the scale on)."""
        used = self.scale
        if overflows(grad, dtype, used):
            self.scale *= self.backoff
            self.good = 0
            self.skipped += 1
        else:
            self.good += 1
            if self.good == self.interval:
                self.scale *= self.growth
                self.good = 0
        return used


def lost_update_share(w: torch.Tensor, dw: torch.Tensor, dtype: torch.dtype) -> float:
    """Share of the nonzero updates ``dw`` that vanish when the weights are stored in ``dtype``:
    the stored weight w' = w in ``dtype``, and w' + dw rounds back to w'."""
    stored = w.to(dtype)
    moved = dw != 0
    n = int(moved.sum())
    if n == 0:
        return 0.0
    same = (stored.float() + dw).to(dtype) == stored
    return int(same[moved].sum()) / n


# --------------------------------------------------------------------------- FP8 with scaling


def _tiles(x: torch.Tensor, tile: tuple[int, int]) -> tuple[torch.Tensor, tuple[int, int]]:
    """x (R, C) viewed as (R/tr, tr, C/tc, tc) tiles; a tile larger than x's side covers all of it."""
    R, C = x.shape
    tr, tc = min(tile[0], R), min(tile[1], C)
    if R % tr or C % tc:
        raise ValueError(f"a {R}x{C} tensor does not split into {tr}x{tc} tiles")
    return x.reshape(R // tr, tr, C // tc, tc), (tr, tc)


@dataclass(frozen=True)
class Fp8Cast:
    """x cast to E4M3 and back to FP32 under one scaling rule, and what the cast lost."""

    value: torch.Tensor  # the dequantised tensor, FP32
    flushed: int  # nonzero entries that became 0
    clipped: int  # entries that saturate: past 464 once scaled (448 plus half the top spacing)
    nonzero: int


def _fp8_scale(x: torch.Tensor, scaling: str, tile: tuple[int, int]) -> torch.Tensor:
    """What each entry of a 2-D ``x`` is multiplied by before the E4M3 cast (its tile's max-abs -> 448)."""
    if scaling == "none":
        return torch.ones_like(x)
    if scaling == "tensor":
        amax = x.abs().max()
        return torch.full_like(x, E4M3_MAX / float(amax) if amax > 0 else 1.0)
    if scaling == "tile":
        t, _ = _tiles(x, tile)
        amax = t.abs().amax(dim=(1, 3), keepdim=True)
        s = torch.where(amax > 0, E4M3_MAX / amax, torch.ones_like(amax))
        return s.expand_as(t).reshape(x.shape)
    raise ValueError(f"scaling must be one of {FP8_SCALINGS}, got {scaling!r}")


def e4m3(x: torch.Tensor, scaling: str, tile: tuple[int, int] = ACT_TILE) -> torch.Tensor:
    """A 2-D ``x`` cast to E4M3 and back to FP32 under ``scaling`` (a new tensor, outside autograd)."""
    x = x.detach().float()
    scale = _fp8_scale(x, scaling, tile)
    return (x * scale).to(torch.float8_e4m3fn).float() / scale


def fp8_cast(x: torch.Tensor, scaling: str, tile: tuple[int, int] = ACT_TILE) -> Fp8Cast:
    """Cast a 2-D ``x`` to E4M3 and back, with scaling ``"none"``, ``"tensor"`` (one scale, the
    tensor's max-abs mapped to 448) or ``"tile"`` (one such scale per ``tile``), and count the losses."""
    x = x.detach().float()
    scaled = x * _fp8_scale(x, scaling, tile)
    q = e4m3(x, scaling, tile)
    nz = x != 0
    return Fp8Cast(
        value=q,
        flushed=int((nz & (q == 0)).sum()),
        clipped=int((scaled.abs() >= E4M3_SATURATES).sum()),
        nonzero=int(nz.sum()),
    )


def relative_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    """Frobenius norm of the difference over the exact tensor's norm."""
    return float(torch.linalg.norm((approx - exact).double()) / torch.linalg.norm(exact.double()))


# --------------------------------------------------------------------------- accumulation


def accumulate(products: torch.Tensor, dtype: torch.dtype, promote_every: int | None = None) -> torch.Tensor:
    """Sum each row of ``products`` (K, n) left to right, the running sum rounded to ``dtype`` after
    every addition. ``promote_every``: add each chunk of that many terms' low-precision partial sum
    into an FP32 total, as DeepSeek-V3 does every 128 elements. Returns (K,) float64."""
    K, n = products.shape
    step = promote_every or n
    total = torch.zeros(K, dtype=torch.float32)
    for start in range(0, n, step):
        acc = torch.zeros(K, dtype=dtype)
        for i in range(start, min(start + step, n)):
            acc = (acc.float() + products[:, i].float()).to(dtype)
        total = total + acc.float()
    return total.double()


# --------------------------------------------------------------------------- quantised gradients


def quantise(g: torch.Tensor, bits: int, stochastic: bool, generator: torch.Generator | None = None) -> torch.Tensor:
    """``g`` on a symmetric grid of 2^(bits-1) - 1 levels each side of 0, the full scale its max-abs
    (per tensor, so nothing clips); round to nearest, or stochastically (unbiased: E[q] = g)."""
    levels = 2 ** (bits - 1) - 1
    amax = float(g.abs().max())
    if amax == 0:
        return torch.zeros_like(g)
    step = amax / levels
    u = g / step
    if stochastic:
        low = torch.floor(u)
        up = torch.rand(u.shape, generator=generator, dtype=u.dtype) < (u - low)
        q = low + up.to(u.dtype)
    else:
        q = torch.round(u)
    return q * step


def log2_range(x: float) -> int:
    """floor(log2 x) for a positive x."""
    return math.floor(math.log2(x))
