"""Chapter 1, the training loop and its objective: the numbers deck 01 shows.

- ``ch01.default``: the default run, three seeds: loss curves, where they start and end;
- ``ch01.levels``: the book's reference levels (chance, unigram, bigram) and sizes;
- ``ch01.checks``: how the trainer is checked (NumPy reference, finite differences);
- ``ch01.arithmetic``: loss is a proxy: exact-match accuracy on sums against the loss;
- ``ch01.lr_extremes``: failure shapes, a learning rate far too high and far too low.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from model import reference
from model.arithmetic import arithmetic_corpus, draw, every_single_digit_sum, exact_match
from model.data import load_corpus, ngram_loss, sample_batch, unigram_entropy, val_windows
from model.decoder import Decoder, ModelConfig, num_params
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import TrainConfig, TrainResult, train_many

SEEDS = (0, 1, 2)


def mean_sd(values) -> tuple[float, float | None, int]:
    """Mean, sample standard deviation (None for one value) and count."""
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), (float(a.std(ddof=1)) if len(a) > 1 else None), len(a)


def measured(values, unit: str, what: str, digits: int = 4) -> Measurement:
    """A measurement over seeds: mean ± sd of ``values``."""
    mean, sd, n = mean_sd(values)
    return Measurement(mean, sd, n, unit, what, digits)


def exact(value: float, unit: str, what: str, digits: int | None = None) -> Measurement:
    """A number that does not vary across seeds (a count, a setting, a closed form).

    A whole number shows all its digits by default, anything else four significant ones.
    """
    if digits is None:
        digits = len(str(abs(int(value)))) if float(value).is_integer() else 4
    return Measurement(float(value), None, None, unit, what, digits)


def first_step_below(steps, losses, level: float) -> float:
    """The first evaluated step whose loss is below ``level`` (NaN if none)."""
    for step, loss in zip(steps, losses, strict=True):
        if loss < level:
            return float(step)
    return math.nan


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
    unigram = unigram_entropy(corpus.val)
    bigram = ngram_loss(corpus.train, corpus.val, n=2, vocab_size=corpus.vocab.size)
    runs = train_many(
        cfg.model, [_with_seed(cfg.train, s) for s in ctx.seeds], corpus, workers=1, on_eval=_progress(ctx, cfg.train)
    )
    steps = runs[0].curves["step"]
    val = np.array([r.curves["val_loss"] for r in runs])  # (seeds, evals)
    train_loss = np.array([r.curves["train_loss"] for r in runs])
    t = cfg.train
    at = {s: steps.index(s) for s in (100, 500) if s in steps}
    m = {
        "ch01.params": exact(num_params(Decoder(cfg.model)), "parameters", "parameters of the Decoder"),
        "ch01.steps": exact(t.steps, "steps", "training steps of the default run"),
        "ch01.batch": exact(t.batch, "windows", "windows per batch"),
        "ch01.context": exact(cfg.model.context, "characters", "context length"),
        "ch01.d_model": exact(cfg.model.d_model, "", "width of the residual stream (d_model)"),
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
            [r.train_loss_final for r in runs], "nats", "training loss over the last evaluation interval"
        ),
        "ch01.gap.final": measured(
            val[:, -1] - train_loss[:, -1], "nats", "validation minus training loss at the end", 2
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


def _with_seed(cfg: TrainConfig, seed: int) -> TrainConfig:
    return replace(cfg, seed=seed)


def _progress(ctx: RunContext, cfg: TrainConfig, done: float = 0.0, share: float = 1.0) -> Callable[[int, dict], None]:
    """An on_eval hook for train_many that reports how far the first run is (of a
    part `share` of the experiment that starts at `done`)."""

    def report(m: int, rec: dict) -> None:
        if m == 0:
            ctx.report_progress(done + share * rec["step"] / max(1, cfg.steps), f"step {rec['step']}")

    return report


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
        "ch01.level.unigram": exact(unigram_entropy(val_ids), "nats", "unigram entropy of the validation text"),
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
    ctx.report_progress(0.4, "finite differences")
    fd_errors = [_fd_error(state, x.numpy(), y.numpy(), cfg, h) for h in (2 * c["h"], c["h"])]
    ctx.report_progress(0.7, "AdamW")
    adam_diff = _adamw_diff(state, x.numpy(), y.numpy(), cfg, c["adam_steps"])
    m = {
        "ch01.check.grad_diff": exact(
            max(grad_diffs), "", "largest |gradient difference|, NumPy float64 vs torch autograd", 2
        ),
        "ch01.check.loss_diff": exact(max(loss_diffs), "nats", "largest |loss difference|, NumPy vs torch", 2),
        "ch01.check.fd_h": exact(c["h"], "", "finite-difference step h", 1),
        "ch01.check.fd_error": exact(fd_errors[1], "", "largest |central difference - analytic gradient| at h", 2),
        "ch01.check.fd_ratio": exact(
            fd_errors[0] / fd_errors[1], "", "error ratio when h halves (O(h^2) predicts 4)", 3
        ),
        "ch01.check.adam_steps": exact(c["adam_steps"], "steps", "AdamW steps compared with torch.optim.AdamW"),
        "ch01.check.adam_diff": exact(adam_diff, "", "largest |weight difference| after any of those steps", 2),
    }
    return Outcome(measurements=m)


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
    model: ModelConfig = field(default_factory=lambda: ModelConfig(vocab=14))  # 13 symbols + unknown
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=6000, lr=1e-2, eval_every=250))
    score_every: int = 250  # exact-match accuracy every this many steps
    two_digit_problems: int = 500  # fresh two-digit sums scored (all 100 single-digit sums are)


@experiment(
    "ch01.arithmetic",
    config=Arithmetic(),
    seeds=SEEDS,
    quick={"lines": 2000, "train.steps": 40, "train.eval_every": 20, "score_every": 20, "two_digit_problems": 20},
)
def arithmetic(ctx: RunContext) -> Outcome:
    """Loss is a proxy: exact-match accuracy on sums against the loss, over training."""
    cfg: Arithmetic = ctx.config
    corpus = arithmetic_corpus(cfg.lines, cfg.corpus_seed)
    model_cfg = replace(cfg.model, vocab=corpus.vocab.size)
    one = every_single_digit_sum()
    two = draw(np.random.default_rng(12345), cfg.two_digit_problems, 2)
    steps = list(range(0, cfg.train.steps + 1, cfg.score_every))
    runs = [_with_seed(cfg.train, seed) for seed in ctx.seeds]
    scores: list[list[tuple[float, float, float]]] = [[] for _ in runs]  # per seed: (loss, acc1, acc2) per step
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = Path(tmp) / "seeds.pt"
        for step in steps:
            # The seeds train together; resuming from a checkpoint is bit for bit the uninterrupted
            # run, so stopping to score between chunks does not change the training itself.
            results = train_many(model_cfg, runs, corpus, checkpoint=checkpoint, stop_at=step)
            for i, result in enumerate(results):
                model = Decoder(model_cfg)
                model.load_state_dict(result.state_dict or {})
                scores[i].append((_val_loss(model, corpus), exact_match(model, corpus.vocab, one),
                                  exact_match(model, corpus.vocab, two)))  # fmt: skip
            ctx.report_progress((step + 1) / (steps[-1] + 1), f"step {step}")
    table = np.array(scores)  # (seeds, scores, 3)
    loss, acc1, acc2 = table[..., 0], table[..., 1], table[..., 2]  # (seeds, scores) each
    mid = len(steps) // 2
    m = {
        "ch01.arith.params": exact(
            num_params(Decoder(model_cfg)), "parameters", "parameters of the arithmetic model (vocabulary 14)"
        ),
        "ch01.arith.lines": exact(cfg.lines, "sums", "sums in the arithmetic corpus"),
        "ch01.arith.steps": exact(cfg.train.steps, "steps", "training steps on the arithmetic corpus"),
        "ch01.arith.two_digit_problems": exact(len(two.a), "sums", "fresh two-digit sums scored"),
        "ch01.arith.mid_step": exact(steps[mid], "steps", "the midpoint of arithmetic training"),
        "ch01.arith.loss.init": measured(loss[:, 0], "nats", "arithmetic validation loss at initialisation"),
        "ch01.arith.loss.mid": measured(loss[:, mid], "nats", "arithmetic validation loss at the midpoint"),
        "ch01.arith.loss.final": measured(loss[:, -1], "nats", "arithmetic validation loss at the end"),
        "ch01.arith.loss.second_half_share": measured(
            (loss[:, mid] - loss[:, -1]) / (loss[:, 0] - loss[:, -1]),
            "",
            "share of the total loss drop made in the second half",
            2,
        ),
        "ch01.arith.acc1.mid": measured(
            acc1[:, mid], "", "exact match on all 100 single-digit sums at the midpoint", 2
        ),
        "ch01.arith.acc1.final": measured(acc1[:, -1], "", "exact match on all 100 single-digit sums at the end", 2),
        "ch01.arith.acc2.final": measured(acc2[:, -1], "", "exact match on fresh two-digit sums at the end", 2),
    }
    return Outcome(measurements=m, series={"step": steps, "val_loss": loss, "acc1": acc1, "acc2": acc2})


@torch.no_grad()
def _val_loss(model: Decoder, corpus) -> float:
    x, y = val_windows(corpus.val, model.cfg.context)
    return float(model.loss(x, y))


# --------------------------------------------------------------------------- failure shapes


@dataclass(frozen=True)
class Extremes:
    eval_every: int = 20
    low: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2e-5))  # 100x below the default
    high: TrainConfig = field(default_factory=lambda: TrainConfig(lr=2.0))  # 1,000x above, still clipped
    nan: TrainConfig = field(default_factory=lambda: TrainConfig(lr=1000.0, optimizer="sgd", clip=None))


@experiment(
    "ch01.lr_extremes",
    config=Extremes(),
    seeds=SEEDS,
    quick={"eval_every": 10, "low.steps": 20, "high.steps": 20, "nan.steps": 60},
)
def lr_extremes(ctx: RunContext) -> Outcome:
    """Failure shapes: a learning rate far too low, far too high, and one that ends in NaN."""
    cfg: Extremes = ctx.config
    corpus = load_corpus()
    seeds = list(ctx.seeds)

    def setting(name: str) -> list[TrainConfig]:
        return [replace(getattr(cfg, name), eval_every=cfg.eval_every, seed=seed) for seed in seeds]

    # the AdamW runs (too low, too high) train as one stack, the SGD runs that end in NaN as another
    adamw = train_many(
        ModelConfig(), setting("low") + setting("high"), corpus, workers=1, on_eval=_progress(ctx, cfg.low, 0, 0.9)
    )
    runs: dict[str, list[TrainResult]] = {"low": adamw[: len(seeds)], "high": adamw[len(seeds) :]}
    runs["nan"] = train_many(ModelConfig(), setting("nan"), corpus, workers=1)
    low = np.array([r.curves["val_loss"] for r in runs["low"]])
    high = np.array([r.curves["val_loss"] for r in runs["high"]])
    nan_steps = [r.diverged_at if r.diverged_at is not None else math.nan for r in runs["nan"]]
    first = runs["nan"][0]
    losses = np.array([x for x in first.step_losses if math.isfinite(x)])
    growth = float(np.median(losses[-10:] / losses[-11:-1])) if len(losses) > 11 else math.nan
    m = {
        "ch01.lr_low.lr": exact(cfg.low.lr, "", "learning rate of the too-low run", 1),
        "ch01.lr_low.val_loss.final": measured(low[:, -1], "nats", "validation loss after the too-low run"),
        "ch01.lr_high.lr": exact(cfg.high.lr, "", "learning rate of the too-high run (AdamW, clipped)", 1),
        "ch01.lr_high.val_loss.peak": measured(
            high.max(axis=1), "nats", "highest validation loss of the too-high run", 3
        ),
        "ch01.lr_high.val_loss.final": measured(high[:, -1], "nats", "validation loss after the too-high run"),
        "ch01.nan.lr": exact(cfg.nan.lr, "", "learning rate of the run that ends in NaN (plain SGD, no clipping)", 1),
        "ch01.nan.step": measured(nan_steps, "steps", "step whose loss or gradient is no longer finite", 2),
        "ch01.nan.loss_last": exact(losses[-1], "nats", "last finite training loss of that run (seed 0)", 2),
    }
    if math.isfinite(growth):
        m["ch01.nan.growth"] = exact(
            growth, "", "median factor by which the loss grows per step before NaN (seed 0)", 2
        )
    return Outcome(
        measurements=m,
        series={
            "step": runs["low"][0].curves["step"],
            "low_val_loss": low,
            "high_val_loss": high,
            "nan_step_loss": first.step_losses,
            "nan_grad_norm": first.step_grad_norms,
        },
    )
