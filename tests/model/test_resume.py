"""model/resume.py: a child job killed with SIGKILL resumes from its checkpoint bit for bit, and a
checkpoint with a part left out does not."""

from __future__ import annotations

import torch

from model.resume import PARTS, kill_at, resume_without, runs_for, train_stack, without
from model.train import load_checkpoint


def _theta(result) -> torch.Tensor:
    return torch.cat([v.flatten() for v in result.state_dict.values()])


def test_a_killed_job_resumes_bit_for_bit_and_a_partial_checkpoint_does_not(tmp_path):
    runs = runs_for(steps=40, lr=2e-2, seeds=(0, 1), eval_every=10)
    ref = [_theta(r) for r in train_stack(runs)]
    ck = tmp_path / "job.pt"
    reported = kill_at(ck, runs, 23)
    saved = load_checkpoint(ck)["step"]
    assert 23 <= reported < 40 and saved % 10 == 0 and 0 < saved <= reported
    whole = resume_without(ck, None, runs, tmp_path)
    assert all(torch.equal(_theta(r), t) for r, t in zip(whole, ref, strict=True))
    for part in ("moments", "step"):
        partial = resume_without(ck, part, runs, tmp_path)
        assert not any(torch.equal(_theta(r), t) for r, t in zip(partial, ref, strict=True)), part


def test_without_resets_only_its_part(tmp_path):
    runs = runs_for(steps=20, lr=2e-2, seeds=(0,), eval_every=10)
    ck = tmp_path / "c.pt"
    train_stack(runs, checkpoint=ck)
    state = load_checkpoint(ck)
    for part in PARTS:
        out = without(state, part, runs)
        assert torch.equal(out["theta"], state["theta"])
        assert (out["optimizer"]["t"] == 0) == (part in ("step", "all_but_weights"))
        zeroed = not out["optimizer"]["exp_avg"].any()
        assert zeroed == (part in ("moments", "all_but_weights"))
        fresh = out["batches"]["k"] == state["batches"]["starts"].shape[1]
        assert fresh == (part in ("data", "position", "all_but_weights"))
        reseeded = not torch.equal(out["batches"]["gens"][0], state["batches"]["gens"][0])
        assert reseeded == (part in ("data", "rng", "all_but_weights"))
    assert state["optimizer"]["t"] == 20  # the original is untouched
