"""Chapter 1 figures: the default run's loss, where a plateau appears, its seeds, loss
against accuracy, failure shapes and the NaN cascade.

Compared curves differ in line style as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

LEVEL_NAMES = ("chance, ln 64", "unigram", "bigram")


def _levels(ax, levels, x, names=LEVEL_NAMES, ha="right") -> None:
    """Dotted reference levels, each labelled just above its line at ``x`` (by default the right edge)."""
    for name, level in zip(names, levels, strict=True):
        ax.axhline(level, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.annotate(
            name,
            (x, level),
            xytext=(-4 if ha == "right" else 0, 4),
            textcoords="offset points",
            ha=ha,
            va="bottom",
            color=theme.MUTED,
            fontsize=14,
        )


def _band(ax, step, values, label, colour, style) -> None:
    """The mean of the seeds as a line, their range as a light band."""
    ax.plot(step, values.mean(axis=0), label=label, color=colour, linestyle=style)
    ax.fill_between(step, values.min(axis=0), values.max(axis=0), color=colour, alpha=0.2, linewidth=0)


@figure("ch01.loss", runs=("ch01.default",))
def loss(runs):
    """Training and validation loss of the default run (mean of the seeds), with reference levels."""
    run = runs["ch01.default"]
    step, val, train = run["step"], run["val_loss"], run["train_loss"]
    fig, ax = new_figure()
    ax.plot(
        step[1:],
        train[:, 1:].mean(axis=0),
        label="training loss (mean of 10 batches)",
        color=theme.PALETTE[1],
        linestyle="--",
    )
    ax.plot(step, val.mean(axis=0), label="validation loss", color=theme.PALETTE[0])
    _levels(ax, run["levels"], step[-1])
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(2.0, 4.4)
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.93))
    return fig


@figure("ch01.plateau", runs=("ch01.default", "ch01.plateau"))
def plateau(runs):
    """The first 600 steps. Left: the model without LayerNorm at each rung of its learning-rate ladder.
    Right: at the default rate, the default model, no LayerNorm with attention and attention-blind, and
    the attention-blind model with LayerNorm. Each the mean of three seeds, with their range."""
    default, run = runs["ch01.default"], runs["ch01.plateau"]
    end = 600
    fig, (left, right) = new_figure(1, 2, sharey=True)
    keep = run["step"] <= end
    step = run["step"][keep]
    styles = ("-", "--", "-.", (0, (1, 1.2)))
    for k, lr in enumerate(run["lrs"]):
        _band(left, step, run["no_norm_val_loss"][k][:, keep], f"lr {lr:g}", theme.PALETTE[(1, 3, 4, 5)[k]], styles[k])
    left.set_title("no LayerNorm, by learning rate", fontsize=16)
    at = default["step"] <= end
    _band(right, default["step"][at], default["val_loss"][:, at], "default", theme.PALETTE[0], "-")
    _band(right, step, run["no_norm_val_loss"][0][:, keep], "no LayerNorm", theme.PALETTE[1], "--")
    _band(right, step, run["blind_no_norm_val_loss"][0][:, keep], "no LN, attention-blind", theme.PALETTE[2], "-.")
    _band(right, step, run["blind_val_loss"][0][:, keep], "attention-blind", theme.PALETTE[6], styles[3])
    right.set_title(f"all at lr {run['lrs'][0]:g}", fontsize=16)
    for ax in (left, right):
        _levels(ax, run["levels"][1:2], end, LEVEL_NAMES[1:2])  # unigram at the right, bigram at the left:
        _levels(ax, run["levels"][2:], 15, LEVEL_NAMES[2:], ha="left")  # where no curve runs near them
        ax.set_xlabel("step")
        ax.set_xlim(0, end)
        ax.legend(loc="upper right", fontsize=14)  # above the unigram label: no curve runs there after step 100
    left.set_ylabel("validation loss (nats)")
    left.set_ylim(2.2, 4.9)  # room for the legends above the curves' start at 4.17
    return fig


@figure("ch01.seeds", runs=("ch01.default",))
def seeds(runs):
    """Validation loss of each seed over the last 1,000 steps: the spread behind mean ± sd."""
    run = runs["ch01.default"]
    step, val = run["step"], run["val_loss"]
    keep = step >= step[-1] // 2
    fig, ax = new_figure()
    for i, seed in enumerate(run["seeds"]):
        ax.plot(
            step[keep],
            val[i, keep],
            label=f"seed {int(seed)}",
            color=theme.PALETTE[i],
            linestyle=("-", "--", "-.")[i % 3],
        )
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.legend(loc="upper right")
    return fig


@figure("ch01.arithmetic", runs=("ch01.arithmetic",))
def arithmetic(runs):
    """Loss against accuracy on sums: the whole loss, the loss on the answer characters of held-out
    sums, exact match and per-digit accuracy (mean of three seeds, band: their range)."""
    run = runs["ch01.arithmetic"]
    step = run["step"]
    fig, (top, bottom) = new_figure(2, 1, sharex=True)
    top.plot(step, run["val_loss"].mean(axis=0), label="every character", color=theme.PALETTE[0])
    top.plot(
        step,
        run["answer_loss2"].mean(axis=0),
        label="answer characters, held-out sums",
        color=theme.PALETTE[1],
        linestyle="--",
    )
    top.set_ylabel("loss (nats)")
    top.set_ylim(0, None)
    top.legend(loc="upper right")
    for name, key, colour, style in (
        ("single-digit sums, exact", "acc1", 2, "-"),
        ("held-out two-digit, exact", "acc2", 1, "--"),
        ("held-out two-digit, per digit", "digit2", 3, (0, (1, 1.2))),
    ):
        _band(bottom, step, 100 * run[key], name, theme.PALETTE[colour], style)
    bottom.set_ylabel("accuracy (%)")
    bottom.set_ylim(0, 100)
    bottom.set_xlabel("step")
    bottom.set_xlim(0, step[-1])
    bottom.legend(loc="upper left", fontsize=14)
    return fig


@figure("ch01.lr_extremes", runs=("ch01.default", "ch01.lr_extremes"))
def lr_extremes(runs):
    """Validation loss for a learning rate far too low (cosine and constant), the default, and far too high,
    with the unigram level the too-low runs end above."""
    default, extremes = runs["ch01.default"], runs["ch01.lr_extremes"]
    step = extremes["step"]
    fig, ax = new_figure()
    ax.plot(
        step,
        extremes["low_val_loss"].mean(axis=0),
        label="100x too low, cosine",
        color=theme.PALETTE[2],
        linestyle="-.",
    )
    ax.plot(
        step,
        extremes["low_constant_val_loss"].mean(axis=0),
        label="100x too low, constant",
        color=theme.PALETTE[4],
        linestyle=(0, (1, 1.5)),
    )
    ax.plot(default["step"], default["val_loss"].mean(axis=0), label="default", color=theme.PALETTE[0])
    ax.plot(
        step, extremes["high_val_loss"].mean(axis=0), label="1,000x too high", color=theme.PALETTE[1], linestyle="--"
    )
    _levels(ax, default["levels"][1:2], 160, LEVEL_NAMES[1:2], ha="left")  # left: no curve crosses there
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_xlim(0, default["step"][-1])
    ax.legend(loc="upper right")
    return fig


@figure("ch01.nan", runs=("ch01.nan",))
def nan(runs):
    """The NaN cascade: the largest |logit| of every step (log scale) against float32's
    limits, and the share of NaN parameters after each update; without LayerNorm (each
    seed) and, for contrast, with it."""
    run = runs["ch01.nan"]
    logit, share = run["max_logit"], run["nan_share"]
    end = logit.shape[1]
    step = np.arange(end)
    fig, (logits_ax, nan_ax) = new_figure(1, 2)  # side by side: a short, wide box keeps both panels readable
    calm = run["ablation_max_logit"][:, :end]
    for i in range(len(calm)):
        logits_ax.semilogy(
            step[: calm.shape[1]],
            calm[i],
            color=theme.MUTED,
            linestyle=":",
            linewidth=2.5,
            label="LayerNorm: finite" if i == 0 else None,
        )
    for i, seed in enumerate(run["seeds"]):
        finite = np.isfinite(logit[i])
        logits_ax.semilogy(
            step[finite],
            logit[i, finite],
            color=theme.PALETTE[i],
            linestyle=("-", "--", "-.")[i % 3],
            marker="o",
            markersize=4,
            label=f"no LN, seed {int(seed)}",
        )
        if not finite.all():  # the first step whose logits are not finite, drawn at float32's ceiling
            logits_ax.plot(step[np.argmin(finite)], 3.4e38, marker="X", markersize=11, color=theme.PALETTE[i])
    logits_ax.plot([], [], marker="X", markersize=11, color=theme.TEXT, linestyle="none", label="not finite")
    right = min(end - 1, 25)
    # each name where no curve runs: exp's limit at the left (the runs cross it after step 8), float32's at the right
    for y, name, x, ha in ((88.72, "exp's limit 88.7", 0.3, "left"), (3.4e38, "float32 max", right, "right")):
        logits_ax.axhline(y, color=theme.TEXT, linestyle=(0, (6, 2, 1, 2)), linewidth=1.2)
        logits_ax.annotate(
            name, (x, y), xytext=(0, 3), textcoords="offset points", ha=ha, va="bottom", color=theme.TEXT
        )
    logits_ax.set_ylabel("largest |logit|")
    logits_ax.set_ylim(1e-3, 1e80)  # room above float32's ceiling for the legend
    logits_ax.set_xlim(0, right)
    logits_ax.legend(loc="upper left", ncols=2, columnspacing=1.0, handlelength=1.8)
    for i in range(len(share)):
        nan_ax.plot(step, 100 * share[i], color=theme.PALETTE[i], linestyle=("-", "--", "-.")[i % 3])
    nan_ax.set_ylabel("NaN weights (%)")
    nan_ax.set_ylim(-5, 105)
    nan_ax.set_xlim(0, right)
    for ax in (logits_ax, nan_ax):
        ax.set_xlabel("step (plain SGD)")
    return fig


@figure("ch01.trainer", runs=("ch01.trainer",))
def trainer(runs):
    """The run the "Train it yourself" slide replays (one seed, Python's fast path): training loss
    (mean since the previous evaluation) and validation loss every 100 steps."""
    run = runs["ch01.trainer"]
    step, val, train = run["step"], run["val_loss"], run["train_loss"]
    fig, ax = new_figure()
    ax.plot(step[1:], train[1:], label="training loss (mean of 100 batches)", color=theme.PALETTE[1], linestyle="--")
    ax.plot(step, val, label="validation loss", color=theme.PALETTE[0], marker="o", markersize=4)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(2.0, 4.4)
    ax.legend(loc="upper right")
    return fig
