"""The measures behind deck 02, on small hand-made inputs."""

import math

import numpy as np
import pytest
import torch

from model.data import load_corpus, val_windows
from model.experiments.ch02_data import (
    doc_lengths,
    matched_prefix,
    mixed,
    ngrams_shared,
    repeated_lines,
    scene_starts,
    windows_crossing,
    with_copies,
)
from model.experiments.common import best_rung

PLAY = "Title\n\nACT I\n\nSCENE I. A hall.\n\nA\nhi\n\nSCENE II. A room.\n\nB\nho\n\nACT II\n\nSCENE I. Out.\n\nA\nhi\n"


def test_scenes_start_at_their_act_line_and_the_first_at_zero():
    starts = scene_starts(PLAY)
    assert starts == [0, PLAY.index("SCENE II"), PLAY.index("ACT II")]
    assert doc_lengths(starts, len(PLAY)) == [starts[1], starts[2] - starts[1], len(PLAY) - starts[2]]
    assert sum(doc_lengths(starts, len(PLAY))) == len(PLAY)


def test_windows_crossing_counts_by_brute_force():
    n, T = 40, 4
    starts = [0, 10, 12, 39]
    brute = sum(any(w < s <= w + T for s in starts[1:]) for w in range(n - T))
    assert windows_crossing(starts, n, T) == brute == 7  # 6..11 (two boundaries share some) and 35
    assert windows_crossing([0], n, T) == 0


def test_ngrams_shared():
    assert ngrams_shared("abcdefg", "xxcdexxabc", 3, 1) == 2  # "cde" and "abc"
    assert ngrams_shared("abcdefg", "cdeabc", 3, 3) == 2
    assert ngrams_shared("abcdefg", "xyz", 3, 1) == 0


def test_repeated_lines():
    assert repeated_lines("A\nhi\n\nA\nho\nA\n  \nhi\n") == (6, 2, 3)  # A three times, hi twice


def test_best_rung_takes_the_lowest_mean_and_never_a_diverged_rung():
    finals = np.array([[2.0, 2.2], [1.9, 2.0], [1.0, math.nan]])
    assert best_rung(finals) == 1


def test_matched_prefix():
    assert matched_prefix("abcx", "abcd") == 3 and matched_prefix("", "a") == 0


def test_with_copies_and_mixed():
    ids = torch.arange(10)
    out = with_copies(ids, 2, 3, 4)
    assert out.tolist() == list(range(10)) + [2, 3, 4] * 3
    a, b = torch.zeros(10, dtype=torch.long), torch.ones(10, dtype=torch.long)
    assert mixed(a, b, 0.25, 8).tolist() == [0] * 6 + [1] * 2
    assert mixed(a, b, 1.0, 8).tolist() == [1] * 8
    with pytest.raises(ValueError):
        mixed(a, b, 0.0, 11)


def test_validation_windows_are_disjoint_from_the_training_text():
    c = load_corpus()
    x, y = val_windows(c.val, 16)
    n = len(c.train)
    assert n + len(c.val) == len(c.text)
    assert c.vocab.decode(c.train) + c.vocab.decode(c.val) == c.vocab.decode(c.vocab.encode(c.text))
    assert x.shape[0] == (len(c.val) - 1) // 16  # all from the held-out ids
