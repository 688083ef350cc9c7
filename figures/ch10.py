"""Chapter 10 figures: the ring's bytes step by step, collective times against size with their alpha-beta
fits, bytes written over bytes brought, step time with and without overlap, and the state each process
holds under DDP, ZeRO-1 and FSDP.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D")
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")  # model.collectives.COLLECTIVES
NAMES = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter"}


@figure("ch10.ring", runs=("ch10.ring",))
def ring_bytes(runs):
    """Bytes one worker has sent after each step of a ring all-reduce of 64 float32, p = 2, 4 and 8."""
    run = runs["ch10.ring"]
    n = int(run["curve_n"])
    fig, ax = new_figure()
    for i, p in enumerate((2, 4, 8)):
        sent = run[f"sent_p{p}"]
        steps = np.arange(len(sent))
        ax.plot(steps, sent, color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i], label=f"p = {p}")
        ax.axhline(2 * (p - 1) / p * n * 4, color=theme.PALETTE[i], linestyle=":", linewidth=1.2)
        ax.axvline(p - 1, color=theme.MUTED, linestyle=":", linewidth=0.8)
    ax.set_xlabel("ring steps done (reduce-scatter, then all-gather)")
    ax.set_ylabel(f"bytes worker 1 has sent (n = {n} float32)")
    ax.set_ylim(0, None)
    ax.legend(loc="lower right", title="dotted: 2(p−1)/p · n · 4")
    return fig


@figure("ch10.alphabeta", runs=("ch10.timing",))
def alphabeta(runs):
    """Median time of each collective against the vector's bytes, p = 2 and 4, with the fitted a + b·n."""
    run = runs["ch10.timing"]
    sizes = run["sizes"]
    worlds = [p for p in (2, 4) if f"times_p{p}" in run]
    fig, axes = new_figure(1, len(worlds), squeeze=False)
    for ax, p in zip(axes[0], worlds, strict=True):
        times = run[f"times_p{p}"]
        for i, name in enumerate(COLLECTIVES):
            q25, med, q75 = np.percentile(times[i], (25, 50, 75), axis=1)
            ax.errorbar(sizes, 1e3 * med, yerr=(1e3 * (med - q25), 1e3 * (q75 - med)), color=theme.PALETTE[i],
                        linestyle="none", marker=MARKERS[i], capsize=3, label=NAMES[name])  # fmt: skip
            a, b = run[f"fit_{name}_p{p}"]
            grid = np.geomspace(sizes[0], sizes[-1], 60)
            ax.plot(grid, 1e3 * (a + b * grid), color=theme.PALETTE[i], linestyle=STYLES[i], linewidth=1.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = [2**10, 2**15, 2**20, 2**26]
        ax.set_xticks(ticks, ["1 KiB", "32 KiB", "1 MiB", "64 MiB"])
        ax.set_xlabel("vector size n")
        ax.set_title(f"p = {p} processes", fontsize=18)
    axes[0][0].set_ylabel("time (ms), median and quartiles")
    axes[0][0].legend(loc="upper left", fontsize=14)
    return fig


@figure("ch10.wire", runs=("ch10.ring",))
def wire(runs):
    """Bytes each process wrote to its sockets over the bytes it brought, per collective, against p."""
    run = runs["ch10.ring"]
    worlds = run["worlds"]
    ratio = run["wire"]  # (collective, world)
    fig, ax = new_figure()
    p = np.linspace(worlds[0], worlds[-1], 50)
    rings = {"all_reduce": 2 * (p - 1) / p, "all_gather": p - 1, "reduce_scatter": (p - 1) / p}
    for i, name in enumerate(COLLECTIVES):
        shift = 0.06 * (i - 1)  # reduce-scatter's points fall on all-reduce's: set them side by side
        ax.plot(worlds + shift, ratio[i], color=theme.PALETTE[i], linestyle="none", marker=MARKERS[i],
                markersize=12, markerfacecolor="none" if i == 2 else theme.PALETTE[i], markeredgewidth=2.5,
                label=f"{NAMES[name]}, measured")  # fmt: skip
        ax.plot(p, rings[name], color=theme.PALETTE[i], linestyle=STYLES[i], linewidth=1.5)
    ax.set_xticks(worlds, [str(int(w)) for w in worlds])
    ax.set_xlabel("processes p")
    ax.set_ylabel("bytes sent ÷ bytes brought")
    ax.set_ylim(0, None)
    ax.legend(loc="upper left", title="lines: a ring's count", fontsize=14)
    return fig


@figure("ch10.steptime", runs=("ch10.timing",))
def steptime(runs):
    """Seconds per step of each arm over the timed repeats: median and quartiles."""
    run = runs["ch10.timing"]
    times = run["step_times"]  # (arm, repeat): model.dataparallel.ARMS
    mb = (
        float(run.measurements["ch10.step.bucket_mb"]["value"]),
        float(run.measurements["ch10.step.big_bucket_mb"]["value"]),
    )
    labels = ("compute only", f"DDP, {mb[0]:g} MB buckets", f"DDP, {mb[1]:g} MB buckets", "all-reduce after",
              "all-reduce alone")  # fmt: skip
    fig, ax = new_figure()
    y = np.arange(len(labels))[::-1]
    for i in range(len(labels)):
        q25, med, q75 = np.percentile(1e3 * times[i], (25, 50, 75))
        ax.barh(y[i], med, color=theme.PALETTE[i], hatch=("", "//", "\\\\", "..", "xx")[i], edgecolor=theme.MUTED)
        ax.errorbar(med, y[i], xerr=[[med - q25], [q75 - med]], color="black", capsize=5)
    ax.set_yticks(y, labels)
    ax.set_xlabel("milliseconds per step, median and quartiles")
    return fig


@figure("ch10.zero", runs=("ch10.zero",))
def zero_bytes(runs):
    """Bytes of parameters, gradients and Adam moments the fullest process holds, DDP, ZeRO-1 and FSDP."""
    run = runs["ch10.zero"]
    worlds = [p for p in (2, 4) if f"ddp_p{p}_param_bytes" in run]
    modes = ("ddp", "zero1", "fsdp")
    names = {"ddp": "DDP", "zero1": "ZeRO-1", "fsdp": "FSDP"}
    kinds = (
        ("param_bytes", "parameters", ""),
        ("grad_bytes", "gradients", "//"),
        ("moment_bytes", "Adam moments", ".."),
    )
    fig, ax = new_figure()
    x, labels = [], []
    for j, p in enumerate(worlds):
        for i, mode in enumerate(modes):
            pos = j * 4 + i
            rank = int(np.argmax(sum(run[f"{mode}_p{p}_{k}"] for k, _, _ in kinds)))
            bottom = 0.0
            for c, (k, label, hatch) in enumerate(kinds):
                v = float(run[f"{mode}_p{p}_{k}"][rank]) / 1024
                ax.bar(pos, v, bottom=bottom, color=theme.PALETTE[c], hatch=hatch, edgecolor=theme.MUTED,
                       label=label if pos == 0 else None)  # fmt: skip
                bottom += v
            f = float(run.measurements[f"ch10.zero.{mode}.p{p}.formula"]["value"]) / 1024
            ax.plot([pos - 0.4, pos + 0.4], [f, f], color="black", linewidth=2.5,
                    label="formula (float32)" if pos == 0 else None)  # fmt: skip
            x.append(pos)
            labels.append(f"{names[mode]}\np = {p}")
    ax.set_xticks(x, labels)
    ax.set_ylabel("KiB held by the fullest process")
    ax.legend(loc="upper right", fontsize=14)
    return fig
