"""components/rounding-calculator.js in a blank Chromium page: its roundings equal torch's casts
(``torch.tensor(x).to(dtype)``; TF32 against a rounding of FP32's bits done here) on thousands of values,
ties, subnormals, values past each format's maximum, E4M3's saturation and E5M2's inf among them; its bit
fields equal the bits torch stores; print-state sets the picture; the keyboard drives it and reveal.js
never sees the keys."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model import formats as fm
from tests.component_page import component_page

DTYPES = {"FP32": torch.float32, "BF16": torch.bfloat16, "FP16": torch.float16,
          "E4M3": torch.float8_e4m3fn, "E5M2": torch.float8_e5m2}  # fmt: skip
INTS = {32: torch.int32, 16: torch.int16, 8: torch.uint8}


def values() -> list[float]:
    """Random magnitudes over 18 decades, then for each format: ties between neighbours (normal and
    subnormal), the largest value, the tie above it and values past it, and the specials."""
    rng = np.random.default_rng(38)
    out = list(rng.choice([-1.0, 1.0], 3000) * 10.0 ** rng.uniform(-12, 6, 3000))
    for f in fm.FORMATS:
        for e in (f.emin - 1, f.emin, 0, 3, f.emax):  # below emin: the subnormal spacing
            q = 2.0 ** (max(e, f.emin) - f.man_bits)
            base = 2.0 ** max(e, f.emin) if e >= f.emin else 0.0
            for k in (0, 1, 2, 3, 6, 7):
                out += [base + (k + 0.5) * q, -(base + (k + 0.5) * q), base + (k + 0.25) * q, base + (k + 0.75) * q]
        spacing = 2.0 ** (f.emax - f.man_bits)
        out += [f.max, f.max + spacing / 2, f.max + spacing / 2 * 1.001, f.max + spacing / 2 * 0.999, 2 * f.max,
                -2 * f.max, f.max * 1e3, f.min_subnormal, f.min_subnormal / 2, f.min_subnormal * 0.51,
                f.min_subnormal * 1.5, f.min_normal, f.min_normal * (1 - 2.0**-12)]  # fmt: skip
    out += [0.0, -0.0, math.inf, -math.inf, 0.1, 1 / 3, 65504.0, 65520.0, 3.5e38, 1e-50, 448.0, 464.0, 480.0]
    return [v for v in out if not (math.isfinite(v) and abs(v) > 1.7e308)]


def tf32(x32: torch.Tensor) -> torch.Tensor:
    """FP32 values rounded to 10 mantissa bits, ties to even, on their bit patterns."""
    b = x32.view(torch.int32).to(torch.int64)
    lsb = (b >> 13) & 1
    r = ((b + 0xFFF + lsb) & ~0x1FFF).to(torch.int32)
    finite = torch.isfinite(x32)
    return torch.where(finite, r.view(torch.float32), x32)


def reference(xs: list[float]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Per format: torch's cast of every value (as float64), and its stored bits (None for TF32)."""
    x32 = torch.tensor(xs, dtype=torch.float64).to(torch.float32)  # what torch.tensor(x) holds
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {"TF32": (tf32(x32).double().numpy(), None)}
    for name, dtype in DTYPES.items():
        c = x32.to(dtype)
        bits = c.view(INTS[fm.BY_NAME[name].bits]).to(torch.int64) & (2 ** fm.BY_NAME[name].bits - 1)
        out[name] = (c.double().numpy(), bits.numpy())
    return out


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.fixture(scope="module")
def page():
    with component_page("rounding-calculator") as p:
        yield p


@pytest.mark.browser
def test_roundings_and_bits_equal_torch_casts(page):
    xs = values()
    assert len(xs) > 3000
    ref = reference(xs)
    names = [f.name for f in fm.FORMATS]
    got = page.evaluate(
        "([xs, names]) => names.map(n => xs.map(x => customElements.get('rounding-calculator').cast(x, n)))",
        [xs, names],
    )
    for name, rows in zip(names, got, strict=True):
        want, stored = ref[name]
        f = fm.BY_NAME[name]
        bad = [(x, r["value"], w) for x, r, w in zip(xs, rows, want, strict=True) if not same(r["value"], float(w))]
        assert not bad, f"{name}: {len(bad)} values differ from torch, e.g. {bad[:3]}"
        if stored is None:
            continue
        for x, r, b in zip(xs, rows, stored, strict=True):
            if math.isnan(r["value"]):
                continue  # many NaN patterns
            code = (r["sign"] << (f.bits - 1)) | (r["exponent"] << f.man_bits) | r["mantissa"]
            assert code == int(b), f"{name}: {x!r} gives bits {code:b}, torch stores {int(b):b}"


@pytest.mark.browser
def test_the_python_module_agrees_and_the_check_can_fail(page):
    """model/formats.py's cast is the same function; a format one mantissa bit short differs from torch."""
    xs = values()
    ref = reference(xs)
    for name in ref:
        mine = fm.cast(np.array(xs), fm.BY_NAME[name])
        assert all(same(float(a), float(b)) for a, b in zip(mine, ref[name][0], strict=True)), name
    short = fm.Format("BF16", 8, 6)
    assert not all(same(float(a), float(b)) for a, b in zip(fm.cast(np.array(xs), short), ref["BF16"][0], strict=True))
    got = page.evaluate("x => customElements.get('rounding-calculator').roundTo(x, 'BF16')", 1 + 2**-8)
    assert got == 1.0  # a tie between 1 and 1 + 2^-7 goes to the even mantissa


@pytest.mark.browser
def test_the_table_shows_overflow_saturation_and_flush(page):
    page.evaluate("() => { document.body.innerHTML = '<rounding-calculator value=\"70000\"></rounding-calculator>'; }")
    status = {n: page.text_content(f"tr[data-format='{n}'] .rc-status") for n in ("FP16", "BF16", "E4M3", "E5M2")}
    assert status == {"FP16": "overflow: inf", "BF16": "rounded", "E4M3": "saturated", "E5M2": "overflow: inf"}
    assert page.text_content("tr[data-format='E4M3'] .rc-value") == "448"
    assert page.text_content("tr[data-format='FP16'] .rc-bits").replace(" ", "") == "0" + "11111" + "0" * 10
    page.evaluate("() => document.querySelector('rounding-calculator').setAttribute('value', '1e-8')")
    assert page.text_content("tr[data-format='FP16'] .rc-status") == "flushed to 0"
    assert page.text_content("tr[data-format='BF16'] .rc-status") == "rounded"
    page.evaluate("() => document.querySelector('rounding-calculator').setAttribute('value', '3e-6')")
    assert page.text_content("tr[data-format='FP16'] .rc-status") == "subnormal"


@pytest.mark.browser
def test_print_state_sets_the_picture(page):
    page.evaluate(
        '() => { document.body.innerHTML = \'<rounding-calculator value="0.1" print-state="value=70000">'
        "</rounding-calculator>'; }"
    )
    assert page.get_attribute("rounding-calculator", "data-value") == "70000"
    assert page.input_value("rounding-calculator input[type='text']") == "70000"


@pytest.mark.browser
def test_keyboard_drives_it_and_reveal_never_sees_the_keys(page):
    page.evaluate(
        "() => { document.body.innerHTML = '<rounding-calculator></rounding-calculator>';"
        " window.seen = 0; document.addEventListener('keydown', () => { window.seen += 1; }); }"
    )
    box = page.locator("rounding-calculator input[type='text']")
    box.click()
    box.press("Control+a")
    box.type("65520")
    assert page.text_content("tr[data-format='FP16'] .rc-value") == "inf"
    slider = page.locator("rounding-calculator input[type='range']")
    slider.focus()
    before = float(page.get_attribute("rounding-calculator", "data-value"))
    for _ in range(5):
        slider.press("ArrowRight")
    after = float(page.get_attribute("rounding-calculator", "data-value"))
    assert after > before
    assert page.evaluate("() => window.seen") == 0
