"""Chapter 4 figures: the narrow valley, steps against the condition number, Adam's bias
correction, AdamW against Adam with L2 over rate x decay, and the four optimisers' sweeps and
best curves, each at its own best (rate, decay).

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
        ax.plot(
            np.sqrt(2 * f * kappa) * np.cos(phi),
            np.sqrt(2 * f) * np.sin(phi),
            color=theme.MUTED,
            linewidth=1,
            alpha=0.5,
        )
    for i, (key, name) in enumerate(OPTIMISERS[:3]):
        path = run[f"path_{key}"]
        ax.plot(
            path[:, 0],
            path[:, 1],
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            marker=MARKERS[i],
            markersize=4,
            linewidth=2,
            label=name,
        )
    ax.plot([path[0, 0]], [path[0, 1]], "o", color=theme.TEXT, markersize=9)
    ax.annotate(
        "start", (path[0, 0], path[0, 1]), xytext=(6, 6), textcoords="offset points", fontsize=14, color=theme.TEXT
    )
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
    lines = (
        ("steps_sgd", "SGD"),
        ("steps_momentum", "momentum (β tuned too)"),
        ("steps_adam_0", "Adam, valley along an axis"),
        ("steps_adam_45", "Adam, valley at 45°"),
    )
    for i, (key, name) in enumerate(lines):
        ax.plot(kappa, run[key], color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i], label=name)
    k = kappa[kappa >= 10]
    for power, name, at in ((1.0, "∝ κ", run["steps_sgd"]), (0.5, "∝ √κ", run["steps_momentum"])):
        ref = at[list(kappa).index(k[-1])] * (k / k[-1]) ** power
        ax.plot(k, ref, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.annotate(
            name,
            (k[0], ref[0]),
            xytext=(-6, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            color=theme.MUTED,
            fontsize=15,
        )
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
    warmup and with the default run's warmup, each at its own best constant rate (mean of three
    seeds, band: their range)."""
    run = runs["ch04.bias"]
    step = run["step"]
    fig, ax = new_figure()
    lines = (
        ("corrected", "corrected, no warmup"),
        ("uncorrected", "uncorrected, no warmup"),
        ("corrected_warmup", "corrected, warmup"),
        ("uncorrected_warmup", "uncorrected, warmup"),
    )
    for i, (key, name) in enumerate(lines):
        v = run[f"val_{key}"]
        ax.plot(
            step,
            v.mean(axis=0),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            label=f"{name}, lr {_lr_text(float(run[f'lr_{key}']))}",
        )
        ax.fill_between(step, v.min(axis=0), v.max(axis=0), color=theme.PALETTE[i], alpha=0.15, linewidth=0)
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(None, 4.3)
    ax.legend(loc="upper right", fontsize=14)
    return fig


def _short(x: float) -> str:
    """A weight decay as a short tick label: 0, 1e-4, 3e-2, 0.1, 0.3."""
    if x == 0 or x >= 0.1:
        return f"{x:g}"
    mant, exp = f"{x:.0e}".split("e")
    return f"{mant}e{int(exp)}"


def _cell_best(finals: np.ndarray) -> tuple[int, int]:
    """The (decay, rate) cell with the lowest mean over seeds; finals (decays, rates, seeds)."""
    means = finals.mean(axis=2)
    k = int(np.argmin(np.where(np.isnan(means), np.inf, means)))
    return k // means.shape[1], k % means.shape[1]


@figure("ch04.decay", runs=("ch04.sweep",))
def decay(runs):
    """Heat maps of the final validation loss over learning rate x weight decay, AdamW and Adam
    with L2 (mean of three seeds), each method's best cell outlined."""
    from matplotlib.patches import Rectangle

    run = runs["ch04.sweep"]
    fig, axes = new_figure(1, 2)
    lo = min(float(np.nanmin(run[f"{k}_finals"].mean(axis=2))) for k in ("adamw", "adam"))
    for ax, (kind, name) in zip(axes, (("adamw", "AdamW"), ("adam", "Adam + L2")), strict=True):
        lrs, wds, finals = run[f"{kind}_lrs"], run[f"{kind}_decays"], run[f"{kind}_finals"]
        means = finals.mean(axis=2)  # (decays, rates)
        image = ax.imshow(
            means, cmap="viridis_r", vmin=lo, vmax=min(3.4, float(np.nanmax(means))), aspect="auto", origin="lower"
        )
        for d in range(means.shape[0]):
            for r in range(means.shape[1]):
                v = means[d, r]
                dark = v < lo + 0.5 * (min(3.4, float(np.nanmax(means))) - lo)
                ax.text(
                    r, d, f"{v:.2f}", ha="center", va="center", fontsize=12, color="white" if not dark else theme.TEXT
                )
        d, r = _cell_best(finals)
        ax.add_patch(Rectangle((r - 0.5, d - 0.5), 1, 1, fill=False, edgecolor=theme.TEXT, linewidth=3))
        ax.set_xticks(range(len(lrs)), [_lr_text(x) for x in lrs], fontsize=13)
        ax.set_yticks(range(len(wds)), [_short(x) for x in wds], fontsize=13)
        ax.set_xlabel("peak learning rate")
        ax.set_title(name, fontsize=18)
        ax.grid(False)
    axes[0].set_ylabel("weight decay λ")
    fig.colorbar(image, ax=axes, shrink=0.9, label="final loss (nats)")
    return fig


def _best_row(run, key: str) -> tuple[list[float], np.ndarray, float]:
    """An optimiser's rate ladder and finals (rates, seeds) at its best decay, and that decay."""
    d, _ = _cell_best(run[f"{key}_finals"])
    return run[f"{key}_lrs"], run[f"{key}_finals"][d], float(run[f"{key}_decays"][d])


@figure("ch04.sweep", runs=("ch04.sweep",))
def sweep(runs):
    """Final validation loss against learning rate for the four optimisers, each at its best weight
    decay (mean of three seeds; a rate where any seed diverged is left out), best rates marked."""
    run = runs["ch04.sweep"]
    fig, ax = new_figure()
    for i, (key, name) in enumerate(OPTIMISERS):
        lrs, finals, wd = _best_row(run, key)
        means = finals.mean(axis=1)
        b = _best(finals)
        ax.plot(
            lrs,
            means,
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            marker=MARKERS[i],
            label=f"{name}, λ {_lr_text(wd)} (best {_lr_text(lrs[b])})",
        )
        ax.plot(
            [lrs[b]],
            [means[b]],
            marker=MARKERS[i],
            markersize=15,
            color=theme.PALETTE[i],
            fillstyle="none",
            markeredgewidth=2,
        )
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate")
    ax.set_ylabel("final validation loss (nats)")
    ax.set_ylim(None, min(3.0, ax.get_ylim()[1]))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=14)
    return fig


@figure("ch04.best", runs=("ch04.sweep",))
def best(runs):
    """Validation loss of the four optimisers, each at its own best (rate, decay), and AdamW at the
    default run's settings."""
    run = runs["ch04.sweep"]
    step = run["step"]
    fig, ax = new_figure()
    for i, (key, name) in enumerate(OPTIMISERS):
        lrs, finals, wd = _best_row(run, key)
        v = run[f"{key}_best_val"]
        ax.plot(
            step,
            v.mean(axis=0),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            label=f"{name}, lr {_lr_text(lrs[_best(finals)])}, λ {_lr_text(wd)}",
        )
    end = float(run.measurements["ch04.sweep.adamw_default.val_loss"]["value"])
    lr = float(run.measurements["ch04.sweep.default_lr"]["value"])
    ax.axhline(end, color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.annotate(
        f"AdamW at the default lr {_lr_text(lr)}: end",
        (step[-1], end),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color=theme.MUTED,
        fontsize=14,
    )
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(1.9, 3.4)
    ax.legend(loc="upper right", fontsize=15)
    return fig
