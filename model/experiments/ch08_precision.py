"""Chapter 8, mixed precision: the numbers deck 08 shows.

- ``ch08.formats``: the formats table, computed from the bit layouts (model/formats.py);
- ``ch08.range``: an FP32 run's weight gradients, weights, updates and matmul inputs over training
  (read through the on_step hook), as exponent histograms against each format's range; the share
  of gradient entries FP16 flushes to zero with no loss scale, a static scale and a dynamic scaler
  (applied to the recorded gradients, not inside training); the share of updates that would vanish
  if the weights were stored in BF16; gradients quantised to 8 and 4 bits per weight tensor (their
  error; ch08_training trains with them);
- ``ch08.accum``: a long dot product summed in BF16, in BF16 promoted to FP32 every 128 terms, and
  in FP32, against float64, over a ladder of lengths;
  and, on the same runs' final weights (keys ``ch08.fp8.*``), the forward matmul inputs cast to E4M3
  with no scaling, one scale per tensor, and one per tile (1x128 activations, 128x128 weights):
  flushed and clipped shares, the matmuls' relative error, and the validation loss with those casts
  (simulated: cast to FP8 and back, the matmul itself in FP32);
- ``ch08.recipes``: FP32, BF16 autocast (FP32 master weights, and "pure": weights stored in BF16),
  FP16 autocast without and with a dynamic loss scale, each at its own best rate of a ladder, three
  seeds; autocast wraps the train_many call;
- ``ch08.timing``: time per training step of the three recipes on this CPU, arms interleaved.

Autocast state is thread-local and torch caches its casts of the weights until the context exits:
the recipes run train_many with workers=1 (the calling thread) and autocast(cache_enabled=False),
or every step would reuse the first step's BF16 copy of the weights; the experiment checks both
(the logits' dtype inside the context, and that the weights the model sees move).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model import formats as fm
from model.data import load_corpus, val_windows
from model.decoder import Decoder, ModelConfig, cross_entropy
from model.experiments.common import best_rung, exact, measured, progress, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.precision import (
    DynamicScaler,
    accumulate,
    exponent_histogram,
    flushed_share,
    fp8_cast,
    lost_update_share,
    quantise,
    relative_error,
)
from model.train import Step, TrainConfig, TrainResult, train_many

SEEDS = (0, 1, 2)
BEST = 2e-2  # ch05.lr.best: the default run's best peak rate, the rate of the FP32 runs read here
LO, HI = -40, 12  # exponent bins of the histograms (the ends collect everything beyond)
MATMULS = ("attn.w_q", "attn.w_k", "attn.w_v", "attn.w_o", "mlp.w_in", "mlp.w_out")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _m(values, unit: str, what: str, digits: int = 3) -> Measurement:
    return measured(values, unit, what, digits)


def quantise_tensors(
    g: torch.Tensor, spans: list[tuple[int, int]], bits: int, stochastic: bool, gen: torch.Generator
) -> torch.Tensor:
    """A flat gradient quantised as the trainer does with grad_bits: each weight tensor's slice on its
    own full scale (its max-abs)."""
    q = torch.empty_like(g)
    for o, n in spans:
        q[o : o + n] = quantise(g[o : o + n], bits, stochastic, gen)
    return q


# --------------------------------------------------------------------------- the formats table


@dataclass(frozen=True)
class Formats:
    names: tuple[str, ...] = tuple(f.name for f in fm.FORMATS)


@experiment("ch08.formats", config=Formats())
def formats(ctx: RunContext) -> Outcome:
    """The six formats' largest value, smallest normal and subnormal, epsilon and digits, from the bit layouts."""
    m: dict[str, Measurement] = {}
    rows = []
    for name in ctx.config.names:
        f = fm.BY_NAME[name]
        k = f"ch08.fmt.{name.lower()}"
        m |= {
            f"{k}.bits": exact(f.bits, "bits", f"{name}: bits in all"),
            f"{k}.exp": exact(f.exp_bits, "bits", f"{name}: exponent bits"),
            f"{k}.man": exact(f.man_bits, "bits", f"{name}: mantissa bits"),
            f"{k}.max": exact(f.max, "", f"{name}: largest finite value", 3),
            f"{k}.min_normal": exact(f.min_normal, "", f"{name}: smallest normal value", 3),
            f"{k}.min_sub": exact(f.min_subnormal, "", f"{name}: smallest subnormal value", 3),
            f"{k}.eps": exact(f.eps, "", f"{name}: epsilon, the gap above 1 (2^-m)", 3),
            f"{k}.digits": exact(f.digits, "digits", f"{name}: decimal digits, (m+1) log10 2", 2),
            f"{k}.emin": exact(math.log2(f.min_subnormal), "", f"{name}: log2 of the smallest subnormal"),
            f"{k}.emax": exact(f.emax, "", f"{name}: exponent of the largest value"),
        }
        rows.append([f.exp_bits, f.man_bits, f.max, f.min_normal, f.min_subnormal, f.eps])
    return Outcome(measurements=m, series={"table": rows})  # rows in ctx.config.names' order


# --------------------------------------------------------------------------- range over a run


@dataclass(frozen=True)
class Range:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(lr=BEST, eval_every=100))
    every: int = 100  # histograms and activations every this many steps
    windows: int = 64  # validation windows whose matmul inputs are recorded
    static_scale: float = 2.0**12
    scaler_interval: int = 2000  # torch.amp.GradScaler's default growth interval
    bits: tuple[int, ...] = (8, 4)
    act_tile: tuple[int, int] = (1, 128)  # FP8: DeepSeek-V3's activation tiles
    weight_tile: tuple[int, int] = (128, 128)  # and weight blocks


def matmul_inputs(model: Decoder, x: torch.Tensor) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Each hidden matmul's input (N, K) and weight (out, K) on the windows x (B, T), read with
    forward pre-hooks (the Decoder itself is unchanged)."""
    got: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    handles = []
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear) and name.split(".", 2)[-1] in MATMULS:

            def keep(module, args, name=name):
                got[name] = (args[0].detach().reshape(-1, args[0].shape[-1]).clone(), module.weight.detach().clone())

            handles.append(mod.register_forward_pre_hook(keep))
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return got


@experiment("ch08.range", config=Range(), seeds=SEEDS, quick={"train.steps": 20, "train.eval_every": 10, "every": 10})
def range_(ctx: RunContext) -> Outcome:
    """Where an FP32 run's gradients, weights, updates and matmul inputs sit against each format's range;
    FP16 gradient underflow with no scale, a static and a dynamic loss scale; updates lost in BF16 storage."""
    cfg: Range = ctx.config
    corpus = load_corpus()
    mcfg = ModelConfig()
    xv, _ = val_windows(corpus.val, mcfg.context)
    xs = xv[: cfg.windows]
    S = len(ctx.seeds)
    kinds = ("grad", "weight", "update", "act")
    hist: dict[str, list[torch.Tensor]] = {k: [] for k in kinds}  # per record: (bins,) pooled over seeds
    fp16: dict[str, list[list[float]]] = {"none": [], "static": [], "dynamic": []}  # per step: (S,) flushed share
    sub16 = []  # per step: (S,) share below FP16's smallest normal, unscaled
    other: dict[str, list[list[float]]] = {"bf16": [], "e5m2": [], "e4m3": []}  # per step: (S,) flushed share, unscaled
    lost = []  # per step: (S,) share of updates lost if weights were stored in BF16
    qerr: dict[tuple[int, bool], list[list[float]]] = {
        (b, sr): [] for b in cfg.bits for sr in (False, True)
    }  # per record: (S,) relative error
    qzero: dict[int, list[list[float]]] = {
        b: [] for b in cfg.bits
    }  # per record: (S,) share of nonzero entries rounded to 0
    qbias: dict[tuple[int, bool], list[list[float]]] = {
        (b, sr): [] for b in cfg.bits for sr in (False, True)
    }  # per record: (S,) |mean error| / mean |g|
    scalers = [DynamicScaler(interval=cfg.scaler_interval) for _ in ctx.seeds]
    scales = []
    prev: list[torch.Tensor] = []
    gen = torch.Generator().manual_seed(8)

    def look(at: Step) -> bool:
        theta = at.theta.detach()
        if at.step > 0:
            clip = cfg.train.clip or math.inf
            g = at.grad * torch.clamp(at.norm / clip, min=1.0)[:, None]  # the gradient before clipping
            fp16["none"].append([flushed_share(g[s], torch.float16) for s in range(S)])
            fp16["static"].append([flushed_share(g[s], torch.float16, cfg.static_scale) for s in range(S)])
            fp16["dynamic"].append(
                [flushed_share(g[s], torch.float16, scalers[s].update(g[s], torch.float16)) for s in range(S)]
            )
            scales.append([sc.scale for sc in scalers])
            sub16.append([float(((g[s].abs() < fm.FP16.min_normal) & (g[s] != 0)).float().mean()) for s in range(S)])
            for k, d in (("bf16", torch.bfloat16), ("e5m2", torch.float8_e5m2), ("e4m3", torch.float8_e4m3fn)):
                other[k].append([flushed_share(g[s], d) for s in range(S)])
            dw = theta - prev[0]
            lost.append([lost_update_share(prev[0][s], dw[s], torch.bfloat16) for s in range(S)])
        if at.step % cfg.every == 0 or at.step == cfg.train.steps:
            if at.step > 0:
                hist["grad"].append(exponent_histogram(g, LO, HI))
                hist["update"].append(exponent_histogram(theta - prev[0], LO, HI))
                for b in cfg.bits:
                    for sr in (False, True):
                        q = [quantise_tensors(g[s], at.layout.spans(), b, sr, gen) for s in range(S)]
                        qerr[(b, sr)].append([relative_error(q[s], g[s]) for s in range(S)])
                        nz = [g[s] != 0 for s in range(S)]
                        qbias[(b, sr)].append(
                            [float((q[s] - g[s])[nz[s]].mean().abs() / g[s][nz[s]].abs().mean()) for s in range(S)]
                        )
                        if not sr:
                            qzero[b].append([float((q[s][nz[s]] == 0).float().mean()) for s in range(S)])
            hist["weight"].append(exponent_histogram(theta, LO, HI))
            acts = torch.zeros(HI - LO + 1, dtype=torch.long)
            for s in range(S):
                model = Decoder(mcfg)
                model.load_state_dict(at.layout.state_dict(theta[s], mcfg))
                for inp, _ in matmul_inputs(model, xs).values():
                    acts += exponent_histogram(inp, LO, HI)
            hist["act"].append(acts)
            ctx.report_progress(at.step / cfg.train.steps, f"step {at.step}")
        prev[:] = [theta.clone()]
        return False

    runs = [replace(cfg.train, seed=s) for s in ctx.seeds]
    res = train_many(mcfg, runs, corpus, workers=1, on_step=look)
    share = {k: np.array(v) for k, v in fp16.items()}  # (steps, S)
    m: dict[str, Measurement] = {
        "ch08.range.lr": exact(cfg.train.lr, "", "peak rate of the FP32 runs read (ch05's best)", 1),
        "ch08.range.steps": exact(cfg.train.steps, "steps", "steps of the FP32 runs read"),
        "ch08.range.final": _m([r.val_loss_final for r in res], "nats", "their final validation loss"),
        "ch08.range.every": exact(cfg.every, "steps", "histograms taken every this many steps"),
        "ch08.range.windows": exact(cfg.windows, "windows", "validation windows whose matmul inputs are read"),
        "ch08.range.static": exact(cfg.static_scale, "", "the static loss scale", 4),
        "ch08.range.dyn_init": exact(DynamicScaler.scale, "", "the dynamic scaler's first scale", 5),
        "ch08.range.dyn_interval": exact(cfg.scaler_interval, "steps", "steps without overflow before it doubles"),
        "ch08.range.dyn_final": _m(np.log2(np.array(scales[-1])), "", "log2 of the dynamic scale at the end", 2),
        "ch08.range.dyn_skipped": _m([sc.skipped for sc in scalers], "steps", "steps the dynamic scaler skips", 2),
        "ch08.range.bf16_lost": _m(100 * np.mean(lost, axis=0), "%", "updates lost if weights were stored in BF16"),
        "ch08.range.bf16_lost_last": _m(
            100 * np.mean(lost[-cfg.every :], axis=0), "%", "the same over the last histogram interval"
        ),
        "ch08.range.fp16_sub": _m(100 * np.mean(sub16, axis=0), "%", "gradient entries below FP16's smallest normal"),
    }
    for k, v in share.items():
        m[f"ch08.range.fp16_flush.{k}"] = _m(
            100 * v.mean(axis=0), "%", f"FP16 gradient entries flushed to 0, {k} scale"
        )
        m[f"ch08.range.fp16_flush.{k}.last"] = _m(
            100 * v[-cfg.every :].mean(axis=0), "%", f"the same ({k} scale) over the last interval"
        )
    for k, o in other.items():
        m[f"ch08.range.flush.{k}"] = _m(
            100 * np.mean(o, axis=0), "%", f"gradient entries flushed to 0 in {k}, no scale"
        )
    for b in cfg.bits:
        m[f"ch08.quant.b{b}.zero"] = _m(100 * np.mean(qzero[b], axis=0), "%", f"{b}-bit nearest: nonzero entries to 0")
        for sr in (False, True):
            tag = "sr" if sr else "rtn"
            m[f"ch08.quant.b{b}.{tag}.err"] = _m(
                np.mean(qerr[(b, sr)], axis=0), "", f"{b}-bit {tag}: relative error of the gradient", 2
            )
            m[f"ch08.quant.b{b}.{tag}.bias"] = _m(
                np.mean(qbias[(b, sr)], axis=0), "", f"{b}-bit {tag}: |mean error| over mean |g|", 2
            )
    fm8, fs8 = fp8_measures(res, corpus, cfg)
    return Outcome(
        measurements=m | fm8,
        series=fs8
        | {
            "lo": LO,
            "hi": HI,
            **{f"hist_{k}": torch.stack(v).tolist() for k, v in hist.items()},
            **{f"fp16_flush_{k}": v.mean(axis=1).tolist() for k, v in share.items()},
            "lost": np.mean(lost, axis=1).tolist(),
            "dyn_scale": np.array(scales).mean(axis=1).tolist(),
            # per format (fm.FORMATS' order): log2 of the smallest subnormal, smallest normal and largest value
            "formats": [[math.log2(f.min_subnormal), math.log2(f.min_normal), math.log2(f.max)] for f in fm.FORMATS],
        },
    )


# --------------------------------------------------------------------------- accumulation


@dataclass(frozen=True)
class Accum:
    lengths: tuple[int, ...] = (64, 256, 1024, 4096, 16384)
    trials: int = 32  # dot products per length and seed
    chunk: int = 128  # DeepSeek-V3 promotes partial sums to FP32 every 128 elements


@experiment("ch08.accum", config=Accum(), seeds=SEEDS, quick={"lengths": (64, 256), "trials": 4})
def accum(ctx: RunContext) -> Outcome:
    """A dot product of BF16 inputs accumulated in BF16, in BF16 promoted every 128 terms, and in FP32,
    against float64: relative error over a ladder of lengths, for positive (U(0,1)) and signed (N(0,1)) inputs."""
    cfg: Accum = ctx.config
    arms = ("bf16", "bf16_128", "fp32")
    err = {(d, a): np.zeros((len(cfg.lengths), len(ctx.seeds))) for d in ("pos", "signed") for a in arms}
    for j, s in enumerate(ctx.seeds):
        gen = torch.Generator().manual_seed(800 + s)
        for i, n in enumerate(cfg.lengths):
            for dist in ("pos", "signed"):
                if dist == "pos":
                    x, y = torch.rand(cfg.trials, n, generator=gen), torch.rand(cfg.trials, n, generator=gen)
                else:
                    x, y = torch.randn(cfg.trials, n, generator=gen), torch.randn(cfg.trials, n, generator=gen)
                x, y = x.to(torch.bfloat16), y.to(torch.bfloat16)  # the inputs are BF16 in every arm
                p = x.float() * y.float()  # exact: two 8-bit significands fit in FP32's 24
                ref = p.double().sum(dim=1)
                scale = p.double().abs().sum(dim=1)  # relative to sum |x_i y_i|, so signed sums near 0 stay fair
                got = {
                    "bf16": accumulate(p, torch.bfloat16),
                    "bf16_128": accumulate(p, torch.bfloat16, cfg.chunk),
                    "fp32": accumulate(p, torch.float32),
                }
                for a in arms:
                    err[(dist, a)][i, j] = float(((got[a] - ref).abs() / scale).mean())
            ctx.report_progress((j + (i + 1) / len(cfg.lengths)) / len(ctx.seeds), f"n {n}")
    m: dict[str, Measurement] = {
        "ch08.accum.trials": exact(cfg.trials, "dot products", "dot products per length and seed"),
        "ch08.accum.chunk": exact(cfg.chunk, "terms", "terms summed in BF16 before the FP32 promotion"),
        "ch08.accum.n_min": exact(cfg.lengths[0], "terms", "shortest dot product"),
        "ch08.accum.n_max": exact(cfg.lengths[-1], "terms", "longest dot product"),
    }
    for d in ("pos", "signed"):
        for a in arms:
            for i, n in enumerate(cfg.lengths):
                m[f"ch08.accum.{d}.{a}.n{n}"] = measured(
                    100 * err[(d, a)][i], "%", f"{d} inputs, {a} accumulation, length {n}: error / sum|xy|", 2
                )
    return Outcome(
        measurements=m,
        series={"lengths": list(cfg.lengths), **{f"err_{d}_{a}": e.tolist() for (d, a), e in err.items()}},
    )


# --------------------------------------------------------------------------- FP8 casts of matmul inputs


SCALINGS = ("none", "tensor", "tile")


def fp8_loss(model: Decoder, x: torch.Tensor, y: torch.Tensor, scaling: str | None, cfg: Range) -> float:
    """Validation loss with every hidden matmul's input and weight cast to E4M3 and back under
    ``scaling`` (None: FP32); embeddings, norms, attention scores and the head stay FP32."""
    handles = []
    if scaling is not None:
        for name, mod in model.named_modules():
            if isinstance(mod, torch.nn.Linear) and name.split(".", 2)[-1] in MATMULS:

                def cast_in(module, args):
                    a = args[0]
                    q = fp8_cast(a.reshape(-1, a.shape[-1]), scaling, cfg.act_tile).value
                    return (q.reshape(a.shape),)

                handles.append(mod.register_forward_pre_hook(cast_in))
        saved = {}
        for name, p in model.named_parameters():
            if name.rsplit(".", 1)[0].split(".", 2)[-1] in MATMULS:
                saved[name] = p.detach().clone()
                p.data = fp8_cast(p.detach(), scaling, cfg.weight_tile).value
    with torch.no_grad():
        total = 0.0
        for s in range(0, len(x), 256):
            total += float(cross_entropy(model(x[s : s + 256]), y[s : s + 256])) * y[s : s + 256].numel()
    for h in handles:
        h.remove()
    if scaling is not None:
        for name, p in model.named_parameters():
            if name in saved:
                p.data = saved[name]
    return total / y.numel()


def fp8_measures(res: list[TrainResult], corpus, cfg: Range) -> tuple[dict[str, Measurement], dict]:
    """Trained FP32 models' forward matmul inputs cast to E4M3: no scaling, per tensor, per tile (1x128 /
    128x128): shares flushed and clipped, matmul relative error, and the validation loss with the casts."""
    mcfg = ModelConfig()
    xv, yv = val_windows(corpus.val, mcfg.context)
    out: dict[str, dict[str, list[float]]] = {
        k: {"flushed": [], "clipped": [], "err": [], "loss": []} for k in SCALINGS
    }
    fp32_loss = []
    for r in res:
        assert r.state_dict is not None
        model = Decoder(mcfg)
        model.load_state_dict(r.state_dict)
        fp32_loss.append(fp8_loss(model, xv, yv, None, cfg))
        inputs = matmul_inputs(model, xv[:512])
        for k in SCALINGS:
            fl = cl = nz = 0
            errs = []
            for a, w in inputs.values():
                qa, qw = fp8_cast(a, k, cfg.act_tile), fp8_cast(w, k, cfg.weight_tile)
                fl += qa.flushed + qw.flushed
                cl += qa.clipped + qw.clipped
                nz += qa.nonzero + qw.nonzero
                errs.append(relative_error(qa.value @ qw.value.T, a @ w.T))
            out[k]["flushed"].append(100 * fl / nz)
            out[k]["clipped"].append(100 * cl / nz)
            out[k]["err"].append(100 * float(np.mean(errs)))
            out[k]["loss"].append(fp8_loss(model, xv, yv, k, cfg))
    base = np.array(fp32_loss)
    m: dict[str, Measurement] = {
        "ch08.fp8.fp32_loss": _m(base, "nats", "their validation loss in FP32"),
        "ch08.fp8.act_tile": exact(cfg.act_tile[1], "", "activation tile width (1 x this)"),
        "ch08.fp8.weight_tile": exact(cfg.weight_tile[0], "", "weight block side (this x this)"),
        "ch08.fp8.width": exact(mcfg.d_model, "", "the toy's width: most matmuls' inner dimension"),
        "ch08.fp8.max_inner": exact(mcfg.mlp_ratio * mcfg.d_model, "", "the widest inner dimension (MLP out)"),
        "ch08.fp8.e4m3_max": exact(fm.E4M3.max, "", "E4M3's largest value", 3),
    }
    for k in SCALINGS:
        o = out[k]
        m |= {
            f"ch08.fp8.{k}.flushed": measured(o["flushed"], "%", f"{k} scaling: nonzero matmul inputs flushed to 0", 2),
            f"ch08.fp8.{k}.clipped": measured(o["clipped"], "%", f"{k} scaling: matmul inputs saturated at 448", 2),
            f"ch08.fp8.{k}.err": measured(o["err"], "%", f"{k} scaling: matmuls' relative error (mean of six)", 2),
            f"ch08.fp8.{k}.loss": _m(o["loss"], "nats", f"{k} scaling: validation loss with E4M3 matmul inputs"),
            f"ch08.fp8.{k}.minus_fp32": measured(
                np.array(o["loss"]) - base, "nats", f"{k} scaling minus FP32 validation loss, paired", 2
            ),
        }
    loss = {k: np.array(out[k]["loss"]) for k in SCALINGS}
    m["ch08.fp8.tile_minus_tensor"] = measured(
        loss["tile"] - loss["tensor"], "nats", "per-tile minus per-tensor validation loss, paired by seed", 2
    )
    m["ch08.fp8.tensor_minus_none"] = measured(
        loss["tensor"] - loss["none"], "nats", "per-tensor minus unscaled validation loss, paired by seed", 2
    )
    series = {f"fp8_{k}_{q}": v for k in SCALINGS for q, v in out[k].items()}  # per seed
    return m, series | {"fp8_fp32_loss": fp32_loss}


# --------------------------------------------------------------------------- measured recipes


@contextlib.contextmanager
def recipe(name: str) -> Iterator[None]:
    """The precision a train_many call inside runs at: FP32, or autocast to BF16 or FP16 (FP32 master
    weights, optimiser and loss; no cast cache, so each step casts the weights it has now)."""
    if name == "fp32":
        yield
        return
    with torch.autocast("cpu", dtype=DTYPES[name], cache_enabled=False):
        yield


def autocast_applies(name: str) -> tuple[str, float]:
    """Inside ``recipe(name)`` on this thread: the logits' dtype, and how far a cast weight moves
    after its FP32 weight changes (0 would mean a stale cached copy)."""
    model = Decoder(ModelConfig())
    w_in = model.get_submodule("blocks.0.mlp.w_in")
    assert isinstance(w_in, torch.nn.Linear)
    x = torch.zeros(1, 4, dtype=torch.long)
    with recipe(name):
        before = w_in(torch.ones(1, ModelConfig().d_model)).detach().float()
        logits = model(x)
        with torch.no_grad():
            w_in.weight.add_(0.5)
        after = w_in(torch.ones(1, ModelConfig().d_model)).detach().float()
    return str(logits.dtype).replace("torch.", ""), float((after - before).abs().max())


LADDER = (2e-3, 6e-3, 2e-2, 6e-2, 2e-1, 6e-1)  # ch05's rungs, about 3x apart: where a ladder is extended


def tuned(
    train: Callable[[list[float]], list[TrainResult]], rates: list[float], S: int
) -> tuple[list[float], list[TrainResult]]:
    """Train every rate of ``rates`` (``train`` returns S seeds per rate, rate-major); while the best
    rate (lowest mean final validation loss) is an end of the ladder, add LADDER's next rung beyond it,
    at most twice. Returns the rates tried, in order, and their results."""
    res = train(rates)
    for _ in range(2):
        i = best_rung(np.array([r.val_loss_final for r in res]).reshape(len(rates), S))
        if 0 < i < len(rates) - 1:
            break
        beyond = [r for r in LADDER if (r < rates[0] if i == 0 else r > rates[-1])]
        if not beyond:
            break
        new = max(beyond) if i == 0 else min(beyond)
        more = train([new])
        rates, res = ([new] + rates, more + res) if i == 0 else (rates + [new], res + more)
    return rates, res


RECIPES = ("fp32", "bf16", "bf16_pure", "fp16", "fp16_scaled")
AUTOCAST = {"fp32": "fp32", "bf16": "bf16", "bf16_pure": "bf16", "fp16": "fp16", "fp16_scaled": "fp16"}  # recipe()
LOSS_SCALE = 2.0**16  # fp16_scaled's starting loss scale (torch.amp.GradScaler's default)


def recipe_config(arm: str, base: TrainConfig) -> TrainConfig:
    """What a recipe sets in the trainer beside autocast: FP16's dynamic loss scale (GradScaler's rule), or
    pure BF16's weights stored in BF16 with no FP32 master copy (the optimiser's moments stay FP32)."""
    if arm == "fp16_scaled":
        return replace(base, loss_scale=LOSS_SCALE, dynamic_scale=True)
    if arm == "bf16_pure":
        return replace(base, weight_dtype="bfloat16")
    return base


def arm_keys(prefix: str, arm: str, rates: list[float], final: np.ndarray, res: list[TrainResult]) -> dict:
    """An arm's tuning as results: its best rate, the rates tried, whether the best is a ladder end, its
    final validation loss there (mean ± sd over seeds) and how many of its runs diverged."""
    i = best_rung(final)
    R = len(rates)
    return {
        f"{prefix}.{arm}.lr": exact(rates[i], "", f"{arm}: its best rate", 1),
        f"{prefix}.{arm}.n_rates": exact(R, "rates", f"{arm}: rates tried"),
        f"{prefix}.{arm}.edge": exact(int(i in (0, R - 1)), "", f"{arm}: 1 if its best rate is a ladder end"),
        f"{prefix}.{arm}.final": measured(final[i], "nats", f"{arm} at its best rate: final validation loss", 3),
        f"{prefix}.{arm}.diverged": exact(
            sum(r.diverged_at is not None for r in res), "runs", f"{arm}: runs that went non-finite"
        ),
    }


@dataclass(frozen=True)
class Recipes:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run's 2,000 steps
    rates: tuple[float, ...] = (6e-3, 2e-2, 6e-2)
    arms: tuple[str, ...] = RECIPES


def _fp32_val(r: TrainResult, x: torch.Tensor, y: torch.Tensor) -> float:
    assert r.state_dict is not None
    model = Decoder(ModelConfig())
    model.load_state_dict(r.state_dict)
    with torch.no_grad():
        return float(sum(float(cross_entropy(model(x[s : s + 256]), y[s : s + 256])) * y[s : s + 256].numel()
                         for s in range(0, len(x), 256)) / y.numel())  # fmt: skip


@experiment(
    "ch08.recipes",
    config=Recipes(),
    seeds=SEEDS,
    quick={"train.steps": 10, "train.warmup": 2, "train.eval_every": 5, "rates": (2e-2, 6e-2)},
)
def recipes(ctx: RunContext) -> Outcome:
    """FP32; BF16 autocast with FP32 master weights and with BF16-stored weights ("pure"); FP16 autocast
    without and with a dynamic loss scale; each at its own best rate of a ladder, three seeds; the
    autograd path for all, autocast around train_many."""
    cfg: Recipes = ctx.config
    corpus = load_corpus()
    mcfg = ModelConfig()
    xv, yv = val_windows(corpus.val, mcfg.context)
    S = len(ctx.seeds)
    m: dict[str, Measurement] = {
        "ch08.recipes.steps": exact(cfg.train.steps, "steps", "steps of each recipe run"),
        "ch08.recipes.warmup": exact(cfg.train.warmup, "steps", "their warmup"),
        "ch08.recipes.lr_min": exact(cfg.rates[0], "", "lowest rate of the starting ladder", 1),
        "ch08.recipes.lr_max": exact(cfg.rates[-1], "", "highest rate of the starting ladder", 1),
    }
    series: dict = {}
    finals: dict[str, np.ndarray] = {}
    for k, arm in enumerate(cfg.arms):
        cast = AUTOCAST[arm]
        dtype, moved = autocast_applies(cast)
        if cast != "fp32" and (dtype != cast.replace("fp", "float").replace("bf", "bfloat") or moved == 0):
            raise RuntimeError(f"autocast to {cast} does not apply: logits {dtype}, cast weight moved {moved}")
        base = recipe_config(arm, cfg.train)

        def train(rs: list[float], cast=cast, base=base, k=k) -> list[TrainResult]:
            runs = [replace(base, lr=r, seed=s) for r in rs for s in ctx.seeds]
            with recipe(cast):
                return train_many(mcfg, runs, corpus, workers=1, net="autograd",
                                  on_eval=progress(ctx, cfg.train, k / len(cfg.arms), 1 / len(cfg.arms)))  # fmt: skip

        rates, res = tuned(train, list(cfg.rates), S)
        R = len(rates)
        final = np.array([r.val_loss_final for r in res]).reshape(R, S)  # evaluated under the recipe
        fp32 = np.array([_fp32_val(r, xv, yv) for r in res]).reshape(R, S)  # the same weights in FP32
        i = best_rung(final)
        finals[arm] = final[i]
        val = np.array([r.curves["val_loss"] for r in res]).reshape(R, S, -1)
        series |= {f"{arm}_rates": rates, f"{arm}_final": final.tolist(), f"{arm}_fp32_eval": fp32.tolist(),
                   f"{arm}_best": i, f"{arm}_curve": val[i].tolist()}  # fmt: skip
        series["step"] = res[0].curves["step"]
        m |= arm_keys("ch08.recipes", arm, rates, final, res)
        what = f"{arm} at its best rate: its weights evaluated in FP32"
        m[f"ch08.recipes.{arm}.fp32_eval"] = _m(fp32[i], "nats", what)
        if arm == "fp16_scaled":  # a skipped step's gradient is zeroed: its norm is exactly 0
            skipped = [sum(g == 0 for g in r.step_grad_norms) for r in res[i * S : (i + 1) * S]]
            what = f"{arm} at its best rate: steps skipped on overflow"
            m[f"ch08.recipes.{arm}.skipped"] = _m(skipped, "steps", what, 2)
            m[f"ch08.recipes.{arm}.scale"] = exact(LOSS_SCALE, "", f"{arm}: the starting loss scale")
        if arm != "fp32":
            m[f"ch08.recipes.{arm}.dtype_ok"] = exact(1, "", f"{arm}: logits came out in {dtype} (checked)")
    if "bf16_pure" in finals and "bf16" in finals:  # the master copy's own effect: same compute, storage differs
        m["ch08.recipes.bf16_pure.minus_bf16"] = spread(
            finals["bf16_pure"] - finals["bf16"], "nats", "pure BF16 minus BF16 autocast (FP32 master), paired by seed"
        )
    for arm in cfg.arms[1:]:
        m[f"ch08.recipes.{arm}.minus_fp32"] = measured(
            finals[arm] - finals["fp32"], "nats", f"{arm} minus FP32, each at its best rate, paired by seed", 2
        )
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- time per step


@dataclass(frozen=True)
class Timing:
    steps: int = 25  # steps per timed call (after one untimed step)
    rounds: int = 10  # calls per recipe, the recipes interleaved
    resamples: int = 2000  # bootstrap resamples of the ratio of medians
    arms: tuple[str, ...] = RECIPES


def ratio_interval(a: np.ndarray, b: np.ndarray, resamples: int, seed: int = 8) -> tuple[float, float]:
    """95% bootstrap interval of median(a) / median(b), each resampled with replacement."""
    rng = np.random.default_rng(seed)
    ra = np.median(rng.choice(a, (resamples, len(a))), axis=1)
    rb = np.median(rng.choice(b, (resamples, len(b))), axis=1)
    lo, hi = np.percentile(ra / rb, [2.5, 97.5])
    return float(lo), float(hi)


@experiment("ch08.timing", config=Timing(), seeds=(0,), quick={"steps": 4, "rounds": 2})
def timing(ctx: RunContext) -> Outcome:
    """Time per training step of one Decoder on the autograd path in each recipe, on this CPU, the recipes
    interleaved (A B C A B C ...), median over every timed step."""
    cfg: Timing = ctx.config
    corpus = load_corpus()
    times: dict[str, list[float]] = {a: [] for a in cfg.arms}
    run = TrainConfig(steps=cfg.steps + 1, eval_every=10_000, seed=ctx.seeds[0])

    for q in range(cfg.rounds):
        for arm in cfg.arms:
            stamps: list[float] = []

            def tick(at: Step, stamps=stamps) -> bool:
                stamps.append(time.perf_counter())
                return False

            with recipe(AUTOCAST[arm]):
                train_many(ModelConfig(), [recipe_config(arm, run)], corpus, workers=1, threads=1, net="autograd",
                           on_step=tick)  # fmt: skip
            # stamps[0] is before the first step, the last after the final evaluation: time steps 2..n-1
            times[arm] += list(np.diff(stamps[1:-1]))
        ctx.report_progress((q + 1) / cfg.rounds, f"round {q + 1}")
    med = {a: statistics.median(v) * 1e3 for a, v in times.items()}
    m: dict[str, Measurement] = {
        "ch08.timing.rounds": exact(cfg.rounds, "", "timed calls per recipe, interleaved"),
        "ch08.timing.steps": exact(len(times["fp32"]), "steps", "timed steps per recipe"),
    }
    for a, v in times.items():
        q1, q3 = np.percentile(np.array(v) * 1e3, [25, 75])
        m[f"ch08.timing.{a}.ms"] = exact(med[a], "ms", f"{a}: median time per step, this CPU, one thread", 3)
        m[f"ch08.timing.{a}.iqr"] = exact(q3 - q1, "ms", f"{a}: interquartile range of the step times", 2)
        if a != "fp32":
            m[f"ch08.timing.{a}.over_fp32"] = exact(med[a] / med["fp32"], "", f"{a} over FP32 median step time", 2)
            lo, hi = ratio_interval(np.array(v), np.array(times["fp32"]), cfg.resamples)
            m[f"ch08.timing.{a}.over_fp32_lo"] = exact(lo, "", f"{a} over FP32: bootstrap 2.5th percentile", 2)
            m[f"ch08.timing.{a}.over_fp32_hi"] = exact(hi, "", f"{a} over FP32: bootstrap 97.5th percentile", 2)
    return Outcome(measurements=m, series={f"ms_{a}": (np.array(v) * 1e3).tolist() for a, v in times.items()})
