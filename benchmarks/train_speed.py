"""Training speed: the one fast path (model/train.py over model/stacked.py) at M = 1
and M = 21, and the NumPy reference (run by hand: `make bench`, or
`python benchmarks/train_speed.py [--steps N]`).

Rows (all train the default config: batch 32, context 16, AdamW, cosine, eval every 100):

- M = 1: model.train.train(), the default run, one model (a stack of one), on
  1 thread and on 2 (its default on this machine: torch's setting, all cores);
  "x M=1" is against the 1-thread row;
- M = 21: model.train.train_many() on 21 runs (seeds 0..20) as one stack
  whose ops use 2 threads, and as two stacks (10 + 11 runs) side by side on 2
  Python threads of 1 torch thread each (train_many's default with 2 threads);
- reference: model/reference.py in float64, forward + backward + AdamW per
  step, one model, on the same batches (no evaluation).

FLOPs are counted, not measured: per training token 6 * P (P = 5,376
parameters, embeddings included, as 6ND does) plus 12 * L * T * D for the
attention scores and their weighted sums over all T positions (PaLM's
appendix B count; the causal half is not subtracted), and per evaluated token
one third of that (the forward pass). Evaluation on the 1,102 validation
windows every 100 steps is part of every timed run but the reference's.
Achieved FLOP/s are set against a 1024 x 1024 float32 matmul on the same
machine with the same number of threads.

Each trainer is timed --repeats times (default 3), the trainers taking turns
(round-robin, so a slow minute of the host slows every row alike), and the
best time kept, as the matmul peak is a best of 5: this 2-core VM's speed
drifts by up to 1.7x within minutes, and the best run is the one the drift
slowed least.

Prints the machine, a table, and the same table in Markdown for the README.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.data import load_corpus, sample_batch, val_windows  # noqa: E402 (after the path set-up)
from model.decoder import Decoder, ModelConfig, num_params  # noqa: E402
from model.train import TrainConfig, lr_at, train, train_many  # noqa: E402

M_STACK = 21


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        return platform.processor() or "?"


def matmul_flops(threads: int, n: int = 1024, repeats: int = 5, inner: int = 20) -> float:
    """Best sustained FLOP/s of an n x n float32 matmul."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    for _ in range(5):
        torch.mm(a, b, out=c)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            torch.mm(a, b, out=c)
        best = min(best, (time.perf_counter() - t) / inner)
    torch.set_num_threads(before)
    return 2 * n**3 / best


TIMINGS: dict[str, list[float]] = {}  # every timing taken, by row, printed under the table


def flops_per_token(cfg: ModelConfig, n_params: int) -> float:
    """Training FLOPs per token: 6 P + 12 L T D (see the module docstring)."""
    return 6 * n_params + 12 * cfg.n_layers * cfg.context * cfg.d_model


def run_flops(cfg: ModelConfig, run: TrainConfig, n_params: int, n_val_tokens: int, evals: bool = True) -> float:
    train_tokens = run.steps * run.batch * cfg.context
    n_evals = (run.steps // run.eval_every + 1 + (run.steps % run.eval_every != 0)) if evals else 0
    return flops_per_token(cfg, n_params) * (train_tokens + n_evals * n_val_tokens / 3)


def bench_reference(cfg: ModelConfig, run: TrainConfig, steps: int) -> float:
    """Seconds per step of the NumPy float64 reference: forward, backward, AdamW."""
    from model import reference

    corpus = load_corpus()
    torch.manual_seed(run.seed)
    model = Decoder(cfg)
    params = {k: v.double().numpy() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(run.data_seed_value)
    state = None
    t = time.perf_counter()
    for step in range(steps):
        x, y = sample_batch(corpus.train, run.batch, cfg.context, gen)
        _, grads = reference.loss_and_grads(params, x.numpy(), y.numpy(), cfg)
        grads, _ = reference.clip_by_global_norm(grads, math.inf if run.clip is None else run.clip)
        params, state = reference.adamw_step(
            params, grads, state, lr=lr_at(step, run), betas=run.betas, eps=run.eps, weight_decay=run.weight_decay
        )
    return (time.perf_counter() - t) / steps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="steps per run (default 2000, the default run)")
    ap.add_argument("--reference-steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="time each trainer this many times, keep the best")
    args = ap.parse_args(argv)

    cfg = ModelConfig()
    n_params = num_params(Decoder(cfg))
    n_val_tokens = val_windows(load_corpus().val, cfg.context)[1].numel()
    base = TrainConfig(steps=args.steps)
    load_before = os.getloadavg()

    cpu = cpu_name()
    print(
        f"machine: {platform.machine()} {cpu}, {os.cpu_count()} cores; torch {torch.__version__}, "
        f"default threads {torch.get_num_threads()}; Python {platform.python_version()}"
    )

    peak = {t: matmul_flops(t) for t in (1, 2)}
    corpus = load_corpus()
    runs = [TrainConfig(steps=args.steps, seed=s) for s in range(M_STACK)]

    def one_run(threads: int) -> Callable[[], float]:
        return lambda: train(cfg, TrainConfig(steps=args.steps, threads=threads), corpus).seconds

    def stacked(workers: int) -> Callable[[], float]:
        def timed() -> float:
            t = time.perf_counter()
            results = train_many(cfg, runs, corpus, threads=2, workers=workers)
            if not all(r.steps == args.steps for r in results):
                raise RuntimeError("a stacked run stopped early")
            return time.perf_counter() - t

        return timed

    def reference_per_step() -> float:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return bench_reference(cfg, base, args.reference_steps)
        finally:
            torch.set_num_threads(before)

    # (name, threads, models per timing, what is timed)
    trainers: list[tuple[str, str, int, Callable[[], float]]] = [
        ("train(), M=1", "1", 1, one_run(1)),
        ("train(), M=1, its default", "2", 1, one_run(2)),
        (f"train_many(), M={M_STACK}, 1 stack", "2", M_STACK, stacked(1)),
        (f"train_many(), M={M_STACK}, 2 stacks side by side", "2 x 1", M_STACK, stacked(2)),
        ("NumPy float64 reference (1 model)", "numpy", 1, reference_per_step),
    ]
    for _ in range(args.repeats):  # round-robin: the host's drift hits every trainer alike
        for name, _th, _m, timed in trainers:
            TIMINGS.setdefault(name, []).append(timed())

    rows = []  # (name, threads, model-steps/s, FLOP/s)
    one_run_flops = run_flops(cfg, base, n_params, n_val_tokens)
    for name, th, models, _ in trainers:
        best = min(TIMINGS[name])
        if th == "numpy":  # seconds per step, no evaluation
            flops = run_flops(cfg, TrainConfig(steps=1), n_params, n_val_tokens, evals=False)
            rows.append((name, th, 1 / best, flops / best))
        else:
            rows.append((name, th, models * base.steps / best, models * one_run_flops / best))

    load_after = os.getloadavg()
    base_rate = rows[0][2]  # one run on one thread
    header = ["trainer", "threads", "model-steps/s", "s per run", "x M=1", "GFLOP/s", "% of matmul peak"]
    table = [
        [
            name,
            th,
            f"{rate:,.0f}",
            f"{base.steps / rate:.2f}" if th != "numpy" else "",
            f"{rate / base_rate:.1f}",
            f"{flops / 1e9:.2f}",
            f"{100 * flops / peak[1 if th in ('1', 'numpy') else 2]:.1f}",
        ]
        for name, th, rate, flops in rows
    ]

    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    print()
    print(fmt.format(*header))
    for r in table:
        print(fmt.format(*r))
    print("\nevery timing (s):")
    for name, times in TIMINGS.items():
        print(f"  {name}: " + ", ".join(f"{t:.3g}" for t in times))
    print(f"\n1024x1024 float32 matmul: {peak[1] / 1e9:.1f} GFLOP/s on 1 thread, {peak[2] / 1e9:.1f} on 2")
    shared = load_before[0] > 0.5  # (the load after includes this benchmark's own 2 threads)
    print(
        f"load average before: {load_before[0]:.2f}, after: {load_after[0]:.2f}"
        + ("  (the machine was shared: numbers are pessimistic)" if shared else "")
    )

    print("\nMarkdown:\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for r in table:
        print("| " + " | ".join(r) + " |")
    print(
        f"\n{args.steps} steps per run; % of peak against a 1024x1024 float32 matmul with the same threads "
        f"({peak[1] / 1e9:.0f} GFLOP/s on 1 thread, {peak[2] / 1e9:.0f} on 2); {cpu}, {os.cpu_count()} cores; "
        f"FLOPs = (6 P + 12 L T D) per training token + a third of that per evaluated token."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
