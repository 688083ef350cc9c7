"""A NumPy float64 reference of the Decoder: forward pass, hand-written
backward pass, and the optimisers, written out.

It mirrors model/decoder.py name for name (wte, wpe, blocks.{i}.attn.w_q, ...,
ln_1, ln_2, ln_f, lm_head) and covers every ModelConfig variant: norm
pre/post/none, LayerNorm/RMSNorm, QK-norm, z-loss, any number of heads and
layers, µP multipliers and tied embeddings, and the document mask (doc ids
beside the tokens: attention stays inside a document, positions are not reset).
Tests hold it to PyTorch autograd and torch.optim (tests/model/test_reference.py,
tests/model/test_doc_mask.py).

    state = {k: v.double().numpy() for k, v in model.state_dict().items()}
    loss, grads = loss_and_grads(state, x, y, cfg)      # grads has state's keys
    loss, grads = loss_and_grads(state, x, y, cfg, doc)  # doc (B, T): the document mask

Conventions: weights are stored as nn.Linear stores them, (out, in), so a
linear layer is y = x @ W.T, its weight gradient dy.T @ x and its input
gradient dy @ W. Each *_forward returns (output, cache) and each *_backward
takes (d_output, cache) and returns d_input (adding weight gradients to
`grads`). Symbols: B batch, T time, D d_model, H heads, Dh head size, V vocab.
"""

from __future__ import annotations

import math

import numpy as np

from model.decoder import ModelConfig

# -----------------------------------------------------------------------------
# erf and the exact GELU (NumPy has no erf; scipy is not a dependency)

# W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 23 (1969) 631-637: three rational approximations, each accurate
# to about 1e-18 on its interval (so erf is good to float64 rounding).
# erf(x) = x R0(x^2)                                   for |x| <= 0.5
# erfc(x) = exp(-x^2) R1(x)                            for 0.5 < |x| <= 4
# erfc(x) = exp(-x^2) / x (1/sqrt(pi) + R2(1/x^2) / x^2)  for |x| > 4
_A = (
    3.16112374387056560e00,
    1.13864154151050156e02,
    3.77485237685302021e02,
    3.20937758913846947e03,
    1.85777706184603153e-1,
)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
    1.23033935479799725e03,
    2.15311535474403846e-8,
)
_D = (
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
    1.23033935480374942e03,
)
_P = (
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
    1.63153871373020978e-2,
)
_Q = (
    2.56852019228982242e00,
    1.87295284992346725e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
)
_INV_SQRT_PI = 5.6418958354775628695e-1


def _exp_neg_sq(y: np.ndarray) -> np.ndarray:
    # exp(-y^2) without losing the low bits of y^2: split y = y16 + r with y16 a
    # multiple of 1/16, so y16^2 is exact and only the small rest is rounded
    y16 = np.trunc(y * 16.0) / 16.0
    return np.exp(-y16 * y16) * np.exp(-(y - y16) * (y + y16))


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, to float64 accuracy (Cody 1969)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.abs(x)
    out = np.empty_like(x)

    small = y <= 0.5
    z = x[small] ** 2
    num, den = _A[4] * z, z
    for i in range(3):
        num, den = (num + _A[i]) * z, (den + _B[i]) * z
    out[small] = x[small] * (num + _A[3]) / (den + _B[3])

    mid = (y > 0.5) & (y <= 4.0)
    ym = y[mid]
    num, den = _C[8] * ym, ym
    for i in range(7):
        num, den = (num + _C[i]) * ym, (den + _D[i]) * ym
    erfc = _exp_neg_sq(ym) * (num + _C[7]) / (den + _D[7])
    out[mid] = np.copysign((0.5 - erfc) + 0.5, x[mid])

    big = y > 4.0  # erfc(6) < 3e-17: past that erf rounds to +-1
    yb = np.minimum(y[big], 6.0)
    z = 1.0 / (yb * yb)
    num, den = _P[5] * z, z
    for i in range(4):
        num, den = (num + _P[i]) * z, (den + _Q[i]) * z
    erfc = _exp_neg_sq(yb) * (_INV_SQRT_PI - z * (num + _P[4]) / (den + _Q[4])) / yb
    out[big] = np.copysign((0.5 - erfc) + 0.5, x[big])

    nan = np.isnan(x)
    out[nan] = np.nan
    return out


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


# #region gelu-backward
def gelu_grad(x: np.ndarray) -> np.ndarray:
    # d/dx x Phi(x) = Phi(x) + x phi(x)
    cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
    x_pdf = x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return cdf + x_pdf
    # #endregion gelu-backward


# -----------------------------------------------------------------------------
# the network, forward and backward


def norm_forward(x: np.ndarray, kind: str, eps: float):
    """LayerNorm or RMSNorm over the last axis, no gain, no bias."""
    if kind == "layer":
        x = x - x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    y = x * rstd
    return y, (kind, y, rstd)


# #region norm-backward
def norm_backward(dy: np.ndarray, cache) -> np.ndarray:
    kind, y, rstd = cache
    # y = xc * rstd: dxc = rstd (dy - y mean(dy y));
    # centring (LayerNorm) subtracts the mean once more
    dx = dy - y * (dy * y).mean(-1, keepdims=True)
    if kind == "layer":
        dx = dx - dx.mean(-1, keepdims=True)
    return dx * rstd
    # #endregion norm-backward


def linear_backward(dy: np.ndarray, x: np.ndarray, w: np.ndarray, name: str, grads: dict) -> np.ndarray:
    # #region linear-backward
    """y = x @ w.T: accumulate dL/dw into grads[name], return dL/dx."""
    dw = dy.reshape(-1, dy.shape[-1]).T @ x.reshape(-1, x.shape[-1])
    grads[name] = grads.get(name, 0.0) + dw
    return dy @ w
    # #endregion linear-backward


# #region softmax-backward
def softmax_backward(dp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p = softmax(s) over the last axis; dp = dL/dp. Returns dL/ds."""
    return p * (dp - (dp * p).sum(-1, keepdims=True))
    # #endregion softmax-backward


def attn_forward(x: np.ndarray, state: dict, pre: str, cfg: ModelConfig, doc: np.ndarray | None = None):
    B, T, D = x.shape
    H = cfg.n_heads
    w_q, w_k, w_v, w_o = (state[f"{pre}.{n}.weight"] for n in ("w_q", "w_k", "w_v", "w_o"))
    q = (x @ w_q.T).reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, H, T, Dh)
    k = (x @ w_k.T).reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, H, T, Dh)
    v = (x @ w_v.T).reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, H, T, Dh)
    q_cache = k_cache = None
    if cfg.qk_norm:
        q, q_cache = norm_forward(q, cfg.norm_kind, cfg.norm_eps)
        k, k_cache = norm_forward(k, cfg.norm_kind, cfg.norm_eps)
    att = (q @ k.transpose(0, 1, 3, 2)) * cfg.attn_scale  # (B, H, T, T)
    mask = ~np.eye(T, dtype=bool) if cfg.attention == "self" else np.triu(np.ones((T, T), dtype=bool), k=1)
    if doc is not None:  # the document mask: no s in another document than t's
        mask = mask | (doc[:, None, :, None] != doc[:, None, None, :])  # (B, 1, T, T)
    att = np.where(mask, -np.inf, att)  # causal: no s > t; "self": only s = t
    att = np.exp(att - att.max(-1, keepdims=True))
    att = att / att.sum(-1, keepdims=True)  # (B, H, T, T), softmax
    y = att @ v  # (B, H, T, Dh)
    y = y.transpose(0, 2, 1, 3).reshape(B, T, D)  # (B, T, D): heads side by side
    out = y @ w_o.T
    return out, (x, q, k, v, att, y, q_cache, k_cache)


# #region attention-backward
def attn_backward(dout: np.ndarray, cache, state: dict, pre: str, cfg: ModelConfig, grads: dict) -> np.ndarray:
    x, q, k, v, att, y, q_cache, k_cache = cache
    B, T, D = x.shape
    H = cfg.n_heads
    dy = linear_backward(dout, y, state[f"{pre}.w_o.weight"], f"{pre}.w_o.weight", grads)
    dy = dy.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)  # (B, H, T, Dh)
    datt = dy @ v.transpose(0, 1, 3, 2)  # (B, H, T, T)
    dv = att.transpose(0, 1, 3, 2) @ dy  # (B, H, T, Dh)
    datt = softmax_backward(datt, att)  # through softmax; 0 where masked
    datt = datt * cfg.attn_scale
    dq = datt @ k  # (B, H, T, Dh)
    dk = datt.transpose(0, 1, 3, 2) @ q  # (B, H, T, Dh)
    if cfg.qk_norm:
        dq, dk = norm_backward(dq, q_cache), norm_backward(dk, k_cache)
    dx = np.zeros_like(x)
    for name, d in (("w_q", dq), ("w_k", dk), ("w_v", dv)):
        d = d.transpose(0, 2, 1, 3).reshape(B, T, D)  # (B, T, D)
        dx = dx + linear_backward(d, x, state[f"{pre}.{name}.weight"], f"{pre}.{name}.weight", grads)
    return dx
    # #endregion attention-backward


def mlp_forward(x: np.ndarray, state: dict, pre: str):
    h = x @ state[f"{pre}.w_in.weight"].T  # (B, T, 4D)
    a = gelu(h)
    out = a @ state[f"{pre}.w_out.weight"].T  # (B, T, D)
    return out, (x, h, a)


# #region mlp-backward
def mlp_backward(dout: np.ndarray, cache, state: dict, pre: str, grads: dict) -> np.ndarray:
    x, h, a = cache
    da = linear_backward(dout, a, state[f"{pre}.w_out.weight"], f"{pre}.w_out.weight", grads)
    dh = da * gelu_grad(h)
    return linear_backward(dh, x, state[f"{pre}.w_in.weight"], f"{pre}.w_in.weight", grads)
    # #endregion mlp-backward


def block_forward(x: np.ndarray, state: dict, i: int, cfg: ModelConfig, doc: np.ndarray | None = None):
    pre = f"blocks.{i}"
    kind, eps = cfg.norm_kind, cfg.norm_eps
    ln_1 = ln_2 = None
    if not cfg.residual:  # the ablation: each sublayer's output replaces the stream
        return _block_forward_no_residual(x, state, pre, cfg, doc)
    if cfg.norm == "pre":
        h, ln_1 = norm_forward(x, kind, eps)
        a, attn = attn_forward(h, state, f"{pre}.attn", cfg, doc)
        x = x + a
        h, ln_2 = norm_forward(x, kind, eps)
        m, mlp = mlp_forward(h, state, f"{pre}.mlp")
        x = x + m
    elif cfg.norm == "post":
        a, attn = attn_forward(x, state, f"{pre}.attn", cfg, doc)
        x, ln_1 = norm_forward(x + a, kind, eps)
        m, mlp = mlp_forward(x, state, f"{pre}.mlp")
        x, ln_2 = norm_forward(x + m, kind, eps)
    else:
        a, attn = attn_forward(x, state, f"{pre}.attn", cfg, doc)
        x = x + a
        m, mlp = mlp_forward(x, state, f"{pre}.mlp")
        x = x + m
    return x, (ln_1, attn, ln_2, mlp)


def _block_forward_no_residual(x: np.ndarray, state: dict, pre: str, cfg: ModelConfig, doc: np.ndarray | None):
    kind, eps = cfg.norm_kind, cfg.norm_eps
    ln_1 = ln_2 = None
    if cfg.norm == "pre":  # mlp(ln_2(attn(ln_1(x))))
        h, ln_1 = norm_forward(x, kind, eps)
        a, attn = attn_forward(h, state, f"{pre}.attn", cfg, doc)
        h, ln_2 = norm_forward(a, kind, eps)
        x, mlp = mlp_forward(h, state, f"{pre}.mlp")
    elif cfg.norm == "post":  # ln_2(mlp(ln_1(attn(x))))
        a, attn = attn_forward(x, state, f"{pre}.attn", cfg, doc)
        h, ln_1 = norm_forward(a, kind, eps)
        m, mlp = mlp_forward(h, state, f"{pre}.mlp")
        x, ln_2 = norm_forward(m, kind, eps)
    else:  # mlp(attn(x))
        a, attn = attn_forward(x, state, f"{pre}.attn", cfg, doc)
        x, mlp = mlp_forward(a, state, f"{pre}.mlp")
    return x, (ln_1, attn, ln_2, mlp)


def _block_backward_no_residual(
    dx: np.ndarray, cache, state: dict, pre: str, cfg: ModelConfig, grads: dict
) -> np.ndarray:
    ln_1, attn, ln_2, mlp = cache
    if cfg.norm == "post":
        dx = norm_backward(dx, ln_2)
    dx = mlp_backward(dx, mlp, state, f"{pre}.mlp", grads)
    if cfg.norm != "none":  # pre: ln_2 sits before the MLP; post: ln_1 after attention, both in this place
        dx = norm_backward(dx, ln_2 if cfg.norm == "pre" else ln_1)
    dx = attn_backward(dx, attn, state, f"{pre}.attn", cfg, grads)
    if cfg.norm == "pre":
        dx = norm_backward(dx, ln_1)
    return dx


def block_backward(dx: np.ndarray, cache, state: dict, i: int, cfg: ModelConfig, grads: dict) -> np.ndarray:
    pre = f"blocks.{i}"
    ln_1, attn, ln_2, mlp = cache
    if not cfg.residual:
        return _block_backward_no_residual(dx, cache, state, pre, cfg, grads)
    # #region residual-backward
    if cfg.norm == "pre":  # x + f(norm(x)): dx flows on, plus what f sends back
        dm = mlp_backward(dx, mlp, state, f"{pre}.mlp", grads)
        dx = dx + norm_backward(dm, ln_2)
        da = attn_backward(dx, attn, state, f"{pre}.attn", cfg, grads)
        dx = dx + norm_backward(da, ln_1)
    # #endregion residual-backward
    elif cfg.norm == "post":
        dx = norm_backward(dx, ln_2)
        dx = norm_backward(dx + mlp_backward(dx, mlp, state, f"{pre}.mlp", grads), ln_1)
        dx = dx + attn_backward(dx, attn, state, f"{pre}.attn", cfg, grads)
    else:
        dx = dx + mlp_backward(dx, mlp, state, f"{pre}.mlp", grads)
        dx = dx + attn_backward(dx, attn, state, f"{pre}.attn", cfg, grads)
    return dx


def head_weight(state: dict, cfg: ModelConfig) -> np.ndarray:
    return state["wte.weight"] if cfg.tie_embeddings else state["lm_head.weight"]


def forward(state: dict, idx: np.ndarray, cfg: ModelConfig, doc: np.ndarray | None = None):
    """Token ids (B, T) -> logits (B, T, V), and the cache for backward. doc:
    optional document ids (B, T), attention then stays inside each document."""
    idx = np.asarray(idx)
    B, T = idx.shape
    if doc is not None:
        doc = np.asarray(doc)
        if doc.shape != idx.shape:
            raise ValueError(f"document ids have shape {doc.shape}, the tokens {idx.shape}")
    x = state["wte.weight"][idx] + state["wpe.weight"][:T]  # (B, T, D)
    blocks = []
    for i in range(cfg.n_layers):
        x, cache = block_forward(x, state, i, cfg, doc)  # (B, T, D)
        blocks.append(cache)
    ln_f = None
    if cfg.norm == "pre":
        x, ln_f = norm_forward(x, cfg.norm_kind, cfg.norm_eps)
    logits = (x @ head_weight(state, cfg).T) * cfg.logit_mult  # (B, T, V)
    return logits, (idx, blocks, ln_f, x)


def cross_entropy(logits: np.ndarray, targets: np.ndarray, z_loss: float = 0.0):
    """Mean cross-entropy (+ z_loss * mean(lse^2)) and its gradient wrt logits."""
    V = logits.shape[-1]
    logits = logits.reshape(-1, V)  # (N, V)
    targets = np.asarray(targets).reshape(-1)  # (N,)
    N = len(targets)
    top = logits.max(-1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(logits - top).sum(-1))  # (N,)
    loss = (lse - logits[np.arange(N), targets]).mean()
    probs = np.exp(logits - lse[:, None])  # (N, V)
    dlogits = probs.copy()
    dlogits[np.arange(N), targets] -= 1.0
    if z_loss:
        loss = loss + z_loss * (lse**2).mean()
        dlogits += 2.0 * z_loss * lse[:, None] * probs
    return float(loss), dlogits / N


def loss_and_grads(
    state: dict, x: np.ndarray, y: np.ndarray, cfg: ModelConfig, doc: np.ndarray | None = None
) -> tuple[float, dict]:
    """The loss on (x, y) and its gradient for every key of `state` (tied
    weights get the same summed gradient under both names, as in torch).
    doc: optional document ids (B, T) for the document mask; the backward pass
    needs nothing more (masked attention weights are 0, so is their gradient)."""
    state = {k: np.asarray(v, dtype=np.float64) for k, v in state.items()}
    logits, (idx, blocks, ln_f, xf) = forward(state, x, cfg, doc)
    # #region backward-order
    loss, dlogits = cross_entropy(logits, y, cfg.z_loss)  # (p - onehot(y)) / N
    B, T = idx.shape
    dlogits = dlogits.reshape(B, T, -1) * cfg.logit_mult
    grads: dict = {}
    head = "wte.weight" if cfg.tie_embeddings else "lm_head.weight"
    dx = linear_backward(dlogits, xf, head_weight(state, cfg), head, grads)
    if ln_f is not None:
        dx = norm_backward(dx, ln_f)
    for i in reversed(range(cfg.n_layers)):
        dx = block_backward(dx, blocks[i], state, i, cfg, grads)
    dwte = np.zeros_like(state["wte.weight"])
    np.add.at(dwte, idx.reshape(-1), dx.reshape(-1, dx.shape[-1]))
    grads["wte.weight"] = grads.get("wte.weight", 0.0) + dwte
    grads["wpe.weight"] = np.zeros_like(state["wpe.weight"])
    grads["wpe.weight"][:T] = dx.sum(0)
    # #endregion backward-order
    if cfg.tie_embeddings:
        grads["lm_head.weight"] = grads["wte.weight"]
    return loss, {k: grads[k] for k in state}


# -----------------------------------------------------------------------------
# optimisers, as torch.optim computes them (single-tensor code path)
#
# Each takes params and grads (dicts of arrays with the same keys), the
# optimiser's state (None before the first step) and its hyperparameters, and
# returns (new params, new state) without modifying its inputs. lr_scales
# (e.g. mup_lr_scales(cfg)) multiplies the learning rate per name, as one
# torch param group per parameter would.


def _lr(lr: float, lr_scales: dict | None, name: str) -> float:
    return lr * lr_scales[name] if lr_scales is not None else lr


def sgd_step(params, grads, state=None, *, lr, weight_decay=0.0, lr_scales=None):
    """torch.optim.SGD(momentum=0): p <- p - lr (g + wd p)."""
    new = {}
    for k, p in params.items():
        g = grads[k] + weight_decay * p if weight_decay else grads[k]
        new[k] = p - _lr(lr, lr_scales, k) * g
    return new, state


def momentum_step(
    params, grads, state=None, *, lr, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False, lr_scales=None
):
    """torch.optim.SGD with momentum: the buffer starts as the first gradient
    (undamped), then buf <- momentum buf + (1 - dampening) g."""
    bufs = {} if state is None else dict(state["momentum_buffer"])
    new = {}
    for k, p in params.items():
        g = grads[k] + weight_decay * p if weight_decay else grads[k]
        bufs[k] = g.copy() if k not in bufs else momentum * bufs[k] + (1.0 - dampening) * g
        step = g + momentum * bufs[k] if nesterov else bufs[k]
        new[k] = p - _lr(lr, lr_scales, k) * step
    return new, {"momentum_buffer": bufs}


def adam_step(
    params, grads, state=None, *, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False, lr_scales=None
):
    """torch.optim.Adam (L2 decay added to the gradient), or AdamW's update
    with decoupled=True (decay applied to the weights first: p <- p (1 - lr wd))."""
    beta1, beta2 = betas
    if state is None:
        state = {"step": 0, "exp_avg": {}, "exp_avg_sq": {}}
    t = state["step"] + 1
    m_all, v_all = dict(state["exp_avg"]), dict(state["exp_avg_sq"])
    new = {}
    for k, p in params.items():
        lr_k = _lr(lr, lr_scales, k)
        g = grads[k]
        if weight_decay and decoupled:
            p = p * (1.0 - lr_k * weight_decay)
        elif weight_decay:
            g = g + weight_decay * p
        m = m_all.get(k, np.zeros_like(p))
        v = v_all.get(k, np.zeros_like(p))
        m = m + (g - m) * (1.0 - beta1)  # torch: exp_avg.lerp_(grad, 1 - beta1)
        v = v * beta2 + (g * g) * (1.0 - beta2)
        bias_correction1 = 1.0 - beta1**t
        bias_correction2 = 1.0 - beta2**t
        step_size = lr_k / bias_correction1
        denom = np.sqrt(v) / math.sqrt(bias_correction2) + eps
        new[k] = p - step_size * (m / denom)
        m_all[k], v_all[k] = m, v
    return new, {"step": t, "exp_avg": m_all, "exp_avg_sq": v_all}


def adamw_step(params, grads, state=None, *, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, lr_scales=None):
    """torch.optim.AdamW (its default weight_decay is 0.01)."""
    return adam_step(
        params,
        grads,
        state,
        lr=lr,
        betas=betas,
        eps=eps,
        weight_decay=weight_decay,
        decoupled=True,
        lr_scales=lr_scales,
    )


def clip_by_global_norm(grads: dict, max_norm: float) -> tuple[dict, float]:
    """torch.nn.utils.clip_grad_norm_: scale every gradient by
    min(1, max_norm / (total_norm + 1e-6)); returns (clipped grads, total_norm)."""
    total_norm = float(np.linalg.norm([np.linalg.norm(g.reshape(-1)) for g in grads.values()]))
    coef = min(max_norm / (total_norm + 1e-6), 1.0)
    return {k: g * coef for k, g in grads.items()}, total_norm
