"""Chapter 6, initialisation, normalisation and µP: the numbers deck 06 shows.

- ``ch06.init_scale``: init standard deviations about 3x apart: loss, stream and logit RMS at
  init, and the final loss of each scale at its own best rate;
- ``ch06.depth``: pre-LN against post-LN at depths 1, 2, 4, 8: stream RMS and each block's
  gradient norm at init, and training with and without warmup, each arm at its own best rate;
  GPT-2's 1/sqrt(N_res) residual scaling as a third arm at the deepest depth;
- ``ch06.rmsnorm``: RMSNorm against LayerNorm, each at its own best rate;
- ``ch06.rms_time``: their time per step on this machine, interleaved, medians;
- ``ch06.width``: the best rate against width in standard parametrisation and in µP, and the
  transfer of the narrowest width's best rate to the widest;
- ``ch06.coord``: the coordinate check, mean |activation| over the first steps against width.

Every run is the chapter's short run (AdamW, clip 1.0, 300 steps of 16 windows, warmup 30 +
cosine) on the default Decoder, except where its config says otherwise.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from model.data import load_corpus, val_windows
from model.decoder import ModelConfig
from model.experiments.ch06_tuning import Ladder, tune
from model.experiments.common import exact, measured, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.init_probe import coordinates, init_probe, residual_factor, train_residual_scaled
from model.train import Step, TrainConfig, train_many

SEEDS = (0, 1, 2)
SHORT = TrainConfig(steps=300, batch=16, warmup=30, eval_every=50)
START = (6e-3, 2e-2, 6e-2)  # every ladder's first rungs; it grows past an edge best
PROBE_WINDOWS = 512  # validation windows of the init probes


def _probe_data(corpus, cfg: ModelConfig, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = val_windows(corpus.val, cfg.context)
    return x[:n], y[:n]


def _ladder_keys(p: str, lad: Ladder, what: str) -> dict[str, Measurement]:
    """A ladder's best rate, its final loss there, and whether the best is at an edge."""
    return {
        f"{p}.lr": exact(lad.best_rate, "", f"{what}: best rate of its ladder", 1),
        f"{p}.final": spread(lad.best_final, "nats", f"{what}: final validation loss at its best rate"),
        f"{p}.edge": exact(int(lad.at_edge), "", f"{what}: 1 if the best rate is at an edge of its ladder"),
        f"{p}.rungs": exact(len(lad.rates), "rates", f"{what}: rates tried"),
    }


def _ladder_series(p: str, lad: Ladder) -> dict:
    """A ladder's rungs, final losses (rungs, seeds), blown-up seeds per rung and best rung, under `p`."""
    return {f"{p}.rates": lad.rates, f"{p}.final": lad.final, f"{p}.blowups": lad.blowups, f"{p}.best": lad.best}


def _common(m: dict[str, Measurement], t: TrainConfig) -> None:
    m |= {
        "ch06.steps": exact(t.steps, "steps", "training steps of the chapter's runs"),
        "ch06.batch": exact(t.batch, "windows", "windows per batch in the chapter's runs"),
        "ch06.warmup": exact(t.warmup, "steps", "warmup steps of the chapter's runs"),
    }


# --------------------------------------------------------------------------- initial scale


@dataclass(frozen=True)
class InitScale:
    train: TrainConfig = field(default_factory=lambda: SHORT)
    scales: tuple[float, ...] = (0.002, 0.006, 0.02, 0.06, 0.2, 0.6)
    rates: tuple[float, ...] = START
    extend: int = 3


@experiment(
    "ch06.init_scale",
    config=InitScale(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "scales": (0.02, 0.6), "extend": 0},
)
def init_scale(ctx: RunContext) -> Outcome:
    """Loss, stream RMS and logit RMS at init against the init std, and each scale's final loss
    at its own best rate (ladder, three seeds)."""
    cfg: InitScale = ctx.config
    corpus = load_corpus()
    x, y = _probe_data(corpus, ModelConfig(), PROBE_WINDOWS)
    m: dict[str, Measurement] = {}
    _common(m, cfg.train)
    loss0, logit, stream, finals, lrs, ladders = [], [], [], [], [], []
    for i, s in enumerate(cfg.scales):
        ctx.report_progress(i / len(cfg.scales), f"init std {s}")
        mc = ModelConfig(init_std=s)
        probes = [init_probe(mc, seed, x, y) for seed in ctx.seeds]
        lad = tune(mc, [cfg.train], cfg.rates, ctx.seeds, corpus, cfg.extend)[0]
        ladders.append(lad)
        loss0.append([p.loss for p in probes])
        logit.append([p.logit_rms for p in probes])
        stream.append([p.stream_rms for p in probes])
        finals.append(lad.best_final)
        lrs.append(lad.best_rate)
        k = f"ch06.init.s{i}"
        m |= {
            f"{k}.std": exact(s, "", f"init std {i + 1}", 1),
            f"{k}.loss0": measured(loss0[-1], "nats", f"loss at init, std {s}", 4),
            f"{k}.logit_rms": measured(logit[-1], "", f"RMS of the logits at init, std {s}", 2),
            f"{k}.stream_rms": measured(
                [p.stream_rms[-1] for p in probes], "", f"stream RMS after the block, std {s}", 2
            ),
        }
        m |= _ladder_keys(k, lad, f"init std {s}")
    f = np.array(finals)
    b = int(np.argmin(f.mean(axis=1)))
    m |= {
        "ch06.init.n_scales": exact(len(cfg.scales), "scales", "init stds tried"),
        "ch06.init.best_std": exact(cfg.scales[b], "", "init std with the lowest final loss, each at its best rate", 1),
        "ch06.init.best_edge": exact(int(b in (0, len(cfg.scales) - 1)), "", "1 if the best std is at an edge"),
        "ch06.init.ln_vocab": exact(math.log(64), "nats", "ln 64: the loss of a uniform guess", 4),
        "ch06.init.worst_minus_best": measured(
            f.max(axis=0) - f[b], "nats", "final loss: the worst std minus the best, paired by seed", 2
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "scales": list(cfg.scales),
            "loss0": np.array(loss0),
            "logit_rms": np.array(logit),
            "stream_rms": np.array(stream),
            "final": f,
            "best_lr": lrs,
        }
        | {k: v for i, lad in enumerate(ladders) for k, v in _ladder_series(f"s{i}", lad).items()},
    )


# --------------------------------------------------------------------------- pre-LN vs post-LN


@dataclass(frozen=True)
class Depth:
    train: TrainConfig = field(default_factory=lambda: SHORT)
    depths: tuple[int, ...] = (1, 2, 4, 8)
    norms: tuple[str, ...] = ("pre", "post")
    warmups: tuple[int, ...] = (0, 30)
    rates: tuple[float, ...] = START
    extend: int = 2


@experiment(
    "ch06.depth",
    config=Depth(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "depths": (1, 2), "warmups": (0, 5), "extend": 0},
)
def depth(ctx: RunContext) -> Outcome:
    """Pre-LN against post-LN by depth: stream RMS and gradient norm per block at init, and
    training with and without warmup, each arm at its own best rate; GPT-2's residual scaling
    as a third arm at the deepest depth."""
    cfg: Depth = ctx.config
    corpus = load_corpus()
    x, y = _probe_data(corpus, ModelConfig(), PROBE_WINDOWS)
    m: dict[str, Measurement] = {}
    m["ch06.depth.max"] = exact(max(cfg.depths), "blocks", "deepest model")
    m["ch06.depth.warmup"] = exact(max(cfg.warmups), "steps", "warmup of the with-warmup arms")
    series: dict = {"depths": list(cfg.depths), "warmups": list(cfg.warmups)}
    arms = [replace(cfg.train, warmup=w) for w in cfg.warmups]
    n_jobs = len(cfg.depths) * len(cfg.norms) + 1
    kept: dict[tuple[str, int], list[Ladder]] = {}
    job = 0
    for L in cfg.depths:
        for norm in cfg.norms:
            ctx.report_progress(job / n_jobs, f"{norm}-LN, {L} blocks")
            job += 1
            mc = ModelConfig(n_layers=L, norm=norm)
            probes = [init_probe(mc, s, x, y) for s in ctx.seeds]
            g = np.array([p.grad_norm for p in probes])  # (seeds, blocks)
            st = np.array([p.stream_rms for p in probes])  # (seeds, blocks + 1)
            k = f"ch06.depth.{norm}.d{L}"
            series[f"{norm}.d{L}.grad"] = g
            series[f"{norm}.d{L}.stream"] = st
            m |= {
                f"{k}.grad_last_over_first": measured(
                    g[:, -1] / g[:, 0], "", f"{norm}-LN, {L} blocks: last block's gradient norm over the first's", 2
                ),
                f"{k}.stream_last": measured(
                    st[:, -1], "", f"{norm}-LN, {L} blocks: stream RMS after the last block", 2
                ),
            }
            ladders = tune(mc, arms, cfg.rates, ctx.seeds, corpus, cfg.extend)
            kept[(norm, L)] = ladders
            for w, lad in zip(cfg.warmups, ladders, strict=True):
                kw = f"{k}.w{w}"
                m |= _ladder_keys(kw, lad, f"{norm}-LN, {L} blocks, warmup {w}")
                blown = [r for r, n in zip(lad.rates, lad.blowups, strict=True) if n > 0]
                what = f"{norm}-LN, {L} blocks, warmup {w}"
                if blown:
                    m[f"{kw}.blowup_lr"] = exact(min(blown), "", f"{what}: lowest rate at which a seed blows up", 1)
                m[f"{kw}.blowups"] = exact(int(lad.blowups.sum()), "runs", f"{what}: runs that blow up, all rates")
                m[f"{kw}.top_lr"] = exact(max(lad.rates), "", f"{what}: highest rate tried", 1)
                series |= _ladder_series(f"{norm}.d{L}.w{w}", lad)
            w0, w1 = ladders[0], ladders[-1]
            m[f"{k}.warmup_gain"] = measured(
                w0.best_final - w1.best_final,
                "nats",
                f"{norm}-LN, {L} blocks: no-warmup minus warmup final loss, each at its best rate, paired by seed",
                2,
            )
    # GPT-2's scaling of the residual branches, pre-LN, at the deepest depth
    L = max(cfg.depths)
    ctx.report_progress(job / n_jobs, f"GPT-2 scaling, {L} blocks")
    mc = ModelConfig(n_layers=L, norm="pre")
    factor = residual_factor(mc)
    probes = [init_probe(mc, s, x, y, residual=factor) for s in ctx.seeds]
    st = np.array([p.stream_rms for p in probes])
    series[f"gpt2.d{L}.stream"] = st
    series[f"gpt2.d{L}.grad"] = np.array([p.grad_norm for p in probes])
    with tempfile.TemporaryDirectory() as tmp:
        n = iter(range(100))

        def scaled(c: ModelConfig, runs: list[TrainConfig]):
            return train_residual_scaled(c, runs, corpus, Path(tmp) / f"start{next(n)}.pt")

        lad = tune(mc, [arms[-1]], cfg.rates, ctx.seeds, corpus, cfg.extend, trainer=scaled)[0]
    w = cfg.warmups[-1]
    k = f"ch06.depth.gpt2.d{L}"
    m |= _ladder_keys(f"{k}.w{w}", lad, f"pre-LN with GPT-2 scaling, {L} blocks, warmup {w}")
    series |= _ladder_series(f"gpt2.d{L}.w{w}", lad)
    m |= {
        f"{k}.factor": exact(factor, "", f"GPT-2's 1/sqrt(2 x {L}) on w_o and w_out", 3),
        f"{k}.stream_last": measured(st[:, -1], "", f"GPT-2 scaling, {L} blocks: stream RMS after the last block", 2),
        f"{k}.minus_plain": measured(
            lad.best_final - kept[("pre", L)][-1].best_final,
            "nats",
            f"pre-LN, {L} blocks, warmup {w}: GPT-2 scaled minus plain final loss, each at its best rate, paired",
            2,
        ),
    }
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- RMSNorm


@dataclass(frozen=True)
class RMS:
    train: TrainConfig = field(default_factory=lambda: SHORT)
    rates: tuple[float, ...] = START
    extend: int = 3


@experiment("ch06.rmsnorm", config=RMS(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10, "extend": 0})
def rmsnorm(ctx: RunContext) -> Outcome:
    """LayerNorm against RMSNorm, each at its own best rate (ladder, three seeds)."""
    cfg: RMS = ctx.config
    corpus = load_corpus()
    m: dict[str, Measurement] = {}
    series: dict = {}
    lads = {}
    for kind in ("layer", "rms"):
        lad = tune(ModelConfig(norm_kind=kind), [cfg.train], cfg.rates, ctx.seeds, corpus, cfg.extend)[0]
        lads[kind] = lad
        m |= _ladder_keys(f"ch06.norm.{kind}", lad, f"{kind}-norm")
        series |= _ladder_series(kind, lad)
    m["ch06.norm.rms_minus_layer"] = measured(
        lads["rms"].best_final - lads["layer"].best_final,
        "nats",
        "RMSNorm minus LayerNorm final loss, each at its best rate, paired by seed",
        2,
    )
    return Outcome(measurements=m, series=series)


@dataclass(frozen=True)
class RMSTime:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=200, batch=16, eval_every=1000))
    repeats: int = 9
    nets: tuple[str, ...] = ("stacked", "autograd")


@experiment("ch06.rms_time", config=RMSTime(), quick={"train.steps": 5, "repeats": 2})
def rms_time(ctx: RunContext) -> Outcome:
    """Time per training step, LayerNorm against RMSNorm, one model, on this machine: the two
    arms interleaved (A B A B ...), medians over repeats, for the fast path and autograd."""
    cfg: RMSTime = ctx.config
    corpus = load_corpus()
    m: dict[str, Measurement] = {}
    series: dict = {}
    for net in cfg.nets:
        times: dict[str, list[float]] = {"layer": [], "rms": []}
        for rep in range(cfg.repeats + 1):  # the first round warms up and is dropped
            for kind in ("layer", "rms") if rep % 2 == 0 else ("rms", "layer"):
                t0 = time.perf_counter()
                train_many(ModelConfig(norm_kind=kind), [cfg.train], corpus, threads=1, net=net)
                if rep:
                    times[kind].append((time.perf_counter() - t0) / cfg.train.steps * 1e3)
        med = {k: float(np.median(v)) for k, v in times.items()}
        ratio = [a / b for a, b in zip(times["rms"], times["layer"], strict=True)]
        m |= {
            f"ch06.time.{net}.layer": exact(med["layer"], "ms", f"{net}: LayerNorm ms per step, median", 3),
            f"ch06.time.{net}.rms": exact(med["rms"], "ms", f"{net}: RMSNorm ms per step, median", 3),
            f"ch06.time.{net}.ratio": exact(
                float(np.median(ratio)), "", f"{net}: RMSNorm over LayerNorm time, median of paired repeats", 2
            ),
        }
        series |= {f"{net}.layer": times["layer"], f"{net}.rms": times["rms"]}
    m["ch06.time.repeats"] = exact(cfg.repeats, "", "timed repeats of each arm")
    m["ch06.time.steps"] = exact(cfg.train.steps, "steps", "steps per timed run")
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- width and µP


@dataclass(frozen=True)
class Width:
    train: TrainConfig = field(default_factory=lambda: SHORT)
    widths: tuple[int, ...] = (8, 16, 32, 64, 128)
    base: int = 16
    rates: tuple[float, ...] = START
    extend: int = 3


@experiment(
    "ch06.width",
    config=Width(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "widths": (8, 32), "extend": 0},
)
def width(ctx: RunContext) -> Outcome:
    """The best rate against width, standard parametrisation and µP (ladder, three seeds), and
    the narrowest width's best rate used at the widest against the widest's own best."""
    cfg: Width = ctx.config
    corpus = load_corpus()
    m: dict[str, Measurement] = {
        "ch06.width.min": exact(min(cfg.widths), "", "narrowest width (d_model)"),
        "ch06.width.max": exact(max(cfg.widths), "", "widest width (d_model)"),
        "ch06.width.base": exact(cfg.base, "", "µP's base width"),
        "ch06.width.n": exact(len(cfg.widths), "widths", "widths swept"),
    }
    series: dict = {"widths": list(cfg.widths)}
    job, n_jobs = 0, 2 * len(cfg.widths)
    for param in ("standard", "mup"):
        lads: list[Ladder] = []
        for d in cfg.widths:
            ctx.report_progress(job / n_jobs, f"{param}, width {d}")
            job += 1
            mc = ModelConfig(d_model=d, param=param, base_d_model=cfg.base)
            lad = tune(mc, [cfg.train], cfg.rates, ctx.seeds, corpus, cfg.extend)[0]
            lads.append(lad)
            m |= _ladder_keys(f"ch06.width.{param}.w{d}", lad, f"{param}, width {d}")
            series |= _ladder_series(f"{param}.w{d}", lad)
        series[f"{param}.best_lr"] = [lad.best_rate for lad in lads]
        narrow, wide = lads[0], lads[-1]
        r = narrow.best_rate
        if r not in wide.results:  # the narrow best was not on the wide ladder: train it there
            mc = ModelConfig(d_model=max(cfg.widths), param=param, base_d_model=cfg.base)
            wide.results[r] = train_many(mc, [replace(cfg.train, lr=r, seed=s) for s in ctx.seeds], corpus, workers=1)
        k = f"ch06.transfer.{param}"
        m |= {
            f"{k}.lr": exact(r, "", f"{param}: the narrowest width's best rate", 1),
            f"{k}.final": spread(wide.at(r), "nats", f"{param}: widest width at the narrowest's best rate"),
            f"{k}.penalty": measured(
                wide.at(r) - wide.best_final, "nats", f"{param}: transferred minus own-best final loss, paired", 2
            ),
            f"{k}.drift": exact(
                wide.best_rate / narrow.best_rate, "", f"{param}: widest's best rate over the narrowest's", 2
            ),
        }
    m["ch06.transfer.mup_minus_sp"] = measured(
        _at_best(series, "mup", max(cfg.widths)) - _at_best(series, "standard", max(cfg.widths)),
        "nats",
        "widest width: µP minus standard final loss, each at its own best rate, paired by seed",
        2,
    )
    return Outcome(measurements=m, series=series)


def _at_best(series: dict, param: str, d: int) -> np.ndarray:
    return np.asarray(series[f"{param}.w{d}.final"])[series[f"{param}.w{d}.best"]]


# --------------------------------------------------------------------------- coordinate check


@dataclass(frozen=True)
class Coord:
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(steps=4, batch=16, warmup=0, schedule="constant", lr=2e-2, eval_every=4)
    )
    widths: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512)
    base: int = 16
    windows: int = 64  # validation windows the activations are read on


@experiment("ch06.coord", config=Coord(), seeds=SEEDS, quick={"widths": (8, 16, 32), "train.steps": 2})
def coord(ctx: RunContext) -> Outcome:
    """The coordinate check: mean |activation| (embedding, attention and MLP outputs, logits)
    after 0 to a few steps against width, standard parametrisation and µP."""
    cfg: Coord = ctx.config
    corpus = load_corpus()
    x, _ = _probe_data(corpus, ModelConfig(), cfg.windows)
    steps = cfg.train.steps
    names = ("embedding", "attn0", "mlp0", "logits")
    m: dict[str, Measurement] = {
        "ch06.coord.steps": exact(steps, "steps", "updates the coordinate check follows"),
        "ch06.coord.lr": exact(cfg.train.lr, "", "the coordinate check's constant rate (no warmup)", 1),
        "ch06.coord.width_max": exact(max(cfg.widths), "", "widest width of the coordinate check"),
    }
    series: dict = {"widths": list(cfg.widths), "steps": list(range(steps + 1))}
    for param in ("standard", "mup"):
        grid = np.zeros((len(names), steps + 1, len(cfg.widths), len(ctx.seeds)))  # (act, step, width, seed)
        for j, d in enumerate(cfg.widths):
            ctx.report_progress((j + (param == "mup") * len(cfg.widths)) / (2 * len(cfg.widths)), f"{param} {d}")
            mc = ModelConfig(d_model=d, param=param, base_d_model=cfg.base)

            def look(s: Step, mc: ModelConfig = mc, j: int = j, grid: np.ndarray = grid) -> None:
                for si in range(len(ctx.seeds)):
                    c = coordinates(mc, s.weights(si, mc), x)
                    for a, name in enumerate(names):
                        grid[a, s.step, j, si] = c[name]

            train_many(mc, [replace(cfg.train, seed=s) for s in ctx.seeds], corpus, on_step=look)
        series[param] = grid
        lw = np.log2(np.array(cfg.widths, dtype=float))
        for a, name in enumerate(names):
            for t in (0, steps):
                slopes = [np.polyfit(lw, np.log2(grid[a, t, :, si]), 1)[0] for si in range(len(ctx.seeds))]
                m[f"ch06.coord.{param}.{name}.t{t}.slope"] = spread(
                    slopes, "", f"{param}: log2 mean|{name}| per doubling of width after {t} steps"
                )
            m[f"ch06.coord.{param}.{name}.ratio"] = spread(
                grid[a, steps, -1] / grid[a, steps, 0],
                "",
                f"{param}: mean|{name}| at the widest over the narrowest after {steps} steps",
            )
    return Outcome(measurements=m, series=series)
