"""Published numbers the decks cite, as code: the registry that writes results.md's cited rows.

Each :class:`Citation` names the fact sheet item it comes from (``/work/shared/facts.md``
keys such as ``S04.adam``) and that item's status; only items read in the primary
source (P), confirmed through a secondary one (S) or derived from those (D) may be
cited. :func:`update_cited` brings a :class:`~slidegen.results.Results` in line with the
registry, so results.md stays entirely generated.
"""

from __future__ import annotations

from dataclasses import dataclass

from slidegen.results import Result, Results

#: Fact statuses a citation may rest on (facts.md: P primary, S secondary, D derived).
CITABLE = frozenset("PSD")


@dataclass(frozen=True)
class Citation:
    """One published number and where it was published."""

    key: str
    value: float
    digits: int
    unit: str
    what: str
    publication: str
    """Authors, year and place: ``Kingma & Ba 2014, Alg. 1``."""
    fact: str
    """The facts.md item this rests on, e.g. ``S04.adam``."""
    status: str
    """That item's status: ``P``, ``S``, ``D`` or a combination such as ``P/D``."""

    def result(self) -> Result:
        """The results.md row for this citation."""
        return Result(
            key=self.key,
            value=self.value,
            unit=self.unit,
            what=self.what,
            source=f"cited: {self.publication}",
            digits=self.digits,
        )


_KAPLAN = "Kaplan et al. 2020, §2.1"
_ADAM = "Kingma & Ba 2014, Alg. 1"

CITATIONS: tuple[Citation, ...] = (
    # Chapter 1: the training loop and its cost.
    Citation("ch01.flops.forward_per_param", 2, 1, "FLOPs per parameter per token",
             "forward-pass compute, about 2N FLOPs per token", _KAPLAN, "S01.fwd_flops", "P"),
    Citation("ch01.flops.backward_per_param", 4, 1, "FLOPs per parameter per token",
             "backward-pass compute, about twice the forward (4N)", _KAPLAN, "S01.flops_6nd", "P"),
    Citation("ch01.flops.train_per_param", 6, 1, "FLOPs per parameter per token",
             "training compute, C ≈ 6ND", _KAPLAN, "S01.flops_6nd", "P"),
    Citation("ch01.flops.attention_coeff", 12, 2, "FLOPs per token per L·H·Q·T",
             "attention term in 6N + 12·L·H·Q·T", "Chowdhery et al. 2022, App. B", "S01.flops_palm", "S"),
    # Chapter 2: data and tokenisation.
    Citation("ch02.gpt2.vocab", 50257, 5, "tokens", "GPT-2 byte-level BPE vocabulary",
             "Radford et al. 2019, §2.3", "S02.gpt2_vocab", "P"),
    Citation("ch02.gpt2.context", 1024, 4, "tokens", "GPT-2 context length",
             "Radford et al. 2019, §2.3", "S02.gpt2_vocab", "P"),
    Citation("ch02.chinchilla.tokens_per_param", 20, 2, "tokens per parameter",
             "Chinchilla 70B trained on 1.4T tokens", "Hoffmann et al. 2022, §3–4", "S02.chin_20tpp", "P/D"),
    # Chapter 4: Adam's published defaults.
    Citation("ch04.adam.lr", 0.001, 1, "", "Adam default step size α", _ADAM, "S04.adam", "P"),
    Citation("ch04.adam.beta1", 0.9, 1, "", "Adam default β₁", _ADAM, "S04.adam", "P"),
    Citation("ch04.adam.beta2", 0.999, 3, "", "Adam default β₂", _ADAM, "S04.adam", "P"),
    Citation("ch04.adam.eps", 1e-8, 1, "", "Adam default ε", _ADAM, "S04.adam", "P"),
    # Chapter 7: stability.
    Citation("ch07.palm.spikes", 20, 2, "", "loss spikes in PaLM 540B despite clipping",
             "Chowdhery et al. 2022, §5.1", "S07.palm_spikes", "P"),
    Citation("ch07.palm.zloss_coeff", 1e-4, 1, "", "z-loss coefficient (10⁻⁴·log²Z)",
             "Chowdhery et al. 2022, §5", "S07.zloss", "P"),
)


def cited_results() -> list[Result]:
    """The results.md rows of every citation in the registry."""
    return [c.result() for c in CITATIONS]


def update_cited(results: Results) -> list[str]:
    """Make ``results``' cited rows match the registry; return the keys added, changed or removed."""
    keys = {c.key for c in CITATIONS}
    gone = results.remove([k for k, r in results.items() if r.cited and k not in keys])
    return results.merge(cited_results()) + gone
