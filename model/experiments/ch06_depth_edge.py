"""Chapter 6, pre-LN against post-LN beyond ch06.depth: where runs blow up, and the gradients at init
of deeper models than the training runs reach.

- ``ch06.edge``: the deepest model of ch06.depth, pre-LN and post-LN, with and without warmup, at
  the rates above the ladders' best (0.2, 0.6, 2): how many seeds blow up at each, and when;
- ``ch06.probe``: each block's gradient norm at init for depths 1 to 32, pre-LN and post-LN: the
  last block's gradient over the first's, and post-LN's last block over pre-LN's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from model.data import load_corpus
from model.decoder import ModelConfig
from model.experiments.ch06_init_norm import PROBE_WINDOWS, SEEDS, SHORT, _probe_data
from model.experiments.ch06_tuning import blew_up
from model.experiments.common import exact, measured
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.init_probe import init_probe
from model.train import TrainConfig, TrainResult, train_many


def blowup_step(r: TrainResult) -> float:
    """The first evaluated step whose validation loss is above step 0's or not finite, else the step
    the run went non-finite at (NaN if neither)."""
    v, steps = r.curves["val_loss"], r.curves["step"]
    for s, x in zip(steps[1:], v[1:], strict=True):
        if not (math.isfinite(x) and x <= v[0]):
            return float(s)
    return math.nan if r.diverged_at is None else float(r.diverged_at)


@dataclass(frozen=True)
class Edge:
    train: TrainConfig = field(default_factory=lambda: replace(SHORT, eval_every=10))
    depth: int = 8
    warmups: tuple[int, ...] = (0, 30)
    rates: tuple[float, ...] = (0.2, 0.6, 2.0)


@experiment(
    "ch06.edge",
    config=Edge(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.warmup": 2, "depth": 2, "warmups": (0, 5), "rates": (0.6, 2.0)},
)
def edge(ctx: RunContext) -> Outcome:
    """Pre-LN and post-LN at the deepest depth, with and without warmup, at rates above the ladders'
    best: seeds that blow up (loss above its start, or non-finite) at each rate, and the first step."""
    cfg: Edge = ctx.config
    corpus = load_corpus()
    m: dict[str, Measurement] = {
        "ch06.edge.depth": exact(cfg.depth, "blocks", "depth of the blow-up runs"),
        "ch06.edge.eval_every": exact(cfg.train.eval_every, "steps", "evaluation interval of the blow-up runs"),
    }
    series: dict = {"rates": list(cfg.rates), "warmups": list(cfg.warmups)}
    for i, norm in enumerate(("pre", "post")):
        ctx.report_progress(i / 2, f"{norm}-LN")
        runs = [replace(cfg.train, warmup=w, lr=r, seed=s) for w in cfg.warmups for r in cfg.rates for s in ctx.seeds]
        out = train_many(ModelConfig(n_layers=cfg.depth, norm=norm), runs, corpus, workers=1)
        k = 0
        for w in cfg.warmups:
            counts, first = [], []
            for j, r in enumerate(cfg.rates):
                cell = out[k : k + len(ctx.seeds)]
                k += len(ctx.seeds)
                n = sum(blew_up(x) for x in cell)
                counts.append(n)
                first.append(float(np.nanmin([blowup_step(x) for x in cell])) if n else math.nan)
                p = f"ch06.edge.{norm}.w{w}.r{j}"
                m[f"{p}.blowups"] = exact(n, "seeds", f"{norm}-LN, warmup {w}, rate {r:g}: seeds that blow up")
                m[f"{p}.lr"] = exact(r, "", f"blow-up rate {j + 1}", 1)
                if n:
                    m[f"{p}.step"] = exact(first[-1], "steps", f"{norm}-LN, warmup {w}, rate {r:g}: first blow-up")
                finals = np.array([x.val_loss_final for x in cell])
                if np.isfinite(finals).all():
                    m[f"{p}.final"] = measured(finals, "nats", f"{norm}-LN, warmup {w}, rate {r:g}: final loss", 3)
            lowest = [r for r, n in zip(cfg.rates, counts, strict=True) if n > 0]
            what = f"{norm}-LN, {cfg.depth} blocks, warmup {w}"
            if lowest:
                m[f"ch06.edge.{norm}.w{w}.lr"] = exact(min(lowest), "", f"{what}: lowest rate a seed blows up at", 1)
            m[f"ch06.edge.{norm}.w{w}.count"] = exact(sum(counts), "runs", f"{what}: runs that blow up, all rates")
            series[f"{norm}.w{w}.blowups"] = counts
            series[f"{norm}.w{w}.step"] = first
    return Outcome(measurements=m, series=series)


@dataclass(frozen=True)
class Probe:
    depths: tuple[int, ...] = (1, 2, 4, 8, 16, 32)


@experiment("ch06.probe", config=Probe(), seeds=SEEDS, quick={"depths": (1, 2, 4)})
def probe(ctx: RunContext) -> Outcome:
    """Each block's gradient norm at init, pre-LN and post-LN, depths 1 to 32 (no training)."""
    cfg: Probe = ctx.config
    corpus = load_corpus()
    x, y = _probe_data(corpus, ModelConfig(), PROBE_WINDOWS)
    m: dict[str, Measurement] = {"ch06.probe.max": exact(max(cfg.depths), "blocks", "deepest model probed at init")}
    series: dict = {"depths": list(cfg.depths)}
    for L in cfg.depths:
        last = {}
        for norm in ("pre", "post"):
            g = np.array([init_probe(ModelConfig(n_layers=L, norm=norm), s, x, y).grad_norm for s in ctx.seeds])
            series[f"{norm}.d{L}"] = g
            last[norm] = g[:, -1]
            m[f"ch06.probe.{norm}.d{L}.last_over_first"] = measured(
                g[:, -1] / g[:, 0], "", f"{norm}-LN, {L} blocks: last block's gradient norm over the first's", 2
            )
        m[f"ch06.probe.d{L}.post_over_pre"] = measured(
            last["post"] / last["pre"], "", f"{L} blocks: post-LN's last-block gradient norm over pre-LN's", 2
        )
    return Outcome(measurements=m, series=series)
