"""components/pipeline-schedule.js in a blank Chromium page: its bubble, idle over work, peak in flight
and every op's times equal model/pipeline.py's simulator on a grid of settings; it renders synchronously,
honours print-state, and its controls and keys work without letting reveal.js see the keys it uses."""

from __future__ import annotations

import itertools

import pytest

from model import pipeline as pl
from tests.component_page import component_page

GRID = [
    (name, p, m, v, ratio)
    for name, (p, m), ratio in itertools.product(
        ("gpipe", "1f1b", "interleaved"), itertools.product((1, 2, 3, 4, 8), (1, 2, 4, 8, 12, 16)), (1.0, 2.0, 3.0)
    )
    for v in ((1, 2, 3, 4) if name == "interleaved" else (1,))
    if name != "interleaved" or m % p == 0
]


@pytest.fixture(scope="module")
def page():
    with component_page("pipeline-schedule") as page:
        yield page


def test_the_component_equals_the_python_simulator_on_a_grid(page):
    got = page.evaluate(
        """grid => grid.map(([schedule, p, m, v, ratio]) => {
            const s = customElements.get('pipeline-schedule').simulate({schedule, p, m, v, ratio});
            return [s.bubble, s.bubbleOverWork, s.peakInFlight, s.makespan,
                    s.ops.map(o => [o.device, o.kind, o.mb, o.chunk, o.start, o.end])];
        })""",
        GRID,
    )
    assert len(got) == len(GRID) > 300
    for (name, p, m, v, ratio), (bubble, over, peak, makespan, ops) in zip(GRID, got, strict=True):
        py = pl.simulate(p, m, name, v, ratio)
        assert abs(bubble - py.bubble) <= 1e-12 and abs(over - py.bubble_over_work) <= 1e-12
        assert peak == py.peak_in_flight and abs(makespan - py.makespan) <= 1e-12
        assert [(d, k, mb, c) for d, k, mb, c, _, _ in ops] == [(o.device, o.kind, o.mb, o.chunk) for o in py.ops]
        assert max(abs(s - o.start) + abs(e - o.end) for (*_, s, e), o in zip(ops, py.ops, strict=True)) <= 1e-12


def test_it_renders_synchronously_and_print_state_sets_the_picture(page):
    state = page.evaluate(
        """() => {
        const e = document.createElement('pipeline-schedule');
        e.setAttribute('alt', 'a pipeline'); e.setAttribute('print-state', 'schedule=gpipe; stages=4; microbatches=8');
        document.body.appendChild(e);
        const out = {bubble: Number(e.dataset.bubble), peak: Number(e.dataset.peak),
                     ops: e.querySelectorAll('rect.ps-op').length, rows: e.querySelectorAll('rect.ps-idle').length,
                     readout: e.querySelector('.ps-readout').textContent, label: e.getAttribute('aria-label')};
        e.remove();
        return out;
    }"""
    )
    want = pl.simulate(4, 8, "gpipe")
    assert state["bubble"] == pytest.approx(want.bubble, abs=1e-12) and state["peak"] == 8
    assert state["ops"] == 2 * 4 * 8 + 2 and state["rows"] == 4 + 1  # + the legend's swatches
    assert state["readout"] == "GPipe: idle 27.3% of each GPU's time · at most 8 micro-batches' activations held"
    assert state["label"] == "a pipeline"


def test_controls_change_the_schedule_and_a_bad_setting_says_why(page):
    got = page.evaluate(
        """() => {
        const e = document.createElement('pipeline-schedule');
        e.setAttribute('stages', '4'); e.setAttribute('microbatches', '8');
        document.body.appendChild(e);
        let leaked = 0;
        const spy = () => { leaked += 1; };
        document.addEventListener('keydown', spy);
        const select = e.querySelector('select');
        select.value = 'interleaved'; select.dispatchEvent(new Event('change'));
        const interleaved = Number(e.dataset.bubble);
        const m = e.querySelector("input[aria-label='micro-batches m']");
        m.value = '6'; m.dispatchEvent(new Event('input'));
        const bad = e.querySelector('.ps-readout').textContent;
        m.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp', bubbles: true}));
        e.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: false}));
        document.dispatchEvent(new KeyboardEvent('keydown', {key: 'x'}));
        document.removeEventListener('keydown', spy);
        const vDisabled = e.querySelector("input[aria-label='chunks v']").disabled;
        e.remove();
        return {interleaved, bad, leaked, vDisabled, schedule: e.getAttribute('schedule')};
    }"""
    )
    assert got["interleaved"] == pytest.approx(pl.simulate(4, 8, "interleaved", 2).bubble, abs=1e-12)
    assert got["bad"] == "interleaving needs m a multiple of p (4)"
    assert got["leaked"] == 1 and got["vDisabled"] is False and got["schedule"] == "interleaved"
