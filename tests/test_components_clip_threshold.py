"""components/clip-threshold.js in a blank Chromium page: what it counts equals model/clipping.py's
clip_summary, on synthetic norms and on the recorded norms of ch07.bad_batch, it honours print-state,
its slider moves the threshold, and the keys it uses do not reach reveal.js."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from model.clipping import clip_summary
from tests.component_page import component_page

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "results" / "runs" / "ch07.bad_batch.json"
THRESHOLDS = (0.01, 0.1, 0.25, 0.5, 0.999999, 1.0, 2.0, 10.0)


@pytest.fixture(scope="module")
def page():
    with component_page("clip-threshold") as page:
        yield page


def _norms() -> list[list[list[float]]]:
    return json.loads(RUN.read_text(encoding="utf-8"))["series"]["all_norms"]


def _js(page, norms, threshold) -> dict:
    return page.evaluate("([n, t]) => customElements.get('clip-threshold').summary(n, t)", [list(norms), threshold])


def _same(js: dict, norms, threshold) -> None:
    py = clip_summary(list(norms), threshold)
    assert js["clipped"] == py.clipped
    assert js["share"] == pytest.approx(py.share, rel=1e-15, abs=0)
    assert js["meanScale"] == pytest.approx(py.mean_scale, rel=1e-12)
    assert js["largest"] == py.largest


@pytest.mark.browser
def test_summary_equals_python_on_synthetic_norms(page):
    rng = np.random.default_rng(0)
    cases = [rng.lognormal(-1.0, 1.0, 500).tolist(), [1.0, 1.0 - 1e-6, 1.0 - 2e-6, 5.0], [0.3] * 10, []]
    for norms in cases:
        for t in THRESHOLDS:
            _same(_js(page, norms, t), norms, t)
    # the boundary is clip_'s: norm + 1e-6 above the threshold, so a norm equal to it is clipped
    assert _js(page, [1.0], 1.0)["clipped"] == 1 and clip_summary([1.0], 1.0).clipped == 1


@pytest.mark.browser
def test_summary_equals_python_on_the_recorded_norms(page):
    all_norms = _norms()
    for by_seed in all_norms:
        for norms in by_seed:
            for t in THRESHOLDS:
                _same(_js(page, norms, t), norms, t)


def _mount(page, attrs: str) -> None:
    record = {"series": {"all_norms": _norms()}}
    page.evaluate("r => { window.SLIDEGEN_RUNS = { 'ch07.bad_batch': r }; }", record)
    page.evaluate(
        "html => { document.body.innerHTML = html; }",
        f'<clip-threshold run="ch07.bad_batch" alt="slider" {attrs}></clip-threshold>',
    )


@pytest.mark.browser
def test_the_element_reads_the_run_and_honours_print_state(page):
    _mount(page, 'rate="1" seed="2" threshold="1" print-state="threshold=0.25"')
    data = page.evaluate("() => ({...document.querySelector('clip-threshold').dataset})")
    norms = _norms()[1][2]
    py = clip_summary(norms, 0.25)
    assert float(data["threshold"]) == 0.25
    assert int(data["clipped"]) == py.clipped
    text = page.inner_text("clip-threshold .ct-readout")
    assert f"clips {py.clipped} of {len(norms)} steps" in text
    assert page.evaluate("() => document.querySelectorAll('clip-threshold .ct-dot').length") == py.clipped


@pytest.mark.browser
def test_the_slider_moves_the_threshold_and_keeps_its_keys(page):
    _mount(page, 'threshold="1" print-state="threshold=1"')  # as a deck writes it: the slider overrides print-state
    seen = page.evaluate(
        """() => {
        const el = document.querySelector('clip-threshold'), slider = el.querySelector('.ct-slider');
        let leaked = 0;
        document.addEventListener('keydown', () => { leaked += 1; });
        slider.value = '-1';
        slider.dispatchEvent(new Event('input'));
        slider.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
        return {threshold: el.dataset.threshold, clipped: el.dataset.clipped, leaked};
    }"""
    )
    norms = _norms()[0][0]
    assert float(seen["threshold"]) == pytest.approx(0.1)
    assert int(seen["clipped"]) == clip_summary(norms, 0.1).clipped
    assert seen["leaked"] == 0
