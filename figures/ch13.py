"""Chapter 13 figures: the toy IsoFLOP profiles and their minima, the extrapolation, a dashboard of
monitored runs, resuming with parts of the checkpoint left out, and goodput against the interval.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D")
RESUME_STYLES = ("-", "--", "-.", ":", (0, (8, 2, 1, 2, 1, 2)))  # five arms, five dash patterns


def _ragged(run, name: str) -> list:
    """A series whose rows differ in length (one row per budget)."""
    return run.record.series[name]


def _value(run, key: str) -> float:
    return float(run.measurements[key]["value"])


def _budget(c: float) -> str:
    e = int(np.floor(np.log10(c)))
    return f"{c / 10**e:g}e{e} FLOPs"


@figure("ch13.isoflop", runs=("ch13.isoflop",))
def isoflop(runs):
    """Final loss against N per budget (mean and seeds' range at each size's best rate), parabolas, minima."""
    run = runs["ch13.isoflop"]
    budgets, held = run["budgets"], int(run["held"])
    sizes, finals, parabolas = _ragged(run, "sizes"), _ragged(run, "final"), run["parabolas"]
    fig, ax = new_figure()
    for b, c in enumerate(budgets):
        n = np.array(sizes[b], dtype=float)
        f = np.array(finals[b], dtype=float)
        colour = theme.PALETTE[b % len(theme.PALETTE)]
        mean = f.mean(axis=1)
        label = _budget(c).replace(" FLOPs", "") + (" (held out)" if b == held else "")
        ax.errorbar(n, mean, yerr=f.std(axis=1, ddof=1), fmt=MARKERS[b % 4], color=colour, capsize=3, label=label)
        a, bb, cc, lo, hi = parabolas[b]
        x = np.linspace(lo - 0.05, hi + 0.05, 100)
        ax.plot(10**x, a * x * x + bb * x + cc, color=colour, linestyle=STYLES[b % 4], linewidth=2)
        xm = -bb / (2 * a)
        ax.scatter([10**xm], [a * xm * xm + bb * xm + cc], s=200, marker="*", color=colour, edgecolor="black", zorder=5)
    ax.set_xscale("log")
    ax.set_xlabel("parameters N (log scale)")
    ax.set_ylabel("final validation loss (nats)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=14, title="budget C (FLOPs)", title_fontsize=14)
    return fig


@figure("ch13.frontier", runs=("ch13.isoflop",))
def frontier(runs):
    """N_opt against C: the fitted power law on the smaller budgets, extended to the held-out one, with
    Chinchilla's and Kaplan's slopes drawn through the first minimum for comparison."""
    run = runs["ch13.isoflop"]
    budgets, n_opt, held = run["budgets"], run["n_opt"], int(run["held"])
    fit = [int(i) for i in run["fit"]]
    e, k = float(run["exponent"]), float(run["prefactor"])
    lo, mid, hi = run["pred_n"]
    fig, ax = new_figure()
    c = np.geomspace(budgets[0], budgets[-1], 50)
    ax.plot(c, k * c**e, color=theme.PALETTE[0], linewidth=2.5, label=f"fit on {len(fit)} budgets: slope {e:.2f}")
    ax.scatter(
        budgets[fit], n_opt[fit], s=90, marker="o", color=theme.PALETTE[0], zorder=4, label="minima used in the fit"
    )
    ax.errorbar(
        [budgets[held]],
        [mid],
        yerr=[[mid - lo], [hi - mid]],
        fmt="none",
        ecolor=theme.PALETTE[0],
        capsize=6,
        linewidth=2,
        label="prediction: bootstrap 95% interval",
    )
    ax.scatter(
        [budgets[held]],
        [n_opt[held]],
        s=160,
        marker="D",
        color=theme.PALETTE[1],
        zorder=5,
        label="held-out budget: measured",
    )
    c0, n0 = budgets[0], n_opt[0]
    for slope, style, name in ((0.5, ":", "slope 0.5 (Chinchilla)"), (0.73, "--", "slope 0.73 (Kaplan)")):
        ax.plot(c, n0 * (c / c0) ** slope, color=theme.MUTED, linestyle=style, linewidth=2, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("compute budget C (FLOPs, log scale)")
    ax.set_ylabel("N at the minimum (log scale)")
    ax.legend(loc="upper left", fontsize=14)
    return fig


def _log_axis(ax) -> None:
    """A log y axis labelled at whole decades only (minor ticks unlabelled)."""
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=4))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _smooth(x: np.ndarray, k: int) -> np.ndarray:
    kernel = np.ones(k) / k
    return np.convolve(x, kernel, mode="valid")


@figure("ch13.dashboard", runs=("ch13.monitor",))
def dashboard(runs):
    """Training loss, gradient norm, update-to-weight ratio and learning rate at three rates (mean of 3 seeds)."""
    run = runs["ch13.monitor"]
    step, rates = run["step"], run["rates"]
    fig, axes = new_figure(2, 2, sharex=True)
    panels = (
        (axes[0, 0], run["loss"], "train loss", False),
        (axes[0, 1], run["grad_norm"], "grad norm", True),
        (axes[1, 0], run["ratio"], "update/weight", True),
    )
    k = 20
    for ax, data, label, log in panels:
        for i, rate in enumerate(rates):
            y = _smooth(data[i].mean(axis=0), k)
            ax.plot(step[k - 1 :], y, color=theme.PALETTE[i], linestyle=STYLES[i], linewidth=2, label=f"lr {rate:g}")
        ax.set_ylabel(label)
        if log:
            _log_axis(ax)
    grad = axes[0, 1]
    grad.set_yticks([0.2, 0.5, 1, 2, 5, 10, 20], ["0.2", "0.5", "1", "2", "5", "10", "20"])
    grad.axhline(1.0, color=theme.MUTED, linewidth=1.2, linestyle=":")
    grad.annotate("clip", (step[-1], 1.0), xytext=(0, 4), textcoords="offset points", ha="right", fontsize=14)
    lr = run["lr"]
    for i, rate in enumerate(rates):
        axes[1, 1].plot(step, lr[i], color=theme.PALETTE[i], linestyle=STYLES[i], linewidth=2, label=f"lr {rate:g}")
    _log_axis(axes[1, 1])
    axes[1, 1].set_ylabel("learning rate")
    axes[1, 0].set_xlabel("step")
    axes[1, 1].set_xlabel("step")
    axes[0, 0].legend(fontsize=14, loc="upper right")
    return fig


@figure("ch13.resume", runs=("ch13.resume",))
def resume(runs):
    """Training loss after resuming, minus the uninterrupted run's, for each part left out (mean of 3 seeds)."""
    run = runs["ch13.resume"]
    saved = int(run["saved"])
    ref = run["loss_ref"]
    arms = (
        ("whole", "whole checkpoint"),
        ("moments", "no Adam moments"),
        ("step", "no step count"),
        ("data", "no data state"),
        ("all_but_weights", "weights only"),
    )
    fig, ax = new_figure()
    k = 25
    x = np.arange(saved + k, ref.shape[1] + 1)
    for i, (name, label) in enumerate(arms):
        d = (run[f"loss_{name}"] - ref)[:, saved:].mean(axis=0)
        ax.plot(
            x,
            _smooth(d, k),
            color=theme.PALETTE[i % len(theme.PALETTE)],
            linestyle=RESUME_STYLES[i],
            linewidth=2.5,
            label=label,
        )
    ax.axhline(0, color=theme.MUTED, linewidth=1)
    ax.set_xlabel(f"step (resumed at {saved})")
    ax.set_ylabel("loss − uninterrupted (nats)")
    ax.legend(fontsize=14, loc="upper right", frameon=True)
    return fig


@figure("ch13.goodput", runs=("ch13.goodput",))
def goodput(runs):
    """Goodput against the checkpoint interval: simulated (3 failure seeds), expected, Young's interval."""
    run = runs["ch13.goodput"]
    tau, sim, expected = run["tau_min"], run["sim"], run["expected"]
    fig, ax = new_figure()
    ax.plot(tau, expected, color=theme.PALETTE[0], linewidth=3, label="expected (closed form)")
    for s in range(sim.shape[0]):
        ax.scatter(
            tau,
            sim[s],
            s=30,
            marker=MARKERS[s],
            color=theme.PALETTE[1],
            label=f"simulated ({sim.shape[0]} seeds)" if s == 0 else None,
        )
    young = float(run["young_min"])
    ax.axvline(young, color=theme.MUTED, linestyle="--", linewidth=2)
    ax.annotate("√(2δM)", (young, float(expected.max())), xytext=(8, -28), textcoords="offset points", fontsize=16)
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval τ (minutes, log scale)")
    ax.set_ylabel("goodput (useful / elapsed)")
    ax.legend(fontsize=14, loc="lower center")
    return fig
