"""Collectives on real torch.distributed processes (gloo, loopback): the ring by hand, the bytes a
process writes to its sockets, and the times of all-reduce, all-gather and reduce-scatter.

Functions named ``run_*`` execute inside one process of a group that model/parallel/launch.py
started; they return plain numbers and arrays.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


def bytes_written() -> int:
    """Bytes this process has handed to write-type system calls so far (``wchar`` of /proc/self/io,
    all threads): gloo's socket writes, so the bytes a collective puts on the wire."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line: this kernel does not count bytes written")


# --------------------------------------------------------------------------- the ring by hand


def _hop(send: torch.Tensor, recv: torch.Tensor, rank: int, world: int) -> None:
    """Send ``send`` to the next process and receive ``recv`` from the previous one, at once."""
    reqs = [dist.isend(send.contiguous(), (rank + 1) % world), dist.irecv(recv, (rank - 1) % world)]
    for r in reqs:
        assert r is not None
        r.wait()


def ring_allreduce(x: torch.Tensor, rank: int, world: int) -> tuple[torch.Tensor, int]:
    """Sum of every process's ``x`` by a ring written with send/recv: reduce-scatter, then
    all-gather, chunk (rank - s) mod p then (rank + 1 - s) mod p at step s, as model/ring.py.
    Returns the sum and the elements this process sent."""
    out = x.clone()
    chunks = list(torch.tensor_split(out, world))  # views into out
    sent = 0
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(world - 1):
            c_send = (rank - s) % world if phase == "reduce-scatter" else (rank + 1 - s) % world
            c_recv = (c_send - 1) % world
            buf = torch.empty_like(chunks[c_recv])
            _hop(chunks[c_send], buf, rank, world)
            if phase == "reduce-scatter":
                chunks[c_recv] += buf
            else:
                chunks[c_recv].copy_(buf)
            sent += chunks[c_send].numel()
    return out, sent


def run_ring(rank: int, world: int, sizes: tuple[int, ...], seeds: tuple[int, ...], pieces: tuple[int, ...]) -> dict:
    """One process: :func:`ring_check` for each size and seed (by (n, seed)), and :func:`run_bytes`."""
    checks = {(n, seed): ring_check(rank, world, n, seed) for n in sizes for seed in seeds}
    return {"checks": checks, **run_bytes(rank, world, pieces)}


def ring_check(rank: int, world: int, n: int, seed: int) -> dict:
    """One process: the hand ring against ``dist.all_reduce`` on the same float64 vectors, and the
    bytes each wrote to its sockets for both."""
    x = torch.randn(n, generator=torch.Generator().manual_seed(seed * 100 + rank), dtype=torch.float64)
    dist.barrier()
    w0 = bytes_written()
    mine, sent = ring_allreduce(x, rank, world)
    w1 = bytes_written()
    ref = x.clone()
    dist.barrier()
    w2 = bytes_written()
    dist.all_reduce(ref)
    w3 = bytes_written()
    return {"diff": float((mine - ref).abs().max()), "scale": float(ref.abs().max()), "sent": sent,
            "wire_hand": w1 - w0, "wire_torch": w3 - w2, "elem_bytes": x.element_size()}  # fmt: skip


# --------------------------------------------------------------------------- one collective, timed and counted


def _collective(name: str, n: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Input and output buffers for ``name`` on a vector of n float32 (S10.ab's n): all-reduce
    n -> n; all-gather, each process brings n/p and ends with all n; reduce-scatter, each brings
    n and keeps its n/p of the sum."""
    if n % world:
        raise ValueError(f"a vector of {n} elements does not split into {world} equal pieces")
    if name == "all_reduce":
        x = torch.ones(n)
        return x, x
    if name == "all_gather":
        return torch.ones(n // world), torch.empty(n)
    if name == "reduce_scatter":
        return torch.ones(n), torch.empty(n // world)
    raise ValueError(f"unknown collective {name!r}: use one of {COLLECTIVES}")


def call(name: str, x: torch.Tensor, out: torch.Tensor) -> None:
    """Run collective ``name`` on the buffers :func:`_collective` made."""
    if name == "all_reduce":
        dist.all_reduce(x)
        return
    with warnings.catch_warnings():  # torch 2.13 renames these (all_gather_single ...); keep the long-lived names
        warnings.simplefilter("ignore", FutureWarning)
        if name == "all_gather":
            dist.all_gather_into_tensor(out, x)
        else:
            dist.reduce_scatter_tensor(out, x)


def run_bytes(rank: int, world: int, pieces: tuple[int, ...]) -> dict:
    """One process: bytes it wrote to its sockets during each collective when it brings ``s`` float32
    of its own (all-gather: a vector of p·s; the others: of s), for each s of ``pieces``."""
    got = {}
    for name in COLLECTIVES:
        for s in pieces:
            x, out = _collective(name, s * world if name == "all_gather" else s, world)
            dist.barrier()
            w0 = bytes_written()
            call(name, x, out)
            got[(name, s)] = bytes_written() - w0
    return {"bytes": got}


def calls_per_timing(n: int, budget: int = 2**20) -> int:
    """Back-to-back calls timed together for an n-element vector: enough that small messages add up
    to about ``budget`` bytes (at most 64), so one late process leaving the barrier is shared out."""
    return max(1, min(64, budget // (4 * n)))


def run_timing(rank: int, world: int, sizes: tuple[int, ...], repeats: int, warmup: int) -> dict:
    """One process: seconds per collective call, (collective, size, repeat), the collectives and sizes
    interleaved within each repeat so that slow spells of the shared machine hit all of them; each
    entry is the mean of :func:`calls_per_timing` back-to-back calls after a barrier."""
    bufs = {(c, n): _collective(c, n, world) for c in COLLECTIVES for n in sizes}
    times = np.zeros((len(COLLECTIVES), len(sizes), repeats))
    for r in range(-warmup, repeats):
        for j, n in enumerate(sizes):
            k = calls_per_timing(n)
            for i, c in enumerate(COLLECTIVES):
                x, out = bufs[(c, n)]
                dist.barrier()
                t0 = time.perf_counter()
                for _ in range(k):
                    call(c, x, out)
                dt = (time.perf_counter() - t0) / k
                if r >= 0:
                    times[i, j, r] = dt
    return {"times": times}


# --------------------------------------------------------------------------- the alpha-beta fit


@dataclass(frozen=True)
class Fit:
    """t(n) = a + b·n fitted to median times (n: the vector's bytes); alpha and beta read through a
    ring's step counts."""

    a: float
    """Seconds at zero bytes (intercept)."""
    b: float
    """Seconds per byte of the vector (slope)."""
    alpha: float
    """Latency per ring step, a over the number of steps."""
    beta: float
    """Seconds per byte sent, b over the bytes each process sends per byte of the vector."""
    max_rel_resid: float
    """Largest |fit - median| / median over the sizes."""


def ring_counts(name: str, p: int) -> tuple[float, float]:
    """(ring steps, bytes each process sends per byte of the n-vector) of a ring collective (S10.ab):
    all-reduce 2(p-1) steps and 2(p-1)/p; all-gather and reduce-scatter p-1 steps and (p-1)/p."""
    if name == "all_reduce":
        return 2.0 * (p - 1), 2.0 * (p - 1) / p
    return float(p - 1), (p - 1) / p


def fit_alpha_beta(name: str, p: int, vector_bytes: np.ndarray, median_s: np.ndarray) -> Fit:
    """Least squares of t = a + b·n with each point weighted by 1/t (relative errors), so that the
    microsecond messages count as much as the 100-millisecond ones."""
    n = np.asarray(vector_bytes, dtype=float)
    t = np.asarray(median_s, dtype=float)
    w = 1.0 / t
    design = np.stack([np.ones_like(n), n], axis=1) * w[:, None]
    (a, b), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    steps, per_byte = ring_counts(name, p)
    resid = np.abs(a + b * n - t) / t
    return Fit(float(a), float(b), float(a / steps), float(b / per_byte), float(resid.max()))
