"""Goodput under failures: a job that checkpoints every τ hours of work, simulated and in closed form.

The model (all times in hours):

- the job needs `work` hours of useful computation; it saves a checkpoint after every `tau`
  hours of work, and a save takes `delta` hours (the job waits for it);
- failures arrive as a Poisson process of mean interval `mtbf` (M) while the job runs or saves;
  a failure loses everything since the last completed checkpoint;
- after a failure the job spends `restart` hours (R) relaunching and reloading, during which
  no failure is counted (the failure clock restarts when the job does: exponential gaps are memoryless).

Goodput is useful work over elapsed time. For one segment of X = τ + δ hours, the expected elapsed
time is (M + R)(e^{X/M} - 1) (geometric retries, each losing the truncated-exponential time to its
failure), so the expected goodput is τ / ((M + R)(e^{(τ+δ)/M} - 1)). To first order in δ/τ and τ/M
the waste is δ/τ + τ/(2M), least at Young's interval τ = √(2δM) (Young 1974).

`simulate` draws the failures from a seeded 32-bit generator (mulberry32) so that the live
component (components/youngs-interval.js) draws exactly the same numbers; every τ of one call sees
the same sequence of failure gaps (common random numbers), so the curve over τ is smooth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class Job:
    """A job under failures; every time is in hours."""

    mtbf: float  # M: mean time between failures while the job runs
    delta: float  # δ: time to save one checkpoint
    restart: float = 0.0  # R: time from a failure until the job computes again
    work: float = 1000.0  # useful hours the job needs

    def __post_init__(self) -> None:
        if not (self.mtbf > 0 and self.delta >= 0 and self.restart >= 0 and self.work > 0):
            raise ValueError(f"need mtbf > 0, delta >= 0, restart >= 0 and work > 0; got {self}")


def _imul(a: int, b: int) -> int:
    """JavaScript's Math.imul on unsigned 32-bit values: the low 32 bits of a * b."""
    return (a * b) & MASK


class Mulberry32:
    """The mulberry32 generator, bit for bit as the component's JavaScript computes it."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def uniform(self) -> float:
        """A number in [0, 1) with 32 random bits."""
        self.state = (self.state + 0x6D2B79F5) & MASK
        t = self.state
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & MASK
        t &= MASK
        return ((t ^ (t >> 14)) & MASK) / 4294967296.0

    def exponential(self, mean: float) -> float:
        """An exponential gap of the given mean (inverse transform of 1 - u, never log 0)."""
        return -mean * math.log(1.0 - self.uniform())


def failure_gaps(job: Job, seed: int, n: int) -> list[float]:
    """The first n gaps between failures (hours of running between one restart and the next failure)."""
    rng = Mulberry32(seed)
    return [rng.exponential(job.mtbf) for _ in range(n)]


@dataclass(frozen=True)
class Run:
    """What one simulated job did."""

    elapsed: float  # hours from start to the last checkpoint of the job's work
    failures: int
    lost: float  # hours of computation and saving thrown away by failures
    saving: float  # hours spent saving checkpoints that survived
    restarting: float  # hours spent restarting

    def goodput(self, work: float) -> float:
        return work / self.elapsed


def simulate(job: Job, tau: float, seed: int) -> Run:
    """Run `job` checkpointing every `tau` hours of work, failures drawn from `seed`."""
    if not tau > 0:
        raise ValueError(f"tau must be positive, got {tau}")
    rng = Mulberry32(seed)
    t, done, failures, lost, saving, restarting = 0.0, 0.0, 0, 0.0, 0.0, 0.0
    left = rng.exponential(job.mtbf)  # running time until the next failure
    while done < job.work:
        segment = min(tau, job.work - done)
        need = segment + job.delta
        if need <= left:  # the segment and its save complete
            t += need
            left -= need
            done += segment
            saving += job.delta
        else:  # a failure: the partial segment is lost, then the restart
            t += left + job.restart
            lost += left
            restarting += job.restart
            failures += 1
            left = rng.exponential(job.mtbf)
    return Run(t, failures, lost, saving, restarting)


def goodput_curve(job: Job, taus: Sequence[float], seed: int) -> list[float]:
    """Simulated goodput at each τ (the same failure draws for every τ)."""
    return [simulate(job, tau, seed).goodput(job.work) for tau in taus]


def expected_goodput(job: Job, tau: float) -> float:
    """The expected goodput of a long job (many segments): τ / ((M + R)(e^{(τ+δ)/M} - 1))."""
    return tau / ((job.mtbf + job.restart) * math.expm1((tau + job.delta) / job.mtbf))


def young_interval(delta: float, mtbf: float) -> float:
    """Young's first-order optimum checkpoint interval √(2δM)."""
    return math.sqrt(2.0 * delta * mtbf)


def best_interval(job: Job, lo: float | None = None, hi: float | None = None, iters: int = 200) -> float:
    """The τ that maximises expected_goodput (golden-section search; the function is unimodal in τ)."""
    a = lo if lo is not None else 1e-6 * job.mtbf
    b = hi if hi is not None else 10.0 * job.mtbf
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = expected_goodput(job, c), expected_goodput(job, d)
    for _ in range(iters):
        if fc > fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = expected_goodput(job, c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = expected_goodput(job, d)
    return (a + b) / 2.0


def log_grid(lo: float, hi: float, n: int) -> list[float]:
    """n values from lo to hi, evenly spaced in log (the component's τ axis)."""
    if n < 2 or not 0 < lo < hi:
        raise ValueError("need n >= 2 and 0 < lo < hi")
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
