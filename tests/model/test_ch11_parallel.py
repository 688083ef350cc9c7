"""Chapter 11's parallel code: the 2-process pipeline and tensor split give the single process's
gradients, ring attention gives full attention, the byte counts follow their formulas, and the
systems model's inputs are the numbers results/cited.yaml shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from model import systems
from model.data import load_corpus, sample_batch
from model.decoder import Decoder, ModelConfig
from model.parallel import comm, launch
from model.parallel.ring import run_ring
from model.parallel.stages import PipeJob, run_stage
from model.parallel.tensor import run_tp

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def batch():
    cfg = ModelConfig(n_layers=2)
    idx, tgt = sample_batch(load_corpus().train, 16, cfg.context, torch.Generator().manual_seed(3))
    return cfg, idx, tgt


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_two_stage_pipeline_gradients_equal_the_single_process(batch, schedule):
    cfg, idx, tgt = batch
    res = launch.run(run_stage, 2, PipeJob(cfg, 3, schedule, (1, 4), 1, 0, idx, tgt))
    ref = Decoder(cfg, torch.Generator().manual_seed(3))
    ref.loss(idx, tgt).backward()
    for m in (1, 4):
        got = {**res[0]["grads"][m], **res[1]["grads"][m]}
        assert sorted(got) == sorted(n for n, _ in ref.named_parameters())
        for name, p in ref.named_parameters():
            assert p.grad is not None
            np.testing.assert_allclose(got[name], p.grad.numpy(), rtol=0, atol=1e-6)
        held = [res[r]["records"][m][0].peak_held for r in (0, 1)]
        assert held == ([m, m] if schedule == "gpipe" else [min(2, m), 1])


def test_tensor_split_equals_the_unsplit_decoder_and_counts_its_all_reduces(batch):
    cfg, idx, tgt = batch
    for r in launch.run(run_tp, 2, cfg, 3, idx, tgt):
        assert r["logit_diff"] < 1e-6 and r["grad_diff"] < 1e-7 and r["grad_scale"] > 1e-3
        assert (r["forward"], r["backward"]) == (2 * cfg.n_layers, 2 * cfg.n_layers)
        assert r["elements"] == 4 * cfg.n_layers * idx.numel() * cfg.d_model


def test_ring_attention_equals_full_causal_attention():
    cfg = ModelConfig()
    model = Decoder(cfg, torch.Generator().manual_seed(1))
    idx, _ = sample_batch(load_corpus().train, 4, cfg.context, torch.Generator().manual_seed(1))
    q, k, v, full = comm.qkv_and_attention(model, idx)
    res = launch.run(run_ring, 2, q, k, v, cfg.attn_scale)
    out = np.concatenate([r["out"] for r in res], axis=2)
    assert np.abs(out - full.numpy()).max() < 1e-6
    assert np.abs(full.numpy()[:, :, 1:] - full.numpy()[:, :, :1]).max() > 1e-4  # positions differ: not trivially equal
    assert all(r["sent"] == 2 * q.numel() // 2 * 4 for r in res)


def test_byte_counts_follow_the_ring_formulas():
    s = comm.Shape("x", hidden=8, seq=4, batch=2, bytes_per=2)
    assert comm.activation_bytes(s) == 128
    assert comm.tp_bytes(s, 2) == comm.sp_bytes(s, 2) == 4 * 128
    assert comm.cp_bytes(s, 4) == 3 * 2 * 128 / 4
    assert comm.ep_bytes(s, 4, 2) == 2 * 2 * 0.75 * 128


def test_systems_model_arithmetic():
    run = systems.Run("x", 1e9, 1e10, "A100", 100, mfu=(0.5, 0.5), chip_hours=2 * 6e19 / (312e12 * 0.5) / 3600)
    p = systems.predict(run)
    assert p.flops == 6e19 and p.kind == "predicted"
    assert p.predicted_chip_hours is not None and abs(p.predicted_chip_hours[0] - 6e19 / 156e12 / 3600) < 1e-9
    assert p.published_over_predicted is not None and abs(p.published_over_predicted[0] - 2) < 1e-12
    assert p.implied_mfu is not None and abs(p.implied_mfu - 0.25) < 1e-12
    assert systems.slug("Llama 3.1 405B") == "llama_31_405b"


def test_the_systems_inputs_are_the_cited_numbers():
    cited = {n["key"]: float(n["value"]) for n in yaml.safe_load((ROOT / "results/cited.yaml").read_text())["numbers"]}
    runs = {r.name: r for r in systems.RUNS}
    pairs = [
        (runs["GPT-3"].mfu[0] * 100, "ch11.runs.gpt3.mfu"), (runs["GPT-3"].days, "ch11.runs.gpt3.days"),
        (runs["GPT-3"].chips, "ch11.runs.gpt3.chips"), (runs["Gopher"].mfu[0] * 100, "ch11.runs.gopher.mfu"),
        (runs["Gopher"].days * 24, "ch11.runs.gopher.hours"), (runs["MT-NLG"].mfu[0] * 100, "ch11.runs.mtnlg.mfu"),
        (runs["PaLM"].mfu[0] * 100, "ch11.runs.palm.mfu"),
        (runs["PaLM"].chip_hours, 6144 * cited["ch11.runs.palm.hours"] + 3072 * cited["ch11.runs.palm.hours2"]),
        (runs["OPT-175B"].mfu[0] * systems.PEAKS["A100"] / 1e12, "ch11.runs.opt.tflops"),
        (runs["OPT-175B"].days / (365.25 / 12), "ch11.runs.opt.months"),
        (runs["BLOOM"].mfu[0] * systems.PEAKS["A100"] / 1e12, "ch11.runs.bloom.tflops"),
        (runs["BLOOM"].chip_hours / 1e6, "ch11.runs.bloom.gpu_hours"),
        (runs["LLaMA-65B"].tokens_per_chip_s, "ch11.runs.llama65.tok_s"),
        (runs["LLaMA-65B"].chip_hours / 1e6, "ch11.runs.llama65.gpu_hours"),
        (runs["Llama 2 70B"].chip_hours / 1e6, "ch11.runs.llama2.gpu_hours"),
        (runs["Llama 3.1 405B"].mfu[0] * 100, "ch11.runs.llama31.mfu_lo"),
        (runs["Llama 3.1 405B"].mfu[1] * 100, "ch11.runs.llama31.mfu_hi"),
        (runs["Llama 3.1 405B"].chip_hours / 1e6, "ch11.runs.llama31.gpu_hours"),
        (runs["DeepSeek-V3"].chip_hours / 1e6, "ch11.runs.dsv3.gpu_hours"),
        (runs["DeepSeek-V3"].params / 1e9, "ch11.runs.dsv3.active"),
        (runs["Falcon-180B"].chip_hours / 1e6, "ch11.runs.falcon.gpu_hours"),
    ]  # fmt: skip
    for chip, key in (("V100", "v100"), ("TPU v3", "tpu_v3"), ("A100", "a100"), ("TPU v4", "tpu_v4"), ("H100", "h100")):
        pairs.append((systems.PEAKS[chip] / 1e12, f"ch11.peak.{key}"))
    for ours, key in pairs:
        want = cited[key] if isinstance(key, str) else key
        assert ours == pytest.approx(want, rel=1e-9), key
