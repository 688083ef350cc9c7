"""Chapter 12, training over slow links: the numbers deck 12 shows.

Four data-parallel workers, each training the Decoder on its own quarter of the book, a global
batch of 4 x 8 windows, 600 steps, warmup 50 + cosine. The sweeps run the four workers in one
process (model/slowlinks/workers.py, the Decoders stacked); ``ch12.real`` runs them as four real
processes (gloo, loopback) and holds the simulation to them.

- ``ch12.topk``: the full gradient every step (all-reduce) against top-k at 1% and 10% of the
  weights, without and with error feedback, each at its own best rate over a ladder;
- ``ch12.demo``: DeMo at 1 and 4 coefficients of 64 per chunk, momentum decay 0.999 (the
  reference code's) and 0.9;
- ``ch12.diloco``: DiLoCo, H = 5, 25 and 100 local AdamW steps, outer Nesterov (0.7, 0.9),
  and at H = 25 plain averaging (outer rate 1, no momentum) as the ablation of the outer step;
- ``ch12.real``: one setting of each method in 4 real processes against the simulation;
- ``ch12.links``: bytes per step of each method, and that as time at link speeds;
- ``ch12.queue``: workers waiting for the slowest, and an M/D/1 link, against the formulas.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from model.experiments.common import best_rung, exact, spread
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.parallel import launch
from model.slowlinks import compress as cz
from model.slowlinks import queueing as qu
from model.slowlinks.real import RealJob, run_worker
from model.slowlinks.workers import Local, Method, Setup, param_count, train_workers

SEEDS = (0, 1, 2)
#: AdamW's ladder (deck 05's rungs, about 3x apart) and the sign step's, one rung lower.
ADAMW_RATES = (2e-3, 6e-3, 2e-2, 6e-2, 2e-1)
#: top-k without feedback found its best at 2e-1 on ADAMW_RATES: one rung more
TOPK_RATES = ADAMW_RATES + (6e-1,)
SIGN_RATES = (6e-4, 2e-3, 6e-3, 2e-2, 6e-2)
QUICK_SETUP = {
    "setup.steps": 20,
    "setup.eval_every": 10,
    "setup.warmup": 5,
    "rates": (6e-3, 2e-2),
    "sign_rates": (2e-3, 6e-3),
    "n_seeds": 2,
}


@dataclass(frozen=True)
class Sweep:
    setup: Setup = field(default_factory=Setup)
    methods: tuple[Method, ...] = ()
    rates: tuple[float, ...] = ADAMW_RATES
    sign_rates: tuple[float, ...] = SIGN_RATES
    n_seeds: int = 3


def part(ctx: RunContext, start: float, share: float, note: str) -> Callable[[float], None]:
    """A progress callback for a part of an experiment: ``share`` of it, from ``start``."""
    return lambda f: ctx.report_progress(start + share * f, note)


def dense_bytes(setup: Setup) -> float:
    """Bytes each worker sends per step when the full float32 gradient is all-reduced."""
    return cz.allreduce_bytes(param_count(setup.model), setup.workers)


def sweep(ctx: RunContext, cfg: Sweep) -> tuple[dict[str, Measurement], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every method of cfg over its ladder and seeds: the keys, the series, and each method's
    final losses at its best rate by seed (for paired differences)."""
    seeds = ctx.seeds[: cfg.n_seeds]
    setup = cfg.setup
    meas: dict[str, Measurement] = {}
    series: dict[str, np.ndarray] = {}
    best_finals: dict[str, np.ndarray] = {}
    per_step_dense = dense_bytes(setup)
    edges = 0
    for i, method in enumerate(cfg.methods):
        rates = cfg.sign_rates if method.kind == "demo" else cfg.rates
        lrs = [lr for lr in rates for _ in seeds]
        run_seeds = [s for _ in rates for s in seeds]
        done = i / len(cfg.methods)
        rec = train_workers(
            method,
            setup,
            lrs,
            run_seeds,
            range(setup.workers),
            Local(setup.workers),
            part(ctx, done, 1 / len(cfg.methods), method.name),
        )
        val = rec.val.numpy().reshape(len(rates), len(seeds), -1)  # (rate, seed, evaluation)
        finals = val[:, :, -1]
        b = best_rung(finals)
        edges += b in (0, len(rates) - 1)
        best_finals[method.name] = finals[b]
        k = f"ch12.{method.name}"
        total = rec.bytes_per_worker[-1]
        meas[f"{k}.best_lr"] = exact(rates[b], "", f"best peak rate of {method.name} on its ladder", 2)
        meas[f"{k}.loss"] = spread(finals[b], "nats", f"final validation loss of {method.name} at its best rate")
        meas[f"{k}.bytes"] = exact(total, "bytes", f"bytes each worker sent over the run ({method.name})", 3)
        meas[f"{k}.ratio"] = exact(
            total / (per_step_dense * setup.steps), "", f"{method.name}'s bytes over the full gradient's", 2
        )
        meas[f"{k}.at_edge"] = exact(int(b in (0, len(rates) - 1)), "", "1 if the best rate is at the ladder's end")
        if method.kind == "topk":
            meas[f"{k}.union"] = exact(rec.union, "", "distinct positions the 4 workers sent per step, over k", 3)
            meas[f"{k}.common"] = exact(rec.common, "", "share of k positions all 4 workers sent", 2)
        series[f"{method.name}_val"] = val
        series[f"{method.name}_best"] = val[b]
        series[f"{method.name}_bytes"] = np.array(rec.bytes_per_worker)
        series[f"{method.name}_rates"] = np.array(rates)
        series["steps"] = np.array(rec.steps)
    meas[f"ch12.{ctx_name(cfg)}.edges"] = exact(edges, "methods", "methods whose best rate is at the ladder's end")
    return meas, series, best_finals


def ctx_name(cfg: Sweep) -> str:
    return cfg.methods[0].kind if cfg.methods[0].kind != "dense" else "topk"


def paired(a: np.ndarray, b: np.ndarray, what: str) -> Measurement:
    """a - b seed by seed: mean ± sd."""
    return spread(np.asarray(a) - np.asarray(b), "nats", what)


def common_keys(cfg: Sweep) -> dict[str, Measurement]:
    s = cfg.setup
    return {
        "ch12.setup.workers": exact(s.workers, "workers", "data-parallel workers"),
        "ch12.setup.batch": exact(s.batch, "windows", "windows per worker per step"),
        "ch12.setup.global_batch": exact(s.batch * s.workers, "windows", "windows per step over all workers"),
        "ch12.setup.steps": exact(s.steps, "steps", "steps of every sweep run"),
        "ch12.setup.warmup": exact(s.warmup, "steps", "linear warmup before the cosine"),
        "ch12.setup.params": exact(param_count(s.model), "weights", "weights of the Decoder (P)"),
        "ch12.setup.dense_step": exact(dense_bytes(s), "bytes", "bytes per worker per step, full gradient", 3),
        "ch12.setup.rungs": exact(len(cfg.rates), "rates", "rungs of each method's ladder"),
    }


TOPK = (
    Method("dense"),
    Method("topk", k_frac=0.01),
    Method("topk", k_frac=0.01, feedback=True),
    Method("topk", k_frac=0.1),
    Method("topk", k_frac=0.1, feedback=True),
)


@experiment("ch12.topk", config=Sweep(methods=TOPK, rates=TOPK_RATES), seeds=SEEDS, quick=QUICK_SETUP)
def topk(ctx: RunContext) -> Outcome:
    """The full gradient against top-k at 1% and 10%, with and without error feedback, each at its best rate."""
    cfg: Sweep = ctx.config
    meas, series, best = sweep(ctx, cfg)
    meas.update(common_keys(cfg))
    for pct in (1, 10):
        meas[f"ch12.topk{pct}.ef_gain"] = paired(
            best[f"topk{pct}"], best[f"topk{pct}_ef"], f"loss without error feedback minus with, k = {pct}%, by seed"
        )
        meas[f"ch12.topk{pct}_ef.vs_dense"] = paired(
            best[f"topk{pct}_ef"], best["dense"], f"top-k {pct}% with feedback minus the full gradient, by seed"
        )
        k = max(1, round(pct / 100 * param_count(cfg.setup.model)))
        meas[f"ch12.topk{pct}.k"] = exact(k, "entries", f"entries each worker sends at {pct}%")
    P, W = param_count(cfg.setup.model), cfg.setup.workers
    meas["ch12.allgather.break_even"] = exact(
        P / W,
        "entries",
        "k at which gathering (value, position) pairs sends as many bytes as all-reducing the dense gradient: P/W",
    )
    meas["ch12.allgather.entry_bytes"] = exact(cz.ENTRY_BYTES, "bytes", "bytes per sent entry: float32 + int32")
    return Outcome(meas, series)


DEMO = (Method("demo", chunk_k=1), Method("demo", chunk_k=4), Method("demo", chunk_k=4, decay=0.9))


@experiment("ch12.demo", config=Sweep(methods=DEMO), seeds=SEEDS, quick=QUICK_SETUP)
def demo(ctx: RunContext) -> Outcome:
    """DeMo at 1 and 4 of 64 DCT coefficients per chunk, momentum decay 0.999 and 0.9, each at its best rate."""
    cfg: Sweep = ctx.config
    meas, series, best = sweep(ctx, cfg)
    meas["ch12.demo4.decay_gap"] = paired(best["demo4_9"], best["demo4_999"], "decay 0.9 minus 0.999, by seed")
    meas["ch12.demo.chunk"] = exact(cfg.methods[0].chunk, "coefficients", "coefficients per DCT chunk")
    meas["ch12.demo.chunks"] = exact(
        cz.chunks(param_count(cfg.setup.model), cfg.methods[0].chunk), "chunks", "chunks covering the Decoder's weights"
    )
    meas["ch12.demo.sign_rungs"] = exact(len(cfg.sign_rates), "rates", "rungs of the sign step's ladder")
    return Outcome(meas, series)


DILOCO_H = (Method("diloco", H=5), Method("diloco", H=25), Method("diloco", H=100))
#: outer Nesterov learning rates tried at each H (momentum 0.9), about 2-3x apart; 0.7 is the paper's.
#: A first sweep over (0.1, 0.3, 0.7) at every H found H = 5 best at 0.1 and H = 25, 100 at 0.7:
#: each ladder now brackets its best.
OUTER = ((5, (0.03, 0.1, 0.3)), (25, (0.3, 0.7, 1.5)), (100, (0.3, 0.7, 1.5)))


@dataclass(frozen=True)
class DilocoSweep:
    setup: Setup = field(default_factory=Setup)
    outer: tuple[tuple[int, tuple[float, ...]], ...] = OUTER
    momentum: float = 0.9
    ablation_h: int = 25  # plain averaging (outer rate 1, no momentum) at this H
    rates: tuple[float, ...] = ADAMW_RATES
    n_seeds: int = 3


DILOCO_QUICK = {
    "setup.steps": 20,
    "setup.eval_every": 10,
    "setup.warmup": 5,
    "rates": (6e-3, 2e-2),
    "n_seeds": 2,
    "outer": ((5, (0.3, 0.7)), (10, (0.3, 0.7))),
    "ablation_h": 10,
}


def scaled(ctx: RunContext, start: float, share: float) -> Callable[[float, str], None]:
    """A RunContext progress function for a part of an experiment: ``share`` of it, from ``start``."""

    def report(fraction: float, note: str) -> None:
        ctx.report_progress(start + share * fraction, note)

    return report


def _renamed(d: dict, old: str, new: str, sep: str) -> dict:
    """``d`` with keys that start ``old + sep`` starting ``new + sep`` instead."""
    return {(new + k[len(old) :] if k.startswith(old + sep) else k): v for k, v in d.items()}


@experiment("ch12.diloco", config=DilocoSweep(), seeds=SEEDS, quick=DILOCO_QUICK)
def diloco(ctx: RunContext) -> Outcome:
    """DiLoCo at H = 5, 25 and 100 over inner and outer rates, and plain averaging at H = 25."""
    cfg: DilocoSweep = ctx.config
    meas: dict[str, Measurement] = {}
    series: dict[str, np.ndarray] = {}
    best: dict[str, np.ndarray] = {}
    rates = sorted({o for _, ladder in cfg.outer for o in ladder})
    arms = [
        tuple(Method("diloco", H=h, outer_lr=o, outer_momentum=cfg.momentum) for h, ladder in cfg.outer if o in ladder)
        for o in rates
    ]  # one sweep per outer rate, over the H that try it
    arms.append((Method("diloco", H=cfg.ablation_h, outer_lr=1.0, outer_momentum=0.0, nesterov=False),))
    for i, methods in enumerate(arms):
        sub = Sweep(setup=cfg.setup, methods=methods, rates=cfg.rates, n_seeds=cfg.n_seeds)
        part_ctx = RunContext(ctx.quick, ctx.seeds, sub, scaled(ctx, i / len(arms), 1 / len(arms)))
        m, s, b = sweep(part_ctx, sub)
        m.pop("ch12.diloco.edges")
        if i < len(rates):  # diloco25 -> diloco25_o30
            for method in methods:
                h, tag = method.H, f"_o{round(100 * method.outer_lr)}"
                m = _renamed(m, f"ch12.diloco{h}", f"ch12.diloco{h}{tag}", ".")
                s = _renamed(s, f"diloco{h}", f"diloco{h}{tag}", "_")
                b = _renamed(b, f"diloco{h}", f"diloco{h}{tag}", "")
        meas.update(m)
        series.update({k: v for k, v in s.items() if k != "steps"})
        series["steps"] = s["steps"]
        best.update(b)
    edges = 0
    tops: dict[int, str] = {}
    for h, ladder in cfg.outer:
        names = [f"diloco{h}_o{round(100 * o)}" for o in ladder]
        j = int(np.argmin([best[n].mean() for n in names]))
        name, k = names[j], f"ch12.diloco{h}"
        tops[h] = name
        inner_edge = int(meas[f"ch12.{name}.at_edge"].value)
        outer_edge = int(j in (0, len(ladder) - 1))
        edges += bool(inner_edge or outer_edge)
        meas[f"{k}.loss"] = spread(
            best[name], "nats", f"final validation loss of DiLoCo at H = {h}, best inner and outer rates"
        )
        meas[f"{k}.best_lr"] = meas[f"ch12.{name}.best_lr"]
        meas[f"{k}.best_outer"] = exact(ladder[j], "", f"best outer rate at H = {h}", 2)
        meas[f"{k}.outer_at_edge"] = exact(outer_edge, "", "1 if the best outer rate is at its ladder's end")
        meas[f"{k}.bytes"] = meas[f"ch12.{name}.bytes"]
        meas[f"{k}.ratio"] = meas[f"ch12.{name}.ratio"]
        meas[f"{k}.outer_steps"] = exact(cfg.setup.steps // h, "syncs", f"outer steps at H = {h}")
        meas[f"{k}.H"] = exact(h, "steps", "local steps between syncs")
        for part in ("val", "best", "bytes", "rates"):
            series[f"diloco{h}_{part}"] = series[f"{name}_{part}"]
    h = cfg.ablation_h
    top = tops[h]
    meas["ch12.diloco.outer_gain"] = paired(
        best[f"diloco{h}_avg"], best[top], f"plain averaging minus the best outer Nesterov at H = {h}, by seed"
    )
    meas["ch12.diloco.edges"] = exact(edges, "settings of H", "H whose best inner or outer rate is at a ladder's end")
    meas["ch12.diloco.outer_momentum"] = exact(cfg.momentum, "", "outer Nesterov momentum", 2)
    meas["ch12.diloco.outer_rungs"] = exact(len(cfg.outer[0][1]), "rates", "outer rates tried at each H")
    meas["ch12.diloco.paper_gap"] = paired(
        best[f"diloco{h}_o70"], best[top], f"the paper's outer rate 0.7 minus the best at H = {h}, by seed"
    )
    meas["ch12.diloco.ablation_h"] = exact(h, "steps", "H of the plain-averaging ablation")
    return Outcome(meas, series)


# --------------------------------------------------------------------------- real processes


@dataclass(frozen=True)
class Real:
    setup: Setup = field(default_factory=lambda: Setup(steps=200, eval_every=100))
    methods: tuple[Method, ...] = (
        Method("dense"),
        Method("topk", k_frac=0.01, feedback=True),
        Method("demo", chunk_k=4),
        Method("diloco", H=25),
    )
    lr: float = 2e-2
    sign_lr: float = 6e-3
    n_seeds: int = 3


REAL_QUICK = {
    "setup.steps": 20,
    "setup.eval_every": 10,
    "setup.warmup": 5,
    "n_seeds": 2,
    "methods": (
        Method("dense"),
        Method("topk", k_frac=0.01, feedback=True),
        Method("demo", chunk_k=4),
        Method("diloco", H=5),
    ),
}


@experiment("ch12.real", config=Real(), seeds=SEEDS, quick=REAL_QUICK)
def real(ctx: RunContext) -> Outcome:
    """One setting of each method in 4 real gloo processes against the one-process simulation."""
    cfg: Real = ctx.config
    seeds = tuple(ctx.seeds[: cfg.n_seeds])
    jobs = tuple(
        RealJob(m, cfg.setup, ((cfg.sign_lr if m.kind == "demo" else cfg.lr),) * len(seeds), seeds) for m in cfg.methods
    )
    ctx.report_progress(0.05, "4 processes")
    res = launch.run(run_worker, cfg.setup.workers, jobs)
    meas: dict[str, Measurement] = {}
    for j, job in enumerate(jobs):
        ctx.report_progress(0.5 + 0.5 * j / len(jobs), f"simulating {job.method.name}")
        sim = train_workers(
            job.method, job.setup, job.lrs, job.seeds, range(job.setup.workers), Local(job.setup.workers)
        )
        thetas = [np.asarray(r[j]["theta"]) for r in res]
        apart = max(float(np.abs(t - thetas[0]).max()) for t in thetas)
        if apart != 0.0:
            raise RuntimeError(
                f"{job.method.name}: the real processes ended with different weights ({apart:.2e} apart)"
            )
        sent = {float(r[j]["sent"][-1]) for r in res}
        if sent != {sim.bytes_per_worker[-1]}:
            raise RuntimeError(
                f"{job.method.name}: processes counted {sent} bytes, the simulation {sim.bytes_per_worker[-1]}"
            )
        k = f"ch12.real.{job.method.kind}"
        meas[f"{k}.theta_diff"] = exact(
            float(np.abs(thetas[0] - sim.theta.numpy()).max()),
            "",
            f"largest |real - simulated| weight after the run ({job.method.name})",
            2,
        )
        meas[f"{k}.loss_diff"] = exact(
            float(np.abs(np.asarray(res[0][j]["val"]) - sim.val.numpy()).max()),
            "nats",
            f"largest |real - simulated| validation loss ({job.method.name})",
            2,
        )
        meas[f"{k}.loss"] = spread(
            np.asarray(res[0][j]["val"])[:, -1], "nats", f"final validation loss of the real run ({job.method.name})"
        )
        meas[f"{k}.seconds"] = exact(
            float(np.median([r[j]["seconds"] for r in res])),
            "s",
            f"wall time of the real run, {len(seeds)} seeds ({job.method.name})",
            2,
        )
        if job.method.kind == "topk":
            meas[f"{k}.union"] = exact(float(res[0][j]["union"]), "", "distinct positions sent per step over k", 3)
            meas[f"{k}.common"] = exact(float(res[0][j]["common"]), "", "share of k positions every process sent", 2)
    meas["ch12.real.steps"] = exact(cfg.setup.steps, "steps", "steps of each real run")
    meas["ch12.real.seeds"] = exact(len(seeds), "seeds", "seeds of each real run")
    meas["ch12.real.processes"] = exact(cfg.setup.workers, "processes", "real processes")
    meas["ch12.real.lr"] = exact(cfg.lr, "", "peak rate of the real AdamW runs", 2)
    meas["ch12.real.sign_lr"] = exact(cfg.sign_lr, "", "peak rate of the real DeMo run", 2)
    return Outcome(meas, {})


# --------------------------------------------------------------------------- bytes into time


@dataclass(frozen=True)
class Links:
    setup: Setup = field(default_factory=Setup)
    #: link speeds in bytes per second: NVLink (H100, per GPU) and InfiniBand/RoCE per GPU are cited
    #: (S12.links); the two WAN speeds are assumptions (facts.md marks "typical WAN 1-10 Gb/s" unverified).
    links: tuple[tuple[str, float], ...] = (
        ("nvlink", 900e9),
        ("ib", 400e9 / 8),
        ("wan10", 10e9 / 8),
        ("wan1", 1e9 / 8),
    )
    big: float = 1e9  # weights of the model the byte ratios are carried to (arithmetic, not a run)
    methods: tuple[Method, ...] = TOPK + DEMO[:2] + DILOCO_H


def bytes_per_step(method: Method, P: int, W: int) -> float:
    """Bytes each worker sends per step on average: what Local counts for that method."""
    if method.kind == "dense":
        return cz.allreduce_bytes(P, W)
    if method.kind == "topk":
        return cz.allgather_bytes(max(1, round(method.k_frac * P)) * cz.ENTRY_BYTES, W)
    if method.kind == "demo":
        return cz.allgather_bytes(cz.chunks(P, method.chunk) * method.chunk_k * cz.ENTRY_BYTES, W)
    return cz.allreduce_bytes(P, W) / method.H


@experiment("ch12.links", config=Links(), quick={})
def links(ctx: RunContext) -> Outcome:
    """Each method's bytes per step, over the full gradient's, as time per step at four link speeds."""
    cfg: Links = ctx.config
    P, W = param_count(cfg.setup.model), cfg.setup.workers
    meas: dict[str, Measurement] = {}
    dense = bytes_per_step(Method("dense"), P, W)
    names, table = [], []
    for m in cfg.methods:
        b = bytes_per_step(m, P, W)
        names.append(m.name)
        meas[f"ch12.links.{m.name}.step_bytes"] = exact(b, "bytes", f"bytes per worker per step, {m.name} (toy)", 3)
        meas[f"ch12.links.{m.name}.fraction"] = exact(b / dense, "", f"{m.name}'s bytes over the full gradient's", 2)
        row = []
        for link, speed in cfg.links:
            seconds = b / dense * cz.allreduce_bytes(int(cfg.big), W) / speed
            row.append(seconds)
            meas[f"ch12.links.{m.name}.{link}"] = exact(
                seconds,
                "s",
                f"seconds per step sending {m.name}'s share of a {cfg.big:.0e}-weight gradient over {link}",
                2,
            )
        table.append(row)
    for link, speed in cfg.links:
        meas[f"ch12.links.speed.{link}"] = exact(speed * 8 / 1e9, "Gb/s", f"{link} speed used", 3)
        meas[f"ch12.links.toy.{link}"] = exact(dense / speed, "s", f"the toy's full gradient per step over {link}", 2)
    meas["ch12.links.big"] = exact(cfg.big, "weights", "size of the model the byte shares are carried to", 1)
    meas["ch12.links.big_dense"] = exact(
        cz.allreduce_bytes(int(cfg.big), W),
        "bytes",
        "its float32 gradient, ring all-reduce bytes per worker per step",
        2,
    )
    return Outcome(meas, {"seconds": np.array(table), "speeds": np.array([s for _, s in cfg.links])})


# --------------------------------------------------------------------------- waiting


@dataclass(frozen=True)
class Queue:
    workers: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    delay: float = 0.25  # mean exponential delay per step, in units of the fixed compute time
    every: tuple[int, ...] = (1, 10, 100)
    draws: int = 40_000  # steps per worker simulated per setting
    rhos: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.8, 0.9)
    messages: int = 100_000
    n_seeds: int = 3


@experiment(
    "ch12.queue",
    config=Queue(),
    seeds=SEEDS,
    quick={"draws": 2_000, "messages": 2_000, "n_seeds": 2, "workers": (1, 4, 16), "rhos": (0.5, 0.9)},
)
def queue(ctx: RunContext) -> Outcome:
    """W workers waiting for the slowest at each sync, and a link as an M/D/1 queue, against the formulas."""
    cfg: Queue = ctx.config
    seeds = ctx.seeds[: cfg.n_seeds]
    per_step = np.zeros((len(cfg.every), len(cfg.workers), len(seeds)))
    idle = np.zeros_like(per_step)
    for a, every in enumerate(cfg.every):
        for b, w in enumerate(cfg.workers):
            for c, s in enumerate(seeds):
                res = qu.simulate_sync(w, cfg.delay, every, max(1, cfg.draws // every), random.Random(s))
                per_step[a, b, c], idle[a, b, c] = res.per_step, res.idle
        ctx.report_progress(0.5 * (a + 1) / len(cfg.every), f"syncs every {every}")
    formula = np.array([qu.sync_step_formula(w, cfg.delay) for w in cfg.workers])
    rel = np.abs(per_step[0].mean(1) / formula - 1)
    md1 = np.array([[qu.simulate_queue(r, cfg.messages, random.Random(s)) for s in seeds] for r in cfg.rhos])
    mm1 = np.array([[qu.simulate_queue(r, cfg.messages, random.Random(s), False) for s in seeds] for r in cfg.rhos])
    md1_f = np.array([qu.md1_wait(r) for r in cfg.rhos])
    mm1_f = np.array([qu.mm1_wait(r) for r in cfg.rhos])
    meas: dict[str, Measurement] = {
        "ch12.strag.delay": exact(cfg.delay, "", "mean exponential delay per step over the fixed compute", 2),
        "ch12.strag.max_rel": exact(float(rel.max()), "", "largest |simulated / (1 + s H_W) - 1| over W", 2),
        "ch12.md1.max_rel": exact(
            float(np.abs(md1.mean(1) / md1_f - 1).max()),
            "",
            "largest |simulated / formula - 1| of the M/D/1 wait over rho",
            2,
        ),
        "ch12.mm1.max_rel": exact(
            float(np.abs(mm1.mean(1) / mm1_f - 1).max()),
            "",
            "largest |simulated / formula - 1| of the M/M/1 wait over rho",
            2,
        ),
        "ch12.md1.messages": exact(cfg.messages, "messages", "messages per simulated queue"),
        "ch12.strag.draws": exact(cfg.draws, "steps", "steps per worker per simulated setting"),
    }
    for b, w in enumerate(cfg.workers):
        for a, every in enumerate(cfg.every):
            meas[f"ch12.strag.w{w}.h{every}.idle"] = spread(
                idle[a, b], "", f"idle share, {w} workers, sync every {every}"
            )
        meas[f"ch12.strag.w{w}.formula"] = exact(formula[b], "", f"1 + s H_W at W = {w}", 3)
    for i, r in enumerate(cfg.rhos):
        tag = f"rho{round(100 * r)}"
        meas[f"ch12.md1.{tag}.sim"] = spread(md1[i], "service times", f"simulated M/D/1 wait at rho = {r}")
        meas[f"ch12.md1.{tag}.formula"] = exact(md1_f[i], "service times", f"rho/(2(1-rho)) at rho = {r}", 3)
        meas[f"ch12.mm1.{tag}.sim"] = spread(mm1[i], "service times", f"simulated M/M/1 wait at rho = {r}")
        meas[f"ch12.md1.{tag}.over_mm1"] = exact(
            float(md1[i].mean() / mm1[i].mean()), "", f"M/D/1 over M/M/1 wait, simulated, rho = {r}", 2
        )
    series = {
        "workers": np.array(cfg.workers),
        "every": np.array(cfg.every),
        "per_step": per_step,
        "idle": idle,
        "formula": formula,
        "rhos": np.array(cfg.rhos),
        "md1": md1,
        "mm1": mm1,
        "md1_f": md1_f,
        "mm1_f": mm1_f,
    }
    return Outcome(meas, series)


# --------------------------------------------------------------------------- settings the slides state


@experiment("ch12.settings")
def settings(ctx: RunContext) -> Outcome:
    """The settings the slides name (shares sent, coefficients per chunk, workers and loads simulated)."""
    q, topk_fracs = Queue(), sorted({m.k_frac for m in TOPK if m.kind == "topk"})
    demo_ks = sorted({m.chunk_k for m in DEMO})
    decays = sorted({m.decay for m in DEMO})
    meas = {
        "ch12.set.topk.small": exact(topk_fracs[0], "", "the smaller share of weights top-k sends", 1),
        "ch12.set.topk.large": exact(topk_fracs[-1], "", "the larger share of weights top-k sends", 1),
        "ch12.set.demo.k_small": exact(demo_ks[0], "coefficients", "the fewer coefficients DeMo sends per chunk"),
        "ch12.set.demo.k_large": exact(demo_ks[-1], "coefficients", "the more coefficients DeMo sends per chunk"),
        "ch12.set.demo.decay_alt": exact(decays[0], "", "the other momentum decay tried for DeMo", 1),
        "ch12.set.width": exact(Setup().model.d_model, "", "width of the Decoder's matrices (d_model)"),
        "ch12.set.strag.w_max": exact(max(q.workers), "workers", "most workers simulated"),
        "ch12.set.strag.h_max": exact(max(q.every), "steps", "longest sync interval simulated"),
        "ch12.set.md1.rho_max": exact(max(q.rhos), "", "highest link load simulated", 1),
    }
    return Outcome(meas, {})
