"""Chapter 5 figures: the learning-rate sweep, failure shapes, warmup and Adam's early step,
the three schedules, their measured curves, the WSD branch, batch size and the noise scale.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D")


def _value(run, key: str) -> float:
    """A measurement the run recorded (its mean)."""
    return float(run.measurements[key]["value"])


def _band(ax, step, values, label, colour, style) -> None:
    """The mean of the seeds as a line, their range as a light band."""
    ax.plot(step, np.nanmean(values, axis=0), label=label, color=colour, linestyle=style)
    ax.fill_between(step, np.nanmin(values, axis=0), np.nanmax(values, axis=0), color=colour, alpha=0.2, linewidth=0)


def _lr(rate: float) -> str:
    return f"{rate:g}"


@figure("ch05.sweep", runs=("ch05.sweep",))
def sweep(runs):
    """Final validation loss against the peak rate: each seed, the mean, the band, the blow-up."""
    run = runs["ch05.sweep"]
    rates, final, blow = run["rates"], run["final"], run["blowup_step"]
    best, margin = int(run["best"]), float(run["margin"])
    fig, ax = new_figure()
    ok = np.isnan(blow).all(axis=1)
    mean = final.mean(axis=1)
    ax.plot(rates[ok], mean[ok], color=theme.PALETTE[0], marker="o", label="mean of 3 seeds")
    for s in range(final.shape[1]):
        ax.scatter(
            rates, final[:, s], color=theme.MUTED, marker="x", s=40, zorder=3, label="each seed" if s == 0 else None
        )
    level = mean[best] + margin
    ax.axhline(level, color=theme.PALETTE[2], linestyle="--", linewidth=1.5)
    ax.annotate(
        f"best + {margin:g} nats: the good band",
        (rates[0], level),
        xytext=(0, 4),
        textcoords="offset points",
        color=theme.PALETTE[2],
        fontsize=14,
        va="bottom",
    )
    ax.scatter(
        [rates[best]],
        [mean[best]],
        s=220,
        facecolor="none",
        edgecolor=theme.PALETTE[1],
        linewidth=2.5,
        zorder=4,
        label=f"best, {_lr(rates[best])}",
    )
    for i in np.flatnonzero(~ok):
        ax.annotate(
            "blows up: loss\nabove its start",
            (rates[i], final[i].max()),
            xytext=(-12, -6),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=14,
            color=theme.PALETTE[1],
        )
    ax.axvline(2e-3, color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.annotate(
        "default run's rate",
        (2e-3, ax.get_ylim()[1]),
        xytext=(4, -4),
        textcoords="offset points",
        va="top",
        fontsize=14,
        color=theme.MUTED,
    )
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate (AdamW, warmup 100 + cosine, 2,000 steps)")
    ax.set_ylabel("final validation loss (nats/char)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.6, 0.95))
    return fig


@figure("ch05.failures", runs=("ch05.sweep",))
def failures(runs):
    """Validation curves at the too-low rate, the best rate and the too-high rate."""
    run = runs["ch05.sweep"]
    rates, step, val = run["rates"], run["step"], run["val_loss"]
    best = int(run["best"])
    fig, ax = new_figure()
    picks = ((0, "too low"), (best, "best"), (len(rates) - 1, "too high"))
    for k, (i, name) in enumerate(picks):
        _band(ax, step, val[i], f"{name}: {_lr(rates[i])}", theme.PALETTE[k], STYLES[k])
    ax.axhline(float(run["init"]), color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.annotate(
        "the loss at the start",
        (step[-1], float(run["init"])),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color=theme.MUTED,
        fontsize=14,
    )
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats/char)")
    ax.set_xlim(0, step[-1])
    ax.set_ylim(1.9, min(12.0, float(np.nanmax(val[-1])) + 0.5))
    ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.9))
    return fig


@figure("ch05.warmup", runs=("ch05.warmup",))
def warmup(runs):
    """Left: final loss against warmup length at the best rate and the rung above. Right: the
    early training loss at the rung above, for each warmup."""
    run = runs["ch05.warmup"]
    rates, warmups, final = run["rates"], run["warmups"], run["final"]
    fig, (a, b) = new_figure(1, 2)
    x = np.arange(len(warmups))
    for i, rate in enumerate(rates):
        a.errorbar(
            x,
            final[i].mean(axis=1),
            yerr=final[i].std(axis=1, ddof=1),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            marker=MARKERS[i],
            capsize=4,
            label=f"peak {_lr(rate)}",
        )
    a.set_xticks(x, [f"{int(w)}" for w in warmups])
    a.set_xlabel("warmup (steps)")
    a.set_ylabel("final validation loss (nats/char)")
    a.legend(loc="upper left")
    a.set_title("after 2,000 steps", fontsize=16)
    es, el = run["early_step"], run["early_loss"]
    for j, w in enumerate(warmups):
        _band(b, es, el[-1, j], f"warmup {int(w)}", theme.PALETTE[j], STYLES[j])
    b.set_xlabel("step")
    b.set_ylabel("training loss (10-step mean)")
    b.set_title(f"the first steps at peak {_lr(rates[-1])}", fontsize=16)
    b.legend(loc="upper right")
    return fig


@figure("ch05.adam", runs=("ch05.warmup",))
def adam(runs):
    """Adam's normalised step m̂/(√v̂+ε) over the first updates, and the step it becomes with and
    without warmup (at the best rate)."""
    run = runs["ch05.warmup"]
    s = run["adam_step"]
    fig, (a, b) = new_figure(1, 2)
    a.plot(s, run["adam_rms_w0"].mean(axis=1), color=theme.PALETTE[0], marker="o", label="warmup 0")
    a.plot(s, run["adam_rms_w100"].mean(axis=1), color=theme.PALETTE[1], marker="s", linestyle="--", label="warmup 100")
    a.set_xscale("log")
    a.set_ylim(0, 1.05)
    a.set_xlabel("update")
    a.set_ylabel("RMS of m̂ / (√v̂ + ε)")
    a.set_title("the step before the rate", fontsize=16)
    a.legend(loc="lower left")
    b.plot(s, run["update_w0"].mean(axis=1), color=theme.PALETTE[0], marker="o", label="warmup 0")
    b.plot(s, run["update_w100"].mean(axis=1), color=theme.PALETTE[1], marker="s", linestyle="--", label="warmup 100")
    b.set_xscale("log")
    b.set_xlabel("update")
    b.set_ylabel("rate x that RMS")
    b.set_title(f"the step taken, peak {_lr(run['rates'][0])}", fontsize=16)
    b.legend(loc="upper right")
    return fig


@figure("ch05.schedules", runs=("ch05.schedules",))
def schedule_shapes(runs):
    """The learning rate over a run under each schedule, as a share of the peak."""
    run = runs["ch05.schedules"]
    lr = run["lr"]
    names = ("constant", "warmup + cosine", "WSD, 10% decay", "WSD, 20% decay")
    fig, ax = new_figure()
    steps = np.arange(lr.shape[1])
    for k in range(lr.shape[0]):
        ax.plot(steps, lr[k], label=names[k], color=theme.PALETTE[k], linestyle=STYLES[k])
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate / peak")
    ax.set_ylim(0, 1.1)
    ax.set_xlim(0, steps[-1] + 1)
    ax.legend(loc="lower left")
    return fig


@figure("ch05.sched_curves", runs=("ch05.schedules",))
def sched_curves(runs):
    """Validation loss over the second half of the run, each schedule at its own best rate."""
    run = runs["ch05.schedules"]
    step, val, best, rates = run["step"], run["val_loss"], run["best"].astype(int), run["rates"]
    names = ("constant", "cosine", "WSD 10%", "WSD 20%")
    keep = step >= step[-1] // 2
    fig, ax = new_figure()
    for k in range(val.shape[0]):
        _band(
            ax,
            step[keep],
            val[k, best[k]][:, keep],
            f"{names[k]}, peak {_lr(rates[best[k]])}",
            theme.PALETTE[k],
            STYLES[k],
        )
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats/char)")
    ax.legend(loc="upper right")
    return fig


@figure("ch05.branch", runs=("ch05.schedules",))
def branch(runs):
    """The constant trunk, a WSD decay branched from it, and a cosine run of the branch's length."""
    run = runs["ch05.schedules"]
    step, bstep = run["step"], run["branch_step"]
    fig, ax = new_figure()
    keep = step >= 200
    _band(ax, step[keep], run["trunk_val"][:, keep], "constant trunk", theme.PALETTE[0], "-")
    bk = bstep >= 200
    _band(ax, bstep[bk], run["branch_val"][:, bk], "WSD branch: decay from the trunk", theme.PALETTE[1], "--")
    _band(ax, bstep[bk], run["short_val"][:, bk], "cosine run of the same length", theme.PALETTE[2], "-.")
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats/char)")
    ax.legend(loc="upper right")
    return fig


@figure("ch05.batch_target", runs=("ch05.batch_target",))
def batch_target(runs):
    """Steps and characters to the target against the batch, each batch at a constant rate, its own best:
    each seed, the mean, perfect scaling from the smallest batch, and the critical-batch fit."""
    from matplotlib.ticker import NullFormatter, NullLocator

    run = runs["ch05.batch_target"]
    B, steps, T = run["batch"], run["steps"], float(run["context"])  # steps: (batches, seeds), NaN: not reached
    ok = np.isfinite(steps).all(axis=1)
    mean = np.nanmean(np.where(ok[:, None], steps, np.nan), axis=1)
    fig, (a, b) = new_figure(1, 2)
    grid = np.geomspace(B[0], B[-1], 100)
    # the same runs in two units: per-step counts, and those steps times the characters a step reads
    for ax, chars, label in ((a, False, "steps to the target"), (b, True, "characters to the target")):

        def unit(batch: np.ndarray, chars: bool = chars) -> np.ndarray:
            """What one step counts for: the characters it reads, or one step."""
            return batch * T if chars else np.ones_like(batch)

        per = steps * unit(B)[:, None]
        for s in range(per.shape[1]):
            ax.scatter(
                B, per[:, s], color=theme.MUTED, marker="x", s=40, zorder=3, label="each seed" if s == 0 else None
            )
        m = mean * unit(B)
        ax.plot(B[ok], m[ok], marker="o", color=theme.PALETTE[0], label="mean of the seeds")
        perfect = mean[0] * B[0] / grid * unit(grid)  # the smallest batch's steps, halved with every doubling
        ax.plot(grid, perfect, color=theme.MUTED, linestyle=":", label="perfect scaling")
        if "ch05.bt.bcrit" in run.measurements:
            b_crit, s_min = _value(run, "ch05.bt.bcrit"), _value(run, "ch05.bt.bcrit.s_min")
            ax.plot(
                grid,
                s_min * (1 + b_crit / grid) * unit(grid),
                color=theme.PALETTE[1],
                linestyle="--",
                label=f"fit (relative error), B_crit {b_crit:.0f}",
            )
        for i in np.flatnonzero(~ok):
            n = int(np.isfinite(steps[i]).sum())
            ax.annotate(
                f"{n} of {steps.shape[1]}\nreached",
                (B[i], np.nanmax(per[i]) if n else m[ok][-1]),
                xytext=(0, 10),
                textcoords="offset points",
                ha="center",
                fontsize=13,
                color=theme.PALETTE[1],
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(B, [f"{x:.0f}" for x in B])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_minor_formatter(NullFormatter())  # decade labels only: the minor ones crowd the axis
        ax.set_xlabel(f"batch (windows of {T:.0f} characters)")
        ax.set_ylabel(label)
    a.legend(loc="lower left", fontsize=13)
    a.set_yticks([50, 100, 200, 500], ["50", "100", "200", "500"])  # about a decade each: name the values
    b.set_yticks([1e5, 2e5, 3e5], ["100k", "200k", "300k"])
    return fig


@figure("ch05.linear", runs=("ch05.batch",))
def linear(runs):
    """Each batch's own best rate against the linear scaling rule from the smallest batch."""
    run = runs["ch05.batch"]
    B, best = run["batch"], run["best_lr"]
    fig, ax = new_figure()
    ax.plot(B, best, marker="o", color=theme.PALETTE[0], label="each batch's best rate (its ladder 3x apart)")
    ax.plot(
        B,
        best[0] * B / B[0],
        marker="s",
        color=theme.PALETTE[1],
        linestyle="--",
        label="linear rule: rate x batch / batch₀",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch (windows of 16 characters)")
    ax.set_ylabel("peak learning rate")
    ax.legend(loc="upper left")
    return fig


@figure("ch05.noise", runs=("ch05.noise", "ch05.batch_target"))
def noise(runs):
    """The simple noise scale along runs at the best rate, against the validation loss, with the
    critical batch measured at the target loss (ch05.batch_target's fit and its bootstrap interval)."""
    run = runs["ch05.noise"]
    bs, vl = run["b_simple"], run["val_loss"]
    fig, ax = new_figure()
    for s in range(bs.shape[0]):
        ax.plot(vl[s], bs[s], marker=MARKERS[s], color=theme.PALETTE[s], linestyle=STYLES[s], label=f"seed {s}")
    batch = runs["ch05.batch_target"]
    if "ch05.bt.bcrit" in batch.measurements:
        b_crit = _value(batch, "ch05.bt.bcrit")
        lo, hi = _value(batch, "ch05.bt.bcrit.lo"), _value(batch, "ch05.bt.bcrit.hi")
        ax.axhspan(lo, hi, color=theme.MUTED, alpha=0.15, linewidth=0)  # the bootstrap interval over seeds
        ax.axhline(b_crit, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.annotate(
            "critical batch, steps to target",
            (vl.max(), b_crit),
            xytext=(4, 4),
            textcoords="offset points",
            ha="left",
            va="bottom",
            color=theme.MUTED,
            fontsize=14,
        )
    target = float(run["target"])
    ax.axvline(target, color=theme.PALETTE[4], linestyle="--", linewidth=1.5)
    ax.annotate(
        "target loss",
        (target, 0.03),
        xycoords=("data", "axes fraction"),
        xytext=(-4, 0),
        textcoords="offset points",
        ha="right",
        color=theme.PALETTE[4],
        fontsize=14,
    )
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("validation loss (nats/char); training runs left to right")
    ax.set_ylabel("B_simple (windows)")
    ax.legend(loc="upper left")
    return fig
