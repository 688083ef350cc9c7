"""The reproducibility arms (model/experiments/repro.py): how runs are paired and compared,
and that each arm trains what it says (a stopped and resumed stack, a child process with
other kernels)."""

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.repro import (
    ARMS,
    Arms,
    arm_measurements,
    finals,
    identical,
    max_abs_diff,
    rung_measurements,
    train_elsewhere,
    train_stack,
)
from model.train import TrainConfig, TrainResult

TINY = TrainConfig(steps=6, warmup=2, eval_every=3)


def result(val: float, weight: float) -> TrainResult:
    return TrainResult(
        model_config={},
        train_config={"lr": 0.1, "seed": 0},
        val_loss_init=4.0,
        val_loss_final=val,
        train_loss_final=val,
        steps=6,
        seconds=0.0,
        tokens_seen=0,
        state_dict={"w": torch.tensor([weight, 1.0])},
    )


def test_max_abs_diff_is_the_largest_paired_difference():
    assert max_abs_diff([2.0, 3.0, 4.0], [2.0, 3.5, 3.9]) == pytest.approx(0.5)
    assert max_abs_diff([2.0], [2.0]) == 0.0
    assert max_abs_diff(np.array([1.0, 2.0]), np.array([1.25, 2.0])) == 0.25


def test_max_abs_diff_counts_a_run_diverged_in_both_arms_as_equal_and_refuses_one_side_only():
    assert max_abs_diff([math.nan, 2.0], [math.nan, 2.5]) == 0.5
    assert max_abs_diff([math.nan], [math.nan]) == 0.0
    with pytest.raises(ValueError, match="finite on one side only"):
        max_abs_diff([2.0, math.nan], [2.0, 2.1])
    with pytest.raises(ValueError, match="pair"):
        max_abs_diff([2.0, 3.0], [2.0])


def test_identical_counts_runs_whose_weights_are_the_same_bits():
    a = [result(2.0, 0.5), result(2.1, 0.25)]
    assert identical(a, [result(2.0, 0.5), result(2.1, 0.25)]) == 2
    assert identical(a, [result(2.0, 0.5), result(2.1, np.nextafter(0.25, 1.0))]) == 1
    assert identical(a, [result(2.0, math.nan), result(2.1, 0.25)]) == 1  # NaN weights are never the same


def test_measurements_name_each_arm_and_per_rung_differences_follow_the_stack_order():
    stack = [result(v, 0.5) for v in (2.0, 2.1, 3.0, 3.4)]  # rates 0.01, 0.1 (rate-major) x seeds 0, 1
    moved = [result(v, 0.5) for v in (2.0, 2.1, 3.3, 3.0)]
    arms = Arms(stack, {arm: moved if arm == "kernels" else stack for arm in ARMS}, 2, "AVX2", "DEFAULT")
    m = arm_measurements("ch99.repro", arms, "a test stack")
    assert m["ch99.repro.runs"].value == 4 and m["ch99.repro.threads_used"].value == 2
    assert m["ch99.repro.same_stack_max_diff"].value == 0 and m["ch99.repro.same_stack_identical"].value == 4
    assert m["ch99.repro.kernels_max_diff"].value == pytest.approx(0.4)
    assert m["ch99.repro.kernels_identical"].value == 4  # the same weights, other losses: both are reported
    r = rung_measurements("ch99.repro", arms, [0.01, 0.1])
    assert r["ch99.repro.kernels_max_diff.r0"].value == 0
    assert r["ch99.repro.kernels_max_diff.r1"].value == pytest.approx(0.4)


def test_a_stack_stopped_and_resumed_in_chunks_ends_as_the_uninterrupted_one():
    corpus = load_corpus()
    runs = [replace(TINY, seed=s) for s in (0, 1)]
    whole = train_stack(ModelConfig(), runs, corpus)
    chunked = train_stack(ModelConfig(), runs, corpus, chunk=4)  # stops at 0, 4 and 6
    assert [r.steps for r in chunked] == [6, 6]
    assert identical(whole, chunked) == 2
    assert finals(whole).tolist() == finals(chunked).tolist()


def test_the_kernels_arm_trains_the_same_runs_in_a_child_with_other_kernels():
    corpus = load_corpus()
    runs = [replace(TINY, seed=s) for s in (0, 1)]
    here = train_stack(ModelConfig(), runs, corpus)
    same, capability = train_elsewhere(ModelConfig(), runs, corpus, env={})  # nothing changed but the process
    assert capability == torch.backends.cpu.get_cpu_capability()
    assert identical(here, same) == 2
    other, capability = train_elsewhere(ModelConfig(), runs, corpus)
    assert capability == "DEFAULT"
    assert max_abs_diff(finals(here), finals(other)) < 1e-5  # six steps: the last bits differ, no more
