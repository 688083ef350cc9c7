"""Chapter 10's data-parallel code: the NumPy ring sums and counts its bytes, the alpha-beta fit recovers
known constants, the hand ring equals all_reduce and writes the ring's bytes, p processes train as one
(and the comparison catches a missing division by p), and ZeRO-1 and FSDP hold less than DDP with its
losses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import collectives as co
from model import dataparallel as dp
from model import ring
from model.data import load_corpus, sample_batch
from model.decoder import ModelConfig
from model.parallel import launch


@pytest.mark.parametrize("p", [2, 3, 5, 8])
@pytest.mark.parametrize("n", [8, 13, 40])
def test_numpy_ring_ends_at_the_sum_and_sends_the_ring_bytes(p, n):
    if n < p:
        pytest.skip("fewer elements than workers")
    vectors = ring.initial_vectors(p, n)
    steps = ring.ring_allreduce(vectors)
    assert len(steps) == 2 * (p - 1)
    total = np.sum(vectors, axis=0)
    assert all(np.array_equal(v, total) for v in steps[-1].vectors)
    assert sum(steps[-1].sent) == 2 * (p - 1) * n
    if n % p == 0:
        assert all(4 * s == ring.bytes_per_worker(n, p) for s in steps[-1].sent)
    # after the reduce-scatter, worker w owns the whole sum of chunk (w + 1) mod p
    lo_hi = ring.chunk_bounds(n, p)
    for w, v in enumerate(steps[p - 2].vectors):
        lo, hi = lo_hi[(w + 1) % p]
        assert np.array_equal(v[lo:hi], total[lo:hi])


def test_chunk_bounds_reject_more_workers_than_elements():
    with pytest.raises(ValueError, match="at least one element per chunk"):
        ring.chunk_bounds(3, 4)


def test_alpha_beta_fit_recovers_known_constants():
    n = np.array([2.0**k for k in range(10, 27, 3)])
    p, alpha, beta = 4, 50e-6, 1e-9
    steps, per_byte = co.ring_counts("all_reduce", p)
    t = steps * alpha + per_byte * n * beta
    fit = co.fit_alpha_beta("all_reduce", p, n, t)
    assert fit.alpha == pytest.approx(alpha, rel=1e-6) and fit.beta == pytest.approx(beta, rel=1e-6)
    assert fit.max_rel_resid < 1e-9
    bent = t * (1 + 0.3 * (n > 2**20))  # a kink the line cannot follow: the residual must show it
    assert co.fit_alpha_beta("all_reduce", p, n, bent).max_rel_resid > 0.05


def test_hand_ring_equals_all_reduce_and_writes_the_ring_bytes():
    n = 3000
    got = launch.run(co.run_ring, 3, (n,), (0,), (1200,))
    for g in got:
        r = g["checks"][(n, 0)]
        assert r["diff"] < 1e-12 * r["scale"]
        assert r["sent"] == 2 * 2 * n // 3
        assert 1.0 <= r["wire_hand"] / (r["sent"] * 8) < 1.2
        assert g["bytes"][("all_gather", 1200)] >= 2 * 1200 * 4  # p - 1 pieces of 1200 float32


@pytest.fixture(scope="module")
def jobs():
    cfg = ModelConfig()
    gen = torch.Generator().manual_seed(5)
    batches = tuple(sample_batch(load_corpus().train, 8, cfg.context, gen) for _ in range(3))
    return (dp.DPJob(cfg, 5, batches, 1e-2),)


def test_two_processes_train_as_one_and_a_missing_division_is_caught(jobs):
    ref = dp.single(jobs[0])
    got = launch.run(dp.run_exact, 2, jobs, ("ddp", "hand", "hand_sum"))
    for rank in got:
        for mode, tol in (("ddp", 1e-4), ("hand", 1e-4)):  # Adam magnifies last-bit differences
            run = rank[mode][0]
            assert max(np.abs(run["weights"][k] - ref["weights"][k]).max() for k in ref["weights"]) < tol
        wrong = rank["hand_sum"][0]
        assert max(np.abs(wrong["grads"][k] - ref["grads"][k]).max() for k in ref["grads"]) > 1e-3


def test_zero1_and_fsdp_hold_less_and_follow_ddp(jobs):
    got = launch.run(dp.run_sharded, 2, jobs, ("ddp", "zero1", "fsdp"))
    psi = got[0]["ddp"][0]["n_params"]
    for rank in got:
        ddp, z1, fsdp = (rank[m][0] for m in ("ddp", "zero1", "fsdp"))
        assert ddp["moment_bytes"] == 8 * psi and ddp["param_bytes"] == ddp["grad_bytes"] == 4 * psi
        assert z1["param_bytes"] == 4 * psi and 0 < z1["moment_bytes"] < 8 * psi
        assert fsdp["param_bytes"] <= 4 * psi // 2 + 64 and fsdp["moment_bytes"] <= 8 * psi // 2 + 128
        assert np.abs(z1["loss"] - ddp["loss"]).max() < 1e-5 and np.abs(fsdp["loss"] - ddp["loss"]).max() < 1e-5
    assert sum(r["zero1"][0]["moment_bytes"] for r in got) == 8 * psi


def test_model_flops_per_token_is_palms_formula():
    cfg = ModelConfig(d_model=32, n_layers=2, n_heads=4, context=16)
    assert dp.model_flops_per_token(cfg, 1000) == 6000 + 12 * 2 * 4 * 8 * 16
