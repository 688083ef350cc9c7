"""Chapter 11 figures: the simulated bubble against the micro-batch count, the real pipeline's
measured idle share against the formula, and the systems model against published runs.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D")


@figure("ch11.bubble", runs=("ch11.schedules",))
def bubble(runs):
    """Simulated idle share against micro-batches, 4 stages: GPipe/1F1B and interleaved with 2 and 4 chunks."""
    run = runs["ch11.schedules"]
    m, p = run["m"], int(run["p"])
    fig, ax = new_figure()
    for i, v in enumerate((1, 2, 4)):
        name = "GPipe and 1F1B" if v == 1 else f"interleaved, v = {v}"
        ax.plot(m, 100 * run[f"v{v}"], color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i], label=name)
    ax.plot(m, 100 * run["formula"], color=theme.MUTED, linestyle="none", marker="x", markersize=12,
            label="(p−1)/(m+p−1)")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(m, [str(int(x)) for x in m])
    ax.set_xlabel(f"micro-batches m ({p} stages, backward = 2 × forward)")
    ax.set_ylabel("idle share of each device (%)")
    ax.set_ylim(0, None)
    ax.legend(loc="upper right")
    return fig


@figure("ch11.idle", runs=("ch11.pipeline",))
def idle(runs):
    """Measured idle share per stage of the 2-process pipeline: median and quartiles over the timed steps."""
    run = runs["ch11.pipeline"]
    micro = run["micro"]
    fig, axes = new_figure(1, 2)
    for ax, name, title in zip(axes, ("gpipe", "1f1b"), ("GPipe", "1F1B"), strict=True):
        data = 100 * run[f"{name}_idle"]  # (stage, m, repeat)
        for r in (0, 1):
            q25, med, q75 = np.percentile(data[r], (25, 50, 75), axis=1)
            x = micro * (0.94 if r == 0 else 1.06)
            ax.errorbar(x, med, yerr=(med - q25, q75 - med), color=theme.PALETTE[r], linestyle=STYLES[r],
                        marker=MARKERS[r], capsize=4, label=f"stage {r + 1}, measured")  # fmt: skip
        ax.plot(micro, 100 / (micro + 1), color=theme.MUTED, linestyle=":", marker="x", markersize=10,
                label="formula, 1/(m+1) at p = 2")  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_xticks(micro, [str(int(x)) for x in micro])
        ax.set_xlabel("micro-batches m")
        ax.set_title(title, fontsize=18)
        ax.set_ylim(0, 70)
    axes[0].set_ylabel("idle share of the step (%)")
    axes[0].legend(loc="upper right", fontsize=14)
    return fig


@figure("ch11.systems", runs=("ch11.systems",))
def systems_fit(runs):
    """Published over predicted time for each run with a reported utilisation."""
    from model.systems import RUNS, slug

    run = runs["ch11.systems"]
    names, lo, hi = [], [], []
    for r in RUNS:
        key = f"ch11.sys.{slug(r.name)}.ratio"
        if key in run.measurements:
            names.append(r.name)
            lo.append(float(run.measurements[key]["value"]))
            hi_key = f"{key}_hi"
            hi.append(float(run.measurements[hi_key]["value"]) if hi_key in run.measurements else lo[-1])
    order = np.argsort(lo)
    y = np.arange(len(names))
    fig, ax = new_figure()
    lo_a, hi_a = np.array(lo)[order], np.array(hi)[order]
    ax.hlines(y, lo_a, hi_a, color=theme.PALETTE[0], linewidth=4)
    ax.plot(lo_a, y, "o", color=theme.PALETTE[0], markersize=10, label="published ÷ predicted")
    ax.plot(hi_a[hi_a != lo_a], y[hi_a != lo_a], "s", color=theme.PALETTE[0], markersize=10)
    ax.axvline(1.0, color=theme.MUTED, linestyle="--", linewidth=1.5)
    ax.annotate("prediction exact", (1.0, len(names) - 0.5), xytext=(6, 0), textcoords="offset points",
                color=theme.MUTED, fontsize=14, va="center")  # fmt: skip
    ax.set_yticks(y, [names[i] for i in order])
    ax.set_xscale("log")
    ticks = [1, 1.5, 2, 3, 4]
    ax.set_xticks(ticks, [f"{t:g}×" for t in ticks])
    ax.set_xlabel("published time ÷ 6ND / (n · peak · reported utilisation)")
    ax.set_ylim(-0.6, len(names) - 0.2)
    return fig
