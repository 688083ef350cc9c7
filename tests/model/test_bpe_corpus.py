"""The BPE corpus: merges learnt on the training characters, the character split kept."""

import pytest
import torch

from model.bpe import bpe_corpus, decode, nats_per_char, train_bpe
from model.data import UNK_CHAR, corpus_from_text
from model.decoder import ModelConfig
from model.train import TrainConfig, train_many

TEXT = "the cat sat on the mat. the hat. " * 20 + "zq!"  # "z", "q" and "!" only in validation


def test_split_matches_the_character_corpus():
    c = bpe_corpus(TEXT, 10)
    chars = corpus_from_text(TEXT)
    assert c.train_chars == len(chars.train) and c.val_chars == len(chars.val)
    assert c.train_chars + c.val_chars == len(TEXT)
    assert decode([c.tokens[i] for i in c.train.tolist()]) == TEXT[: c.train_chars]


def test_merges_are_learnt_on_training_text_only():
    c = bpe_corpus(TEXT, 10)
    assert list(c.merges) == train_bpe(TEXT[: c.train_chars], 10)
    assert c.tokens[-1] == UNK_CHAR
    assert len(c.tokens) == len(set(TEXT[: c.train_chars])) + 10 + 1


def test_unseen_validation_characters_are_unknown():
    c = bpe_corpus(TEXT, 10)
    val = [c.tokens[i] for i in c.val.tolist()]
    assert val.count(UNK_CHAR) == 3  # z, q, !
    assert c.chars_of(c.val) == c.val_chars  # every token, unknown ones too, stands for its characters
    assert c.chars_of(c.train) == c.train_chars


def test_nats_per_char():
    assert nats_per_char(2.0, 10, 25) == pytest.approx(0.8)


def test_a_decoder_trains_on_bpe_ids():
    c = bpe_corpus(TEXT, 10)
    cfg = ModelConfig(vocab=c.vocab_size, context=8)
    (r,) = train_many(cfg, [TrainConfig(steps=5, batch=4, eval_every=5)], c.as_corpus(), workers=1)
    assert r.steps == 5 and torch.isfinite(torch.tensor(r.val_loss_final))


def test_bad_split():
    with pytest.raises(ValueError):
        bpe_corpus(TEXT, 3, val_frac=1.0)
