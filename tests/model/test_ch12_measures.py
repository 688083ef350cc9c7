"""Chapter 12's experiments in quick mode: DiLoCo's best over its outer ladder is the lowest arm,
the byte shares follow the payloads, and the settings the slides name are the configs'."""

from __future__ import annotations

import pytest

from model.experiments import ch12_slowlinks as ch12
from model.experiments.registry import REGISTRY
from model.slowlinks import compress as cz


def quick(exp_id: str):
    exp = REGISTRY[exp_id]
    return exp.fn(exp.context(quick=True)).measurements


def test_diloco_reports_the_best_outer_rate_of_each_h():
    m = quick("ch12.diloco")
    cfg = REGISTRY["ch12.diloco"].context(quick=True).config
    for h, ladder in cfg.outer:
        arms = {o: m[f"ch12.diloco{h}_o{round(100 * o)}.loss"].value for o in ladder}
        best = min(arms, key=lambda o: arms[o])
        assert m[f"ch12.diloco{h}.best_outer"].value == best
        assert m[f"ch12.diloco{h}.loss"].value == pytest.approx(arms[best])
        assert m[f"ch12.diloco{h}.ratio"].value == pytest.approx(1 / h)


def test_topk_byte_shares_and_break_even():
    m = quick("ch12.topk")
    P = m["ch12.setup.params"].value
    dense = cz.allreduce_bytes(int(P), 4)
    for pct in (1, 10):
        k = m[f"ch12.topk{pct}.k"].value
        assert m[f"ch12.topk{pct}_ef.ratio"].value == pytest.approx(3 * k * cz.ENTRY_BYTES / dense)
        assert 1 <= m[f"ch12.topk{pct}_ef.union"].value <= 4
    assert m["ch12.allgather.break_even"].value == P / 4


def test_settings_are_the_configs():
    m = quick("ch12.settings")
    assert m["ch12.set.topk.small"].value == min(x.k_frac for x in ch12.TOPK if x.kind == "topk")
    assert m["ch12.set.strag.w_max"].value == max(ch12.Queue().workers)
