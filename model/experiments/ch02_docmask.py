"""Chapter 2, packing with and without a document mask (``ch02.docmask``).

The play's scenes are its documents, packed end to end: training windows are drawn
as everywhere else (random starts in the training text) and cross scene boundaries
where they fall. Two arms on the same seeds, each at its own tuned learning rate:
attention across a boundary allowed (no mask), or blocked (the document mask of
model/decoder.py; positions are not reset at a boundary). Measured per arm: the
final validation loss, and on a play the Decoder never trained on (Macbeth, whose
scenes give the boundaries that Hamlet's held-out text lacks) the loss on the first
k characters of a scene against the loss far from a boundary, each arm evaluated the
way it was trained and also the other way (the unmasked arm with the mask, the masked
arm without it).

The arms train with model/train.py's ``train_many`` (one stack), the masked ones with
the document ids of their training and validation text beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.data import Corpus, book_path, doc_ids, load_corpus, load_text, val_windows, window_docs
from model.decoder import ModelConfig
from model.experiments.ch02_data import MACBETH, SEEDS, scene_starts, windows_crossing
from model.experiments.common import best_rung, exact, measured, progress, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.stacked import EVAL_CHUNK, StackedDecoder, init_stack
from model.train import TrainConfig, TrainResult, train_many

ARMS = ("nomask", "mask", "sep", "sep_mask")  # no mask, mask; a separator before each scene, without and with it


# --------------------------------------------------------------------------- documents and windows (tested)


@dataclass(frozen=True)
class Scored:
    """Windows to score, and which of their predictions count: x, y, doc (n, T); keep (n, T) bool."""

    x: torch.Tensor
    y: torch.Tensor
    doc: torch.Tensor
    keep: torch.Tensor


def after_boundary(
    ids: torch.Tensor, docs: torch.Tensor, starts: list[int], context: int, k: int, skip: int = 0
) -> Scored:
    """The predictions made from a scene's first k characters (inputs s + skip .. s + skip + k - 1,
    targets the k characters after them, for each scene start s > 0), in every window where they
    follow part of the previous scene: the window starts j = 1 .. context - k - 1 characters before s.
    skip = 1 when each scene opens with a separator at s: the same characters are then scored, the
    separator before them, with as many of the previous scene's characters in the window."""
    rows, keep = [], []
    pos = torch.arange(context)
    for s in starts:
        for j in range(1, context - k):
            w = s - j
            if s > 0 and w >= 0 and w + context + 1 <= len(ids):
                rows.append(w)
                keep.append((pos >= j + skip) & (pos < j + skip + k))
    if not rows:
        raise ValueError("no scene start leaves room for a window around it")
    at = torch.tensor(rows)[:, None] + torch.arange(context)  # (n, T): input positions
    return Scored(ids[at], ids[at + 1], docs[at], torch.stack(keep))


def with_separators(ids: torch.Tensor, starts: list[int], sep: int) -> tuple[torch.Tensor, list[int]]:
    """ids with the token `sep` before each scene start s > 0, and the new starts: each scene
    now starts at its separator (the first still at 0)."""
    pieces, new_starts, prev = [], [0], 0
    for i, s in enumerate(x for x in starts if x > 0):
        pieces += [ids[prev:s], torch.tensor([sep], dtype=ids.dtype)]
        new_starts.append(s + i)  # i separators before it
        prev = s
    pieces.append(ids[prev:])
    return torch.cat(pieces), new_starts


def far_from_boundary(ids: torch.Tensor, docs: torch.Tensor, starts: list[int], context: int) -> Scored:
    """The predictions of val_windows(ids, context) whose input is at least `context`
    characters into its scene and whose target is not a scene's first character: no
    window of `context` characters could hold a boundary before them."""
    x, y = val_windows(ids, context)
    doc = window_docs(docs, context)
    pos = (torch.arange(len(x)) * context)[:, None] + torch.arange(context)  # (n, T): input positions
    begin = torch.tensor(starts)[doc]  # the start of each input's scene
    keep = (pos - begin >= context) & (docs[pos + 1] == doc)
    return Scored(x, y, doc, keep)


# --------------------------------------------------------------------------- training and scoring


@torch.no_grad()
def token_losses(net: StackedDecoder, x: torch.Tensor, y: torch.Tensor, doc: torch.Tensor | None) -> torch.Tensor:
    """Every model's loss on every prediction of the windows x, y (n, T): (M, n, T) float64."""
    out = []
    M = net.M
    for s in range(0, len(x), EVAL_CHUNK):
        xc, yc = x[s : s + EVAL_CHUNK], y[s : s + EVAL_CHUNK]
        dc = None if doc is None else doc[s : s + EVAL_CHUNK].expand(M, *xc.shape)
        logits, _ = net.forward(xc.expand(M, *xc.shape), keep=False, doc=dc)  # (M, V, n*T)
        logp = torch.log_softmax(logits.double(), dim=1)
        out.append(-logp.gather(1, yc.reshape(1, 1, -1).expand(M, 1, -1)).view(M, *xc.shape))
    return torch.cat(out, dim=1)


def _stack_of(cfg: ModelConfig, results: list[TrainResult]) -> StackedDecoder:
    """The trained runs' final weights as one stack, for scoring."""
    layout, _ = init_stack(cfg, [0])
    theta = torch.stack([torch.cat([(r.state_dict or {})[n].reshape(-1) for n in layout.names]) for r in results])
    return StackedDecoder(cfg, layout, theta, torch.zeros_like(theta))


def _mean_kept(losses: torch.Tensor, keep: torch.Tensor) -> np.ndarray:
    """Each model's mean loss over the kept predictions: (M,)."""
    return (losses * keep).sum((1, 2)).numpy() / int(keep.sum())


# --------------------------------------------------------------------------- the experiment


@dataclass(frozen=True)
class DocMask:
    lrs: tuple[float, ...] = (6e-3, 2e-2, 6e-2)  # about 3x apart, around context 16's best (ch02.ctx.c16.lr)
    first: tuple[int, ...] = (4, 8)  # k: the predictions from a scene's first k characters, chosen in advance
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run's steps


EVALS = {  # name -> (arm trained, mask at evaluation)
    "nomask": ("nomask", False),
    "mask": ("mask", True),
    "nomask_eval_mask": ("nomask", True),
    "mask_eval_nomask": ("mask", False),
    "sep": ("sep", False),
    "sep_mask": ("sep_mask", True),
}
SEPARATED = {"sep", "sep_mask"}  # arms trained and scored on the text with separators
MASKED = {"mask", "sep_mask"}  # arms trained with the document mask


@experiment("ch02.docmask", config=DocMask(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10})
def docmask(ctx: RunContext) -> Outcome:
    """Packing with and without a document mask: validation loss, and the loss on a scene's
    first characters against far from a boundary (each arm at its own tuned rate)."""
    cfg: DocMask = ctx.config
    corpus = load_corpus()
    model = ModelConfig()
    T, n_train = model.context, len(corpus.train)
    starts = scene_starts(corpus.text)
    docs = doc_ids(starts, len(corpus.text))
    train_docs, val_docs = docs[:n_train], docs[n_train:]
    # held out: validation windows hold characters n_train .. only; training windows end before n_train
    xv, _ = val_windows(corpus.val, T)
    last_train = n_train - 1  # a training window starts at most at n_train - T - 1 and holds T + 1 characters
    overlap = int((n_train + torch.arange(len(xv)) * T <= last_train).sum())
    if overlap:
        raise AssertionError(f"{overlap} validation windows overlap the training text")
    val_crossing = int((window_docs(val_docs, T) != window_docs(val_docs, T)[:, :1]).any(1).sum())
    # the boundaries to score: Macbeth's scenes, encoded with Hamlet's vocabulary
    mac_text = load_text(book_path(MACBETH))
    mac = torch.from_numpy(corpus.vocab.encode(mac_text))
    mac_starts = scene_starts(mac_text)
    mac_docs = doc_ids(mac_starts, len(mac))
    near = {k: after_boundary(mac, mac_docs, mac_starts, T, k) for k in cfg.first}
    far = far_from_boundary(mac, mac_docs, mac_starts, T)
    # the separator arms: one more token (id = vocabulary size) before every scene, in training and scoring
    sep = corpus.vocab.size
    sep_model = replace(model, vocab=sep + 1)
    sep_train, sep_train_starts = with_separators(corpus.train, [s for s in starts if s < n_train], sep)
    sep_corpus = Corpus(text=corpus.text, vocab=corpus.vocab, train=sep_train, val=corpus.val)
    sep_train_docs = doc_ids(sep_train_starts, len(sep_train))
    mac_sep, mac_sep_starts = with_separators(mac, mac_starts, sep)
    mac_sep_docs = doc_ids(mac_sep_starts, len(mac_sep))
    near_sep = {k: after_boundary(mac_sep, mac_sep_docs, mac_sep_starts, T, k, skip=1) for k in cfg.first}
    far_sep = far_from_boundary(mac_sep, mac_sep_docs, mac_sep_starts, T)
    for k in cfg.first:  # the separator arms score the same targets after as many previous-scene characters
        if not torch.equal(near_sep[k].y[near_sep[k].keep], near[k].y[near[k].keep]):
            raise AssertionError("the separator arms would score other characters than the plain arms")

    results: dict[str, list[TrainResult]] = {}
    chosen: dict[str, list[TrainResult]] = {}
    m: dict[str, Measurement] = {}
    ladder = [replace(cfg.train, lr=lr, seed=s) for lr in cfg.lrs for s in ctx.seeds]
    S = len(ctx.seeds)
    for a, arm in enumerate(ARMS):
        hook = progress(ctx, cfg.train, a / len(ARMS), 1 / len(ARMS))
        arm_model, arm_corpus, arm_docs = (
            (sep_model, sep_corpus, sep_train_docs) if arm in SEPARATED else (model, corpus, train_docs)
        )
        if arm in MASKED:
            results[arm] = train_many(
                arm_model, ladder, arm_corpus, on_eval=hook, workers=1, docs=arm_docs, val_docs=val_docs
            )
        else:
            results[arm] = train_many(arm_model, ladder, arm_corpus, on_eval=hook, workers=1)
        finals = np.array([r.val_loss_final for r in results[arm]]).reshape(len(cfg.lrs), S)
        b = best_rung(finals)
        chosen[arm] = results[arm][b * S : (b + 1) * S]
        m |= {
            f"ch02.docmask.{arm}.lr": exact(cfg.lrs[b], "", f"learning rate chosen for the {arm} arm", 1),
            f"ch02.docmask.{arm}.edge": exact(
                int(b in (0, len(cfg.lrs) - 1)), "", f"1 if the {arm} arm's chosen rate is at the sweep's edge"
            ),
            f"ch02.docmask.{arm}.val": measured(finals[b], "nats", f"validation loss, {arm} arm at its chosen rate"),
        }
        for i, lr in enumerate(cfg.lrs):
            m[f"ch02.docmask.{arm}.sweep{i}.val"] = measured(
                finals[i], "nats", f"validation loss, {arm} arm at learning rate {lr:g}"
            )
    scores: dict[str, dict[str, np.ndarray]] = {}
    for name, (arm, with_mask) in EVALS.items():
        separated = arm in SEPARATED
        net = _stack_of(sep_model if separated else model, chosen[arm])
        scores[name] = {}
        near_, far_ = (near_sep, far_sep) if separated else (near, far)
        for key, sc in [*((f"first{k}", near_[k]) for k in cfg.first), ("far", far_)]:
            lt = token_losses(net, sc.x, sc.y, sc.doc if with_mask else None)
            scores[name][key] = _mean_kept(lt, sc.keep)
    for as_trained, other in (("nomask", "nomask_eval_mask"), ("mask", "mask_eval_nomask")):
        if not np.array_equal(scores[as_trained]["far"], scores[other]["far"]):
            raise AssertionError("the mask changed a prediction far from any boundary")
    what = {
        "nomask": "no mask, evaluated without",
        "mask": "mask, evaluated with it",
        "nomask_eval_mask": "no mask, evaluated with the mask",
        "mask_eval_nomask": "the mask, evaluated without it",
        "sep": "separators, no mask, evaluated without",
        "sep_mask": "separators and the mask, evaluated with it",
    }
    for name, per in scores.items():
        for key, v in per.items():
            where = "far from a boundary" if key == "far" else f"a scene's first {key[5:]} characters"
            m[f"ch02.docmask.{name}.{key}"] = spread(v, "nats", f"Macbeth, {where}; trained with {what[name]}")
    for key in scores["mask"]:
        a_, b_, c_ = scores["nomask"][key], scores["mask"][key], scores["nomask_eval_mask"][key]
        m |= {
            f"ch02.docmask.train_effect.{key}": spread(
                b_ - c_, "nats", f"{key}: trained with the mask minus without, both evaluated with it (same seeds)"
            ),
            f"ch02.docmask.eval_effect.{key}": spread(
                c_ - a_, "nats", f"{key}: the unmasked arm evaluated with the mask minus without"
            ),
            f"ch02.docmask.total_effect.{key}": spread(
                b_ - a_, "nats", f"{key}: each arm evaluated as trained, mask minus no mask (same seeds)"
            ),
            f"ch02.docmask.mask_drop.{key}": spread(
                scores["mask_eval_nomask"][key] - b_,
                "nats",
                f"{key}: the masked arm evaluated without the mask minus with it",
            ),
        }
    for key in scores["mask"]:
        for name in ("sep", "sep_mask"):
            m[f"ch02.docmask.{name}_minus_mask.{key}"] = spread(
                scores[name][key] - scores["mask"][key],
                "nats",
                f"{key}: the {what[name]} arm minus the mask arm (same seeds)",
            )
        m[f"ch02.docmask.sep_minus_nomask.{key}"] = spread(
            scores["sep"][key] - scores["nomask"][key],
            "nats",
            f"{key}: the separator arm (no mask) minus the no-mask arm (same seeds)",
        )
    val = {arm: np.array([r.val_loss_final for r in chosen[arm]]) for arm in ARMS}
    crossing = windows_crossing([s for s in starts if 0 < s < n_train], n_train, T)
    m |= {
        "ch02.docmask.val_diff": spread(
            val["mask"] - val["nomask"], "nats", "validation loss, mask arm minus no-mask arm (same seeds)"
        ),
        "ch02.docmask.sep_val_diff": spread(
            val["sep"] - val["nomask"], "nats", "validation loss, separator arm minus no-mask arm (same seeds)"
        ),
        # the sd alone, for differences whose mean is smaller than it (a slide then says "within its spread")
        "ch02.docmask.val_diff_sd": exact(
            float(np.std(val["mask"] - val["nomask"], ddof=1)),
            "nats",
            "sd over seeds of the validation loss, mask minus no mask",
            1,
        ),
        "ch02.docmask.far_diff_sd": exact(
            float(np.std(scores["mask"]["far"] - scores["nomask"]["far"], ddof=1)),
            "nats",
            "sd over seeds of the far loss, mask minus no mask",
            1,
        ),
        "ch02.docmask.sep_token": exact(sep, "", "id of the separator token (one more than the vocabulary)"),
        "ch02.docmask.sep_count": exact(
            len(sep_train_starts) - 1, "separators", "separators in the separator arms' training text"
        ),
        "ch02.docmask.steps": exact(cfg.train.steps, "steps", "steps of every run"),
        "ch02.docmask.lr_low": exact(min(cfg.lrs), "", "lowest learning rate of the sweep", 1),
        "ch02.docmask.lr_high": exact(max(cfg.lrs), "", "highest learning rate of the sweep", 1),
        "ch02.docmask.rates": exact(len(cfg.lrs), "rates", "learning rates swept per arm"),
        "ch02.docmask.train_crossing": exact(crossing, "windows", "training windows that hold a scene boundary"),
        "ch02.docmask.train_crossing_share": exact(
            crossing / (n_train - T), "", "share of training windows that hold a scene boundary", 2
        ),
        "ch02.docmask.heldout_overlap": exact(overlap, "windows", "validation windows overlapping training text (0)"),
        "ch02.docmask.val_crossing": exact(val_crossing, "windows", "validation windows that hold a scene boundary"),
        "ch02.docmask.mac_boundaries": exact(len(mac_starts) - 1, "boundaries", "scene boundaries in Macbeth"),
        "ch02.docmask.far_count": exact(int(far.keep.sum()), "predictions", "Macbeth predictions far from a boundary"),
    }
    for k in cfg.first:
        m[f"ch02.docmask.first{k}_chars"] = exact(k, "characters", f"k, a scene's first {k} characters (chosen first)")
        m[f"ch02.docmask.first{k}_count"] = exact(
            int(near[k].keep.sum()), "predictions", f"Macbeth predictions from a scene's first {k} characters"
        )
        m[f"ch02.docmask.first{k}_windows"] = exact(
            len(near[k].x), "windows", f"Macbeth windows scored for the first {k} characters"
        )
    return Outcome(
        measurements=m,
        series={
            "lrs": list(cfg.lrs),
            "first": list(cfg.first),
            "sweep": np.array([[r.val_loss_final for r in results[arm]] for arm in ARMS]).reshape(len(ARMS), -1, S),
            # (evaluations, scores, seeds): evaluations in EVALS order, scores first{k}... then far
            "scores": np.array([[per[key] for key in per] for per in scores.values()]),
            "step": chosen["mask"][0].curves["step"],
            "val_loss": np.array([[r.curves["val_loss"] for r in chosen[arm]] for arm in ARMS]),  # (arms, seeds, evals)
        },
    )
