"""The arithmetic corpus: formats, held-out sums kept out of the corpus, and the scores."""

import numpy as np
import torch

from model.arithmetic import (
    Problems,
    answer_loss,
    arithmetic_corpus,
    corpus_text,
    every_single_digit_sum,
    exact_match,
    held_out,
    overlap,
)
from model.decoder import Decoder, ModelConfig


def test_fixed_width_format_pads_operands_to_two_digits_and_answers_to_three():
    p = Problems(np.array([3, 47]), np.array([5, 60]), padded=True)
    assert p.lines == ["03+05=008\n", "47+60=107\n"]
    assert p.prompts == ["\n03+05=", "\n47+60="]
    assert p.answers == ["008\n", "107\n"]
    plain = Problems(np.array([3]), np.array([5]))
    assert (plain.prompts, plain.answers) == (["\n3+5="], ["8\n"])


def test_held_out_sums_are_distinct_two_digit_sums_and_never_in_the_corpus():
    test = held_out(np.random.default_rng(1), 300, padded=True)
    pairs = set(zip(test.a.tolist(), test.b.tolist(), strict=True))
    assert len(pairs) == 300 and all(max(a, b) >= 10 for a, b in pairs)
    text = corpus_text(20_000, seed=0, padded=True, exclude=test)
    assert overlap(test, text) == 0
    # without the exclusion, most of them would be there
    assert overlap(test, corpus_text(20_000, seed=0, padded=True)) > 150  # about 1 - 1/e of them
    assert overlap(every_single_digit_sum(padded=True), text) == 100


def test_overlap_counts_whole_lines_only():
    p = Problems(np.array([1, 12]), np.array([2, 3]))
    assert overlap(p, "11+2=13\n1+2=3\n") == 1  # "1+2=3" is a line; "12+3=15" is not


def test_a_model_that_predicts_every_answer_is_exact_and_has_near_zero_answer_loss():
    corpus = arithmetic_corpus(200, seed=0, padded=True)
    problems = every_single_digit_sum(padded=True)
    torch.manual_seed(0)
    model = Decoder(ModelConfig(vocab=corpus.vocab.size))
    assert exact_match(model, corpus.vocab, problems) < 0.05
    loss = answer_loss(model, corpus.vocab, problems)
    assert abs(loss - np.log(corpus.vocab.size)) < 0.05  # an untrained model: about ln V per character

    class Oracle(Decoder):
        """Puts a large logit on the true next character of every sum it is shown."""

        def forward(self, idx):
            V = self.cfg.vocab
            out = torch.zeros(*idx.shape, V)
            for row in range(idx.shape[0]):
                text = corpus.vocab.decode(idx[row])
                for t in range(idx.shape[1]):
                    line = text[: t + 1].split("\n")[-1]
                    if "=" in line:
                        a, b = line.split("=")[0].split("+")
                        target = f"{int(a) + int(b):03d}\n"[len(line.split("=")[1])]
                        out[row, t, int(corpus.vocab.encode(target)[0])] = 50.0
            return out

    oracle = Oracle(ModelConfig(vocab=corpus.vocab.size))
    assert exact_match(oracle, corpus.vocab, problems) == 1.0
    assert answer_loss(oracle, corpus.vocab, problems) < 1e-6
