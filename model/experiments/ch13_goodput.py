"""Chapter 13, running a job: goodput and Young's interval (``ch13.goodput``).

A job that needs `work` hours of computation, under failures at Llama 3's observed rate (419
unexpected interruptions in 54 days, S13.llama3_fail, so M = 54 × 24 / 419 hours), with an assumed
checkpoint save of δ and an assumed restart of R (neither is Llama 3's: the paper does not give
them). model/goodput.py simulates it at τ values around Young's √(2δM), three failure seeds, and
computes the expected goodput in closed form; the live slide (components/youngs-interval.js) draws the
same curve from the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.experiments.common import exact, measured
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.goodput import Job, best_interval, expected_goodput, goodput_curve, log_grid, simulate, young_interval

SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class Goodput:
    days: float = 54.0  # Llama 3's pre-training snapshot (S13.llama3_fail)
    unexpected: int = 419  # its unexpected interruptions
    delta_min: float = 1.0  # assumed checkpoint save, minutes
    restart_min: float = 10.0  # assumed restart, minutes
    work: float = 1000.0  # useful hours the simulated job needs
    points: int = 41  # τ values from τ_Young / 10 to 10 τ_Young
    far: float = 10.0  # "far from the optimum": τ this many times shorter or longer than Young's


@experiment("ch13.goodput", config=Goodput(), seeds=SEEDS, quick={"work": 50.0, "points": 9})
def goodput(ctx: RunContext) -> Outcome:
    """Goodput against the checkpoint interval: simulated, in closed form, and Young's optimum."""
    cfg: Goodput = ctx.config
    mtbf = cfg.days * 24 / cfg.unexpected
    job = Job(mtbf=mtbf, delta=cfg.delta_min / 60, restart=cfg.restart_min / 60, work=cfg.work)
    young = young_interval(job.delta, job.mtbf)
    taus = log_grid(young / cfg.far, young * cfg.far, cfg.points)
    mid = cfg.points // 2
    sims = np.array([goodput_curve(job, taus, s) for s in ctx.seeds])  # (seeds, taus)
    expected = np.array([expected_goodput(job, t) for t in taus])
    best = best_interval(job)
    runs = [simulate(job, young, s) for s in ctx.seeds]
    argmax = [taus[int(np.argmax(row))] * 60 for row in sims]
    m: dict[str, Measurement] = {
        "ch13.gp.mtbf": exact(mtbf, "hours", "mean time between unexpected interruptions, Llama 3 (54 d / 419)", 2),
        "ch13.gp.delta": exact(cfg.delta_min, "minutes", "assumed checkpoint save time δ", 2),
        "ch13.gp.restart": exact(cfg.restart_min, "minutes", "assumed restart time R", 2),
        "ch13.gp.work": exact(cfg.work, "hours", "useful hours each simulated job needs"),
        "ch13.gp.young": exact(young * 60, "minutes", "Young's interval √(2δM)", 2),
        "ch13.gp.best": exact(best * 60, "minutes", "the interval of the highest expected goodput", 2),
        "ch13.gp.best_over_young": exact(best / young, "", "exact optimum over Young's interval", 3),
        "ch13.gp.expected_young": exact(expected_goodput(job, young), "", "expected goodput at Young's interval", 3),
        "ch13.gp.expected_best": exact(expected_goodput(job, best), "", "expected goodput at the exact optimum", 3),
        "ch13.gp.sim_young": measured(sims[:, mid], "", "simulated goodput at Young's interval", 3),
        "ch13.gp.sim_argmax": measured(argmax, "minutes", "the grid's τ of the highest simulated goodput", 2),
        "ch13.gp.sim_gap": exact(
            float(np.abs(sims.mean(axis=0) - expected).max()), "", "largest |simulated mean − expected| on the grid", 2
        ),
        "ch13.gp.failures": measured(
            [r.failures for r in runs], "failures", "failures in one simulated job at τ_Young", 2
        ),
        "ch13.gp.far": exact(cfg.far, "", "the grid's ends: τ_Young divided and multiplied by this"),
        "ch13.gp.sim_short": measured(sims[:, 0], "", "simulated goodput at τ_Young / far", 3),
        "ch13.gp.sim_long": measured(sims[:, -1], "", "simulated goodput at τ_Young × far", 3),
        "ch13.gp.waste_first_order": exact(
            (2 * job.delta / job.mtbf) ** 0.5, "", "first-order waste √(2δ/M), restarts left out", 2
        ),
        "ch13.gp.restart_share": exact(job.restart / job.mtbf, "", "restart time over M", 2),
        "ch13.gp.lost": measured(
            [r.lost / r.elapsed for r in runs], "", "share of time lost to failures at τ_Young (work redone)", 2
        ),
    }
    return Outcome(
        measurements=m,
        series={
            "tau_min": [t * 60 for t in taus],
            "sim": sims,
            "expected": expected,
            "young_min": young * 60,
            "best_min": best * 60,
        },
    )
