"""Chapter 6 figures: loss at init against the init scale, pre-LN and post-LN by depth (gradients
at init and tuned training), the best rate against width in SP and µP, and the coordinate check.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import math

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _ticks(axis, values) -> None:
    """Label a log axis at ``values`` only, written plainly (0.02, not 2 x 10^-2)."""
    from matplotlib.ticker import NullLocator

    values = sorted({float(v) for v in values})
    axis.set_ticks(values, [f"{v:g}" for v in values])
    axis.set_minor_locator(NullLocator())


@figure("ch06.init_scale", runs=("ch06.init_scale",))
def init_scale(runs):
    """Left: loss at step 0 against the init std. Right: final loss, each std at its own best rate."""
    run = runs["ch06.init_scale"]
    scales, loss0, final = np.asarray(run["scales"]), np.asarray(run["loss0"]), np.asarray(run["final"])
    best_lr = np.asarray(run["best_lr"])
    fig, (a, b) = new_figure(1, 2)
    for ax, y, title in ((a, loss0, "Loss at step 0"), (b, final, "After training, own best rate")):
        ax.plot(scales, y.mean(axis=1), color=theme.PALETTE[0], marker="o")
        for s in range(y.shape[1]):
            ax.scatter(scales, y[:, s], color=theme.MUTED, marker="x", s=40, zorder=3)
        ax.set_xscale("log")
        _ticks(ax.xaxis, scales)
        ax.set_xlabel("init std")
        ax.set_title(title)
    a.axhline(math.log(64), color=theme.PALETTE[2], linestyle="--", linewidth=1.5)
    a.annotate("ln 64, uniform", (scales[0], math.log(64)), xytext=(0, 6), textcoords="offset points",
               color=theme.PALETTE[2], va="bottom")  # fmt: skip
    a.set_ylabel("validation loss (nats)")
    for x, y, r in zip(scales, final.mean(axis=1), best_lr, strict=True):
        b.annotate(f"{r:g}", (x, y), xytext=(0, 8), textcoords="offset points", ha="center", color=theme.MUTED)
    b.set_ylabel("final loss (nats); label: best rate")
    return fig


def _depth_panels(run, key: str, ylabel: str):
    from matplotlib.ticker import NullFormatter

    depths = [int(d) for d in run["depths"]]
    fig, axes = new_figure(1, len(depths), sharey=True)
    for ax, L in zip(axes, depths, strict=True):
        blocks = np.arange(1, L + 1)
        for i, norm in enumerate(("pre", "post")):
            g = np.asarray(run[f"{norm}.d{L}.{key}"])
            x = blocks if g.shape[1] == L else np.arange(0, L + 1)
            ax.plot(x, g.mean(axis=0), color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i],
                    label=f"{norm}-LN")  # fmt: skip
        if max(depths) == L and f"gpt2.d{L}.{key}" in run:
            g = np.asarray(run[f"gpt2.d{L}.{key}"])
            x = blocks if g.shape[1] == L else np.arange(0, L + 1)
            ax.plot(x, g.mean(axis=0), color=theme.PALETTE[2], linestyle=STYLES[2], marker=MARKERS[2],
                    label="pre-LN, GPT-2 scaled")  # fmt: skip
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{L} block{'s' if L > 1 else ''}")
        ax.set_xlabel("block")
        ax.set_xticks(blocks if L <= 4 else [1, 4, 8])
    axes[0].set_ylabel(ylabel)
    handles, labels = axes[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig


@figure("ch06.depth_grad", runs=("ch06.depth",))
def depth_grad(runs):
    """Each block's gradient norm at init, pre-LN against post-LN, at every depth."""
    return _depth_panels(runs["ch06.depth"], "grad", "gradient norm at init")


@figure("ch06.depth_train", runs=("ch06.depth",))
def depth_train(runs):
    """Final loss against depth, pre-LN and post-LN with and without warmup, each at its best rate."""
    run = runs["ch06.depth"]
    depths = [int(d) for d in run["depths"]]
    warmups = [int(w) for w in run["warmups"]]
    fig, ax = new_figure()
    k = 0
    for norm in ("pre", "post"):
        for w in warmups:
            means, los, his = [], [], []
            for L in depths:
                f = np.asarray(run[f"{norm}.d{L}.w{w}.final"])[int(run[f"{norm}.d{L}.w{w}.best"])]
                means.append(f.mean())
                los.append(f.min())
                his.append(f.max())
            ax.errorbar(depths, means, yerr=[np.subtract(means, los), np.subtract(his, means)], capsize=4,
                        color=theme.PALETTE[k], linestyle=STYLES[k], marker=MARKERS[k],
                        label=f"{norm}-LN, warmup {w}")  # fmt: skip
            k += 1
    L = max(depths)
    g = f"gpt2.d{L}.w{warmups[-1]}"
    if f"{g}.final" in run:
        f = np.asarray(run[f"{g}.final"])[int(run[f"{g}.best"])]
        ax.scatter([L], [f.mean()], s=160, marker="*", color=theme.PALETTE[4], zorder=4,
                   label=f"pre-LN, GPT-2 scaled, warmup {warmups[-1]}")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(depths, [str(d) for d in depths])
    ax.set_xlabel("blocks")
    ax.set_ylabel("final validation loss (nats)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside right center")
    return fig


@figure("ch06.width_lr", runs=("ch06.width",))
def width_lr(runs):
    """Final loss against the rate, one curve per width, standard parametrisation and µP side by side."""
    run = runs["ch06.width"]
    widths = [int(w) for w in run["widths"]]
    fig, axes = new_figure(1, 2, sharey=True)
    for ax, param, title in zip(axes, ("standard", "mup"), ("Standard", "µP"), strict=True):
        for i, d in enumerate(widths):
            p = f"{param}.w{d}"
            rates, final = np.asarray(run[f"{p}.rates"]), np.asarray(run[f"{p}.final"])
            mean = np.where(np.isnan(final).any(axis=1), np.nan, final.mean(axis=1))
            (line,) = ax.plot(rates, mean, color=theme.PALETTE[i % len(theme.PALETTE)],
                              linestyle=STYLES[i % len(STYLES)], marker=MARKERS[i], label=f"width {d}")  # fmt: skip
            b = int(run[f"{p}.best"])
            ax.scatter([rates[b]], [mean[b]], s=260, facecolor="none", edgecolor=line.get_color(), linewidth=2.5,
                       zorder=4)  # fmt: skip
        ax.set_xscale("log")
        _ticks(ax.xaxis, [r for d in widths for r in np.asarray(run[f"{param}.w{d}.rates"])])
        ax.set_xlabel("peak learning rate")
        ax.set_title(title)
    axes[0].set_ylabel("final loss (nats)")
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig


@figure("ch06.best_lr", runs=("ch06.width",))
def best_lr(runs):
    """The best rate against width, standard parametrisation and µP."""
    run = runs["ch06.width"]
    widths = [int(w) for w in run["widths"]]
    fig, ax = new_figure()
    for i, (param, label) in enumerate((("standard", "standard"), ("mup", "µP"))):
        ax.plot(widths, np.asarray(run[f"{param}.best_lr"]), color=theme.PALETTE[i], linestyle=STYLES[i],
                marker=MARKERS[i], markersize=12, label=label)  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _ticks(ax.yaxis, [r for p in ("standard", "mup") for r in np.asarray(run[f"{p}.best_lr"])])
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.set_xlabel("width (d_model)")
    ax.set_ylabel("best peak rate")
    ax.legend(loc="best")
    return fig


@figure("ch06.coord", runs=("ch06.coord",))
def coord(runs):
    """Mean |activation| against width after 0 to a few steps: rows standard and µP, columns activations."""
    from matplotlib.ticker import NullFormatter

    run = runs["ch06.coord"]
    widths = np.asarray(run["widths"])
    steps = [int(s) for s in run["steps"]]
    names = ("embedding", "attention out", "MLP out", "logits")
    cols = (2, 3)  # MLP out and logits; the attention output's slopes are bound in the slide's notes
    fig, axes = new_figure(2, len(cols), sharex=True)
    for r, (param, label) in enumerate((("standard", "standard"), ("mup", "µP"))):
        grid = np.asarray(run[param])  # (activation, step, width, seed)
        for c, a in enumerate(cols):
            ax = axes[r, c]
            for t in steps:
                ax.plot(widths, grid[a, t].mean(axis=-1), color=theme.PALETTE[t % len(theme.PALETTE)],
                        linestyle=STYLES[t % len(STYLES)], marker=MARKERS[t % len(MARKERS)],
                        label=f"step {t}")  # fmt: skip
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(widths[::2], [str(int(w)) for w in widths[::2]])
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title(f"{label}: {names[a]}")
            if r == 1:
                ax.set_xlabel("width")
        axes[r, 0].set_ylabel("mean |x|")
    handles, labels = axes[0, -1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    return fig
