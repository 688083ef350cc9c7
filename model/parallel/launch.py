"""Start n processes in one gloo group on loopback, run a function in each, return what rank 0..n-1 returned."""

from __future__ import annotations

import os
import queue
import socket
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(rank: int, world: int, port: int, fn: Callable[..., Any], args: tuple, out: Any) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)  # one core per process: the machine has two
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        result = fn(rank, world, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    out.put((rank, plain(result)))


def plain(obj: Any) -> Any:
    """``obj`` with every tensor turned into a NumPy array (a tensor put on a queue is shared
    through a file descriptor that dies with its process)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().numpy().copy()
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(plain(v) for v in obj)
    return obj


def run(fn: Callable[..., Any], world: int, *args: Any) -> list[Any]:
    """``fn(rank, world, *args)`` in ``world`` spawned processes, one thread each; the list of
    their results by rank. ``fn`` must be importable (a module-level function). A worker that
    fails raises here (torch's ProcessRaisedException, with the worker's traceback)."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = mp.start_processes(_worker, args=(world, free_port(), fn, args, out), nprocs=world, join=False,
                               start_method="spawn")  # fmt: skip
    results: dict[int, Any] = {}
    finished = False
    while len(results) < world and not finished:  # drain while they run: a full pipe would block a worker
        try:
            rank, result = out.get(timeout=0.2)
            results[rank] = result
        except queue.Empty:
            finished = procs.join(timeout=0)
    while not procs.join(timeout=1):
        pass
    if sorted(results) != list(range(world)):
        raise RuntimeError(f"only ranks {sorted(results)} of {world} returned a result")
    return [results[r] for r in range(world)]
