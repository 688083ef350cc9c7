"""The slow-link methods in W real processes: one worker per process, talking through
torch.distributed's gloo backend over loopback (model/parallel/launch.py starts them).

The training code is model/slowlinks/workers.py's, as in the one-process simulation; only
the exchange differs: a gather is ``dist.all_gather`` and a mean is ``dist.all_reduce``, so
the real runs check the simulation.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

from model.slowlinks import compress as cz
from model.slowlinks.workers import Method, Setup, train_workers


class Dist:
    """This process's links to the others: all-gather and all-reduce through gloo."""

    def __init__(self, workers: int):
        self.workers = workers
        self.sent = 0.0

    def gather(self, x: torch.Tensor) -> torch.Tensor:
        """(R, 1, ...) -> (R, W, ...): every process's tensor, in rank order."""
        self.sent += cz.allgather_bytes(x[0, 0].numel() * x.element_size(), self.workers)
        parts = [torch.empty_like(x) for _ in range(self.workers)]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts, 1)

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        """(R, 1, P) -> (R, P): the processes' mean, through a sum all-reduce."""
        self.sent += cz.allreduce_bytes(x.shape[-1], self.workers, x.element_size())
        out = x[:, 0].contiguous().clone()
        dist.all_reduce(out)
        return out.div_(self.workers)


@dataclass(frozen=True)
class RealJob:
    """One method's runs, as every process receives them."""

    method: Method
    setup: Setup
    lrs: tuple[float, ...]
    seeds: tuple[int, ...]


def run_worker(rank: int, world: int, jobs: Sequence[RealJob]) -> list[dict]:
    """One process: worker ``rank`` of each job in turn; its copy of the results and its wall time."""
    torch.set_num_threads(1)
    out = []
    for job in jobs:
        if job.setup.workers != world:
            raise ValueError(f"the job has {job.setup.workers} workers but {world} processes were started")
        link = Dist(world)
        dist.barrier()
        t0 = time.perf_counter()
        rec = train_workers(job.method, job.setup, job.lrs, job.seeds, [rank], link)
        out.append({"val": rec.val, "theta": rec.theta, "sent": rec.bytes_per_worker, "union": rec.union,
                    "common": rec.common, "seconds": time.perf_counter() - t0})  # fmt: skip
    return out
