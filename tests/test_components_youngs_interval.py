"""components/youngs-interval.js in a blank Chromium page: its simulated goodput, expected goodput and
best interval equal model/goodput.py's within 1e-12, it renders on connection, and its fields change
the job without letting reveal.js see the keys typed into them."""

from __future__ import annotations

import pytest

from model import goodput as gp
from tests.component_page import component_page

JOBS = [  # mtbf (h), delta (h), restart (h), work (h), seed
    (3.1, 1 / 60, 10 / 60, 200.0, 0),
    (3.1, 5 / 60, 0.0, 100.0, 7),
    (24.0, 0.25, 0.5, 500.0, 123456789),
    (0.5, 0.01, 0.05, 20.0, 2**32 - 1),
]


@pytest.fixture(scope="module")
def page():
    with component_page("youngs-interval") as page:
        yield page


def _js_job(job: gp.Job) -> dict:
    return {"mtbf": job.mtbf, "delta": job.delta, "restart": job.restart, "work": job.work}


@pytest.mark.parametrize("mtbf, delta, restart, work, seed", JOBS)
def test_simulated_curve_equals_the_python_simulator(page, mtbf, delta, restart, work, seed):
    job = gp.Job(mtbf, delta, restart, work)
    taus = gp.log_grid(gp.young_interval(delta, mtbf) / 10, gp.young_interval(delta, mtbf) * 10, 21)
    js = page.evaluate(
        "([j, t, s]) => customElements.get('youngs-interval').goodputCurve(j, t, s)", [_js_job(job), taus, seed]
    )
    py = gp.goodput_curve(job, taus, seed)
    assert len(js) == len(py)
    assert max(abs(a - b) / b for a, b in zip(js, py, strict=True)) <= 1e-12
    runs = [gp.simulate(job, tau, seed) for tau in taus]
    counts = page.evaluate(
        "([j, t, s]) => t.map((tau) => customElements.get('youngs-interval').simulate(j, tau, s).failures)",
        [_js_job(job), taus, seed],
    )
    assert counts == [r.failures for r in runs]
    assert sum(counts) > 0  # the comparison exercised failures


@pytest.mark.parametrize("mtbf, delta, restart, work, seed", JOBS)
def test_expected_goodput_and_best_interval_equal_python(page, mtbf, delta, restart, work, seed):
    job = gp.Job(mtbf, delta, restart, work)
    taus = gp.log_grid(delta / 3, mtbf * 3, 15)
    js = page.evaluate(
        "([j, t]) => t.map((tau) => customElements.get('youngs-interval').expectedGoodput(j, tau))",
        [_js_job(job), taus],
    )
    assert max(abs(a - gp.expected_goodput(job, t)) for a, t in zip(js, taus, strict=True)) <= 1e-12
    best = page.evaluate("(j) => customElements.get('youngs-interval').bestInterval(j)", _js_job(job))
    assert abs(best - gp.best_interval(job)) <= 1e-12 * gp.best_interval(job)
    young = page.evaluate("([d, m]) => customElements.get('youngs-interval').youngInterval(d, m)", [delta, mtbf])
    assert young == gp.young_interval(delta, mtbf)


def test_it_renders_the_preset_and_its_fields_change_the_job(page):
    got = page.evaluate(
        """() => {
        const e = document.createElement('youngs-interval');
        e.setAttribute('mtbf', '3.1'); e.setAttribute('delta', '1'); e.setAttribute('restart', '10');
        e.setAttribute('work', '200'); e.setAttribute('alt', 'goodput against interval');
        document.body.appendChild(e);
        const before = {young: Number(e.dataset.young), goodput: Number(e.dataset.goodput),
                        dots: e.querySelectorAll('.yi-dot').length,
                        readout: e.querySelector('.yi-readout').textContent};
        let leaked = 0;
        const spy = () => { leaked += 1; };
        document.addEventListener('keydown', spy);
        const delta = e.querySelectorAll('input')[1];
        delta.focus();
        delta.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp', bubbles: true}));
        delta.value = '4'; delta.dispatchEvent(new Event('input'));
        document.removeEventListener('keydown', spy);
        const after = {young: Number(e.dataset.young), delta: e.getAttribute('delta')};
        e.remove();
        return {before, after, leaked};
    }"""
    )
    job = gp.Job(3.1, 1 / 60, 10 / 60, 200.0)
    young = gp.young_interval(job.delta, job.mtbf)
    assert got["before"]["young"] == pytest.approx(young, rel=1e-12)
    taus = gp.log_grid(young / 10, young * 10, 41)
    assert got["before"]["goodput"] == pytest.approx(gp.goodput_curve(job, taus[20:21], 0)[0], rel=1e-12)
    assert got["before"]["dots"] == 41 and "√(2δM)" in got["before"]["readout"]
    assert got["after"] == {"young": pytest.approx(young * 2, rel=1e-12), "delta": "4"}
    assert got["leaked"] == 0
