"""model/formats.py: the formats table from the bit layouts equals torch.finfo and the published values,
and its rounding equals torch's casts (ties, subnormals, past the maximum)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model import formats as fm

FINFO = {"FP32": torch.float32, "BF16": torch.bfloat16, "FP16": torch.float16,
         "E4M3": torch.float8_e4m3fn, "E5M2": torch.float8_e5m2}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FINFO))
def test_table_equals_torch_finfo(name):
    f, info = fm.BY_NAME[name], torch.finfo(FINFO[name])
    assert f.max == info.max
    assert f.min_normal == info.smallest_normal
    assert f.eps == info.eps
    assert f.bits == info.bits


def test_published_values_and_tf32():
    """facts.md S08.formats: 65,504, 448, 57,344; TF32 keeps FP32's range with FP16's epsilon."""
    assert (fm.FP16.max, fm.E4M3.max, fm.E5M2.max) == (65504.0, 448.0, 57344.0)
    assert fm.E4M3.min_normal == 2.0**-6 and fm.E5M2.min_normal == fm.FP16.min_normal
    assert fm.TF32.min_normal == fm.FP32.min_normal and fm.TF32.eps == fm.FP16.eps
    assert fm.FP16.min_subnormal == 2.0**-24
    assert math.isclose(fm.BF16.digits, 8 * math.log10(2))


@pytest.mark.parametrize("name", sorted(FINFO))
def test_cast_equals_torch(name):
    rng = np.random.default_rng(0)
    f = fm.BY_NAME[name]
    x = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.uniform(-10, 6, 4000),
                        [f.max * 1.01, f.max * 4, -f.max * 4, f.min_subnormal / 2, f.min_subnormal * 0.75,
                         1 + 2.0 ** -(f.man_bits + 1), 1 + 3 * 2.0 ** -(f.man_bits + 1), math.inf]])  # fmt: skip
    want = torch.tensor(x).float().to(FINFO[name]).double().numpy()
    got = fm.cast(x, f)
    assert np.array_equal(got, want, equal_nan=True)


def test_e4m3_saturates_and_e5m2_overflows():
    assert fm.cast(1e6, fm.E4M3) == 448.0 and fm.cast(-math.inf, fm.E4M3) == -448.0
    assert fm.cast(1e6, fm.E5M2) == math.inf
    assert fm.cast(1 + 2.0**-8, fm.BF16) == 1.0  # a tie goes to the even mantissa
    assert fm.cast(1 + 3 * 2.0**-8, fm.BF16) == 1 + 2 * 2.0**-7


def test_fields_encode_the_value():
    for f in (fm.BF16, fm.FP16, fm.E4M3):
        for v in (1.0, -2.5, f.min_subnormal, f.min_normal, f.max):
            b = fm.fields(v, f)
            if b.exponent == 0:
                back = b.mantissa * f.min_subnormal
            else:
                back = (1 + b.mantissa / 2**f.man_bits) * 2.0 ** (b.exponent - f.bias)
            assert back * (-1) ** b.sign == v
