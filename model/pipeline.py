"""A pipeline-schedule simulator: which device computes what, when, and how long it idles.

p devices hold consecutive stages of a model; a batch is cut into m micro-batches. Each
micro-batch's forward runs through the stages in order and its backward in reverse. A
schedule fixes the order in which each device takes its work:

- ``gpipe``: every forward, then every backward (Huang et al. 2019);
- ``1f1b``: PipeDream-Flush: device d runs p-d-1 warm-up forwards, then alternates one
  forward and one backward, then drains its backwards (Narayanan et al. 2021, §2.2);
- ``interleaved``: each device holds v chunks (model stage k lives on device k mod p),
  1F1B over micro-batch/chunk units in groups of p (Narayanan et al. 2021, §2.2.2).

A forward of one whole stage costs 1, its backward ``ratio``; a chunk costs 1/v of that.
Communication is free. Each device runs its list in order; an op starts when the device
is free and its input exists (the previous stage's forward, the next stage's backward).
Plain Python, the same arithmetic as components/pipeline-schedule.js.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEDULES = ("gpipe", "1f1b", "interleaved")


@dataclass(frozen=True)
class Op:
    """One unit of work on one device: forward ("F") or backward ("B") of micro-batch
    ``mb`` through chunk ``chunk`` (model stage chunk*p + device)."""

    device: int
    kind: str
    mb: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class Schedule:
    """A simulated schedule: its ops, length, bubble and peak activations held."""

    p: int
    m: int
    v: int
    ratio: float
    name: str
    ops: tuple[Op, ...]
    makespan: float
    busy: float
    """Work per device: m * (1 + ratio)."""
    bubble: float
    """Idle share of the devices' time: 1 - busy / makespan."""
    bubble_over_work: float
    """Idle time per device over its work: makespan / busy - 1 ((p-1)/m for GPipe)."""
    peak_in_flight: float
    """Most micro-batches whose activations a device holds at once (forward done, backward
    not yet), counted in whole stages: a chunk holds 1/v of one."""


def device_order(p: int, m: int, v: int, name: str, device: int) -> list[tuple[str, int, int]]:
    """The order of (kind, micro-batch, chunk) that ``device`` runs under schedule ``name``."""
    if name == "gpipe":
        return [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]
    if name == "1f1b":
        warm = min(p - device - 1, m)
        order = [("F", i, 0) for i in range(warm)]
        f, b = warm, 0
        while f < m:
            order += [("F", f, 0), ("B", b, 0)]
            f, b = f + 1, b + 1
        return order + [("B", i, 0) for i in range(b, m)]
    if name == "interleaved":
        units = m * v

        def unit(k: int, backward: bool) -> tuple[int, int]:
            group, pos = divmod(k, p * v)
            chunk = (k // p) % v
            return group * p + pos % p, (v - 1 - chunk) if backward else chunk

        warm = min((p - device - 1) * 2 + (v - 1) * p, units)
        order = [("F", *unit(k, False)) for k in range(warm)]
        f, b = warm, 0
        while f < units:
            order += [("F", *unit(f, False)), ("B", *unit(b, True))]
            f, b = f + 1, b + 1
        return order + [("B", *unit(k, True)) for k in range(b, units)]
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {name!r}")


def check(p: int, m: int, v: int, name: str, ratio: float) -> None:
    """Reject settings the schedules are not defined for, saying which."""
    if p < 1 or m < 1 or v < 1:
        raise ValueError(f"p, m and v must be at least 1, got p={p}, m={m}, v={v}")
    if ratio <= 0:
        raise ValueError(f"the backward/forward cost ratio must be positive, got {ratio}")
    if name != "interleaved" and v != 1:
        raise ValueError(f"v chunks apply only to the interleaved schedule, got v={v} for {name}")
    if name == "interleaved" and m % p:
        raise ValueError(f"the interleaved schedule needs m a multiple of p, got m={m}, p={p}")


def simulate(p: int, m: int, name: str = "gpipe", v: int = 1, ratio: float = 2.0) -> Schedule:
    """Run ``name`` on p devices over m micro-batches; see the module docstring."""
    check(p, m, v, name, ratio)
    stages = p * v
    f_cost, b_cost = 1.0 / v, ratio / v
    orders = [device_order(p, m, v, name, d) for d in range(p)]
    done: dict[tuple[str, int, int], float] = {}  # (kind, mb, model stage) -> end time
    free = [0.0] * p
    nxt = [0] * p
    ops: list[Op] = []
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for d in range(p):
            while nxt[d] < len(orders[d]):
                kind, mb, chunk = orders[d][nxt[d]]
                stage = chunk * p + d
                if kind == "F":
                    dep = ("F", mb, stage - 1) if stage > 0 else None
                else:
                    dep = ("B", mb, stage + 1) if stage < stages - 1 else ("F", mb, stage)
                if dep is not None and dep not in done:
                    break
                start = max(free[d], done[dep] if dep is not None else 0.0)
                end = start + (f_cost if kind == "F" else b_cost)
                done[(kind, mb, stage)] = end
                free[d] = end
                ops.append(Op(d, kind, mb, chunk, start, end))
                nxt[d] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            raise RuntimeError(f"schedule {name} deadlocks at p={p}, m={m}, v={v}")
    makespan = max(free)
    busy = m * (1.0 + ratio)
    return Schedule(
        p=p, m=m, v=v, ratio=ratio, name=name, ops=tuple(ops), makespan=makespan, busy=busy,
        bubble=1.0 - busy / makespan, bubble_over_work=makespan / busy - 1.0,
        peak_in_flight=_peak_in_flight(ops, p, v),
    )  # fmt: skip


def _peak_in_flight(ops: list[Op], p: int, v: int) -> float:
    """Most stage-activations held at once on any device (a chunk's count 1/v)."""
    peak = 0
    for d in range(p):
        held = best = 0
        for op in sorted((o for o in ops if o.device == d), key=lambda o: o.start):
            held += 1 if op.kind == "F" else -1
            best = max(best, held)
        peak = max(peak, best)
    return peak / v


def gpipe_bubble(p: int, m: int) -> float:
    """GPipe's idle share (p-1)/(m+p-1) (Huang et al. 2019, §2.3)."""
    return (p - 1) / (m + p - 1)


def interleaved_bubble_over_work(p: int, m: int, v: int) -> float:
    """Idle time over work, (1/v)(p-1)/m (Narayanan et al. 2021, §2.2.2); v=1 is GPipe's and 1F1B's."""
    return (p - 1) / (v * m)
