"""Chapter 13: how far 6ND is from the toy's own FLOPs (``ch13.flops``), for every size of the IsoFLOP sweep.

6N per token counts every weight. Two parts of that are off for these small Decoders: the embedding
tables (token and position) are looked up, not multiplied, and attention's scores and weighted sums
add 12 · L · H · Q · T FLOPs per token for training (Chowdhery et al. 2022, App. B; H · Q = d_model,
T the context), which 6N leaves out. Both are reported as shares of 6N.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.decoder import ModelConfig
from model.experiments.ch13_isoflop import SIZES
from model.experiments.common import exact
from model.experiments.registry import Measurement, Outcome, RunContext, experiment
from model.isoflop import n_params

ATTENTION_COEFF = 12  # training FLOPs per token per L · H · Q · T (ch01.flops.attention_coeff)


@dataclass(frozen=True)
class Flops:
    sizes: tuple[tuple[int, int], ...] = SIZES


@experiment("ch13.flops", config=Flops(), seeds=(0,), quick={})
def flops(ctx: RunContext) -> Outcome:
    """Embedding share of N and attention's FLOPs over 6N, per size of the sweep."""
    cfg: Flops = ctx.config
    n, emb, attn = [], [], []
    for d, layers in cfg.sizes:
        mc = ModelConfig(d_model=d, n_layers=layers)
        total = n_params(mc)
        n.append(total)
        emb.append((mc.vocab + mc.context) * d / total)  # wte and wpe: looked up, not multiplied
        attn.append(ATTENTION_COEFF * layers * d * mc.context / (6 * total))
    m: dict[str, Measurement] = {
        "ch13.flops.emb_min": exact(min(emb), "", "embedding tables' share of N, smallest over the sizes", 2),
        "ch13.flops.emb_max": exact(max(emb), "", "embedding tables' share of N, largest over the sizes", 2),
        "ch13.flops.attn_min": exact(min(attn), "", "attention FLOPs over 6N, smallest over the sizes", 2),
        "ch13.flops.attn_max": exact(max(attn), "", "attention FLOPs over 6N, largest over the sizes", 2),
    }
    return Outcome(measurements=m, series={"n": n, "emb_share": emb, "attn_share": attn})
