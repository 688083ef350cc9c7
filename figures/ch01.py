"""Chapter 1 figures: the default run's loss, its seeds, loss against accuracy, failure shapes."""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

LEVEL_NAMES = ("chance, ln 64", "unigram", "bigram")


def _levels(ax, levels, x_right) -> None:
    """Dotted reference levels, labelled at the right edge."""
    for name, level in zip(LEVEL_NAMES, levels, strict=True):
        ax.axhline(level, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.annotate(name, (x_right, level), xytext=(-4, 4), textcoords="offset points",
                    ha="right", va="bottom", color=theme.MUTED, fontsize=14)


@figure("ch01.loss", runs=("ch01.default",))
def loss(runs):
    """Training and validation loss of the default run (mean of the seeds), with reference levels."""
    run = runs["ch01.default"]
    step, val, train = run["step"], run["val_loss"], run["train_loss"]
    fig, ax = new_figure()
    ax.plot(step[1:], train[:, 1:].mean(axis=0), label="training loss", color=theme.PALETTE[1])
    ax.plot(step, val.mean(axis=0), label="validation loss", color=theme.PALETTE[0])
    _levels(ax, run["levels"], step[-1])
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats per character)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(2.0, 4.4)
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.93))
    return fig


@figure("ch01.start", runs=("ch01.default",))
def start(runs):
    """The first 200 steps: how fast the loss leaves chance and passes the unigram level."""
    run = runs["ch01.default"]
    step, val = run["step"], run["val_loss"]
    keep = step <= 200
    fig, ax = new_figure()
    for i, seed in enumerate(run["seeds"]):
        ax.plot(step[keep], val[i, keep], label=f"seed {int(seed)}", color=theme.PALETTE[i])
    _levels(ax, run["levels"], 200)
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_xlim(0, 200)
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.8))
    return fig


@figure("ch01.seeds", runs=("ch01.default",))
def seeds(runs):
    """Validation loss of each seed over the last 1,000 steps: the spread behind mean ± sd."""
    run = runs["ch01.default"]
    step, val = run["step"], run["val_loss"]
    keep = step >= step[-1] // 2
    fig, ax = new_figure()
    for i, seed in enumerate(run["seeds"]):
        ax.plot(step[keep], val[i, keep], label=f"seed {int(seed)}", color=theme.PALETTE[i])
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.legend(loc="upper right")
    return fig


@figure("ch01.arithmetic", runs=("ch01.arithmetic",))
def arithmetic(runs):
    """Loss against exact-match accuracy on sums: the loss flattens while accuracy climbs."""
    run = runs["ch01.arithmetic"]
    step = run["step"]
    fig, (top, bottom) = new_figure(2, 1, sharex=True)
    top.plot(step, run["val_loss"].mean(axis=0), color=theme.PALETTE[0])
    top.set_ylabel("loss (nats)")
    top.set_ylim(bottom=1.0)
    for name, key, colour in (("single-digit sums", "acc1", 2), ("two-digit sums", "acc2", 1)):
        acc = 100 * run[key]
        bottom.plot(step, acc.mean(axis=0), label=name, color=theme.PALETTE[colour])
        bottom.fill_between(step, acc.min(axis=0), acc.max(axis=0), color=theme.PALETTE[colour], alpha=0.2, linewidth=0)
    bottom.set_ylabel("exact match (%)")
    bottom.set_ylim(0, 100)
    bottom.set_xlabel("step")
    bottom.set_xlim(0, step[-1])
    bottom.legend(loc="upper left")
    return fig


@figure("ch01.lr_extremes", runs=("ch01.default", "ch01.lr_extremes"))
def lr_extremes(runs):
    """Validation loss for a learning rate far too low, the default, and far too high."""
    default, extremes = runs["ch01.default"], runs["ch01.lr_extremes"]
    fig, ax = new_figure()
    ax.plot(extremes["step"], extremes["low_val_loss"].mean(axis=0), label="100x too low", color=theme.PALETTE[2])
    ax.plot(default["step"], default["val_loss"].mean(axis=0), label="default", color=theme.PALETTE[0])
    ax.plot(extremes["step"], extremes["high_val_loss"].mean(axis=0), label="1,000x too high", color=theme.PALETTE[1])
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_xlim(0, default["step"][-1])
    ax.legend(loc="upper right")
    return fig


@figure("ch01.nan", runs=("ch01.lr_extremes",))
def nan(runs):
    """The NaN cascade: the training loss of every step until it stops being a number."""
    run = runs["ch01.lr_extremes"]
    loss = run["nan_step_loss"]
    step = np.arange(len(loss))
    finite = np.isfinite(loss)
    fig, ax = new_figure()
    ax.semilogy(step[finite], loss[finite], marker="o", color=theme.PALETTE[1])
    if not finite.all():
        first = int(step[~finite][0])
        ax.axvline(first, color=theme.TEXT, linestyle="--", linewidth=1.5)
        ax.annotate("NaN", (first, loss[finite].max()), xytext=(-8, 0),
                    textcoords="offset points", ha="right", va="top", color=theme.TEXT)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (nats, log scale)")
    return fig
