"""Chapter 8, training in low precision: the trainer's precision switches in whole runs.

- ``ch08.lowbits`` (the stacked path): FP32 against weights stored in BF16 with no FP32 master copy
  (TrainConfig.weight_dtype), and against gradients quantised to 8 and 4 bits before the update, each
  weight tensor on its own full scale, rounded to nearest or stochastically (grad_bits, grad_rounding).
  For the FP32 and BF16-weight arms an on_step hook also counts the weights an update left exactly
  where they were (read-only: it compares each step's weights with the step before's).
- ``ch08.fp8train`` (the autograd path): FP32 against a simulated FP8 forward pass (ModelConfig.fp8):
  every block matmul's input and weight cast to E4M3 and back with no scaling, one scale per tensor,
  or one per tile, the product in FP32, the backward pass in FP32.

Every arm trains the default run at its own best rate of a ladder (model/experiments/ch08_precision.tuned),
three seeds, and is compared with FP32 paired by seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch08_precision import SEEDS, arm_keys, tuned
from model.experiments.common import best_rung, exact, measured, progress, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.train import Step, TrainConfig, TrainResult, train_many

LOWBITS: dict[str, dict[str, object]] = {  # arm -> the TrainConfig fields it sets
    "fp32": {},
    "bf16w": {"weight_dtype": "bfloat16"},
    "q8": {"grad_bits": 8},
    "q8sr": {"grad_bits": 8, "grad_rounding": "stochastic"},
    "q4": {"grad_bits": 4},
    "q4sr": {"grad_bits": 4, "grad_rounding": "stochastic"},
}
WATCHED = ("fp32", "bf16w")  # the arms whose unchanged weights are counted


@dataclass(frozen=True)
class Arms:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))  # the default run's 2,000 steps
    rates: tuple[float, ...] = (2e-3, 6e-3, 2e-2, 6e-2)  # from the ladder's bottom: where small updates are lost
    arms: tuple[str, ...] = tuple(LOWBITS)
    tail: float = 0.25  # the share of steps at the end (the cosine's tail) whose loss drop is reported


class Unchanged:
    """An on_step hook: per step and run, the share of weights equal to the step before's."""

    def __init__(self) -> None:
        self.prev: torch.Tensor | None = None
        self.shares: list[list[float]] = []  # (steps, M)

    def __call__(self, at: Step) -> None:
        theta = at.theta.detach()
        if self.prev is not None:
            self.shares.append((theta == self.prev).double().mean(dim=1).tolist())
        self.prev = theta.clone()


def _tail_drop(r: TrainResult, tail: float) -> float:
    """Validation loss at the start of the last ``tail`` of the steps minus the final one."""
    steps = r.curves["step"]
    k = min(range(len(steps)), key=lambda j: abs(steps[j] - (1 - tail) * steps[-1]))
    return r.curves["val_loss"][k] - r.curves["val_loss"][-1]


@experiment(
    "ch08.lowbits",
    config=Arms(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.warmup": 2, "train.eval_every": 5, "rates": (2e-2, 6e-2)},
)
def lowbits(ctx: RunContext) -> Outcome:
    """FP32, weights stored in BF16 (no master copy), and gradients quantised to 8 and 4 bits per weight
    tensor (nearest, stochastic), each at its own best rate, three seeds, the stacked path."""
    cfg: Arms = ctx.config
    corpus = load_corpus()
    S = len(ctx.seeds)
    m: dict[str, Measurement] = {
        "ch08.lowbits.steps": exact(cfg.train.steps, "steps", "steps of each run"),
        "ch08.lowbits.tail": exact(100 * cfg.tail, "%", "the last share of steps whose loss drop is reported"),
    }
    series: dict = {"step": []}
    finals: dict[str, np.ndarray] = {}
    ladders: dict[str, dict[float, np.ndarray]] = {}  # arm -> rate -> final losses (S,)
    watched: dict[str, dict[float, np.ndarray]] = {}  # arm -> rate -> unchanged shares (steps, S)
    for k, arm in enumerate(cfg.arms):
        base = replace(cfg.train, **LOWBITS[arm])  # type: ignore[arg-type]
        watch: dict[float, np.ndarray] = {}  # rate -> (steps, S) unchanged shares

        def train(rs: list[float], base=base, arm=arm, k=k, watch=watch) -> list[TrainResult]:
            runs = [replace(base, lr=r, seed=s) for r in rs for s in ctx.seeds]
            hook = Unchanged() if arm in WATCHED else None
            res = train_many(ModelConfig(), runs, corpus, workers=1, on_step=hook,
                             on_eval=progress(ctx, cfg.train, k / len(cfg.arms), 1 / len(cfg.arms)))  # fmt: skip
            if hook is not None:
                shares = np.array(hook.shares)  # (steps, R*S)
                for j, r in enumerate(rs):
                    watch[r] = shares[:, j * S : (j + 1) * S]
            return res

        rates, res = tuned(train, list(cfg.rates), S)
        R = len(rates)
        final = np.array([r.val_loss_final for r in res]).reshape(R, S)
        i = best_rung(final)
        finals[arm] = final[i]
        ladders[arm] = dict(zip(rates, final, strict=True))
        watched[arm] = watch
        m |= arm_keys("ch08.lowbits", arm, rates, final, res)
        best = res[i * S : (i + 1) * S]
        m[f"ch08.lowbits.{arm}.tail_drop"] = measured(
            [_tail_drop(r, cfg.tail) for r in best], "nats", f"{arm} at its best rate: loss drop over the last steps", 3
        )
        val = np.array([r.curves["val_loss"] for r in res]).reshape(R, S, -1)
        series |= {f"{arm}_rates": rates, f"{arm}_final": final.tolist(), f"{arm}_best": i,
                   f"{arm}_curve": val[i].tolist()}  # fmt: skip
        series["step"] = res[0].curves["step"]
        if arm in WATCHED:
            shares = watch[rates[i]]  # (steps, S) at the best rate
            n = len(shares)
            tail = shares[int((1 - cfg.tail) * n) :]
            m[f"ch08.lowbits.{arm}.unchanged"] = measured(
                100 * shares.mean(axis=0), "%", f"{arm} at its best rate: weights an update left unchanged", 3
            )
            m[f"ch08.lowbits.{arm}.unchanged_tail"] = measured(
                100 * tail.mean(axis=0), "%", f"{arm} at its best rate: the same over the last steps", 3
            )
            per = 100
            series[f"{arm}_unchanged"] = [
                float(100 * shares[s : s + per].mean()) for s in range(0, n, per)
            ]  # per 100 steps, mean over seeds
    for arm in cfg.arms[1:]:
        m[f"ch08.lowbits.{arm}.minus_fp32"] = measured(
            finals[arm] - finals["fp32"], "nats", f"{arm} minus FP32, each at its best rate, paired by seed", 2
        )
    if "bf16w" in ladders:  # where lost updates should cost most: the lowest rate both ladders tried
        low = min(set(ladders["bf16w"]) & set(ladders["fp32"]))
        m |= {
            "ch08.lowbits.low.lr": exact(low, "", "the lowest rate both the FP32 and BF16-weight arms tried", 1),
            "ch08.lowbits.low.minus_fp32": spread(
                ladders["bf16w"][low] - ladders["fp32"][low], "nats", "BF16 weights minus FP32 there, paired"
            ),
            "ch08.lowbits.low.unchanged": measured(
                100 * watched["bf16w"][low].mean(axis=0), "%", "BF16 weights there: weights an update left unchanged", 3
            ),
        }
    return Outcome(measurements=m, series=series)


FP8_ARMS = ("fp32", "none", "tensor", "tile")  # "fp32": ModelConfig(); the others ModelConfig(fp8=arm)


@dataclass(frozen=True)
class Fp8Train:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(eval_every=100))
    rates: tuple[float, ...] = (6e-3, 2e-2, 6e-2)
    arms: tuple[str, ...] = FP8_ARMS


@experiment(
    "ch08.fp8train",
    config=Fp8Train(),
    seeds=SEEDS,
    quick={"train.steps": 10, "train.warmup": 2, "train.eval_every": 5, "rates": (2e-2, 6e-2)},
)
def fp8train(ctx: RunContext) -> Outcome:
    """FP32 against training with a simulated FP8 forward (E4M3 matmul inputs and weights: no scaling,
    per tensor, per tile), each at its own best rate, three seeds, the autograd path."""
    cfg: Fp8Train = ctx.config
    corpus = load_corpus()
    S = len(ctx.seeds)
    m: dict[str, Measurement] = {"ch08.fp8train.steps": exact(cfg.train.steps, "steps", "steps of each run")}
    series: dict = {}
    finals: dict[str, np.ndarray] = {}
    for k, arm in enumerate(cfg.arms):
        mcfg = ModelConfig() if arm == "fp32" else ModelConfig(fp8=arm)

        def train(rs: list[float], mcfg=mcfg, k=k) -> list[TrainResult]:
            runs = [replace(cfg.train, lr=r, seed=s) for r in rs for s in ctx.seeds]
            return train_many(mcfg, runs, corpus, workers=1, net="autograd",
                              on_eval=progress(ctx, cfg.train, k / len(cfg.arms), 1 / len(cfg.arms)))  # fmt: skip

        rates, res = tuned(train, list(cfg.rates), S)
        final = np.array([r.val_loss_final for r in res]).reshape(len(rates), S)
        finals[arm] = final[best_rung(final)]
        m |= arm_keys("ch08.fp8train", arm, rates, final, res)
        series |= {f"{arm}_rates": rates, f"{arm}_final": final.tolist(), f"{arm}_best": best_rung(final)}
    for arm in cfg.arms[1:]:
        m[f"ch08.fp8train.{arm}.minus_fp32"] = measured(
            finals[arm] - finals["fp32"], "nats", f"FP8 ({arm} scaling) minus FP32, each at its best rate, paired", 2
        )
    m["ch08.fp8train.tile_minus_tensor"] = measured(
        finals["tile"] - finals["tensor"], "nats", "per-tile minus per-tensor FP8 training, paired by seed", 2
    )
    m["ch08.fp8train.tensor_minus_none"] = measured(
        finals["tensor"] - finals["none"], "nats", "per-tensor minus unscaled FP8 training, paired by seed", 2
    )
    return Outcome(measurements=m, series=series)
