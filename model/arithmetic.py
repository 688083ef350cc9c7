"""An arithmetic corpus and an exact-match score: the "loss is a proxy" experiment.

The corpus is lines of sums. Half the lines add two single-digit numbers (100
distinct problems), half add two numbers below 100 (10,000 problems, carries
included). Two formats: plain, ``"37+5=42\\n"``, or fixed-width with zero padding,
``"37+05=042\\n"`` (each operand two digits, the answer three), where every digit
sits at the same place in every line. Most of what the loss can learn is the
layout (digits, ``+``, ``=``) and the operands, which are random; so the scores
that matter are exact-match accuracy (greedy-decode the answer, compare it
character for character) and the loss on the answer characters alone.

Held-out sums are removed from the corpus before it is drawn (``exclude``), and
:func:`overlap` counts how many of them appear as a line of a text anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .data import Corpus, Vocab, corpus_from_text
from .decoder import Decoder


@dataclass(frozen=True)
class Problems:
    """A batch of sums: the operands of each, and the format they are written in."""

    a: np.ndarray
    b: np.ndarray
    padded: bool = False  # fixed width: operands of two digits, answers of three

    def line(self, a: int, b: int) -> str:
        """One sum as the corpus writes it, without the leading newline."""
        if self.padded:
            return f"{a:02d}+{b:02d}={a + b:03d}\n"
        return f"{a}+{b}={a + b}\n"

    @property
    def lines(self) -> list[str]:
        return [self.line(int(a), int(b)) for a, b in zip(self.a, self.b, strict=True)]

    @property
    def prompts(self) -> list[str]:
        return ["\n" + s[: s.index("=") + 1] for s in self.lines]

    @property
    def answers(self) -> list[str]:
        return [s[s.index("=") + 1 :] for s in self.lines]


def draw(rng: np.random.Generator, n: int, digits: int, padded: bool = False) -> Problems:
    """``n`` sums of operands below ``10 ** digits``."""
    high = 10**digits
    return Problems(rng.integers(0, high, n), rng.integers(0, high, n), padded)


def held_out(rng: np.random.Generator, n: int, padded: bool = False) -> Problems:
    """``n`` distinct two-digit sums (at least one operand 10 or more), drawn without replacement."""
    pool = np.array([k for k in range(10_000) if max(divmod(k, 100)) >= 10])
    a, b = np.divmod(rng.choice(pool, size=n, replace=False), 100)
    return Problems(a, b, padded)


def every_single_digit_sum(padded: bool = False) -> Problems:
    """All 100 sums of two single-digit numbers."""
    a, b = np.divmod(np.arange(100), 10)
    return Problems(a, b, padded)


def corpus_text(n_lines: int, seed: int, padded: bool = False, exclude: Problems | None = None) -> str:
    """``n_lines`` sums, half single-digit and half two-digit, in random order; no
    two-digit line is one of the sums in ``exclude``."""
    rng = np.random.default_rng(seed)
    one = draw(rng, n_lines // 2, 1)
    banned = set() if exclude is None else {int(a) * 100 + int(b) for a, b in zip(exclude.a, exclude.b, strict=True)}
    allowed = np.array([k for k in range(10_000) if k not in banned])
    a2, b2 = np.divmod(allowed[rng.integers(0, len(allowed), n_lines - n_lines // 2)], 100)
    a, b = np.concatenate([one.a, a2]), np.concatenate([one.b, b2])
    order = rng.permutation(len(a))
    fmt = Problems(a, b, padded)
    return "".join(fmt.line(int(a[i]), int(b[i])) for i in order)


def arithmetic_corpus(n_lines: int, seed: int, padded: bool = False, exclude: Problems | None = None) -> Corpus:
    """The corpus of :func:`corpus_text`, split 90/10 like the book."""
    return corpus_from_text(corpus_text(n_lines, seed, padded, exclude))


def overlap(problems: Problems, text: str) -> int:
    """How many of ``problems`` appear as a whole line of ``text``."""
    lines = set(text.split("\n"))
    return sum(s.rstrip("\n") in lines for s in problems.lines)


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


@torch.no_grad()
def answer_loss(model: Decoder, vocab: Vocab, problems: Problems) -> float:
    """Mean cross-entropy (nats) of the answer characters (newline included), each
    predicted from the true prompt and the true answer so far (teacher forcing)."""
    total, count = 0.0, 0
    prompts, answers = problems.prompts, problems.answers
    for length in sorted({len(p) + len(a) for p, a in zip(prompts, answers, strict=True)}):
        rows = [i for i in range(len(prompts)) if len(prompts[i]) + len(answers[i]) == length]
        ids = torch.from_numpy(np.stack([vocab.encode(prompts[i] + answers[i]) for i in rows]))  # (B, length)
        x, y = ids[:, :-1][:, -model.cfg.context :], ids[:, 1:][:, -model.cfg.context :]
        nll = F.cross_entropy(model(x).transpose(1, 2), y, reduction="none")  # (B, T)
        for row, i in enumerate(rows):
            n = len(answers[i])
            total += float(nll[row, -n:].sum())
            count += n
    return total / count
