"""ch02.split's check: the training windows located in the play, and a split that overlaps caught."""

import pytest
import torch

from model.data import Batches
from model.experiments.ch02_split import heldout_reads, read_positions


def test_read_positions_are_the_windows_training_draws():
    data = (torch.arange(300) * 7) % 50
    read = read_positions(data, [5, 6], batch=4, context=8, steps=10)
    b = Batches(data, [5, 6], 4, 8)
    for _ in range(10):
        b.next()
    starts_seen = torch.zeros(300, dtype=torch.bool)
    for row in b.starts[:, :10].reshape(-1):
        starts_seen[row : row + 9] = True
    assert torch.equal(read, starts_seen)
    assert read.sum() > 0


def test_a_disjoint_split_reads_no_validation_character_and_an_overlapping_one_is_caught():
    ids = torch.arange(200) % 13
    train, val = ids[:180], ids[180:]
    read = read_positions(train, [1, 2, 3], batch=8, context=8, steps=50)
    assert heldout_reads(ids, train, val, read) == (0, 180)
    leaky = ids  # a split whose training text runs into the validation text
    read = read_positions(leaky, [1, 2, 3], batch=8, context=8, steps=50)
    overlap, start = heldout_reads(ids, leaky, val, read)
    assert start == 180 and overlap > 0
    with pytest.raises(AssertionError, match="not the play's start"):
        heldout_reads(ids, ids[1:181], val, read)
