"""A narrow valley: SGD, momentum and Adam on a two-dimensional quadratic, in NumPy float64.

    f(x) = 1/2 x^T H x,   H = R diag(1/kappa, 1) R^T,   R the rotation by `angle` degrees

The steep direction has curvature 1 and the flat one 1/kappa, so kappa is the condition
number and SGD is stable for step sizes below 2 whatever kappa is. Every run starts at
the same point of the level set f = 1/2, x0 = R (-0.8 sqrt(kappa), 0.6), far along the
flat direction. The optimisers are those of model/optim.py, written for two coordinates:

    sgd       x <- x - lr g
    momentum  b <- g (first step), then b <- beta b + g;  x <- x - lr b      (torch.optim.SGD)
    adam      m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2
              x <- x - lr (m / c1) / (sqrt(v / c2) + eps),  c_i = 1 - b_i^t  (Kingma & Ba, Alg. 1)

with b_i^t kept as a running product, so that the live slide's JavaScript
(components/valley-descent.js) does exactly the same float64 operations in the same order
(tests/test_components_valley_descent.py holds the two within 1e-12). Every function takes
arrays of settings (one run per element) and steps them all at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

KINDS = ("sgd", "momentum", "adam")
START = (-0.8, 0.6)  # x0 in the valley's own axes, the flat coordinate scaled by sqrt(kappa)


@dataclass(frozen=True)
class Valley:
    """The quadratic: its condition number and the angle of its flat axis (degrees)."""

    kappa: float
    angle: float = 0.0

    def hessian(self) -> tuple[float, float, float]:
        """(h11, h12, h22) of H = R diag(1/kappa, 1) R^T."""
        a = math.radians(self.angle)
        c, s = math.cos(a), math.sin(a)
        return c * c / self.kappa + s * s, c * s * (1 / self.kappa - 1), s * s / self.kappa + c * c

    def start(self) -> tuple[float, float]:
        """x0 = R (-0.8 sqrt(kappa), 0.6): f(x0) = 1/2."""
        a = math.radians(self.angle)
        c, s = math.cos(a), math.sin(a)
        u, w = START[0] * math.sqrt(self.kappa), START[1]
        return c * u - s * w, s * u + c * w


@dataclass(frozen=True)
class Settings:
    """One optimiser's settings; arrays give one run per element (broadcast together)."""

    kind: str
    lr: float | np.ndarray
    beta: float | np.ndarray = 0.9  # momentum's
    beta1: float | np.ndarray = 0.9  # Adam's
    beta2: float | np.ndarray = 0.999
    eps: float = 1e-8

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


def loss(valley: Valley, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """f at the points (x, y)."""
    h11, h12, h22 = valley.hessian()
    return 0.5 * (h11 * x * x + 2 * h12 * x * y + h22 * y * y)


class Stepper:
    """The runs of one optimiser on one valley, stepped together: `step()` makes update t + 1."""

    def __init__(self, valley: Valley, settings: Settings):
        self.valley, self.s = valley, settings
        shape = np.broadcast(
            np.asarray(settings.lr), np.asarray(settings.beta), np.asarray(settings.beta1), np.asarray(settings.beta2)
        ).shape
        x0, y0 = valley.start()
        self.x, self.y = np.full(shape, x0), np.full(shape, y0)
        self.bx, self.by = np.zeros(shape), np.zeros(shape)  # momentum buffer, or Adam's m
        self.vx, self.vy = np.zeros(shape), np.zeros(shape)  # Adam's v
        self.p1, self.p2 = np.ones(shape), np.ones(shape)  # b1^t and b2^t
        self.t = 0

    def step(self) -> None:
        h11, h12, h22 = self.valley.hessian()
        gx = h11 * self.x + h12 * self.y
        gy = h12 * self.x + h22 * self.y
        s = self.s
        self.t += 1
        if s.kind == "sgd":
            # #region valley-sgd
            self.x = self.x - s.lr * gx
            self.y = self.y - s.lr * gy
            # #endregion valley-sgd
        elif s.kind == "momentum":
            # #region valley-momentum
            if self.t == 1:
                self.bx, self.by = gx, gy
            else:
                self.bx = s.beta * self.bx + gx
                self.by = s.beta * self.by + gy
            self.x = self.x - s.lr * self.bx
            self.y = self.y - s.lr * self.by
            # #endregion valley-momentum
        else:
            # #region valley-adam
            self.bx = s.beta1 * self.bx + (1 - s.beta1) * gx
            self.by = s.beta1 * self.by + (1 - s.beta1) * gy
            self.vx = s.beta2 * self.vx + (1 - s.beta2) * (gx * gx)
            self.vy = s.beta2 * self.vy + (1 - s.beta2) * (gy * gy)
            self.p1 = self.p1 * s.beta1
            self.p2 = self.p2 * s.beta2
            c1, c2 = 1 - self.p1, 1 - self.p2
            self.x = self.x - s.lr * (self.bx / c1) / (np.sqrt(self.vx / c2) + s.eps)
            self.y = self.y - s.lr * (self.by / c1) / (np.sqrt(self.vy / c2) + s.eps)
            # #endregion valley-adam


def trajectory(valley: Valley, settings: Settings, steps: int) -> np.ndarray:
    """The points x_0 .. x_steps of one run (scalar settings): an array (steps + 1, 2)."""
    run = Stepper(valley, settings)
    points = [(float(run.x), float(run.y))]
    for _ in range(steps):
        run.step()
        points.append((float(run.x), float(run.y)))
    return np.array(points)


def steps_to_tolerance(valley: Valley, settings: Settings, tol: float, max_steps: int) -> np.ndarray:
    """For every run, the first step t with f(x_t) <= tol f(x_0) (NaN if none by max_steps)."""
    run = Stepper(valley, settings)
    level = tol * float(loss(valley, *(np.array(v) for v in valley.start())))
    found = np.full(run.x.shape, np.nan)
    for t in range(1, max_steps + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            run.step()
            hit = np.isnan(found) & (loss(valley, run.x, run.y) <= level)
        found[hit] = t
        if not np.isnan(found).any():
            break
    return found


def fastest(valley: Valley, settings: Settings, tol: float, max_steps: int) -> tuple[float, int | None]:
    """The fewest steps to tolerance over a grid of settings and the flat index of the
    setting that took them (NaN, None if none reached it). Stops at the first crossing,
    which is the fewest: no later one can beat it."""
    run = Stepper(valley, settings)
    level = tol * float(loss(valley, *(np.array(v) for v in valley.start())))
    for t in range(1, max_steps + 1):
        with np.errstate(over="ignore", invalid="ignore"):  # a step size too large diverges to inf, then NaN
            run.step()
            f = np.where(np.isfinite(run.x) & np.isfinite(run.y), loss(valley, run.x, run.y), np.inf).ravel()
        hit = np.flatnonzero(f <= level)
        if hit.size:
            return float(t), int(hit[np.argmin(f[hit])])
    return math.nan, None


def log_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])
