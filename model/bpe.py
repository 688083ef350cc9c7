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
from itertools import pairwise

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
    while len(merges) < n_merges and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg or neg == 0:
            continue  # stale: the count changed since this entry was pushed
        merges.append(pair)
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
            w = list(chunk)
            while len(w) > 1:
                pair = min(pairwise(w), key=lambda p: rank.get(p, len(rank)))
                if pair not in rank:
                    break
                w = merge_pair(w, *pair)
            cache[chunk] = w
        tokens.extend(cache[chunk])
    return tokens


def decode(tokens: list[str]) -> str:
    return "".join(tokens)


def token_vocab(text: str, merges: list[tuple[str, str]]) -> list[str]:
    """All token strings: the text's characters by code point, then one per merge."""
    return sorted(set(text)) + [a + b for a, b in merges]
