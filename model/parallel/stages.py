"""A real pipeline: the Decoder cut into consecutive stages, one per process, micro-batches passed
along with send/recv (activations forward, their gradients back), in GPipe's or 1F1B's order.

The cut is made from outside the Decoder: a :class:`Stage` holds a slice of its blocks (the first
also the embeddings, the last also the final norm, the head and the loss). Every process builds
the same Decoder from the same seed and keeps its own stage. Each op's order comes from
model/pipeline.py's ``device_order``, so the real run follows the simulated schedule.
Idle time is the time a process spends blocked in ``recv``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn

from model.decoder import Decoder, ModelConfig, cross_entropy
from model.pipeline import device_order


class Stage(nn.Module):
    """Blocks ``lo:hi`` of a Decoder; stage 0 also embeds, the last stage also reads out."""

    def __init__(self, model: Decoder, rank: int, world: int):
        super().__init__()
        cfg = model.cfg
        if cfg.n_layers % world:
            raise ValueError(f"{cfg.n_layers} layers do not split evenly into {world} stages")
        if cfg.norm != "pre" or cfg.tie_embeddings:
            raise ValueError("the stage cut follows the default Decoder: pre-LN, untied embeddings")
        per = cfg.n_layers // world
        self.cfg, self.first, self.last = cfg, rank == 0, rank == world - 1
        self.blocks = nn.ModuleList(model.blocks[rank * per : (rank + 1) * per])
        self.wte = model.wte if self.first else None
        self.wpe = model.wpe if self.first else None
        self.ln_f = model.ln_f if self.last else None
        self.lm_head = model.lm_head if self.last else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) on stage 0, else activations (B, T, D) -> activations, or logits on the last."""
        if self.wte is not None and self.wpe is not None:
            x = self.wte(x) + self.wpe.weight[: x.shape[1]]  # (B, T, D)
        for block in self.blocks:
            x = block(x)
        if self.lm_head is not None and self.ln_f is not None:
            x = self.lm_head(self.ln_f(x)) * self.cfg.logit_mult  # (B, T, V)
        return x


@dataclass
class StepRecord:
    """One pipeline step on one process."""

    total: float
    """Wall time of the step (s), from a barrier before it to a barrier after it, so every
    stage measures the same span."""
    busy: float
    """Time computing forwards and backwards (s); the rest of ``total`` is idle."""
    wait: float
    """Of the idle time, the part blocked in recv (s)."""
    peak_held: int
    """Most micro-batches whose activations this stage held at once."""
    loss: float
    """Sum of the micro-batch losses / m on the last stage (the batch's mean loss), else 0."""


def _recv(shape: tuple[int, ...], src: int) -> tuple[torch.Tensor, float]:
    buf = torch.empty(shape)
    t0 = time.perf_counter()
    dist.recv(buf, src)
    return buf, time.perf_counter() - t0


def pipeline_step(stage: Stage, rank: int, world: int, schedule: str, idx: torch.Tensor,
                  targets: torch.Tensor, m: int) -> StepRecord:  # fmt: skip
    """Forward and backward of one batch (B, T) as m micro-batches; gradients accumulate in
    ``stage``'s parameters (each micro-batch's loss weighted 1/m, so they sum to the batch mean's)."""
    B, T = idx.shape
    if B % m:
        raise ValueError(f"a batch of {B} does not split into {m} equal micro-batches")
    mb_idx, mb_tgt = idx.chunk(m), targets.chunk(m)
    shape = (B // m, T, stage.cfg.d_model)
    saved: dict[int, tuple[torch.Tensor | None, torch.Tensor]] = {}
    sends: list[dist.Work] = []
    wait = busy = loss_sum = 0.0
    peak = 0
    dist.barrier()
    t_start = time.perf_counter()
    for kind, mb, _ in device_order(world, m, 1, schedule, rank):
        if kind == "F":
            x_in = None
            if not stage.first:
                x_in, waited = _recv(shape, rank - 1)
                wait += waited
                x_in.requires_grad_(True)
            t0 = time.perf_counter()
            out = stage(mb_idx[mb] if x_in is None else x_in)
            if stage.last:
                out = cross_entropy(out, mb_tgt[mb], stage.cfg.z_loss) / m
            busy += time.perf_counter() - t0
            if stage.last:
                loss_sum += float(out.detach())
            else:
                work = dist.isend(out.detach().contiguous(), rank + 1)
                assert work is not None
                sends.append(work)
            saved[mb] = (x_in, out)
            peak = max(peak, len(saved))
        else:
            x_in, out = saved.pop(mb)
            grad = None
            if not stage.last:
                grad, waited = _recv(shape, rank + 1)
                wait += waited
            t0 = time.perf_counter()
            out.backward(grad)
            busy += time.perf_counter() - t0
            if x_in is not None:
                assert x_in.grad is not None
                work = dist.isend(x_in.grad.contiguous(), rank - 1)
                assert work is not None
                sends.append(work)
    for work in sends:
        work.wait()
    dist.barrier()
    return StepRecord(time.perf_counter() - t_start, busy, wait, peak, loss_sum)


@dataclass(frozen=True)
class PipeJob:
    """What every process of a pipeline run receives."""

    cfg: ModelConfig
    seed: int
    schedule: str
    micro: tuple[int, ...]
    """Micro-batch counts to run, each for ``repeats`` timed steps after ``warmup`` untimed ones."""
    repeats: int
    warmup: int
    idx: torch.Tensor
    targets: torch.Tensor
    micro_size: int = 0
    """Timed steps: 0 splits the whole batch into m micro-batches; n > 0 times m micro-batches
    of n windows each (the first m*n windows), so every op does the same work whatever m.
    The gradients returned are always the whole batch's."""


def run_stage(rank: int, world: int, job: PipeJob) -> dict:
    """One process of a pipeline run: its stage's gradients after one step per micro-batch count
    (by parameter name of the full Decoder) and its step records for the timed repeats."""
    model = Decoder(job.cfg, torch.Generator().manual_seed(job.seed))
    stage = Stage(model, rank, world)
    mine = {id(p) for p in stage.parameters()}
    names = [n for n, p in model.named_parameters() if id(p) in mine]
    out: dict = {"grads": {}, "records": {}, "loss": {}}
    for m in job.micro:
        stage.zero_grad(set_to_none=True)
        rec = pipeline_step(stage, rank, world, job.schedule, job.idx, job.targets, m)
        params = dict(model.named_parameters())
        grads = {n: params[n].grad for n in names}
        out["grads"][m] = {n: g.detach().clone() for n, g in grads.items() if g is not None}
        out["loss"][m] = rec.loss
        idx, targets = job.idx, job.targets
        if job.micro_size:  # timing: micro-batches of a fixed size, so each op does the same work
            idx, targets = idx[: m * job.micro_size], targets[: m * job.micro_size]
        records = []
        for r in range(job.warmup + job.repeats):
            stage.zero_grad(set_to_none=True)
            rec = pipeline_step(stage, rank, world, job.schedule, idx, targets, m)
            if r >= job.warmup:
                records.append(rec)
        out["records"][m] = records
    return out


def run_stages(rank: int, world: int, jobs: tuple[PipeJob, ...]) -> list[dict]:
    """Several pipeline runs in the same processes, one after another (starting processes costs
    seconds): :func:`run_stage`'s result for each job, in order."""
    return [run_stage(rank, world, job) for job in jobs]
