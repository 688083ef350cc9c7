"""model/precision.py: flush shares, the dynamic scaler's rule, lost updates, FP8 scaling, accumulation and
gradient quantisation, each on a case whose answer is known."""

from __future__ import annotations

import torch

from model import precision as pr


def test_flush_and_scale():
    g = torch.tensor([1e-9, 1e-3, 0.0, -1e-9])
    assert pr.flushed_share(g, torch.float16) == 2 / 3
    assert pr.flushed_share(g, torch.float16, 2.0**12) == 0.0
    assert pr.overflows(torch.tensor([1.0]), torch.float16, 2.0**17)


def test_dynamic_scaler_backs_off_and_grows():
    s = pr.DynamicScaler(scale=2.0**16, interval=2)
    big = torch.tensor([2.0])
    assert s.update(big, torch.float16) == 2.0**16 and s.scale == 2.0**15 and s.skipped == 1
    small = torch.tensor([1e-3])
    s.update(small, torch.float16)
    s.update(small, torch.float16)
    assert s.scale == 2.0**16


def test_lost_updates_in_bf16():
    w = torch.tensor([1.0, 1.0, 1.0])
    dw = torch.tensor([1e-3, 1e-2, 0.0])  # BF16's half-ulp at 1 is 2^-8 = 0.0039
    assert pr.lost_update_share(w, dw, torch.bfloat16) == 0.5


def test_fp8_scaling():
    x = torch.tensor([[1e-4, 2e-4, 3e-4, 4e-4], [1000.0, 1.0, 2.0, 3.0]])
    none = pr.fp8_cast(x, "none")
    assert none.flushed == 4 and none.clipped == 1  # all under half of 2^-9; 1000 past 464
    tile = pr.fp8_cast(x, "tile", (1, 4))
    assert tile.flushed == 0 and tile.clipped == 0
    tensor = pr.fp8_cast(x, "tensor")
    assert tensor.clipped == 0 and tensor.flushed == 4  # one scale (448/1000): the small row still flushes
    assert pr.relative_error(tile.value, x) < pr.relative_error(tensor.value, x)


def test_accumulation_swamps_in_bf16():
    p = torch.full((1, 1024), 1.0)
    assert float(pr.accumulate(p, torch.float32)[0]) == 1024.0
    assert float(pr.accumulate(p, torch.bfloat16)[0]) == 256.0  # 256 + 1 rounds back to 256 in BF16
    assert float(pr.accumulate(p, torch.bfloat16, 128)[0]) == 1024.0


def test_quantise():
    g = torch.linspace(-1, 1, 1001)
    q = pr.quantise(g, 4, stochastic=False)
    assert len(torch.unique(q)) == 15
    gen = torch.Generator().manual_seed(0)
    x = torch.full((20000,), 0.3) / 7 * 7
    x[0] = 1.0  # the full scale
    sr = pr.quantise(x, 4, stochastic=True, generator=gen)
    assert abs(float(sr[1:].mean()) - 0.3) < 0.01  # unbiased; nearest would give 2/7 = 0.286
    assert abs(float(pr.quantise(x, 4, stochastic=False)[1:].mean()) - 0.3) > 0.01
