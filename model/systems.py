"""The systems model of a training run's length, held against twelve published runs.

Training compute is about 6ND FLOPs (N parameters, D tokens; Kaplan et al. 2020 §2.1). A run
on n chips of peak P FLOP/s each that keeps a share U of that peak busy with useful work (its
model FLOPs utilisation, MFU) takes

    time = 6ND / (n · P · U)        chip-hours = 6ND / (P · U) / 3600.

:data:`RUNS` holds each run's published inputs (the S11.runs table of the fact sheet, its
sources in ``source``; results/cited.yaml shows the same numbers on the slides, and a test keeps
the two equal). Where a run reports its utilisation (MFU, or FLOP/s or tokens/s per chip), the
model predicts its chip-hours and we compare them with the published ones; where it reports
only chip-hours, the model can only be run backwards, to the utilisation they imply (derived,
D), which tests nothing. Peaks are dense 16-bit (vendor figures; V100 125, TPU v3 123, A100 312,
TPU v4 275, H100 989 TFLOP/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PEAKS = {"V100": 125e12, "TPU v3": 123e12, "A100": 312e12, "TPU v4": 275e12, "H100": 989e12}
"""Dense 16-bit peak FLOP/s per chip (fact S08.peaks). The H800 is taken at the H100's peak: an
assumption, said on the slide (its dense compute is the H100's; its links are slower)."""


@dataclass(frozen=True)
class Run:
    """One published run's inputs; ``None`` where the source gives nothing usable (U)."""

    name: str
    params: float
    """N: parameters (active per token for a mixture of experts)."""
    tokens: float
    chip: str | None
    chips: float | None
    """Chips the run used (None: not published)."""
    mfu: tuple[float, float] | None = None
    """Reported utilisation as a (low, high) share of peak: MFU, or reported FLOP/s per chip / peak."""
    tokens_per_chip_s: float | None = None
    """Reported throughput per chip (tokens/s), when that is what the source gives instead."""
    chip_hours: float | None = None
    """Published chip-hours (or days × chips where the source gives days and a count)."""
    days: float | None = None
    """Published wall-clock days, when given."""
    source: str = ""


RUNS: tuple[Run, ...] = (
    Run(
        "GPT-3",
        175e9,
        300e9,
        "V100",
        10_000,
        mfu=(0.213, 0.213),
        days=14.8,
        source="[GPT3] Table D.1; Patterson et al. 2021 Table 4 (10,000 V100 is their assumption); [PaLM] Table 3",
    ),
    Run(
        "Gopher",
        280e9,
        300e9,
        "TPU v3",
        4096,
        mfu=(0.325, 0.325),
        days=920 / 24,
        source="Rae et al. 2021 Table A27 (920 h); [PaLM] Table 3",
    ),
    Run(
        "MT-NLG",
        530e9,
        270e9,
        "A100",
        2240,
        mfu=(0.302, 0.302),
        source="Smith et al. 2022; [PaLM] Table 3 (MFU at 2,240 GPUs); wall-clock U",
    ),
    Run(
        "PaLM",
        540e9,
        780e9,
        "TPU v4",
        6144,
        mfu=(0.462, 0.462),
        chip_hours=6144 * 1200 + 3072 * 336,
        source="[PaLM] §4.1, App. B",
    ),
    Run("Chinchilla", 70e9, 1.4e12, None, None, source="[Hof22] §4.1; chips, time and MFU U"),
    Run(
        "OPT-175B",
        175e9,
        180e9,
        "A100",
        992,
        mfu=(147e12 / 312e12, 147e12 / 312e12),
        days=2 * 365.25 / 12,
        source="[OPT] §2.3-2.5 (up to 147 TFLOP/s per GPU; about two months with restarts)",
    ),
    Run(
        "BLOOM",
        176e9,
        366e9,
        "A100",
        384,
        mfu=(156e12 / 312e12, 156e12 / 312e12),
        chip_hours=1_082_990,
        source="BigScience 2022 §3.4 (best configuration 156 TFLOP/s per GPU)",
    ),
    Run(
        "LLaMA-65B",
        65.2e9,
        1.4e12,
        "A100",
        2048,
        tokens_per_chip_s=380,
        chip_hours=1_022_362,
        days=21,
        source="Touvron et al. 2023a §2.4, Table 15",
    ),
    Run("Llama 2 70B", 69e9, 2.0e12, "A100", None, chip_hours=1_720_320, source="Touvron et al. 2023b Tables 1-2"),
    Run(
        "Llama 3.1 405B",
        405e9,
        15.6e12,
        "H100",
        16_384,
        mfu=(0.38, 0.43),
        chip_hours=30.84e6,
        source="[L3] Table 4; model card (30.84M GPU-hours)",
    ),
    Run(
        "DeepSeek-V3",
        37e9,
        14.8e12,
        "H800",
        2048,
        chip_hours=2.664e6,
        source="[DSV3] §3.1, Table 1 (37B active of 671B; pre-training 2.664M GPU-hours)",
    ),
    Run(
        "Falcon-180B",
        180e9,
        3.5e12,
        "A100",
        4096,
        chip_hours=7e6,
        source="Almazrouei et al. 2023 (about 7M GPU-hours, HF blog)",
    ),
)


def peak(chip: str) -> float:
    """Dense 16-bit peak FLOP/s of a chip (the H800 at the H100's: see :data:`PEAKS`)."""
    return PEAKS["H100" if chip == "H800" else chip]


def flops(run: Run) -> float:
    """6ND."""
    return 6.0 * run.params * run.tokens


@dataclass(frozen=True)
class Prediction:
    """What the model says of one run."""

    name: str
    flops: float
    predicted_chip_hours: tuple[float, float] | None
    """From the reported utilisation (at its high, then its low end); None when none is reported."""
    predicted_days: tuple[float, float] | None
    """The same over the chips the run used, when their count is published."""
    published_over_predicted: tuple[float, float] | None
    """Published chip-hours (or days) over predicted: >1 means the run took longer than its
    utilisation implies (restarts, downtime, slower phases)."""
    implied_mfu: float | None
    """6ND / (published chip-hours · peak): the utilisation the published hours imply (D)."""
    kind: str
    """"predicted" (utilisation reported, hours published), "prediction only" (no published
    time), "implied" (only hours published), or "flops only"."""


def predict(run: Run) -> Prediction:
    """Run the model forwards where a utilisation is reported, backwards where only hours are."""
    c = flops(run)
    hours: tuple[float, float] | None = None
    if run.tokens_per_chip_s is not None:
        h = run.tokens / run.tokens_per_chip_s / 3600
        hours = (h, h)
    elif run.mfu is not None and run.chip is not None:
        hours = (c / (peak(run.chip) * run.mfu[1]) / 3600, c / (peak(run.chip) * run.mfu[0]) / 3600)
    days = None
    if hours is not None and run.chips:
        days = (hours[0] / run.chips / 24, hours[1] / run.chips / 24)
    ratio = None
    if hours is not None and run.chip_hours is not None:
        ratio = (run.chip_hours / hours[1], run.chip_hours / hours[0])
    elif days is not None and run.days is not None:
        ratio = (run.days / days[1], run.days / days[0])
    implied = None
    if run.chip_hours is not None and run.chip is not None:
        implied = c / (run.chip_hours * 3600 * peak(run.chip))
    if ratio is not None:
        kind = "predicted"
    elif hours is not None:
        kind = "prediction only"
    elif implied is not None:
        kind = "implied"
    else:
        kind = "flops only"
    return Prediction(run.name, c, hours, days, ratio, implied, kind)


def slug(name: str) -> str:
    """A result-key part for a run's name: ``Llama 3.1 405B`` -> ``llama31_405b``."""
    out = "".join(ch if ch.isalnum() else "_" for ch in name.lower().replace(".", ""))
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")


def log_spread(ratios: list[float]) -> tuple[float, float, float]:
    """Geometric mean, smallest and largest of published/predicted ratios."""
    logs = [math.log(r) for r in ratios]
    return math.exp(sum(logs) / len(logs)), min(ratios), max(ratios)
