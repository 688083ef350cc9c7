"""Chapter 9 figures: bytes per parameter by optimiser and precision, a layer's saved bytes against the
published formula, and what checkpointing saves and costs.

Compared bars and lines differ in hatch, line style and marker as well as colour, so they stay apart in
grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

OPTIMISERS = ("sgd", "momentum", "adam")  # model.experiments.ch09_memory.States' order
PRECISIONS = ("fp32", "mixed")
PARTS = (("weights", 0, ""), ("gradients", 1, "//"), ("optimiser states", 2, ".."))
MODES = ("none", "selective", "full")  # Checkpoint.modes' order


@figure("ch09.states", runs=("ch09.states",))
def states(runs):
    """Bytes per parameter of the toy Decoder after one step, read from its tensors, by precision and
    optimiser, stacked by part, with ZeRO's 16 bytes per parameter marked."""
    table = np.asarray(runs["ch09.states"]["bytes"], dtype=float)[: len(PRECISIONS) * len(OPTIMISERS)]  # the toy
    names = {"sgd": "SGD", "momentum": "momentum", "adam": "AdamW"}
    labels = [f"{names[o]}\n{'float32' if p == 'fp32' else 'bf16 + fp32'}" for p in PRECISIONS for o in OPTIMISERS]
    x = np.arange(len(labels))
    fig, ax = new_figure()
    bottom = np.zeros(len(labels))
    for i, (label, colour, hatch) in enumerate(PARTS):
        ax.bar(x, table[:, i], bottom=bottom, color=theme.PALETTE[colour], hatch=hatch, edgecolor="white",
               label=label, width=0.7)  # fmt: skip
        bottom += table[:, i]
    for xi, total in zip(x, bottom, strict=True):
        ax.annotate(f"{total:.0f}", (xi, total), xytext=(0, 4), textcoords="offset points", ha="center",
                    va="bottom", color=theme.TEXT)  # fmt: skip
    ax.axhline(16, color=theme.MUTED, linestyle=":", linewidth=2)
    ax.annotate("16 bytes per parameter", (x[0] - 0.4, 16), xytext=(0, 6), textcoords="offset points",
                color=theme.MUTED)  # fmt: skip
    ax.set_xticks(x, labels)
    ax.set_ylabel("bytes per parameter")
    ax.set_ylim(0, 19)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=3, fontsize=15, frameon=False)
    ax.grid(axis="x", visible=False)
    return fig


@figure("ch09.activations", runs=("ch09.activations",))
def activations(runs):
    """A layer's saved bytes per token (bfloat16, hooks) against the context, at the default width, two
    batch sizes; the adapted count and the published sbh(34 + 5as/h) as lines."""
    run = runs["ch09.activations"]
    shapes = np.asarray(run["shapes"], dtype=float)
    got = np.asarray(run["bf16_bytes"], dtype=float)
    h, a = shapes[0, 0], shapes[0, 1]
    mine = (shapes[:, 0] == h) & (shapes[:, 1] == a)
    fig, ax = new_figure()
    s = np.unique(shapes[mine, 2])
    ax.plot(s, (34 + 5 * a * s / h) * h, color=theme.PALETTE[1], linestyle="--", linewidth=2.5,
            label="published: 34 + 5as/h, per sbh")  # fmt: skip
    ax.plot(s, (32 + 2 * a * s / h) * h + 8, color=theme.PALETTE[0], linestyle="-", linewidth=2.5,
            label="adapted to the Decoder")  # fmt: skip
    for b, marker, fill in ((shapes[mine, 3].min(), "o", "none"), (shapes[mine, 3].max(), "x", "full")):
        pick = mine & (shapes[:, 3] == b)
        ax.plot(shapes[pick, 2], got[pick] / (shapes[pick, 2] * b), linestyle="none", marker=marker,
                fillstyle=fill, markersize=13, markeredgewidth=2.5, color=theme.TEXT,
                label=f"measured (hooks), batch {b:.0f}")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(s, [f"{v:.0f}" for v in s])
    ax.set_xlabel(f"context s (characters); width h = {h:.0f}, {a:.0f} heads")
    ax.set_ylabel("bytes per token per layer (16-bit)")
    ax.set_ylim(0, None)
    ax.legend(loc="upper left", fontsize=15)
    return fig


@figure("ch09.checkpoint", runs=("ch09.checkpoint",))
def checkpoint(runs):
    """Left: bytes held from the forward pass to the backward pass in each mode (C allocator), with the
    adapted formula marked. Right: extra FLOPs (counted, and with torch's early stop turned off) and extra
    time per step (median, quartiles) against no checkpointing."""
    run = runs["ch09.checkpoint"]
    held = np.median(np.asarray(run["held"], dtype=float), axis=1) / 1e6
    formula = np.asarray(run["formula"], dtype=float) / 1e6
    flops = np.asarray(run["flops"], dtype=float)
    ratios = np.asarray(run["ratios"], dtype=float)
    fig, (left, right) = new_figure(1, 2)
    x = np.arange(len(MODES))
    left.bar(x, held, color=[theme.PALETTE[i] for i in range(3)], hatch=["", "//", ".."], edgecolor="white",
             width=0.6, label="measured")  # fmt: skip
    left.plot(x, formula, linestyle="none", marker="_", markersize=50, markeredgewidth=3, color=theme.TEXT,
              label="formula")  # fmt: skip
    for xi, v in zip(x, held, strict=True):
        left.annotate(f"{v:.0f} MB" if v >= 10 else f"{v:.1f} MB", (xi, v), xytext=(0, 6),
                      textcoords="offset points", ha="center", va="bottom", color=theme.TEXT)  # fmt: skip
    left.set_xticks(x, MODES)
    left.set_ylabel("MB held for the backward pass")
    left.set_ylim(0, held.max() * 1.25)
    left.legend(loc="upper right", fontsize=15)
    left.grid(axis="x", visible=False)
    extra_flops = 100 * (flops[1:] / flops[0] - 1)
    no_early = 100 * (np.asarray(run["flops_no_early"], dtype=float)[1:] / flops[0] - 1)
    q = 100 * (np.percentile(ratios[1:], [25, 50, 75], axis=1) - 1)
    xx = np.arange(2)
    right.bar(xx - 0.27, extra_flops, width=0.26, color=theme.PALETTE[3], hatch="xx", edgecolor="white",
              label="FLOPs (counted)")  # fmt: skip
    right.bar(xx, no_early, width=0.26, color="white", hatch="//", edgecolor=theme.PALETTE[3], linewidth=2,
              label="FLOPs, early stop off")  # fmt: skip
    right.bar(xx + 0.27, q[1], width=0.26, color=theme.PALETTE[4], edgecolor="white",
              yerr=[q[1] - q[0], q[2] - q[1]], capsize=6, label="time (CPU, median)")  # fmt: skip
    right.set_xticks(xx, MODES[1:])
    right.set_ylabel("extra per step, % of none")
    right.set_ylim(0, max(extra_flops.max(), no_early.max(), q[2].max()) * 1.5)
    right.legend(loc="upper left", fontsize=15)
    right.grid(axis="x", visible=False)
    return fig
