"""Train many Decoders at once, as one stacked model.

M runs (seeds x settings, one architecture) become one model whose weights
are stacked along a leading M axis: every matmul is a batched matmul over the M
models, and the optimiser updates all M in a dozen kernels. Each run gets what
train() would give it: the same initial weights (torch.manual_seed(seed) then
Decoder(cfg)), the same batches (its own generator, the same draws), its own
learning rate, schedule, warmup, steps, clipping threshold, weight decay, betas
and eps.

    results = train_many(ModelConfig(), [TrainConfig(seed=s, lr=lr) for s in (0, 1, 2) for lr in lrs])

Layout: weights live in one (M, P) buffer `theta`, each row in FlatParams'
order (train.py); gradients and Adam's moments in (M, P) buffers beside it.
The optimiser is train.py's own update functions, with per-model scalars as
(M, 1) columns. The forward and backward passes are written out by hand (what
autograd would do, with fewer ops and no graph; tests hold them to float64
autograd on the Decoder for every config variant): the loss softmax is
computed once for loss and gradient, and the weight gradients are gathered
into the (M, P) buffer with one copy.

Per-model safety: clipping uses each model's own global norm; a model whose
loss or gradient stops being finite records the step (`diverged_at`) and its
weights are kept as they were at that step, while the others go on. A run with
fewer `steps` than the others stops the same way when it is done.

Speed (benchmarks/train_speed.py, 2 cores): 21 default runs, split into two
stacks trained side by side (train_many's default with 2 threads), go about
1,160-1,250 model-steps/s, 19-21% of the machine's float32 matmul peak and
3.2x the eager train() on both cores; one stack of 21 on 2 threads goes about
1,000-1,060. The rest is small-matrix overhead (K = 16 contractions, 16 x 16
attention tiles) and the elementwise work (GELU's erf, softmax's exp: about
1.5 ns an element here) that any trainer of this model pays; torch.compile
of the stacked step ran no faster.

Symbols: M models, B batch, T time, N = B*T tokens per model, D d_model,
H heads, Dh = D/H, G = M*B*H attention tiles, V vocab, P parameters per model.
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from model.data import Corpus, load_corpus, val_windows
from model.decoder import Decoder, ModelConfig
from model.train import (
    FlatParams,
    TrainConfig,
    TrainResult,
    _config_dict,
    adam_coefficients,
    adam_update_,
    keep_freed_memory,
    lr_at,
    sgd_update_,
)

BATCH_DRAWS = 250  # steps of window starts drawn at once per model (same numbers as one draw per step)
EVAL_CHUNK = 256  # validation windows per forward pass in evaluation (bounds memory at large M)


# -----------------------------------------------------------------------------
# the stacked network, forward and backward
#
# Activations are feature-major: (M, D, N), one column per token. Every matmul
# then writes N = 512 columns (MKL runs (rows x 16) @ (16 x 512) well and
# (512 x 16) @ (16 x 64) less well), and the norms reduce over dim 1, which
# PyTorch vectorises along the tokens instead of looping over 16-wide rows.
# Inside attention, q, k and v are (G, Dh, T) with G = M*B*H for the same
# reason: T = 16 output columns rather than Dh = 8.


def _norm(x: torch.Tensor, kind: str, eps: float):
    """LayerNorm or RMSNorm over dim 1 of (.., D, ..), no gain or bias: (y, cache)."""
    if kind == "layer":
        xc = x - x.mean(1, keepdim=True)
        var = (xc * xc).mean(1, keepdim=True)  # (var_mean is slow along dim 1)
        rstd = torch.rsqrt(var + eps) + (var - var)  # var - var: NaN, not 0, if var overflows, as F.layer_norm
        y = xc.mul_(rstd)
    else:
        rstd = torch.rsqrt(x.pow(2).mean(1, keepdim=True) + eps)  # as Decoder's Norm computes it
        y = x * rstd
    return y, (y, rstd)


def _norm_backward(dy: torch.Tensor, cache, kind: str) -> torch.Tensor:
    # y = xc * rstd: dxc = rstd (dy - y mean(dy y)); LayerNorm's centring subtracts the mean once more
    y, rstd = cache
    dx = dy - y * (dy * y).mean(1, keepdim=True)
    if kind == "layer":
        dx -= dx.mean(1, keepdim=True)
    return dx.mul_(rstd)


def _exp_shifted_(logits: torch.Tensor, tgt: torch.Tensor):
    """The pieces of a softmax over dim 1 of logits (M, V, N), with a single exp
    pass, in place: logits becomes exp(logits - shift); returns shift, the sum
    of the exps over V and the shifted logit at the targets tgt (M, 1, N), each
    (M, 1, N). -log softmax(target) = log(sum) - tgt_logit, as log_softmax
    computes it; the exps over their sum are the softmax."""
    shift = logits.amax(1, keepdim=True)  # for range: the largest exp is 1
    tgt_logit = logits.sub_(shift).gather(1, tgt)
    return shift, logits.exp_().sum(1, keepdim=True), tgt_logit


class StackedDecoder:
    """The Decoder's forward and backward passes over M stacked models.

    `theta` and `grad` are (M, P) buffers in FlatParams' layout; `w(name)`
    is an (M, *shape) view of theta. The backward pass writes all of `grad`."""

    def __init__(self, cfg: ModelConfig, layout: FlatParams, theta: torch.Tensor, grad: torch.Tensor):
        self.cfg = cfg
        self.layout = layout
        self.theta = theta
        self.grad = grad
        self.M = theta.shape[0]
        T = cfg.context
        self.mask_bias = torch.zeros(T, T).masked_fill_(torch.ones(T, T, dtype=torch.bool).triu_(1), float("-inf"))
        self.grad_names = [n for n in layout.names if ".attn.w_k." not in n and ".attn.w_v." not in n]
        self.weight_grads: dict[str, torch.Tensor] = {}  # filled by the backward pass, emptied into `grad`

    def w(self, name: str, rows: int | None = None) -> torch.Tensor:
        """(M, *shape) view of a weight; rows: several adjacent (., D) matrices as one (rows, D)."""
        o, shape = self.layout.offsets[name], self.layout.shapes[name]
        if rows is not None:
            shape = (rows, shape[1])
        return self.theta[:, o : o + math.prod(shape)].view(self.M, *shape)

    def _head(self) -> str:
        return "wte.weight" if self.cfg.tie_embeddings else "lm_head.weight"

    # -- forward ---------------------------------------------------------------

    def forward(self, idx: torch.Tensor, keep: bool = True):
        """Token ids (M, B, T) -> logits^T (M, V, N) and the cache for backward
        (None unless keep)."""
        cfg = self.cfg
        M, B, T = idx.shape
        D = cfg.d_model
        tok = idx.reshape(M, 1, B * T).expand(M, D, B * T)  # (M, D, N)
        x = torch.gather(self.w("wte.weight").transpose(1, 2), 2, tok)  # (M, D, N): columns of wte^T
        x.view(M, D, B, T).add_(self.w("wpe.weight")[:, :T].transpose(1, 2).unsqueeze(2))  # + wpe^T
        blocks = []
        for i in range(cfg.n_layers):
            x, cache = self._block(x, i, (B, T))
            blocks.append(cache)
        ln_f = None
        if cfg.norm == "pre":
            x, ln_f = _norm(x, cfg.norm_kind, cfg.norm_eps)
        logits = torch.bmm(self.w(self._head()), x)  # (M, V, N)
        if cfg.logit_mult != 1.0:
            logits.mul_(cfg.logit_mult)
        return logits, ((tok, (B, T), blocks, ln_f, x) if keep else None)

    def _block(self, x: torch.Tensor, i: int, bt):
        cfg = self.cfg
        kind, eps = cfg.norm_kind, cfg.norm_eps
        ln_1 = ln_2 = None
        if cfg.norm == "pre":
            h, ln_1 = _norm(x, kind, eps)
            x, attn = self._attn(h, x, i, bt)  # x + attn(ln_1(x))
            h, ln_2 = _norm(x, kind, eps)
            x, mlp = self._mlp(h, x, i)  # x + mlp(ln_2(x))
        elif cfg.norm == "post":
            x, attn = self._attn(x, x, i, bt)
            x, ln_1 = _norm(x, kind, eps)
            x, mlp = self._mlp(x, x, i)
            x, ln_2 = _norm(x, kind, eps)
        else:
            x, attn = self._attn(x, x, i, bt)
            x, mlp = self._mlp(x, x, i)
        return x, (ln_1, attn, ln_2, mlp)

    def _attn(self, h: torch.Tensor, resid: torch.Tensor, i: int, bt):
        """resid + attention(h), both (M, D, N)."""
        cfg = self.cfg
        M, (B, T) = self.M, bt
        D, H = cfg.d_model, cfg.n_heads
        Dh = D // H
        pre = f"blocks.{i}.attn"
        qkv = torch.bmm(self.w(f"{pre}.w_q.weight", rows=3 * D), h)  # (M, 3D, N): w_q, w_k, w_v are adjacent
        qkv = qkv.view(M, 3, H, Dh, B, T).permute(1, 0, 4, 2, 3, 5).reshape(3, M * B * H, Dh, T)  # a copy
        q, k, v = qkv[0], qkv[1], qkv[2]  # (G, Dh, T) each
        q_cache = k_cache = None
        if cfg.qk_norm:  # each head's query and key vectors, over Dh
            q, q_cache = _norm(q, cfg.norm_kind, cfg.norm_eps)
            k, k_cache = _norm(k, cfg.norm_kind, cfg.norm_eps)
        att = torch.baddbmm(self.mask_bias[:T, :T], q.transpose(1, 2), k, alpha=cfg.attn_scale)  # (G, T, T)
        att = torch.softmax(att, dim=-1)
        y = torch.bmm(v, att.transpose(1, 2))  # (G, Dh, T)
        y = y.view(M, B, H, Dh, T).permute(0, 2, 3, 1, 4).reshape(M, D, B * T)  # (M, D, N), a copy
        out = torch.baddbmm(resid, self.w(f"{pre}.w_o.weight"), y)  # (M, D, N)
        return out, (h, q, k, v, att, y, q_cache, k_cache, bt)

    def _mlp(self, h: torch.Tensor, resid: torch.Tensor, i: int):
        """resid + mlp(h), both (M, D, N)."""
        pre = f"blocks.{i}.mlp"
        u = torch.bmm(self.w(f"{pre}.w_in.weight"), h)  # (M, 4D, N)
        a = torch.nn.functional.gelu(u)
        out = torch.baddbmm(resid, self.w(f"{pre}.w_out.weight"), a)  # (M, D, N)
        return out, (h, u, a)

    # -- loss and backward -----------------------------------------------------

    def loss_and_grad(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Each model's mean cross-entropy (+ z-loss) on its batch (idx and
        targets (M, B, T)), as an (M,) tensor; the gradients go to `grad`."""
        cfg = self.cfg
        M, B, T = idx.shape
        N = B * T
        logits, (tok, _, blocks, ln_f, xf) = self.forward(idx, keep=True)
        tgt = targets.reshape(M, 1, N)
        # one exp pass serves the loss and its gradient (log_softmax and then exp would be two)
        shift, total, tgt_logit = _exp_shifted_(logits, tgt)  # logits becomes exp(logits - shift)
        log_sum = total.log()
        loss = (log_sum - tgt_logit).mean((1, 2))  # (M,): -log softmax at the targets
        factor = total.reciprocal_()  # turns logits' memory into the softmax
        if cfg.z_loss:
            lse = shift + log_sum  # (M, 1, N)
            loss = loss + cfg.z_loss * lse.pow(2).mean((1, 2))
            factor.mul_(1.0 + 2.0 * cfg.z_loss * lse)  # d(z lse^2)/dlogits = 2 z lse softmax
        probs = logits.mul_(factor)  # (M, V, N)
        dlogits = probs.scatter_add_(1, tgt, torch.full((1, 1, 1), -1.0).expand(M, 1, N))  # softmax - onehot
        scale = cfg.logit_mult / N  # the mean over tokens and the logit multiplier, folded into the matmuls
        head = self.w(self._head())  # (M, V, D)
        dhead = torch.baddbmm(head, dlogits, xf.transpose(1, 2), beta=0.0, alpha=scale)  # (M, V, D)
        dx = torch.baddbmm(xf, head.transpose(1, 2), dlogits, beta=0.0, alpha=scale)  # (M, D, N)
        if ln_f is not None:
            dx = _norm_backward(dx, ln_f, cfg.norm_kind)
        for i in reversed(range(cfg.n_layers)):
            dx = self._block_backward(dx, blocks[i], i)
        # embeddings: scatter token gradients into columns of wte^T; sum positions over the batch
        dwte = torch.zeros(M, cfg.d_model, cfg.vocab).scatter_add_(2, tok, dx).transpose(1, 2)  # (M, V, D)
        if cfg.tie_embeddings:
            dwte = dwte + dhead
        else:
            self.weight_grads["lm_head.weight"] = dhead
        self.weight_grads["wte.weight"] = dwte
        dwpe = dx.view(M, cfg.d_model, B, T).sum(2).transpose(1, 2)  # (M, T, D)
        if T < cfg.context:
            dwpe = torch.cat((dwpe, dwpe.new_zeros(M, cfg.context - T, cfg.d_model)), dim=1)
        self.weight_grads["wpe.weight"] = dwpe
        # one copy into the (M, P) buffer, in layout order (w_q's entry holds w_q, w_k, w_v)
        torch.cat([self.weight_grads.pop(n).reshape(M, -1) for n in self.grad_names], dim=1, out=self.grad)
        return loss

    def _block_backward(self, dx: torch.Tensor, cache, i: int) -> torch.Tensor:
        cfg = self.cfg
        ln_1, attn, ln_2, mlp = cache
        kind = cfg.norm_kind
        if cfg.norm == "pre":
            dx = dx + _norm_backward(self._mlp_backward(dx, mlp, i), ln_2, kind)
            dx = dx + _norm_backward(self._attn_backward(dx, attn, i), ln_1, kind)
        elif cfg.norm == "post":
            dx = _norm_backward(dx, ln_2, kind)
            dx = _norm_backward(dx + self._mlp_backward(dx, mlp, i), ln_1, kind)
            dx = dx + self._attn_backward(dx, attn, i)
        else:
            dx = dx + self._mlp_backward(dx, mlp, i)
            dx = dx + self._attn_backward(dx, attn, i)
        return dx

    def _mlp_backward(self, dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        h, u, a = cache
        pre = f"blocks.{i}.mlp"
        w_in, w_out = self.w(f"{pre}.w_in.weight"), self.w(f"{pre}.w_out.weight")
        self.weight_grads[f"{pre}.w_out.weight"] = torch.bmm(dout, a.transpose(1, 2))  # (M, D, 4D)
        da = torch.bmm(w_out.transpose(1, 2), dout)  # (M, 4D, N)
        du = torch.ops.aten.gelu_backward(da, u)
        self.weight_grads[f"{pre}.w_in.weight"] = torch.bmm(du, h.transpose(1, 2))  # (M, 4D, D)
        return torch.bmm(w_in.transpose(1, 2), du)  # (M, D, N)

    def _attn_backward(self, dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        cfg = self.cfg
        h, q, k, v, att, y, q_cache, k_cache, (B, T) = cache
        M, D, H = self.M, cfg.d_model, cfg.n_heads
        Dh = D // H
        G = M * B * H
        pre = f"blocks.{i}.attn"
        w_qkv = self.w(f"{pre}.w_q.weight", rows=3 * D)  # (M, 3D, D)
        self.weight_grads[f"{pre}.w_o.weight"] = torch.bmm(dout, y.transpose(1, 2))  # (M, D, D)
        dy = torch.bmm(self.w(f"{pre}.w_o.weight").transpose(1, 2), dout)  # (M, D, N)
        dy = dy.view(M, H, Dh, B, T).permute(0, 3, 1, 2, 4).reshape(G, Dh, T)  # a copy
        datt = torch.bmm(dy.transpose(1, 2), v)  # (G, T, T)
        dqkv = torch.empty(3, G, Dh, T)
        torch.bmm(dy, att, out=dqkv[2])  # dv = dy att
        datt = torch._softmax_backward_data(datt, att, -1, att.dtype)  # 0 where masked
        if cfg.qk_norm:
            dqkv[0] = _norm_backward(torch.bmm(k, datt.transpose(1, 2)).mul_(cfg.attn_scale), q_cache, cfg.norm_kind)
            dqkv[1] = _norm_backward(torch.bmm(q, datt).mul_(cfg.attn_scale), k_cache, cfg.norm_kind)
        else:
            torch.baddbmm(k, k, datt.transpose(1, 2), beta=0.0, alpha=cfg.attn_scale, out=dqkv[0])  # dq = k datt^T
            torch.baddbmm(q, q, datt, beta=0.0, alpha=cfg.attn_scale, out=dqkv[1])  # dk = q datt
        dqkv = dqkv.view(3, M, B, H, Dh, T).permute(1, 0, 3, 4, 2, 5).reshape(M, 3 * D, B * T)  # a copy
        self.weight_grads[f"{pre}.w_q.weight"] = torch.bmm(dqkv, h.transpose(1, 2))  # (M, 3D, D): w_q, w_k, w_v
        return torch.bmm(w_qkv.transpose(1, 2), dqkv)  # (M, D, N)

    @torch.no_grad()
    def evaluate(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Each model's mean loss (z-loss excluded) over the windows x, y (n, T),
        shared by all models: an (M,) tensor."""
        total = torch.zeros(self.M, dtype=torch.float64)
        for s in range(0, len(x), EVAL_CHUNK):
            xc, yc = x[s : s + EVAL_CHUNK], y[s : s + EVAL_CHUNK]
            logits, _ = self.forward(xc.expand(self.M, *xc.shape), keep=False)  # (M, V, n*T)
            tgt = yc.reshape(1, 1, -1).expand(self.M, 1, -1)
            _, exp_sum, tgt_logit = _exp_shifted_(logits, tgt)  # no log-probabilities written
            total += (exp_sum.log_() - tgt_logit).sum((1, 2), dtype=torch.float64)
        return total / y.numel()


# -----------------------------------------------------------------------------
# training


_INIT_LOCK = threading.Lock()  # torch.manual_seed seeds one global generator: one stack at a time


def _stack_init(cfg: ModelConfig, seeds: list[int]) -> tuple[FlatParams, torch.Tensor]:
    """Each run's initial weights exactly as train() makes them, stacked (M, P)."""
    rows, layout = [], None
    with _INIT_LOCK:
        for s in seeds:
            torch.manual_seed(s)
            layout = FlatParams(Decoder(cfg))
            rows.append(layout.data)
    return layout, torch.stack(rows)


class _Batches:
    """Each model's training windows: its own generator, drawing window starts
    as sample_batch does (B per step), BATCH_DRAWS steps at a time."""

    def __init__(self, data: torch.Tensor, runs: list[TrainConfig], batch: int, context: int):
        self.data, self.B, self.T = data, batch, context
        self.gens = [torch.Generator().manual_seed(r.data_seed_value) for r in runs]
        self.starts = None
        self.k = BATCH_DRAWS
        self.span = torch.arange(context + 1)

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.k == BATCH_DRAWS:
            high = len(self.data) - self.T
            draws = [torch.randint(0, high, (BATCH_DRAWS * self.B,), generator=g) for g in self.gens]
            self.starts = torch.stack(draws).view(len(self.gens), BATCH_DRAWS, self.B)  # (M, steps, B)
            self.k = 0
        starts = self.starts[:, self.k]  # (M, B)
        self.k += 1
        window = self.data[starts[..., None] + self.span]  # (M, B, T+1)
        return window[..., :-1], window[..., 1:]


def _check_runs(runs: list[TrainConfig]) -> None:
    if not runs:
        raise ValueError("train_many needs at least one run")
    for field in ("batch", "optimizer", "eval_every"):
        values = {getattr(r, field) for r in runs}
        if len(values) > 1:
            raise ValueError(f"stacked runs must share {field}; got {sorted(values)}")


def _schedules(runs: list[TrainConfig], steps: int, per_element: bool) -> tuple[dict, dict]:
    """The optimiser's per-step, per-model scalars, computed in float64 as
    train() computes them and cast to float32 once: (tables {name: (steps, M, 1)},
    constants {name: float}). A model past its own `steps` gets learning rate 0.
    per_element (µP): only the learning rates, in float64; the rest is computed
    per step against the per-element multipliers."""
    M = len(runs)
    lr = np.zeros((steps, M))
    for m, r in enumerate(runs):
        lr[: r.steps, m] = [lr_at(s, r) for s in range(r.steps)]
    lr64 = torch.from_numpy(lr)  # (steps, M)
    if per_element:
        return {"lr": lr64.unsqueeze(-1)}, {}
    hp = _hyperparameters(runs)
    if runs[0].optimizer in ("adamw", "adam"):
        t = torch.arange(1, steps + 1, dtype=torch.float64)[:, None]  # (steps, 1)
        decoupled = runs[0].optimizer == "adamw"
        c = adam_coefficients(lr64, t, hp["beta1"].T, hp["beta2"].T, hp["eps"].T, hp["weight_decay"].T, decoupled)
    else:
        c = {"lr": lr64, "weight_decay": hp["weight_decay"].T, "momentum": hp["beta1"].T}
    tables = {k: v.expand(steps, M).float().unsqueeze(-1).contiguous() for k, v in c.items() if torch.is_tensor(v)}
    constants = {k: float(v) for k, v in c.items() if not torch.is_tensor(v)}
    return tables, constants


def _hyperparameters(runs: list[TrainConfig]) -> dict[str, torch.Tensor]:
    """Each run's optimiser settings as float64 (M, 1) columns."""
    columns = {
        "beta1": [r.betas[0] for r in runs],
        "beta2": [r.betas[1] for r in runs],
        "eps": [r.eps for r in runs],
        "weight_decay": [r.weight_decay for r in runs],
    }
    return {k: torch.tensor(v, dtype=torch.float64)[:, None] for k, v in columns.items()}


def train_many(
    model_cfg: ModelConfig | None,
    runs: list[TrainConfig],
    corpus: Corpus | None = None,
    *,
    threads: int | None = None,
    workers: int | None = None,
) -> list[TrainResult]:
    """Train len(runs) Decoders of one architecture together; one TrainResult
    per run, as train(model_cfg, run) would return it (to float32 rounding;
    `seconds` is the whole job's wall time divided by the number of runs).

    Runs must share batch, optimizer and eval_every; everything else (seed,
    data_seed, lr, schedule, warmup, decay_frac, steps, betas, eps,
    weight_decay, clip) may differ.

    threads: torch threads in all (None: torch's setting).
    workers: stacks trained side by side, the runs split evenly among them,
        each stack on its own Python thread with one torch thread (None: one
        stack per thread). The ops release the GIL, so the stacks run in
        parallel; ops this small scale poorly over OpenMP threads (each op is
        split and joined), so on 2 cores two 1-thread stacks ran about 15%
        faster than one stack on 2 threads, and unlike worker processes they
        cost no start-up (3-4 s to spawn one and import torch).
        workers=1: one stack, its ops spread over `threads` threads."""
    cfg = model_cfg or ModelConfig()
    runs = list(runs)
    _check_runs(runs)
    corpus = corpus or load_corpus()
    threads = threads or torch.get_num_threads()
    workers = max(1, min(workers or threads, len(runs)))
    threads_before = torch.get_num_threads()
    torch.set_num_threads(threads if workers == 1 else 1)  # (threads started later inherit the setting)
    try:
        keep_freed_memory()
        if workers == 1:
            return _train_many(cfg, runs, corpus)
        return _train_side_by_side(cfg, runs, corpus, workers)
    finally:
        torch.set_num_threads(threads_before)


def _train_side_by_side(cfg: ModelConfig, runs: list[TrainConfig], corpus: Corpus, workers: int) -> list[TrainResult]:
    t_start = time.perf_counter()
    bounds = [round(len(runs) * k / workers) for k in range(workers + 1)]
    chunks = [runs[bounds[k] : bounds[k + 1]] for k in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda chunk: _train_many(cfg, chunk, corpus), chunks))
    results = [r for part in parts for r in part]
    seconds = (time.perf_counter() - t_start) / len(runs)
    for r in results:
        r.seconds = seconds
    return results


def _train_many(cfg: ModelConfig, runs: list[TrainConfig], corpus: Corpus) -> list[TrainResult]:
    t_start = time.perf_counter()
    M, T, B = len(runs), cfg.context, runs[0].batch
    opt_kind, eval_every = runs[0].optimizer, runs[0].eval_every
    steps = max(r.steps for r in runs)

    layout, theta = _stack_init(cfg, [r.seed for r in runs])  # (M, P)
    grad = torch.zeros_like(theta)
    net = StackedDecoder(cfg, layout, theta, grad)
    scales = layout.lr_scales(cfg)  # µP: (P,) float64 multipliers, or None
    if scales is not None and opt_kind in ("sgd", "momentum"):
        raise NotImplementedError("µP learning-rate scales are defined for Adam-type optimisers only")
    tables, constants = _schedules(runs, steps, per_element=scales is not None)
    hp = _hyperparameters(runs)
    exp_avg, exp_avg_sq, momentum_buffer = (torch.zeros_like(theta) for _ in range(3))
    clip = torch.tensor([math.inf if r.clip is None else r.clip for r in runs])  # (M,); inf: never clips
    batches = _Batches(corpus.train, runs, B, T)
    xv, yv = val_windows(corpus.val, T)

    # what each run records
    losses = torch.zeros(steps, M)  # every update's training loss
    grad_norms = torch.zeros(steps, M)  # and its gradient norm before clipping
    interval = torch.zeros(M, dtype=torch.float64)  # loss sum since the last evaluation
    curves = [{k: [] for k in ("step", "train_loss", "val_loss", "grad_norm", "lr")} for _ in runs]
    active = torch.ones(M, dtype=torch.bool)
    running = list(range(M))  # models still training
    diverged_at: list[int | None] = [None] * M
    stopped_at = [r.steps for r in runs]
    final_theta = theta.clone()  # each run's weights when it stopped
    norm = torch.full((M,), math.nan)

    def record(step: int, due: list[int]) -> None:
        val = net.evaluate(xv, yv).tolist()
        for m in due:
            c = curves[m]
            n = step - c["step"][-1] if c["step"] else 0  # updates since the last evaluation
            c["step"].append(step)
            c["train_loss"].append(float(interval[m]) / n if n else math.nan)
            c["val_loss"].append(val[m])
            c["grad_norm"].append(float(norm[m]))
            c["lr"].append(lr_at(max(step - 1, 0), runs[m]))
            interval[m] = 0.0

    def freeze(m: int, step: int) -> None:
        running.remove(m)
        active[m] = False
        final_theta[m] = theta[m]
        stopped_at[m] = step

    record(0, running)
    for step in range(steps):
        x, y = batches.next()  # (M, B, T) each
        loss = net.loss_and_grad(x, y)  # (M,), gradients in grad (M, P)
        norm = torch.linalg.vector_norm(grad, dim=1)  # (M,)
        if not torch.isfinite(torch.where(active, loss + norm, 0.0).sum()).item():
            for m in (active & ~torch.isfinite(loss + norm)).nonzero().flatten().tolist():
                diverged_at[m] = step  # as train(): no update from a non-finite loss or gradient
                freeze(m, step)
            grad[~active] = 0.0
        grad.mul_(torch.clamp(clip / (norm + 1e-6), max=1.0)[:, None])  # each model's own global norm
        losses[step] = loss
        grad_norms[step] = norm
        interval.add_(torch.where(active, loss, 0.0))

        c = {k: v[step] for k, v in tables.items()} | constants  # (M, 1) tensors and floats
        if opt_kind in ("adamw", "adam"):
            if scales is not None:  # µP: per-element learning rates (M, P), in float64 as train() has them
                lr = c["lr"] * scales
                c = adam_coefficients(
                    lr, step + 1, hp["beta1"], hp["beta2"], hp["eps"], hp["weight_decay"], opt_kind == "adamw"
                )
                c = {k: v.float() if torch.is_tensor(v) else v for k, v in c.items()}
            adam_update_(theta, grad, exp_avg, exp_avg_sq, c)
        else:
            momentum = c["momentum"] if opt_kind == "momentum" else None
            momentum_buffer = sgd_update_(
                theta, grad, momentum_buffer, c["lr"], c["weight_decay"], momentum, first=step == 0
            )

        done = step + 1
        finishing = [m for m in running if runs[m].steps == done]
        due = [m for m in running if done % eval_every == 0 or m in finishing]
        if due:
            record(done, due)
        for m in finishing:
            freeze(m, done)
        if not running:
            break

    seconds = (time.perf_counter() - t_start) / M
    results = []
    for m, r in enumerate(runs):
        n = stopped_at[m]
        finished = diverged_at[m] is None
        results.append(
            TrainResult(
                model_config=_config_dict(cfg),
                train_config={**_config_dict(r), "data_seed": r.data_seed_value},
                val_loss_init=curves[m]["val_loss"][0],
                val_loss_final=curves[m]["val_loss"][-1] if finished else math.nan,
                train_loss_final=curves[m]["train_loss"][-1] if finished else math.nan,
                steps=n,
                seconds=seconds,
                tokens_seen=n * B * T,
                diverged_at=diverged_at[m],
                curves=curves[m],
                step_losses=losses[:n, m].tolist(),
                step_grad_norms=grad_norms[:n, m].tolist(),
                state_dict=_state_dict(layout, final_theta[m], cfg),
            )
        )
    return results


def _state_dict(layout: FlatParams, row: torch.Tensor, cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """One model's weights (a row of the stack) under Decoder.state_dict()'s names."""
    out = {n: row[layout.offsets[n] : layout.offsets[n] + math.prod(layout.shapes[n])].view(layout.shapes[n]).clone()
           for n in layout.names}  # fmt: skip
    if cfg.tie_embeddings:  # state_dict lists the shared matrix under both names
        out["lm_head.weight"] = out["wte.weight"]
    return out
