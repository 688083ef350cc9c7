"""Chapter 3 figures: the finite-difference V, the residual highway, and what the backward
pass must save.

Compared curves differ in line style and marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

_CURVES = (  # series, label, colour, line style, marker
    ("f64_central", "float64, central", 0, "-", "o"),
    ("f64_one_sided", "float64, one-sided", 1, "--", "s"),
    ("f32_central", "float32, central", 2, "-.", "^"),
    ("f32_one_sided", "float32, one-sided", 3, ":", "v"),
)


PARTS = (  # the parts of model.experiments.ch03_backprop.hand_count, in its order
    "token ids",
    "norms: inputs, mean, 1/std",
    "attention: input, q, k, v, output",
    "attention matrix",
    "MLP: input, GELU in and out",
    "head input",
    "loss: log-probabilities, targets",
)


def _geo(values: np.ndarray) -> np.ndarray:
    """The geometric mean over seeds (axis 0)."""
    return np.exp(np.log(values).mean(axis=0))


@figure("ch03.fd_v", runs=("ch03.gradient",))
def fd_v(runs):
    """Relative error of the difference quotients against h (log-log): the V of truncation and
    round-off, for central and one-sided differences in float64 and float32."""
    run = runs["ch03.gradient"]
    h = np.asarray(run["h"])
    fig, ax = new_figure()
    for key, label, colour, style, marker in _CURVES:
        err = np.asarray(run[key])
        ax.loglog(h, _geo(err), label=label, color=theme.PALETTE[colour], linestyle=style, marker=marker, markersize=6)
        ax.fill_between(h, err.min(axis=0), err.max(axis=0), color=theme.PALETTE[colour], alpha=0.15, linewidth=0)
    ax.axhline(1.0, color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.annotate(
        "100% error: the nudge rounds away",
        (h.min(), 1.0),
        xytext=(4, -6),
        textcoords="offset points",
        ha="left",
        va="top",
        color=theme.MUTED,
        fontsize=14,
    )
    ax.set_xlabel("step h (weight units)")
    ax.set_ylabel("relative error of the quotient")
    ax.set_ylim(1e-13, 30)
    ax.legend(loc="lower right", ncols=2, fontsize=14)
    return fig


@figure("ch03.residual", runs=("ch03.residual",))
def residual(runs):
    """Per layer of the 8-layer pre-LN Decoder, with and without residual connections: the gradient
    norm at the layer's input, and the same times the input's norm (scale-free); at initialisation,
    and after training for the arms that learned (geometric mean of the seeds)."""
    run = runs["ch03.residual"]
    depth = int(max(run["depths"]))
    layers = np.arange(1, depth + 1)
    from matplotlib.ticker import NullFormatter

    fig, axes = new_figure(1, 2)  # fills its box
    for ax, key, ylabel in ((axes[0], "grad", "‖∂L/∂x‖, raw"), (axes[1], "scaled", "‖∂L/∂x‖ · ‖x‖, scale-free")):
        for tag, label, colour, style in (("res", "with residuals", 0, "-"), ("nores", "without", 1, "--")):
            for when, marker, fill in (("init", "o", "none"), ("trained", "s", "full")):
                name = f"L{depth}.{tag}.{when}.{key}"
                if name not in set(run):  # an arm that collapsed has no trained profile
                    continue
                moment = "at init" if when == "init" else "trained"
                ax.semilogy(
                    layers,
                    _geo(np.asarray(run[name])),
                    color=theme.PALETTE[colour],
                    linestyle=style,
                    marker=marker,
                    fillstyle=fill,
                    markersize=8,
                    label=f"{label}, {moment}",
                )
        ax.set_xlabel("layer (1: nearest the embedding)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(layers)
        ax.yaxis.set_minor_formatter(NullFormatter())  # decade labels only: less than a decade shows minor ones
    axes[1].set_yticks([0.2, 0.5, 1, 2, 5], ["0.2", "0.5", "1", "2", "5"])  # under two decades: name the values
    axes[1].legend(loc="center", fontsize=13)  # the scale-free panel has room between its lines
    return fig


@figure("ch03.memory", runs=("ch03.memory",))
def memory(runs):
    """Bytes saved for the backward pass against batch and against context (log-log), with the
    weights' own bytes for reference."""
    run = runs["ch03.memory"]
    fig, (left, right) = new_figure(1, 2, sharey=True)
    left.loglog(run["batches"], run["batch_bytes"], color=theme.PALETTE[0], marker="o", label="saved for backward")
    left.axhline(run["weights"], color=theme.MUTED, linestyle=":", linewidth=2, label="the weights")
    left.set_xlabel("batch (windows of 16)")
    left.set_ylabel("bytes")
    left.legend(loc="upper left", fontsize=14)
    right.loglog(
        run["contexts"],
        run["context_bytes"],
        color=theme.PALETTE[1],
        linestyle="--",
        marker="s",
        label="saved for backward",
    )
    right.loglog(
        run["contexts"], run["context_weights"], color=theme.MUTED, linestyle=":", linewidth=2, label="the weights"
    )
    right.set_xlabel("context (batch of 32)")
    right.legend(loc="upper left", fontsize=14)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
    return fig


@figure("ch03.saved_parts", runs=("ch03.memory",))
def saved_parts(runs):
    """The default step's saved bytes by part of the network, and the weights' bytes as a bar of their own."""
    run = runs["ch03.memory"]
    kib = np.asarray(run["part_bytes"], dtype=float) / 1024
    order = np.argsort(kib)
    names = ["the weights themselves"] + [PARTS[i] for i in order]  # barh draws the first at the bottom
    values = [float(run["weights"]) / 1024] + list(kib[order])
    fig, ax = new_figure()
    bars = ax.barh(names, values, color=[theme.PALETTE[1]] + [theme.PALETTE[0]] * len(order))
    bars[0].set_hatch("//")
    for bar, value in zip(bars, values, strict=True):
        ax.annotate(
            f"{value:,.0f} KiB",
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=15,
            color=theme.TEXT,
        )
    ax.set_xlabel("KiB (batch 32, float32)")
    ax.set_xlim(0, max(values) * 1.25)
    ax.grid(axis="y", visible=False)
    return fig
