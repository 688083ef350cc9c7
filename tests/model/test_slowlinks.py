"""Chapter 12's slow-link code: the compressors keep what they should, error feedback loses
nothing, DeMo's transform inverts, the byte counts follow their formulas, the one-process
simulation equals the real 4-process run, and the queue simulations meet their formulas."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from model.parallel import launch
from model.slowlinks import compress as cz
from model.slowlinks import queueing as qu
from model.slowlinks.real import RealJob, run_worker
from model.slowlinks.workers import Local, Method, Setup, param_count, train_workers

TINY = Setup(steps=10, eval_every=5, warmup=2)


def test_top_k_keeps_the_largest_magnitudes():
    v = torch.tensor([[0.1, -3.0, 2.0, -0.5, 4.0, 0.0]])
    values, idx = cz.top_k(v, 3)
    assert idx.tolist() == [[1, 2, 4]]
    assert values.tolist() == [[-3.0, 2.0, 4.0]]


def test_error_feedback_loses_nothing():
    g = torch.randn(2, 3, 500, generator=torch.Generator().manual_seed(0))
    memory = torch.randn(2, 3, 500, generator=torch.Generator().manual_seed(1))
    before = memory + g
    values, idx = cz.topk_compress(g, 20, memory)
    sent = torch.zeros_like(g).scatter_(-1, idx, values)
    assert torch.equal(sent + memory, before)  # what was sent plus what is kept is all of it
    assert int((memory.gather(-1, idx) != 0).sum()) == 0
    assert int((sent != 0).sum(-1).max()) == 20


def test_without_feedback_the_rest_is_dropped():
    g = torch.randn(1, 1, 100, generator=torch.Generator().manual_seed(2))
    values, idx = cz.topk_compress(g.clone(), 10, None)
    assert values.shape == (1, 1, 10)
    assert torch.equal(values, g.gather(-1, idx))


def test_dct_is_orthonormal_and_demo_subtracts_what_it_sends():
    d = cz.dct_matrix(64)
    assert torch.allclose(d @ d.T, torch.eye(64), atol=1e-5)
    delta = torch.randn(2, 1, 200, generator=torch.Generator().manual_seed(3))
    before = delta.clone()
    values, idx = cz.demo_compress(delta, d, 4)
    assert values.shape == (2, 1, cz.chunks(200, 64) * 4)
    sent = cz.demo_decode(values, idx, d, 200)  # one worker: the decoded sum is what it sent
    assert torch.allclose(sent + delta[:, 0], before[:, 0], atol=1e-5)
    full = before.clone()
    cz.demo_compress(full, d, 64)  # every coefficient sent: nothing is left
    assert float(full.abs().max()) < 1e-5


def test_byte_formulas():
    assert cz.allreduce_bytes(1000, 4) == 2 * 3 / 4 * 1000 * 4
    assert cz.allgather_bytes(80, 4) == 240
    P = param_count(TINY.model)
    rec = train_workers(Method("topk", k_frac=0.01), TINY, [1e-2], [0], range(4), Local(4))
    k = round(0.01 * P)
    assert rec.bytes_per_worker[-1] == TINY.steps * 3 * k * cz.ENTRY_BYTES
    rec = train_workers(Method("diloco", H=5), TINY, [1e-2], [0], range(4), Local(4))
    assert rec.bytes_per_worker[-1] == 2 * cz.allreduce_bytes(P, 4)  # two syncs in 10 steps


def test_workers_send_different_supports():
    rec = train_workers(Method("topk", k_frac=0.01, feedback=True), TINY, [1e-2], [0], range(4), Local(4))
    assert rec.union > 1.5  # the 4 workers' positions are far from the same k
    assert rec.common < 0.5


def test_simulation_equals_four_real_processes():
    methods = (Method("dense"), Method("topk", k_frac=0.01, feedback=True), Method("demo", chunk_k=4),
               Method("diloco", H=5))  # fmt: skip
    jobs = tuple(RealJob(m, TINY, (1e-2,), (1,)) for m in methods)
    res = launch.run(run_worker, 4, jobs)
    for j, job in enumerate(jobs):
        sim = train_workers(job.method, TINY, job.lrs, job.seeds, range(4), Local(4))
        real = np.asarray(res[0][j]["theta"])
        assert all(np.array_equal(np.asarray(r[j]["theta"]), real) for r in res)
        diff = float(np.abs(real - sim.theta.numpy()).max())
        if job.method.kind in ("topk", "demo"):  # all-gather, then the same sum in rank order
            assert diff == 0.0, job.method.name
        else:  # gloo's all-reduce adds in its own order
            assert diff < 1e-4, job.method.name
        assert res[0][j]["sent"] == sim.bytes_per_worker


def test_diloco_sync_makes_the_workers_agree_and_rejects_a_bad_h():
    with pytest.raises(ValueError, match="must divide"):
        train_workers(Method("diloco", H=3), TINY, [1e-2], [0], range(4), Local(4))


def test_straggler_step_meets_the_max_of_exponentials():
    r = qu.simulate_sync(8, 0.25, 1, 20_000, random.Random(0))
    assert abs(r.per_step / qu.sync_step_formula(8, 0.25) - 1) < 0.01
    assert qu.simulate_sync(1, 0.25, 1, 1000, random.Random(0)).idle == 0.0
    slow = qu.simulate_sync(8, 0.25, 100, 200, random.Random(0))
    assert slow.idle < r.idle / 3  # syncing every 100 steps waits far less


def test_md1_wait_meets_pollaczek_khinchine_and_halves_mm1():
    md1 = qu.simulate_queue(0.5, 100_000, random.Random(0))
    mm1 = qu.simulate_queue(0.5, 100_000, random.Random(0), deterministic=False)
    assert abs(md1 / qu.md1_wait(0.5) - 1) < 0.05
    assert abs(mm1 / qu.mm1_wait(0.5) - 1) < 0.1
    with pytest.raises(ValueError):
        qu.md1_wait(1.0)


def test_link_arithmetic_uses_the_bytes_the_workers_count():
    from model.experiments.ch12_slowlinks import bytes_per_step

    P = param_count(TINY.model)
    for method in (Method("dense"), Method("topk", k_frac=0.1), Method("demo", chunk_k=4), Method("diloco", H=5)):
        rec = train_workers(method, TINY, [1e-2], [0], range(4), Local(4))
        assert rec.bytes_per_worker[-1] == pytest.approx(TINY.steps * bytes_per_step(method, P, 4), rel=1e-12)
