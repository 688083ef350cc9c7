"""What the browser trainer (components/decoder-trainer.js) needs from model/, as a run's series.

Everything is integers, so the run file (results/runs/*.json, whose floats keep 6 significant
digits) holds it exactly: the vocabulary as code points, the training and validation ids, the
seed's initial weights as the bit patterns of their float32 values (what ``torch.manual_seed(seed)``
then ``Decoder(cfg)`` draws; the browser reads them back as float64, exactly), and the window
starts of every update of that seed's run, as ``Batches`` draws them in model/train.py. The
hyperparameters that are not integers go as floats that 6 digits represent exactly (checked).

    series = trainer_series(ModelConfig(), TrainConfig(seed=0))
    weights = initial_weights(series)           # (P,) float64, the layout's flat order
    x, y = batch(series, k)                     # update k's windows, (B, T) each
"""

from __future__ import annotations

import numpy as np
import torch

from model.data import Batches, Corpus, load_corpus
from model.decoder import Decoder, ModelConfig
from model.stacked import init_stack
from model.train import TrainConfig

#: The settings the browser trainer implements (its attributes may change the sizes).
SUPPORTED = {
    "norm": "pre",
    "norm_kind": "layer",
    "attention": "causal",
    "param": "standard",
    "qk_norm": False,
    "z_loss": 0.0,
    "tie_embeddings": False,
}


def trainer_series(cfg: ModelConfig, run: TrainConfig, corpus: Corpus | None = None) -> dict[str, list]:
    """The series the component trains from (see the module docstring)."""
    for name, value in SUPPORTED.items():
        if getattr(cfg, name) != value:
            raise ValueError(f"the browser trainer implements {name}={value!r}, not {getattr(cfg, name)!r}")
    if run.optimizer != "adamw" or run.schedule not in ("cosine", "constant") or run.clip is None:
        raise ValueError("the browser trainer implements AdamW with clipping and a cosine or constant schedule")
    corpus = corpus or load_corpus()
    _, theta = init_stack(cfg, [run.seed])  # (1, P) float32: Decoder(cfg) after manual_seed(seed)
    floats = [run.lr, run.betas[0], run.betas[1], run.eps, run.weight_decay, run.clip]
    for v in floats:
        if float(f"{v:.6g}") != v:
            raise ValueError(f"{v!r} does not survive the run file's 6 significant digits")
    return {
        "model": [cfg.vocab, cfg.d_model, cfg.context, cfg.n_heads, cfg.n_layers, cfg.mlp_ratio],
        "train_ints": [run.steps, run.batch, run.warmup, run.eval_every, int(run.schedule == "constant")],
        "train_floats": floats,
        "seed": [run.seed, run.data_seed_value],
        "vocab": [ord(c) for c in corpus.vocab.chars],
        "train_ids": corpus.train.tolist(),
        "val_ids": corpus.val.tolist(),
        "init_bits": theta[0].numpy().view(np.uint32).tolist(),
        "starts": batch_starts(corpus, run, cfg.context).reshape(-1).tolist(),
    }


def batch_starts(corpus: Corpus, run: TrainConfig, context: int) -> np.ndarray:
    """(steps, batch) int64: the window starts of every update of the run, as train_many draws them."""
    batches = Batches(corpus.train, [run.data_seed_value], run.batch, context)
    out = np.empty((run.steps, run.batch), dtype=np.int64)
    for k in range(run.steps):
        x, _ = batches.next()
        out[k] = batches.starts[0, batches.k - 1].numpy()
        if not torch.equal(x[0, :, 0], corpus.train[out[k]]):  # the starts are the windows' first ids
            raise AssertionError(f"batch starts of update {k} do not match its windows")
    return out


def initial_weights(series: dict) -> np.ndarray:
    """(P,) float64: the exported initial weights, exactly."""
    return np.asarray(series["init_bits"], dtype=np.uint32).view(np.float32).astype(np.float64)


def batch(series: dict, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The windows of update k (0-based): inputs and targets, (B, T) int64 each."""
    T, B = series["model"][2], series["train_ints"][1]
    starts = np.asarray(series["starts"][k * B : (k + 1) * B], dtype=np.int64)
    ids = np.asarray(series["train_ids"], dtype=np.int64)
    window = ids[starts[:, None] + np.arange(T + 1)]
    return window[:, :-1], window[:, 1:]


def names_and_shapes(cfg: ModelConfig) -> list[tuple[str, tuple[int, ...]]]:
    """The Decoder's parameters in the flat buffer's order (named_parameters())."""
    with torch.random.fork_rng(devices=[]):
        return [(n, tuple(p.shape)) for n, p in Decoder(cfg).named_parameters()]


def unflatten(flat: np.ndarray, cfg: ModelConfig) -> dict[str, np.ndarray]:
    """A flat (P,) buffer as the state dict the NumPy reference takes."""
    out, o = {}, 0
    for name, shape in names_and_shapes(cfg):
        n = int(np.prod(shape))
        out[name] = np.array(flat[o : o + n], dtype=np.float64).reshape(shape)
        o += n
    return out


def flatten(state: dict[str, np.ndarray], cfg: ModelConfig) -> np.ndarray:
    return np.concatenate([state[name].reshape(-1) for name, _ in names_and_shapes(cfg)])


def model_config(series: dict) -> ModelConfig:
    V, D, T, H, L, R = series["model"]
    return ModelConfig(vocab=V, d_model=D, context=T, n_heads=H, n_layers=L, mlp_ratio=R)


def train_config(series: dict) -> TrainConfig:
    steps, B, warmup, every, constant = series["train_ints"]
    lr, b1, b2, eps, wd, clip = series["train_floats"]
    seed, data_seed = series["seed"]
    return TrainConfig(
        steps=steps,
        batch=B,
        lr=lr,
        warmup=warmup,
        eval_every=every,
        betas=(b1, b2),
        eps=eps,
        weight_decay=wd,
        clip=clip,
        schedule="constant" if constant else "cosine",
        seed=seed,
        data_seed=data_seed,
    )
