"""ch02.docmask's pieces: document ids, the batches' ids, the windows it scores, and its
training loop, which without a mask (or with one document) is train_many's bit for bit."""

import dataclasses

import pytest
import torch

from model.data import Batches, corpus_from_text, load_corpus, val_windows
from model.decoder import ModelConfig
from model.experiments.ch02_docmask import (
    DocBatches,
    after_boundary,
    doc_ids,
    far_from_boundary,
    train_packed,
    window_docs,
    with_separators,
)
from model.train import TrainConfig, train_many


def test_doc_ids_number_the_documents_from_their_starts():
    assert doc_ids([0, 3, 5], 8).tolist() == [0, 0, 0, 1, 1, 2, 2, 2]
    assert doc_ids([0], 3).tolist() == [0, 0, 0]
    for bad in ([], [1, 4], [0, 4, 4]):
        with pytest.raises(ValueError, match="document starts"):
            doc_ids(bad, 8)


def test_doc_batches_draw_the_same_windows_and_their_ids():
    data = torch.arange(200) % 50
    docs = torch.arange(200) // 30  # ids that change every 30 characters
    a, b = Batches(data, [1, 2], 4, 8), DocBatches(data, docs, [1, 2], 4, 8)
    for _ in range(300):  # past one draw of `ahead` steps
        x, y = a.next()
        x2, y2, d = b.next_with_docs()
        assert torch.equal(x, x2) and torch.equal(y, y2)
    # the ids are those of the inputs' positions: recover each window's start from x
    last = b.starts[:, b.k - 1]  # (M, B)
    assert torch.equal(d, docs[last[..., None] + torch.arange(8)])
    with pytest.raises(ValueError, match="document ids for"):
        DocBatches(data, docs[:-1], [1], 4, 8)


def test_window_docs_follow_val_windows():
    docs = torch.arange(50) // 7
    x, _ = val_windows(torch.arange(50), 8)
    assert torch.equal(window_docs(docs, 8), docs[x])


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


def _tiny_corpus():
    corpus = load_corpus()
    n = 4000
    return corpus_from_text(corpus.text[:n], 0.2)


@pytest.mark.parametrize("docs", ["none", "one document"])
def test_train_packed_is_train_many_without_a_mask(docs):
    corpus = _tiny_corpus()
    cfg = ModelConfig()
    runs = [TrainConfig(steps=30, eval_every=10, seed=s, lr=2e-2) for s in (0, 1)]
    want = train_many(cfg, runs, corpus, workers=1)
    train_ids = None if docs == "none" else torch.zeros(len(corpus.train), dtype=torch.long)
    val_ids = None if docs == "none" else torch.zeros(len(corpus.val), dtype=torch.long)
    got = train_packed(cfg, runs, corpus, train_ids, val_ids)
    for w, g in zip(want, got, strict=True):
        assert g.step_losses == w.step_losses and g.step_grad_norms == w.step_grad_norms
        assert g.val_loss_final == w.val_loss_final
        assert all(torch.equal(g.state_dict[k], w.state_dict[k]) for k in w.state_dict)
        skip = {"seconds", "state_dict"}  # every other field, curves included, compared exactly (repr: NaN == NaN)
        assert repr({f.name: getattr(g, f.name) for f in dataclasses.fields(g) if f.name not in skip}) == repr(
            {f.name: getattr(w, f.name) for f in dataclasses.fields(w) if f.name not in skip}
        )


def test_train_packed_with_documents_trains_a_different_network():
    corpus = _tiny_corpus()
    runs = [TrainConfig(steps=20, eval_every=10, seed=0, lr=2e-2)]
    plain = train_packed(ModelConfig(), runs, corpus, None)[0]
    docs = torch.arange(len(corpus.train)) // 10  # a boundary every 10 characters: most windows cross one
    masked = train_packed(ModelConfig(), runs, corpus, docs)[0]
    assert masked.step_losses[0] != plain.step_losses[0]
    assert masked.curves["val_loss"][0] == plain.curves["val_loss"][0]  # the same initial weights
