"""Data parallelism on real torch.distributed processes (gloo, loopback; started by
model/parallel/launch.py): every process holds the whole Decoder and 1/p of each batch.

- :func:`run_exact`: p processes against one, DDP and a hand-written all-reduce loop;
- :func:`run_sharded`: plain DDP, ZeRO-1 (ZeroRedundancyOptimizer) and FSDP (``fully_shard``),
  their loss trajectories and the bytes of parameters, gradients and Adam moments each process holds;
- :func:`run_steps`: step time with DDP's overlapped buckets and with one all-reduce after the
  backward, compute alone, the all-reduce alone, and a matmul's FLOP/s for the MFU.

Functions named ``run_*`` execute inside one process; they return plain numbers and arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from model.decoder import Decoder, ModelConfig

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class DPJob:
    """One data-parallel training run: a Decoder from ``seed`` and the batches of every step."""

    model: ModelConfig
    seed: int
    batches: tuple[Batch, ...]
    lr: float


def share(batch: Batch, rank: int, world: int) -> Batch:
    """This process's contiguous 1/world of a batch's windows."""
    idx, tgt = batch
    b = idx.shape[0] // world
    if b * world != idx.shape[0]:
        raise ValueError(f"a batch of {idx.shape[0]} windows does not split into {world} equal shares")
    return idx[rank * b : (rank + 1) * b], tgt[rank * b : (rank + 1) * b]


def adamw(params, lr: float) -> torch.optim.AdamW:
    """The optimiser of every run here: AdamW, no weight decay, so the runs differ only in their sync."""
    return torch.optim.AdamW(params, lr=lr, weight_decay=0.0)


def single(job: DPJob) -> dict:
    """One process, the whole batch: the reference every data-parallel run is held to."""
    model = Decoder(job.model, torch.Generator().manual_seed(job.seed))
    opt = adamw(model.parameters(), job.lr)
    first: dict[str, np.ndarray] = {}
    for k, (idx, tgt) in enumerate(job.batches):
        opt.zero_grad(set_to_none=True)
        model.loss(idx, tgt).backward()
        if k == 0:
            first = {n: p.grad.detach().numpy().copy() for n, p in model.named_parameters() if p.grad is not None}
        opt.step()
    return {"grads": first, "weights": {n: p.detach().numpy().copy() for n, p in model.named_parameters()}}


# --------------------------------------------------------------------------- exactness


def run_exact(rank: int, world: int, jobs: tuple[DPJob, ...], modes: tuple[str, ...]) -> dict[str, list[dict]]:
    """One process of each job under each mode: :func:`train_exact` for every mode, by mode."""
    return {mode: train_exact(rank, world, jobs, mode) for mode in modes}


def train_exact(rank: int, world: int, jobs: tuple[DPJob, ...], mode: str) -> list[dict]:
    """One process of each job: ``mode`` "ddp" (DistributedDataParallel), "hand" (backward, then
    all-reduce each gradient and divide by p) or "hand_sum" (the same without the division:
    the ablation, a bug the comparison must catch). First step's gradients and final weights."""
    out = []
    for job in jobs:
        model = Decoder(job.model, torch.Generator().manual_seed(job.seed))
        net: torch.nn.Module = DDP(model) if mode == "ddp" else model
        opt = adamw(model.parameters(), job.lr)
        first: dict[str, np.ndarray] = {}
        for k, batch in enumerate(job.batches):
            idx, tgt = share(batch, rank, world)
            opt.zero_grad(set_to_none=True)
            loss = model.loss(idx, tgt) if mode != "ddp" else _ddp_loss(net, model, idx, tgt)
            loss.backward()
            if mode in ("hand", "hand_sum"):
                for p in model.parameters():
                    assert p.grad is not None
                    dist.all_reduce(p.grad)
                    if mode == "hand":
                        p.grad /= world
            if k == 0:
                first = {n: p.grad.detach().numpy().copy() for n, p in model.named_parameters() if p.grad is not None}
            opt.step()
        out.append({"grads": first, "weights": {n: p.detach().numpy().copy() for n, p in model.named_parameters()}})
    return out


def _ddp_loss(net: torch.nn.Module, model: Decoder, idx: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """The loss through DDP's forward, so that its hooks average the gradients in the backward."""
    from model.decoder import cross_entropy

    return cross_entropy(net(idx), tgt, model.cfg.z_loss)


# --------------------------------------------------------------------------- ZeRO-1 and FSDP


def local_bytes(t: torch.Tensor | None) -> int:
    """Bytes this process stores for ``t`` (its shard, for a DTensor)."""
    if t is None:
        return 0
    to_local = getattr(t, "to_local", None)
    if to_local is not None:
        t = to_local()
    assert isinstance(t, torch.Tensor)
    return t.numel() * t.element_size()


def moment_bytes(state: dict) -> int:
    """Bytes of Adam's two moment tensors in an optimiser state (the step counters left out)."""
    return sum(local_bytes(s[k]) for s in state.values() for k in ("exp_avg", "exp_avg_sq") if k in s)


def run_sharded(rank: int, world: int, jobs: tuple[DPJob, ...], modes: tuple[str, ...]) -> dict[str, list[dict]]:
    """One process of each job under each mode: :func:`train_sharded` for every mode, by mode."""
    return {mode: train_sharded(rank, world, jobs, mode) for mode in modes}


def train_sharded(rank: int, world: int, jobs: tuple[DPJob, ...], mode: str) -> list[dict]:
    """One process of each job under ``mode``: "ddp", "zero1" (DDP + ZeroRedundancyOptimizer wrapping
    AdamW) or "fsdp" (``torch.distributed.fsdp.fully_shard`` on the whole Decoder). The batch loss
    at each step (averaged over processes) and the bytes this process holds after the last step."""
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.optim import ZeroRedundancyOptimizer

    out = []
    for job in jobs:
        model = Decoder(job.model, torch.Generator().manual_seed(job.seed))
        opt: torch.optim.Optimizer
        if mode == "fsdp":
            fully_shard(model)
            net: torch.nn.Module = model
            opt = adamw(model.parameters(), job.lr)
        else:
            net = DDP(model)
            if mode == "zero1":
                opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=job.lr,
                                              weight_decay=0.0)  # fmt: skip
            else:
                opt = adamw(model.parameters(), job.lr)
        losses = []
        for batch in job.batches:
            idx, tgt = share(batch, rank, world)
            opt.zero_grad(set_to_none=True)
            loss = _ddp_loss(net, model, idx, tgt)
            loss.backward()
            opt.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            losses.append(float(mean) / world)
        state = opt.optim.state if isinstance(opt, ZeroRedundancyOptimizer) else opt.state
        out.append({
            "loss": np.array(losses),
            "param_bytes": sum(local_bytes(p) for p in model.parameters()),
            "grad_bytes": sum(local_bytes(p.grad) for p in model.parameters()),
            "moment_bytes": moment_bytes(state),
            "n_params": sum(p.numel() for p in model.parameters()),
        })  # fmt: skip
    return out


# --------------------------------------------------------------------------- step time, overlap, MFU

ARMS = ("compute", "overlap", "overlap_big", "after", "allreduce", "matmul")
"""compute: forward, backward and step, no communication; overlap: DDP with small buckets, each
all-reduced as soon as the backward has filled it; overlap_big: the same with larger buckets;
after: the backward, then one all-reduce of all gradients flattened; allreduce: that all-reduce
alone; matmul: an m x m x m matmul (the peak)."""


@dataclass(frozen=True)
class StepJob:
    """The timed runs: a Decoder, its per-process batch, repeats, DDP's bucket size, the matmul size."""

    model: ModelConfig
    seed: int
    batch: Batch
    repeats: int
    warmup: int
    bucket_mb: float
    big_bucket_mb: float
    matmul: int


def run_steps(rank: int, world: int, job: StepJob) -> dict:
    """One process: seconds per step of each arm of :data:`ARMS`, (arm, repeat), the arms
    interleaved within each repeat; each timed from a barrier to the end of this process's step."""
    torch.manual_seed(job.seed)
    idx, tgt = share(job.batch, rank, world)
    trained = ("compute", "overlap", "overlap_big", "after")
    models = {a: Decoder(job.model, torch.Generator().manual_seed(job.seed)) for a in trained}
    ddps = {"overlap": DDP(models["overlap"], bucket_cap_mb=job.bucket_mb),
            "overlap_big": DDP(models["overlap_big"], bucket_cap_mb=job.big_bucket_mb)}  # fmt: skip
    opts = {a: adamw(m.parameters(), 1e-3) for a, m in models.items()}
    flat = torch.zeros(sum(p.numel() for p in models["after"].parameters()))
    a = torch.randn(job.matmul, job.matmul)
    b = torch.randn(job.matmul, job.matmul)

    def step(arm: str) -> None:
        if arm == "matmul":
            torch.mm(a, b)
            return
        if arm == "allreduce":
            dist.all_reduce(flat)
            return
        model, opt = models[arm], opts[arm]
        opt.zero_grad(set_to_none=True)
        loss = _ddp_loss(ddps[arm], model, idx, tgt) if arm in ddps else model.loss(idx, tgt)
        loss.backward()
        if arm == "after":
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            buf = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(buf)
            buf /= world
            offset = 0
            for g in grads:  # back into each gradient
                g.copy_(buf[offset : offset + g.numel()].view_as(g))
                offset += g.numel()
        opt.step()

    times = np.zeros((len(ARMS), job.repeats))
    for r in range(-job.warmup, job.repeats):
        for i, arm in enumerate(ARMS):
            dist.barrier()
            t0 = time.perf_counter()
            step(arm)
            dt = time.perf_counter() - t0
            if r >= 0:
                times[i, r] = dt
    same = max(float((pa - pb).detach().abs().max()) for arm in ddps for pa, pb in
               zip(models[arm].parameters(), models["after"].parameters(), strict=True))  # fmt: skip
    return {"times": times, "overlap_vs_after": same}


def model_flops_per_token(cfg: ModelConfig, n_params: int) -> float:
    """PaLM's model FLOPs per token, 6N + 12·L·H·Q·T (S10.mfu): N parameters, L layers, H heads of
    width Q, context T; no recomputation counted."""
    return 6.0 * n_params + 12.0 * cfg.n_layers * cfg.n_heads * cfg.d_head * cfg.context
