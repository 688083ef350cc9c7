"""The Decoder's fast path: M Decoders stacked into one model (M = 1 for a single run).

The weights of M models of one architecture are stacked along a leading M
axis, one (M, P) buffer `theta` whose rows are laid out as `Layout` says
(named_parameters() order); every matmul is a batched matmul over the M
models. The forward and backward passes are written out by hand: what
autograd would compute for Decoder.forward and its loss, with fewer ops and
no graph (the loss softmax is computed once for the loss and its gradient,
and the weight gradients are gathered into the (M, P) gradient buffer with
one copy). Tests hold them to float64 autograd on the readable Decoder for
every config variant, and to the NumPy reference through it.

    layout, theta = init_stack(cfg, seeds=[0, 1, 2])    # (M, P): each as Decoder(cfg) after manual_seed
    net = StackedDecoder(cfg, layout, theta, grad=torch.zeros_like(theta))
    loss = net.loss_and_grad(x, y)                       # (M,); x, y (M, B, T); gradients in grad
    val = net.evaluate(xv, yv)                           # (M,), the same windows for every model
    loss = net.loss_and_grad(x, y, doc)                  # doc (M, B, T): the document mask

Document masking (off unless document ids are passed): attention from position t
to s is allowed only when s <= t and doc[s] == doc[t], as in Decoder.forward(idx,
doc); positions are not reset at a boundary. Without ids, or with every id
equal, the numbers are exactly those computed without the mask.

model/train.py trains with it, one run or many, for every config `supports` accepts.

Symbols: M models, B batch, T time, N = B*T tokens per model, D d_model,
H heads, Dh = D/H, G = M*B*H attention tiles, V vocab, P parameters per model.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Sequence

import torch

from model.decoder import Decoder, ModelConfig, attention_mask, check_doc, document_mask, mup_lr_scales

EVAL_CHUNK = 256  # validation windows per forward pass in evaluation (bounds memory at large M)
#: The ModelConfig fields whose every value the stacked passes implement (each held to the autograd
#: Decoder in float64 by tests/model/test_stacked.py); a field not listed must be at its default.
COVERED = frozenset(
    {"vocab", "d_model", "context", "n_layers", "n_heads", "mlp_ratio", "norm", "norm_kind", "norm_eps", "qk_norm"}
    | {"attention", "z_loss", "param", "base_d_model", "init_std", "tie_embeddings", "residual"}
)


def supports(cfg: ModelConfig) -> bool:
    """Whether StackedDecoder computes cfg's model; model/train.py trains the others on the
    autograd Decoders (model/decoders.py). A variant added to decoder.py is autograd-only until
    the stacked passes implement it and a float64 test holds them to the Decoder."""
    default = ModelConfig()
    fields = [f.name for f in dataclasses.fields(cfg) if f.name not in COVERED]
    return all(getattr(cfg, name) == getattr(default, name) for name in fields)


class Layout:
    """Where each weight of a Decoder sits in a flat buffer (P,): one slice per
    parameter, in named_parameters() order (a tied lm_head comes once, as wte).
    Each block's w_q, w_k and w_v are adjacent, so they are one (3D, D) matrix."""

    def __init__(self, model: Decoder):
        named = list(model.named_parameters())
        self.names = [n for n, _ in named]
        self.shapes = {n: tuple(p.shape) for n, p in named}
        self.offsets: dict[str, int] = {}
        offset = 0
        for n, p in named:
            self.offsets[n] = offset
            offset += p.numel()
        self.size = offset
        for n in self.names:
            if n.endswith(".attn.w_q.weight"):
                k, v = n.replace(".w_q.", ".w_k."), n.replace(".w_q.", ".w_v.")
                D = self.shapes[n][1]
                if not self.offsets[k] == self.offsets[n] + D * D == self.offsets[v] - D * D:
                    raise RuntimeError("w_q, w_k, w_v are not adjacent in named_parameters()")

    def spans(self) -> list[tuple[int, int]]:
        """(offset, size) of each weight tensor in the flat buffer, in named_parameters() order."""
        return [(self.offsets[n], math.prod(self.shapes[n])) for n in self.names]

    def flatten(self, model: Decoder) -> torch.Tensor:
        """The model's weights as one flat (P,) float32 buffer."""
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).float()

    def state_dict(self, row: torch.Tensor, cfg: ModelConfig) -> dict[str, torch.Tensor]:
        """One model's weights (a row (P,) of a stack) under Decoder.state_dict()'s names."""
        out = {
            n: row[self.offsets[n] : self.offsets[n] + math.prod(self.shapes[n])].view(self.shapes[n]).clone()
            for n in self.names
        }
        if cfg.tie_embeddings:  # state_dict lists the shared matrix under both names
            out["lm_head.weight"] = out["wte.weight"]
        return out

    def lr_scales(self, cfg: ModelConfig) -> torch.Tensor | None:
        """µP's per-element learning-rate multipliers (P,) float64, or None if all are 1."""
        scales = mup_lr_scales(cfg)
        if all(s == 1.0 for s in scales.values()):
            return None
        out = torch.empty(self.size, dtype=torch.float64)
        for n in self.names:
            o = self.offsets[n]
            out[o : o + math.prod(self.shapes[n])] = scales[n]
        return out


_INIT_LOCK = threading.Lock()  # torch.manual_seed seeds one global generator: one stack at a time


def init_stack(cfg: ModelConfig, seeds: Sequence[int]) -> tuple[Layout, torch.Tensor]:
    """Each model's initial weights, (M, P): what torch.manual_seed(seed) then
    Decoder(cfg) draws (torch's global generator is left as it was)."""
    rows, layout = [], None
    with _INIT_LOCK, torch.random.fork_rng(devices=[]):
        for s in seeds:
            torch.manual_seed(s)
            model = Decoder(cfg)
            layout = layout or Layout(model)
            rows.append(layout.flatten(model))
    if layout is None:
        raise ValueError("init_stack needs at least one seed")
    return layout, torch.stack(rows)


# -----------------------------------------------------------------------------
# the stacked network, forward and backward
#
# Activations are feature-major: (M, D, N), one column per token. Every matmul
# then writes N = 512 columns (MKL runs (rows x 16) @ (16 x 512) well and
# (512 x 16) @ (16 x 64) less well), and the norms reduce over dim 1, which
# PyTorch vectorises along the tokens instead of looping over 16-wide rows.
# Inside attention, q, k and v are (G, Dh, T) with G = M*B*H for the same
# reason: T = 16 output columns rather than Dh = 8.


def _norm(x: torch.Tensor, kind: str, eps: float):
    """LayerNorm or RMSNorm over dim 1 of (.., D, ..), no gain or bias: (y, cache)."""
    if kind == "layer":
        xc = x - x.mean(1, keepdim=True)
        var = (xc * xc).mean(1, keepdim=True)  # (var_mean is slow along dim 1)
        rstd = torch.rsqrt(var + eps) + (var - var)  # var - var: NaN, not 0, if var overflows, as F.layer_norm
        y = xc.mul_(rstd)
    else:
        rstd = torch.rsqrt(x.pow(2).mean(1, keepdim=True) + eps)  # as Decoder's Norm computes it
        y = x * rstd
    return y, (y, rstd)


def _norm_backward(dy: torch.Tensor, cache, kind: str) -> torch.Tensor:
    # y = xc * rstd: dxc = rstd (dy - y mean(dy y)); LayerNorm's centring subtracts the mean once more
    y, rstd = cache
    dx = dy - y * (dy * y).mean(1, keepdim=True)
    if kind == "layer":
        dx -= dx.mean(1, keepdim=True)
    return dx.mul_(rstd)


def _exp_shifted_(logits: torch.Tensor, tgt: torch.Tensor):
    """The pieces of a softmax over dim 1 of logits (M, V, N), with a single exp
    pass, in place: logits becomes exp(logits - shift); returns shift, the sum
    of the exps over V and the shifted logit at the targets tgt (M, 1, N), each
    (M, 1, N). -log softmax(target) = log(sum) - tgt_logit, as log_softmax
    computes it; the exps over their sum are the softmax."""
    shift = logits.amax(1, keepdim=True)  # for range: the largest exp is 1
    tgt_logit = logits.sub_(shift).gather(1, tgt)
    return shift, logits.exp_().sum(1, keepdim=True), tgt_logit


class StackedDecoder:
    """The Decoder's forward and backward passes over M stacked models.

    `theta` and `grad` are (M, P) buffers in Layout; `w(name)`
    is an (M, *shape) view of theta. The backward pass writes all of `grad`."""

    def __init__(self, cfg: ModelConfig, layout: Layout, theta: torch.Tensor, grad: torch.Tensor):
        self.cfg = cfg
        self.layout = layout
        self.theta = theta
        self.grad = grad
        self.M = theta.shape[0]
        T = cfg.context
        self.mask_bias = torch.zeros(T, T).masked_fill_(attention_mask(cfg), float("-inf"))  # causal or self only
        self.grad_names = [n for n in layout.names if ".attn.w_k." not in n and ".attn.w_v." not in n]
        self.weight_grads: dict[str, torch.Tensor] = {}  # filled by the backward pass, emptied into `grad`

    def w(self, name: str, rows: int | None = None) -> torch.Tensor:
        """(M, *shape) view of a weight; rows: several adjacent (., D) matrices as one (rows, D)."""
        o, shape = self.layout.offsets[name], self.layout.shapes[name]
        if rows is not None:
            shape = (rows, shape[1])
        return self.theta[:, o : o + math.prod(shape)].view(self.M, *shape)

    def _head(self) -> str:
        return "wte.weight" if self.cfg.tie_embeddings else "lm_head.weight"

    # -- forward ---------------------------------------------------------------

    def attention_bias(self, doc: torch.Tensor | None, B: int, T: int) -> torch.Tensor:
        """What is added to the attention scores: the (T, T) causal (or "self") bias,
        or with document ids doc (M, B, T) a (G, T, T) one that is also -inf across
        documents (the same values as the (T, T) bias wherever the ids agree)."""
        bias = self.mask_bias[:T, :T]
        if doc is None:
            return bias
        H = self.cfg.n_heads
        across = document_mask(doc.reshape(self.M * B, 1, T))  # (M*B, 1, T, T)
        return bias.masked_fill(across, float("-inf")).expand(self.M * B, H, T, T).reshape(-1, T, T)  # (G, T, T)

    def forward(self, idx: torch.Tensor, keep: bool = True, doc: torch.Tensor | None = None):
        """Token ids (M, B, T) -> logits^T (M, V, N) and the cache for backward
        (None unless keep). doc: optional document ids (M, B, T) for the document mask."""
        cfg = self.cfg
        check_doc(doc, idx)
        M, B, T = idx.shape
        D = cfg.d_model
        bias = self.attention_bias(doc, B, T)
        tok = idx.reshape(M, 1, B * T).expand(M, D, B * T)  # (M, D, N)
        x = torch.gather(self.w("wte.weight").transpose(1, 2), 2, tok)  # (M, D, N): columns of wte^T
        x.view(M, D, B, T).add_(self.w("wpe.weight")[:, :T].transpose(1, 2).unsqueeze(2))  # + wpe^T
        blocks = []
        for i in range(cfg.n_layers):
            x, cache = self._block(x, i, (B, T), bias)
            blocks.append(cache)
        ln_f = None
        if cfg.norm == "pre":
            x, ln_f = _norm(x, cfg.norm_kind, cfg.norm_eps)
        logits = torch.bmm(self.w(self._head()), x)  # (M, V, N)
        if cfg.logit_mult != 1.0:
            logits.mul_(cfg.logit_mult)
        return logits, ((tok, (B, T), blocks, ln_f, x) if keep else None)

    def _block(self, x: torch.Tensor, i: int, bt, bias: torch.Tensor):
        cfg = self.cfg
        kind, eps = cfg.norm_kind, cfg.norm_eps
        ln_1 = ln_2 = None
        if not cfg.residual:  # the ablation: each sublayer's output replaces the stream (resid None)
            if cfg.norm == "pre":
                h, ln_1 = _norm(x, kind, eps)
                x, attn = self._attn(h, None, i, bt, bias)
                h, ln_2 = _norm(x, kind, eps)
                x, mlp = self._mlp(h, None, i)
            elif cfg.norm == "post":
                x, attn = self._attn(x, None, i, bt, bias)
                x, ln_1 = _norm(x, kind, eps)
                x, mlp = self._mlp(x, None, i)
                x, ln_2 = _norm(x, kind, eps)
            else:
                x, attn = self._attn(x, None, i, bt, bias)
                x, mlp = self._mlp(x, None, i)
            return x, (ln_1, attn, ln_2, mlp)
        if cfg.norm == "pre":
            h, ln_1 = _norm(x, kind, eps)
            x, attn = self._attn(h, x, i, bt, bias)  # x + attn(ln_1(x))
            h, ln_2 = _norm(x, kind, eps)
            x, mlp = self._mlp(h, x, i)  # x + mlp(ln_2(x))
        elif cfg.norm == "post":
            x, attn = self._attn(x, x, i, bt, bias)
            x, ln_1 = _norm(x, kind, eps)
            x, mlp = self._mlp(x, x, i)
            x, ln_2 = _norm(x, kind, eps)
        else:
            x, attn = self._attn(x, x, i, bt, bias)
            x, mlp = self._mlp(x, x, i)
        return x, (ln_1, attn, ln_2, mlp)

    def _attn(self, h: torch.Tensor, resid: torch.Tensor | None, i: int, bt, bias: torch.Tensor):
        """resid + attention(h), both (M, D, N); attention(h) alone if resid is None.
        bias: the attention bias, (T, T) or (G, T, T) (see attention_bias)."""
        cfg = self.cfg
        M, (B, T) = self.M, bt
        D, H = cfg.d_model, cfg.n_heads
        Dh = D // H
        pre = f"blocks.{i}.attn"
        qkv = torch.bmm(self.w(f"{pre}.w_q.weight", rows=3 * D), h)  # (M, 3D, N): w_q, w_k, w_v are adjacent
        qkv = qkv.view(M, 3, H, Dh, B, T).permute(1, 0, 4, 2, 3, 5).reshape(3, M * B * H, Dh, T)  # a copy
        q, k, v = qkv[0], qkv[1], qkv[2]  # (G, Dh, T) each
        q_cache = k_cache = None
        if cfg.qk_norm:  # each head's query and key vectors, over Dh
            q, q_cache = _norm(q, cfg.norm_kind, cfg.norm_eps)
            k, k_cache = _norm(k, cfg.norm_kind, cfg.norm_eps)
        att = torch.baddbmm(bias, q.transpose(1, 2), k, alpha=cfg.attn_scale)  # (G, T, T)
        att = torch.softmax(att, dim=-1)
        y = torch.bmm(v, att.transpose(1, 2))  # (G, Dh, T)
        y = y.view(M, B, H, Dh, T).permute(0, 2, 3, 1, 4).reshape(M, D, B * T)  # (M, D, N), a copy
        w_o = self.w(f"{pre}.w_o.weight")
        out = torch.bmm(w_o, y) if resid is None else torch.baddbmm(resid, w_o, y)  # (M, D, N)
        return out, (h, q, k, v, att, y, q_cache, k_cache, bt)

    def _mlp(self, h: torch.Tensor, resid: torch.Tensor | None, i: int):
        """resid + mlp(h), both (M, D, N); mlp(h) alone if resid is None."""
        pre = f"blocks.{i}.mlp"
        u = torch.bmm(self.w(f"{pre}.w_in.weight"), h)  # (M, 4D, N)
        a = torch.nn.functional.gelu(u)
        w_out = self.w(f"{pre}.w_out.weight")
        out = torch.bmm(w_out, a) if resid is None else torch.baddbmm(resid, w_out, a)  # (M, D, N)
        return out, (h, u, a)

    # -- loss and backward -----------------------------------------------------

    def loss_and_grad(self, idx: torch.Tensor, targets: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """Each model's mean cross-entropy (+ z-loss) on its batch (idx and
        targets (M, B, T)), as an (M,) tensor; the gradients go to `grad`.
        doc: optional document ids (M, B, T) for the document mask (the backward
        pass needs nothing more: masked attention weights are 0, so is their gradient)."""
        cfg = self.cfg
        M, B, T = idx.shape
        N = B * T
        logits, (tok, _, blocks, ln_f, xf) = self.forward(idx, keep=True, doc=doc)
        tgt = targets.reshape(M, 1, N)
        # one exp pass serves the loss and its gradient (log_softmax and then exp would be two)
        shift, total, tgt_logit = _exp_shifted_(logits, tgt)  # logits becomes exp(logits - shift)
        log_sum = total.log()
        loss = (log_sum - tgt_logit).mean(
            (1, 2), dtype=torch.float64
        )  # (M,): -log softmax at the targets, summed in float64
        factor = total.reciprocal_()  # turns logits' memory into the softmax
        if cfg.z_loss:
            lse = shift + log_sum  # (M, 1, N)
            loss = loss + cfg.z_loss * lse.pow(2).mean((1, 2), dtype=torch.float64)
            factor.mul_(1.0 + 2.0 * cfg.z_loss * lse)  # d(z lse^2)/dlogits = 2 z lse softmax
        probs = logits.mul_(factor)  # (M, V, N)
        dlogits = probs.scatter_add_(1, tgt, torch.full((1, 1, 1), -1.0).expand(M, 1, N))  # softmax - onehot
        scale = cfg.logit_mult / N  # the mean over tokens and the logit multiplier, folded into the matmuls
        head = self.w(self._head())  # (M, V, D)
        dhead = torch.baddbmm(head, dlogits, xf.transpose(1, 2), beta=0.0, alpha=scale)  # (M, V, D)
        dx = torch.baddbmm(xf, head.transpose(1, 2), dlogits, beta=0.0, alpha=scale)  # (M, D, N)
        if ln_f is not None:
            dx = _norm_backward(dx, ln_f, cfg.norm_kind)
        for i in reversed(range(cfg.n_layers)):
            dx = self._block_backward(dx, blocks[i], i)
        # embeddings: scatter token gradients into columns of wte^T; sum positions over the batch
        dwte = torch.zeros(M, cfg.d_model, cfg.vocab).scatter_add_(2, tok, dx).transpose(1, 2)  # (M, V, D)
        if cfg.tie_embeddings:
            dwte = dwte + dhead
        else:
            self.weight_grads["lm_head.weight"] = dhead
        self.weight_grads["wte.weight"] = dwte
        dwpe = dx.view(M, cfg.d_model, B, T).sum(2).transpose(1, 2)  # (M, T, D)
        if cfg.context > T:
            dwpe = torch.cat((dwpe, dwpe.new_zeros(M, cfg.context - T, cfg.d_model)), dim=1)
        self.weight_grads["wpe.weight"] = dwpe
        # one copy into the (M, P) buffer, in layout order (w_q's entry holds w_q, w_k, w_v)
        torch.cat([self.weight_grads.pop(n).reshape(M, -1) for n in self.grad_names], dim=1, out=self.grad)
        return loss

    def _block_backward(self, dx: torch.Tensor, cache, i: int) -> torch.Tensor:
        cfg = self.cfg
        ln_1, attn, ln_2, mlp = cache
        kind = cfg.norm_kind
        if not cfg.residual:  # the ablation: back through each sublayer in turn, no highway
            if cfg.norm == "post":
                dx = _norm_backward(dx, ln_2, kind)
            dx = self._mlp_backward(dx, mlp, i)
            if cfg.norm != "none":  # pre: ln_2 before the MLP; post: ln_1 after attention
                dx = _norm_backward(dx, ln_2 if cfg.norm == "pre" else ln_1, kind)
            dx = self._attn_backward(dx, attn, i)
            return _norm_backward(dx, ln_1, kind) if cfg.norm == "pre" else dx
        if cfg.norm == "pre":
            dx = dx + _norm_backward(self._mlp_backward(dx, mlp, i), ln_2, kind)
            dx = dx + _norm_backward(self._attn_backward(dx, attn, i), ln_1, kind)
        elif cfg.norm == "post":
            dx = _norm_backward(dx, ln_2, kind)
            dx = _norm_backward(dx + self._mlp_backward(dx, mlp, i), ln_1, kind)
            dx = dx + self._attn_backward(dx, attn, i)
        else:
            dx = dx + self._mlp_backward(dx, mlp, i)
            dx = dx + self._attn_backward(dx, attn, i)
        return dx

    def _mlp_backward(self, dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        h, u, a = cache
        pre = f"blocks.{i}.mlp"
        w_in, w_out = self.w(f"{pre}.w_in.weight"), self.w(f"{pre}.w_out.weight")
        self.weight_grads[f"{pre}.w_out.weight"] = torch.bmm(dout, a.transpose(1, 2))  # (M, D, 4D)
        da = torch.bmm(w_out.transpose(1, 2), dout)  # (M, 4D, N)
        du = torch.ops.aten.gelu_backward(da, u)
        self.weight_grads[f"{pre}.w_in.weight"] = torch.bmm(du, h.transpose(1, 2))  # (M, 4D, D)
        return torch.bmm(w_in.transpose(1, 2), du)  # (M, D, N)

    def _attn_backward(self, dout: torch.Tensor, cache, i: int) -> torch.Tensor:
        cfg = self.cfg
        h, q, k, v, att, y, q_cache, k_cache, (B, T) = cache
        M, D, H = self.M, cfg.d_model, cfg.n_heads
        Dh = D // H
        G = M * B * H
        pre = f"blocks.{i}.attn"
        w_qkv = self.w(f"{pre}.w_q.weight", rows=3 * D)  # (M, 3D, D)
        self.weight_grads[f"{pre}.w_o.weight"] = torch.bmm(dout, y.transpose(1, 2))  # (M, D, D)
        dy = torch.bmm(self.w(f"{pre}.w_o.weight").transpose(1, 2), dout)  # (M, D, N)
        dy = dy.view(M, H, Dh, B, T).permute(0, 3, 1, 2, 4).reshape(G, Dh, T)  # a copy
        datt = torch.bmm(dy.transpose(1, 2), v)  # (G, T, T)
        dqkv = torch.empty(3, G, Dh, T)
        torch.bmm(dy, att, out=dqkv[2])  # dv = dy att
        datt = torch._softmax_backward_data(datt, att, -1, att.dtype)  # 0 where masked
        if cfg.qk_norm:
            dqkv[0] = _norm_backward(torch.bmm(k, datt.transpose(1, 2)).mul_(cfg.attn_scale), q_cache, cfg.norm_kind)
            dqkv[1] = _norm_backward(torch.bmm(q, datt).mul_(cfg.attn_scale), k_cache, cfg.norm_kind)
        else:
            torch.baddbmm(k, k, datt.transpose(1, 2), beta=0.0, alpha=cfg.attn_scale, out=dqkv[0])  # dq = k datt^T
            torch.baddbmm(q, q, datt, beta=0.0, alpha=cfg.attn_scale, out=dqkv[1])  # dk = q datt
        dqkv = dqkv.view(3, M, B, H, Dh, T).permute(1, 0, 3, 4, 2, 5).reshape(M, 3 * D, B * T)  # a copy
        self.weight_grads[f"{pre}.w_q.weight"] = torch.bmm(dqkv, h.transpose(1, 2))  # (M, 3D, D): w_q, w_k, w_v
        return torch.bmm(w_qkv.transpose(1, 2), dqkv)  # (M, D, N)

    @torch.no_grad()
    def evaluate(self, x: torch.Tensor, y: torch.Tensor, doc: torch.Tensor | None = None) -> torch.Tensor:
        """Each model's mean loss (z-loss excluded) over the windows x, y (n, T),
        shared by all models: an (M,) tensor. doc: optional document ids (n, T)."""
        total = torch.zeros(self.M, dtype=torch.float64)
        for s in range(0, len(x), EVAL_CHUNK):
            xc, yc = x[s : s + EVAL_CHUNK], y[s : s + EVAL_CHUNK]
            dc = None if doc is None else doc[s : s + EVAL_CHUNK].expand(self.M, *xc.shape)
            logits, _ = self.forward(xc.expand(self.M, *xc.shape), keep=False, doc=dc)  # (M, V, n*T)
            tgt = yc.reshape(1, 1, -1).expand(self.M, 1, -1)
            _, exp_sum, tgt_logit = _exp_shifted_(logits, tgt)  # no log-probabilities written
            total += (exp_sum.log_() - tgt_logit).sum((1, 2), dtype=torch.float64)
        return total / y.numel()
