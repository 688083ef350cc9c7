"""The optimisers, over a stack of M flat weight buffers (M, P).

The arithmetic is torch.optim's (its single-tensor code path): AdamW, Adam
(L2 decay in the gradient), SGD and SGD with momentum. Every model of the
stack has its own learning rate at every step (a schedule table, computed by
the caller), its own betas, eps and weight decay; they meet the buffers as
(M, 1) float32 columns, as torch.optim's Python floats are cast when they
meet float32. Under µP, learning rates are per element, (M, P) in float64.

    opt = Optimizer("adamw", lr_table, betas=[(0.9, 0.999)], eps=[1e-8], weight_decay=[0.01])
    opt.step(theta, grad)   # update number opt.t + 1, in place

Clipping is each model's own global norm: `clip_(grad, norm, clip)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

OPTIMIZERS = ("adamw", "adam", "sgd", "momentum")
Scalar = float | torch.Tensor  # a Python float, or a column of per-model (or per-element) values


def adam_coefficients(
    lr: Scalar,
    t: Scalar,
    beta1: Scalar,
    beta2: Scalar,
    eps: Scalar,
    weight_decay: Scalar,
    decoupled: bool,
    corrected: Scalar = 1.0,
) -> dict[str, Scalar]:
    """Per-step scalars of Adam/AdamW for update number t (1-based), computed in
    float64 from Python floats or float64 tensors (the caller casts tensors to
    float32, as torch.optim's Python floats are cast when they meet float32).
    corrected: 1 divides the moments by (1 - beta^t) (Kingma & Ba's bias
    correction, the default), 0 leaves them uncorrected (exact: 1 * x == x)."""
    bias_correction1 = 1 - corrected * beta1**t
    bias_correction2 = 1 - corrected * beta2**t
    return {
        "decay": 1 - lr * weight_decay if decoupled else 1.0,  # AdamW: p <- p (1 - lr wd)
        "l2": 0.0 if decoupled else weight_decay,  # Adam: g <- g + wd p
        "one_minus_beta1": 1 - beta1,
        "beta2": beta2,
        "one_minus_beta2": 1 - beta2,
        "step_size": lr / bias_correction1,
        "bias_correction2_sqrt": bias_correction2**0.5,
        "eps": eps,
    }


def _is(v: Scalar, value: float) -> bool:
    """Whether v is the Python float `value` (a tensor never is: it is applied)."""
    return isinstance(v, float) and v == value


def adam_update_(
    p: torch.Tensor, g: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, c: dict[str, Scalar]
) -> None:
    """One Adam/AdamW update of p in place (g is not modified)."""
    if not _is(c["l2"], 0.0):
        g = g + p * c["l2"]
    if not _is(c["decay"], 1.0):
        p.mul_(c["decay"])
    exp_avg.lerp_(g, c["one_minus_beta1"])
    exp_avg_sq.mul_(c["beta2"]).add_(g.square().mul_(c["one_minus_beta2"]))
    denom = exp_avg_sq.sqrt().div_(c["bias_correction2_sqrt"]).add_(c["eps"])
    p.sub_(exp_avg.mul(c["step_size"]).div_(denom))


def sgd_update_(
    p: torch.Tensor,
    g: torch.Tensor,
    buf: torch.Tensor,
    lr: Scalar,
    weight_decay: Scalar,
    momentum: Scalar | None,
    first: bool,
) -> None:
    """torch.optim.SGD in place: g <- g + wd p; with momentum, buf <- g on the
    first step, else momentum buf + g; p <- p - lr (buf or g)."""
    if not _is(weight_decay, 0.0):
        g = g + p * weight_decay
    if momentum is not None:
        if first:
            buf.copy_(g)
        else:
            buf.mul_(momentum).add_(g)
        g = buf
    p.sub_(g * lr)


def clip_(grad: torch.Tensor, norm: torch.Tensor, clip: torch.Tensor) -> None:
    """Scale each model's gradient row (M, P) as clip_grad_norm_ does, by
    min(1, clip / (norm + 1e-6)), with norm and clip (M,) (clip inf: never)."""
    grad.mul_(torch.clamp(clip / (norm + 1e-6), max=1.0)[:, None])


class Optimizer:
    """One optimiser for the M models of a stack: its state and `step`.

    lr: (steps, M) float64, the learning rate of every update of every model
        (0 past a model's own last step).
    betas, eps, weight_decay: one value per model ("momentum" uses beta1).
    lr_scales: µP's per-element multipliers (P,) float64, or None (Adam types only).
    bias_correction: one bool per model (Adam types; None: all True, torch.optim's update)."""

    def __init__(
        self,
        kind: str,
        lr: torch.Tensor,
        betas: Sequence[tuple[float, float]],
        eps: Sequence[float],
        weight_decay: Sequence[float],
        lr_scales: torch.Tensor | None = None,
        bias_correction: Sequence[bool] | None = None,
    ):
        if kind not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {kind!r}")
        if lr_scales is not None and kind in ("sgd", "momentum"):
            raise NotImplementedError("µP learning-rate scales are defined for Adam-type optimisers only")
        self.kind = kind
        self.lr = lr.double()  # (steps, M)
        self.lr_scales = lr_scales
        steps, M = self.lr.shape

        def column(values: Sequence[float]) -> torch.Tensor:  # (M, 1) float64
            return torch.tensor([float(v) for v in values], dtype=torch.float64)[:, None]

        self.beta1, self.beta2 = column([b[0] for b in betas]), column([b[1] for b in betas])
        self.eps, self.weight_decay = column(eps), column(weight_decay)
        self.corrected = column([1.0 if b else 0.0 for b in (bias_correction or [True] * M)])
        self.t = 0  # updates made
        self.state: dict[str, torch.Tensor] = {}
        # the per-step scalars, computed once in float64 and cast to float32: {name: (steps, M, 1)}
        self.tables: dict[str, torch.Tensor] = {}
        self.constants: dict[str, float] = {}
        if lr_scales is not None:  # µP: the rest is computed per step against the (M, P) learning rates
            return
        if kind in ("adamw", "adam"):
            t = torch.arange(1, steps + 1, dtype=torch.float64)[:, None]  # (steps, 1)
            c = adam_coefficients(
                self.lr,
                t,
                self.beta1.T,
                self.beta2.T,
                self.eps.T,
                self.weight_decay.T,
                kind == "adamw",
                self.corrected.T,
            )
        else:
            c = {"lr": self.lr, "weight_decay": self.weight_decay.T, "momentum": self.beta1.T}
        for k, v in c.items():
            if isinstance(v, torch.Tensor):
                self.tables[k] = v.expand(steps, M).float().unsqueeze(-1).contiguous()
            else:
                self.constants[k] = float(v)

    def step(self, p: torch.Tensor, g: torch.Tensor) -> None:
        """Update number self.t + 1 of the stack p (M, P) with gradients g (M, P)."""
        if not self.state:
            names = {"sgd": (), "momentum": ("momentum_buffer",)}.get(self.kind, ("exp_avg", "exp_avg_sq"))
            self.state = {k: torch.zeros_like(p) for k in names}
        k = self.t
        self.t += 1
        c: dict[str, Scalar] = {name: v[k] for name, v in self.tables.items()} | self.constants
        if self.kind in ("adamw", "adam"):
            if self.lr_scales is not None:  # µP: per-element learning rates (M, P), in float64
                lr = self.lr[k][:, None] * self.lr_scales
                c64 = adam_coefficients(
                    lr,
                    self.t,
                    self.beta1,
                    self.beta2,
                    self.eps,
                    self.weight_decay,
                    self.kind == "adamw",
                    self.corrected,
                )
                c = {name: v.float() if isinstance(v, torch.Tensor) else v for name, v in c64.items()}
            adam_update_(p, g, self.state["exp_avg"], self.state["exp_avg_sq"], c)
        else:
            momentum = c["momentum"] if self.kind == "momentum" else None
            sgd_update_(
                p, g, self.state.get("momentum_buffer", g), c["lr"], c["weight_decay"], momentum, first=self.t == 1
            )

    def rows(self, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """A copy of the state of the models `mask` (M,) bool marks, for restore_rows."""
        return {k: v[mask].clone() for k, v in self.state.items()}

    def restore_rows(self, mask: torch.Tensor, rows: dict[str, torch.Tensor]) -> None:
        """Put back the state rows(mask) copied (zeros where there was no state yet): those
        models' updates since then are undone in the moments (the step count goes on)."""
        for k, v in self.state.items():
            v[mask] = rows.get(k, 0.0)

    def state_dict(self) -> dict:
        return {"t": self.t, **{k: v.clone() for k, v in self.state.items()}}

    def load_state_dict(self, d: dict) -> None:
        self.t = int(d["t"])
        self.state = {k: v.clone() for k, v in d.items() if k != "t"}
