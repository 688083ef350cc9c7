"""Chapter 7 figures: attention-logit growth and entropy collapse, the learning-rate sensitivity of
each cure, the largest logit and log Z over training, and one bad batch with each protection.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v")
ARM_LABELS = {
    "base": "default",
    "qk": "QK-norm",
    "z": "z-loss",
    "qkz": "QK-norm + z-loss",
    "b95": "β₂ 0.95",
}
BAD_LABELS = ("no protection", "clip at {c1}", "clip at {c2}", "skip if > {k}× median")


def _lr(rate: float) -> str:
    return f"{rate:g}"


def _band(ax, step, values, label, colour, style, marker=None) -> None:
    """The mean of the seeds as a line, their range as a light band."""
    ax.plot(step, np.nanmean(values, axis=0), label=label, color=colour, linestyle=style, marker=marker, markevery=4)
    ax.fill_between(step, np.nanmin(values, axis=0), np.nanmax(values, axis=0), color=colour, alpha=0.2, linewidth=0)


def _picks(rates) -> tuple[int, int, int]:
    """Three rungs to show: the second (the default's best), the fourth and the last."""
    n = len(rates)
    return (min(1, n - 1), min(3, n - 1), n - 1)


@figure("ch07.logits", runs=("ch07.sweep",))
def logits(runs):
    """The default Decoder: largest attention logit and lowest head entropy over training at three rates."""
    run = runs["ch07.sweep"]
    rates, step = run["rates"], run["base.probe_step"]
    ml = run["base.max_logit"].max(axis=-1)  # (R, S, probes): the larger head
    ent = run["base.entropy"].min(axis=-1)  # (R, S, probes): the lower head
    fig, (a, b) = new_figure(1, 2)
    for k, i in enumerate(_picks(rates)):
        _band(a, step, ml[i], f"rate {_lr(rates[i])}", theme.PALETTE[k], STYLES[k], MARKERS[k])
        _band(b, step, ent[i], f"rate {_lr(rates[i])}", theme.PALETTE[k], STYLES[k], MARKERS[k])
    a.set_yscale("log")
    a.set_xlabel("step")
    a.set_ylabel("largest attention logit")
    a.legend(loc="lower right")
    b.set_yscale("log")
    b.axhline(float(run["collapse"]), color=theme.MUTED, linestyle=":", linewidth=1.5)
    b.annotate(
        "collapsed",
        (step[-1], float(run["collapse"])),
        xytext=(-4, 4),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color=theme.MUTED,
    )
    b.set_xlabel("step")
    b.set_ylabel("lowest head's entropy (nats)")
    return fig


@figure("ch07.sensitivity", runs=("ch07.sweep",))
def sensitivity(runs):
    """Final validation loss against the peak rate for each arm (mean of the seeds; runs that blow up
    are marked)."""
    run = runs["ch07.sweep"]
    rates = np.asarray(run["rates"])
    fig, ax = new_figure()
    arms = [a for a in ARM_LABELS if f"{a}.final" in set(run) and a != "b95"]
    for k, arm in enumerate(arms):
        final, blow = run[f"{arm}.final"], run[f"{arm}.blowup_step"]
        mean = np.nanmean(final, axis=1)
        ax.plot(rates, mean, color=theme.PALETTE[k], linestyle=STYLES[k], marker=MARKERS[k], label=ARM_LABELS[arm])
        bad = np.isfinite(blow).any(axis=1)
        ax.scatter(rates[bad], mean[bad], s=260, facecolor="none", edgecolor=theme.PALETTE[k], linewidth=2, zorder=4)
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate (AdamW, warmup + cosine)")
    ax.set_ylabel("final validation loss (nats/char)")
    means = [np.nanmean(run[f"{a}.final"], axis=1) for a in arms]
    ax.set_ylim(float(np.nanmin(means)) - 0.05, float(np.nanmax(means)) + 0.1)
    ax.legend(loc="upper left", title="circled: a seed's loss rose above its start", title_fontsize=18)
    return fig


@figure("ch07.beta2", runs=("ch07.sweep",))
def beta2(runs):
    """Final validation loss against the rate for beta2 0.999 (the default) and 0.95."""
    run = runs["ch07.sweep"]
    rates = np.asarray(run["rates"])
    fig, ax = new_figure()
    for k, arm in enumerate(("base", "b95")):
        final, blow = run[f"{arm}.final"], run[f"{arm}.blowup_step"]
        for s in range(final.shape[1]):
            ax.scatter(rates, final[:, s], color=theme.MUTED, marker="x", s=40, zorder=3)
        mean = np.nanmean(final, axis=1)
        label = "β₂ 0.999 (default)" if arm == "base" else "β₂ 0.95"
        ax.plot(rates, mean, color=theme.PALETTE[k], linestyle=STYLES[k], marker=MARKERS[k], label=label)
        bad = np.isfinite(blow).any(axis=1)
        ax.scatter(rates[bad], mean[bad], s=260, facecolor="none", edgecolor=theme.PALETTE[k], linewidth=2, zorder=4)
    ax.set_xscale("log")
    ax.set_xlabel("peak learning rate (AdamW, warmup + cosine)")
    ax.set_ylabel("final validation loss (nats/char)")
    ax.legend(loc="upper left", title="x: each seed; circled: a seed's loss rose above its start", title_fontsize=18)
    return fig


@figure("ch07.cures", runs=("ch07.sweep",))
def cures(runs):
    """At a high rate: the largest attention logit and the mean log Z over training for each arm."""
    run = runs["ch07.sweep"]
    rates, step = run["rates"], run["base.probe_step"]
    i = _picks(rates)[1]
    fig, (a, b) = new_figure(1, 2)
    for k, arm in enumerate(("base", "qk", "z", "qkz")):
        if f"{arm}.max_logit" not in set(run):
            continue
        _band(
            a, step, run[f"{arm}.max_logit"][i].max(axis=-1), ARM_LABELS[arm], theme.PALETTE[k], STYLES[k], MARKERS[k]
        )
        _band(b, step, run[f"{arm}.log_z"][i], ARM_LABELS[arm], theme.PALETTE[k], STYLES[k], MARKERS[k])
    a.set_yscale("log")
    a.set_xlabel("step")
    a.set_ylabel("largest attention logit")
    a.set_title(f"rate {_lr(rates[i])}", fontsize=18)
    b.axhline(0.0, color=theme.MUTED, linestyle=":", linewidth=1.5)
    b.set_xlabel("step")
    b.set_ylabel("mean log Z of the output")
    b.legend(loc="lower right")
    return fig


@figure("ch07.bad_batch", runs=("ch07.bad_batch",))
def bad_batch(runs):
    """Around the bad batch, at each rate: the training loss minus the clean run's (same seed, same
    batches), smoothed, for each protection."""
    run = runs["ch07.bad_batch"]
    rates, steps, at = run["rates"], np.asarray(run["window_steps"]), int(run["at"])
    smooth = run["smooth_diff"]  # (R, A, S, window)
    m = run.measurements
    c1, c2 = (float(c) for c in run["clips"])
    k = float(m["ch07.bad.skip_k"]["value"])
    labels = [t.format(c1=f"{c1:g}", c2=f"{c2:g}", k=f"{k:g}") for t in BAD_LABELS]
    fig, axes = new_figure(1, len(rates), sharey=True)
    keep = steps > at
    for i, ax in enumerate(np.atleast_1d(axes)):
        for a in range(smooth.shape[1]):
            _band(ax, steps[keep], smooth[i, a][:, keep], labels[a], theme.PALETTE[a], STYLES[a], MARKERS[a])
        ax.axhline(0.0, color=theme.MUTED, linestyle=":", linewidth=1.5)
        ax.set_xlabel(f"step (bad batch at {at})")
        ax.set_title(f"rate {_lr(rates[i])}", fontsize=18)
    np.atleast_1d(axes)[0].set_ylabel("loss − clean run's (nats)")
    np.atleast_1d(axes)[-1].legend(loc="upper right")
    return fig


@figure("ch07.norms", runs=("ch07.bad_batch",))
def norms(runs):
    """The gradient norm of every step around the bad batch, unprotected, at each rate, against the
    clean run's."""
    run = runs["ch07.bad_batch"]
    rates, steps, at = run["rates"], np.asarray(run["window_steps"]), int(run["at"])
    fig, ax = new_figure()
    for i, rate in enumerate(rates):
        ax.plot(
            steps,
            run["norm_bad"][i, 0].mean(axis=0),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            label=f"bad batch, rate {_lr(rate)}",
        )
        ax.plot(
            steps,
            run["norm_clean"][i, 0].mean(axis=0),
            color=theme.PALETTE[i],
            linestyle=":",
            alpha=0.7,
            label=f"clean, rate {_lr(rate)}",
        )
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for c in run["clips"]:
        ax.axhline(float(c), color=theme.MUTED, linestyle="--", linewidth=1.2)
        ax.annotate(
            f"clip at {float(c):g}", (steps[0], float(c)), xytext=(4, 4), textcoords="offset points", color=theme.MUTED
        )
    ax.set_yscale("log")
    ax.set_yticks([0.25, 0.5, 1.0, 2.0, 4.0])
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"step (bad batch at {at})")
    ax.set_ylabel("gradient norm (before clipping)")
    ax.legend(loc="upper right")
    return fig
