"""Chapter 2, a repeated passage swept (``ch02.dupsweep``): does the toy ever recite it?

One passage, 128 characters from a third of the way into the training text, is repeated 200, 1,000 or
5,000 times, at three learning rates and two widths (d_model 16, the default, and 64), three
seeds each; every setting is scored by how many characters the Decoder recites exactly after
a prompt from inside the passage, and how often it recites all of them. Against each rate
and width, the clean text; and at 200 copies, the same number of characters added as fresh
text (the start of Macbeth) instead of copies, to tell the cost of repetition from the cost
of reading other text. This module stands apart so that the rest of chapter 2 keeps its
fingerprints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.data import Corpus, Vocab, book_path, load_corpus, load_text
from model.decoder import ModelConfig
from model.experiments.ch02_data import MACBETH, SEEDS, _greedy, matched_prefix, with_copies
from model.experiments.common import exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, TrainResult, train_many


def paired(values, unit: str, what: str) -> Measurement:
    """A paired difference over seeds, shown to the decimal place of its sd's first digit
    (0.007 ± 0.013, not 0.0069 ± 0.0134), however small its mean."""
    a = np.asarray(values, dtype=np.float64)
    sd, mean = float(a.std(ddof=1)), float(abs(a.mean()))
    if sd == 0 or mean == 0:
        return measured(a, unit, what, 2)
    places = -math.floor(math.log10(sd))
    return measured(a, unit, what, max(1, places + 1 + math.floor(math.log10(mean))))


@dataclass(frozen=True)
class DupSweep:
    length: int = 128  # the passage: this many characters of the training text ...
    at: float = 1 / 3  # ... starting this far into it
    copies: tuple[int, ...] = (200, 1000, 5000)
    lrs: tuple[float, ...] = (6e-3, 2e-2, 6e-2)  # at the default width
    widths: tuple[int, ...] = (16, 64)
    wide_lrs: tuple[float, ...] = (6e-3,)  # at the larger width: one rate (about 4x the time per step)
    fresh_copies: int = 200  # the fresh arm adds as many characters as this many copies do
    new: int = 64  # characters generated after each prompt
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=500))  # the default run's steps


def recital(
    cfg: ModelConfig, results: list[TrainResult], vocab: Vocab, ids: torch.Tensor, start: int, length: int, new: int
):
    """Per run: the mean number of characters recited exactly after each prompt from inside the
    passage ids[start : start + length] (prompts every `context` characters), and the share of
    prompts continued exactly for all `new` characters; and the number of prompts."""
    T = cfg.context
    offsets = list(range(0, length - T - new + 1, T))
    if not offsets:
        raise ValueError(f"a passage of {length} characters holds no prompt of {T} with {new} to recite")
    prompts = torch.stack([ids[start + i : start + i + T] for i in offsets])
    want = [vocab.decode(ids[start + i + T : start + i + T + new]) for i in offsets]
    recalls, whole = [], []
    for r in results:
        got = [vocab.decode(g) for g in _greedy(cfg, r, prompts, new)]
        lengths = [matched_prefix(g, w) for g, w in zip(got, want, strict=True)]
        recalls.append(float(np.mean(lengths)))
        whole.append(float(np.mean([k == new for k in lengths])))
    return np.array(recalls), np.array(whole), len(offsets)


QUICK = {"train.steps": 20, "train.eval_every": 10, "copies": (200,), "lrs": (2e-2,), "widths": (16, 64)}


@experiment("ch02.dupsweep", config=DupSweep(), seeds=SEEDS, quick=QUICK)
def dupsweep(ctx: RunContext) -> Outcome:
    """A 128-character passage repeated 200 to 5,000 times, at three rates and two widths:
    recital after a passage prompt, validation cost, and fresh text added instead."""
    cfg: DupSweep = ctx.config
    corpus = load_corpus()
    n = len(corpus.train)
    start = round(cfg.at * n)
    mac = torch.from_numpy(corpus.vocab.encode(load_text(book_path(MACBETH))))
    added = (cfg.fresh_copies - 1) * cfg.length
    if added > len(mac):
        raise ValueError(f"Macbeth has {len(mac)} characters, fewer than the {added} the fresh arm adds")
    texts = {"clean": corpus.train, "fresh": torch.cat([corpus.train, mac[:added]])}
    texts |= {f"x{c}": with_copies(corpus.train, start, cfg.length, c) for c in cfg.copies}
    m: dict[str, Measurement] = {
        "ch02.dupsweep.passage": exact(cfg.length, "characters", "length of the repeated passage"),
        "ch02.dupsweep.new": exact(cfg.new, "characters", "characters generated after each passage prompt"),
        "ch02.dupsweep.steps": exact(cfg.train.steps, "steps", "steps of every run"),
        "ch02.dupsweep.lr_low": exact(min(cfg.lrs), "", "lowest learning rate swept", 1),
        "ch02.dupsweep.lr_high": exact(max(cfg.lrs), "", "highest learning rate swept", 1),
        "ch02.dupsweep.fresh_added": exact(added, "characters", "characters the fresh arm adds (as the copies do)"),
    }
    for c in cfg.copies:
        share = c * cfg.length / len(texts[f"x{c}"])
        m[f"ch02.dupsweep.x{c}.share"] = exact(share, "", f"share of the training text that is the passage, x{c}", 2)
    settings = [(w, name) for w in cfg.widths for name in texts if name != "fresh" or w == cfg.widths[0]]
    best_recall, best_whole, recall_of, prompts = 0.0, 0.0, {}, 0
    S = len(ctx.seeds)
    for k, (width, name) in enumerate(settings):
        model = ModelConfig(d_model=width)
        arm = Corpus(text=corpus.text, vocab=corpus.vocab, train=texts[name], val=corpus.val)
        lrs = cfg.lrs if width == cfg.widths[0] else cfg.wide_lrs
        ladder = [replace(cfg.train, lr=lr, seed=s) for lr in lrs for s in ctx.seeds]
        runs = train_many(
            model, ladder, arm, workers=1, on_eval=progress(ctx, cfg.train, k / len(settings), 1 / len(settings))
        )
        for i, lr in enumerate(lrs):
            part = runs[i * S : (i + 1) * S]
            val = np.array([r.val_loss_final for r in part])
            rec, whole, prompts = recital(model, part, corpus.vocab, corpus.train, start, cfg.length, cfg.new)
            recall_of[(width, name, i)] = (val, rec, whole)
            tag = f"ch02.dupsweep.d{width}.{name}.r{i}"
            m |= {
                f"{tag}.val": measured(val, "nats", f"validation loss, d_model {width}, {name}, rate {lr:g}"),
                f"{tag}.recall": measured(
                    rec,
                    "characters",
                    f"passage characters recited exactly after a passage prompt, d_model {width}, {name}, rate {lr:g}",
                    2,
                ),
                f"{tag}.whole": measured(
                    whole,
                    "",
                    f"share of passage prompts recited for all {cfg.new} characters, "
                    f"d_model {width}, {name}, rate {lr:g}",
                    2,
                ),
            }
            if name != "clean":
                clean_val = recall_of[(width, "clean", i)][0]
                m[f"{tag}.val_diff"] = paired(
                    val - clean_val,
                    "nats",
                    f"validation loss minus the clean text's, d_model {width}, {name}, rate {lr:g} (same seeds)",
                )
            if name.startswith("x"):
                best_recall, best_whole = max(best_recall, float(rec.max())), max(best_whole, float(whole.max()))
    m["ch02.dupsweep.prompts"] = exact(prompts, "prompts", "prompts from inside the passage")
    m["ch02.dupsweep.max_recall"] = exact(
        best_recall, "characters", "largest mean recital of any seed in any repeated setting", 3
    )
    m["ch02.dupsweep.wide_lr"] = exact(cfg.wide_lrs[0], "", "the larger width's (first) rate", 1)
    m["ch02.dupsweep.max_whole"] = exact(best_whole, "", "largest share of prompts recited whole, any seed, setting", 2)
    for width in cfg.widths:
        for c in cfg.copies:
            # the setting's rate with the highest mean recital: where memorisation shows most
            lrs = cfg.lrs if width == cfg.widths[0] else cfg.wide_lrs
            i = int(np.argmax([recall_of[(width, f"x{c}", i)][1].mean() for i in range(len(lrs))]))
            _, rec, whole = recall_of[(width, f"x{c}", i)]
            tag = f"ch02.dupsweep.d{width}.x{c}.most"
            m |= {
                f"{tag}.lr": exact(lrs[i], "", f"rate with the most recital, d_model {width}, {c} copies", 1),
                f"{tag}.recall": measured(rec, "characters", f"recital at that rate, d_model {width}, {c} copies", 2),
                f"{tag}.whole": measured(whole, "", f"whole recitals at that rate, d_model {width}, {c} copies", 2),
            }
    series = {
        "lrs": list(cfg.lrs),
        "wide_lrs": list(cfg.wide_lrs),
        "copies": list(cfg.copies),
        "widths": list(cfg.widths),
    }
    for w in cfg.widths:
        n_lrs = len(cfg.lrs if w == cfg.widths[0] else cfg.wide_lrs)
        series[f"d{w}.recall"] = np.array([[recall_of[(w, f"x{c}", i)][1] for i in range(n_lrs)] for c in cfg.copies])
        series[f"d{w}.whole"] = np.array([[recall_of[(w, f"x{c}", i)][2] for i in range(n_lrs)] for c in cfg.copies])
    return Outcome(measurements=m, series=series)
