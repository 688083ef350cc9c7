"""Ring attention (Liu, Zaharia, Abbeel 2023), forward: each process holds a contiguous chunk of
the sequence's queries, keys and values; the key/value chunks travel around the ring, one hop per
step, and each process folds every chunk it sees into its queries' softmax with the running
maximum and denominator (the online softmax), so no process ever holds the whole sequence's
keys. Causal: a query at global position t uses keys at positions s <= t only."""

from __future__ import annotations

import torch
import torch.distributed as dist


def ring_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rank: int, world: int,
                   scale: float) -> tuple[torch.Tensor, int]:  # fmt: skip
    """q, k, v (B, H, Tc, Dh): this process's chunk (positions rank*Tc ...). Returns its output
    chunk (B, H, Tc, Dh) and the bytes it sent."""
    Tc = q.shape[2]
    pos_q = rank * Tc + torch.arange(Tc)
    m = torch.full(q.shape[:3] + (1,), float("-inf"))  # running max of the scores
    den = torch.zeros(q.shape[:3] + (1,))  # running sum of exp(score - m)
    acc = torch.zeros_like(q)  # running sum of exp(score - m) * v
    kv = torch.stack([k, v]).contiguous()
    sent = 0
    for step in range(world):
        src = (rank - step) % world  # whose chunk kv is now
        pos_k = src * Tc + torch.arange(Tc)
        visible = pos_k[None, :] <= pos_q[:, None]  # (Tc, Tc)
        if visible.any():
            s = (q @ kv[0].transpose(-2, -1)) * scale  # (B, H, Tc, Tc)
            s = s.masked_fill(~visible, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            shrink = torch.exp(m - m_new)
            den = den * shrink + p.sum(-1, keepdim=True)
            acc = acc * shrink + p @ kv[1]
            m = m_new
        if step < world - 1:  # pass the chunk on: send to the next process, receive from the previous
            nxt = torch.empty_like(kv)
            reqs = [dist.isend(kv, (rank + 1) % world), dist.irecv(nxt, (rank - 1) % world)]
            for r in reqs:
                assert r is not None
                r.wait()
            sent += kv.numel() * kv.element_size()
            kv = nxt
    return acc / den, sent


def run_ring(rank: int, world: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> dict:
    """One process: its chunk of the whole sequence's (B, H, T, Dh) q, k, v through ring attention."""
    Tc = q.shape[2] // world
    part = slice(rank * Tc, (rank + 1) * Tc)
    out, sent = ring_attention(q[:, :, part], k[:, :, part], v[:, :, part], rank, world, scale)
    return {"out": out, "sent": sent}
