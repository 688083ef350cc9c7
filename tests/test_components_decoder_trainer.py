"""components/decoder-trainer.js: the Decoder trained in the browser, held to the Python code.

The exported run (results/runs/ch01.trainer.json) is checked against model/ without a browser:
the initial weights are exactly what torch.manual_seed(seed) then Decoder(cfg) draws, the batch
starts exactly what model/train.py's batches draw. In headless Chromium (a blank file:// page,
window.SLIDEGEN_RUNS defined from that file before the script): its erf, GELU and learning-rate
schedule equal model/'s; its first 50 updates match the NumPy reference within 1e-10 (loss) and
1e-9 (every weight); the element trains in its Web Workers, its loss falls, its keys stay its own.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import needs
import numpy as np
import pytest
import torch

from model import reference
from model.browser import browser_steps, reference_steps, trainer_page
from model.data import load_corpus
from model.export import batch, batch_starts, initial_weights, model_config, train_config
from model.stacked import init_stack
from model.train import lr_at

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "results" / "runs" / "ch01.trainer.json"
ELEMENT = '<decoder-trainer run="ch01.trainer" alt="the Decoder training live"></decoder-trainer>'
AS_ON_THE_SLIDE = ELEMENT.replace("<decoder-trainer ", '<decoder-trainer print-state="finished" ')


@pytest.fixture(scope="module")
def run() -> dict:
    return json.loads(RUN.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def series(run) -> dict:
    return run["series"]


# --------------------------------------------------------------------------- the export, without a browser


def test_exported_weights_are_the_seeds_initial_weights_exactly(series):
    cfg, tc = model_config(series), train_config(series)
    _, theta = init_stack(cfg, [tc.seed])
    assert len(series["init_bits"]) == theta.shape[1] == 5376
    assert np.array_equal(initial_weights(series), theta[0].double().numpy())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(tc.seed)
        from model.decoder import Decoder

        first = next(Decoder(cfg).parameters()).detach().reshape(-1)
    assert np.array_equal(initial_weights(series)[: len(first)], first.double().numpy())


def test_exported_batches_are_the_runs_batches(series):
    cfg, tc = model_config(series), train_config(series)
    corpus = load_corpus()
    assert series["train_ids"] == corpus.train.tolist() and series["val_ids"] == corpus.val.tolist()
    assert "".join(map(chr, series["vocab"])) == "".join(corpus.vocab.chars)
    starts = batch_starts(corpus, tc, cfg.context)
    assert len(series["starts"]) == tc.steps * tc.batch == 64000
    assert series["starts"] == starts.reshape(-1).tolist()
    x, y = batch(series, 7)
    assert np.array_equal(x[:, 1:], y[:, :-1]) and x.shape == (tc.batch, cfg.context)


def test_the_run_file_holds_the_hyperparameters_exactly(series):
    tc = train_config(series)
    assert (tc.lr, tc.betas, tc.eps, tc.weight_decay, tc.clip) == (2e-3, (0.9, 0.999), 1e-8, 0.01, 1.0)
    assert (tc.steps, tc.batch, tc.warmup, tc.eval_every, tc.schedule) == (2000, 32, 100, 100, "cosine")


# --------------------------------------------------------------------------- in Chromium


@pytest.fixture
def page(run):
    needs.chromium()
    with trainer_page(run) as page:
        yield page
        assert page.errors == []


@pytest.mark.browser
def test_erf_gelu_and_schedule_equal_pythons(page, series):
    xs = np.concatenate([np.linspace(-7, 7, 281), [0.0, 0.5, -0.5, 4.0, -4.0, 1e-12, 30.0]])
    js = page.evaluate(
        """(xs) => { const c = customElements.get("decoder-trainer").core;
        return {erf: xs.map(c.erf), gelu: xs.map(c.gelu), grad: xs.map(c.geluGrad)}; }""",
        xs.tolist(),
    )
    assert np.abs(np.array(js["erf"]) - reference.erf(xs)).max() <= 2e-16
    assert np.abs(np.array(js["gelu"]) - reference.gelu(xs)).max() <= 1e-15
    assert np.abs(np.array(js["grad"]) - reference.gelu_grad(xs)).max() <= 1e-15
    tc = train_config(series)
    steps = [0, 1, 50, 99, 100, 101, 1000, 1999, 2000]
    lrs = page.evaluate(
        """(steps) => { const c = customElements.get("decoder-trainer").core;
        const t = c.setup(window.SLIDEGEN_RUNS["ch01.trainer"].series, {}).t;
        return steps.map((k) => c.lrAt(k, t)); }""",
        steps,
    )
    assert all(math.isclose(a, lr_at(k, tc), rel_tol=1e-15, abs_tol=1e-300) for a, k in zip(lrs, steps, strict=True))


@pytest.mark.browser
def test_fifty_steps_match_the_numpy_reference(page, series):
    """Item 3 of issue 19: after each of the first 50 updates, loss within 1e-10, every weight within 1e-9."""
    losses, weights = browser_steps(page, 50)
    ref_losses, ref_weights = reference_steps(series, 50)
    assert weights.shape == ref_weights.shape == (50, 5376)
    assert np.abs(losses - ref_losses).max() <= 1e-10
    assert np.abs(weights - ref_weights).max() <= 1e-9
    assert losses[0] == pytest.approx(4.166, abs=0.01) and losses[-1] < losses[0] - 0.2


@pytest.mark.browser
@pytest.mark.parametrize("element", [ELEMENT, AS_ON_THE_SLIDE], ids=["live", "from-the-picture"])
def test_the_element_trains_in_its_workers_and_its_loss_falls(run, element):
    needs.chromium()
    with trainer_page(run, element=element) as page:
        page.wait_for_function(
            "() => { const el = document.querySelector('decoder-trainer');"
            " return el.evals.length > 0 && (el.ready !== null || !el.showingPrint); }"
        )
        page.focus("decoder-trainer .dt-root")
        page.evaluate("""() => { window.slideKeys = 0;
            document.addEventListener("keydown", () => { window.slideKeys += 1; }); }""")
        page.keyboard.press(" ")  # play: the element's key, which reveal.js must not see
        page.wait_for_function("() => document.querySelector('decoder-trainer').step() >= 100", timeout=300_000)
        page.keyboard.press(" ")  # pause
        state = page.evaluate("""() => { const el = document.querySelector('decoder-trainer');
            return {first: el.evals[0], steps: el.steps.map((s) => s[1]),
                    train: el.querySelector('.dt-r-train').textContent,
                    step: el.querySelector('.dt-r-step').textContent, keys: window.slideKeys}; }""")
        assert state["first"][0] == 0  # the live run's own evaluation at step 0, not the picture's
        assert state["first"][1] == pytest.approx(run["series"]["val_loss"][0], abs=1e-5)
        losses = state["steps"]
        assert len(losses) >= 100 and all(math.isfinite(v) for v in losses)
        assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.5
        assert math.isfinite(float(state["train"])) and float(state["train"]) < 3.5
        assert state["keys"] == 0
        assert page.errors == []


@pytest.mark.browser
def test_print_state_shows_the_finished_python_run(run):
    needs.chromium()
    with trainer_page(run, element=AS_ON_THE_SLIDE) as page:
        shown = page.evaluate("""() => { const el = document.querySelector('decoder-trainer');
            return {val: el.querySelector('.dt-r-val').textContent, step: el.querySelector('.dt-r-step').textContent,
                    sample: el.querySelector('.dt-sample').textContent}; }""")
        s = run["series"]
        assert shown["val"] == f"{s['val_loss'][-1]:.3f}"
        assert shown["step"] == "2000 / 2000"
        assert len(shown["sample"]) > 40
