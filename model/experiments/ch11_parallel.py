"""Chapter 11, model parallelism: the numbers deck 11 shows.

- ``ch11.schedules``: the schedule simulator (model/pipeline.py) on a grid: the bubble against
  the published formulas, the activations each schedule holds, and the curves the figure draws;
- ``ch11.pipeline``: the Decoder cut into 2 stages in 2 processes (gloo, loopback), GPipe and
  1F1B: gradients against the single process's, activations held, and idle time per stage;
- ``ch11.tensor``: the MLP split column-then-row and attention by heads over 2 processes:
  outputs and gradients against the unsplit Decoder, all-reduces counted per layer;
- ``ch11.comm``: bytes each kind of parallelism sends, for the Decoder's shape and LLaMA-7B's,
  and ring attention over 2 and 4 processes against full attention;
- ``ch11.systems``: 6ND / (n · peak · MFU) against twelve published runs (model/systems.py).

Every process runs one thread; the machine has two cores, shared with other jobs while this ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from model import pipeline as pl
from model import systems
from model.data import load_corpus, sample_batch
from model.decoder import Decoder, ModelConfig
from model.experiments.common import exact
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.parallel import comm, launch
from model.parallel.ring import run_ring
from model.parallel.stages import PipeJob, run_stages
from model.parallel.tensor import run_tp

SEEDS = (0, 1, 2)
MICRO = (1, 2, 4, 8)
SCHEDULES = ("gpipe", "1f1b")


# --------------------------------------------------------------------------- the simulator


@dataclass(frozen=True)
class Schedules:
    p: int = 4  # the slide's pipeline: 4 stages
    m: int = 8  # and 8 micro-batches
    ratio: float = 2.0  # a backward costs two forwards (4N against 2N FLOPs per token)
    grid_p: tuple[int, ...] = (2, 4, 8)
    grid_m: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    grid_v: tuple[int, ...] = (1, 2, 4)
    ratios: tuple[float, ...] = (1.0, 2.0, 3.0)


@experiment("ch11.schedules", config=Schedules(), quick={"grid_m": (4, 8), "grid_p": (2, 4)})
def schedules(ctx: RunContext) -> Outcome:
    """The simulator's bubble against (p-1)/(m+p-1) and (1/v)(p-1)/m on a grid, and what each schedule holds."""
    cfg: Schedules = ctx.config
    worst_gpipe = worst_inter = 0.0
    cases = 0
    for p in cfg.grid_p:
        for m in cfg.grid_m:
            for r in cfg.ratios:
                for name in ("gpipe", "1f1b"):
                    s = pl.simulate(p, m, name, 1, r)
                    worst_gpipe = max(worst_gpipe, abs(s.bubble - pl.gpipe_bubble(p, m)))
                    cases += 1
                for v in cfg.grid_v:
                    if m % p == 0:
                        s = pl.simulate(p, m, "interleaved", v, r)
                        worst_inter = max(
                            worst_inter, abs(s.bubble_over_work - pl.interleaved_bubble_over_work(p, m, v))
                        )
                        cases += 1
    p, m, r = cfg.p, cfg.m, cfg.ratio
    g, f, i2 = (pl.simulate(p, m, "gpipe", 1, r), pl.simulate(p, m, "1f1b", 1, r),
                pl.simulate(p, m, "interleaved", 2, r))  # fmt: skip
    ms = np.array([mm for mm in cfg.grid_m if mm % p == 0])
    curves = {f"v{v}": np.array([pl.simulate(p, int(mm), "interleaved", v, r).bubble for mm in ms]) for v in cfg.grid_v}
    k = "ch11.sim"
    meas = {
        f"{k}.p": exact(p, "stages", "stages in the slide's pipeline"),
        f"{k}.m": exact(m, "micro-batches", "micro-batches in the slide's pipeline"),
        f"{k}.ratio": exact(r, "", "a backward's cost over a forward's in the simulation", 2),
        f"{k}.gpipe.bubble": exact(g.bubble, "", "GPipe's idle share at the slide's p and m (simulated)", 3),
        f"{k}.1f1b.bubble": exact(f.bubble, "", "1F1B's idle share at the slide's p and m (simulated)", 3),
        f"{k}.interleaved2.bubble": exact(i2.bubble, "", "interleaved 1F1B's idle share, v = 2 (simulated)", 3),
        f"{k}.gpipe.over_work": exact(g.bubble_over_work, "", "GPipe's idle time over its work, (p-1)/m", 3),
        f"{k}.interleaved2.over_work": exact(
            i2.bubble_over_work, "", "interleaved (v = 2) idle over work, (p-1)/(2m)", 3
        ),
        f"{k}.gpipe.peak": exact(
            g.peak_in_flight, "micro-batches", "most micro-batches' activations a GPipe stage holds"
        ),
        f"{k}.1f1b.peak": exact(
            f.peak_in_flight, "micro-batches", "most micro-batches' activations a 1F1B stage holds"
        ),
        f"{k}.interleaved2.peak": exact(
            i2.peak_in_flight,
            "micro-batches",
            "most activations an interleaved (v = 2) stage holds, in whole stages",
            3,
        ),
        f"{k}.cases": exact(cases, "settings", "simulated settings compared with the formulas"),
        f"{k}.gpipe.max_diff": exact(worst_gpipe, "", "largest |simulated - (p-1)/(m+p-1)| over the grid", 2),
        f"{k}.interleaved.max_diff": exact(worst_inter, "", "largest |simulated - (p-1)/(vm)| over the grid", 2),
    }
    return Outcome(meas, {"m": ms, "p": np.array(p), **curves,
                          "formula": np.array([pl.gpipe_bubble(p, int(mm)) for mm in ms])})  # fmt: skip


# --------------------------------------------------------------------------- the real pipeline


@dataclass(frozen=True)
class Pipeline:
    model: ModelConfig = field(default_factory=lambda: ModelConfig(n_layers=2))  # two blocks: one per stage
    batch: int = 32
    timed: ModelConfig = field(  # wider and deeper, so each op is long enough to time
        default_factory=lambda: ModelConfig(d_model=128, n_layers=4, context=64, n_heads=4)
    )
    micro_size: int = 16  # windows per micro-batch in the timed runs
    repeats: int = 40
    warmup: int = 3
    n_seeds: int = 3  # of SEEDS, for the gradient comparison (quick: one)


PIPELINE_QUICK = {"repeats": 2, "warmup": 0, "n_seeds": 1, "timed.d_model": 32, "timed.context": 16, "micro_size": 4}


@experiment("ch11.pipeline", config=Pipeline(), seeds=SEEDS, quick=PIPELINE_QUICK)
def pipeline(ctx: RunContext) -> Outcome:
    """The Decoder cut into 2 stages in 2 processes, GPipe and 1F1B: gradients, activations held, idle time."""
    cfg: Pipeline = ctx.config
    corpus = load_corpus()
    meas: dict[str, Measurement] = {}
    series: dict[str, np.ndarray] = {}
    worst = worst_rel = worst_loss = 0.0
    held: dict[str, np.ndarray] = {}
    seeds = ctx.seeds[: cfg.n_seeds]
    for n, seed in enumerate(seeds):
        idx, tgt = sample_batch(corpus.train, cfg.batch, cfg.model.context, torch.Generator().manual_seed(seed))
        ref = Decoder(cfg.model, torch.Generator().manual_seed(seed))
        loss = ref.loss(idx, tgt)
        loss.backward()
        loss_value = float(loss.detach())
        grads = {name: p.grad.numpy() for name, p in ref.named_parameters() if p.grad is not None}
        scale = max(float(np.abs(g).max()) for g in grads.values())
        ctx.report_progress(n / (2 * len(seeds)), f"gradients, seed {seed}")
        jobs = tuple(PipeJob(cfg.model, seed, name, MICRO, 1, 0, idx, tgt) for name in SCHEDULES)
        both = launch.run(run_stages, 2, jobs)
        for s, name in enumerate(SCHEDULES):
            res = [both[0][s], both[1][s]]
            for m in MICRO:
                got = {**res[0]["grads"][m], **res[1]["grads"][m]}
                if sorted(got) != sorted(grads):
                    raise RuntimeError(
                        f"the stages returned gradients for {sorted(got)}, the Decoder has {sorted(grads)}"
                    )
                diff = max(float(np.abs(got[k] - grads[k]).max()) for k in grads)
                worst, worst_rel = max(worst, diff), max(worst_rel, diff / scale)
                worst_loss = max(worst_loss, abs(res[1]["loss"][m] - loss_value))
            held[name] = np.array([[res[r]["records"][m][0].peak_held for m in MICRO] for r in (0, 1)])
    meas["ch11.pipe.grad_max_diff"] = exact(worst, "", "largest |pipeline - single-process| gradient element, "
                                            "3 seeds, m = 1 to 8, both schedules", 2)  # fmt: skip
    meas["ch11.pipe.grad_max_rel"] = exact(worst_rel, "", "that difference over the largest gradient element", 2)
    meas["ch11.pipe.loss_max_diff"] = exact(worst_loss, "nats", "largest |pipeline - single-process| batch loss", 2)
    meas["ch11.pipe.cases"] = exact(len(seeds) * len(SCHEDULES) * len(MICRO), "runs", "pipeline runs compared")
    for name in SCHEDULES:
        for r in (0, 1):
            meas[f"ch11.pipe.{name}.held.s{r}.m8"] = exact(
                held[name][r][-1], "micro-batches", f"activations stage {r + 1} held at once, m = 8 ({name})"
            )
    meas["ch11.pipe.batch"] = exact(cfg.batch, "windows", "batch of the gradient comparison")

    # timing: a wider, deeper Decoder so each op takes milliseconds, not microseconds
    timed_idx, timed_tgt = sample_batch(corpus.train, max(MICRO) * cfg.micro_size, cfg.timed.context,
                                        torch.Generator().manual_seed(ctx.seeds[0]))  # fmt: skip
    ctx.report_progress(0.5, "timing")
    jobs = tuple(
        PipeJob(cfg.timed, ctx.seeds[0], name, MICRO, cfg.repeats, cfg.warmup, timed_idx, timed_tgt, cfg.micro_size)
        for name in SCHEDULES
    )
    both = launch.run(run_stages, 2, jobs)
    for s, name in enumerate(SCHEDULES):
        res = [both[0][s], both[1][s]]
        idle = np.array([[[1 - rec.busy / rec.total for rec in res[r]["records"][m]] for m in MICRO] for r in (0, 1)])
        wait = np.array([[[rec.wait / rec.total for rec in res[r]["records"][m]] for m in MICRO] for r in (0, 1)])
        busy = np.array([[[rec.busy for rec in res[r]["records"][m]] for m in MICRO] for r in (0, 1)])
        series[f"{name}_idle"] = idle  # (stage, m, repeat)
        series[f"{name}_wait"] = wait
        for r in (0, 1):
            for j, m in enumerate(MICRO):
                q25, med, q75 = np.percentile(idle[r, j], (25, 50, 75))
                key = f"ch11.pipe.{name}.idle.s{r}.m{m}"
                meas[key] = exact(
                    med, "", f"stage {r + 1}'s idle share, m = {m}, {name}: median of {cfg.repeats} steps", 2
                )
                meas[f"{key}.q25"] = exact(q25, "", "its 25th percentile", 2)
                meas[f"{key}.q75"] = exact(q75, "", "its 75th percentile", 2)
            meas[f"ch11.pipe.{name}.busy_ratio.s{r}"] = exact(
                float(np.median(busy[r, -1]) / np.median(busy[0, -1])), "",
                f"stage {r + 1}'s compute time over stage 1's at m = 8 ({name})", 3)  # fmt: skip
        within = [bool(np.percentile(idle[r, j], 25) <= pl.gpipe_bubble(2, m) <= np.percentile(idle[r, j], 75))
                  for r in (0, 1) for j, m in enumerate(MICRO)]  # fmt: skip
        meas[f"ch11.pipe.{name}.formula_in_iqr"] = exact(
            sum(within), "of 8", f"stage/m cells whose quartiles hold (p-1)/(m+p-1) ({name})"
        )
        meas[f"ch11.pipe.{name}.excess.m8"] = exact(
            float(np.median(idle[:, -1])) - pl.gpipe_bubble(2, 8), "",
            f"median idle share over both stages at m = 8 minus 1/9 ({name})", 2)  # fmt: skip
    quart = {n: np.percentile(series[f"{n}_idle"], (25, 75), axis=2) for n in SCHEDULES}  # (2, stage, m)
    overlap = (quart["gpipe"][0] <= quart["1f1b"][1]) & (quart["1f1b"][0] <= quart["gpipe"][1])
    what = "stage/m cells where GPipe's and 1F1B's idle quartiles overlap"
    meas["ch11.pipe.schedules_overlap"] = exact(int(overlap.sum()), "of 8", what)
    falls = [bool(np.percentile(series[f"{n}_idle"][r, -1], 75) < np.percentile(series[f"{n}_idle"][r, 0], 25))
             for n in SCHEDULES for r in (0, 1)]  # fmt: skip
    meas["ch11.pipe.falls"] = exact(sum(falls), "of 4", "stage/schedule pairs whose m = 8 quartiles lie below m = 1's")
    for m in MICRO:
        meas[f"ch11.pipe.formula.m{m}"] = exact(pl.gpipe_bubble(2, m), "", f"(p-1)/(m+p-1) at p = 2, m = {m}", 3)
    meas["ch11.pipe.repeats"] = exact(cfg.repeats, "steps", "timed steps per setting")
    meas["ch11.pipe.micro_size"] = exact(cfg.micro_size, "windows", "windows per micro-batch in the timed runs")
    meas["ch11.pipe.timed.d_model"] = exact(cfg.timed.d_model, "", "width of the timed Decoder")
    meas["ch11.pipe.timed.layers"] = exact(cfg.timed.n_layers, "layers", "layers of the timed Decoder")
    meas["ch11.pipe.timed.context"] = exact(cfg.timed.context, "characters", "context of the timed Decoder")
    series["micro"] = np.array(MICRO)
    return Outcome(meas, series)


# --------------------------------------------------------------------------- tensor parallelism


@dataclass(frozen=True)
class Tensor:
    batch: int = 32
    layers: tuple[int, ...] = (1, 2, 4)
    heads: int = 2
    n_seeds: int = 3  # of SEEDS (quick: one)


@experiment("ch11.tensor", config=Tensor(), seeds=SEEDS, quick={"layers": (1, 2), "n_seeds": 1})
def tensor(ctx: RunContext) -> Outcome:
    """The MLP split column-then-row and attention by heads over 2 processes against the unsplit Decoder."""
    cfg: Tensor = ctx.config
    corpus = load_corpus()
    logit = grad = rel = 0.0
    per_layer: set[tuple[int, int]] = set()
    elements: set[float] = set()
    for seed in ctx.seeds[: cfg.n_seeds]:
        for L in cfg.layers:
            mcfg = ModelConfig(n_layers=L, n_heads=cfg.heads)
            idx, tgt = sample_batch(corpus.train, cfg.batch, mcfg.context, torch.Generator().manual_seed(seed))
            for r in launch.run(run_tp, 2, mcfg, seed, idx, tgt):
                logit, grad = max(logit, r["logit_diff"]), max(grad, r["grad_diff"])
                rel = max(rel, r["grad_diff"] / r["grad_scale"])
                per_layer.add((r["forward"] // L, r["backward"] // L))
                if r["forward"] % L or r["backward"] % L:
                    raise RuntimeError(f"{r['forward']} + {r['backward']} all-reduces do not divide by {L} layers")
                elements.add(r["elements"] / (4 * L * cfg.batch * mcfg.context * mcfg.d_model))
    if len(per_layer) != 1 or len(elements) != 1:
        raise RuntimeError(f"all-reduces per layer differ between runs: {per_layer}, {elements}")
    ((fwd, bwd),) = per_layer
    meas = {
        "ch11.tp.logit_max_diff": exact(logit, "", "largest |split - unsplit| logit, 3 seeds, 1, 2 and 4 layers", 2),
        "ch11.tp.grad_max_diff": exact(grad, "", "largest |split - unsplit| gradient element", 2),
        "ch11.tp.grad_max_rel": exact(rel, "", "that difference over the largest gradient element", 2),
        "ch11.tp.allreduce.forward": exact(fwd, "per layer", "all-reduces per layer, forward (counted)"),
        "ch11.tp.allreduce.backward": exact(bwd, "per layer", "all-reduces per layer, backward (counted)"),
        "ch11.tp.allreduce.elements_over_sbh": exact(
            elements.pop(), "", "elements all-reduced per layer-pass over s·b·h (counted)"
        ),  # fmt: skip
        "ch11.tp.degree": exact(2, "processes", "tensor-parallel degree"),
        "ch11.tp.max_layers": exact(max(cfg.layers), "layers", "deepest split Decoder compared"),
    }
    return Outcome(meas, {})


# --------------------------------------------------------------------------- communication volume


@dataclass(frozen=True)
class Comm:
    degree: int = 8  # the parallel degree for the large shape (a server of 8 GPUs)
    experts_top_k: int = 2
    worlds: tuple[int, ...] = (2, 4)  # ring attention over this many processes
    n_seeds: int = 3  # of SEEDS (quick: one)


@experiment("ch11.comm", config=Comm(), seeds=SEEDS, quick={"worlds": (2,), "n_seeds": 1})
def comm_volume(ctx: RunContext) -> Outcome:
    """Bytes each kind of parallelism sends per layer, Decoder and LLaMA-7B shapes; ring attention run for real."""
    cfg: Comm = ctx.config
    corpus = load_corpus()
    meas: dict[str, Measurement] = {}
    shapes = {"toy": (comm.TOY, 2), "big": (comm.LLAMA7B, cfg.degree)}
    for tag, (shape, t) in shapes.items():
        for kind, fn in (("tp", comm.tp_bytes), ("sp", comm.sp_bytes), ("cp", comm.cp_bytes)):
            meas[f"ch11.comm.{tag}.{kind}"] = exact(
                fn(shape, t), "bytes", f"{kind.upper()} bytes sent per process per layer ({shape.name}, degree {t})", 3
            )
        meas[f"ch11.comm.{tag}.ep"] = exact(
            comm.ep_bytes(shape, t, cfg.experts_top_k),
            "bytes",
            f"EP all-to-all bytes per process per MoE layer, forward ({shape.name})",
            3,
        )
        meas[f"ch11.comm.{tag}.degree"] = exact(t, "processes", f"parallel degree for {shape.name}")
        meas[f"ch11.comm.{tag}.act"] = exact(
            comm.activation_bytes(shape), "bytes", f"one layer's input activations s·b·h ({shape.name})", 3
        )
    meas["ch11.comm.big.seq"] = exact(comm.LLAMA7B.seq, "tokens", "sequence length chosen for the large shape")
    meas["ch11.comm.top_k"] = exact(cfg.experts_top_k, "experts", "experts per token in the EP count")
    # ring attention, for real: 2 and 4 processes against full causal attention on one
    worst = 0.0
    sent_ok = True
    for seed in ctx.seeds[: cfg.n_seeds]:
        mcfg = ModelConfig()
        model = Decoder(mcfg, torch.Generator().manual_seed(seed))
        idx, _ = sample_batch(corpus.train, 32, mcfg.context, torch.Generator().manual_seed(seed))
        q, k, v, full = comm.qkv_and_attention(model, idx)
        for world in cfg.worlds:
            res = launch.run(run_ring, world, q, k, v, mcfg.attn_scale)
            out = np.concatenate([r["out"] for r in res], axis=2)
            worst = max(worst, float(np.abs(out - full.numpy()).max()))
            want = (world - 1) * 2 * q.numel() // world * q.element_size()
            sent_ok &= all(r["sent"] == want for r in res)
    if not sent_ok:
        raise RuntimeError("a ring process sent other than (world-1) chunks of keys and values")
    meas["ch11.ring.max_diff"] = exact(
        worst, "", "largest |ring - full| attention output, 2 and 4 processes, 3 seeds", 2
    )
    meas["ch11.ring.toy_bytes"] = exact(
        comm.cp_bytes(comm.TOY, 2), "bytes", "bytes each of 2 ring processes sent (toy)"
    )
    return Outcome(meas, {})


# --------------------------------------------------------------------------- the systems model


@experiment("ch11.systems")
def systems_model(ctx: RunContext) -> Outcome:
    """6ND / (n · peak · MFU) against the twelve runs of S11.runs: predicted where utilisation is reported."""
    meas: dict[str, Measurement] = {}
    ratios: list[float] = []
    ends: list[float] = []
    below = 0
    kinds = []
    for run in systems.RUNS:
        p = systems.predict(run)
        k = f"ch11.sys.{systems.slug(run.name)}"
        kinds.append(p.kind)
        meas[f"{k}.flops"] = exact(p.flops, "FLOPs", f"6ND for {run.name}", 2)
        if p.predicted_chip_hours:
            lo, hi = p.predicted_chip_hours
            meas[f"{k}.pred_hours"] = exact(
                lo, "chip-hours", f"predicted chip-hours, {run.name} (at the higher utilisation)", 2
            )
            if hi != lo:
                meas[f"{k}.pred_hours_hi"] = exact(hi, "chip-hours", "predicted chip-hours at the lower utilisation", 2)
        if p.predicted_days:
            meas[f"{k}.pred_days"] = exact(p.predicted_days[0], "days", f"predicted days on its chips, {run.name}", 2)
        if p.published_over_predicted:
            lo, hi = p.published_over_predicted
            meas[f"{k}.ratio"] = exact(lo, "", f"published over predicted time, {run.name}", 2)
            if hi != lo:
                meas[f"{k}.ratio_hi"] = exact(hi, "", "the same at the lower reported utilisation", 2)
            ratios.append(float(np.sqrt(lo * hi)))  # one per run: a range counts at its geometric middle
            ends += [lo, hi]
            below += lo < 1
        if run.chip_hours is not None:
            meas[f"{k}.published_hours"] = exact(run.chip_hours, "chip-hours", f"published chip-hours, {run.name}", 3)
        if p.implied_mfu is not None:
            meas[f"{k}.implied_mfu"] = exact(
                p.implied_mfu, "", f"utilisation its published hours imply (D), {run.name}", 2
            )
    gm, _, _ = systems.log_spread(ratios)
    meas["ch11.sys.ratio.geomean"] = exact(gm, "", "geometric mean of published over predicted, one per run", 2)
    meas["ch11.sys.ratio.min"] = exact(min(ends), "", "smallest published over predicted", 3)
    meas["ch11.sys.ratio.max"] = exact(max(ends), "", "largest published over predicted", 2)
    meas["ch11.sys.n.below_one"] = exact(below, "runs", "testable runs that took less than predicted")
    for kind in ("predicted", "prediction only", "implied", "flops only"):
        meas[f"ch11.sys.n.{kind.replace(' ', '_')}"] = exact(
            kinds.count(kind), "runs", f"runs the model could only {kind}"
        )
    meas["ch11.sys.n.runs"] = exact(len(systems.RUNS), "runs", "published runs in the table")
    return Outcome(meas, {"ratio": np.array(ratios)})
