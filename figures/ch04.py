"""Chapter 4 figures: the narrow valley, steps against the condition number, Adam's bias
correction, AdamW against Adam with L2, and the four optimisers' sweeps and best curves.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import math

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

OPTIMISERS = (("sgd", "SGD"), ("momentum", "momentum"), ("adam", "Adam"), ("adamw", "AdamW"))
STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D")


def _best(finals: np.ndarray) -> int:
    """The rung with the lowest mean final loss over seeds (a rung with a diverged seed never is)."""
    means = finals.mean(axis=1)
    return int(np.argmin(np.where(np.isnan(means), np.inf, means)))


def _lr_text(lr: float) -> str:
    return f"{lr:g}"


@figure("ch04.valley", runs=("ch04.valley",))
def valley(runs):
    """The trajectories of SGD, momentum and Adam from one start in a valley of condition number 100."""
    run = runs["ch04.valley"]
    kappa = float(run["show_kappa"])
    fig, ax = new_figure()
    phi = np.linspace(0, 2 * math.pi, 200)
    for f in (0.5, 0.15, 0.05, 0.015, 0.005, 0.0015):
        ax.plot(np.sqrt(2 * f * kappa) * np.cos(phi), np.sqrt(2 * f) * np.sin(phi), color=theme.MUTED,
                linewidth=1, alpha=0.5)  # fmt: skip
    for i, (key, name) in enumerate(OPTIMISERS[:3]):
        path = run[f"path_{key}"]
        ax.plot(path[:, 0], path[:, 1], color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i],
                markersize=4, linewidth=2, label=name)  # fmt: skip
    ax.plot([path[0, 0]], [path[0, 1]], "o", color=theme.TEXT, markersize=9)
    ax.annotate("start", (path[0, 0], path[0, 1]), xytext=(6, 6), textcoords="offset points", fontsize=14,
                color=theme.TEXT)  # fmt: skip
    ax.plot([0], [0], "+", color=theme.TEXT, markersize=14, markeredgewidth=2)
    r = 1.1 * math.sqrt(kappa)
    ax.set_xlim(-r, r)
    ax.set_ylim(-1.1, 1.1)
    ax.set_xlabel(f"flat direction (curvature 1/{kappa:g})")
    ax.set_ylabel("steep direction (curvature 1)")
    ax.set_title(f"condition number {kappa:g}; the axes are scaled apart", fontsize=16, fontweight="normal")
    ax.legend(loc="lower right", ncols=3)
    return fig


@figure("ch04.steps", runs=("ch04.valley",))
def steps(runs):
    """Fewest steps to tolerance against the condition number, each optimiser at its best step size."""
    run = runs["ch04.valley"]
    kappa = run["kappa"]
    fig, ax = new_figure()
    lines = (("steps_sgd", "SGD"), ("steps_momentum", "momentum (β tuned too)"),
             ("steps_adam_0", "Adam, valley along an axis"), ("steps_adam_45", "Adam, valley at 45°"))  # fmt: skip
    for i, (key, name) in enumerate(lines):
        ax.plot(kappa, run[key], color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i], label=name)
    k = kappa[kappa >= 10]
    for power, name, at in ((1.0, "∝ κ", run["steps_sgd"]), (0.5, "∝ √κ", run["steps_momentum"])):
        ref = at[list(kappa).index(k[-1])] * (k / k[-1]) ** power
        ax.plot(k, ref, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.annotate(name, (k[0], ref[0]), xytext=(-6, 0), textcoords="offset points", ha="right", va="center",
                    color=theme.MUTED, fontsize=15)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("condition number κ")
    ax.set_ylabel("steps to f ≤ 10⁻⁶ f(x₀)")
    ax.legend(loc="upper left")
    return fig


@figure("ch04.bias_updates", runs=("ch04.bias",))
def bias_updates(runs):
    """RMS weight change per update over the first steps, with and without bias correction (no
    warmup, constant rate), and their ratio against the constant-gradient theory."""
    run = runs["ch04.bias"]
    t = run["t"]
    fig, (top, bottom) = new_figure(2, 1, sharex=True)
    for i, (key, name) in enumerate((("corrected", "bias-corrected"), ("uncorrected", "uncorrected"))):
        u = run[f"update_{key}"]
        top.plot(t, u.mean(axis=0), color=theme.PALETTE[i], linestyle=STYLES[i], label=name)
        top.fill_between(t, u.min(axis=0), u.max(axis=0), color=theme.PALETTE[i], alpha=0.2, linewidth=0)
    top.set_ylabel("RMS change")
    top.set_ylim(0, None)
    top.legend(loc="center right")
    ratio = run["update_uncorrected"] / run["update_corrected"]
    bottom.plot(t, ratio.mean(axis=0), color=theme.PALETTE[2], label="measured, uncorrected ÷ corrected")
    bottom.plot(t, run["theory"], color=theme.MUTED, linestyle=":", label="(1 − β₁ᵗ) / √(1 − β₂ᵗ)")
    bottom.set_ylabel("ratio")
    bottom.set_xlabel("update")
    bottom.set_xlim(1, t[-1])
    bottom.set_ylim(0, None)
    bottom.legend(loc="lower right", fontsize=14)
    return fig


@figure("ch04.bias_loss", runs=("ch04.bias",))
def bias_loss(runs):
    """Validation loss over the first few hundred steps, with and without bias correction, with no
    warmup and with the default run's warmup (mean of three seeds, band: their range)."""
    run = runs["ch04.bias"]
    step = run["step"]
    fig, ax = new_figure()
    lines = (("corrected", "corrected, no warmup"), ("uncorrected", "uncorrected, no warmup"),
             ("corrected_warmup", "corrected, warmup"), ("uncorrected_warmup", "uncorrected, warmup"))  # fmt: skip
    for i, (key, name) in enumerate(lines):
        v = run[f"val_{key}"]
        ax.plot(step, v.mean(axis=0), color=theme.PALETTE[i], linestyle=STYLES[i], label=name)
        ax.fill_between(step, v.min(axis=0), v.max(axis=0), color=theme.PALETTE[i], alpha=0.15, linewidth=0)
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats per character)")
    ax.set_xlim(0, step[-1])
    ax.legend(loc="upper right")
    return fig


@figure("ch04.decay", runs=("ch04.decay",))
def decay(runs):
    """Left: final validation loss against weight decay, AdamW and Adam with L2, each at its own best
    rate. Right: the weights' norm over training at those rates."""
    run = runs["ch04.decay"]
    decays = run["decays"]
    fig, (left, right) = new_figure(1, 2, width=9.6, height=5.4)
    names = {"adamw": "AdamW", "adam": "Adam + L2"}
    for i, kind in enumerate(names):
        keys = [f"{'adamw' if wd == 0 else kind}_{wd:g}".replace(".", "") for wd in decays]
        means, sds = [], []
        for key in keys:
            f = run[f"{key}_finals"][_best(run[f"{key}_finals"])]
            means.append(f.mean())
            sds.append(f.std(ddof=1) if len(f) > 1 else 0.0)
        left.errorbar(decays, means, yerr=sds, color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i],
                      capsize=4, label=names[kind])  # fmt: skip
    left.set_xlabel("weight decay λ")
    left.set_ylabel("final validation loss (nats)")
    left.legend(loc="upper left")
    step = run["norm_step"]
    for i, kind in enumerate(names):
        for j, wd in enumerate(decays):
            if wd == 0 and kind == "adam":
                continue
            key = f"{kind}_{wd:g}".replace(".", "")
            right.plot(step, run[f"{key}_norms"].mean(axis=0), color=theme.PALETTE[i], linestyle=STYLES[j],
                       marker=MARKERS[i], markersize=5, label=f"{names[kind]}, λ {wd:g}")  # fmt: skip
    right.set_xlabel("step")
    right.set_ylabel("weights' norm (log scale)")
    right.set_yscale("log")
    ticks = [1, 2, 5, 10, 20, 50]
    right.set_yticks(ticks, [str(t) for t in ticks])
    right.set_yticks([], minor=True)
    right.legend(loc="center right", fontsize=12)
    return fig


@figure("ch04.sweep", runs=("ch04.sweep",))
def sweep(runs):
    """Final validation loss against learning rate for the four optimisers (mean of three seeds;
    a rate where any seed diverged is left out), best rates marked."""
    run = runs["ch04.sweep"]
    fig, ax = new_figure()
    for i, (key, name) in enumerate(OPTIMISERS):
        lrs, finals = run[f"{key}_lrs"], run[f"{key}_finals"]
        means = finals.mean(axis=1)
        b = _best(finals)
        ax.plot(lrs, means, color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i],
                label=f"{name} (best {_lr_text(lrs[b])})")  # fmt: skip
        ax.plot([lrs[b]], [means[b]], marker=MARKERS[i], markersize=15, color=theme.PALETTE[i], fillstyle="none",
                markeredgewidth=2)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate")
    ax.set_ylabel("final validation loss (nats)")
    ax.set_ylim(None, min(4.3, ax.get_ylim()[1]))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=14)
    return fig


@figure("ch04.best", runs=("ch04.sweep",))
def best(runs):
    """Validation loss of the four optimisers, each at its own best rate, and AdamW at the default rate."""
    run = runs["ch04.sweep"]
    step = run["step"]
    fig, ax = new_figure()
    for i, (key, name) in enumerate(OPTIMISERS):
        lrs, finals = run[f"{key}_lrs"], run[f"{key}_finals"]
        v = run[f"{key}_best_val"]
        ax.plot(step, v.mean(axis=0), color=theme.PALETTE[i], linestyle=STYLES[i],
                label=f"{name}, lr {_lr_text(lrs[_best(finals)])}")  # fmt: skip
    ax.axhline(run["adamw_default_finals"].mean(), color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.annotate(f"AdamW at the default lr {_lr_text(run['adamw_default_lrs'][0])}: end", (step[-1],
                run["adamw_default_finals"].mean()), xytext=(-4, 4), textcoords="offset points", ha="right",
                va="bottom", color=theme.MUTED, fontsize=14)  # fmt: skip
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats per character)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(1.9, 3.4)
    ax.legend(loc="upper right")
    return fig
