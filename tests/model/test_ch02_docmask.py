"""ch02.docmask's pieces: the windows it scores and the separators it adds (the document ids
and the masked training are model/data.py's and model/train.py's, tested there)."""

import pytest
import torch

from model.data import doc_ids
from model.experiments.ch02_docmask import after_boundary, far_from_boundary, with_separators


def test_after_boundary_keeps_the_first_k_characters_behind_part_of_the_previous_scene():
    ids = torch.arange(40)
    starts = [0, 20]
    sc = after_boundary(ids, doc_ids(starts, 40), starts, context=8, k=3)
    assert len(sc.x) == 8 - 3 - 1  # the boundary at window positions 1 .. 4 (room for a separator)
    for row, keep, doc in zip(sc.x, sc.keep, sc.doc, strict=True):
        kept = row[keep].tolist()
        assert kept == [20, 21, 22]  # the inputs s .. s + k - 1
        assert row[0] < 20 and doc[0] == 0 and (doc[keep] == 1).all()
    assert torch.equal(sc.y, sc.x + 1)
    with pytest.raises(ValueError, match="no scene start"):
        after_boundary(ids, doc_ids([0], 40), [0], 8, 3)


def test_separators_open_each_scene_and_the_same_characters_are_scored_after_them():
    ids = torch.arange(40)
    sep_ids, starts = with_separators(ids, [0, 20, 30], sep=99)
    assert starts == [0, 20, 31]
    assert sep_ids.tolist() == [*range(20), 99, *range(20, 30), 99, *range(30, 40)]
    plain = after_boundary(ids, doc_ids([0, 20, 30], 40), [0, 20, 30], context=8, k=3)
    sc = after_boundary(sep_ids, doc_ids(starts, 42), starts, context=8, k=3, skip=1)
    assert torch.equal(sc.y[sc.keep], plain.y[plain.keep])  # the same targets ...
    for row, keep in zip(sc.x, sc.keep, strict=True):  # ... each right after its scene's separator
        first = int(keep.nonzero()[0])
        assert row[first - 1] == 99
        assert (row[: first - 1] != 99).all()  # and as many of the previous scene's characters before it


def test_far_from_boundary_keeps_predictions_a_context_into_their_scene():
    ids = torch.arange(41)
    starts = [0, 20]
    sc = far_from_boundary(ids, doc_ids(starts, 41), starts, context=8)
    pos = sc.x[sc.keep].tolist()  # ids are positions here
    assert pos == [*range(8, 19), *range(28, 40)]  # not 19: its target (20) opens the next scene
