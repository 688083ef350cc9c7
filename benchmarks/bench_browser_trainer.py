"""The browser trainer's speed: the whole default run (2,000 steps of batch 32, evaluation on
every validation window every 100 steps) in headless Chromium, run by hand:

    python benchmarks/bench_browser_trainer.py [--repeats 3]

The page is a blank 1280x720 file:// page with window.SLIDEGEN_RUNS defined from
results/runs/ch01.trainer.json and one <decoder-trainer>; the run starts with its Play button at
full speed and ends when the element shows step 2,000. Two settings, taking turns: the element's
default (two Web Workers, each computing half of every batch) and threads="1" (one Worker).
For each: the median and best of --repeats runs, and the page's longest gap between animation
frames while it trained (the page stays responsive when that stays near a frame). It also
prints the largest difference between the browser's validation curve and the Python run's
(the series in the same file) and the load average before and after. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model.browser import full_run, trainer_page  # noqa: E402

RUN = ROOT / "results" / "runs" / "ch01.trainer.json"
FRAMES_JS = """() => { window.frameGap = 0; let last = performance.now();
  const tick = (t) => { window.frameGap = Math.max(window.frameGap, t - last); last = t; requestAnimationFrame(tick); };
  requestAnimationFrame(tick); }"""


def one_run(run: dict, threads: str | None) -> dict:
    attr = f' threads="{threads}"' if threads else ""
    element = f'<decoder-trainer run="ch01.trainer"{attr} alt="the browser trainer"></decoder-trainer>'
    with trainer_page(run, element=element) as page:
        page.wait_for_function("() => document.querySelector('decoder-trainer').evals.length > 0")
        page.evaluate(FRAMES_JS)
        out = full_run(page)
        out["frame_gap_ms"] = page.evaluate("() => window.frameGap")
        if page.errors:
            raise RuntimeError(f"page errors: {page.errors}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    run = json.loads(RUN.read_text(encoding="utf-8"))
    python_val = run["series"]["val_loss"]
    settings = {"two Web Workers (the default)": None, "one Web Worker (threads=1)": "1"}
    times: dict[str, list[float]] = {name: [] for name in settings}
    gaps: dict[str, list[float]] = {name: [] for name in settings}
    diffs: list[float] = []
    load_before = os.getloadavg()[0]
    for k in range(args.repeats):
        for name, threads in settings.items():
            out = one_run(run, threads)
            if out["steps"] != 2000:
                raise RuntimeError(f"{name}: stopped at step {out['steps']}")
            times[name].append(out["seconds"])
            gaps[name].append(out["frame_gap_ms"])
            diffs.append(max(abs(v - p) for (_, v), p in zip(out["evals"], python_val, strict=True)))
            print(
                f"repeat {k + 1}, {name}: {out['seconds']:.2f} s, longest frame gap {out['frame_gap_ms']:.0f} ms",
                flush=True,
            )
    load_after = os.getloadavg()[0]
    print(f"\nload average {load_before:.1f} before, {load_after:.1f} after; {os.cpu_count()} cores")
    print(f"largest |browser - Python| validation loss at any evaluation, any run: {max(diffs):.2e} nats\n")
    print("| browser trainer, 2,000 steps of batch 32 | median s | best s | steps/s (median) | longest frame gap ms |")
    print("|---|---:|---:|---:|---:|")
    for name in settings:
        med = statistics.median(times[name])
        print(f"| {name} | {med:.1f} | {min(times[name]):.1f} | {2000 / med:.0f} | {max(gaps[name]):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
