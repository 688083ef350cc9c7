"""W data-parallel workers training the Decoder, each on its own shard of the book, with one of
five ways of talking: the full gradient every step, top-k (with or without error feedback),
DeMo, or DiLoCo's H local steps and an outer Nesterov step.

One function, :func:`train_workers`, runs R runs (learning rates x seeds) of one method. Its
``exchange`` does the talking: :class:`Local` holds all W workers in this process (their
Decoders stacked, model/stacked.py) and sums over the worker axis; model/slowlinks/real.py
holds one worker per process and talks through torch.distributed. The arithmetic in between is
this module's in both, so the single-process simulation and the real processes differ only in
how the collectives add up.

Shapes: R runs, L local workers (W in one process, 1 per real process), P weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch

from model.data import Batches, load_corpus, val_windows
from model.decoder import ModelConfig
from model.optim import Optimizer, clip_
from model.slowlinks import compress as cz
from model.stacked import StackedDecoder, init_stack
from model.train import TrainConfig, lr_at

METHODS = ("dense", "topk", "demo", "diloco")
DATA_SEED_OFFSET = 2_000_000  # worker w of seed s draws its batches with seed OFFSET + 100 s + w


@dataclass(frozen=True)
class Method:
    """How the workers talk."""

    kind: str = "dense"
    k_frac: float = 0.0
    """topk: the share of the P weights each worker sends each step."""
    feedback: bool = False
    """topk: keep what was not sent and add it to the next step's gradient."""
    chunk: int = 64
    """demo: coefficients per DCT chunk (the reference code's default)."""
    chunk_k: int = 0
    """demo: coefficients sent per chunk."""
    decay: float = 0.999
    """demo: the momentum's decay (the reference code's default)."""
    H: int = 1
    """diloco: local steps between synchronisations."""
    outer_lr: float = 0.7
    outer_momentum: float = 0.9
    nesterov: bool = True

    def __post_init__(self) -> None:
        if self.kind not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.kind!r}")

    @property
    def name(self) -> str:
        """A short id: dense, topk1_ef, demo4_999, diloco25, diloco25_avg."""
        if self.kind == "topk":
            return f"topk{round(100 * self.k_frac)}" + ("_ef" if self.feedback else "")
        if self.kind == "demo":
            return f"demo{self.chunk_k}_{str(self.decay).split('.')[-1]}"
        if self.kind == "diloco":
            return f"diloco{self.H}" + ("" if self.nesterov and self.outer_momentum else "_avg")
        return "dense"


@dataclass(frozen=True)
class Setup:
    """What every method shares: the model, the workers, the steps, the inner AdamW."""

    model: ModelConfig = field(default_factory=ModelConfig)
    workers: int = 4
    batch: int = 8
    """Windows per worker per step (the global batch is workers x batch)."""
    steps: int = 600
    warmup: int = 50
    eval_every: int = 100
    weight_decay: float = 0.01
    clip: float = 1.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8


def data_seed(seed: int, worker: int) -> int:
    return DATA_SEED_OFFSET + 100 * seed + worker


def shard(train: torch.Tensor, worker: int, workers: int) -> torch.Tensor:
    """Worker w's contiguous share of the training text (the last few characters are dropped)."""
    n = len(train) // workers
    return train[worker * n : (worker + 1) * n]


class Local:
    """All W workers in this process: a gather returns what it is given; the mean adds the
    workers in order. Counts the bytes each worker would send."""

    def __init__(self, workers: int):
        self.workers = workers
        self.sent = 0.0

    def gather(self, x: torch.Tensor) -> torch.Tensor:
        """(R, W, ...) -> (R, W, ...)."""
        self.sent += cz.allgather_bytes(x[0, 0].numel() * x.element_size(), self.workers)
        return x

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        """(R, W, P) -> (R, P): the workers' mean."""
        self.sent += cz.allreduce_bytes(x.shape[-1], self.workers, x.element_size())
        out = x[:, 0].clone()
        for w in range(1, x.shape[1]):
            out.add_(x[:, w])
        return out.div_(self.workers)


class Exchange(Protocol):
    """What :func:`train_workers` needs from the workers' links (Local here, real.Dist there)."""

    workers: int
    sent: float

    def gather(self, x: torch.Tensor) -> torch.Tensor: ...  # (R, L, ...) -> (R, W, ...)

    def mean(self, x: torch.Tensor) -> torch.Tensor: ...  # (R, L, P) -> (R, P)


@dataclass
class Record:
    """What a group of runs measured."""

    steps: list[int]
    val: torch.Tensor
    """(R, evaluations): validation loss of the shared (or global) weights."""
    bytes_per_worker: list[float]
    """Bytes each worker had sent by each evaluation."""
    theta: torch.Tensor
    """(R, P): the final shared weights."""
    union: float = 0.0
    """topk: mean over steps and runs of the distinct positions the W workers sent, over k."""
    common: float = 0.0
    """topk: mean share of the k positions that every worker sent."""


def lr_table(lrs: Sequence[float], setup: Setup) -> torch.Tensor:
    """(steps, R): warmup then cosine to 0, each run at its own peak rate."""
    cfg = [TrainConfig(steps=setup.steps, lr=lr, warmup=setup.warmup, schedule="cosine") for lr in lrs]
    return torch.tensor([[lr_at(s, c) for c in cfg] for s in range(setup.steps)], dtype=torch.float64)


def train_workers(method: Method, setup: Setup, lrs: Sequence[float], seeds: Sequence[int],
                  local: Sequence[int], exchange: Exchange,
                  progress: Callable[[float], None] = lambda f: None) -> Record:  # fmt: skip
    """R = len(lrs) runs, run r at peak rate lrs[r] from seed seeds[r], with this process's
    workers ``local`` (all W, or one); the same result in every process."""
    cfg, W, L, R = setup.model, setup.workers, len(local), len(lrs)
    if len(seeds) != R:
        raise ValueError(f"{R} learning rates but {len(seeds)} seeds: give one seed per run")
    if method.kind == "diloco" and (setup.steps % method.H or setup.eval_every % method.H):
        raise ValueError(f"H = {method.H} must divide the steps ({setup.steps}) and eval_every ({setup.eval_every})")
    corpus = load_corpus()
    batches = [Batches(shard(corpus.train, w, W), [data_seed(s, w) for s in seeds], setup.batch, cfg.context)
               for w in local]  # fmt: skip
    xv, yv = val_windows(corpus.val, cfg.context)
    layout, init = init_stack(cfg, list(seeds))
    P = layout.size
    theta = init.clone()  # (R, P): the shared weights (DiLoCo: the global ones)
    rows = theta.repeat_interleave(L, 0)  # (R*L, P): what each local worker computes with
    grad = torch.zeros_like(rows)
    net = StackedDecoder(cfg, layout, rows, grad)
    evaluator = StackedDecoder(cfg, layout, theta, torch.empty(0))
    lr = lr_table(lrs, setup)
    inner_lr = lr.repeat_interleave(L, 1) if method.kind == "diloco" else lr
    n_opt = R * L if method.kind == "diloco" else R
    opt = Optimizer("adamw", inner_lr, [setup.betas] * n_opt, [setup.eps] * n_opt, [setup.weight_decay] * n_opt)
    clip = torch.full((n_opt,), setup.clip)
    memory = torch.zeros(R, L, P) if method.feedback else None
    momentum = torch.zeros(R, L, P)  # DeMo's local momentum; DiLoCo's outer buffer uses its first worker
    dct = cz.dct_matrix(method.chunk)
    k = max(1, round(method.k_frac * P))
    rec = Record([], torch.zeros(R, 0), [], theta)
    unions: list[torch.Tensor] = []
    commons: list[torch.Tensor] = []

    def evaluate(step: int) -> None:
        rec.steps.append(step)
        rec.val = torch.cat([rec.val, evaluator.evaluate(xv, yv).float()[:, None]], 1)
        rec.bytes_per_worker.append(exchange.sent)

    evaluate(0)
    for step in range(setup.steps):
        draws = [b.next() for b in batches]  # each (R, B, T)
        x = torch.stack([d[0] for d in draws], 1).flatten(0, 1)  # (R*L, B, T), run-major
        y = torch.stack([d[1] for d in draws], 1).flatten(0, 1)
        if method.kind != "diloco":
            rows.copy_(theta.repeat_interleave(L, 0))
        net.loss_and_grad(x, y)
        g = grad.view(R, L, P)
        if method.kind == "dense":
            avg = exchange.mean(g)
            clip_(avg, avg.norm(dim=1), clip)
            opt.step(theta, avg)
        elif method.kind == "topk":
            # #region topk-step
            values, idx = cz.topk_compress(g.clone(), k, memory)  # my k entries
            values, idx = exchange.gather(values), exchange.gather(idx.int()).long()
            union, common = cz.support_overlap(idx, P)  # sent by any / by all
            unions.append(union.float() / k)
            commons.append(common.float() / k)
            avg = cz.scatter_sum(values, idx, P).div_(W)  # added locally
            # #endregion topk-step
            clip_(avg, avg.norm(dim=1), clip)
            opt.step(theta, avg)
        elif method.kind == "demo":
            gw = g.reshape(R * L, P).clone()
            clip_(gw, gw.norm(dim=1), torch.full((R * L,), setup.clip))
            momentum.mul_(method.decay).add_(gw.view(R, L, P))
            values, idx = cz.demo_compress(momentum, dct, method.chunk_k)
            values, idx = exchange.gather(values), exchange.gather(idx.int()).long()
            q = cz.demo_decode(values, idx, dct, P)  # (R, P)
            step_lr = lr[step].float()[:, None]  # (R, 1)
            theta.mul_(1 - step_lr * setup.weight_decay).sub_(step_lr * q.sign())
        else:  # diloco: a local AdamW step on every worker, then every H steps the outer step
            clip_(grad, grad.norm(dim=1), clip)
            opt.step(rows, grad)
            if (step + 1) % method.H == 0:
                delta = exchange.mean(theta[:, None] - rows.view(R, L, P))  # the pseudo-gradient (R, P)
                buf = momentum[:, 0]
                buf.mul_(method.outer_momentum).add_(delta)
                update = delta + method.outer_momentum * buf if method.nesterov else buf
                theta.sub_(method.outer_lr * update)
                rows.copy_(theta.repeat_interleave(L, 0))
        if (step + 1) % setup.eval_every == 0 or step + 1 == setup.steps:
            evaluate(step + 1)
        progress((step + 1) / setup.steps)
    if unions:
        rec.union = float(torch.stack(unions).mean())
        rec.common = float(torch.stack(commons).mean())
    return rec


def param_count(cfg: ModelConfig) -> int:
    """P, the weights of one Decoder of this shape."""
    return init_stack(cfg, [0])[0].size
