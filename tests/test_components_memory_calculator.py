"""components/memory-calculator.js in a blank Chromium page: its bytes equal model/memory.py's on a grid of
inputs (the expected values computed here, in Python), its defaults are LLaMA-7B's, it honours print-state,
and its controls work from the keyboard without letting reveal.js see the keys."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from model import memory as mm
from slidegen.write.pdf import CHROMIUM_ARGS
from tests import needs

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "components" / "memory-calculator.js"
STYLE = ROOT / "components" / "memory-calculator.css"

SHAPES = [  # (layers, hidden, heads, seq, batch, vocab, ffn, mlp, dropout)
    (32, 4096, 32, 2048, 1, 32000, 11008, "swiglu", False),  # LLaMA-7B
    (32, 4096, 32, 2048, 1, 32000, 16384, "gelu", True),  # the formula's shape
    (48, 1600, 25, 1024, 4, 50257, 6400, "gelu", True),  # GPT-2 XL
    (1, 16, 2, 16, 32, 64, 64, "gelu", False),  # the toy Decoder's shape
    (80, 8192, 64, 4096, 2, 128256, 28672, "swiglu", False),
    (7, 130, 5, 333, 3, 1001, 517, "swiglu", True),  # nothing round
]
SETTINGS = list(itertools.product(mm.PRECISIONS, mm.OPTIMISERS, mm.CHECKPOINTING, ((1, 0), (8, 1), (64, 2), (64, 3))))


@pytest.fixture(scope="module")
def browser():
    executable = needs.chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A fresh page per test (a custom element is defined once per page), failing on any page error."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!doctype html><html><body></body></html>")
    page.add_style_tag(path=str(STYLE))
    page.add_script_tag(path=str(SCRIPT))
    yield page
    assert errors == []
    page.close()


def load(page, body: str) -> None:
    """Put ``body`` in the page, where the component is already defined: the elements upgrade on insertion."""
    page.evaluate("html => { document.body.innerHTML = html; }", body)


def _setup(shape, setting) -> mm.Setup:
    layers, hidden, heads, seq, batch, vocab, ffn, mlp, dropout = shape
    precision, optimiser, checkpointing, (dp, zero) = setting
    return mm.Setup(layers=layers, hidden=hidden, heads=heads, seq=seq, micro_batch=batch, vocab=vocab, ffn=ffn,
                    mlp=mlp, dropout=dropout, precision=precision, optimiser=optimiser, checkpointing=checkpointing,
                    data_parallel=dp, zero=zero)  # fmt: skip


def _js_config(su: mm.Setup) -> dict:
    return {"layers": su.layers, "hidden": su.hidden, "heads": su.heads, "seq": su.seq, "batch": su.micro_batch,
            "vocab": su.vocab, "ffn": su.f, "mlp": su.mlp, "dropout": su.dropout, "normGains": su.norm_gains,
            "precision": su.precision, "optimiser": su.optimiser, "checkpointing": su.checkpointing,
            "dp": su.data_parallel, "zero": su.zero}  # fmt: skip


@pytest.mark.browser
def test_bytes_equal_model_memory_on_a_grid(page):
    setups = [_setup(shape, setting) for shape in SHAPES for setting in SETTINGS]
    got = page.evaluate("cs => cs.map(c => customElements.get('memory-calculator').compute(c))",
                        [_js_config(su) for su in setups])  # fmt: skip
    assert len(got) == len(setups) == len(SHAPES) * 72
    worst = 0.0
    for su, js in zip(setups, got, strict=True):
        py = mm.training_memory(su)
        formula = mm.training_memory(mm.as_formula(su)).activations
        want = {"params": py.params, "grads": py.grads, "optimiser": py.optimiser, "activations": py.activations,
                "nParams": py.n_params, "formulaActivations": formula, "total": py.total}  # fmt: skip
        for key, value in want.items():
            worst = max(worst, abs(js[key] - value) / max(abs(value), 1.0))
    assert worst <= 1e-12, worst


@pytest.mark.browser
def test_a_wrong_answer_would_be_caught(page):
    """The grid's comparison can fail: a calculator one layer short differs."""
    su = _setup(SHAPES[0], SETTINGS[0])
    js = page.evaluate("c => customElements.get('memory-calculator').compute(c)", _js_config(replace(su, layers=31)))
    assert abs(js["activations"] - mm.training_memory(su).activations) > 1e6


@pytest.mark.browser
def test_defaults_are_llama_7b_and_print_state_sets_the_picture(page):
    load(
        page,
        '<memory-calculator alt="x"></memory-calculator>'
        '<memory-calculator id="p" print-state="checkpointing=full; zero=3; dp=64"></memory-calculator>',
    )
    llama = mm.training_memory(mm.LLAMA_7B)
    total = float(page.get_attribute("memory-calculator", "data-total"))
    assert abs(total - llama.total) <= 1e-12 * llama.total
    assert page.text_content("memory-calculator .mc-readout") == "6.74B parameters: 125 GB per device"
    shown = mm.training_memory(replace(mm.LLAMA_7B, checkpointing="full", zero=3, data_parallel=64))
    assert abs(float(page.get_attribute("#p", "data-total")) - shown.total) <= 1e-12 * shown.total
    assert page.input_value("#p select[aria-label='recompute']") == "full"


@pytest.mark.browser
def test_keyboard_changes_the_bar_and_reveal_never_sees_the_keys(page):
    load(page, "<memory-calculator></memory-calculator>")
    page.evaluate("window.seen = 0; document.addEventListener('keydown', () => window.seen++)")
    page.focus("memory-calculator select[aria-label='recompute']")
    page.keyboard.press("ArrowDown")  # none -> selective
    assert page.get_attribute("memory-calculator", "checkpointing") == "selective"
    want = mm.training_memory(replace(mm.LLAMA_7B, checkpointing="selective"))
    assert abs(float(page.get_attribute("memory-calculator", "data-activations")) - want.activations) < 1
    page.focus("memory-calculator input[aria-label='micro-batch']")
    page.keyboard.press("ArrowUp")  # 1 -> 2
    assert page.get_attribute("memory-calculator", "batch") == "2"
    want = mm.training_memory(replace(mm.LLAMA_7B, checkpointing="selective", micro_batch=2))
    assert abs(float(page.get_attribute("memory-calculator", "data-total")) - want.total) <= 1e-12 * want.total
    assert page.evaluate("window.seen") == 0
    heights = page.evaluate("[...document.querySelectorAll('memory-calculator .mc-seg')]"
                            ".map(r => Number(r.getAttribute('height')))")  # fmt: skip
    assert len(heights) == 4 and all(h > 0 for h in heights)


@pytest.mark.browser
def test_text_meets_the_type_floor(page):
    load(page, '<div style="width:1180px"><memory-calculator></memory-calculator></div>')
    sizes = page.evaluate("[...document.querySelectorAll('memory-calculator span, memory-calculator select, "
                          "memory-calculator input, memory-calculator output')]"
                          ".map(e => parseFloat(getComputedStyle(e).fontSize))")  # fmt: skip
    assert sizes and min(sizes) >= 24
