"""Floating-point formats from their bit layouts: the numbers deck 08's table shows, and rounding.

A binary format with ``e`` exponent bits and ``m`` mantissa (fraction) bits, bias 2^(e-1) - 1:

- IEEE-like (FP32, TF32, BF16, FP16, E5M2): the top exponent code is reserved for inf and NaN,
  so the largest finite value is (2 - 2^-m) * 2^(2^e - 2 - bias);
- E4M3 in its "fn" variant (finite, NaN only): the top exponent code holds numbers too, except
  the all-ones mantissa, which is NaN; the largest finite value is (2 - 2^-(m-1)) * 2^(2^e - 1 - bias)
  = 448, and there is no infinity.

Every format has subnormals: below 2^(1 - bias) the spacing stays 2^(1 - bias - m).

``round_to(x, fmt)`` rounds float64 values to the nearest value of ``fmt`` (ties to even), the
way torch's casts do: past the largest finite value an IEEE-like format gives inf, while E4M3,
which has no inf, saturates at ±448 (torch's cast to float8_e4m3fn does; so does inf).
``cast(x, fmt)`` first rounds to FP32, as ``torch.tensor(x).to(dtype)`` does with a Python float.
components/rounding-calculator.js implements the same two functions; tests/model/test_formats.py
holds these against torch.finfo and torch's casts, and tests/test_components_rounding_calculator.py
holds the component against them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: 1 sign bit, ``exp_bits`` exponent bits, ``man_bits`` mantissa bits."""

    name: str
    exp_bits: int
    man_bits: int
    ieee: bool = True  # top exponent code reserved for inf/NaN; False: E4M3's finite-only "fn" layout

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @property
    def bias(self) -> int:
        return 2 ** (self.exp_bits - 1) - 1

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number."""
        top = 2**self.exp_bits - 1  # the all-ones exponent code
        return (top - 1 if self.ieee else top) - self.bias

    @property
    def max(self) -> float:
        """The largest finite value (E4M3: its all-ones mantissa at the top exponent is NaN)."""
        frac = 2.0 - 2.0 ** -(self.man_bits if self.ieee else self.man_bits - 1)
        return frac * 2.0**self.emax

    @property
    def min_normal(self) -> float:
        return 2.0**self.emin

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (self.emin - self.man_bits)

    @property
    def eps(self) -> float:
        """Machine epsilon: the gap between 1 and the next value up, 2^-m."""
        return 2.0**-self.man_bits

    @property
    def digits(self) -> float:
        """Decimal digits of precision: log10 of 2^(m+1), the significand's (with its hidden bit) range."""
        return (self.man_bits + 1) * math.log10(2.0)

    @property
    def has_inf(self) -> bool:
        return self.ieee


FP32 = Format("FP32", 8, 23)
TF32 = Format("TF32", 8, 10)
BF16 = Format("BF16", 8, 7)
FP16 = Format("FP16", 5, 10)
E4M3 = Format("E4M3", 4, 3, ieee=False)
E5M2 = Format("E5M2", 5, 2)
FORMATS: tuple[Format, ...] = (FP32, TF32, BF16, FP16, E4M3, E5M2)
BY_NAME = {f.name: f for f in FORMATS}

#: torch's dtype name for each format (TF32 is not a storage dtype: only a matmul mode).
TORCH_DTYPES = {
    "FP32": "float32",
    "BF16": "bfloat16",
    "FP16": "float16",
    "E4M3": "float8_e4m3fn",
    "E5M2": "float8_e5m2",
}


def round_to(x: np.ndarray | float, fmt: Format) -> np.ndarray:
    """``x`` (float64) rounded to the nearest value of ``fmt``, ties to even, as float64.

    Subnormals are kept (the spacing below the smallest normal stays 2^(emin - m)); a value that
    rounds past ``fmt.max`` becomes inf (IEEE-like) or saturates at ±max (E4M3, which has no inf);
    inf stays inf (E4M3: ±max); NaN stays NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    finite = np.isfinite(a) & (a > 0)
    safe = np.where(finite, a, 1.0)
    _, e = np.frexp(safe)  # safe = f * 2^e, f in [0.5, 1): the leading bit's exponent is e - 1
    quantum = np.ldexp(1.0, np.maximum(e - 1, fmt.emin) - fmt.man_bits)
    r = np.rint(safe / quantum) * quantum  # np.rint rounds half to even; safe / quantum is exact
    r = np.where(r > fmt.max, np.inf if fmt.ieee else fmt.max, r)
    out = np.where(finite, r, a)  # 0, inf and NaN pass through
    if not fmt.ieee:
        out = np.where(np.isinf(out), fmt.max, out)
    return np.copysign(out, x)  # the sign survives, -0 included


def cast(x: np.ndarray | float, fmt: Format) -> np.ndarray:
    """What ``torch.tensor(x).to(dtype)`` gives for a float64 ``x``: first FP32, then ``fmt``."""
    with np.errstate(over="ignore"):
        x32 = np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)
    return round_to(x32, fmt)


@dataclass(frozen=True)
class Fields:
    """A rounded value's bit fields: sign, the exponent code and the mantissa code, as integers."""

    sign: int
    exponent: int
    mantissa: int


def fields(value: float, fmt: Format) -> Fields:
    """The bit fields that encode ``value``, a value of ``fmt`` (as ``round_to`` returns it).

    inf has the all-ones exponent and a zero mantissa; NaN is written as the all-ones exponent
    and the all-ones mantissa (E4M3's one NaN pattern; IEEE formats have many).
    """
    sign = 1 if math.copysign(1.0, value) < 0 else 0
    a = abs(value)
    top = 2**fmt.exp_bits - 1
    if math.isnan(a):
        return Fields(sign, top, 2**fmt.man_bits - 1)
    if math.isinf(a):
        return Fields(sign, top, 0)
    if a < fmt.min_normal:
        return Fields(sign, 0, round(a / fmt.min_subnormal))
    e = math.frexp(a)[1] - 1
    return Fields(sign, e + fmt.bias, round((a / 2.0**e - 1.0) * 2**fmt.man_bits))
