"""Waiting, simulated in plain Python: workers that wait for the slowest at each sync, and
messages that wait for a shared link (an M/D/1 queue), each against its closed form.

- Stragglers: each worker's step takes a fixed time plus an exponential delay of mean s; a
  synchronous step lasts as long as the slowest of W workers, whose mean is
  1 + s (1 + 1/2 + ... + 1/W) (the maximum of W exponentials). Syncing every H steps waits
  for the slowest sum of H steps instead, which varies less relative to its mean.
- The link: messages arrive at random (Poisson, rate lam), each takes the link for 1/mu
  (deterministic: bytes over bandwidth). The Pollaczek-Khinchine mean wait in the queue is
  W_q = rho / (2 mu (1 - rho)), rho = lam / mu < 1; exponential service times give
  rho / (mu (1 - rho)), twice as long.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def harmonic(n: int) -> float:
    """1 + 1/2 + ... + 1/n."""
    return sum(1.0 / i for i in range(1, n + 1))


def sync_step_formula(workers: int, delay: float) -> float:
    """Mean time of a synchronous step: 1 + s H_W."""
    return 1.0 + delay * harmonic(workers)


@dataclass(frozen=True)
class SyncResult:
    per_step: float
    """Mean wall time per step (in units of the fixed compute time)."""
    idle: float
    """Mean share of the time a worker waits for the slowest."""


def simulate_sync(workers: int, delay: float, every: int, rounds: int, rng: random.Random) -> SyncResult:
    """``rounds`` syncs of W workers, each doing ``every`` steps of 1 + Exp(mean delay) between syncs."""
    wall = busy = 0.0
    for _ in range(rounds):
        sums = [sum(1.0 + rng.expovariate(1.0 / delay) for _ in range(every)) for _ in range(workers)]
        slowest = max(sums)
        wall += slowest
        busy += sum(sums) / workers
    return SyncResult(wall / (rounds * every), 1.0 - busy / wall)


def md1_wait(rho: float, mu: float = 1.0) -> float:
    """M/D/1 mean wait in the queue (before service): rho / (2 mu (1 - rho))."""
    if not 0.0 <= rho < 1.0:
        raise ValueError(f"the queue is stable only for 0 <= rho < 1, got {rho}")
    return rho / (2.0 * mu * (1.0 - rho))


def mm1_wait(rho: float, mu: float = 1.0) -> float:
    """M/M/1 mean wait in the queue: rho / (mu (1 - rho))."""
    if not 0.0 <= rho < 1.0:
        raise ValueError(f"the queue is stable only for 0 <= rho < 1, got {rho}")
    return rho / (mu * (1.0 - rho))


def simulate_queue(rho: float, messages: int, rng: random.Random, deterministic: bool = True, mu: float = 1.0) -> float:
    """Mean wait of ``messages`` Poisson arrivals (rate rho mu) at one link that serves them
    in order, each for 1/mu (or an exponential time of that mean): Lindley's recursion
    w' = max(0, w + service - gap)."""
    lam = rho * mu
    wait = total = 0.0
    for _ in range(messages):
        total += wait
        service = 1.0 / mu if deterministic else rng.expovariate(mu)
        wait = max(0.0, wait + service - rng.expovariate(lam))
    return total / messages
