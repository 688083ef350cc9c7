"""The ring all-reduce stepped by hand, in plain NumPy: what components/ring-allreduce.js shows.

p workers each hold a vector of n numbers, cut into p chunks (``np.array_split`` sizes: the
first n mod p chunks one longer). Reduce-scatter, p-1 steps: at step s worker w sends its
chunk (w - s) mod p to worker w+1, which adds it to its own; afterwards worker w holds the
whole sum of chunk (w + 1) mod p. All-gather, p-1 more steps: at step s worker w sends chunk
(w + 1 - s) mod p to w+1, which overwrites its copy. Every worker sends one chunk per step,
so each sends 2(p-1) chunks: 2(p-1)/p·n numbers when p divides n (Patarasuk & Yuan 2009).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Transfer:
    """One chunk moving one hop round the ring."""

    src: int
    dst: int
    chunk: int
    elements: int


@dataclass(frozen=True)
class Step:
    """One step of the ring: every worker sends one chunk to the next."""

    phase: str
    """"reduce-scatter" or "all-gather"."""
    transfers: tuple[Transfer, ...]
    sent: tuple[int, ...]
    """Elements each worker has sent so far, after this step."""
    vectors: tuple[np.ndarray, ...]
    """Each worker's vector after this step."""


def chunk_bounds(n: int, p: int) -> list[tuple[int, int]]:
    """[start, end) of each of the p chunks of an n-vector, np.array_split's sizes."""
    if p < 1 or n < p:
        raise ValueError(f"a ring of {p} workers needs at least one element per chunk (n = {n})")
    base, extra = divmod(n, p)
    bounds, start = [], 0
    for c in range(p):
        size = base + (c < extra)
        bounds.append((start, start + size))
        start += size
    return bounds


def initial_vectors(p: int, n: int) -> list[np.ndarray]:
    """The component's starting vectors: worker w's element j is (w + 1) · (j + 1), small whole numbers."""
    j = np.arange(1, n + 1, dtype=np.float64)
    return [(w + 1) * j for w in range(p)]


def ring_allreduce(vectors: list[np.ndarray]) -> list[Step]:
    """Every step of a ring all-reduce of ``vectors`` (one per worker, equal lengths)."""
    p = len(vectors)
    n = int(vectors[0].size)
    if any(v.shape != (n,) for v in vectors):
        raise ValueError("every worker's vector must have the same length")
    bounds = chunk_bounds(n, p)
    state = [np.array(v, dtype=np.float64) for v in vectors]
    sent = [0] * p
    steps: list[Step] = []
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(p - 1):
            moves = []
            outgoing = []
            for w in range(p):
                c = (w - s) % p if phase == "reduce-scatter" else (w + 1 - s) % p
                lo, hi = bounds[c]
                moves.append(Transfer(w, (w + 1) % p, c, hi - lo))
                outgoing.append(state[w][lo:hi].copy())  # all sends of a step happen at once
            for t, data in zip(moves, outgoing, strict=True):
                lo, hi = bounds[t.chunk]
                if phase == "reduce-scatter":
                    state[t.dst][lo:hi] += data
                else:
                    state[t.dst][lo:hi] = data
                sent[t.src] += t.elements
            steps.append(Step(phase, tuple(moves), tuple(sent), tuple(v.copy() for v in state)))
    return steps


def bytes_per_worker(n: int, p: int, bytes_per: int = 4) -> float:
    """2(p-1)/p · n · bytes: what each worker of a ring all-reduce sends (S10.ring)."""
    return 2 * (p - 1) / p * n * bytes_per
