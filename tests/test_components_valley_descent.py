"""components/valley-descent.js in a blank Chromium page: its trajectories and step counts equal
model/valley.py's within 1e-12, it renders its first state synchronously, honours print-state,
and its controls and keys work without letting reveal.js see the keys it uses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from model import valley as vl
from tests.component_page import component_page

CASES = [  # kind, valley (kappa, angle), settings, steps
    ("sgd", (100.0, 0.0), {"lr": 1.8}, 300),
    ("sgd", (1e4, 45.0), {"lr": 1.99}, 2000),
    ("sgd", (10.0, 30.0), {"lr": 2.3}, 200),  # diverging: compared while finite
    ("momentum", (100.0, 0.0), {"lr": 0.5, "beta": 0.8}, 300),
    ("momentum", (1e3, 45.0), {"lr": 1.8, "beta": 0.93}, 1000),
    ("adam", (100.0, 0.0), {"lr": 1.0, "beta1": 0.9, "beta2": 0.999}, 500),
    ("adam", (1e4, 45.0), {"lr": 0.9, "beta1": 0.9, "beta2": 0.999}, 1000),
    ("adam", (31.6227766, 17.0), {"lr": 0.05, "beta1": 0.5, "beta2": 0.9, "eps": 1e-6}, 400),
]


@pytest.fixture(scope="module")
def page():
    with component_page("valley-descent") as page:
        yield page


def _settings(kind: str, s: dict) -> vl.Settings:
    return vl.Settings(kind, **s)


@pytest.mark.parametrize("kind, valley, settings, steps", CASES)
def test_trajectories_equal_the_python_valleys(page, kind, valley, settings, steps):
    cfg = {"kappa": valley[0], "angle": valley[1], **settings}
    js = page.evaluate("([k, c, n]) => customElements.get('valley-descent').trajectory(k, c, n)", [kind, cfg, steps])
    py = vl.trajectory(vl.Valley(*valley), _settings(kind, settings), steps)
    js = np.array(js, dtype=float)
    assert js.shape == py.shape
    finite = np.isfinite(py).all(axis=1) & (np.abs(py) < 1e100).all(axis=1)
    assert finite.sum() > 10
    scale = np.maximum(1.0, np.abs(py[finite]))
    assert np.abs(js[finite] - py[finite]).max() / scale.max() <= 1e-12
    assert np.allclose(js[finite], py[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind, valley, settings, steps", CASES[:2] + CASES[3:5] + CASES[5:7])
def test_steps_to_tolerance_equal_the_python_count(page, kind, valley, settings, steps):
    cfg = {"kappa": valley[0], "angle": valley[1], **settings}
    n = page.evaluate(
        "([k, c]) => customElements.get('valley-descent').stepsToTolerance(k, c, 1e-6, 100000)", [kind, cfg]
    )
    want = float(vl.steps_to_tolerance(vl.Valley(*valley), _settings(kind, settings), 1e-6, 100000))
    assert (n is None and math.isnan(want)) or n == want


def test_it_renders_synchronously_and_print_state_shows_that_step(page):
    state = page.evaluate(
        """() => {
        const e = document.createElement('valley-descent');
        e.setAttribute('kappa', '100'); e.setAttribute('alt', 'a valley'); e.setAttribute('print-state', 'step=40');
        document.body.appendChild(e);
        const out = {step: e.querySelector('.nv-step').textContent,
                     points: e.querySelector('polyline.nv-sgd').getAttribute('points').split(' ').length,
                     contours: e.querySelectorAll('.nv-contour').length,
                     counts: [...e.querySelectorAll('.nv-count')].map(c => c.textContent)};
        e.remove();
        return out;
    }"""
    )
    assert state["step"] == "step 40" and state["points"] == 41 and state["contours"] == 7
    want = [
        vl.steps_to_tolerance(vl.Valley(100.0), s, 1e-6, 200000)
        for s in (vl.Settings("sgd", 1.8), vl.Settings("momentum", 0.5, beta=0.8), vl.Settings("adam", 1.0))
    ]
    assert state["counts"] == [f"{int(w):,}" for w in want]


def test_controls_step_reset_and_change_kappa_and_its_keys_do_not_reach_the_page(page):
    got = page.evaluate(
        """() => {
        const e = document.createElement('valley-descent');
        e.setAttribute('alt', 'a valley');
        document.body.appendChild(e);
        let leaked = 0;
        const spy = () => { leaked += 1; };
        document.addEventListener('keydown', spy);
        const [stepBtn, , resetBtn] = e.querySelectorAll('button');
        stepBtn.click(); stepBtn.click(); stepBtn.click();
        const afterSteps = e.querySelector('.nv-step').textContent;
        const root = e.querySelector('.nv-root');
        root.focus();
        root.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
        const afterKey = e.querySelector('.nv-step').textContent;
        root.dispatchEvent(new KeyboardEvent('keydown', {key: 'x', bubbles: true}));
        resetBtn.click();
        const afterReset = e.querySelector('.nv-step').textContent;
        const slider = e.querySelector('input[type=range]');
        slider.value = '3'; slider.dispatchEvent(new Event('input'));
        const kappa = e.getAttribute('kappa');
        document.removeEventListener('keydown', spy);
        const focusable = root.getAttribute('tabindex');
        e.remove();
        return {afterSteps, afterKey, afterReset, kappa, leaked, focusable};
    }"""
    )
    assert got == {
        "afterSteps": "step 3",
        "afterKey": "step 4",
        "afterReset": "step 0",
        "kappa": "1000",
        "leaked": 1,
        "focusable": "0",
    }
