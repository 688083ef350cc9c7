"""model/bpe.py: exact round trips, deterministic merges, incremental counts
that agree with recounting from scratch."""

from collections import Counter
from itertools import pairwise

import pytest

from model.bpe import chunks, decode, encode, merge_pair, token_vocab, train_bpe
from model.data import load_text

SAMPLE = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n\n  the the  thee\t"


def naive_bpe(text, n_merges):
    """Recount every pair after every merge: slow, obviously right."""
    freq = Counter(chunks(text))
    words = {w: list(w) for w in freq}
    merges = []
    for _ in range(n_merges):
        counts = Counter()
        for w, s in words.items():
            for p in pairwise(s):
                counts[p] += freq[w]
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        words = {w: merge_pair(s, *best) for w, s in words.items()}
    return merges, words


def test_chunks_partition_the_text():
    for text in (SAMPLE, "", "  \n", "a", "¡Hola, señor! 42"):
        assert "".join(chunks(text)) == text


def test_merge_pair_is_left_to_right_and_non_overlapping():
    assert merge_pair(list("aaa"), "a", "a") == ["aa", "a"]
    assert merge_pair(list("abab"), "a", "b") == ["ab", "ab"]


def test_round_trip_and_unseen_text():
    merges = train_bpe(SAMPLE, 40)
    assert decode(encode(SAMPLE, merges)) == SAMPLE
    other = "Ophelia, nymph, in thy orisons\nBe all my sins remember'd. ¿Qué?"
    assert decode(encode(other, merges)) == other


def test_matches_recount_and_encode_reproduces_training():
    merges, words = naive_bpe(SAMPLE, 60)
    assert train_bpe(SAMPLE, 60) == merges
    for chunk, symbols in words.items():
        assert encode(chunk, merges) == symbols


def test_runs_out_of_pairs():
    assert train_bpe("ab ab", 100) == [("a", "b"), (" ", "ab")]  # then no pair is left
    assert train_bpe("", 5) == []


@pytest.fixture(scope="module")
def book():
    return load_text()


def test_book_merges_are_deterministic_and_round_trip(book):
    merges = train_bpe(book, 500)
    assert len(merges) == 500
    assert merges == train_bpe(book, 500)
    assert merges[:3] == [(" ", "t"), ("h", "e"), (" ", "a")]
    tokens = encode(book, merges)
    assert decode(tokens) == book
    assert len(tokens) == 74_477
    vocab = token_vocab(book, merges)
    assert set(tokens) <= set(vocab) and len(vocab) == 64 + 500
