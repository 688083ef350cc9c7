"""Chapter 10, data parallelism: the numbers deck 10 shows.

- ``ch10.exact``: p = 2 and 4 processes, each with 1/p of the batch, against one process with the
  whole batch: DDP and a hand-written all-reduce loop, and the loop without its division by p;
- ``ch10.ring``: the ring in NumPy (model/ring.py) on a grid; the ring written with send/recv against
  ``dist.all_reduce``; the bytes gloo's collectives write to their sockets against what each
  process brings (payload against wire);
- ``ch10.timing``: all-reduce, all-gather and reduce-scatter timed from 1 KB to 64 MB at p = 2 and 4
  with alpha and beta fitted; step time with DDP's overlapped buckets and without, and the MFU
  against a matmul timed in the same processes (run under both compute locks);
- ``ch10.zero``: plain DDP, ZeRO-1 and FSDP: the bytes each process holds and the loss trajectory.

Every process runs one thread; 2 and 4 processes share this machine's 2 cores over loopback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from model import collectives as co
from model import dataparallel as dp
from model import ring
from model.data import load_corpus, sample_batch
from model.decoder import ModelConfig
from model.experiments.common import exact
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.parallel import launch

SEEDS = (0, 1, 2)


def _batches(model: ModelConfig, batch: int, steps: int, seed: int) -> tuple[dp.Batch, ...]:
    corpus = load_corpus()
    gen = torch.Generator().manual_seed(1000 + seed)
    return tuple(sample_batch(corpus.train, batch, model.context, gen) for _ in range(steps))


def _max_diff(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    if sorted(a) != sorted(b):
        raise RuntimeError(f"the runs returned different parameters: {sorted(a)} and {sorted(b)}")
    return max(float(np.abs(a[k] - b[k]).max()) for k in a)


# --------------------------------------------------------------------------- exactness


@dataclass(frozen=True)
class Exact:
    model: ModelConfig = field(default_factory=ModelConfig)
    worlds: tuple[int, ...] = (2, 4)
    batch: int = 32
    steps: int = 10
    lr: float = 1e-2
    n_seeds: int = 3


@experiment("ch10.exact", config=Exact(), seeds=SEEDS, quick={"steps": 2, "n_seeds": 1, "worlds": (2,)})
def exactness(ctx: RunContext) -> Outcome:
    """p processes with B/p windows each against one with B: gradients and weights after k steps."""
    cfg: Exact = ctx.config
    seeds = ctx.seeds[: cfg.n_seeds]
    jobs = tuple(dp.DPJob(cfg.model, s, _batches(cfg.model, cfg.batch, cfg.steps, s), cfg.lr) for s in seeds)
    refs = [dp.single(j) for j in jobs]
    scale = max(float(np.abs(g).max()) for r in refs for g in r["grads"].values())
    worst: dict[str, list[float]] = {m: [0.0, 0.0] for m in ("ddp", "hand", "hand_sum")}
    for i, world in enumerate(cfg.worlds):
        ctx.report_progress(i / len(cfg.worlds), f"{world} processes")
        by_rank = launch.run(dp.run_exact, world, jobs, tuple(worst))
        for mode in worst:
            for rank_out in by_rank:
                for got, ref in zip(rank_out[mode], refs, strict=True):
                    worst[mode][0] = max(worst[mode][0], _max_diff(got["grads"], ref["grads"]))
                    worst[mode][1] = max(worst[mode][1], _max_diff(got["weights"], ref["weights"]))
    k = "ch10.exact"
    meas: dict[str, Measurement] = {}
    for mode, what in (("ddp", "DDP"), ("hand", "the hand-written all-reduce loop"),
                       ("hand_sum", "the loop without dividing by p (ablation)")):  # fmt: skip
        meas[f"{k}.{mode}.grad"] = exact(
            worst[mode][0], "", f"largest |p processes - one| first-step gradient, {what}", 2
        )
        meas[f"{k}.{mode}.weight"] = exact(
            worst[mode][1], "", f"largest |p processes - one| weight after the last step, {what}", 2
        )
    meas[f"{k}.grad_scale"] = exact(scale, "", "largest first-step gradient element of the one-process runs", 2)
    meas[f"{k}.steps"] = exact(cfg.steps, "steps", "AdamW steps compared")
    meas[f"{k}.batch"] = exact(cfg.batch, "windows", "the whole batch B")
    meas[f"{k}.lr"] = exact(cfg.lr, "", "learning rate of the comparison (AdamW, no weight decay)", 2)
    meas[f"{k}.seeds"] = exact(len(seeds), "seeds", "seeds compared")
    meas[f"{k}.max_world"] = exact(max(cfg.worlds), "processes", "most processes")
    return Outcome(meas, {})


# --------------------------------------------------------------------------- the ring and its bytes


@dataclass(frozen=True)
class Ring:
    grid_p: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8)
    grid_n: tuple[int, ...] = (8, 12, 24, 60, 64, 1000)
    worlds: tuple[int, ...] = (2, 3, 4)
    hand_n: tuple[int, ...] = (1000, 65536)  # float64 elements for the send/recv ring
    piece: int = 196608  # float32 elements each process brings in the bytes count (0.75 MiB; p = 2, 3, 4 divide it)
    curve_n: int = 64  # the figure's vector


@experiment("ch10.ring", config=Ring(), seeds=SEEDS,
            quick={"worlds": (2,), "hand_n": (1000,), "piece": 1200, "grid_p": (2, 4)})  # fmt: skip
def ring_bytes(ctx: RunContext) -> Outcome:
    """The ring in NumPy on a grid, the ring by send/recv against all_reduce, and gloo's wire bytes."""
    cfg: Ring = ctx.config
    meas: dict[str, Measurement] = {}
    # NumPy: every worker ends with the sum; each sends 2(p-1)/p n when p divides n
    cases = divisible = 0
    worst_sum = worst_bytes = 0.0
    for p in cfg.grid_p:
        for n in cfg.grid_n:
            if n < p:
                continue
            vectors = ring.initial_vectors(p, n)
            steps = ring.ring_allreduce(vectors)
            total = np.sum(vectors, axis=0)
            worst_sum = max(worst_sum, max(float(np.abs(v - total).max()) for v in steps[-1].vectors))
            if sum(steps[-1].sent) != 2 * (p - 1) * n:
                raise RuntimeError(f"the ring sent {sum(steps[-1].sent)} elements in all at p={p}, n={n}")
            if n % p == 0:
                divisible += 1
                worst_bytes = max(worst_bytes, max(abs(s * 4 - ring.bytes_per_worker(n, p)) for s in steps[-1].sent))
            cases += 1
    meas["ch10.ring.np.cases"] = exact(cases, "settings", "(p, n) settings of the NumPy ring")
    meas["ch10.ring.np.divisible"] = exact(divisible, "settings", "of them with p dividing n")
    meas["ch10.ring.np.sum_diff"] = exact(worst_sum, "", "largest |ring result - sum| over every worker", 2)
    meas["ch10.ring.np.bytes_diff"] = exact(worst_bytes, "bytes", "largest |bytes sent - 2(p-1)/p·n·4| where p | n", 2)
    meas["ch10.ring.max_p"] = exact(max(cfg.grid_p), "workers", "largest ring in the grid")
    series: dict[str, np.ndarray] = {}
    for p in (2, 4, 8):
        steps = ring.ring_allreduce(ring.initial_vectors(p, cfg.curve_n))
        series[f"sent_p{p}"] = np.array([0] + [4 * s.sent[0] for s in steps], dtype=float)
    series["curve_n"] = np.array(cfg.curve_n)
    # torch: the hand ring against all_reduce; gloo's collectives' bytes on the wire
    diff = rel = 0.0
    sent_ok = True
    hand_ratio, torch_ratio = [], []
    wire = np.zeros((len(co.COLLECTIVES), len(cfg.worlds)))
    for i, world in enumerate(cfg.worlds):
        ctx.report_progress(i / len(cfg.worlds), f"{world} processes")
        got = launch.run(co.run_ring, world, cfg.hand_n, ctx.seeds, (cfg.piece,))
        for n in cfg.hand_n:
            for seed in ctx.seeds:
                for r in (g["checks"][(n, seed)] for g in got):
                    diff, rel = max(diff, r["diff"]), max(rel, r["diff"] / r["scale"])
                    sent_ok &= abs(r["sent"] - 2 * (world - 1) / world * n) < 1
                    if n == max(cfg.hand_n):
                        hand_ratio.append(r["wire_hand"] / (r["sent"] * r["elem_bytes"]))
                        torch_ratio.append(r["wire_torch"] / (2 * (world - 1) / world * n * r["elem_bytes"]))
        for j, name in enumerate(co.COLLECTIVES):
            wire[j, i] = max(g["bytes"][(name, cfg.piece)] for g in got) / (4 * cfg.piece)
    if not sent_ok:
        raise RuntimeError("a hand-ring process sent other than 2(p-1)/p·n elements (to the element)")
    meas["ch10.ring.hand.diff"] = exact(diff, "", "largest |hand ring - dist.all_reduce|, float64", 2)
    meas["ch10.ring.hand.rel"] = exact(rel, "", "that over the largest sum element", 2)
    meas["ch10.ring.hand.wire_over_counted"] = exact(
        max(hand_ratio), "", "bytes the hand ring wrote to its sockets over the bytes it counted (largest)", 4
    )
    meas["ch10.ring.torch.wire_over_ring"] = exact(
        max(torch_ratio), "", "bytes all_reduce wrote over 2(p-1)/p·n·8 (largest, float64)", 4
    )
    meas["ch10.ring.torch.wire_over_ring_min"] = exact(min(torch_ratio), "", "the same, smallest", 4)
    meas["ch10.ring.hand.n"] = exact(max(cfg.hand_n), "elements", "the largest hand-ring vector (float64)")
    for j, name in enumerate(co.COLLECTIVES):
        for i, world in enumerate(cfg.worlds):
            meas[f"ch10.wire.{name}.p{world}"] = exact(
                wire[j, i], "", f"bytes written over bytes brought, {name.replace('_', '-')}, {world} processes", 3
            )
    meas["ch10.wire.piece_mib"] = exact(cfg.piece * 4 / 2**20, "MiB", "bytes each process brings in the count", 3)
    series["wire"] = wire
    series["worlds"] = np.array(cfg.worlds)
    return Outcome(meas, series)


# --------------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Timing:
    worlds: tuple[int, ...] = (2, 4)
    sizes: tuple[int, ...] = (256, 2048, 16384, 131072, 1048576, 8388608, 16777216)  # float32: 1 KiB to 64 MiB
    repeats: int = 15
    warmup: int = 2
    boot: int = 200  # bootstrap resamples of the repeats for the fits' intervals
    step_model: ModelConfig = field(default_factory=lambda: ModelConfig(d_model=128, n_layers=4, context=64, n_heads=4))
    step_batch: int = 16  # windows per step over both processes
    step_repeats: int = 30
    bucket_mb: float = 0.25
    big_bucket_mb: float = 1.0
    matmul: int = 512


TIMING_QUICK = {"sizes": (256, 16384), "repeats": 3, "warmup": 1, "boot": 10, "worlds": (2,),
                "step_model": ModelConfig(d_model=32, context=16), "step_repeats": 3, "matmul": 64}  # fmt: skip


@experiment("ch10.timing", config=Timing(), seeds=(0,), quick=TIMING_QUICK)
def timing(ctx: RunContext) -> Outcome:
    """Collective times against size with alpha-beta fits; step time with and without overlap; MFU."""
    cfg: Timing = ctx.config
    meas: dict[str, Measurement] = {}
    series: dict[str, np.ndarray] = {"sizes": np.array(cfg.sizes) * 4.0}
    rng = np.random.default_rng(ctx.seeds[0])
    nbytes = np.array(cfg.sizes, dtype=float) * 4
    for i, world in enumerate(cfg.worlds):
        ctx.report_progress(i / (len(cfg.worlds) + 1), f"collectives, {world} processes")
        res = launch.run(co.run_timing, world, cfg.sizes, cfg.repeats, cfg.warmup)
        times = np.max([r["times"] for r in res], axis=0)  # a collective ends when its slowest process does
        series[f"times_p{world}"] = times
        for j, name in enumerate(co.COLLECTIVES):
            med = np.median(times[j], axis=1)
            fit = co.fit_alpha_beta(name, world, nbytes, med)
            boots = []
            for _ in range(cfg.boot):
                pick = rng.integers(0, cfg.repeats, cfg.repeats)
                b = co.fit_alpha_beta(name, world, nbytes, np.median(times[j][:, pick], axis=1))
                boots.append((b.alpha, b.beta))
            lo, hi = np.percentile(np.array(boots), (5, 95), axis=0)
            k = f"ch10.ab.{name}.p{world}"
            label = f"{name.replace('_', '-')}, {world} processes"
            meas[f"{k}.alpha"] = exact(1e6 * fit.alpha, "µs", f"fitted latency per ring step, {label}", 2)
            meas[f"{k}.alpha_lo"] = exact(1e6 * lo[0], "µs", "its bootstrap 5th percentile", 2)
            meas[f"{k}.alpha_hi"] = exact(1e6 * hi[0], "µs", "its bootstrap 95th percentile", 2)
            meas[f"{k}.beta"] = exact(fit.beta, "s/B", f"fitted seconds per byte sent, {label}", 2)
            meas[f"{k}.gbps_lo"] = exact(1e-9 / hi[1], "GB/s", "1/beta at beta's bootstrap 95th percentile", 2)
            meas[f"{k}.gbps_hi"] = exact(1e-9 / lo[1], "GB/s", "1/beta at beta's bootstrap 5th percentile", 2)
            meas[f"{k}.gbps"] = exact(1e-9 / fit.beta, "GB/s", f"1/beta, {label}", 2)
            meas[f"{k}.resid"] = exact(fit.max_rel_resid, "", f"largest |fit - median| / median, {label}", 2)
            meas[f"{k}.t_max"] = exact(1e3 * med[-1], "ms", f"median time at {nbytes[-1] / 2**20:g} MiB, {label}", 3)
            meas[f"{k}.t_min"] = exact(1e6 * med[0], "µs", f"median time at {nbytes[0] / 2**10:g} KiB, {label}", 2)
            series[f"fit_{name}_p{world}"] = np.array([fit.a, fit.b])
    meas["ch10.ab.resid_max"] = exact(max(m.value for key, m in meas.items() if key.endswith(".resid")), "",
                                      "largest |fit - median| / median over every fit", 2)  # fmt: skip
    meas["ch10.ab.calls_small"] = exact(co.calls_per_timing(cfg.sizes[0]), "calls",
                                        "back-to-back calls per timing at the smallest size")  # fmt: skip
    meas["ch10.ab.repeats"] = exact(cfg.repeats, "repeats", "timed repeats per collective and size")
    meas["ch10.ab.min_kib"] = exact(nbytes[0] / 2**10, "KiB", "smallest vector timed")
    meas["ch10.ab.max_mib"] = exact(nbytes[-1] / 2**20, "MiB", "largest vector timed")
    meas["ch10.ab.sizes"] = exact(len(cfg.sizes), "sizes", "vector sizes timed")
    meas["ch10.ab.boot"] = exact(cfg.boot, "resamples", "bootstrap resamples of the repeats")

    # step time, overlap, MFU: two processes, one per core
    ctx.report_progress(len(cfg.worlds) / (len(cfg.worlds) + 1), "step time")
    corpus = load_corpus()
    batch = sample_batch(corpus.train, cfg.step_batch, cfg.step_model.context, torch.Generator().manual_seed(7))
    job = dp.StepJob(cfg.step_model, ctx.seeds[0], batch, cfg.step_repeats, 2, cfg.bucket_mb, cfg.big_bucket_mb,
                     cfg.matmul)  # fmt: skip
    res = launch.run(dp.run_steps, 2, job)
    times = np.max([r["times"] for r in res], axis=0)  # (arm, repeat)
    series["step_times"] = times
    k = "ch10.step"
    arm = {a: times[i] for i, a in enumerate(dp.ARMS)}
    for a, what in (("compute", "forward, backward and AdamW step, no communication"),
                    ("overlap", "DDP, buckets all-reduced during the backward"),
                    ("overlap_big", "the same with larger buckets"),
                    ("after", "one all-reduce of all gradients after the backward"),
                    ("allreduce", "that all-reduce alone")):  # fmt: skip
        q25, med, q75 = np.percentile(arm[a], (25, 50, 75))
        meas[f"{k}.{a}"] = exact(1e3 * med, "ms", f"median milliseconds per step: {what}", 3)
        meas[f"{k}.{a}.q25"] = exact(1e3 * q25, "ms", "its 25th percentile", 3)
        meas[f"{k}.{a}.q75"] = exact(1e3 * q75, "ms", "its 75th percentile", 3)
    for a, tag in (("overlap", "saved"), ("overlap_big", "saved_big")):
        saved = arm["after"] - arm[a]  # paired: the same repeat
        q25, med, q75 = np.percentile(saved, (25, 50, 75))
        meas[f"{k}.{tag}"] = exact(1e3 * med, "ms", f"median of after - {a}, paired by repeat", 2)
        meas[f"{k}.{tag}.q25"] = exact(1e3 * q25, "ms", "its 25th percentile", 2)
        meas[f"{k}.{tag}.q75"] = exact(1e3 * q75, "ms", "its 75th percentile", 2)
    extra = arm["after"] - arm["compute"]
    meas[f"{k}.comm_share"] = exact(float(np.median(extra) / np.median(arm["after"])), "",
                                    "median (after - compute) over median after: communication's share", 2)  # fmt: skip
    meas[f"{k}.same_weights"] = exact(max(r["overlap_vs_after"] for r in res), "",
                                      "largest weight difference between the overlap and after runs", 2)  # fmt: skip
    n_params = sum(p.numel() for p in dp.Decoder(cfg.step_model).parameters())
    per_token = dp.model_flops_per_token(cfg.step_model, n_params)
    tokens = cfg.step_batch // 2 * cfg.step_model.context  # per process
    peak = 2 * cfg.matmul**3 / np.median(arm["matmul"])
    for a in ("compute", "overlap", "after"):
        meas[f"{k}.mfu.{a}"] = exact(per_token * tokens / np.median(arm[a]) / peak, "",
                                     f"MFU of one process, {a} arm, against the matmul's FLOP/s", 2)  # fmt: skip
    meas[f"{k}.peak_gflops"] = exact(peak / 1e9, "GFLOP/s", f"median FLOP/s of a {cfg.matmul}³ matmul, one thread", 3)
    meas[f"{k}.flops_per_token"] = exact(per_token, "FLOPs", "6N + 12·L·H·Q·T per token", 3)
    meas[f"{k}.params"] = exact(n_params, "parameters", "the timed Decoder's parameters")
    meas[f"{k}.grad_mib"] = exact(n_params * 4 / 2**20, "MiB", "its gradients, float32", 3)
    meas[f"{k}.d_model"] = exact(cfg.step_model.d_model, "", "width of the timed Decoder")
    meas[f"{k}.layers"] = exact(cfg.step_model.n_layers, "layers", "layers of the timed Decoder")
    meas[f"{k}.context"] = exact(cfg.step_model.context, "characters", "context of the timed Decoder")
    meas[f"{k}.batch"] = exact(cfg.step_batch, "windows", "windows per step over both processes")
    meas[f"{k}.repeats"] = exact(cfg.step_repeats, "steps", "timed steps per arm")
    meas[f"{k}.bucket_mb"] = exact(cfg.bucket_mb, "MB", "DDP's bucket size in the overlap arm", 2)
    meas[f"{k}.big_bucket_mb"] = exact(cfg.big_bucket_mb, "MB", "DDP's bucket size in the larger-bucket arm", 2)
    meas[f"{k}.matmul"] = exact(cfg.matmul, "", "side of the timed matmul")
    return Outcome(meas, series)


# --------------------------------------------------------------------------- ZeRO-1 and FSDP


@dataclass(frozen=True)
class Zero:
    model: ModelConfig = field(default_factory=ModelConfig)
    worlds: tuple[int, ...] = (2, 4)
    batch: int = 32
    steps: int = 20
    lr: float = 1e-2
    n_seeds: int = 3


MODES = ("ddp", "zero1", "fsdp")


def fsdp1_runs() -> tuple[bool, str]:
    """Whether the first FSDP API (FullyShardedDataParallel) wraps a module in this CPU-only process, and
    the error it raises if not (asked outside any process group: the check is made before the group)."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    try:
        FullyShardedDataParallel(torch.nn.Linear(2, 2))
    except (RuntimeError, ValueError) as err:
        return False, str(err)
    return True, ""


def run_fsdp1(rank: int, world: int) -> dict:
    """One process: try the first FSDP API on CPU inside a gloo group."""
    ok, err = fsdp1_runs()
    return {"ok": ok, "error": err}


@experiment("ch10.zero", config=Zero(), seeds=SEEDS, quick={"steps": 2, "n_seeds": 1, "worlds": (2,)})
def zero(ctx: RunContext) -> Outcome:
    """DDP, ZeRO-1 and FSDP: the bytes each process holds against the formulas, and their losses."""
    cfg: Zero = ctx.config
    seeds = ctx.seeds[: cfg.n_seeds]
    jobs = tuple(dp.DPJob(cfg.model, s, _batches(cfg.model, cfg.batch, cfg.steps, s), cfg.lr) for s in seeds)
    meas: dict[str, Measurement] = {}
    series: dict[str, np.ndarray] = {}
    loss_diff = {m: 0.0 for m in MODES[1:]}
    for i, world in enumerate(cfg.worlds):
        ctx.report_progress(i / len(cfg.worlds), f"{world} processes")
        by_rank = launch.run(dp.run_sharded, world, jobs, MODES)
        runs = {mode: [r[mode] for r in by_rank] for mode in MODES}  # [rank][job]
        psi = runs["ddp"][0][0]["n_params"]
        for mode in MODES:
            for kind in ("param_bytes", "grad_bytes", "moment_bytes"):
                per_rank = np.array([runs[mode][r][0][kind] for r in range(world)], dtype=float)
                series[f"{mode}_p{world}_{kind}"] = per_rank
                meas[f"ch10.zero.{mode}.p{world}.{kind}.max"] = exact(
                    per_rank.max(), "bytes", f"most {kind.split('_')[0]} bytes one process holds, {mode}, p = {world}"
                )
                meas[f"ch10.zero.{mode}.p{world}.{kind}.min"] = exact(
                    per_rank.min(), "bytes", f"fewest {kind.split('_')[0]} bytes one process holds, {mode}, p = {world}"
                )
            total = np.array([sum(runs[mode][r][0][k] for k in ("param_bytes", "grad_bytes", "moment_bytes"))
                              for r in range(world)], dtype=float)  # fmt: skip
            meas[f"ch10.zero.{mode}.p{world}.total.max"] = exact(
                total.max(), "bytes", f"most bytes of state one process holds, {mode}, p = {world}"
            )
            if mode != "ddp":
                for s in range(len(seeds)):
                    ref = runs["ddp"][0][s]["loss"]
                    for r in range(world):
                        got = runs[mode][r][s]["loss"]
                        loss_diff[mode] = max(loss_diff[mode], float(np.abs(got - ref).max()))
        formula = {"ddp": 16 * psi, "zero1": 8 * psi + 8 * psi / world, "fsdp": 16 * psi / world}
        for mode, value in formula.items():
            meas[f"ch10.zero.{mode}.p{world}.formula"] = exact(
                value, "bytes", f"float32 formula per process, {mode}, p = {world}", 4
            )
        series[f"loss_p{world}"] = np.array([runs[m][0][0]["loss"] for m in MODES])
        meas["ch10.zero.psi"] = exact(psi, "parameters", "Ψ: the Decoder's parameters")
    for mode, d in loss_diff.items():
        meas[f"ch10.zero.{mode}.loss_diff"] = exact(
            d, "nats", f"largest |{mode} - DDP| batch loss over steps, seeds and processes", 2
        )
    res = launch.run(run_fsdp1, 2)
    meas["ch10.zero.fsdp1_runs"] = exact(
        float(all(r["ok"] for r in res)), "", "1 if FullyShardedDataParallel (FSDP1) wraps a module on this CPU"
    )
    meas["ch10.zero.steps"] = exact(cfg.steps, "steps", "AdamW steps per run")
    meas["ch10.zero.lr"] = exact(cfg.lr, "", "learning rate (AdamW, no weight decay)", 2)
    meas["ch10.zero.batch"] = exact(cfg.batch, "windows", "the whole batch per step")
    return Outcome(meas, series)
