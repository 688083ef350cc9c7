"""Chapter 8 figures: where an FP32 run's numbers sit against each format's range, a long dot product's
error by accumulation, FP8 casts by scaling, and the three autocast recipes' validation curves.

Compared curves and bars differ in line style, marker or hatch as well as colour, so they stay apart in
grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

FORMATS = ("FP32", "TF32", "BF16", "FP16", "E4M3", "E5M2")  # model.formats.FORMATS' order
KINDS = (("grad", "weight gradients", "-", "o"), ("update", "weight updates", "--", "s"),
         ("weight", "weights", ":", "^"), ("act", "matmul inputs", "-.", "D"))  # fmt: skip


@figure("ch08.range", runs=("ch08.range",))
def range_(runs):
    """Share of entries per power of two (pooled over the run and the seeds) for gradients, updates, weights
    and matmul inputs, with the range of FP16, E5M2 and E4M3 drawn above (BF16 covers the whole axis)."""
    run = runs["ch08.range"]
    lo, hi = int(run["lo"]), int(run["hi"])
    x = np.arange(lo, hi + 1)
    fmts = np.asarray(run["formats"], dtype=float)
    fig, ax = new_figure()
    for (key, label, style, marker), colour in zip(KINDS, theme.PALETTE, strict=False):
        h = np.asarray(run[f"hist_{key}"], dtype=float).sum(axis=0)
        ax.plot(x, 100 * h / h.sum(), label=label, linestyle=style, marker=marker, markersize=6, color=colour)
    top = ax.get_ylim()[1]
    for k, name in enumerate(("FP16", "E5M2", "E4M3")):
        sub, normal, big = fmts[FORMATS.index(name)]
        y = top * (1.08 + 0.1 * k)
        ax.plot([max(sub, lo), min(big, hi)], [y, y], color=theme.TEXT, linewidth=3, linestyle="-", clip_on=False)
        ax.plot([max(normal, lo)], [y], marker="|", markersize=16, color=theme.TEXT, clip_on=False)
        ax.annotate(name, (min(big, hi), y), xytext=(6, 0), textcoords="offset points", va="center", color=theme.TEXT)
    ax.set_ylim(0, top * 1.4)
    ax.set_xlim(lo, hi + 4)
    ax.set_xlabel("log2 |value| (bins at the ends hold everything beyond)")
    ax.set_ylabel("% of nonzero entries")
    ax.legend(loc="center left", fontsize=18)
    return fig


@figure("ch08.accum", runs=("ch08.accum",))
def accum(runs):
    """Relative error of a dot product of BF16 inputs against its length, accumulated in BF16, in BF16 promoted
    to FP32 every 128 terms, and in FP32, for positive and signed inputs (mean of three seeds)."""
    run = runs["ch08.accum"]
    n = np.asarray(run["lengths"], dtype=float)
    fig, ax = new_figure()
    arms = (("bf16", "BF16 sum", "o"), ("bf16_128", "BF16, FP32 every 128", "s"), ("fp32", "FP32 sum", "^"))
    for (arm, label, marker), colour in zip(arms, theme.PALETTE, strict=False):
        for dist, style, fill in (("pos", "-", "full"), ("signed", "--", "none")):
            e = np.asarray(run[f"err_{dist}_{arm}"], dtype=float).mean(axis=1)
            ax.plot(n, 100 * e, marker=marker, fillstyle=fill, linestyle=style, color=colour,
                    label=f"{label}, {'positive' if dist == 'pos' else 'signed'}")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("terms in the dot product")
    ax.set_ylabel("error / Σ|xy| (%)")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=18)
    return fig


@figure("ch08.fp8", runs=("ch08.range",))
def fp8(runs):
    """Per scaling rule: the six matmuls' mean relative error with E4M3 inputs and the share of inputs flushed
    to zero, mean over seeds with each seed marked."""
    run = runs["ch08.range"]
    names = (("none", "no scaling", ""), ("tensor", "per tensor", "//"), ("tile", "per tile", ".."))
    fig, axes = new_figure(ncols=2)
    for ax, (q, label) in zip(axes, (("err", "matmul relative error (%)"), ("flushed", "inputs flushed to 0 (%)")),
                              strict=True):  # fmt: skip
        for i, (k, _name, hatch) in enumerate(names):
            v = np.asarray(run[f"fp8_{k}_{q}"], dtype=float)
            ax.bar(i, v.mean(), color=theme.PALETTE[i], hatch=hatch, edgecolor="white", width=0.7)
            ax.plot([i] * len(v), v, linestyle="none", marker="o", color=theme.TEXT, markersize=6)
        ax.set_xticks(range(len(names)), [n for _, n, _ in names])
        ax.set_ylabel(label)
        ax.grid(axis="x", visible=False)
    return fig


def _against_rate(fig, ax, run: dict, arms) -> object:
    """Final validation loss against the peak rate per arm: each seed and the mean, the arm's best rate
    ringed, arms shifted side by side so the seeds do not hide each other."""
    mid = (len(arms) - 1) / 2
    for k, ((arm, label, style, marker), colour) in enumerate(zip(arms, theme.PALETTE, strict=False)):
        rates = np.asarray(run[f"{arm}_rates"], dtype=float)
        final = np.asarray(run[f"{arm}_final"], dtype=float)  # (rates, seeds)
        shift = rates * (1 + 0.05 * (k - mid))
        ax.plot(shift, final.mean(axis=1), linestyle=style, marker=marker, color=colour, label=label, markersize=10)
        for j in range(final.shape[1]):
            ax.plot(shift, final[:, j], linestyle="none", marker=".", color=colour, markersize=6)
        b = int(run[f"{arm}_best"])
        ax.plot([shift[b]], [final[b].mean()], marker="o", markersize=22, fillstyle="none", color=colour,
                markeredgewidth=2, linestyle="none")  # fmt: skip
    ax.set_xscale("log")
    ticks = sorted({float(r) for arm, *_ in arms for r in run[f"{arm}_rates"]})
    ax.set_xticks(ticks, [f"{r:g}" for r in ticks])
    ax.minorticks_off()
    ax.set_xlabel("peak learning rate")
    ax.set_ylabel("final validation loss (nats)")
    ax.legend(loc="upper center", ncol=2 if len(arms) > 4 else 1, fontsize=16 if len(arms) > 4 else None)
    top = ax.get_ylim()[1]
    ax.set_ylim(top=top + 0.25 * (top - ax.get_ylim()[0]) * (len(arms) > 4))  # room for the legend above the points
    return fig


@figure("ch08.recipes", runs=("ch08.recipes",))
def recipes(runs):
    """Final validation loss against the peak rate for each recipe: each seed and the mean, the best rate
    of each recipe ringed."""
    run = runs["ch08.recipes"]
    fig, ax = new_figure()
    arms = (
        ("fp32", "FP32", "-", "o"),
        ("bf16", "BF16 autocast", "--", "s"),
        ("bf16_pure", "BF16, BF16 weights", "--", "D"),
        ("fp16", "FP16 autocast", ":", "^"),
        ("fp16_scaled", "FP16, loss scale", ":", "v"),
    )
    return _against_rate(fig, ax, run, arms)


@figure("ch08.bf16w", runs=("ch08.lowbits",))
def bf16w(runs):
    """Left: the share of weights an update left unchanged, per 100 steps, with weights stored in BF16 and in
    FP32. Right: their validation loss over training, each at its own best rate, mean of three seeds."""
    run = runs["ch08.lowbits"]
    fig, (left, right) = new_figure(ncols=2)
    steps = np.asarray(run["step"], dtype=float)
    for k, (arm, label, marker) in enumerate((("fp32", "FP32 weights", "o"), ("bf16w", "BF16 weights", "s"))):
        share = np.asarray(run[f"{arm}_unchanged"], dtype=float)
        left.plot(100 * (np.arange(len(share)) + 1), share, marker=marker, color=theme.PALETTE[k], label=label)
        curve = np.asarray(run[f"{arm}_curve"], dtype=float).mean(axis=0)  # (evaluations,)
        right.plot(steps[1:], curve[1:], marker=marker, markevery=4, color=theme.PALETTE[k], label=label)
    left.set_xlabel("step")
    left.set_ylabel("weights left unchanged (%)")
    left.legend(loc="upper left", fontsize=18)
    right.set_xlabel("step")
    right.set_ylabel("validation loss (nats)")
    right.legend(loc="upper right", fontsize=18)
    return fig


@figure("ch08.quanttrain", runs=("ch08.lowbits",))
def quanttrain(runs):
    """Final validation loss against the peak rate, FP32 gradients and gradients quantised to 8 and 4 bits
    (nearest, stochastic): each seed and the mean, each arm's best rate ringed."""
    run = runs["ch08.lowbits"]
    fig, ax = new_figure()
    arms = (
        ("fp32", "FP32", "-", "o"),
        ("q8", "8-bit, nearest", "-.", "^"),
        ("q8sr", "8-bit, stochastic", ":", "v"),
        ("q4", "4-bit, nearest", "-.", "D"),
        ("q4sr", "4-bit, stochastic", ":", "P"),
    )
    return _against_rate(fig, ax, run, arms)


@figure("ch08.fp8train", runs=("ch08.fp8train",))
def fp8train(runs):
    """Final validation loss against the peak rate, FP32 and FP8 training (no scaling, per tensor, per
    tile): each seed and the mean, each arm's best rate ringed."""
    run = runs["ch08.fp8train"]
    fig, ax = new_figure()
    arms = (("fp32", "FP32", "-", "o"), ("none", "FP8, no scaling", ":", "^"),
            ("tensor", "FP8, per tensor", "--", "s"), ("tile", "FP8, per tile", "-.", "D"))  # fmt: skip
    return _against_rate(fig, ax, run, arms)
