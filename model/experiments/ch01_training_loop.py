"""Chapter 1, the training loop and its objective: the numbers deck 01 shows.

- ``ch01.default``: the default run, three seeds: loss curves, where they start and end;
- ``ch01.levels``: the book's reference levels (chance, unigram, bigram, trigram) and sizes;
- ``ch01.plateau``: where a plateau appears: no LayerNorm on its own learning-rate ladder, with attention and
  attention-blind, and an attention-blind baseline with LayerNorm;
- ``ch01.checks``: how the trainer is checked (NumPy reference, finite differences, the fast path);
- ``ch01.arithmetic``: loss is a proxy: exact-match accuracy on held-out sums against the loss;
- ``ch01.lr_extremes``: failure shapes, a learning rate far too high and far too low;
- ``ch01.nan``: the NaN cascade, instrumented stage by stage;
- ``ch01.trainer``: what the browser trainer replays (data, one seed's start and batches) and that run in Python;
- ``ch01.browser``: the browser trainer against the NumPy reference, step for step (needs Chromium).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import torch

from model import reference
from model.arithmetic import (
    Problems,
    answer_loss,
    arithmetic_corpus,
    every_single_digit_sum,
    exact_match,
    held_out,
    overlap,
)
from model.data import Batches, load_corpus, ngram_loss, sample_batch, val_windows
from model.decoder import Decoder, ModelConfig, num_params
from model.experiments.common import exact, first_step_below, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.export import trainer_series
from model.optim import Optimizer
from model.stacked import StackedDecoder, init_stack
from model.train import Step, TrainConfig, TrainResult, lr_at, train_many

SEEDS = (0, 1, 2)
TAIL_STEPS = 200  # "the end of a run": its last this many steps


# --------------------------------------------------------------------------- the default run


@dataclass(frozen=True)
class DefaultRun:
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=10))


@experiment("ch01.default", config=DefaultRun(), seeds=SEEDS, quick={"train.steps": 30})
def default_run(ctx: RunContext) -> Outcome:
    """The default run: 2,000 AdamW steps on Hamlet, three seeds."""
    cfg: DefaultRun = ctx.config
    corpus = load_corpus()
    unigram = ngram_loss(corpus.train, corpus.val, n=1, vocab_size=corpus.vocab.size)
    bigram = ngram_loss(corpus.train, corpus.val, n=2, vocab_size=corpus.vocab.size)
    runs = train_many(
        cfg.model, [replace(cfg.train, seed=s) for s in ctx.seeds], corpus, workers=1, on_eval=progress(ctx, cfg.train)
    )
    steps = runs[0].curves["step"]
    val = np.array([r.curves["val_loss"] for r in runs])  # (seeds, evals)
    train_loss = np.array([r.curves["train_loss"] for r in runs])
    t = cfg.train
    at = {s: steps.index(s) for s in (100, 500) if s in steps}
    # the final weights on training text, measured as validation is (every window once, after training)
    tail = corpus.train[-len(corpus.val) :]  # the last stretch of the training text, as long as validation
    train_all = np.array([_loss_on(cfg.model, r, corpus.train) for r in runs])
    train_tail = np.array([_loss_on(cfg.model, r, tail) for r in runs])
    last = max(0, len(steps) - 1 - TAIL_STEPS // t.eval_every)  # the evaluation TAIL_STEPS before the end
    m = {
        "ch01.params": exact(num_params(Decoder(cfg.model)), "parameters", "parameters of the Decoder"),
        "ch01.steps": exact(t.steps, "steps", "training steps of the default run"),
        "ch01.batch": exact(t.batch, "windows", "windows per batch"),
        "ch01.context": exact(cfg.model.context, "characters", "context length"),
        "ch01.d_model": exact(cfg.model.d_model, "", "width of the residual stream (d_model)"),
        "ch01.layers": exact(cfg.model.n_layers, "blocks", "transformer blocks"),
        "ch01.heads": exact(cfg.model.n_heads, "heads", "attention heads per block"),
        "ch01.lr": exact(t.lr, "", "peak learning rate", 2),
        "ch01.warmup": exact(t.warmup, "steps", "linear warmup steps"),
        "ch01.clip": exact(math.inf if t.clip is None else t.clip, "", "gradient-norm clipping threshold", 2),
        "ch01.tokens_seen": exact(
            runs[0].tokens_seen, "characters", "characters seen in training (steps x batch x context)"
        ),
        "ch01.epochs": exact(runs[0].tokens_seen / len(corpus.train), "passes", "passes over the training text", 2),
        "ch01.val_loss.init": measured(val[:, 0], "nats", "validation loss at initialisation"),
        "ch01.val_loss.final": measured(val[:, -1], "nats", "validation loss after the last step"),
        "ch01.train_loss.final": measured(
            [r.train_loss_final for r in runs],
            "nats",
            "training loss at the end: mean of the last eval_every batches' losses, each before its update",
        ),
        "ch01.tail_steps": exact(TAIL_STEPS, "steps", "the end of a run, for the loss fall over its last steps"),
        "ch01.train_loss.window": exact(t.eval_every, "batches", "batches averaged in each training-loss point"),
        "ch01.gap.final": measured(
            val[:, -1] - train_loss[:, -1], "nats", "validation minus (running) training loss at the end", 2
        ),
        "ch01.train_loss.all_text": measured(
            train_all, "nats", "final weights on every training window (measured as validation is)"
        ),
        "ch01.gap.matched": measured(
            val[:, -1] - train_all, "nats", "validation minus training loss, both on fixed windows, final weights", 2
        ),
        "ch01.train_loss.tail": measured(
            train_tail, "nats", "final weights on the last stretch of training text, as long as validation"
        ),
        "ch01.gap.tail": measured(
            val[:, -1] - train_tail, "nats", "validation minus training-tail loss (two parts of the play)", 2
        ),
        "ch01.val_loss.last200_drop": measured(
            val[:, last] - val[:, -1], "nats", f"validation loss fall over the last {TAIL_STEPS} steps", 2
        ),
        "ch01.perplexity.init": measured(np.exp(val[:, 0]), "", "validation perplexity at initialisation", 3),
        "ch01.perplexity.final": measured(np.exp(val[:, -1]), "", "validation perplexity after the last step", 3),
    }
    for level, value in (("unigram", unigram), ("bigram", bigram)):
        crossings = [first_step_below(steps, v, value) for v in val]
        if not any(math.isnan(c) for c in crossings):  # a --quick run may stop before any crossing
            m[f"ch01.steps_to.{level}"] = measured(
                crossings, "steps", f"first evaluated step below the {level} level", 2
            )
    found = [_plateau(steps, v, PLATEAU_FLAT, PLATEAU_SPAN, PLATEAU_RESUME, PLATEAU_AFTER) for v in val]
    m |= _plateau_keys("default", [end - start for start, end in found])
    for s, i in at.items():
        m[f"ch01.val_loss.step{s}"] = measured(val[:, i], "nats", f"validation loss after {s} steps")
    return Outcome(
        measurements=m,
        series={
            "step": steps,
            "val_loss": val,
            "train_loss": train_loss,
            "lr": runs[0].curves["lr"],
            "grad_norm": np.array([r.curves["grad_norm"] for r in runs]),
            "seeds": list(ctx.seeds),
            "levels": [math.log(corpus.vocab.size), unigram, bigram],  # chance, unigram, bigram
        },
    )


@torch.no_grad()
def _loss_on(cfg: ModelConfig, result: TrainResult, ids: torch.Tensor) -> float:
    """A trained run's mean loss on every non-overlapping window of ``ids``."""
    model = Decoder(cfg)
    model.load_state_dict(result.state_dict or {})
    x, y = val_windows(ids, cfg.context)
    return float(model.loss(x, y))


# --------------------------------------------------------------------------- reference levels


@experiment("ch01.levels", config={"context": 16})
def levels(ctx: RunContext) -> Outcome:
    """The book's reference levels and sizes: chance, unigram, bigram, trigram."""
    corpus = load_corpus()
    V = corpus.vocab.size
    train_ids, val_ids = corpus.train, corpus.val
    x, _ = val_windows(val_ids, ctx.config["context"])
    m = {
        "ch01.vocab": exact(V, "characters", "vocabulary size (63 most frequent characters + unknown)"),
        "ch01.corpus.chars": exact(len(corpus.text), "characters", "characters of Hamlet after stripping markup"),
        "ch01.corpus.train": exact(len(train_ids), "characters", "training characters (first 90%)"),
        "ch01.corpus.val": exact(len(val_ids), "characters", "validation characters (last 10%)"),
        "ch01.corpus.val_windows": exact(len(x), "windows", "non-overlapping validation windows"),
        "ch01.level.chance": exact(math.log(V), "nats", "loss of a uniform guess over the vocabulary, ln 64"),
        "ch01.level.unigram": exact(
            ngram_loss(train_ids, val_ids, n=1, vocab_size=V),
            "nats",
            "unigram model (add-one) counted on the training text, on validation text",
        ),
        "ch01.level.bigram": exact(
            ngram_loss(train_ids, val_ids, n=2, vocab_size=V), "nats", "bigram model (add-one) on validation text"
        ),
        "ch01.level.trigram": exact(
            ngram_loss(train_ids, val_ids, n=3, vocab_size=V), "nats", "trigram model (add-one) on validation text"
        ),
        "ch01.xent.p90": exact(-math.log(0.9), "nats", "loss when the true token gets probability 0.9", 2),
        "ch01.xent.p50": exact(-math.log(0.5), "nats", "loss when the true token gets probability 0.5", 2),
        "ch01.xent.p01": exact(-math.log(0.01), "nats", "loss when the true token gets probability 0.01", 2),
    }
    return Outcome(measurements=m)


# --------------------------------------------------------------------------- where a plateau appears


PLATEAU_FLAT = 0.06  # a plateau: the loss falls by less than this many nats per 100 steps ...
PLATEAU_SPAN = 50  # ... (each rate measured over the next this many steps) ...
PLATEAU_RESUME = 0.12  # ... and then falls by at least this many per 100 steps ...
PLATEAU_AFTER = 100  # ... over the next this many steps


PLATEAU_LRS = (2e-3, 6e-3, 2e-2, 6e-2)  # the models without LayerNorm: their own ladder, about 3x apart


@dataclass(frozen=True)
class Plateau:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=10))  # the default run's settings
    lrs: tuple[float, ...] = PLATEAU_LRS  # the ladder; its first rung is the default rate (train.lr)
    flat: float = PLATEAU_FLAT
    span: int = PLATEAU_SPAN
    resume: float = PLATEAU_RESUME
    after: int = PLATEAU_AFTER


#: The variants of the default model: without LayerNorm, with attention or attention-blind (each position
#: attends only to itself), each on the learning-rate ladder; and attention-blind with LayerNorm, at the default rate.
PLATEAU_MODELS = {
    "no_norm": ModelConfig(norm="none"),
    "blind_no_norm": ModelConfig(norm="none", attention="self"),
    "blind": ModelConfig(attention="self"),
}
LADDERED = ("no_norm", "blind_no_norm")


@experiment("ch01.plateau", config=Plateau(), seeds=SEEDS, quick={"train.steps": 30})
def plateau(ctx: RunContext) -> Outcome:
    """Where a plateau appears: the default model without LayerNorm, with attention and attention-blind,
    each on its own learning-rate ladder, and the attention-blind model with LayerNorm at the default rate;
    every other setting the default run's. The default model itself is ch01.default."""
    cfg: Plateau = ctx.config
    if cfg.lrs[0] != cfg.train.lr:
        raise ValueError(f"the ladder's first rung must be the default rate {cfg.train.lr}, got {cfg.lrs[0]}")
    corpus = load_corpus()
    V = corpus.vocab.size
    unigram = ngram_loss(corpus.train, corpus.val, n=1, vocab_size=V)
    bigram = ngram_loss(corpus.train, corpus.val, n=2, vocab_size=V)
    seeds = list(ctx.seeds)
    rates = {name: cfg.lrs if name in LADDERED else cfg.lrs[:1] for name in PLATEAU_MODELS}
    total = sum(len(r) for r in rates.values())
    val: dict[str, np.ndarray] = {}  # name -> (rates, seeds, evals)
    done = 0.0
    for name, model_cfg in PLATEAU_MODELS.items():
        runs = [replace(cfg.train, lr=lr, seed=s) for lr in rates[name] for s in seeds]  # one stack per model
        share = len(rates[name]) / total
        results = train_many(model_cfg, runs, corpus, workers=1, on_eval=progress(ctx, cfg.train, done, share))
        done += share
        curves = np.array([r.curves["val_loss"] for r in results])
        val[name] = curves.reshape(len(rates[name]), len(seeds), -1)
        steps = results[0].curves["step"]
    detect = partial(_plateau, steps, flat=cfg.flat, span=cfg.span, resume=cfg.resume, after=cfg.after)
    m = {
        "ch01.plateau.flat": exact(cfg.flat, "nats per 100 steps", "a plateau: the loss falls slower than this", 1),
        "ch01.plateau.span": exact(cfg.span, "steps", "the slope is measured over this many steps ahead"),
        "ch01.plateau.after": exact(cfg.after, "steps", "the renewed fall is measured over this many steps"),
        "ch01.plateau.resume": exact(
            cfg.resume, "nats per 100 steps", "a plateau ends in a fall at least this fast", 2
        ),
        "ch01.plateau.blind.final": measured(
            val["blind"][0, :, -1], "nats", "attention-blind model: validation loss after the default run's steps"
        ),
        "ch01.plateau.blind.minus_bigram": measured(
            val["blind"][0, :, -1] - bigram, "nats", "attention-blind model's final loss minus the bigram level", 2
        ),
        "ch01.plateau.no_norm.final": measured(
            val["no_norm"][0, :, -1], "nats", "model without LayerNorm: validation loss after the default run's steps"
        ),
    }
    m |= _plateau_keys("blind", [end - start for start, end in map(detect, val["blind"][0])])
    for k, lr in enumerate(cfg.lrs):
        m[f"ch01.plateau.lr.r{k}"] = exact(lr, "", f"rung {k} of the no-LayerNorm learning-rate ladder", 1)
    what = {"no_norm": "no LayerNorm", "blind_no_norm": "no LayerNorm, attention-blind"}
    for name in LADDERED:
        finals = val[name][:, :, -1].mean(axis=1)  # (rates,)
        best = int(np.argmin(finals))
        m[f"ch01.plateau.{name}.best_lr"] = exact(
            cfg.lrs[best], "", f"{what[name]}: the rung with the lowest mean final validation loss", 1
        )
        m[f"ch01.plateau.{name}.best_final"] = measured(
            val[name][best, :, -1], "nats", f"{what[name]}: final validation loss at its best rung"
        )
        for k, lr in enumerate(cfg.lrs):
            found = [detect(v) for v in val[name][k]]
            m |= _plateau_keys(f"{name}.r{k}", [end - start for start, end in found], f"{what[name]}, lr {lr:g}")
            m[f"ch01.plateau.{name}.r{k}.final"] = measured(
                val[name][k, :, -1], "nats", f"{what[name]}, lr {lr:g}: validation loss at the end"
            )
        # the default rate (rung 0) in detail: where the plateau sits and how the loss moves on it and after
        found = [detect(v) for v in val[name][0]]
        m |= _plateau_keys(name, [end - start for start, end in found], f"{what[name]}, default rate")
        if all(end > start for start, end in found):
            m |= _plateau_detail(name, what[name], steps, val[name][0], found, unigram, cfg.after)
    levels = [math.log(V), unigram, bigram]
    series = {"step": steps, "seeds": seeds, "lrs": list(cfg.lrs), "levels": levels}
    series |= {f"{name}_val_loss": v for name, v in val.items()}  # each (rates, seeds, evals)
    return Outcome(measurements=m, series=series)


def _plateau_detail(name: str, what: str, steps, val: np.ndarray, found, unigram: float, after: int) -> dict:
    """Keys of the plateaus ``found`` on each seed's curve (rows of ``val``): start, end, mean level, its
    distance below the unigram level, the fall per 100 steps on it and in the ``after`` steps that follow."""
    dt = steps[1] - steps[0]
    i0 = [steps.index(a) for a, _ in found]
    i1 = [steps.index(b) for _, b in found]
    i2 = [min(len(steps) - 1, i + after // dt) for i in i1]
    level = [val[s, a : b + 1].mean() for s, (a, b) in enumerate(zip(i0, i1, strict=True))]

    def fall(a: list[int], b: list[int]) -> list[float]:  # loss fall per 100 steps between evaluations
        return [
            100 * (val[s, i] - val[s, j]) / (steps[j] - steps[i]) for s, (i, j) in enumerate(zip(a, b, strict=True))
        ]

    key = f"ch01.plateau.{name}"
    return {
        f"{key}.start": measured([a for a, _ in found], "steps", f"{what}: plateau start", 2),
        f"{key}.end": measured([b for _, b in found], "steps", f"{what}: plateau end", 2),
        f"{key}.level": measured(level, "nats", f"{what}: mean validation loss on the plateau", 4),
        f"{key}.below_unigram": measured(
            [unigram - v for v in level], "nats", f"{what}: unigram level minus the mean loss on the plateau", 4
        ),
        f"{key}.rate_on": measured(
            fall(i0, i1), "nats per 100 steps", f"{what}: loss fall per 100 steps on the plateau", 2
        ),
        f"{key}.rate_after": measured(
            fall(i1, i2), "nats per 100 steps", f"{what}: loss fall per 100 steps in the {after} steps after it", 2
        ),
    }


def _plateau_keys(name: str, lengths: list[int], what: str | None = None) -> dict[str, Measurement]:
    what = what or name
    return {
        f"ch01.plateau.{name}.length": measured(lengths, "steps", f"{what}: longest plateau (0 if none)", 2),
        f"ch01.plateau.{name}.seeds": exact(sum(n > 0 for n in lengths), "seeds", f"{what}: seeds with a plateau"),
    }


def _plateau(steps, losses, flat: float, span: int, resume: float, after: int) -> tuple[int, int]:
    """The longest plateau (start step, end step), or (0, 0) if there is none. A
    plateau is a stretch where the loss falls by less than ``flat`` nats per 100 steps
    (each rate measured over the next ``span`` steps) that ends in a renewed fall: at
    least ``resume`` nats per 100 steps over the ``after`` steps that follow. A loss
    that only slows down, as every converging run does, has no plateau. Step 0 (the
    first drop from chance) never starts one."""
    dt = steps[1] - steps[0] if len(steps) > 1 else 1
    gap, ahead = max(1, span // dt), max(1, after // dt)

    def rate(i: int, k: int) -> float:  # loss fall per 100 steps from evaluation i to i + k
        return (losses[i] - losses[i + k]) * 100 / (steps[i + k] - steps[i])

    best, i, n = (0, 0), 1, len(steps)
    while i < n - gap:
        if rate(i, gap) >= flat:
            i += 1
            continue
        j = i  # the slow stretch runs from i to j (rates measured from there), so to j + gap
        while j + 1 < n - gap and rate(j + 1, gap) < flat:
            j += 1
        end = j + gap
        if end + ahead < n and rate(end, ahead) >= resume and steps[end] - steps[i] > best[1] - best[0]:
            best = (steps[i], steps[end])
        i = j + 1
    return best


# --------------------------------------------------------------------------- how the trainer is checked


@experiment("ch01.checks", config={"batch": 8, "perturb_std": 0.3, "h": 1e-4, "adam_steps": 10})
def checks(ctx: RunContext) -> Outcome:
    """The trainer checked: NumPy reference vs autograd, finite differences, AdamW step for step."""
    c = ctx.config
    cfg = ModelConfig()
    corpus = load_corpus()
    x, y = sample_batch(corpus.train, c["batch"], cfg.context, torch.Generator().manual_seed(0))
    grad_diffs, loss_diffs = [], []
    for std in (cfg.init_std, c["perturb_std"]):
        torch.manual_seed(0)
        model = Decoder(ModelConfig(init_std=std)).double()
        loss = model.loss(x, y)
        loss.backward()
        state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        ref_loss, grads = reference.loss_and_grads(state, x.numpy(), y.numpy(), cfg)
        loss_diffs.append(abs(ref_loss - loss.item()))
        grad_diffs.append(max(float(np.abs(grads[k] - _grad(p)).max()) for k, p in model.named_parameters()))
    fast = [_fast_path_diff(ModelConfig(init_std=std), x, y) for std in (cfg.init_std, c["perturb_std"])]
    ctx.report_progress(0.4, "finite differences")
    fd_errors = [_fd_error(state, x.numpy(), y.numpy(), cfg, h) for h in (2 * c["h"], c["h"])]
    ctx.report_progress(0.7, "AdamW")
    adam_diff = _adamw_diff(state, x.numpy(), y.numpy(), cfg, c["adam_steps"])
    m = {
        "ch01.check.grad_diff": exact(
            max(grad_diffs), "", "largest |gradient difference|, NumPy float64 vs torch autograd", 2
        ),
        "ch01.check.loss_diff": exact(max(loss_diffs), "nats", "largest |loss difference|, NumPy vs torch", 2),
        "ch01.check.batch": exact(c["batch"], "windows", "windows in the one batch every check uses"),
        "ch01.check.fast_grad_diff": exact(
            max(d[0] for d in fast), "", "largest |gradient difference|, float32 fast path vs float64 autograd", 2
        ),
        "ch01.check.fast_grad_rel": exact(
            max(d[1] for d in fast), "", "that difference relative to the largest |gradient|", 2
        ),
        "ch01.check.fast_loss_diff": exact(
            max(d[2] for d in fast), "nats", "largest |loss difference|, float32 fast path vs float64 autograd", 2
        ),
        "ch01.check.fd_h": exact(c["h"], "", "finite-difference step h", 1),
        "ch01.check.fd_error": exact(fd_errors[1], "", "largest |central difference - analytic gradient| at h", 2),
        "ch01.check.fd_ratio": exact(
            fd_errors[0] / fd_errors[1], "", "error ratio when h halves (O(h^2) predicts 4)", 3
        ),
        "ch01.check.adam_steps": exact(c["adam_steps"], "steps", "AdamW steps compared with torch.optim.AdamW"),
        "ch01.check.adam_diff": exact(adam_diff, "", "largest |weight difference| after any of those steps", 2),
    }
    return Outcome(measurements=m)


def _fast_path_diff(cfg: ModelConfig, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float, float]:
    """The fast path (model/stacked.py, float32, the one the curves come from) against
    float64 autograd on the readable Decoder, from the same weights on one batch:
    (largest |gradient difference|, that over the largest |gradient|, |loss difference|)."""
    layout, theta = init_stack(cfg, [0])  # (1, P) float32
    grad = torch.zeros_like(theta)
    loss = StackedDecoder(cfg, layout, theta, grad).loss_and_grad(x[None], y[None])
    model = Decoder(cfg).double()
    model.load_state_dict({k: v.double() for k, v in layout.state_dict(theta[0], cfg).items()})
    ref = model.loss(x, y)
    ref.backward()
    ref_grad = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
    diff = float((grad[0].double() - ref_grad).abs().max())
    return diff, diff / float(ref_grad.abs().max()), abs(float(loss[0]) - ref.item())


def _grad(p: torch.Tensor) -> np.ndarray:
    if p.grad is None:
        raise RuntimeError("a parameter has no gradient")
    return p.grad.numpy()


def _fd_error(state, x, y, cfg: ModelConfig, h: float) -> float:
    """Largest |central difference - analytic| over 20 fixed coordinates of every parameter."""
    _, grads = reference.loss_and_grads(state, x, y, cfg)
    rng = np.random.default_rng(0)
    worst = 0.0
    for name, w in state.items():
        for flat in rng.choice(w.size, size=min(20, w.size), replace=False):
            idx = np.unravel_index(flat, w.shape)
            plus, minus = {k: v.copy() for k, v in state.items()}, {k: v.copy() for k, v in state.items()}
            plus[name][idx] += h
            minus[name][idx] -= h
            fd = (reference.loss_and_grads(plus, x, y, cfg)[0] - reference.loss_and_grads(minus, x, y, cfg)[0]) / (
                2 * h
            )
            worst = max(worst, abs(fd - grads[name][idx]))
    return worst


def _adamw_diff(state, x, y, cfg: ModelConfig, steps: int) -> float:
    """Step NumPy's AdamW and torch.optim.AdamW from the same weights and gradients, step by step."""
    params = {k: torch.tensor(v, requires_grad=True) for k, v in state.items()}
    opt = torch.optim.AdamW(list(params.values()), lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    ref_state = None
    worst = 0.0
    for _ in range(steps):
        current = {k: p.detach().numpy().copy() for k, p in params.items()}
        _, grads = reference.loss_and_grads(current, x, y, cfg)
        new, ref_state = reference.adamw_step(
            current, grads, ref_state, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01
        )
        for k, p in params.items():
            p.grad = torch.tensor(grads[k])
        opt.step()
        worst = max(worst, max(float(np.abs(new[k] - p.detach().numpy()).max()) for k, p in params.items()))
    return worst


# --------------------------------------------------------------------------- loss is a proxy


@dataclass(frozen=True)
class Arithmetic:
    lines: int = 40_000  # sums in the corpus, half single-digit, half two-digit
    corpus_seed: int = 0
    padded: bool = True  # fixed width, "03+05=008": every digit at the same place in every line
    model: ModelConfig = field(default_factory=lambda: ModelConfig(vocab=14))  # 13 symbols + unknown
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=6000, lr=1e-2, eval_every=250))
    score_every: int = 250  # exact-match accuracy every this many steps
    two_digit_problems: int = 500  # held-out two-digit sums scored (all 100 single-digit sums are)
    test_seed: int = 12345
    window: int = 1000  # sharpness: the most exact-match points gained within this many steps


@experiment(
    "ch01.arithmetic",
    config=Arithmetic(),
    seeds=SEEDS,
    quick={
        "lines": 2000,
        "train.steps": 40,
        "train.eval_every": 20,
        "score_every": 20,
        "two_digit_problems": 20,
        "window": 20,
    },
)
def arithmetic(ctx: RunContext) -> Outcome:
    """Loss is a proxy: exact-match accuracy on held-out sums against the loss, over training."""
    cfg: Arithmetic = ctx.config
    two = held_out(np.random.default_rng(cfg.test_seed), cfg.two_digit_problems, cfg.padded)
    corpus = arithmetic_corpus(cfg.lines, cfg.corpus_seed, cfg.padded, exclude=two)
    leaked = overlap(two, corpus.text)
    if leaked:
        raise AssertionError(f"{leaked} held-out sums appear in the arithmetic corpus")
    one = every_single_digit_sum(cfg.padded)
    twin = _has_twin(two, corpus.vocab.decode(corpus.train))  # (b+a is a line of the training text)
    with_twin, without_twin = (Problems(two.a[k], two.b[k], two.padded) for k in (twin, ~twin))
    model_cfg = replace(cfg.model, vocab=corpus.vocab.size)
    steps = list(range(0, cfg.train.steps + 1, cfg.score_every))
    runs = [replace(cfg.train, seed=seed) for seed in ctx.seeds]
    names = ("val_loss", "answer_loss1", "answer_loss2", "acc1", "acc2", "digit2")
    scores: list[list[tuple[float, ...]]] = [[] for _ in runs]  # per seed, per scored step: the six names
    by_twin = np.zeros((len(runs), 2))  # per seed, at the end: exact match on the sums with and without a twin
    scored = set(steps)

    def score(at: Step) -> bool:
        """Score every seed's weights at a scored step (the seeds train on together); stop after the last."""
        if at.step not in scored:
            return False
        for i in range(len(runs)):
            model = Decoder(model_cfg)
            model.load_state_dict(at.weights(i, model_cfg))
            v = corpus.vocab
            scores[i].append(
                (
                    _val_loss(model, corpus),
                    answer_loss(model, v, one),
                    answer_loss(model, v, two),
                    exact_match(model, v, one),
                    exact_match(model, v, two),
                    _digit_accuracy(model, v, two),
                )
            )
            if at.step == steps[-1]:
                by_twin[i] = exact_match(model, v, with_twin), exact_match(model, v, without_twin)
        ctx.report_progress((at.step + 1) / (steps[-1] + 1), f"step {at.step}")
        return at.step == steps[-1]

    train_many(model_cfg, runs, corpus, workers=1, on_step=score)
    table = np.array(scores)  # (seeds, scored steps, 5)
    s = {name: table[..., k] for k, name in enumerate(names)}  # each (seeds, scored steps)
    acc1, acc2, digit2 = s["acc1"], s["acc2"], s["digit2"]
    k = max(1, cfg.window // cfg.score_every)  # scored steps per window
    gains = acc2[:, k:] - acc2[:, :-k]  # (seeds, starts): points gained within the window
    start = gains.argmax(axis=1)  # each seed's steepest window
    seeds_idx = np.arange(len(runs))
    digit_gains = digit2[:, k:] - digit2[:, :-k]
    digit_start = digit_gains.argmax(axis=1)  # per-digit accuracy's own steepest window

    def fall_share(name: str) -> np.ndarray:  # share of a loss's whole fall that happens in acc2's steepest window
        v = s[name]
        return _share(v[seeds_idx, start] - v[seeds_idx, start + k], v[:, 0] - v[:, -1])

    first100 = [first_step_below(steps, -a, -1.0 + 1e-9) for a in acc1]  # first scored step at 100%
    answer_share = float(np.mean([len(a) / len(line) for a, line in zip(two.answers, two.lines, strict=True)]))
    m = {
        "ch01.arith.params": exact(
            num_params(Decoder(model_cfg)), "parameters", "parameters of the arithmetic model (vocabulary 14)"
        ),
        "ch01.arith.lines": exact(cfg.lines, "sums", "sums in the arithmetic corpus"),
        "ch01.arith.steps": exact(cfg.train.steps, "steps", "training steps on the arithmetic corpus"),
        "ch01.arith.lr": exact(cfg.train.lr, "", "peak learning rate of the arithmetic runs", 1),
        "ch01.arith.two_digit_problems": exact(len(two.a), "sums", "held-out two-digit sums scored"),
        "ch01.arith.overlap": exact(leaked, "sums", "held-out sums that appear as a line of the corpus (asserted 0)"),
        "ch01.arith.one_digit_problems": exact(len(one.a), "sums", "single-digit sums scored (all of them)"),
        "ch01.arith.one_digit_in_corpus": exact(
            overlap(one, corpus.text), "sums", "single-digit sums (of 100) that appear in the corpus"
        ),
        "ch01.arith.answer_share": exact(
            answer_share, "", "share of a held-out line's characters that are its answer (newline included)", 2
        ),
        "ch01.arith.window": exact(cfg.window, "steps", "window for the sharpness measure"),
        "ch01.arith.loss.init": measured(s["val_loss"][:, 0], "nats", "arithmetic validation loss at initialisation"),
        "ch01.arith.loss.final": measured(s["val_loss"][:, -1], "nats", "arithmetic validation loss at the end"),
        "ch01.arith.answer_loss2.final": measured(
            s["answer_loss2"][:, -1], "nats", "loss on the answer characters of the held-out sums at the end"
        ),
        "ch01.arith.acc1.final": measured(acc1[:, -1], "", "exact match on all 100 single-digit sums at the end", 2),
        "ch01.arith.acc1.seeds_at_100": exact(
            int((acc1[:, -1] == 1.0).sum()), "seeds", "seeds exact on all 100 single-digit sums at the end"
        ),
        "ch01.arith.acc2.final": measured(acc2[:, -1], "", "exact match on held-out two-digit sums at the end", 2),
        "ch01.arith.acc2.min": exact(acc2[:, -1].min(), "", "lowest seed's two-digit exact match at the end", 2),
        "ch01.arith.acc2.max": exact(acc2[:, -1].max(), "", "highest seed's two-digit exact match at the end", 2),
        "ch01.arith.acc2.jump": measured(
            gains[seeds_idx, start], "", "most two-digit exact match gained within the window (per seed)", 2
        ),
        "ch01.arith.acc2.jump_share": measured(
            gains[seeds_idx, start] / np.maximum(acc2[:, -1], 1e-9),
            "",
            "that gain as a share of the seed's final two-digit exact match",
            2,
        ),
        "ch01.arith.acc2.jump_start": measured(
            np.array(steps)[start], "steps", "where each seed's steepest window starts", 2
        ),
        "ch01.arith.answer_loss2.jump_drop": measured(
            s["answer_loss2"][seeds_idx, start] - s["answer_loss2"][seeds_idx, start + k],
            "nats",
            "fall of the held-out answer loss over that window",
            2,
        ),
        "ch01.arith.loss.jump_drop": measured(
            s["val_loss"][seeds_idx, start] - s["val_loss"][seeds_idx, start + k],
            "nats",
            "fall of the whole validation loss over that window",
            2,
        ),
        "ch01.arith.loss.jump_share": measured(
            fall_share("val_loss"), "", "share of the whole loss's fall (start to end) within that window", 2
        ),
        "ch01.arith.answer_loss2.jump_share": measured(
            fall_share("answer_loss2"), "", "share of the held-out answer loss's fall within that window", 2
        ),
        "ch01.arith.digit2.init": measured(
            digit2[:, 0], "", "per-digit accuracy on held-out two-digit sums at initialisation", 2
        ),
        "ch01.arith.digit2.final": measured(
            digit2[:, -1], "", "per-digit accuracy on held-out two-digit sums at the end (greedy, digit by column)", 2
        ),
        "ch01.arith.digit2.jump": measured(
            digit_gains[seeds_idx, digit_start], "", "most per-digit accuracy gained within the window (per seed)", 2
        ),
        "ch01.arith.digit2.jump_share": measured(
            _share(digit_gains[seeds_idx, digit_start], digit2[:, -1] - digit2[:, 0]),
            "",
            "that gain as a share of the seed's whole rise in per-digit accuracy (start to end)",
            2,
        ),
        "ch01.arith.acc2.jump_share_of_rise": measured(
            _share(gains[seeds_idx, start], acc2[:, -1] - acc2[:, 0]),
            "",
            "exact match's steepest gain as a share of its whole rise (start to end)",
            2,
        ),
        "ch01.arith.digit2.jump_start": measured(
            np.array(steps)[digit_start], "steps", "where each seed's steepest per-digit window starts", 2
        ),
        "ch01.arith.twins": exact(
            int(twin.sum()),
            "sums",
            "held-out two-digit sums a+b whose commuted twin b+a is a line of the training text",
        ),
        "ch01.arith.acc2.with_twin": measured(
            by_twin[:, 0], "", "exact match at the end on the held-out sums whose twin is in the training text", 2
        ),
        "ch01.arith.acc2.without_twin": measured(
            by_twin[:, 1], "", "exact match at the end on the held-out sums without a twin in the training text", 2
        ),
        "ch01.arith.acc2.twin_gain": measured(
            by_twin[:, 0] - by_twin[:, 1], "", "with a twin minus without, paired per seed", 2
        ),
        "ch01.arith.linear_share": exact(
            cfg.window / cfg.train.steps, "", "share of the final accuracy a steady climb would gain in the window", 2
        ),
    }
    if not any(math.isnan(f) for f in first100):
        m["ch01.arith.acc1.step100"] = measured(
            first100, "steps", "first scored step with all 100 single-digit sums exact", 2
        )
    return Outcome(measurements=m, series={"step": steps, **s})


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """part / whole, elementwise; 0 where the whole did not move (a --quick run that learned nothing)."""
    return np.divide(part, whole, out=np.zeros_like(part, dtype=np.float64), where=whole > 0)


def _has_twin(problems: Problems, text: str) -> np.ndarray:
    """(n,) bool: whether each sum a+b (a != b) has its commuted twin b+a as a whole line of ``text``."""
    lines = set(text.split("\n"))
    twins = Problems(problems.b, problems.a, problems.padded).lines
    return np.array([a != b and t.rstrip("\n") in lines for a, b, t in zip(problems.a, problems.b, twins, strict=True)])


@torch.no_grad()
def _digit_accuracy(model: Decoder, vocab, problems: Problems) -> float:
    """Share of the answer digits (the newline not counted) that greedy decoding gets right, column by
    column: the partial credit exact match does not give, on the same decoded answers. Needs prompts of
    one length (the fixed-width format)."""
    prompts, answers = problems.prompts, problems.answers
    if len({len(p) for p in prompts}) != 1 or len({len(a) for a in answers}) != 1:
        raise ValueError("per-digit accuracy needs the fixed-width format: prompts and answers of one length each")
    was_training = model.training
    model.eval()
    idx = torch.from_numpy(np.stack([vocab.encode(p) for p in prompts]))  # (B, prompt length)
    n = len(answers[0]) - 1  # digits
    for _ in range(n):
        logits = model(idx[:, -model.cfg.context :])[:, -1, :]  # (B, V)
        idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
    model.train(was_training)
    truth = torch.from_numpy(np.stack([vocab.encode(a[:n]) for a in answers]))  # (B, n)
    return float((idx[:, -n:] == truth).double().mean())


@torch.no_grad()
def _val_loss(model: Decoder, corpus) -> float:
    x, y = val_windows(corpus.val, model.cfg.context)
    return float(model.loss(x, y))


# --------------------------------------------------------------------------- failure shapes


@dataclass(frozen=True)
class Extremes:
    eval_every: int = 20
    low: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2e-5))  # 100x below the default
    low_constant: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2e-5, schedule="constant"))
    high: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2.0))  # 1,000x above, still clipped
    better: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2e-2))  # 10x above the default


@experiment(
    "ch01.lr_extremes",
    config=Extremes(),
    seeds=SEEDS,
    quick={"eval_every": 10, "low.steps": 20, "low_constant.steps": 20, "high.steps": 20, "better.steps": 20},
)
def lr_extremes(ctx: RunContext) -> Outcome:
    """Failure shapes: a learning rate far too low (cosine and constant), far too high, and 10x the default."""
    cfg: Extremes = ctx.config
    corpus = load_corpus()
    seeds = list(ctx.seeds)
    names = ("low", "low_constant", "high", "better")

    def setting(name: str) -> list[TrainConfig]:
        return [replace(getattr(cfg, name), eval_every=cfg.eval_every, seed=seed) for seed in seeds]

    # every setting and seed as one stack of AdamW runs (they differ in learning rate and schedule only)
    stack = train_many(
        ModelConfig(), [r for n in names for r in setting(n)], corpus, workers=1, on_eval=progress(ctx, cfg.low)
    )
    val = {
        n: np.array([r.curves["val_loss"] for r in stack[k * len(seeds) : (k + 1) * len(seeds)]])
        for k, n in enumerate(names)
    }
    steps = stack[0].curves["step"]
    last = max(0, len(steps) - 1 - TAIL_STEPS // cfg.eval_every)  # the evaluation TAIL_STEPS before the end
    unigram = ngram_loss(corpus.train, corpus.val, n=1, vocab_size=corpus.vocab.size)
    m = {
        "ch01.lr_low.lr": exact(cfg.low.lr, "", "learning rate of the too-low run", 1),
        "ch01.lr_low.val_loss.final": measured(val["low"][:, -1], "nats", "validation loss after the too-low run"),
        "ch01.lr_low.above_unigram": measured(
            val["low"][:, -1] - unigram, "nats", "too-low run (cosine): final loss minus the unigram level", 2
        ),
        "ch01.lr_low_constant.above_unigram": measured(
            val["low_constant"][:, -1] - unigram,
            "nats",
            "too-low run (constant): final loss minus the unigram level",
            2,
        ),
        "ch01.lr_low.last200_drop": measured(
            val["low"][:, last] - val["low"][:, -1],
            "nats",
            f"too-low run (cosine): loss fall over the last {TAIL_STEPS} steps",
            2,
        ),
        "ch01.lr_low_constant.val_loss.final": measured(
            val["low_constant"][:, -1], "nats", "validation loss after the too-low run at a constant rate"
        ),
        "ch01.lr_low_constant.last200_drop": measured(
            val["low_constant"][:, last] - val["low_constant"][:, -1],
            "nats",
            f"too-low run at a constant rate: loss fall over the last {TAIL_STEPS} steps",
            2,
        ),
        "ch01.lr_high.lr": exact(cfg.high.lr, "", "learning rate of the too-high run (AdamW, clipped)", 1),
        "ch01.lr_high.val_loss.peak": measured(
            val["high"].max(axis=1), "nats", "highest validation loss of the too-high run", 3
        ),
        "ch01.lr_high.val_loss.final": measured(
            val["high"][:, -1], "nats", "validation loss after the too-high run", 3
        ),
        "ch01.lr_better.lr": exact(cfg.better.lr, "", "a learning rate 10x the default", 1),
        "ch01.lr_better.val_loss.final": measured(
            val["better"][:, -1], "nats", "validation loss at 10x the default learning rate"
        ),
    }
    return Outcome(measurements=m, series={"step": steps, **{f"{n}_val_loss": v for n, v in val.items()}})


# --------------------------------------------------------------------------- the NaN cascade

FLOAT32_MAX = float(torch.finfo(torch.float32).max)
EXP_OVERFLOW = math.log(FLOAT32_MAX)  # exp(z) is inf in float32 for z above this (about 88.72)


@dataclass(frozen=True)
class Cascade:
    lr: float = 10.0  # plain SGD from the first step: no warmup, no clipping, no weight decay
    steps: int = 40  # updates of the model without LayerNorm (all seeds are NaN well before)
    ablation_steps: int = 300  # updates of the same runs with LayerNorm


@experiment("ch01.nan", config=Cascade(), seeds=SEEDS, quick={"ablation_steps": 20})
def nan_cascade(ctx: RunContext) -> Outcome:
    """The NaN cascade, stage by stage: plain SGD at lr 10 on the model without LayerNorm
    (the one that diverges) and, on the same seeds and batches, with LayerNorm (which does not)."""
    cfg: Cascade = ctx.config
    corpus = load_corpus()
    seeds = list(ctx.seeds)
    blow = _instrumented_sgd(ModelConfig(norm="none"), seeds, cfg.lr, cfg.steps, corpus)
    ctx.report_progress(0.3, "with LayerNorm")
    calm = _instrumented_sgd(ModelConfig(), seeds, cfg.lr, cfg.ablation_steps, corpus)

    def first(mask: np.ndarray) -> np.ndarray:  # (seeds, steps) bool -> first True step per seed (NaN if none)
        return np.array([float(np.argmax(row)) if row.any() else math.nan for row in mask])

    big = first(blow["max_logit"] > EXP_OVERFLOW)
    inf = first(blow["inf"] > 0)
    broken = first(blow["nonfinite"] > 0)
    nan_loss = first(np.isnan(blow["loss"]))
    if np.isnan(nan_loss).any():
        raise AssertionError(f"a seed did not reach NaN within {cfg.steps} steps")
    at = nan_loss.astype(int)
    rows = np.arange(len(seeds))
    calm_finite = np.isfinite(calm["loss"]).all(axis=1)
    growth, jump = _logit_growth(blow["max_logit"], broken)
    calm_big = first(calm["max_logit"] > EXP_OVERFLOW)
    m = {
        "ch01.nan.lr": exact(cfg.lr, "", "learning rate of the cascade runs (plain SGD, constant)", 2),
        "ch01.nan.exp_overflow": exact(EXP_OVERFLOW, "", "ln(float32 max): exp of a larger number is inf", 4),
        "ch01.nan.step.exp_overflow": measured(big, "steps", "first step whose largest |logit| exceeds 88.72", 2),
        "ch01.nan.step.nonfinite": measured(
            broken, "steps", "first step whose logits are not finite (the forward pass left float32's range)", 2
        ),
        "ch01.nan.inf_seen": exact(
            int((inf == broken).sum()), "seeds", "seeds with an inf stored in the forward pass at that step"
        ),
        "ch01.nan.step.nan_loss": measured(nan_loss, "steps", "first step whose loss is NaN", 2),
        "ch01.nan.lead": measured(nan_loss - big, "steps", "steps from the first logit above 88.72 to NaN", 2),
        "ch01.nan.nan_share": measured(
            blow["nan_share"][rows, at], "", "share of parameters NaN after the update from the NaN loss", 2
        ),
        "ch01.nan.nan_share_rest": measured(
            blow["nan_share_rest"][rows, at], "", "the same share among all weights but the token embedding", 2
        ),
        "ch01.nan.nan_share_later": measured(
            blow["nan_share"][:, -1], "", f"share of parameters NaN after {cfg.steps} updates", 2
        ),
        "ch01.nan.steps": exact(cfg.steps, "steps", "updates of the cascade runs"),
        "ch01.nan.ablation_steps": exact(cfg.ablation_steps, "steps", "updates of the same runs with LayerNorm"),
        "ch01.nan.ablation_finite": exact(
            int(calm_finite.sum()), "seeds", "seeds with LayerNorm whose loss stays finite throughout"
        ),
        "ch01.nan.ablation_max_logit": exact(
            float(np.nanmax(calm["max_logit"])), "", "largest |logit| of the LayerNorm runs (any seed, any step)", 2
        ),
        "ch01.nan.growth": measured(
            growth, "", "largest |logit|: mean growth factor per step from step 0 to the step before the last jump", 3
        ),
        "ch01.nan.growth_steps": measured(
            broken - 2, "steps", "steps of that growth (from step 0 to two steps before the logits are not finite)", 2
        ),
        "ch01.nan.jump_orders": measured(
            jump, "orders of magnitude", "log10 of the last finite step's largest |logit| over the step before's", 2
        ),
        "ch01.nan.jump_orders.min": exact(jump.min(), "orders of magnitude", "that last jump: the smallest seed's", 2),
        "ch01.nan.jump_orders.max": exact(jump.max(), "orders of magnitude", "that last jump: the largest seed's", 2),
        "ch01.nan.ablation_crossed": exact(
            int(np.isfinite(calm_big).sum()), "seeds", "seeds with LayerNorm whose largest |logit| exceeds 88.72"
        ),
        "ch01.nan.ablation_final_loss": measured(
            calm["loss"][:, -10:].mean(axis=1), "nats", "LayerNorm runs: mean training loss of the last 10 steps", 2
        ),
    }
    if np.isfinite(calm_big).all():  # (a --quick run may stop before)
        m["ch01.nan.ablation_step.exp_overflow"] = measured(
            calm_big, "steps", "with LayerNorm: first step whose largest |logit| exceeds 88.72", 2
        )
    return Outcome(
        measurements=m,
        series={"seeds": seeds, **blow, **{f"ablation_{k}": v for k, v in calm.items()}},
    )


def _logit_growth(max_logit: np.ndarray, broken: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per seed (rows of ``max_logit``, the largest |logit| of every step), from the step ``broken`` whose
    logits are first not finite: the geometric-mean growth factor per step from step 0 to two steps before
    it, and log10 of the last jump, from that step to the last finite one."""
    growth, jump = [], []
    for row, b in zip(max_logit, broken.astype(int), strict=True):
        if b < 3:
            raise AssertionError(f"the logits are not finite at step {b}: no growth to measure before it")
        growth.append((row[b - 2] / row[0]) ** (1 / (b - 2)))
        jump.append(math.log10(row[b - 1] / row[b - 2]))
    return np.array(growth), np.array(jump)


def _instrumented_sgd(cfg: ModelConfig, seeds: list[int], lr: float, steps: int, corpus) -> dict[str, np.ndarray]:
    """Plain SGD on the fast path, every update let through, measured at every step:
    the largest |logit|, whether any value of the forward pass is inf, the loss, the gradient norm and, after
    the update, the share of NaN parameters; each (seeds, steps). (train_many refuses to
    update from a non-finite loss; this loop lets it, to show what that update does.)"""
    layout, theta = init_stack(cfg, seeds)
    grad = torch.zeros_like(theta)
    net = StackedDecoder(cfg, layout, theta, grad)
    runs = [
        TrainConfig(
            steps=steps, lr=lr, schedule="constant", warmup=0, optimizer="sgd", weight_decay=0.0, clip=None, seed=s
        )
        for s in seeds
    ]
    rates = torch.tensor([[lr_at(k, r) for r in runs] for k in range(steps)], dtype=torch.float64)
    opt = Optimizer("sgd", rates, [r.betas for r in runs], [r.eps for r in runs], [0.0] * len(runs))
    batches = Batches(corpus.train, [r.data_seed_value for r in runs], runs[0].batch, cfg.context)
    names = ("max_logit", "inf", "nonfinite", "loss", "grad_norm", "nan_share", "nan_share_rest")
    out = {k: np.zeros((len(seeds), steps)) for k in names}
    o, n = layout.offsets["wte.weight"], math.prod(layout.shapes["wte.weight"])
    rest = torch.ones(layout.size, dtype=torch.bool)
    rest[o : o + n] = False  # every parameter but the token embedding
    for step in range(steps):
        x, y = batches.next()
        with torch.no_grad():
            logits, cache = net.forward(x, keep=True)  # (M, V, N): what the loss below is computed from
        out["max_logit"][:, step] = logits.abs().amax((1, 2)).numpy()
        out["inf"][:, step] = _has_inf((logits, cache), len(seeds)).numpy()
        out["nonfinite"][:, step] = (~torch.isfinite(logits)).any(2).any(1).numpy()
        out["loss"][:, step] = net.loss_and_grad(x, y).numpy()
        out["grad_norm"][:, step] = torch.linalg.vector_norm(grad, dim=1).numpy()
        opt.step(theta, grad)
        out["nan_share"][:, step] = torch.isnan(theta).double().mean(1).numpy()
        out["nan_share_rest"][:, step] = torch.isnan(theta[:, rest]).double().mean(1).numpy()
    return out


def _has_inf(values, M: int) -> torch.Tensor:
    """(M,) bool: whether model m has an inf anywhere in ``values``: float tensors whose
    leading axis is M or M-major (attention's G = M*B*H), nested in tuples and lists."""
    found = torch.zeros(M, dtype=torch.bool)
    if isinstance(values, torch.Tensor):
        if values.is_floating_point() and values.dim() > 0:
            found |= torch.isinf(values).reshape(M, -1).any(1)
    elif isinstance(values, (tuple, list)):
        for v in values:
            found |= _has_inf(v, M)
    return found


# --------------------------------------------------------------------------- the trainer in the browser


@dataclass(frozen=True)
class TrainerRun:
    """The run deck 01's "Train it yourself" slide replays: the default settings, one seed,
    evaluated as the component evaluates (every 100 steps on every validation window)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    prompt: str = "HAMLET\n"
    sample_length: int = 64
    temperature: float = 0.8


@experiment("ch01.trainer", config=TrainerRun(), seeds=(0,), quick={"train.steps": 30}, uses=("model.export",))
def trainer(ctx: RunContext) -> Outcome:
    """What the browser trainer needs (vocabulary, ids, one seed's initial weights and batch order)
    and the Python run of that seed, whose curve is the slide's static picture."""
    cfg: TrainerRun = ctx.config
    corpus = load_corpus()
    run = replace(cfg.train, seed=ctx.seeds[0])
    series: dict = trainer_series(cfg.model, run, corpus)
    (result,) = train_many(cfg.model, [run], corpus, workers=1, on_eval=progress(ctx, run))
    model = Decoder(cfg.model)
    model.load_state_dict(result.state_dict or {})
    prompt = torch.from_numpy(corpus.vocab.encode(cfg.prompt))[None]
    sample = model.generate(prompt, cfg.sample_length, cfg.temperature, torch.Generator().manual_seed(run.seed))
    c = result.curves
    m = {
        "ch01.trainer.seed": exact(run.seed, "", "seed of the run the browser trainer replays"),
        "ch01.trainer.steps": exact(run.steps, "steps", "updates of the browser trainer's run"),
        "ch01.trainer.eval_every": exact(run.eval_every, "steps", "the browser trainer evaluates this often"),
        "ch01.trainer.weights": exact(len(series["init_bits"]), "numbers", "initial weights exported to the browser"),
        "ch01.trainer.starts": exact(len(series["starts"]), "windows", "batch starts exported to the browser"),
        "ch01.trainer.val_loss.init": exact(c["val_loss"][0], "nats", "validation loss at initialisation (one seed)"),
        "ch01.trainer.val_loss.final": exact(
            c["val_loss"][-1], "nats", "validation loss after the run, Python fast path (one seed)"
        ),
    }
    series |= {name: c[name] for name in ("step", "val_loss", "train_loss", "lr", "grad_norm")}
    series["sample_ids"] = sample[0, prompt.shape[1] :].tolist()
    series["prompt_ids"] = prompt[0].tolist()
    return Outcome(measurements=m, series=series)


@dataclass(frozen=True)
class BrowserCheck:
    check_steps: int = 50  # updates compared with the NumPy reference, weight by weight
    full: bool = True  # also train the whole run in the browser and compare its validation curve
    browser: bool = True  # whether a missing Chromium is an error (quick mode skips the browser part)


@experiment(
    "ch01.browser",
    config=BrowserCheck(),
    seeds=(0,),
    quick={"check_steps": 3, "full": False, "browser": False},
    uses=("components/decoder-trainer.js", "model.browser", "model.export"),
)
def browser_check(ctx: RunContext) -> Outcome:
    """The browser trainer (float64 JavaScript in headless Chromium) against the NumPy reference, step for
    step, and its whole run against the Python run. Needs Chromium; a quick run without it skips the browser."""
    from model import browser

    cfg: BrowserCheck = ctx.config
    t = TrainerRun()
    corpus = load_corpus()
    run = replace(t.train, seed=ctx.seeds[0])  # the first check_steps updates of the default run
    series: dict = trainer_series(t.model, run, corpus)
    m = {"ch01.browser.check_steps": exact(cfg.check_steps, "steps", "updates compared weight by weight")}
    try:
        browser.require_browser()
    except browser.BrowserMissing as error:
        if cfg.browser:
            raise
        m["ch01.browser.skipped"] = exact(1, "", f"browser part skipped in this quick run: {error}")
        return Outcome(measurements=m)
    ref_losses, ref_weights = browser.reference_steps(series, cfg.check_steps)
    ctx.report_progress(0.2, "Chromium")
    element = '<decoder-trainer run="ch01.trainer" alt="the browser trainer"></decoder-trainer>'
    with browser.trainer_page({"series": series}, element=element) as page:
        losses, weights = browser.browser_steps(page, cfg.check_steps)
        ctx.report_progress(0.3, "the whole run")
        full = browser.full_run(page) if cfg.full else None
    m |= {
        "ch01.browser.max_loss_diff": exact(
            float(np.abs(losses - ref_losses).max()), "nats", "largest |loss difference|, browser vs NumPy reference", 2
        ),
        "ch01.browser.max_weight_diff": exact(
            float(np.abs(weights - ref_weights).max()), "", "largest |weight difference| after any compared step", 2
        ),
    }
    out: dict = {"check_loss_diff": np.abs(losses - ref_losses)}
    if full is not None:
        (result,) = train_many(t.model, [run], corpus, workers=1)
        py = np.array(result.curves["val_loss"])
        js = np.array([v for _, v in full["evals"]])
        if len(js) != len(py):
            raise AssertionError(f"the browser evaluated {len(js)} times, Python {len(py)}")
        m["ch01.browser.max_val_diff"] = exact(
            float(np.abs(js - py).max()),
            "nats",
            "largest |validation loss difference| at any evaluation, browser (float64) vs Python (float32) run",
            2,
        )
        m["ch01.browser.val_loss.final"] = exact(js[-1], "nats", "the browser run's final validation loss (one seed)")
        out |= {"step": [s for s, _ in full["evals"]], "browser_val_loss": js, "python_val_loss": py}
    return Outcome(measurements=m, series=out)
