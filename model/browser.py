"""The browser trainer (components/decoder-trainer.js) in headless Chromium, and the NumPy
reference on the same start and batches: what ch01.browser, its test and its benchmark share.

    with trainer_page(run_json) as page:            # a blank file:// page, the run defined
        losses, weights = browser_steps(page, 50)   # the component's core, step by step
    ref_losses, ref_weights = reference_steps(series, 50)

Chromium is Debian's (``$SLIDEGEN_CHROMIUM``, else ``chromium`` on ``$PATH``), driven by
Playwright without a browser download. :class:`BrowserMissing` says in one line what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from model import reference
from model.export import batch, flatten, initial_weights, model_config, train_config, unflatten
from model.train import lr_at

ROOT = Path(__file__).resolve().parent.parent
COMPONENT = ROOT / "components" / "decoder-trainer.js"
STYLE = ROOT / "components" / "decoder-trainer.css"
RUN_ID = "ch01.trainer"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--allow-file-access-from-files",
]


class BrowserMissing(RuntimeError):
    """Chromium or Playwright is not installed."""


def find_chromium() -> Path | None:
    """``$SLIDEGEN_CHROMIUM`` when set, else the first Chromium on ``$PATH`` or in /usr/bin."""
    configured = os.environ.get("SLIDEGEN_CHROMIUM")
    if configured:
        return Path(configured) if os.access(configured, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return Path("/usr/bin/chromium") if os.access("/usr/bin/chromium", os.X_OK) else None


def require_browser() -> Path:
    """The Chromium binary, with Playwright importable; else BrowserMissing with one clear line."""
    chromium = find_chromium()
    if chromium is None:
        raise BrowserMissing("the browser check needs Chromium (Debian package chromium, or set $SLIDEGEN_CHROMIUM)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        raise BrowserMissing("the browser check needs the Python package playwright (pip install playwright)") from e
    return chromium


BLANK = """<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="{css}"></head>
<body style="margin:0;width:1280px;height:720px;font-size:28px"><main id="slide" style="padding:1em"></main>
<script src="{js}"></script></body></html>"""


@contextmanager
def trainer_page(run: dict[str, Any], *, element: str | None = None) -> Iterator[Any]:
    """A blank 1280x720 page from file:// with window.SLIDEGEN_RUNS = {"ch01.trainer": run}
    defined before any script, the component's script and style loaded, and ``element``
    (HTML, e.g. '<decoder-trainer run="ch01.trainer" alt="..."></decoder-trainer>') in it."""
    chromium = require_browser()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="decoder-trainer-") as tmp:
        page_path = Path(tmp) / "page.html"
        page_path.write_text(BLANK.format(css=STYLE.as_uri(), js=COMPONENT.as_uri()), encoding="utf-8")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.add_init_script(f"window.SLIDEGEN_RUNS = {json.dumps({RUN_ID: run})};")
                page.goto(page_path.as_uri())
                page.wait_for_function("() => !!customElements.get('decoder-trainer')")
                if element is not None:
                    page.evaluate("(html) => { document.getElementById('slide').innerHTML = html; }", element)
                page.errors = errors  # type: ignore[attr-defined]
                yield page
            finally:
                browser.close()


STEPS_JS = """(n) => {
  const core = customElements.get("decoder-trainer").core;
  const tr = new core.Trainer(core.setup(window.SLIDEGEN_RUNS["ch01.trainer"].series, {}));
  const losses = [], weights = [];
  for (let k = 0; k < n; k++) { losses.push(tr.update().loss); weights.push(Array.from(tr.w)); }
  return {losses, weights};
}"""


def browser_steps(page: Any, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The component's core trained ``steps`` updates in the page: each update's loss (steps,)
    and the weights after it (steps, P)."""
    out = page.evaluate(STEPS_JS, steps)
    return np.array(out["losses"], dtype=np.float64), np.array(out["weights"], dtype=np.float64)


def reference_steps(series: dict, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The NumPy reference (model/reference.py) on the same start and batches: AdamW after
    clipping to the global norm, the learning rate of model/train.py's schedule."""
    cfg, run = model_config(series), train_config(series)
    params = unflatten(initial_weights(series), cfg)
    state = None
    losses, weights = [], []
    for k in range(steps):
        x, y = batch(series, k)
        loss, grads = reference.loss_and_grads(params, x, y, cfg)
        clip = run.clip if run.clip is not None else float("inf")
        grads, _ = reference.clip_by_global_norm(grads, clip)
        params, state = reference.adamw_step(
            params, grads, state, lr=lr_at(k, run), betas=run.betas, eps=run.eps, weight_decay=run.weight_decay
        )
        losses.append(loss)
        weights.append(flatten(params, cfg))
    return np.array(losses), np.array(weights)


FULL_RUN_JS = """async () => {
  const el = document.querySelector("decoder-trainer");
  const t0 = performance.now();
  el.querySelector(".dt-play").click();
  await new Promise((done) => {
    const check = () => (el.step() >= el.total ? done() : setTimeout(check, 20));
    check();
  });
  return {seconds: (performance.now() - t0) / 1000, evals: el.evals, steps: el.step()};
}"""


def full_run(page: Any) -> dict[str, Any]:
    """Press play on the page's element (its Web Worker, at full speed) and wait for the run to end:
    {seconds, evals: [[step, val_loss], ...], steps}."""
    page.wait_for_function("() => document.querySelector('decoder-trainer').evals.length > 0")
    return page.evaluate(FULL_RUN_JS)
