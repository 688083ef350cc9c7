"""Chapter 9, training memory: the numbers deck 09 shows.

- ``ch09.states``: the bytes per parameter of weights, gradients and each optimiser's state, read from
  the tensors after one step (float32, and a mixed-precision layout: bfloat16 weights and gradients with a
  float32 master copy), against model/memory.py's count and ZeRO's 16Ψ;
- ``ch09.activations``: each layer's saved tensors (saved-tensor hooks, as deck 03 counts them) over
  sequence lengths and batch sizes, fitted to Korthikanti's form and compared term by term with the
  formula adapted to the Decoder (below);
- ``ch09.checkpoint``: full and selective activation checkpointing on an 8-layer Decoder: the bytes held
  from the forward pass to the backward pass, the FLOPs and the time of a step, against the formula;
- ``ch09.calculator``: model/memory.py's answers for the shapes the deck quotes (LLaMA-7B, the toys).

Korthikanti et al.'s count (§4), adapted to the Decoder term by term (v bytes a value: 4 in float32,
2 in bfloat16; s the context, b the batch, h = d_model, a heads):

    their term (16-bit, with dropout)          the Decoder (no dropout, GELU MLP of width 4h)
    attention: input, q, k, v, output 10sbh    the same five tensors: 5v sbh
    attention dropout mask            1sbh     no dropout: 0
    softmax output                    2as^2b   the same: v as^2 b
    softmax dropout mask and output   3as^2b   no dropout: 0
    MLP input, GELU input, output     18sbh    the same, 1 + 4 + 4: 9v sbh
    MLP dropout mask                  1sbh     no dropout: 0
    the two norms' inputs             4sbh     the same: 2v sbh
    (not counted)                              the norms' mean and 1/std, 2 + 2 per token: 4v sb

so a Decoder layer keeps 16v sbh + v as^2 b + 4v sb bytes: 32sbh + 2as^2b + 8sb in bfloat16 against their
34sbh + 5as^2b. Selective recomputation drops the as^2 b term; full recomputation keeps each layer's
input, v sbh (their 2sbh).

Checkpointing is applied from outside the Decoder: full wraps each block's forward in
``torch.utils.checkpoint.checkpoint``; selective computes q, k and v with the block's own projections
and checkpoints only the scores, mask, softmax and the product with v (what Korthikanti et al.
recompute), then the output projection. Both are checked against the plain Decoder: same loss, same
gradients.
"""

from __future__ import annotations

import ctypes
import gc
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

from model import memory as mm
from model.decoder import Block, Decoder, ModelConfig, num_params
from model.experiments.ch03_backprop import Saved, saved_tensors
from model.experiments.common import exact
from model.experiments.registry import Measurement, Outcome, RunContext, experiment

SEEDS = (0, 1, 2)
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def _batch(cfg: ModelConfig, B: int, T: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, cfg.vocab, (B, T), generator=g), torch.randint(0, cfg.vocab, (B, T), generator=g)


# --------------------------------------------------------------------------- bytes per parameter


def _storage_bytes(tensors) -> int:
    """Bytes of the distinct storages behind ``tensors`` (a tied matrix counts once)."""
    seen: dict[int, int] = {}
    for t in tensors:
        if isinstance(t, torch.Tensor):
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(seen.values())


def _optimizer(name: str, params: Sequence[torch.Tensor]) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1)
    return torch.optim.SGD(params, lr=1e-2, momentum=0.9 if name == "momentum" else 0.0)


@dataclass(frozen=True)
class StateBytes:
    """Bytes held between two steps, by part, and the step counters apart."""

    params: int
    grads: int
    optimiser: int  # master copy (mixed) and the moments
    counters: int  # the optimiser's per-tensor step counts (AdamW's scalar `step`)
    n_params: int


def state_bytes(cfg: ModelConfig, precision: str, optimiser: str, seed: int) -> StateBytes:
    """One training step of the Decoder with ``optimiser``, then the bytes it keeps, read from the tensors.
    Mixed precision: bfloat16 weights and gradients; the optimiser steps a float32 master copy, whose float32
    gradient exists only during the step (it is dropped after it, as mixed-precision trainers do)."""
    torch.manual_seed(seed)
    model = Decoder(cfg)
    x, y = _batch(cfg, 8, cfg.context, seed)
    if precision == "fp32":
        params = list(model.parameters())
        opt = _optimizer(optimiser, params)
        model.loss(x, y).backward()
        opt.step()
        masters: list[torch.Tensor] = []
    else:
        model = model.to(torch.bfloat16)
        params = list(model.parameters())
        masters = [p.detach().float().clone().requires_grad_(True) for p in params]
        opt = _optimizer(optimiser, masters)
        model.loss(x, y).backward()
        for p, m in zip(params, masters, strict=True):
            m.grad = p.grad.float() if p.grad is not None else None
        opt.step()
        with torch.no_grad():
            for p, m in zip(params, masters, strict=True):
                p.copy_(m)
                m.grad = None
    moments: list[torch.Tensor] = []
    counters: list[torch.Tensor] = []
    for state in opt.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                (counters if key == "step" else moments).append(value)
    return StateBytes(
        params=_storage_bytes(params),
        grads=_storage_bytes(p.grad for p in params),
        optimiser=_storage_bytes(masters) + _storage_bytes(moments),
        counters=_storage_bytes(counters),
        n_params=num_params(model),
    )


@dataclass(frozen=True)
class States:
    models: dict[str, ModelConfig] = field(default_factory=lambda: {
        "toy": ModelConfig(),  # the default Decoder
        "wide": ModelConfig(d_model=64, n_heads=4, context=64, n_layers=4),
    })  # fmt: skip
    optimisers: tuple[str, ...] = ("sgd", "momentum", "adam")
    precisions: tuple[str, ...] = ("fp32", "mixed")


@experiment("ch09.states", config=States(), seeds=SEEDS)
def states(ctx: RunContext) -> Outcome:
    """Bytes per parameter of weights, gradients and optimiser states, read from the tensors after a step."""
    cfg: States = ctx.config
    m: dict[str, Measurement] = {}
    mismatch = 0.0
    table = []
    for name, model_cfg in cfg.models.items():
        for precision in cfg.precisions:
            for opt in cfg.optimisers:
                per_seed = [state_bytes(model_cfg, precision, opt, s) for s in ctx.seeds]
                if len({sb for sb in per_seed}) != 1:
                    raise AssertionError(f"{name} {precision} {opt}: the bytes differ between seeds")
                sb = per_seed[0]
                n = sb.n_params
                got = (sb.params / n, sb.grads / n, sb.optimiser / n)
                want = mm.state_bytes_per_param(precision, opt)
                mismatch = max(mismatch, max(abs(g - w) for g, w in zip(got, want, strict=True)))
                k = f"ch09.states.{name}.{precision}.{opt}"
                m[f"{k}.params"] = exact(got[0], "bytes per parameter", f"{name}, {precision}, {opt}: weights", 3)
                m[f"{k}.grads"] = exact(got[1], "bytes per parameter", f"{name}, {precision}, {opt}: gradients", 3)
                what = f"{name}, {precision}, {opt}: optimiser states (master copy and moments)"
                m[f"{k}.opt"] = exact(got[2], "bytes per parameter", what, 3)
                m[f"{k}.total"] = exact(sum(got), "bytes per parameter",
                                        f"{name}, {precision}, {opt}: weights, gradients and states", 3)  # fmt: skip
                m[f"{k}.counters"] = exact(sb.counters, "bytes",
                                           f"{name}, {precision}, {opt}: the optimiser's step counters")  # fmt: skip
                m[f"{k}.with_counters"] = exact(
                    sum(got) + sb.counters / n, "bytes per parameter", f"{name}, {precision}, {opt}: with them", 4
                )
                table.append([sb.params / n, sb.grads / n, sb.optimiser / n, sb.counters / n])
        m[f"ch09.states.{name}.params"] = exact(per_seed[0].n_params, "parameters", f"parameters of the {name} model")
    what = "largest |measured - model/memory.py| over every model, precision, optimiser"
    m["ch09.states.mismatch"] = exact(mismatch, "bytes per parameter", what)
    m["ch09.states.seeds"] = exact(len(ctx.seeds), "seeds", "seeds each count was taken on (all equal)")
    # bytes: per (model, precision, optimiser) in States' order, [weights, gradients, states, counters] a parameter
    return Outcome(measurements=m, series={"bytes": table})


# --------------------------------------------------------------------------- activations per layer


PARTS = ("norms: inputs", "norms: mean, 1/std", "attention: input, q, k, v, output", "attention matrix",
         "MLP: input, GELU in and out")  # fmt: skip


def layer_part(s: Saved) -> str:
    """The adapted formula's term a tensor saved inside a block belongs to."""
    if s.op == "layer_norm":
        return "norms: inputs" if s.shape[-1] > 1 else "norms: mean, 1/std"
    if s.module.endswith(".attn"):
        return "attention matrix" if s.op == "softmax" else "attention: input, q, k, v, output"
    if s.module.endswith(".mlp"):
        return "MLP: input, GELU in and out"
    raise AssertionError(f"a tensor saved in {s.module} by {s.op} belongs to no term")


def adapted_terms(v: int, s: int, b: int, h: int, a: int) -> dict[str, float]:
    """The formula adapted to the Decoder (module docstring): bytes per layer by term."""
    return {
        "norms: inputs": 2 * v * s * b * h,
        "norms: mean, 1/std": 4 * v * s * b,
        "attention: input, q, k, v, output": 5 * v * s * b * h,
        "attention matrix": v * a * s * s * b,
        "MLP: input, GELU in and out": 9 * v * s * b * h,
    }


def per_layer(found: list[Saved], layers: int) -> list[dict[str, int]]:
    out = [{p: 0 for p in PARTS} for _ in range(layers)]
    for s in found:
        if s.module.startswith("blocks."):
            out[int(s.module.split(".")[1])][layer_part(s)] += s.nbytes
    return out


@dataclass(frozen=True)
class Activations:
    layers: int = 3
    widths: tuple[tuple[int, int], ...] = ((16, 2), (32, 2), (32, 4))  # (d_model h, heads a): the default first
    seqs: tuple[int, ...] = (16, 32, 64, 128)
    batches: tuple[int, ...] = (1, 4, 16)
    precisions: tuple[str, ...] = ("fp32", "bf16")


@experiment("ch09.activations", config=Activations(), seeds=SEEDS, quick={"seqs": (16, 32), "batches": (1, 4)})
def activations(ctx: RunContext) -> Outcome:
    """Each layer's saved bytes over width, heads, sequence length and batch (hooks), fitted to
    x·sbh + y·as²b + z·sb and compared term by term with Korthikanti's formula adapted to the Decoder."""
    cfg: Activations = ctx.config
    L = cfg.layers
    m: dict[str, Measurement] = {}
    series: dict = {"seqs": list(cfg.seqs), "batches": list(cfg.batches)}
    worst_term, layers_differ, seeds_differ, counted = 0.0, 0, 0, 0
    for precision in cfg.precisions:
        v = torch.finfo(DTYPES[precision]).bits // 8
        rows, measured_bytes, shapes = [], [], []
        for h, a in cfg.widths:
            for s in cfg.seqs:
                model_cfg = ModelConfig(d_model=h, n_heads=a, context=s, n_layers=L)
                for b in cfg.batches:
                    runs = []
                    for seed in ctx.seeds:
                        torch.manual_seed(seed)
                        model = Decoder(model_cfg).to(DTYPES[precision])
                        runs.append(per_layer(saved_tensors(model, *_batch(model_cfg, b, s, seed)), L))
                    seeds_differ += sum(r != runs[0] for r in runs)
                    layers = runs[0]
                    layers_differ += sum(layer != layers[0] for layer in layers)
                    want = adapted_terms(v, s, b, h, a)
                    worst_term = max(worst_term, max(abs(layers[0][p] - want[p]) for p in PARTS))
                    counted += 1
                    rows.append([s * b * h, a * s * s * b, s * b])
                    shapes.append([h, a, s, b])
                    measured_bytes.append(sum(layers[0].values()))
        X, y = np.array(rows, dtype=np.float64), np.array(measured_bytes, dtype=np.float64)
        coef, *_ = np.linalg.lstsq(X, y)
        k = f"ch09.act.{precision}"
        m[f"{k}.sbh"] = exact(coef[0], "bytes per s·b·h", f"{precision}: fitted sbh coefficient per layer", 4)
        m[f"{k}.as2b"] = exact(coef[1], "bytes per a·s²·b", f"{precision}: fitted as²b coefficient per layer", 4)
        m[f"{k}.sb"] = exact(coef[2], "bytes per s·b", f"{precision}: fitted sb coefficient (norm statistics)", 4)
        resid = float(np.abs(X @ coef - y).max() / y.max())
        m[f"{k}.fit_resid"] = exact(resid, "", f"{precision}: largest |fit - measured| over the largest count", 2)
        if precision == "bf16":  # the formula as published (16-bit, dropout) over the Decoder's bf16 layer
            h, a = cfg.widths[0]
            for s in (cfg.seqs[0], cfg.seqs[-1]):
                decoder = 16 * v * s * h + v * a * s * s + 4 * v * s  # b = 1
                theirs = s * h * (34 + 5 * a * s / h)
                m[f"ch09.act.korth_over.s{s}"] = exact(theirs / decoder, "", f"sbh(34 + 5as/h) over the Decoder's "
                                                       f"bf16 layer, h = {h}, a = {a}, s = {s}", 3)  # fmt: skip
        series[f"{precision}_bytes"] = measured_bytes
        series[f"{precision}_rows"] = rows  # [sbh, as²b, sb] of each count
        series["shapes"] = shapes  # [h, a, s, b] of each count, the same for both precisions
    m |= {
        "ch09.act.worst_term": exact(
            worst_term, "bytes", "largest |hooks - adapted formula| over every term, shape and precision"
        ),  # fmt: skip
        "ch09.act.layers_differ": exact(layers_differ, "", "layers whose count differs from the first layer's"),
        "ch09.act.seeds_differ": exact(seeds_differ, "", "counts that differ between seeds"),
        "ch09.act.layers": exact(L, "layers", "layers of each counted Decoder"),
        "ch09.act.shapes": exact(counted // len(cfg.precisions), "shapes", "(h, a, s, b) settings counted"),
        "ch09.act.widths": exact(len(cfg.widths), "", "(width, heads) pairs counted"),
        "ch09.act.seq_min": exact(cfg.seqs[0], "characters", "shortest sequence counted"),
        "ch09.act.seq_max": exact(cfg.seqs[-1], "characters", "longest sequence counted"),
        "ch09.act.batch_max": exact(cfg.batches[-1], "windows", "largest batch counted"),
    }
    return Outcome(measurements=m, series=series)


# --------------------------------------------------------------------------- checkpointing


class _Core(torch.nn.Module):
    """Attention's scores, mask, softmax and product with v: what selective recomputation recomputes."""

    def __init__(self, scale: float, mask: torch.Tensor):
        super().__init__()
        self.scale = scale
        self.mask = mask

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        T = q.shape[-2]
        att = (q @ k.transpose(-2, -1)) * self.scale  # (B, H, T, T)
        att = F.softmax(att.masked_fill(self.mask[:T, :T], float("-inf")), dim=-1)
        return att @ v  # (B, H, T, Dh)


def checkpointed(model: Decoder, mode: str) -> Decoder:
    """``model`` with activation checkpointing applied from outside, in place: "full" recomputes each
    block in the backward pass, "selective" each attention's core; "none" leaves it alone. No document
    masks (the default run has none)."""
    blocks = [b for b in model.blocks if isinstance(b, Block)]
    if mode == "full":
        for block in blocks:

            def recomputed(x: torch.Tensor, doc: torch.Tensor | None = None, inner=block.forward) -> torch.Tensor:
                return checkpoint(inner, x, doc, use_reentrant=False)

            block.forward = recomputed  # type: ignore[method-assign]
    elif mode == "selective":
        for block in blocks:
            attn = block.attn
            core = _Core(attn.scale, attn.mask)

            def forward(x, doc=None, attn=attn, core=core):
                if doc is not None:
                    raise ValueError("selective checkpointing here has no document mask")
                B, T, D = x.shape
                H = attn.n_heads
                q, k, v = (w(x).view(B, T, H, D // H).transpose(1, 2) for w in (attn.w_q, attn.w_k, attn.w_v))
                y = checkpoint(core, q, k, v, use_reentrant=False)
                return attn.w_o(y.transpose(1, 2).reshape(B, T, D))

            attn.forward = forward  # type: ignore[method-assign]
    elif mode != "none":
        raise ValueError(f"checkpointing must be none, selective or full, got {mode!r}")
    return model


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]  # fmt: skip


def _malloc_in_use() -> int:
    """Bytes the C allocator has handed out and not taken back (glibc's mallinfo2: heap plus mmap)."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return int(info.uordblks + info.hblkhd)


def held_after_forward(model: Decoder, x: torch.Tensor, y: torch.Tensor) -> int:
    """Bytes allocated by the forward pass and still held when it returns (what waits for the
    backward pass), by the C allocator's count; then the backward pass runs and frees them."""
    model.zero_grad(set_to_none=True)
    gc.collect()
    before = _malloc_in_use()
    loss = model.loss(x, y)
    gc.collect()
    held = _malloc_in_use() - before
    loss.backward()
    del loss
    model.zero_grad(set_to_none=True)
    return held


def formula_layer(mode: str, v: int, s: int, b: int, h: int, a: int) -> float:
    """Adapted formula per layer under each mode (module docstring)."""
    terms = adapted_terms(v, s, b, h, a)
    if mode == "full":
        return v * s * b * h
    if mode == "selective":
        return sum(terms.values()) - terms["attention matrix"]
    return sum(terms.values())


def recompute_flops(mode: str, cfg: ModelConfig, B: int) -> int:
    """Matrix-product FLOPs the backward pass recomputes, by hand (2 m k n a product, scores counted over the
    full T x T square as the counter does). torch's checkpoint stops recomputing as soon as it has every
    tensor the backward pass needs, so a region's last product, whose output nothing inside saved, is not
    run again: full recomputes q, k, v, o, the scores, the values and the MLP's first product, not its
    second; selective recomputes the scores, not the product with v."""
    D, T, L = cfg.d_model, cfg.context, cfg.n_layers
    per_token = {"none": 0, "selective": 2 * T * D, "full": 4 * 2 * D * D + 2 * 2 * T * D + 2 * D * cfg.mlp_ratio * D}
    return L * B * T * per_token[mode]


def layers_forward_flops(cfg: ModelConfig, B: int) -> int:
    """Matrix-product FLOPs of one forward pass through every layer (the head left out)."""
    D, T, F_ = cfg.d_model, cfg.context, cfg.mlp_ratio * cfg.d_model
    return cfg.n_layers * B * T * (4 * 2 * D * D + 2 * 2 * T * D + 2 * 2 * D * F_)


@dataclass(frozen=True)
class Checkpoint:
    model: ModelConfig = field(default_factory=lambda: ModelConfig(d_model=64, n_heads=4, context=128, n_layers=8))
    batch: int = 16
    modes: tuple[str, ...] = ("none", "selective", "full")
    repeats: int = 12  # timed steps per mode and seed, the modes interleaved
    memory_repeats: int = 3
    threads: int = 1


def _step_time(model: Decoder, x: torch.Tensor, y: torch.Tensor) -> float:
    model.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    model.loss(x, y).backward()
    return time.perf_counter() - t0


@experiment("ch09.checkpoint", config=Checkpoint(), seeds=SEEDS,
            quick={"model": ModelConfig(d_model=16, n_heads=2, context=32, n_layers=2), "batch": 4, "repeats": 2,
                   "memory_repeats": 1})  # fmt: skip
def checkpointing(ctx: RunContext) -> Outcome:
    """Full and selective activation checkpointing on an 8-layer Decoder: bytes held for the backward pass,
    FLOPs and time per step (CPU, this machine), against the adapted formula."""
    cfg: Checkpoint = ctx.config
    mc = cfg.model
    s, b, h, a, L = mc.context, cfg.batch, mc.d_model, mc.n_heads, mc.n_layers
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        models = {}
        for seed in ctx.seeds:
            for mode in cfg.modes:
                torch.manual_seed(seed)
                models[(seed, mode)] = checkpointed(Decoder(mc), mode)
        batches = {seed: _batch(mc, b, s, seed) for seed in ctx.seeds}
        # the same loss and gradients in every mode
        grad_diff = loss_diff = 0.0
        for seed in ctx.seeds:
            ref = None
            for mode in cfg.modes:
                model = models[(seed, mode)]
                model.zero_grad(set_to_none=True)
                loss = model.loss(*batches[seed])
                loss.backward()
                grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
                if ref is None:
                    ref = (float(loss.detach()), grads)
                    continue
                loss_diff = max(loss_diff, abs(float(loss.detach()) - ref[0]))
                grad_diff = max(grad_diff, max(float((g - r).abs().max()) for g, r in zip(grads, ref[1], strict=True)))
        ctx.report_progress(0.1, "bytes held")
        # outside the blocks (embedding ids, final norm, head, loss): the hooks' count on the plain model
        outside = sum(t.nbytes for t in saved_tensors(models[(ctx.seeds[0], "none")], *batches[ctx.seeds[0]])
                      if not t.module.startswith("blocks."))  # fmt: skip
        held: dict[str, list[int]] = {mode: [] for mode in cfg.modes}
        for seed in ctx.seeds:
            held_after_forward(models[(seed, "none")], *batches[seed])  # warm the allocator and the thread pool
            for _ in range(cfg.memory_repeats):
                for mode in cfg.modes:
                    held[mode].append(held_after_forward(models[(seed, mode)], *batches[seed]))
        # FLOPs of a step, and the same with torch's early stop turned off (the ablation)
        flops: dict[str, int] = {}
        flops_full_recompute: dict[str, int] = {}
        for mode in cfg.modes:
            model = models[(ctx.seeds[0], mode)]
            for early, out in ((True, flops), (False, flops_full_recompute)):
                model.zero_grad(set_to_none=True)
                with set_checkpoint_early_stop(early), FlopCounterMode(display=False) as counter:
                    model.loss(*batches[ctx.seeds[0]]).backward()
                out[mode] = counter.get_total_flops()
        ctx.report_progress(0.3, "timing")
        times: dict[str, list[float]] = {mode: [] for mode in cfg.modes}
        ratios: dict[str, list[float]] = {mode: [] for mode in cfg.modes}
        for seed in ctx.seeds:
            for mode in cfg.modes:
                _step_time(models[(seed, mode)], *batches[seed])  # warm-up
            for r in range(cfg.repeats):
                order = cfg.modes[r % len(cfg.modes) :] + cfg.modes[: r % len(cfg.modes)]  # rotate: A B C, B C A, ...
                one = {mode: _step_time(models[(seed, mode)], *batches[seed]) for mode in order}
                for mode in cfg.modes:
                    times[mode].append(one[mode])
                    ratios[mode].append(one[mode] / one["none"])
            ctx.report_progress(0.3 + 0.7 * (ctx.seeds.index(seed) + 1) / len(ctx.seeds), f"timed seed {seed}")
    finally:
        torch.set_num_threads(threads)
    v = 4
    m: dict[str, Measurement] = {
        "ch09.ckpt.layers": exact(L, "layers", "layers of the checkpointed Decoder"),
        "ch09.ckpt.d_model": exact(h, "", "its width"),
        "ch09.ckpt.heads": exact(a, "heads", "its heads"),
        "ch09.ckpt.seq": exact(s, "characters", "its context (every window full)"),
        "ch09.ckpt.batch": exact(b, "windows", "batch of the measured steps"),
        "ch09.ckpt.params": exact(num_params(models[(ctx.seeds[0], "none")]), "parameters", "its parameters"),
        "ch09.ckpt.repeats": exact(cfg.repeats * len(ctx.seeds), "steps", "timed steps per mode (all seeds)"),
        "ch09.ckpt.threads": exact(cfg.threads, "threads", "torch threads while timing"),
        "ch09.ckpt.grad_diff": exact(grad_diff, "", "largest |gradient difference| from the plain Decoder", 2),
        "ch09.ckpt.loss_diff": exact(loss_diff, "nats", "largest |loss difference| from the plain Decoder", 2),
        "ch09.ckpt.outside_mb": exact(outside / 1e6, "MB", "saved outside the blocks (ids, final norm, head, loss)", 3),
    }
    med = {mode: float(np.median(times[mode])) for mode in cfg.modes}
    for mode in cfg.modes:
        want = L * formula_layer(mode, v, s, b, h, a) + outside
        got = float(np.median(held[mode]))
        what = f"{mode}: bytes held after the forward pass (C allocator, median)"
        m[f"ch09.ckpt.{mode}.held_mb"] = exact(got / 1e6, "MB", what, 3)
        spread = (max(held[mode]) - min(held[mode])) / 1e6
        m[f"ch09.ckpt.{mode}.held_spread"] = exact(spread, "MB", f"{mode}: range of that count over repeats, seeds", 2)
        m[f"ch09.ckpt.{mode}.formula_mb"] = exact(want / 1e6, "MB", f"{mode}: the adapted formula, all layers, "
                                                  "plus the part outside the blocks", 3)  # fmt: skip
        m[f"ch09.ckpt.{mode}.held_vs_formula"] = exact(got / want - 1, "", f"{mode}: held over formula, minus one", 2)
        m[f"ch09.ckpt.{mode}.layer_kb"] = exact(formula_layer(mode, v, s, b, h, a) / 1e3, "kB",
                                                f"{mode}: the adapted formula per layer", 4)  # fmt: skip
        m[f"ch09.ckpt.{mode}.gflops"] = exact(flops[mode] / 1e9, "GFLOPs", f"{mode}: FLOPs of a step (counter)", 4)
        m[f"ch09.ckpt.{mode}.ms"] = exact(1e3 * med[mode], "ms", f"{mode}: median time of forward + backward", 3)
        if mode != "none":
            m[f"ch09.ckpt.{mode}.saved"] = exact(1 - got / float(np.median(held["none"])), "",
                                                 f"{mode}: share of the held bytes saved against none", 2)  # fmt: skip
            m[f"ch09.ckpt.{mode}.extra_flops"] = exact(flops[mode] / flops["none"] - 1, "",
                                                       f"{mode}: extra FLOPs against none", 2)  # fmt: skip
            hand = recompute_flops(mode, mc, b)
            m[f"ch09.ckpt.{mode}.hand_gflops"] = exact(hand / 1e9, "GFLOPs", f"{mode}: recomputed FLOPs by hand", 4)
            m[f"ch09.ckpt.{mode}.hand_diff"] = exact(flops[mode] - flops["none"] - hand, "FLOPs",
                                                     f"{mode}: counted extra FLOPs minus the hand count")  # fmt: skip
            m[f"ch09.ckpt.{mode}.no_early_stop"] = exact(
                flops_full_recompute[mode] / flops["none"] - 1,
                "",
                f"{mode}: extra FLOPs against none with torch's early stop turned off",
                2,
            )
            m[f"ch09.ckpt.{mode}.second_forward"] = exact(
                (flops[mode] - flops["none"]) / layers_forward_flops(mc, b),
                "",
                f"{mode}: extra FLOPs over a whole second forward pass of the layers",
                2,
            )
            q = np.percentile(ratios[mode], [25, 50, 75])
            m[f"ch09.ckpt.{mode}.extra_time"] = exact(q[1] - 1, "", f"{mode}: median extra time per step "
                                                      "against none (paired, same repeat)", 2)  # fmt: skip
            m[f"ch09.ckpt.{mode}.extra_time_q1"] = exact(q[0] - 1, "", f"{mode}: its lower quartile", 2)
            m[f"ch09.ckpt.{mode}.extra_time_q3"] = exact(q[2] - 1, "", f"{mode}: its upper quartile", 2)
    # every series in cfg.modes' order
    return Outcome(measurements=m, series={"held": [held[x] for x in cfg.modes],
                                           "formula": [L * formula_layer(x, v, s, b, h, a) + outside
                                                       for x in cfg.modes],
                                           "times": [times[x] for x in cfg.modes],
                                           "ratios": [ratios[x] for x in cfg.modes],
                                           "flops": [flops[x] for x in cfg.modes],
                                           "flops_no_early": [flops_full_recompute[x] for x in cfg.modes]})  # fmt: skip


# --------------------------------------------------------------------------- the calculator's numbers


@dataclass(frozen=True)
class Calculator:
    big: mm.Setup = mm.LLAMA_7B


@experiment("ch09.calculator", config=Calculator())
def calculator(ctx: RunContext) -> Outcome:
    """model/memory.py's answers for LLaMA-7B as built and as the formula assumes it (no measurement)."""
    su: mm.Setup = ctx.config.big
    m: dict[str, Measurement] = {}
    for name, setup in (("built", su), ("formula", mm.as_formula(su))):
        for mode in mm.CHECKPOINTING:
            one = replace(setup, checkpointing=mode)
            k, what = f"ch09.calc.{name}.{mode}", f"LLaMA-7B {name}: activations"
            layer, total = mm.layer_activation_bytes(one), mm.training_memory(one).activations
            m[f"{k}.layer_gb"] = exact(layer / mm.GB, "GB", f"{what} per layer, {mode}", 3)
            m[f"{k}.act_gb"] = exact(total / mm.GB, "GB", f"{what}, all layers, {mode}", 3)
        x, y = (sum(t[i] for t in mm.layer_terms(setup).values()) for i in (0, 1))
        m[f"ch09.calc.{name}.sbh"] = exact(x, "bytes per s·b·h", f"LLaMA-7B {name}: sbh coefficient", 4)
        m[f"ch09.calc.{name}.as2b"] = exact(y, "bytes per a·s²·b", f"LLaMA-7B {name}: as²b coefficient", 2)
    mem = mm.training_memory(su)
    m |= {
        "ch09.calc.params_b": exact(mem.n_params / 1e9, "billion", "LLaMA-7B's parameters, counted from its shape", 3),
        "ch09.calc.weights_gb": exact(mem.params / mm.GB, "GB", "its 16-bit weights", 3),
        "ch09.calc.grads_gb": exact(mem.grads / mm.GB, "GB", "its 16-bit gradients", 3),
        "ch09.calc.opt_gb": exact(mem.optimiser / mm.GB, "GB", "Adam's states: master copy and two moments", 3),
        "ch09.calc.states_gb": exact(mem.states / mm.GB, "GB", "model states, 16 bytes a parameter", 3),
        "ch09.calc.total_gb": exact(mem.total / mm.GB, "GB", "states plus one sequence's activations", 3),
        "ch09.calc.seq": exact(su.seq, "tokens", "the sequence of the preset"),
        "ch09.calc.full_total_gb": exact(
            mm.training_memory(replace(su, checkpointing="full")).total / mm.GB,
            "GB",
            "the same with full recomputation",
            3,
        ),  # fmt: skip
        "ch09.calc.zero3_64_gb": exact(
            mm.training_memory(replace(su, data_parallel=64, zero=3)).states / mm.GB,
            "GB",
            "model states per device under ZeRO-3 over 64 ranks",
            3,
        ),  # fmt: skip
        "ch09.calc.zero_ranks": exact(64, "ranks", "data-parallel ranks of that example"),
        "ch09.calc.b_for_states": exact(
            math.floor(mem.states / mem.activations),
            "sequences",
            "sequences whose activations fit in the model states' bytes",
        ),  # fmt: skip
    }
    return Outcome(measurements=m)
