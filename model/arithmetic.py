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

from .data import Corpus, Vocab, corpus_from_text
from .decoder import Decoder


@dataclass(frozen=True)
class Problems:
    """A batch of sums: the operands of each."""

    a: np.ndarray
    b: np.ndarray

    @property
    def prompts(self) -> list[str]:
        return [f"\n{a}+{b}=" for a, b in zip(self.a, self.b, strict=True)]

    @property
    def answers(self) -> list[str]:
        return [f"{a + b}\n" for a, b in zip(self.a, self.b, strict=True)]


def draw(rng: np.random.Generator, n: int, digits: int) -> Problems:
    """``n`` sums of operands below ``10 ** digits``."""
    high = 10**digits
    return Problems(rng.integers(0, high, n), rng.integers(0, high, n))


def every_single_digit_sum() -> Problems:
    """All 100 sums of two single-digit numbers."""
    a, b = np.divmod(np.arange(100), 10)
    return Problems(a, b)


def corpus_text(n_lines: int, seed: int) -> str:
    """``n_lines`` sums, half single-digit and half two-digit, in random order."""
    rng = np.random.default_rng(seed)
    one = draw(rng, n_lines // 2, 1)
    two = draw(rng, n_lines - n_lines // 2, 2)
    a, b = np.concatenate([one.a, two.a]), np.concatenate([one.b, two.b])
    order = rng.permutation(len(a))
    return "".join(f"{a[i]}+{b[i]}={a[i] + b[i]}\n" for i in order)


def arithmetic_corpus(n_lines: int, seed: int) -> Corpus:
    """The corpus of :func:`corpus_text`, split 90/10 like the book."""
    return corpus_from_text(corpus_text(n_lines, seed))


@torch.no_grad()
def exact_match(model: Decoder, vocab: Vocab, problems: Problems) -> float:
    """Share of ``problems`` whose greedy-decoded answer equals the true one exactly.

    Prompts of equal length are decoded together; each answer is generated for its
    true length (newline included), so a longer or shorter answer counts as wrong.
    """
    was_training = model.training
    model.eval()
    prompts, answers = problems.prompts, problems.answers
    correct = 0
    for length in sorted({len(p) for p in prompts}):
        rows = [i for i, p in enumerate(prompts) if len(p) == length]
        idx = torch.from_numpy(np.stack([vocab.encode(prompts[i]) for i in rows]))  # (B, length)
        for _ in range(max(len(answers[i]) for i in rows)):
            logits = model(idx[:, -model.cfg.context :])[:, -1, :]  # (B, V)
            idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
        for row, i in enumerate(rows):
            produced = vocab.decode(idx[row, length : length + len(answers[i])])
            correct += produced == answers[i]
    model.train(was_training)
    return correct / len(prompts)
