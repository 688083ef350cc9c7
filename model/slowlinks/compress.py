"""What a worker sends instead of its whole gradient, and how the receivers rebuild it.

Every tensor has the worker's flat weights (or a chunked view of them) last; leading axes
are runs and workers. A kept entry travels as a float32 value and an int32 position: 8 bytes.

- top-k: the k entries of largest magnitude (Stich, Cordonnier, Jaggi 2018, with memory:
  what was not sent is added to the next step's vector, ``error feedback``);
- DeMo (Peng, Quesnelle, Kingma 2024): the worker's momentum, cut into chunks, each chunk's
  discrete cosine transform, its k largest coefficients sent and subtracted from the momentum.
  The reference code cuts each weight matrix into 2-D chunks; here the flat weight vector is cut
  into 1-D chunks (the Decoder's matrices are 16 wide, narrower than one chunk).

Different workers keep different positions, so the sparse vectors cannot be summed on the way
(an all-reduce adds aligned dense arrays): every worker's (values, positions) is gathered by
every other worker, ``(W - 1) x payload`` bytes sent per worker, and each sums them locally.
"""

from __future__ import annotations

import math

import torch

VALUE_BYTES = 4  # float32 value
INDEX_BYTES = 4  # int32 position
ENTRY_BYTES = VALUE_BYTES + INDEX_BYTES


def allreduce_bytes(n: int, workers: int, bytes_per: int = VALUE_BYTES) -> float:
    """Bytes each worker sends in a ring all-reduce of n numbers: 2 (W-1)/W n."""
    return 2 * (workers - 1) / workers * n * bytes_per


def allgather_bytes(payload: float, workers: int) -> float:
    """Bytes each worker sends when every worker gathers every other's payload: (W-1) payload."""
    return (workers - 1) * payload


def top_k(v: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k entries of largest magnitude along the last axis: (values, positions), positions
    ascending (so the result does not depend on how torch.topk orders ties of rank)."""
    idx = v.abs().topk(k, dim=-1, sorted=False).indices.sort(dim=-1).values
    return v.gather(-1, idx), idx


def scatter_sum(values: torch.Tensor, idx: torch.Tensor, size: int) -> torch.Tensor:
    """Sum of the workers' sparse vectors: values, idx (..., W, k) -> dense (..., size), added
    worker 0 first, then 1, ... (the same order in every process)."""
    out = values.new_zeros(values.shape[:-2] + (size,))
    for w in range(values.shape[-2]):
        out.scatter_add_(-1, idx[..., w, :], values[..., w, :])
    return out


def topk_compress(g: torch.Tensor, k: int, memory: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The payload of top-k of g (..., P); with error feedback, of g + memory, and memory
    becomes what was not sent (in place): the values and positions."""
    acc = g if memory is None else memory.add_(g)
    values, idx = top_k(acc, k)
    if memory is not None:
        memory.scatter_(-1, idx, 0.0)
    return values, idx


def support_overlap(idx: torch.Tensor, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For the workers' positions idx (..., W, k): how many distinct positions they send
    together (the union) and how many every worker sends (the intersection), each (...)."""
    counts = torch.zeros(idx.shape[:-2] + (size,))
    for w in range(idx.shape[-2]):
        counts.scatter_add_(-1, idx[..., w, :], torch.ones(idx.shape[:-2] + (idx.shape[-1],)))
    return (counts > 0).sum(-1), (counts == idx.shape[-2]).sum(-1)


def dct_matrix(n: int) -> torch.Tensor:
    """The orthonormal DCT-II matrix (n, n): row j is the j-th cosine; its inverse is its transpose."""
    i = torch.arange(n, dtype=torch.float64)
    d = torch.cos(math.pi * (i[None, :] + 0.5) * i[:, None] / n) * math.sqrt(2.0 / n)
    d[0] /= math.sqrt(2.0)
    return d.float()


def chunks(size: int, chunk: int) -> int:
    """Chunks of ``chunk`` entries that cover ``size`` (the last is zero-padded)."""
    return -(-size // chunk)


def demo_compress(delta: torch.Tensor, dct: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """DeMo's payload from the momentum delta (..., P): each chunk's DCT, its k largest
    coefficients (values, positions within the whole coefficient vector, (..., C*k)); the
    part sent (their inverse transform) is subtracted from delta in place."""
    n = dct.shape[0]
    P = delta.shape[-1]
    C = chunks(P, n)
    padded = torch.nn.functional.pad(delta, (0, C * n - P)).view(delta.shape[:-1] + (C, n))
    coeffs = padded @ dct.T  # (..., C, n)
    values, pos = top_k(coeffs, k)  # (..., C, k)
    sent = torch.zeros_like(coeffs).scatter_(-1, pos, values) @ dct  # back to weights, (..., C, n)
    delta.sub_(sent.reshape(delta.shape[:-1] + (C * n,))[..., :P])
    offset = torch.arange(C)[:, None] * n
    return values.flatten(-2), (pos + offset).flatten(-2)


def demo_decode(values: torch.Tensor, idx: torch.Tensor, dct: torch.Tensor, size: int) -> torch.Tensor:
    """The workers' coefficients (..., W, C*k) summed and transformed back: (..., size)."""
    n = dct.shape[0]
    C = chunks(size, n)
    coeffs = scatter_sum(values, idx, C * n).view(values.shape[:-2] + (C, n))
    return (coeffs @ dct).flatten(-2)[..., :size]
