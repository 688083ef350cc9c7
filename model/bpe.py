"""Byte-pair encoding over characters: learn merges on a text, encode, decode.

The text is first cut into chunks that merges never cross (a word with the
space before it, a run of punctuation with the space before it, or a run of
whitespace), as GPT-2 does; the chunks concatenate back to the text, so
decode(encode(text)) == text for any text.

Training keeps, for every adjacent pair of symbols, its count over the text
and the set of distinct chunks it occurs in, so a merge updates only the
chunks that contain the merged pair (no recount). The pair to merge is the
most frequent; ties go to the smallest pair in string order, so the merges
are a function of the text alone.

    merges = train_bpe(text, 500)          # [("t", "h"), ("th", "e"), ...]
    tokens = encode(text, merges)          # ["Ham", "let", "\\n\\n", ...]
    assert decode(tokens) == text
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import pairwise

import torch

from model.data import UNK_CHAR, Corpus, Vocab

_CHUNK = re.compile(r" ?\w+| ?[^\s\w]+|\s+")


def chunks(text: str) -> list[str]:
    """The pieces merges stay inside; "".join(chunks(text)) == text."""
    return _CHUNK.findall(text)


def merge_pair(symbols: list[str], a: str, b: str) -> list[str]:
    """Replace each non-overlapping (a, b), left to right, by a + b."""
    out: list[str] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def train_bpe(text: str, n_merges: int) -> list[tuple[str, str]]:
    """`n_merges` merges in the order learned (fewer if the chunks run out of
    adjacent pairs)."""
    freq = Counter(chunks(text))
    words = [list(w) for w in freq]  # each distinct chunk as its current symbols
    counts = list(freq.values())
    pair_count: defaultdict[tuple[str, str], int] = defaultdict(int)
    where: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    for i, w in enumerate(words):
        for pair in pairwise(w):
            pair_count[pair] += counts[i]
            where[pair].add(i)
    # max-heap by (count, then smallest pair); stale entries are skipped when popped
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)

    merges: list[tuple[str, str]] = []
    # #region bpe-pick
    while len(merges) < n_merges and heap:
        neg, pair = heapq.heappop(heap)  # the most frequent pair; ties: the smallest
        if pair_count.get(pair, 0) != -neg or neg == 0:
            continue  # stale: the count changed since this entry was pushed
        merges.append(pair)
        # #endregion bpe-pick
        touched: set[tuple[str, str]] = set()
        for i in sorted(where.pop(pair)):
            w = words[i]
            for p in pairwise(w):  # take the chunk's old pairs out ...
                pair_count[p] -= counts[i]
                touched.add(p)
            w = words[i] = merge_pair(w, *pair)
            for p in pairwise(w):  # ... and its new pairs in
                pair_count[p] += counts[i]
                where[p].add(i)
                touched.add(p)
        for p in touched:
            if pair_count[p] > 0:
                heapq.heappush(heap, (-pair_count[p], p))
            else:
                pair_count.pop(p)
                where.pop(p, None)
    return merges


def encode(text: str, merges: list[tuple[str, str]]) -> list[str]:
    """Tokens of `text`: each chunk's characters, merged in the order learned
    (the lowest-ranked adjacent pair first), which reproduces training."""
    rank = {pair: r for r, pair in enumerate(merges)}
    cache: dict[str, list[str]] = {}
    tokens: list[str] = []
    for chunk in chunks(text):
        if chunk not in cache:
            # #region bpe-encode
            w = list(chunk)  # start from single characters
            while len(w) > 1:
                pair = min(pairwise(w), key=lambda p: rank.get(p, len(rank)))  # the earliest-learnt pair
                if pair not in rank:
                    break  # no learnt pair left in this chunk
                w = merge_pair(w, *pair)
            # #endregion bpe-encode
            cache[chunk] = w
        tokens.extend(cache[chunk])
    return tokens


def decode(tokens: list[str]) -> str:
    return "".join(tokens)


def token_vocab(text: str, merges: list[tuple[str, str]]) -> list[str]:
    """All token strings: the text's characters by code point, then one per merge."""
    return sorted(set(text)) + [a + b for a, b in merges]


# -----------------------------------------------------------------------------
# a corpus of BPE token ids, split where the character corpus splits


@dataclass(frozen=True)
class BpeCorpus:
    """BPE token ids of a text, with the character corpus's contiguous split: the
    last round(len(text) * val_frac) characters validate, and the merges are learnt
    on the training characters only. `tokens` lists the token strings by id:
    the training text's characters by code point, one per merge, then UNK_CHAR
    (a validation character the training text lacks)."""

    text: str
    merges: tuple[tuple[str, str], ...]
    tokens: tuple[str, ...]  # id -> token string; the last one is UNK_CHAR
    train: torch.Tensor  # int64 token ids of the training characters
    val: torch.Tensor  # int64 token ids of the validation characters
    train_chars: int
    val_chars: int

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def as_corpus(self) -> Corpus:
        """The same ids as a Corpus, so train_many trains a Decoder on them
        (its vocab lists token strings, so decode works and encode does not apply)."""
        vocab = Vocab(chars=self.tokens, unk=len(self.tokens) - 1)
        return Corpus(text=self.text, vocab=vocab, train=self.train, val=self.val)

    def chars_of(self, ids: torch.Tensor) -> int:
        """Characters the token ids stand for."""
        lengths = torch.tensor([len(t) for t in self.tokens])
        return int(lengths[ids.reshape(-1)].sum())


def bpe_corpus(text: str, n_merges: int, val_frac: float = 0.1) -> BpeCorpus:
    """Learn `n_merges` merges on the first (1 - val_frac) of `text` and encode
    both parts with them (each part on its own, so no token straddles the split)."""
    if not 0.0 < val_frac < 1.0:
        raise ValueError(f"val_frac must be in (0, 1), got {val_frac}")
    n_val = round(len(text) * val_frac)
    train_text, val_text = text[: len(text) - n_val], text[len(text) - n_val :]
    merges = train_bpe(train_text, n_merges)
    tokens = tuple(token_vocab(train_text, merges)) + (UNK_CHAR,)
    index = {t: i for i, t in enumerate(tokens[:-1])}
    unk = len(tokens) - 1

    def ids(part: str) -> torch.Tensor:
        return torch.tensor([index.get(t, unk) for t in encode(part, merges)], dtype=torch.int64)

    return BpeCorpus(
        text=text,
        merges=tuple(merges),
        tokens=tokens,
        train=ids(train_text),
        val=ids(val_text),
        train_chars=len(train_text),
        val_chars=len(val_text),
    )


def nats_per_char(nats_per_token: float, n_tokens: int, n_chars: int) -> float:
    """A mean loss over `n_tokens` tokens that spell `n_chars` characters, per character."""
    return nats_per_token * n_tokens / n_chars
