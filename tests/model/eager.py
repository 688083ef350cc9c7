"""The readable way to train one run: the Decoder with autograd and torch.optim.

What model/train.py's stacked trainer must reproduce run for run (tests hold
it to this within 1e-5 in loss): the same initial weights, the same batches,
the schedule of lr_at, clip_grad_norm_, and a stop at the first non-finite
loss or gradient norm."""

from __future__ import annotations

import math

import torch

from model.data import Corpus, load_corpus, sample_batch, val_windows
from model.decoder import Decoder, ModelConfig, cross_entropy, mup_lr_scales
from model.train import TrainConfig, TrainResult, config_dict, lr_at


def _optimizer(model: Decoder, run: TrainConfig) -> torch.optim.Optimizer:
    scales = mup_lr_scales(model.cfg)
    groups = [{"params": [p], "scale": scales[n]} for n, p in model.named_parameters()]
    kw = {"lr": run.lr, "weight_decay": run.weight_decay}
    if run.optimizer == "adamw":
        return torch.optim.AdamW(groups, betas=run.betas, eps=run.eps, **kw)
    if run.optimizer == "adam":
        return torch.optim.Adam(groups, betas=run.betas, eps=run.eps, **kw)
    if run.optimizer == "momentum":
        return torch.optim.SGD(groups, momentum=run.betas[0], **kw)
    return torch.optim.SGD(groups, **kw)


def eager_train(cfg: ModelConfig, run: TrainConfig, corpus: Corpus | None = None) -> TrainResult:
    corpus = corpus or load_corpus()
    T = cfg.context
    torch.manual_seed(run.seed)
    model = Decoder(cfg)
    opt = _optimizer(model, run)
    gen = torch.Generator().manual_seed(run.data_seed_value)
    xv, yv = val_windows(corpus.val, T)
    curves: dict[str, list[float]] = {k: [] for k in ("step", "train_loss", "val_loss", "grad_norm", "lr")}
    losses: list[float] = []
    norms: list[float] = []
    diverged_at = None

    def record(step: int) -> None:
        with torch.no_grad():
            val = cross_entropy(model(xv).double(), yv).item()
        n = step - curves["step"][-1] if curves["step"] else 0
        curves["step"].append(step)
        curves["train_loss"].append(sum(losses[-n:]) / n if n else math.nan)
        curves["val_loss"].append(val)
        curves["grad_norm"].append(norms[-1] if norms else math.nan)
        curves["lr"].append(lr_at(max(step - 1, 0), run))

    record(0)
    for step in range(run.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, run) * g["scale"]
        x, y = sample_batch(corpus.train, run.batch, T, gen)
        loss = model.loss(x, y)
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf if run.clip is None else run.clip)
        if not (math.isfinite(loss.item()) and math.isfinite(norm.item())):
            diverged_at = step
            break
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
        if (step + 1) % run.eval_every == 0 or step + 1 == run.steps:
            record(step + 1)
    finished = diverged_at is None
    steps = len(losses)
    return TrainResult(
        model_config=config_dict(cfg),
        train_config={**config_dict(run), "data_seed": run.data_seed_value},
        val_loss_init=curves["val_loss"][0],
        val_loss_final=curves["val_loss"][-1] if finished else math.nan,
        train_loss_final=curves["train_loss"][-1] if finished else math.nan,
        steps=steps,
        seconds=0.0,
        tokens_seen=steps * run.batch * T,
        diverged_at=diverged_at,
        curves=curves,
        step_losses=losses,
        step_grad_norms=norms,
        state_dict={k: v.detach().clone() for k, v in model.state_dict().items()},
    )
