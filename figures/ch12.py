"""Chapter 12 figures: loss against bytes for every method at its best rate, top-k with and
without error feedback along the run, DiLoCo against steps and outer steps, the learning-rate
ladders, bytes as time at four link speeds, and the waiting simulations against their formulas.

Compared curves differ in line style or marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")
#: ch12.bytes: labels not set right of their point (offset x, y in points, alignment)
PLACE = {
    "diloco100": (-10, 0, "right", "center"),
    "diloco5": (0, 12, "center", "bottom"),
    "demo1_999": (0, -12, "center", "top"),
    "demo4_999": (0, -12, "center", "top"),
}
SWEEPS = ("ch12.topk", "ch12.demo", "ch12.diloco")
#: method id -> label, in the order the figures list them
LABELS = {
    "dense": "full gradient",
    "topk1": "top-k 1%",
    "topk1_ef": "top-k 1% + EF",
    "topk10": "top-k 10%",
    "topk10_ef": "top-k 10% + EF",
    "demo1_999": "DeMo 1/64",
    "demo4_999": "DeMo 4/64",
    "diloco5": "DiLoCo H=5",
    "diloco25": "DiLoCo H=25",
    "diloco100": "DiLoCo H=100",
}


def _method_runs(runs):
    """method id -> its experiment's run, for every method LABELS lists that the runs hold."""
    out = {}
    for exp in SWEEPS:
        run = runs[exp]
        for name in LABELS:
            if f"{name}_best" in list(run):
                out[name] = run
    return out


@figure("ch12.bytes", runs=SWEEPS)
def loss_bytes(runs):
    """Final validation loss (best rate, mean ± sd over seeds) against bytes each worker sent, each point named."""
    fig, ax = new_figure()
    for i, (name, run) in enumerate(_method_runs(runs).items()):
        final = run[f"{name}_best"][:, -1]
        sent = run[f"{name}_bytes"][-1]
        color = theme.PALETTE[i % len(theme.PALETTE)]
        ax.errorbar(sent, final.mean(), yerr=final.std(ddof=1), marker=MARKERS[i % len(MARKERS)], markersize=12,
                    color=color, linestyle="none", capsize=4)  # fmt: skip
        dx, dy, ha, va = PLACE.get(name, (10, 0, "left", "center"))  # a few labels move off a neighbour
        ax.annotate(LABELS[name], (sent, final.mean()), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                    fontsize=18, color=color)  # fmt: skip
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    ax.set_xlim(lo / 4, hi * 4)
    ax.set_xlabel("bytes each worker sent over the run")
    ax.set_ylabel("final validation loss (nats)")
    return fig


@figure("ch12.ef", runs=("ch12.topk",))
def error_feedback(runs):
    """Validation loss along the run at each arm's best rate: top-k 1% and 10%, with and without feedback."""
    run = runs["ch12.topk"]
    steps = run["steps"]
    fig, ax = new_figure()
    for i, name in enumerate(("dense", "topk10", "topk10_ef", "topk1", "topk1_ef")):
        ax.plot(
            steps,
            run[f"{name}_best"].mean(0),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            marker=MARKERS[i],
            markersize=9,
            label=LABELS[name],
        )
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss (nats)")
    ax.set_ylim(None, 3.6)
    ax.legend(loc="upper right", fontsize=16)
    return fig


@figure("ch12.diloco", runs=("ch12.diloco", "ch12.topk"))
def diloco(runs):
    """DiLoCo's validation loss against steps (with the full gradient) and against outer steps."""
    run, ref = runs["ch12.diloco"], runs["ch12.topk"]
    steps = run["steps"]
    fig, (a, b) = new_figure(1, 2)
    a.plot(
        ref["steps"],
        ref["dense_best"].mean(0),
        color=theme.MUTED,
        linestyle=":",
        marker="x",
        markersize=9,
        label="full gradient",
    )
    names = [n for n in ("diloco5", "diloco25", "diloco100", "diloco25_avg") if f"{n}_best" in list(run)]
    for i, name in enumerate(names):
        label = LABELS.get(name, "H=25, plain average")
        curve = run[f"{name}_best"].mean(0)
        a.plot(steps, curve, color=theme.PALETTE[i], linestyle=STYLES[i], marker=MARKERS[i], markersize=9, label=label)
        if name != "diloco25_avg":
            H = int(name.removeprefix("diloco"))
            after = steps > 0  # from the first sync on: a log axis of outer steps
            b.plot(
                steps[after] / H,
                curve[after],
                color=theme.PALETTE[i],
                linestyle=STYLES[i],
                marker=MARKERS[i],
                markersize=9,
            )
    a.set_xlabel("step")
    a.set_ylabel("validation loss (nats)")
    a.set_ylim(None, 3.6)
    a.legend(loc="upper right", fontsize=16)
    b.set_xscale("log")
    b.set_xticks([1, 10, 100], ["1", "10", "100"])
    b.set_xlabel("outer steps (syncs)")
    b.set_ylim(None, 3.6)
    return fig


@figure("ch12.ladders", runs=SWEEPS)
def ladders(runs):
    """Final validation loss against the peak rate for each method (mean of 3 seeds)."""
    fig, (a, b) = new_figure(1, 2)
    for i, (name, run) in enumerate(_method_runs(runs).items()):
        val = run[f"{name}_val"][:, :, -1]
        ax = b if name.startswith(("demo", "diloco")) else a
        ax.plot(
            run[f"{name}_rates"],
            val.mean(1),
            color=theme.PALETTE[i % 7],
            linestyle=STYLES[i % 5],
            marker=MARKERS[i % len(MARKERS)],
            markersize=9,
            label=LABELS[name],
        )
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xlabel("peak learning rate")
        ax.set_ylim(None, 3.4)
        ax.legend(loc="upper center", fontsize=16)
    a.set_ylabel("final validation loss (nats)")
    return fig


@figure("ch12.links", runs=("ch12.links",))
def link_time(runs):
    """Seconds per step to send each method's share of a 1e9-weight gradient, at four link speeds."""
    run = runs["ch12.links"]
    seconds = run["seconds"]  # (method, link)
    names = ["dense", "topk10_ef", "topk1_ef", "demo4_999", "demo1_999", "diloco25", "diloco100"]
    rows = [list(LABELS).index(n) for n in names]
    links = ("NVLink", "InfiniBand", "WAN 10 Gb/s", "WAN 1 Gb/s")
    fig, ax = new_figure()
    width = 0.2
    x = np.arange(len(names))
    for j, link in enumerate(links):
        ax.bar(
            x + (j - 1.5) * width,
            seconds[rows, j],
            width,
            color=theme.PALETTE[j],
            hatch=("", "//", "..", "xx")[j],
            edgecolor="white",
            label=link,
        )
    ax.set_yscale("log")
    ax.set_xticks(x, [LABELS[n].replace(" + EF", "\n+ EF").replace("DiLoCo ", "DiLoCo\n") for n in names], fontsize=16)
    ax.set_ylabel("seconds per step (arithmetic)")
    ax.legend(loc="upper right", fontsize=16, ncol=2)
    return fig


@figure("ch12.waiting", runs=("ch12.queue",))
def waiting(runs):
    """Left: mean step time against workers, syncing every 1, 10, 100 steps, with 1 + s H_W.
    Right: mean wait of an M/D/1 and an M/M/1 link against the load, with the formulas."""
    run = runs["ch12.queue"]
    workers, every = run["workers"], run["every"]
    fig, (a, b) = new_figure(1, 2)
    for i, h in enumerate(every):
        a.plot(
            workers,
            100 * run["idle"][i].mean(1),
            color=theme.PALETTE[i],
            linestyle=STYLES[i],
            marker=MARKERS[i],
            markersize=9,
            label=f"sync every {int(h)}",
        )
    delay = float(run.measurements["ch12.strag.delay"]["value"])
    s = 1 - (1 + delay) / run["formula"]
    a.plot(
        workers, 100 * s, color=theme.MUTED, linestyle="none", marker="x", markersize=12, label="1 − (1+s)/(1+s·H_W)"
    )
    a.set_xscale("log", base=2)
    a.set_xticks(workers, [str(int(w)) for w in workers])
    a.set_xlabel("workers W")
    a.set_ylabel("time waiting for the slowest (%)")
    a.legend(loc="upper left", fontsize=16)
    rhos = run["rhos"]
    b.plot(rhos, run["md1"].mean(1), "o", color=theme.PALETTE[0], markersize=10, label="M/D/1 simulated")
    b.plot(rhos, run["md1_f"], "-", color=theme.PALETTE[0], label="ρ/(2(1−ρ))")
    b.plot(rhos, run["mm1"].mean(1), "s", color=theme.PALETTE[1], markersize=10, label="M/M/1 simulated")
    b.plot(rhos, run["mm1_f"], "--", color=theme.PALETTE[1], label="ρ/(1−ρ)")
    b.set_xlabel("link load ρ")
    b.set_ylabel("mean wait (service times)")
    b.legend(loc="upper left", fontsize=16)
    return fig
