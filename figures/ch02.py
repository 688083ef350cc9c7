"""Chapter 2 figures: the book's characters, context length, BPE on the book (merges,
characters per token, a line segmented, Decoders in bits per character), packing with and
without a document mask, mixtures and data size.

Compared curves differ in line style and marker as well as colour, so they stay apart in grey-scale.
"""

from __future__ import annotations

import math

import numpy as np

from figures.registry import figure
from figures.style import new_figure
from slidegen import theme

STYLES = ("-", "--", "-.", (0, (1, 1.5)))
MARKERS = ("o", "s", "^", "D")


def _show(token: str) -> str:
    """A token as a slide shows it: a space as a middle dot, a newline as a return arrow."""
    return token.replace(" ", "\u00b7").replace("\n", "\u21b5").replace("\t", "\u21e5")


def _text(codes) -> str:
    return "".join(chr(int(c)) for c in codes if int(c) > 0)


@figure("ch02.freq", runs=("ch02.corpus",))
def freq(runs):
    """How often each of the 30 most frequent characters occurs, as a share of the play."""
    run = runs["ch02.corpus"]
    chars, counts = run["char"], run["count"]
    n = 30
    share = 100 * counts[:n] / counts.sum()
    fig, ax = new_figure(height=4.2)
    ax.bar(range(n), share, color=theme.PALETTE[0])
    ax.set_xticks(range(n), [_show(chr(int(c))) for c in chars[:n]], fontsize=15, fontfamily="monospace")
    ax.set_ylabel("share of the play (%)")
    ax.set_xlabel("character, most frequent first (\u00b7 space, \u21b5 newline)")
    ax.set_xlim(-0.7, n - 0.3)
    ax.grid(axis="x", visible=False)
    return fig


@figure("ch02.context", runs=("ch02.windows", "ch02.matched"))
def context(runs):
    """Validation loss against context length, each length at its best learning rate: at batch 32
    (so characters per step grow with the context) and at 2,048 characters per step (batch 256 to
    32); and wall time per step at batch 32."""
    run, matched = runs["ch02.windows"], runs["ch02.matched"]
    ctx, val, ms = run["context"], run["val_loss"], run["ms_per_step"]
    fig, (left, right) = new_figure(1, 2, height=3.8)
    for k, (c, v, label) in enumerate(
        (
            (ctx, val[:, :, -1], "batch 32"),
            (
                matched["context"],
                matched["val_loss"][:, :, -1],
                f"{int(matched['context'][0] * matched['batch'][0]):,} characters per step",
            ),
        )
    ):
        left.errorbar(
            c,
            v.mean(axis=1),
            yerr=v.std(axis=1, ddof=1),
            color=theme.PALETTE[k],
            marker=MARKERS[k],
            capsize=5,
            linestyle=STYLES[k],
            label=label,
        )
    left.set_xscale("log", base=2)
    left.set_xticks(ctx, [str(int(c)) for c in ctx])
    left.set_xlabel("context (characters)")
    left.set_ylabel("validation loss (nats)")
    left.legend(loc="upper right", fontsize=14)
    right.plot(ctx, ms, color=theme.PALETTE[2], marker="^", linestyle="-.")
    right.set_xscale("log", base=2)
    right.set_xticks(ctx, [str(int(c)) for c in ctx])
    right.set_ylim(0, None)
    right.set_xlabel("context (characters)")
    right.set_ylabel("ms per step and run, batch 32")
    return fig


@figure("ch02.bpe_merges", runs=("ch02.bpe",))
def bpe_merges(runs):
    """The first merges BPE learns on the training text, in order, with the count each had when chosen."""
    run = runs["ch02.bpe"]
    a = [_text(r) for r in run["merge_a"]]
    b = [_text(r) for r in run["merge_b"]]
    counts = run["merge_count"]
    n = len(counts)
    fig, ax = new_figure(height=4.4)
    y = np.arange(n)[::-1]
    ax.barh(y, counts, color=theme.PALETTE[0], height=0.7)
    labels = [
        f"{k + 1}. {_show(x)} + {_show(z)} \u2192 {_show(x + z)}" for k, (x, z) in enumerate(zip(a, b, strict=True))
    ]
    ax.set_yticks(y, labels, fontfamily="monospace", fontsize=17)
    ax.set_xlabel("occurrences in the training text when merged")
    ax.grid(axis="y", visible=False)
    return fig


@figure("ch02.segmentation", runs=("ch02.bpe",))
def segmentation(runs):
    """The example line cut into tokens at several vocabulary sizes: one box per token."""
    run = runs["ch02.bpe"]
    line = _text(run["example_line"])
    sizes, lengths = run["example_sizes"], run["example_lengths"]
    fig, ax = new_figure(height=4.0)
    n = len(line)
    for row, (size, lens) in enumerate(zip(sizes, lengths, strict=True)):
        y = len(sizes) - 1 - row
        x = 0
        for k, width in enumerate(int(w) for w in lens if w > 0):
            even = k % 2 == 0  # neighbours alternate in colour and in shade (apart in grey-scale too)
            ax.add_patch(_box(x, y, width, theme.PALETTE[0] if even else theme.PALETTE[4], 0.35 if even else 0.15))
            ax.text(
                x + width / 2,
                y + 0.42,
                _show(line[x : x + width]),
                ha="center",
                va="center",
                fontfamily="monospace",
                fontsize=12,
                color=theme.TEXT,
            )
            x += width
        count = sum(1 for w in lens if w > 0)
        name = "characters" if row == 0 else f"vocabulary {int(size)}"
        ax.text(-0.8, y + 0.42, f"{name}\n{count} tokens", ha="right", va="center", fontsize=14, color=theme.TEXT)
    ax.set_xlim(-12, n + 0.5)
    ax.set_ylim(-0.2, len(sizes))
    ax.axis("off")
    return fig


def _box(x: float, y: float, width: float, colour: str, alpha: float):
    from matplotlib.patches import Rectangle

    return Rectangle(
        (x + 0.05, y + 0.05), width - 0.1, 0.75, facecolor=colour, alpha=alpha, edgecolor=colour, linewidth=1.5
    )


@figure("ch02.bpe_bpc", runs=("ch02.bpe",))
def bpe_bpc(runs):
    """Validation loss in bits per character of the character Decoder and the BPE Decoders
    (mean of three seeds, each at its best learning rate)."""
    run = runs["ch02.bpe"]
    step = run["step"]
    names = [n.removesuffix("_bpc") for n in run if n.endswith("_bpc")]
    names.sort(key=lambda n: (n != "char", int(n[1:]) if n != "char" else 0))
    fig, ax = new_figure(height=3.4)
    for k, name in enumerate(names):
        curve = run[f"{name}_bpc"].mean(axis=0)
        label = "characters (64 symbols)" if name == "char" else f"BPE, vocabulary {name[1:]}"
        ax.plot(
            step,
            curve,
            label=label,
            color=theme.PALETTE[k],
            linestyle=STYLES[k % 4],
            marker=MARKERS[k % 4],
            markevery=max(1, len(step) // 8),
        )
    ax.set_xlabel("step")
    ax.set_ylabel("bits per character")
    ax.set_xlim(0, step[-1])
    low = min(float(run[f"{n}_bpc"].mean(axis=0).min()) for n in names)
    ax.set_ylim(math.floor(low * 4) / 4, math.floor(low * 4) / 4 + 1.25)
    ax.legend(loc="upper right")
    return fig


@figure("ch02.mixture", runs=("ch02.mixture",))
def mixture(runs):
    """Validation loss on Hamlet and on Macbeth against Macbeth's share of the training text."""
    run = runs["ch02.mixture"]
    share = 100 * run["share"]
    fig, ax = new_figure(height=3.8)
    for k, (key, name) in enumerate((("hamlet", "Hamlet's validation text"), ("macbeth", "Macbeth's validation text"))):
        v = run[key]
        ax.errorbar(
            share,
            v.mean(axis=1),
            yerr=v.std(axis=1, ddof=1),
            label=name,
            color=theme.PALETTE[k],
            linestyle=STYLES[k],
            marker=MARKERS[k],
            capsize=5,
        )
    ax.set_xticks(share, [f"{int(s)}%" for s in share])
    ax.set_xlabel("Macbeth's share of the training text")
    ax.set_ylabel("validation loss (nats)")
    ax.legend(loc="upper center")
    return fig


@figure("ch02.data_size", runs=("ch02.data_size",))
def data_size(runs):
    """Validation minus running training loss over training, for 10%, 30% and 100% of the
    training text at the same steps (mean of three seeds, band: their range)."""
    run = runs["ch02.data_size"]
    keep = run["step"] >= 200
    step, val, train = run["step"][keep], run["val_loss"][:, :, keep], run["train_loss"][:, :, keep]
    fig, ax = new_figure(height=3.8)
    for k, frac in enumerate(run["fraction"]):
        gap = val[k] - train[k]  # (seeds, evals)
        colour = theme.PALETTE[k]
        ax.plot(
            step,
            gap.mean(axis=0),
            color=colour,
            linestyle=STYLES[k],
            marker=MARKERS[k],
            markevery=max(1, len(step) // 8),
            label=f"{round(100 * frac)}% of the text",
        )
        ax.fill_between(step, gap.min(axis=0), gap.max(axis=0), color=colour, alpha=0.2, linewidth=0)
    ax.axhline(0, color=theme.MUTED, linestyle=":", linewidth=1.5)
    ax.set_xlabel("step")
    ax.set_ylabel("validation minus\ntraining loss (nats)")
    ax.set_xlim(200, step[-1])  # before, the running training loss still lags far behind
    ax.set_ylim(-0.1, None)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=3)
    return fig


DOCMASK_EVALS = (  # (index in ch02.docmask's "scores", label, hatch): each arm evaluated as trained
    (0, "no mask", ""),
    (1, "mask", "//"),
    (4, "separator, no mask", ".."),
    (5, "separator and mask", "xx"),
)


@figure("ch02.docmask", runs=("ch02.docmask",))
def docmask(runs):
    """Macbeth's loss on a scene's first 4 and 8 characters and far from any boundary, for the
    four arms (no mask, mask, a separator token before each scene without and with the mask),
    each evaluated as trained (mean of three seeds, bars: their sd)."""
    run = runs["ch02.docmask"]
    scores = run["scores"]  # (evaluations, scores, seeds)
    names = [f"first {int(k)}\ncharacters" for k in run["first"]] + ["far from\na boundary"]
    fig, ax = new_figure(width=7.2, height=6.4)
    width = 0.2
    x = np.arange(len(names))
    for e, (index, label, hatch) in enumerate(DOCMASK_EVALS):
        v = scores[index]
        ax.bar(
            x + (e - 1.5) * width,
            v.mean(axis=1),
            width,
            yerr=v.std(axis=1, ddof=1),
            label=label,
            color=theme.PALETTE[e],
            hatch=hatch,
            edgecolor=theme.BACKGROUND,
            capsize=4,
        )
    ax.set_xticks(x, names)
    ax.set_ylabel("loss on Macbeth (nats)")
    ax.grid(axis="x", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, fontsize=16)
    return fig
