"""An arithmetic corpus and an exact-match score: the "loss is a proxy" experiment.

The corpus is lines of sums, ``"37+5=42\\n"``, with operands drawn from a seeded
generator: half the lines add two single-digit numbers (100 distinct problems), half
add two numbers below 100 (10,000 problems, carries included). Most of what the loss
can learn is the format (digits, ``+``, digits, ``=``); the operands themselves are
random and stay unpredictable. So the score that matters is exact-match accuracy:
greedy-decode the answer to fresh sums and compare it character for character.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .decoder import Decoder

#: Every symbol of the corpus; its index is the token id.
ALPHABET = "0123456789+=\n"


@dataclass(frozen=True)
class Problems:
    """A batch of sums: operands and the answer text for each."""

    a: np.ndarray
    b: np.ndarray

    @property
    def prompts(self) -> list[str]:
        return [f"\n{a}+{b}=" for a, b in zip(self.a, self.b)]

    @property
    def answers(self) -> list[str]:
        return [f"{a + b}\n" for a, b in zip(self.a, self.b)]


def draw(rng: np.random.Generator, n: int, digits: int) -> Problems:
    """``n`` sums of operands below ``10 ** digits``."""
    high = 10**digits
    return Problems(rng.integers(0, high, n), rng.integers(0, high, n))


def corpus_text(n_lines: int, seed: int) -> str:
    """``n_lines`` sums, half single-digit and half two-digit, in random order."""
    rng = np.random.default_rng(seed)
    one = draw(rng, n_lines // 2, 1)
    two = draw(rng, n_lines - n_lines // 2, 2)
    lines = [f"{a}+{b}={a + b}" for a, b in zip(np.concatenate([one.a, two.a]), np.concatenate([one.b, two.b]))]
    order = rng.permutation(len(lines))
    return "\n".join(lines[i] for i in order) + "\n"


def encode(text: str) -> torch.Tensor:
    """Token ids of ``text`` (int64)."""
    table = {c: i for i, c in enumerate(ALPHABET)}
    return torch.tensor([table[c] for c in text], dtype=torch.long)


@torch.no_grad()
def exact_match(model: Decoder, problems: Problems) -> float:
    """Share of ``problems`` whose greedy-decoded answer equals the true one exactly.

    Prompts of equal length are decoded together; each answer is generated until a
    newline or its true length plus one, whichever comes first.
    """
    model.eval()
    prompts, answers = problems.prompts, problems.answers
    correct = 0
    for length in sorted({len(p) for p in prompts}):
        rows = [i for i, p in enumerate(prompts) if len(p) == length]
        idx = torch.stack([encode(prompts[i]) for i in rows])  # (B, length)
        longest = max(len(answers[i]) for i in rows)
        for _ in range(longest):
            logits = model(idx[:, -model.cfg.context :])[:, -1, :]  # (B, V)
            idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
        for row, i in enumerate(rows):
            produced = "".join(ALPHABET[t] for t in idx[row, length:].tolist())
            correct += produced[: len(answers[i])] == answers[i]
    model.train()
    return correct / len(prompts)
