"""components/ring-allreduce.js in a blank Chromium page: every step's chunks, bytes sent and vectors equal
model/ring.py's on a grid of p and n; each worker sends 2(p-1)/p·n·4 bytes when p divides n and every
vector ends as the sum; it renders synchronously, honours print-state, and its buttons and keys work
without letting reveal.js see the keys it uses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from model import ring
from tests.component_page import component_page

GRID = [(p, n) for p, n in itertools.product(range(2, 9), (2, 3, 7, 8, 12, 16, 24, 30, 64)) if n >= p]


@pytest.fixture(scope="module")
def page():
    with component_page("ring-allreduce") as page:
        yield page


def test_the_component_equals_the_python_ring_on_a_grid(page):
    got = page.evaluate(
        """grid => grid.map(([p, n]) => customElements.get('ring-allreduce').run(p, n))""",
        GRID,
    )
    assert len(got) == len(GRID) > 50
    divisible = 0
    for (p, n), js in zip(GRID, got, strict=True):
        vectors = ring.initial_vectors(p, n)
        py = ring.ring_allreduce(vectors)
        assert js["bounds"] == [list(b) for b in ring.chunk_bounds(n, p)]
        assert len(js["steps"]) == len(py) == 2 * (p - 1)
        for a, b in zip(js["steps"], py, strict=True):
            assert a["phase"] == b.phase
            assert a["transfers"] == [[t.src, t.dst, t.chunk, t.elements] for t in b.transfers]
            assert a["sent"] == list(b.sent)
            assert np.array_equal(np.array(a["vectors"]), np.array(b.vectors))
        total = np.sum(vectors, axis=0)
        assert all(np.array_equal(np.array(v), total) for v in js["steps"][-1]["vectors"])
        assert all(h == [p] * p for h in js["steps"][-1]["held"])
        if n % p == 0:
            divisible += 1
            assert all(s * 4 == ring.bytes_per_worker(n, p) for s in js["steps"][-1]["sent"])
    assert divisible > 20


def test_a_wrong_ring_would_fail_the_comparison():
    """The check can fail: a ring that skips the last all-gather step leaves vectors unequal to the sum."""
    vectors = ring.initial_vectors(4, 8)
    steps = ring.ring_allreduce(vectors)
    total = np.sum(vectors, axis=0)
    assert not all(np.array_equal(v, total) for v in steps[-2].vectors)
    assert ring.bytes_per_worker(8, 4) == 2 * 3 / 4 * 8 * 4


def test_it_renders_synchronously_and_print_state_sets_the_picture(page):
    state = page.evaluate(
        """() => {
        const e = document.createElement('ring-allreduce');
        e.setAttribute('alt', 'a ring'); e.setAttribute('print-state', 'workers=4; elements=8; step=3');
        document.body.appendChild(e);
        const out = {step: Number(e.dataset.step), sent: JSON.parse(e.dataset.sent),
                     cells: e.querySelectorAll('rect.ra-cell').length, sends: e.querySelectorAll('rect.ra-send').length,
                     readout: e.querySelector('.ra-readout').textContent, label: e.getAttribute('aria-label')};
        e.remove();
        return out;
    }"""
    )
    py = ring.ring_allreduce(ring.initial_vectors(4, 8))
    assert state["step"] == 3 and state["sent"] == [4 * s for s in py[2].sent]
    assert state["cells"] == 16 and state["sends"] == 4
    assert state["readout"] == "step 3 of 6 (reduce-scatter) · worker 1 sent 24 B; when done 2(p−1)/p·n = 48 B"
    assert state["label"] == "a ring"


def test_buttons_and_arrows_step_the_ring_and_keys_stay_inside(page):
    got = page.evaluate(
        """() => {
        const e = document.createElement('ring-allreduce');
        e.setAttribute('workers', '3'); e.setAttribute('elements', '6');
        document.body.appendChild(e);
        let leaked = 0;
        const spy = () => { leaked += 1; };
        document.addEventListener('keydown', spy);
        const [reset, back, next] = e.querySelectorAll('button');
        const atStart = [reset.disabled, back.disabled, next.disabled];
        next.click(); next.click();
        const afterTwo = Number(e.dataset.step);
        next.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
        next.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
        next.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
        const end = {step: Number(e.dataset.step), done: e.dataset.done, nextDisabled: next.disabled,
                     sent: JSON.parse(e.dataset.sent)};
        back.click();
        const backOne = Number(e.dataset.step);
        const p = e.querySelector("input[aria-label='workers p']");
        p.value = '5'; p.dispatchEvent(new Event('input'));
        const rows = e.querySelectorAll('rect.ra-cell').length;
        document.dispatchEvent(new KeyboardEvent('keydown', {key: 'x'}));
        document.removeEventListener('keydown', spy);
        e.remove();
        return {atStart, afterTwo, end, backOne, rows, leaked};
    }"""
    )
    assert got["atStart"] == [True, True, False] and got["afterTwo"] == 2
    assert got["end"]["step"] == 4 and got["end"]["done"] == "true" and got["end"]["nextDisabled"] is True
    assert got["end"]["sent"] == [ring.bytes_per_worker(6, 3)] * 3 == [32.0] * 3
    assert got["backOne"] == 3 and got["rows"] == 25 and got["leaked"] == 1
