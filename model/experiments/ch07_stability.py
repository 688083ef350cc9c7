"""Chapter 7, stability: the numbers deck 07 shows.

- ``ch07.sweep``: a learning-rate ladder up to and past the rates where the loss blows up, for
  five arms of the default Decoder: the default, QK-norm, z-loss (10^-4 log^2 Z), both, and
  Adam's beta2 at 0.95 instead of 0.999. Every 50 steps a probe loads each run's weights into
  an autograd Decoder (model/stability.py) and runs a fixed batch of held-out windows through it:
  the largest attention logit and the attention entropy of each head, and the output's log Z.
  At the end, the share of Adam's second-moment entries whose root is near epsilon.
- ``ch07.bad_batch``: one bad batch at a chosen step (the windows that step draws are overwritten
  in a copy of the corpus with random characters from the book's 16 rarest), at the best rate and
  a rate ten times higher, with no protection, global-norm clipping at two thresholds, and
  skipping a batch whose gradient norm exceeds k times the running median; each against the same
  arm on the clean corpus, the same seeds and batches.

Every run is the default run (AdamW, clip 1.0, batch 32, warmup 100 + cosine) with 1,000 steps
instead of 2,000 (to fit the machine's budget), except where its config says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.data import Corpus, load_corpus, val_windows
from model.decoder import ModelConfig
from model.experiments.common import band, exact, measured, progress
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.stability import corrupted, decoder_from, max_entropy, near_eps_share, probe, touched, window_starts
from model.train import Step, TrainConfig, TrainResult, train_many

SEEDS = (0, 1, 2)
#: The ladder: about 3x apart, from below the default's best rate to far past its blow-up.
RATES = (6e-3, 2e-2, 6e-2, 2e-1, 6e-1, 2.0)
STEPS = 1000
MARGIN = 0.1  # the good band: mean final loss within this many nats of the arm's best (as deck 05)
COLLAPSE = 0.1  # a head's attention has collapsed when its mean entropy is below this (nats)
NEAR_EPS = 10.0  # "near epsilon": sqrt(v_hat) below this many epsilons
ARMS: dict[str, tuple[dict, dict]] = {  # name -> (ModelConfig fields, TrainConfig fields)
    "base": ({}, {}),
    "qk": ({"qk_norm": True}, {}),
    "z": ({"z_loss": 1e-4}, {}),
    "qkz": ({"qk_norm": True, "z_loss": 1e-4}, {}),
    "b95": ({}, {"betas": (0.9, 0.95)}),
}
ARM_NAMES = {
    "base": "default",
    "qk": "QK-norm",
    "z": "z-loss",
    "qkz": "QK-norm + z-loss",
    "b95": "beta2 0.95",
}


def _val(runs: Sequence[TrainResult]) -> np.ndarray:
    """Validation curves (runs, evaluations); a run that stopped early is padded with NaN."""
    n = max(len(r.curves["val_loss"]) for r in runs)
    return np.array([r.curves["val_loss"] + [math.nan] * (n - len(r.curves["val_loss"])) for r in runs])


def blowup_step(steps: Sequence[float], losses: Sequence[float], level: float) -> float:
    """The first evaluated step after step 0 whose loss is above ``level`` or not finite (NaN if none)."""
    for step, loss in zip(steps, losses, strict=True):
        if step > 0 and not (math.isfinite(loss) and loss <= level):
            return float(step)
    return math.nan


def _paired(a: np.ndarray, b: np.ndarray, what: str) -> Measurement:
    return measured(np.asarray(a) - np.asarray(b), "nats", what, 2)


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class Sweep:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=STEPS, eval_every=50))
    rates: tuple[float, ...] = RATES
    arms: tuple[str, ...] = tuple(ARMS)
    probe_every: int = 50
    probe_windows: int = 128  # the first this many validation windows: the fixed held-out batch
    margin: float = MARGIN
    collapse: float = COLLAPSE
    near_eps: float = NEAR_EPS


@dataclass
class Probes:
    """What the probe hook recorded for one stack: per probe step, per run."""

    steps: list[int] = field(default_factory=list)
    max_logit: list[np.ndarray] = field(default_factory=list)  # each (M, L*H)
    entropy: list[np.ndarray] = field(default_factory=list)  # each (M, L*H)
    log_z: list[np.ndarray] = field(default_factory=list)  # each (M,)
    eps_share: np.ndarray | None = None  # (M,) at the last step


def _train_probed(
    cfg: ModelConfig, runs: list[TrainConfig], corpus: Corpus, every: int, xv: torch.Tensor, near: float, report
) -> tuple[list[TrainResult], Probes]:
    """train_many with the probe every `every` steps and Adam's near-epsilon share at the end."""
    out = Probes()
    last = max(r.steps for r in runs)

    def look(step: Step) -> None:
        if step.step % every == 0 or step.step == last:
            stats = [probe(decoder_from(step.weights(m, cfg), cfg), xv) for m in range(len(runs))]
            out.steps.append(step.step)
            out.max_logit.append(np.array([s.max_logit.flatten().numpy() for s in stats]))
            out.entropy.append(np.array([s.entropy.flatten().numpy() for s in stats]))
            out.log_z.append(np.array([s.log_z_mean for s in stats]))
        if step.step == last:
            v = step.optimizer.state["exp_avg_sq"]
            shares = [
                float(near_eps_share(v[m : m + 1], step.optimizer.t, runs[m].betas[1], runs[m].eps, near)[0])
                for m in range(len(runs))
            ]
            out.eps_share = np.array(shares)
        return None

    results = train_many(cfg, runs, corpus, workers=1, on_step=look, on_eval=report)
    return results, out


@experiment(
    "ch07.sweep",
    config=Sweep(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "probe_every": 10, "probe_windows": 8},
)
def sweep(ctx: RunContext) -> Outcome:
    """Final loss, attention max-logit and entropy, log Z and Adam's near-eps share against the rate, five arms."""
    cfg: Sweep = ctx.config
    corpus = load_corpus()
    xv, _ = val_windows(corpus.val, ModelConfig().context)
    xv = xv[: cfg.probe_windows]  # validation windows: disjoint from every training window
    R, S, A = len(cfg.rates), len(ctx.seeds), len(cfg.arms)
    t = cfg.train
    m: dict[str, Measurement] = {
        "ch07.steps": exact(t.steps, "steps", "training steps of each run in this deck"),
        "ch07.batch": exact(t.batch, "windows", "windows per batch"),
        "ch07.warmup": exact(t.warmup, "steps", "linear warmup steps"),
        "ch07.clip": exact(t.clip or math.inf, "", "gradient-norm clipping threshold of the sweep", 2),
        "ch07.sweep.n_rates": exact(R, "rates", "learning rates in the ladder"),
        "ch07.sweep.lr_min": exact(cfg.rates[0], "", "lowest rate of the ladder", 1),
        "ch07.sweep.lr_max": exact(cfg.rates[-1], "", "highest rate of the ladder", 1),
        "ch07.probe.windows": exact(cfg.probe_windows, "windows", "held-out windows in the probe batch"),
        "ch07.probe.every": exact(cfg.probe_every, "steps", "steps between probes"),
        "ch07.margin": exact(cfg.margin, "nats", "good band: mean final loss within this of the arm's best", 2),
        "ch07.collapse": exact(cfg.collapse, "nats", "a head has collapsed below this mean attention entropy", 2),
        "ch07.entropy.uniform": exact(
            max_entropy(ModelConfig().context), "nats", "mean entropy of uniform causal attention", 3
        ),
        "ch07.zloss.coeff": exact(ARMS["z"][0]["z_loss"], "", "z-loss coefficient of the z-loss arms", 1),
        "ch07.beta2.low": exact(ARMS["b95"][1]["betas"][1], "", "the lower beta2", 2),
        "ch07.beta2.default": exact(t.betas[1], "", "the default beta2", 3),
        "ch07.eps": exact(t.eps, "", "Adam's epsilon", 1),
        "ch07.near_eps": exact(cfg.near_eps, "", "near epsilon: sqrt(v_hat) below this many epsilons", 2),
        "ch07.qk.bound": exact(
            math.sqrt(ModelConfig().d_head), "", "largest possible |logit| under QK-norm without gain: sqrt(Dh)", 3
        ),
    }
    for i, rate in enumerate(cfg.rates):
        m[f"ch07.lr.r{i}"] = exact(rate, "", f"rate {i + 1} of the ladder", 1)
    series: dict = {"rates": list(cfg.rates), "seeds": list(ctx.seeds)}
    finals, blows, inits = {}, {}, []
    for a, arm in enumerate(cfg.arms):
        mfields, tfields = ARMS[arm]
        mcfg = ModelConfig(**mfields)
        runs = [replace(t, lr=r, seed=s, **tfields) for r in cfg.rates for s in ctx.seeds]
        report = progress(ctx, t, a / A, 1 / A)
        results, pr = _train_probed(mcfg, runs, corpus, cfg.probe_every, xv, cfg.near_eps, report)
        steps = results[0].curves["step"]
        val = _val(results).reshape(R, S, -1)
        init = float(np.nanmean(val[:, :, 0]))
        inits.append(init)
        final = np.array([r.val_loss_final for r in results]).reshape(R, S)
        blow = np.array([[blowup_step(steps, v, init) for v in val[i]] for i in range(R)])
        finals[arm], blows[arm] = final, blow
        ml = np.stack(pr.max_logit, axis=-2).reshape(R, S, len(pr.steps), -1)  # (R, S, probes, heads)
        ent = np.stack(pr.entropy, axis=-2).reshape(R, S, len(pr.steps), -1)
        lz = np.stack(pr.log_z, axis=-1).reshape(R, S, len(pr.steps))
        eps_share = (pr.eps_share if pr.eps_share is not None else np.full(R * S, np.nan)).reshape(R, S)
        series |= {
            f"{arm}.step": steps,
            f"{arm}.val_loss": val,
            f"{arm}.final": final,
            f"{arm}.blowup_step": blow,
            f"{arm}.probe_step": pr.steps,
            f"{arm}.max_logit": ml,
            f"{arm}.entropy": ent,
            f"{arm}.log_z": lz,
            f"{arm}.eps_share": eps_share,
        }
        m |= _arm_measures(arm, cfg, final, blow, ml, ent, lz, eps_share)
    m["ch07.init"] = exact(float(np.mean(inits)), "nats", "validation loss at step 0 (mean): the blow-up level", 3)
    m |= _comparisons(cfg, finals, blows)
    series |= {"margin": cfg.margin, "collapse": cfg.collapse, "init": float(np.mean(inits))}
    return Outcome(measurements=m, series=series)


def _best(final: np.ndarray, blow: np.ndarray) -> int:
    """The rung with the lowest mean final loss among those where no seed blew up."""
    means = np.where(np.isnan(blow).all(axis=1) & np.isfinite(final).all(axis=1), final.mean(axis=1), np.inf)
    return int(np.argmin(means))


def _means(final: np.ndarray, blow: np.ndarray) -> np.ndarray:
    """Mean final loss per rung, NaN where a seed blew up or went non-finite."""
    ok = np.isnan(blow).all(axis=1) & np.isfinite(final).all(axis=1)
    return np.where(ok, final.mean(axis=1), np.nan)


def _arm_measures(arm, cfg: Sweep, final, blow, ml, ent, lz, eps_share) -> dict[str, Measurement]:
    name = ARM_NAMES[arm]
    rates = cfg.rates
    b = _best(final, blow)
    means = _means(final, blow)
    low, high, count = band(rates, means, cfg.margin)
    m = {
        f"ch07.{arm}.best.lr": exact(rates[b], "", f"{name}: best rate (lowest mean final loss)", 1),
        f"ch07.{arm}.best.final": measured(final[b], "nats", f"{name}: final validation loss at its best rate", 3),
        f"ch07.{arm}.best.edge": exact(int(b in (0, len(rates) - 1)), "", f"{name}: 1 if its best is at an end"),
        f"ch07.{arm}.band.low": exact(low, "", f"{name}: lowest rate in its good band", 1),
        f"ch07.{arm}.band.high": exact(high, "", f"{name}: highest rate in its good band", 1),
        f"ch07.{arm}.band.count": exact(count, "rates", f"{name}: rates in its good band"),
        f"ch07.{arm}.blowups": exact(
            int(np.isfinite(blow).sum()), "runs", f"{name}: runs whose loss exceeds its start"
        ),
        f"ch07.{arm}.nonfinite": exact(
            int((~np.isfinite(final)).sum()), "runs", f"{name}: runs whose loss or gradient became non-finite"
        ),
    }
    fin_ml = ml[:, :, -1, :].max(axis=-1)  # (R, S): largest head's logit at the end
    peak_ml = ml.max(axis=(2, 3))  # (R, S): largest logit over the run
    fin_ent = ent[:, :, -1, :].min(axis=-1)  # (R, S): lowest head's entropy at the end
    for i, rate in enumerate(rates):
        r = f"ch07.{arm}.r{i}"
        if np.isfinite(final[i]).all():
            m[f"{r}.final"] = measured(final[i], "nats", f"{name}: final validation loss at rate {rate:g}", 3)
        m[f"{r}.blowups"] = exact(int(np.isfinite(blow[i]).sum()), "seeds", f"{name}: seeds blowing up at {rate:g}")
        m[f"{r}.max_logit"] = measured(fin_ml[i], "", f"{name}: largest attention logit at the end, rate {rate:g}", 2)
        m[f"{r}.peak_logit"] = measured(peak_ml[i], "", f"{name}: largest attention logit in the run, rate {rate:g}", 2)
        m[f"{r}.entropy"] = measured(fin_ent[i], "nats", f"{name}: lowest head's final entropy, rate {rate:g}", 2)
        m[f"{r}.log_z"] = measured(lz[i, :, -1], "nats", f"{name}: final mean log Z, rate {rate:g}", 2)
        m[f"{r}.log_z_peak"] = measured(lz[i].max(axis=-1), "nats", f"{name}: largest mean log Z, rate {rate:g}", 2)
        m[f"{r}.eps_share"] = measured(
            eps_share[i],
            "",
            f"{name}: share of v entries with sqrt(v_hat) < {cfg.near_eps:g} eps at the end, {rate:g}",
            2,
        )
    collapsed = (fin_ent < cfg.collapse).all(axis=1)
    if collapsed.any():
        c = int(np.argmax(collapsed))
        m[f"ch07.{arm}.collapse.lr"] = exact(rates[c], "", f"{name}: lowest rate where every seed's head collapses", 1)
    m[f"ch07.{arm}.collapse.count"] = exact(
        int((fin_ent < cfg.collapse).sum()), "runs", f"{name}: runs ending with a head below the collapse entropy"
    )
    m[f"ch07.{arm}.peak_logit"] = exact(float(ml.max()), "", f"{name}: largest attention logit of any run", 3)
    return m


def _comparisons(cfg: Sweep, finals: dict, blows: dict) -> dict[str, Measurement]:
    """Each arm against the default, each at its own best rate, paired by seed; the band's widening."""
    m: dict[str, Measurement] = {}
    if "base" not in finals:
        return m
    base_b = _best(finals["base"], blows["base"])
    base_low, base_high, base_count = band(cfg.rates, _means(finals["base"], blows["base"]), cfg.margin)
    for arm in finals:
        if arm == "base":
            continue
        b = _best(finals[arm], blows[arm])
        low, high, count = band(cfg.rates, _means(finals[arm], blows[arm]), cfg.margin)
        m[f"ch07.{arm}.minus_base"] = _paired(
            finals[arm][b], finals["base"][base_b], f"{ARM_NAMES[arm]} minus default, each at its best rate, paired"
        )
        m[f"ch07.{arm}.band.widening"] = exact(
            (high / low) / (base_high / base_low), "", f"{ARM_NAMES[arm]}: band width over the default's", 2
        )
        m[f"ch07.{arm}.band.extra"] = exact(count - base_count, "rates", f"{ARM_NAMES[arm]}: rates gained in its band")
        survives = np.isnan(blows[arm]).all(axis=1) & ~np.isnan(blows["base"]).all(axis=1)
        m[f"ch07.{arm}.saved"] = exact(
            int(survives.sum()), "rates", f"{ARM_NAMES[arm]}: rates where the default blows up and it does not"
        )
        # at each rate, the arm minus the default, paired by seed (where both are finite)
        for i, rate in enumerate(cfg.rates):
            a, d = finals[arm][i], finals["base"][i]
            if np.isfinite(a).all() and np.isfinite(d).all():
                m[f"ch07.{arm}.r{i}.minus_base"] = _paired(a, d, f"{ARM_NAMES[arm]} minus default at {rate:g}, paired")
    return m


# --------------------------------------------------------------------------- one bad batch


@dataclass(frozen=True)
class BadBatch:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=STEPS, eval_every=50))
    rates: tuple[float, ...] = (2e-2, 2e-1)  # the default's best rate and ten times it
    at: int = 300  # the step whose batch is bad (0-based update number)
    rare: int = 16  # the bad windows are random characters drawn from this many rarest characters
    clips: tuple[float, ...] = (1.0, 0.25)  # global-norm thresholds (1.0: the default run's)
    skip_k: float = 3.0  # skipping: drop a batch whose gradient norm exceeds k x the running median
    skip_window: int = 50  # ... of the last this many steps' norms
    recover: float = 0.01  # recovered: the paired difference back within its size before the bad batch, or this (nats)
    smooth: int = 10  # training losses averaged when judging recovery
    window: tuple[int, int] = (20, 150)  # steps before and after the bad one kept for the figures


ARMS_BAD = ("none", "clip1", "clip2", "skip")


def _bad_runs(cfg: BadBatch, seeds: Sequence[int]) -> list[TrainConfig]:
    """Runs in the order rate, arm, seed: no clipping, clipping at each threshold, skipping (no clipping)."""
    clips = (None, *cfg.clips, None)
    return [replace(cfg.train, lr=r, clip=c, seed=s) for r in cfg.rates for c in clips for s in seeds]


class Skipper:
    """The skip hook: run m's update is dropped when its gradient norm exceeds k times the median
    of its previous `window` norms (only once it has that many); also records each step's update size."""

    def __init__(self, mask: torch.Tensor, k: float, window: int, keep: tuple[int, int]):
        self.mask, self.k, self.window, self.keep = mask, k, window, keep
        self.norms: list[torch.Tensor] = []
        self.skipped: list[tuple[int, int]] = []  # (step, run)
        self.sizes: dict[int, torch.Tensor] = {}  # step -> (M,) norm of that update
        self.prev: torch.Tensor | None = None

    def skip(self, step: Step) -> torch.Tensor:
        norm = step.norm.clone()
        out = torch.zeros_like(self.mask)
        if len(self.norms) >= self.window:
            median = torch.stack(self.norms[-self.window :]).median(dim=0).values
            out = self.mask & (norm > self.k * median)
        self.norms.append(norm)
        self.skipped += [(step.step, int(m)) for m in out.nonzero().flatten().tolist()]
        return out

    def on_step(self, step: Step) -> None:
        lo, hi = self.keep
        if lo <= step.step <= hi:
            if self.prev is not None:
                self.sizes[step.step] = torch.linalg.vector_norm(step.theta - self.prev, dim=1)
            self.prev = step.theta.clone()
        return None


@experiment(
    "ch07.bad_batch",
    config=BadBatch(),
    seeds=SEEDS,
    quick={"train.steps": 40, "train.eval_every": 10, "at": 20, "skip_window": 5, "window": (5, 15), "smooth": 3},
)
def bad_batch(ctx: RunContext) -> Outcome:
    """One bad batch: loss and gradient norm around it without protection, with clipping and with skipping."""
    cfg: BadBatch = ctx.config
    corpus = load_corpus()
    T, B, S = ModelConfig().context, cfg.train.batch, len(ctx.seeds)
    R, A = len(cfg.rates), len(ARMS_BAD)
    counts = torch.bincount(corpus.train, minlength=corpus.vocab.size)
    rare = counts.argsort()[: cfg.rare]  # the rarest characters of the training text
    lo, hi = cfg.at - cfg.window[0], cfg.at + cfg.window[1]
    skip_mask = torch.tensor([a == "skip" for _ in cfg.rates for a in ARMS_BAD for _ in ctx.seeds])

    def run(runs: list[TrainConfig], data: Corpus, mask: torch.Tensor, done: float, share: float):
        sk = Skipper(mask, cfg.skip_k, cfg.skip_window, (lo - 1, hi))
        res = train_many(
            ModelConfig(),
            runs,
            data,
            workers=1,
            skip=sk.skip,
            on_step=sk.on_step,
            on_eval=progress(ctx, cfg.train, done, share),
        )
        return res, sk

    # the clean corpus: every arm and seed in one stack
    clean_runs = _bad_runs(cfg, ctx.seeds)
    clean, clean_sk = run(clean_runs, corpus, skip_mask, 0.0, 0.5)
    # the bad corpus differs per seed (each data seed draws its own windows at `at`)
    bad: list[TrainResult | None] = [None] * len(clean_runs)
    bad_sizes = np.zeros((len(clean_runs), hi - lo + 1))
    bad_skipped: list[tuple[int, int]] = []
    other_windows, worst = 0, 0
    for j, s in enumerate(ctx.seeds):
        idx = [i for i, r in enumerate(clean_runs) if r.seed == s]
        runs = [clean_runs[i] for i in idx]
        starts = window_starts(corpus.train, runs[0].data_seed_value, B, T, cfg.train.steps)
        gen = torch.Generator().manual_seed(s)
        fill = rare[torch.randint(0, cfg.rare, (B, T + 1), generator=gen)]  # random rare characters
        data = corrupted(corpus, starts[cfg.at], fill)
        hits = touched(starts, starts[cfg.at], T)
        hits[cfg.at] = 0
        other_windows += int(hits.sum())
        worst = max(worst, int(hits.max()))
        res, sk = run(runs, data, skip_mask[idx], 0.5 + 0.5 * j / S, 0.5 / S)
        for k, i in enumerate(idx):
            bad[i] = res[k]
            bad_sizes[i] = [float(sk.sizes[st][k]) if st in sk.sizes else math.nan for st in range(lo, hi + 1)]
        bad_skipped += [(st, idx[k]) for st, k in sk.skipped]
    assert all(r is not None for r in bad)
    bad_res = [r for r in bad if r is not None]
    clean_sizes = np.array(
        [
            [float(clean_sk.sizes[st][i]) if st in clean_sk.sizes else math.nan for st in range(lo, hi + 1)]
            for i in range(len(clean_runs))
        ]
    )
    shape = (R, A, S)
    loss_bad = np.array([r.step_losses for r in bad_res]).reshape(*shape, -1)
    loss_clean = np.array([r.step_losses for r in clean]).reshape(*shape, -1)
    norm_bad = np.array([r.step_grad_norms for r in bad_res]).reshape(*shape, -1)
    norm_clean = np.array([r.step_grad_norms for r in clean]).reshape(*shape, -1)
    val_bad = _val(bad_res).reshape(*shape, -1)
    val_clean = _val(clean).reshape(*shape, -1)
    steps = clean[0].curves["step"]
    diff = loss_bad - loss_clean  # (R, A, S, steps): paired by seed, the same batches but one
    k = cfg.smooth
    quiet = diff.copy()
    quiet[..., cfg.at] = np.nan  # the bad batch's own loss is not the model's damage
    smooth = np.stack(
        [np.nanmean(quiet[..., max(0, t - k + 1) : t + 1], axis=-1) for t in range(diff.shape[-1])], axis=-1
    )  # trailing mean over the last k steps, the bad step left out
    m: dict[str, Measurement] = {
        "ch07.bad.at": exact(cfg.at, "", "the step whose batch is bad"),
        "ch07.bad.rare": exact(cfg.rare, "characters", "the bad windows draw from this many rarest characters"),
        "ch07.bad.windows": exact(B, "windows", "bad windows in the bad batch"),
        "ch07.bad.skip_k": exact(cfg.skip_k, "", "skip a batch whose norm exceeds this x the running median", 2),
        "ch07.bad.skip_window": exact(cfg.skip_window, "steps", "the running median's window"),
        "ch07.bad.recover": exact(cfg.recover, "nats", "the recovery level's floor (nats)", 2),
        "ch07.bad.smooth": exact(k, "steps", "training losses averaged when judging recovery"),
        "ch07.bad.clip1": exact(cfg.clips[0], "", "the first clipping threshold", 2),
        "ch07.bad.clip2": exact(cfg.clips[1], "", "the second clipping threshold", 2),
        "ch07.bad.other_windows": exact(
            other_windows / S, "windows", "other steps' windows that overlap a bad window, per seed (mean)", 3
        ),
        "ch07.bad.other_share": exact(
            other_windows / S / (B * (cfg.train.steps - 1)),
            "",
            "share of the other steps' windows touching bad text",
            2,
        ),
        "ch07.bad.other_worst": exact(worst, "windows", "most windows of one other step touching bad text"),
        "ch07.bad.skipped_other": exact(
            sum(1 for st, _ in bad_skipped if st != cfg.at),
            "batches",
            "batches the skip rule drops besides the bad one",
        ),
        "ch07.bad.skip_runs": exact(R * S, "runs", "skip-arm runs that meet the bad batch"),
        "ch07.bad.skipped_bad": exact(
            sum(1 for st, _ in bad_skipped if st == cfg.at), "runs", "skip-arm runs whose bad batch the rule dropped"
        ),
        "ch07.bad.skipped_clean": exact(len(clean_sk.skipped), "batches", "batches the skip rule drops on clean data"),
    }
    for i, rate in enumerate(cfg.rates):
        m[f"ch07.bad.lr.r{i}"] = exact(rate, "", f"bad-batch rate {i + 1}", 1)
        typical = np.median(norm_clean[i, :, :, cfg.at - cfg.skip_window : cfg.at], axis=-1)  # (A, S)
        for a, arm in enumerate(ARMS_BAD):
            p = f"ch07.bad.r{i}.{arm}"
            m[f"{p}.loss"] = measured(loss_bad[i, a, :, cfg.at], "nats", f"bad batch's loss, {arm}, {rate:g}", 3)
            m[f"{p}.norm"] = measured(norm_bad[i, a, :, cfg.at], "", f"bad batch's gradient norm, {arm}, {rate:g}", 2)
            m[f"{p}.norm_ratio"] = measured(
                norm_bad[i, a, :, cfg.at] / typical[a], "", f"bad norm over the clean median, {arm}, {rate:g}", 2
            )
            m[f"{p}.jump"] = measured(
                diff[i, a, :, cfg.at + 1], "nats", f"next step's loss minus the clean run's, {arm}, {rate:g}", 2
            )
            after = smooth[i, a, :, cfg.at + 1 :]
            m[f"{p}.peak"] = measured(
                after.max(axis=-1), "nats", f"largest smoothed paired rise after, {arm}, {rate:g}", 2
            )
            # the runs already differ a little before the bad batch (other windows touch the bad text,
            # and high rates amplify any change): recovered is back within that, never below the floor
            level = np.maximum(np.abs(smooth[i, a, :, k : cfg.at]).max(axis=-1), cfg.recover)  # (S,)
            m[f"{p}.level"] = measured(level, "nats", f"recovery level: largest paired difference before, {arm}", 2)
            rec = [_recovery(row, lv) for row, lv in zip(after, level, strict=True)]
            if all(math.isfinite(x) for x in rec):
                m[f"{p}.recover_steps"] = measured(rec, "steps", f"steps to recover, {arm}, {rate:g}", 2)
            m[f"{p}.recovered"] = exact(sum(math.isfinite(x) for x in rec), "seeds", f"seeds that recover, {arm}")
            m[f"{p}.final_diff"] = _paired(
                val_bad[i, a, :, -1], val_clean[i, a, :, -1], f"final val loss, bad minus clean, {arm}, {rate:g}"
            )
            before = int(np.searchsorted(steps, cfg.at, side="right")) - 1  # the last evaluation before the bad update
            m[f"{p}.before_diff"] = _paired(
                val_bad[i, a, :, before], val_clean[i, a, :, before], f"val loss before it, bad minus clean, {arm}"
            )
            m[f"{p}.clean_final"] = measured(
                val_clean[i, a, :, -1], "nats", f"clean final val loss, {arm}, {rate:g}", 3
            )
            m[f"{p}.nonfinite"] = exact(
                sum(r.diverged_at is not None for r in bad_res[(i * A + a) * S : (i * A + a + 1) * S]),
                "runs",
                "non-finite",
            )
        unprotected = norm_bad[i, 0]  # (S, steps): the unprotected runs' norms, bad batch included
        m[f"ch07.bad.r{i}.over_clip1"] = measured(
            (unprotected > cfg.clips[0]).sum(axis=-1),
            "steps",
            f"unprotected steps above clip {cfg.clips[0]:g}, {rate:g}",
            2,
        )
        m[f"ch07.bad.r{i}.over_clip2"] = measured(
            (unprotected > cfg.clips[1]).mean(axis=-1),
            "",
            f"share of unprotected steps above {cfg.clips[1]:g}, {rate:g}",
            2,
        )
        m[f"ch07.bad.r{i}.typical_norm"] = measured(
            typical[0], "", f"median clean gradient norm over the {cfg.skip_window} steps before, {rate:g}", 2
        )
    series = {
        "rates": list(cfg.rates),
        "at": cfg.at,
        "window_steps": list(range(lo, hi + 1)),
        "loss_diff": diff[..., lo : hi + 1],
        "smooth_diff": smooth[..., lo : hi + 1],
        "loss_bad": loss_bad[..., lo : hi + 1],
        "norm_bad": norm_bad[..., lo : hi + 1],
        "norm_clean": norm_clean[..., lo : hi + 1],
        "update_bad": bad_sizes.reshape(*shape, -1),
        "update_clean": clean_sizes.reshape(*shape, -1),
        "step": steps,
        "val_bad": val_bad,
        "val_clean": val_clean,
        "all_norms": norm_bad[:, 0],  # (R, S, steps): the unprotected runs' norms, bad batch included (the slider)
        "clips": list(cfg.clips),
    }
    return Outcome(measurements=m, series=series)


def _recovery(after: np.ndarray, level: float) -> float:
    """Steps from the bad one until the smoothed paired difference, past its peak, is first back at or
    below `level` (0: it never rose above the level; NaN: it never came back)."""
    peak = int(np.argmax(after))
    if after[peak] <= level:
        return 0.0
    back = np.flatnonzero(after[peak:] <= level)
    return float(peak + back[0] + 1) if len(back) else math.nan


# --------------------------------------------------------------------------- z-loss's coefficient


@dataclass(frozen=True)
class ZLoss:
    train: TrainConfig = field(default_factory=lambda: TrainConfig(steps=STEPS, eval_every=100))
    coeffs: tuple[float, ...] = (0.0, 1e-4, 1e-3, 1e-2)  # 0: the default; 1e-4: PaLM's
    rates: tuple[float, ...] = (2e-2, 2e-1, 6e-1)  # the default's best rate and two above it
    probe_windows: int = 128


@experiment(
    "ch07.zloss",
    config=ZLoss(),
    seeds=SEEDS,
    quick={"train.steps": 20, "train.eval_every": 10, "probe_windows": 8},
)
def zloss(ctx: RunContext) -> Outcome:
    """z-loss at four coefficients and three rates: the final log Z and loss, paired against no z-loss."""
    cfg: ZLoss = ctx.config
    corpus = load_corpus()
    xv, _ = val_windows(corpus.val, ModelConfig().context)
    xv = xv[: cfg.probe_windows]
    R, S, C = len(cfg.rates), len(ctx.seeds), len(cfg.coeffs)
    log_z = np.zeros((C, R, S))
    final = np.zeros((C, R, S))
    for c, coeff in enumerate(cfg.coeffs):
        mcfg = ModelConfig(z_loss=coeff)
        runs = [replace(cfg.train, lr=r, seed=s) for r in cfg.rates for s in ctx.seeds]
        results = train_many(mcfg, runs, corpus, on_eval=progress(ctx, cfg.train, c / C, 1 / C))
        for k, res in enumerate(results):
            assert res.state_dict is not None
            log_z[c].flat[k] = probe(decoder_from(res.state_dict, mcfg), xv).log_z_mean
            final[c].flat[k] = res.val_loss_final
    m: dict[str, Measurement] = {}
    for c, coeff in enumerate(cfg.coeffs):
        m[f"ch07.zloss.c{c}"] = exact(coeff, "", f"z-loss coefficient {c + 1}", 1)
        for i, rate in enumerate(cfg.rates):
            p = f"ch07.zloss.c{c}.r{i}"
            m[f"{p}.log_z"] = measured(log_z[c, i], "nats", f"final mean log Z, z-loss {coeff:g}, rate {rate:g}", 2)
            if np.isfinite(final[c, i]).all():
                m[f"{p}.final"] = measured(final[c, i], "nats", f"final loss, z-loss {coeff:g}, rate {rate:g}", 3)
            if c and np.isfinite(final[c, i]).all() and np.isfinite(final[0, i]).all():
                m[f"{p}.minus_none"] = _paired(final[c, i], final[0, i], f"z-loss {coeff:g} minus none, {rate:g}")
    for i, rate in enumerate(cfg.rates):
        m[f"ch07.zloss.lr.r{i}"] = exact(rate, "", f"z-loss sweep rate {i + 1}", 1)
    return Outcome(
        measurements=m,
        series={"coeffs": list(cfg.coeffs), "rates": list(cfg.rates), "log_z": log_z, "final": final},
    )
